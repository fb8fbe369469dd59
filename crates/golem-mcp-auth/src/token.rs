//! The token endpoint: exchanging a code, refreshing, client credentials;
//! and `Tokens`, what it grants.

use std::fmt;
use std::time::{Duration, SystemTime};

use serde::Deserialize;

use crate::discovery::Discovered;
use crate::error::AuthError;
use crate::http::{ErrorBody, OAuthHttp, basic_credentials, json, shown};
use crate::registration::{ClientIdentity, TokenAuth};
use crate::secret::Secret;

/// The assertion type of `private_key_jwt` (RFC 7523 §2.2).
const JWT_BEARER: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// What the token endpoint granted.
///
/// `Debug` shows whether there is a refresh token, the scopes and the
/// expiry, never a token.
#[derive(Clone, PartialEq, Eq)]
pub struct Tokens {
    /// The access token, sent as `Authorization: Bearer ...`.
    pub access_token: Secret,
    /// The refresh token, if the server issued one.
    pub refresh_token: Option<Secret>,
    /// When the access token expires, if the server said.
    pub expires_at: Option<SystemTime>,
    /// The scopes granted, space-separated, if the server said (else the
    /// scopes asked for).
    pub scope: Option<String>,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("access_token", &self.access_token)
            .field("has_refresh_token", &self.refresh_token.is_some())
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish()
    }
}

impl Tokens {
    /// Whether the access token has expired, or expires within `margin`.
    pub fn expires_within(&self, margin: Duration) -> bool {
        self.expires_at
            .is_some_and(|at| at <= SystemTime::now() + margin)
    }

    /// Whether every scope of `scope` (space-separated) was granted.
    pub(crate) fn grants(&self, scope: &str) -> bool {
        let granted: Vec<&str> = self
            .scope
            .as_deref()
            .unwrap_or("")
            .split_ascii_whitespace()
            .collect();
        scope
            .split_ascii_whitespace()
            .all(|wanted| granted.contains(&wanted))
    }
}

#[derive(Deserialize)]
struct TokenBody {
    access_token: String,
    token_type: String,
    expires_in: Option<u64>,
    refresh_token: Option<String>,
    scope: Option<String>,
}

/// Posts a token request with `params` and the client's authentication,
/// and reads the tokens granted. `asked_scope` stands in for a `scope`
/// the answer leaves out (RFC 6749 §5.1: then it is the one asked for).
pub(crate) async fn request(
    http: &OAuthHttp,
    discovered: &Discovered,
    client: &ClientIdentity,
    params: &[(&str, &str)],
    asked_scope: Option<&str>,
) -> Result<Tokens, AuthError> {
    let endpoint = &discovered.token_endpoint;
    let mut form: Vec<(&str, &str)> = params.to_vec();
    let mut basic = None;
    let assertion;
    match &client.auth {
        TokenAuth::PrivateKeyJwt(key) => {
            assertion = key.assertion(&client.client_id, &discovered.audience())?;
            form.push(("client_id", &client.client_id));
            form.push(("client_assertion_type", JWT_BEARER));
            form.push(("client_assertion", &assertion));
        }
        TokenAuth::None => form.push(("client_id", &client.client_id)),
        TokenAuth::Basic(secret) => {
            // The id in the body too: it authenticates nothing, and some
            // servers (the Python SDK's) look the client up by it.
            form.push(("client_id", &client.client_id));
            basic = Some(basic_credentials(&client.client_id, secret));
        }
        TokenAuth::Post(secret) => {
            form.push(("client_id", &client.client_id));
            form.push(("client_secret", secret.expose()));
        }
    }
    let context = "request a token";
    let answer = http
        .post_form(context, endpoint, &form, basic.as_ref())
        .await?;
    if !answer.status.is_success() {
        let error: ErrorBody = serde_json::from_slice(&answer.body).unwrap_or_default();
        return Err(AuthError::Token {
            endpoint: shown(endpoint),
            status: answer.status.as_u16(),
            error: error
                .error
                .unwrap_or_else(|| "no OAuth error code".to_owned()),
            description: error.error_description.unwrap_or_default(),
        });
    }
    let body: TokenBody = json(context, endpoint, &answer.body)?;
    if !body.token_type.eq_ignore_ascii_case("bearer") {
        return Err(AuthError::Token {
            endpoint: shown(endpoint),
            status: answer.status.as_u16(),
            error: "unsupported_token_type".to_owned(),
            description: format!(
                "the token type is {:?}; this client uses Bearer tokens only",
                body.token_type
            ),
        });
    }
    Ok(Tokens {
        access_token: Secret::new(body.access_token),
        refresh_token: body.refresh_token.map(Secret::new),
        expires_at: body
            .expires_in
            .map(|seconds| SystemTime::now() + Duration::from_secs(seconds)),
        scope: body.scope.or_else(|| asked_scope.map(str::to_owned)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_token() {
        let tokens = Tokens {
            access_token: Secret::new("access-123"),
            refresh_token: Some(Secret::new("refresh-456")),
            expires_at: None,
            scope: Some("a b".into()),
        };
        let shown = format!("{tokens:?}");
        assert!(
            !shown.contains("access-123") && !shown.contains("refresh-456"),
            "{shown}"
        );
        assert!(tokens.grants("b a") && tokens.grants("") && !tokens.grants("a c"));
    }
}
