//! Cross-app access (SEP-990, "enterprise-managed authorization"): the
//! user's identity provider vouches for them with an identity assertion
//! authorization grant (ID-JAG, obtained by RFC 8693 token exchange), which
//! the MCP server's authorization server takes as a JWT bearer grant
//! (RFC 7523 §2.1). No browser, no user interaction.

use std::fmt;

use serde::Deserialize;

use crate::discovery::Discovered;
use crate::error::AuthError;
use crate::http::{OAuthHttp, basic_credentials, http_error, json, secure_url};
use crate::secret::Secret;

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";
/// The grant type of the exchange at the MCP server's authorization
/// server.
pub(crate) const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// What the identity provider needs to issue an ID-JAG.
#[derive(Clone)]
#[non_exhaustive]
pub struct CrossAppAccess {
    /// The identity provider's token endpoint.
    pub idp_token_endpoint: String,
    /// The user's ID token from the identity provider (the subject).
    pub id_token: Secret,
    /// This application's client id at the identity provider.
    pub idp_client_id: String,
    /// Its secret there, if it has one (sent with HTTP Basic).
    pub idp_client_secret: Option<Secret>,
}

impl CrossAppAccess {
    /// Cross-app access through `idp_token_endpoint`, for the user whose
    /// ID token is `id_token`, as the identity provider's client
    /// `idp_client_id` (a public client; set
    /// [`idp_client_secret`](CrossAppAccess::idp_client_secret) otherwise).
    pub fn new(
        idp_token_endpoint: impl Into<String>,
        id_token: impl Into<Secret>,
        idp_client_id: impl Into<String>,
    ) -> Self {
        CrossAppAccess {
            idp_token_endpoint: idp_token_endpoint.into(),
            id_token: id_token.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
        }
    }
}

impl fmt::Debug for CrossAppAccess {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CrossAppAccess")
            .field("idp_token_endpoint", &self.idp_token_endpoint)
            .field("idp_client_id", &self.idp_client_id)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct Exchanged {
    access_token: String,
    issued_token_type: Option<String>,
}

/// Exchanges the user's ID token at the identity provider for an ID-JAG
/// addressed to `discovered`'s authorization server and resource.
pub(crate) async fn identity_assertion(
    http: &OAuthHttp,
    access: &CrossAppAccess,
    discovered: &Discovered,
    scope: Option<&str>,
) -> Result<Secret, AuthError> {
    // The application's own configuration: a local one may be http.
    let endpoint = secure_url(
        "identity provider token endpoint",
        &access.idp_token_endpoint,
        true,
    )?;
    let audience = discovered.audience();
    let mut form = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("subject_token", access.id_token.expose()),
        ("subject_token_type", ID_TOKEN),
        ("requested_token_type", ID_JAG),
        ("audience", audience.as_str()),
        ("resource", discovered.resource.as_str()),
    ];
    if let Some(scope) = scope {
        form.push(("scope", scope));
    }
    let basic = access
        .idp_client_secret
        .as_ref()
        .map(|secret| basic_credentials(&access.idp_client_id, secret));
    if basic.is_none() {
        form.push(("client_id", &access.idp_client_id));
    }
    let context = "exchange the ID token at the identity provider";
    let answer = http
        .post_form(context, &endpoint, &form, basic.as_ref())
        .await?;
    if !answer.status.is_success() {
        let error: super::http::ErrorBody =
            serde_json::from_slice(&answer.body).unwrap_or_default();
        return Err(http_error(
            context,
            &endpoint,
            format!(
                "HTTP {}: {} {}",
                answer.status.as_u16(),
                error.error.unwrap_or_default(),
                error.error_description.unwrap_or_default()
            )
            .trim_end()
            .to_owned(),
        ));
    }
    let exchanged: Exchanged = json(context, &endpoint, &answer.body)?;
    if exchanged
        .issued_token_type
        .as_deref()
        .is_some_and(|kind| kind != ID_JAG)
    {
        return Err(http_error(
            context,
            &endpoint,
            "the identity provider issued a token that is not an ID-JAG".to_owned(),
        ));
    }
    Ok(Secret::new(exchanged.access_token))
}
