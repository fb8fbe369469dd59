//! A modern request from start to finish: multi-round-trip requests and
//! the one corrective retry of an unsupported revision (2026-07-28).
//!
//! A server that needs input to finish a `tools/call`, `prompts/get` or
//! `resources/read` answers `resultType: "input_required"` with the
//! requests it needs answered (an elicitation, a sampling, the roots). They
//! are answered by the handlers the application registered, the very ones
//! that answer a legacy server's requests ([`Offer`]), and the request is
//! sent again, with a new id, the answers as `inputResponses` and the
//! server's `requestState` echoed byte for byte. A round is bounded: at
//! most [`MAX_INPUT_REQUESTS`] requests and [`MAX_INPUT_REQUESTS_BYTES`] of
//! them, [`MAX_REQUEST_STATE_BYTES`] of state, [`MAX_ROUNDS`] rounds per
//! request; past any bound the request fails before anything more is
//! answered or sent. Nothing of a round leaks
//! into other requests: each round's answers live in this call's frame.
//! Dropping the caller's future drops the round in progress, handler and
//! all.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::error::Error;
use crate::session::connection::{Connection, Request, decode};
use crate::session::modern::era::{ModernError, ModernMeta, newest_mutual, no_mutual_version};
use crate::session::progress::Progress;
use crate::session::serving::Offer;
use crate::wire::result_type::{InputRequired, ResultKind, result_kind};

/// How many times one request may be answered with `input_required`
/// before the client gives up on a server that keeps asking.
pub(crate) const MAX_ROUNDS: usize = 16;

/// The largest `requestState` echoed; a larger one is refused, never sent
/// back (it would be sent again on every round).
pub(crate) const MAX_REQUEST_STATE_BYTES: usize = 256 * 1024;

/// The most input requests one `input_required` round may carry: a round
/// that asks for more is refused before any of them is answered (each may
/// prompt the user or spend the model's tokens).
pub(crate) const MAX_INPUT_REQUESTS: usize = 16;

/// The largest `inputRequests` of one round, as sent (the parameters of
/// its requests together: a sampling's conversation and images, a form's
/// schema); a larger one is refused before any request is answered.
pub(crate) const MAX_INPUT_REQUESTS_BYTES: usize = 4 * 1024 * 1024;

/// Whether a server may answer `method` with `input_required`.
fn may_require_input(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

/// Sends a modern request and reads its result as `R`: answers every
/// `input_required` round through `offer`, and retries once with another
/// revision when the server refuses this one (`-32022`); `remake` makes the
/// `_meta` entries for a revision. `keep` is shown the reply when it is
/// complete at the first round (what the result cache may keep: never the
/// answer to a retry that carried `inputResponses` or `requestState`).
pub(crate) async fn run<R, P>(
    connection: &Connection,
    offer: &dyn Offer,
    operation: &(dyn fmt::Display + Sync),
    request: Request<'_, P>,
    remake: impl Fn(&'static str) -> ModernMeta,
    mut on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    mut keep: Option<&mut (dyn FnMut(&bytes::Bytes) + Send)>,
) -> Result<R, Error>
where
    R: DeserializeOwned,
    P: serde::Serialize,
{
    let mut rounds = 0;
    let mut retried_version = false;
    let mut answers: Option<String> = None;
    let mut other_revision: Option<ModernMeta> = None;
    let wants_progress = on_progress.is_some();
    // Every round reports to the caller's observer.
    let mut forward = |report: Progress| {
        if let Some(observer) = on_progress.as_deref_mut() {
            observer(report);
        }
    };
    loop {
        let mut attempt = request;
        attempt.members = answers.as_deref();
        attempt.modern = other_revision.as_ref().or(request.modern);
        let observer = match wants_progress {
            true => Some(&mut forward as &mut (dyn FnMut(Progress) + Send)),
            false => None,
        };
        let reply = connection.exchange(operation, &attempt, observer).await?;
        match result_kind(&reply) {
            ResultKind::Complete => match decode::<R>(operation, {
                if let (None, Some(keep)) = (&answers, keep.as_deref_mut()) {
                    keep(&reply);
                }
                reply
            }) {
                Err(Error::Protocol { source, .. })
                    if !retried_version && is_unsupported_version(&source) =>
                {
                    retried_version = true;
                    let Some(ModernError::UnsupportedVersion { supported }) =
                        ModernError::recognise(&source)
                    else {
                        unreachable!("checked above");
                    };
                    let version = newest_mutual(&supported)
                        .ok_or_else(|| no_mutual_version(&operation.to_string(), &supported))?;
                    tracing::debug!(%version, "mcp: the server refused the revision; sending the request again");
                    other_revision = Some(remake(version));
                }
                decoded => return decoded,
            },
            // The tasks extension: the caller (`features/tasks/modern.rs`)
            // reads the task from the result and drives it.
            ResultKind::Task => {
                let declared = attempt
                    .modern
                    .or(connection.modern())
                    .is_some_and(ModernMeta::declares_tasks);
                if request.method != "tools/call" || !declared {
                    return Err(Error::invalid_response(
                        &operation.to_string(),
                        match declared {
                            true => format!(
                                "the server answered {} with a task, which only tools/call may be",
                                request.method
                            ),
                            false => "the server answered with a task, but this client did not \
                                      declare the tasks extension (ClientConfig::with_tasks)"
                                .to_owned(),
                        },
                    ));
                }
                return decode::<R>(operation, reply);
            }
            ResultKind::Unknown(kind) => {
                return Err(Error::invalid_response(
                    &operation.to_string(),
                    format!("unknown resultType {kind:?}"),
                ));
            }
            ResultKind::InputRequired(input) => {
                if !may_require_input(request.method) {
                    return Err(Error::invalid_response(
                        &operation.to_string(),
                        format!(
                            "the server asked for input on {}, which cannot take any",
                            request.method
                        ),
                    ));
                }
                rounds += 1;
                if rounds > MAX_ROUNDS {
                    return Err(Error::invalid_response(
                        &operation.to_string(),
                        format!(
                            "the server still asked for input after {MAX_ROUNDS} rounds; gave up"
                        ),
                    ));
                }
                // Boxed: the handlers' answers are the rare path, and their
                // future would otherwise make every call's future larger
                // (what each call in flight holds).
                answers = Some(Box::pin(answer(offer, operation, input)).await?);
            }
        }
    }
}

fn is_unsupported_version(error: &crate::wire::jsonrpc::ProtocolError) -> bool {
    matches!(
        ModernError::recognise(error),
        Some(ModernError::UnsupportedVersion { .. })
    )
}

/// One input request: a server request in all but name (also what a
/// task of the tasks extension lists in `inputRequests`).
#[derive(Deserialize)]
pub(crate) struct InputRequest<'a> {
    /// The server request's method, e.g. `elicitation/create`.
    pub(crate) method: String,
    /// Its parameters, verbatim.
    #[serde(borrow, default)]
    pub(crate) params: Option<&'a RawValue>,
}

/// Answers an `input_required` round: the members the retry adds to its
/// parameters (`inputResponses`, and `requestState` when one came).
async fn answer(
    offer: &dyn Offer,
    operation: &(dyn fmt::Display + Sync),
    input: InputRequired,
) -> Result<String, Error> {
    let invalid = |detail: String| Error::invalid_response(&operation.to_string(), detail);
    if let Some(state) = &input.request_state {
        if !state.get().starts_with('"') {
            return Err(invalid("its requestState is not a string".into()));
        }
        if state.get().len() > MAX_REQUEST_STATE_BYTES {
            return Err(invalid(format!(
                "its requestState is {} bytes, over this client's limit of {MAX_REQUEST_STATE_BYTES}",
                state.get().len()
            )));
        }
    }
    let requests: BTreeMap<String, InputRequest<'_>> = match &input.input_requests {
        Some(raw) if raw.get().len() > MAX_INPUT_REQUESTS_BYTES => {
            return Err(invalid(format!(
                "its inputRequests are {} bytes, over this client's limit of \
                 {MAX_INPUT_REQUESTS_BYTES} per round; none was answered",
                raw.get().len()
            )));
        }
        Some(raw) => serde_json::from_str(raw.get())
            .map_err(|error| invalid(format!("its inputRequests cannot be read: {error}")))?,
        None => BTreeMap::new(),
    };
    if requests.len() > MAX_INPUT_REQUESTS {
        return Err(invalid(format!(
            "the server asked for {} inputs in one round, over this client's limit of \
             {MAX_INPUT_REQUESTS}; none was answered",
            requests.len()
        )));
    }
    if requests.is_empty() && input.request_state.is_none() {
        return Err(invalid(
            "an input_required result with neither inputRequests nor requestState".into(),
        ));
    }
    let mut members = String::from(r#""inputResponses":{"#);
    for (index, (key, request)) in requests.iter().enumerate() {
        let result = answer_one(offer, operation, request).await?;
        if index > 0 {
            members.push(',');
        }
        members.push_str(&serde_json::to_string(key).map_err(|error| invalid(error.to_string()))?);
        members.push(':');
        members.push_str(&result);
    }
    members.push('}');
    if let Some(state) = &input.request_state {
        members.push_str(r#","requestState":"#);
        members.push_str(state.get());
    }
    Ok(members)
}

/// The result (JSON text) of one input request, from the application's
/// handler. One nobody registered a handler for gets the answer the legacy
/// era gives too: an elicitation is declined; a sampling or the roots fail
/// the call (the server may not ask for what the client did not declare).
pub(crate) async fn answer_one(
    offer: &dyn Offer,
    operation: &(dyn fmt::Display + Sync),
    request: &InputRequest<'_>,
) -> Result<String, Error> {
    let method = request.method.as_str();
    let failed = |problem: String| Error::Input {
        operation: operation.to_string(),
        method: method.to_owned(),
        problem,
    };
    if !offer.offers(method) {
        if let Some(answer) = offer.unoffered_answer(method) {
            tracing::debug!(%method, "mcp: the server asked for input nobody registered a handler for; declined");
            return Ok(answer);
        }
        return Err(failed(
            "this client does not offer it (no handler is registered for it, and its capability was not declared)".into(),
        ));
    }
    if let Some(result) = offer.answer_at_once(method) {
        return Ok(result);
    }
    let params = request.params.map_or("{}", RawValue::get);
    let work = offer
        .work(method, params)
        .map_err(|refused| failed(refused.to_string()))?;
    work.await.map_err(|error| failed(error.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_three_methods_may_ask_for_input() {
        for method in ["tools/call", "prompts/get", "resources/read"] {
            assert!(may_require_input(method));
        }
        for method in ["tools/list", "server/discover", "completion/complete"] {
            assert!(!may_require_input(method));
        }
    }
}
