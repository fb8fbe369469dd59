//! `Secret`: a string that never shows itself.

use std::fmt;

/// A secret string: an access or refresh token, a client secret, an
/// authorization code, a PKCE verifier, an `Authorization` header value.
///
/// `Debug` and `Display` print `<redacted>`; only
/// [`expose`](Secret::expose) gives the value, so every place a secret
/// leaves the program is a visible call.
///
/// ```
/// use golem_mcp_auth::Secret;
///
/// let token = Secret::new("s3cr3t");
/// assert_eq!(format!("{token:?} {token}"), "Secret(<redacted>) <redacted>");
/// assert_eq!(token.expose(), "s3cr3t");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    /// The secret value, for the one place it is sent.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Secret(value.to_owned())
    }
}
