//! Which refusals authorization answers: a `401`, or a `403` for want of
//! scope, made into the [`Refusal`] an auth provider acts on. Shared by the
//! streamable transport's POSTs and the HTTP+SSE transport's GET and POSTs,
//! so that both authorize on the same answers, as often.

use std::sync::Arc;

use reqwest::header::{AUTHORIZATION, HeaderValue, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};

use super::client::{Request, Response};

use golem_mcp_auth::{AuthProvider, Challenge, Refusal, Secret};

/// How many times one request is authorized and sent again: a `401` and
/// then a step-up `403` (`insufficient_scope`). More would loop on a
/// server that never accepts what its authorization server grants.
pub(in crate::transports) const MAX_AUTHORIZATIONS: u32 = 2;

/// The refusal an auth provider should answer, if `response` is one: a
/// `401`, or a `403` whose challenge asks for more scope (another `403`
/// is the server's final word). `url` is the server the provider knows
/// (its MCP endpoint); `sent` the `Authorization` the refused request
/// carried.
pub(in crate::transports) fn refusal(
    url: &Url,
    response: &Response,
    sent: Option<Secret>,
) -> Option<Refusal> {
    let status = response.status();
    if status != StatusCode::UNAUTHORIZED && status != StatusCode::FORBIDDEN {
        return None;
    }
    let challenge = response
        .headers()
        .get_all(WWW_AUTHENTICATE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find_map(Challenge::parse);
    let refusal = Refusal::new(url.clone(), status.as_u16(), challenge, sent);
    (status == StatusCode::UNAUTHORIZED || refusal.is_insufficient_scope()).then_some(refusal)
}

/// `request` with `authorization` as its `Authorization` header, marked
/// sensitive (kept out of `Debug`); a value that cannot be a
/// header is left out (the server's refusal then says so).
pub(in crate::transports) fn with_authorization(
    request: Request,
    authorization: Option<&Secret>,
) -> Request {
    match authorization.and_then(|secret| HeaderValue::from_str(secret.expose()).ok()) {
        Some(mut value) => {
            value.set_sensitive(true);
            request.header(AUTHORIZATION, value)
        }
        None => request,
    }
}

/// Lets the auth provider, if any, renew a credential for `url` about to
/// expire before a request goes out. A failure is logged, and the request
/// goes out with what there is: the server's refusal then says what is
/// wrong.
pub(in crate::transports) async fn prepare(auth: Option<&Arc<dyn AuthProvider>>, url: &Url) {
    if let Some(auth) = auth
        && let Err(error) = auth.prepare(url).await
    {
        tracing::debug!(%error, "mcp: the auth provider could not prepare the request");
    }
}

/// The `Authorization` to send to `url` now; `None` without a provider or
/// a credential.
pub(in crate::transports) fn current(
    auth: Option<&Arc<dyn AuthProvider>>,
    url: &Url,
) -> Option<Secret> {
    auth?.authorization(url)
}
