//! The client's identity at the authorization server, in the
//! specification's order of preference: pre-registered credentials, a
//! Client ID Metadata Document URL, Dynamic Client Registration (RFC 7591).

use std::fmt;

use serde::Deserialize;
use serde_json::json;

use crate::discovery::Discovered;
use crate::error::AuthError;
use crate::http::{OAuthHttp, is_loopback, json};
use crate::jwt::SigningKey;
use crate::secret::Secret;

/// How a pre-registered client authenticates at the token endpoint.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum ClientAuth {
    /// A public client: no secret.
    #[default]
    None,
    /// A client secret, sent with `client_secret_basic` or
    /// `client_secret_post`, whichever the server supports (Basic when it
    /// does not say).
    Secret(Secret),
    /// `private_key_jwt` (RFC 7523): an assertion signed with this key,
    /// for the authorization server's issuer.
    PrivateKeyJwt(SigningKey),
}

impl fmt::Debug for ClientAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ClientAuth::None => "None",
            ClientAuth::Secret(_) => "Secret(<redacted>)",
            ClientAuth::PrivateKeyJwt(_) => "PrivateKeyJwt(<redacted>)",
        })
    }
}

/// How the client authenticates at the token endpoint.
#[derive(Clone)]
pub(crate) enum TokenAuth {
    /// `none`: a public client sends its `client_id` only.
    None,
    /// `client_secret_basic`: HTTP Basic with the id and secret.
    Basic(Secret),
    /// `client_secret_post`: the id and secret in the form body.
    Post(Secret),
    /// `private_key_jwt` (RFC 7523): a signed assertion.
    PrivateKeyJwt(crate::jwt::SigningKey),
}

impl fmt::Debug for TokenAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TokenAuth::None => "none",
            TokenAuth::Basic(_) => "client_secret_basic",
            TokenAuth::Post(_) => "client_secret_post",
            TokenAuth::PrivateKeyJwt(_) => "private_key_jwt",
        })
    }
}

/// Who the client is at the authorization server.
#[derive(Debug, Clone)]
pub(crate) struct ClientIdentity {
    pub(crate) client_id: String,
    pub(crate) auth: TokenAuth,
}

/// The secret-based method the server supports, preferring Basic (RFC
/// 6749's default, and RFC 7591's when the server does not say).
fn secret_auth(discovered: &Discovered, secret: Secret) -> TokenAuth {
    match (
        discovered.supports_auth_method("client_secret_basic"),
        discovered.supports_auth_method("client_secret_post"),
    ) {
        (Some(false), Some(true)) => TokenAuth::Post(secret),
        _ => TokenAuth::Basic(secret),
    }
}

/// A pre-registered client: its secret (if any) used with the method the
/// server supports.
pub(crate) fn preregistered(
    discovered: &Discovered,
    client_id: &str,
    auth: &ClientAuth,
) -> ClientIdentity {
    let auth = match auth {
        ClientAuth::None => TokenAuth::None,
        ClientAuth::Secret(secret) => secret_auth(discovered, secret.clone()),
        ClientAuth::PrivateKeyJwt(key) => TokenAuth::PrivateKeyJwt(key.clone()),
    };
    ClientIdentity {
        client_id: client_id.to_owned(),
        auth,
    }
}

/// What the application says about itself when it registers.
pub(crate) struct Registration<'a> {
    pub(crate) client_name: &'a str,
    pub(crate) redirect_uri: &'a str,
}

#[derive(Deserialize)]
struct Registered {
    client_id: String,
    client_secret: Option<String>,
    token_endpoint_auth_method: Option<String>,
}

/// What kind of application registers (OpenID Connect Dynamic Client
/// Registration's `application_type`, which the 2026-07-28 revision asks
/// for): `native` for a redirect to a loopback address or to a scheme of
/// the application's own, where the user's device receives it; `web` for
/// a redirect to a web server.
fn application_type(redirect_uri: &str) -> &'static str {
    match reqwest::Url::parse(redirect_uri) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && !is_loopback(&url) => "web",
        _ => "native",
    }
}

/// Registers a new client (RFC 7591) for the authorization-code grant with
/// refresh tokens, asking to be a public client when the server allows it.
pub(crate) async fn register(
    http: &OAuthHttp,
    discovered: &Discovered,
    registration: &Registration<'_>,
) -> Result<ClientIdentity, AuthError> {
    let Some(endpoint) = &discovered.registration_endpoint else {
        return Err(AuthError::Registration {
            detail: "the authorization server offers no dynamic client registration, and no client id was given; register a client with it and configure its id (and secret)".to_owned(),
        });
    };
    let method = match discovered.supports_auth_method("none") {
        Some(true) | None => "none",
        Some(false) => match discovered.supports_auth_method("client_secret_basic") {
            Some(false) if discovered.supports_auth_method("client_secret_post") == Some(true) => {
                "client_secret_post"
            }
            _ => "client_secret_basic",
        },
    };
    let request = json!({
        "client_name": registration.client_name,
        "application_type": application_type(registration.redirect_uri),
        "redirect_uris": [registration.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
    });
    let context = "register the client";
    let answer = http.post_json(context, endpoint, &request).await?;
    if !answer.status.is_success() {
        let error: super::http::ErrorBody =
            serde_json::from_slice(&answer.body).unwrap_or_default();
        return Err(AuthError::Registration {
            detail: format!(
                "the registration endpoint answered HTTP {}: {} {}",
                answer.status.as_u16(),
                error.error.unwrap_or_default(),
                error.error_description.unwrap_or_default()
            )
            .trim_end()
            .to_owned(),
        });
    }
    let registered: Registered = json(context, endpoint, &answer.body)?;
    let secret = registered.client_secret.map(Secret::new);
    let auth = match (registered.token_endpoint_auth_method.as_deref(), secret) {
        (Some("none"), _) | (None, None) => TokenAuth::None,
        (Some("client_secret_post"), Some(secret)) => TokenAuth::Post(secret),
        (Some("client_secret_basic") | None, Some(secret)) => TokenAuth::Basic(secret),
        (Some(other), _) => {
            return Err(AuthError::Registration {
                detail: format!(
                    "the authorization server registered the client for token endpoint authentication {other:?}, which this client cannot do with what it was given"
                ),
            });
        }
    };
    Ok(ClientIdentity {
        client_id: registered.client_id,
        auth,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_or_private_scheme_redirect_is_a_native_application() {
        for native in [
            "http://127.0.0.1:8123/callback",
            "http://localhost/callback",
            "http://[::1]:9/cb",
            "com.example.app:/oauth",
        ] {
            assert_eq!(application_type(native), "native", "{native}");
        }
        assert_eq!(application_type("https://app.example/callback"), "web");
    }
}
