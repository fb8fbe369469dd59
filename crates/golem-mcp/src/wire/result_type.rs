//! A modern result's `resultType`: complete, a request for input (a
//! multi-round-trip request's interim answer), or a task (the tasks
//! extension), told apart without decoding the result twice.
//!
//! Every modern result names its type, and nearly all are `"complete"`.
//! The raw text is searched for the key: when every occurrence reads
//! `"complete"` (or there is none), the result is complete, whatever its
//! nesting; only otherwise is the top level read exactly.

use serde::Deserialize;
use serde_json::value::RawValue;

/// What kind of result a response carries.
#[derive(Debug)]
pub(crate) enum ResultKind {
    /// A complete result (or an error, or a result without `resultType`).
    Complete,
    /// `resultType: "input_required"`: the server needs these answers.
    InputRequired(InputRequired),
    /// `resultType: "task"`: the server runs the request as a task (the
    /// tasks extension, ADR 0025); the result is the task's first state.
    Task,
    /// A `resultType` this client does not know.
    Unknown(String),
}

/// An `input_required` result's contents, verbatim.
#[derive(Debug)]
pub(crate) struct InputRequired {
    /// The requests to answer, by the server's keys.
    pub(crate) input_requests: Option<Box<RawValue>>,
    /// The opaque state to echo, as the JSON text it came as.
    pub(crate) request_state: Option<Box<RawValue>>,
}

const KEY: &[u8] = br#""resultType""#;

/// The search for [`KEY`], made once: building a `memmem` finder costs
/// more than searching a small answer (it was 4% of a stdio call).
static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(KEY));

/// The kind of result `message` (one JSON-RPC response) carries. A message
/// that cannot be read is left to the decoder, which says why.
pub(crate) fn result_kind(message: &[u8]) -> ResultKind {
    let all_complete = FINDER
        .find_iter(message)
        .all(|at| reads_complete(&message[at + KEY.len()..]));
    if all_complete {
        return ResultKind::Complete;
    }
    #[derive(Deserialize)]
    struct Response {
        #[serde(default)]
        result: Option<Top>,
    }
    #[derive(Deserialize)]
    struct Top {
        #[serde(rename = "resultType", default)]
        result_type: Option<String>,
        #[serde(rename = "inputRequests", default)]
        input_requests: Option<Box<RawValue>>,
        #[serde(rename = "requestState", default)]
        request_state: Option<Box<RawValue>>,
    }
    let Ok(Response { result: Some(top) }) = serde_json::from_slice::<Response>(message) else {
        return ResultKind::Complete;
    };
    match top.result_type.as_deref() {
        None | Some("complete") => ResultKind::Complete,
        Some("input_required") => ResultKind::InputRequired(InputRequired {
            input_requests: top.input_requests,
            request_state: top.request_state,
        }),
        Some("task") => ResultKind::Task,
        Some(other) => ResultKind::Unknown(other.to_owned()),
    }
}

/// Whether the text after a `"resultType"` key reads `: "complete"`. (A
/// `"resultType"` string that is not a key reads otherwise, and sends the
/// result to the exact reading.)
fn reads_complete(rest: &[u8]) -> bool {
    let rest = skip_whitespace(rest);
    let Some(rest) = rest.strip_prefix(b":") else {
        return false;
    };
    skip_whitespace(rest).starts_with(br#""complete""#)
}

fn skip_whitespace(text: &[u8]) -> &[u8] {
    let start = text
        .iter()
        .position(|byte| !matches!(byte, b' ' | b'\t' | b'\n' | b'\r'))
        .unwrap_or(text.len());
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> ResultKind {
        result_kind(text.as_bytes())
    }

    #[test]
    fn complete_results_and_results_without_a_type_are_complete() {
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[], "resultType" : "complete"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}"#,
            // The key's name inside a string is escaped: not a key.
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\"resultType\": 1"}]}}"#,
            // A nested object's own resultType does not count.
            r#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"resultType":"other"},"resultType":"complete"}}"#,
        ] {
            assert!(matches!(kind(text), ResultKind::Complete), "{text}");
        }
    }

    #[test]
    fn an_input_request_keeps_its_requests_and_state_verbatim() {
        let ResultKind::InputRequired(input) = kind(
            r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}},"requestState":"s\u0041 "}}"#,
        ) else {
            panic!("not input_required");
        };
        assert_eq!(
            input
                .input_requests
                .map(|raw| raw.get().to_owned())
                .as_deref(),
            Some(r#"{"a":{"method":"roots/list"}}"#)
        );
        assert_eq!(
            input
                .request_state
                .map(|raw| raw.get().to_owned())
                .as_deref(),
            Some(r#""s\u0041 ""#)
        );
    }

    #[test]
    fn a_task_is_told_apart() {
        assert!(matches!(
            kind(
                r#"{"jsonrpc":"2.0","id":1,"result":{"taskId":"t","status":"working","resultType":"task"}}"#
            ),
            ResultKind::Task
        ));
    }

    #[test]
    fn an_unknown_type_is_named() {
        let ResultKind::Unknown(name) =
            kind(r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"later"}}"#)
        else {
            panic!("not unknown");
        };
        assert_eq!(name, "later");
    }
}
