//! Which refusals authorization answers: a `401`, or a `403` for want of
//! scope, made into the [`Refusal`] an auth provider acts on. Shared by the
//! streamable transport's POSTs and the HTTP+SSE transport's GET and POSTs,
//! so that both authorize on the same answers, as often.

use reqwest::header::WWW_AUTHENTICATE;
use reqwest::{Response, StatusCode, Url};

use golem_mcp_auth::{Challenge, Refusal, Secret};

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
