//! JSON-RPC 2.0 framing: encoding the messages this client sends and
//! classifying the ones it receives.
//!
//! Outgoing messages are written straight into a reusable byte buffer, with
//! caller-supplied raw JSON (tool arguments) copied verbatim. Incoming
//! messages are parsed shallowly: only `id`, `method` and `error` are
//! examined, `params` and `result` stay borrowed raw JSON until the caller
//! decides what to do with them. A notification flood therefore costs one
//! scan per message and no allocation.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A JSON-RPC error object, as a server returned it: the typed protocol
/// failure of the seed (`mcp.ProtocolError`).
///
/// It reaches callers inside [`Error::Protocol`](crate::Error::Protocol), and
/// through `source()` chains, so code that only sees a `dyn Error` can still
/// `downcast_ref::<ProtocolError>()`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{message} (JSON-RPC error {code})")]
pub struct ProtocolError {
    /// The error code; see the associated constants for the standard ones.
    /// (An integral number written as a float, `-32000.0`, is accepted.)
    #[serde(deserialize_with = "integral_code")]
    pub code: i64,
    /// The server's short description of the error.
    #[serde(default)]
    pub message: String,
    /// Additional information the server attached, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

impl ProtocolError {
    /// Invalid JSON was received by the server.
    pub const PARSE_ERROR: i64 = -32700;
    /// The JSON sent is not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// The method does not exist or is not available.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Invalid method parameters (MCP servers use it for unknown tools, too).
    pub const INVALID_PARAMS: i64 = -32602;
    /// Internal JSON-RPC error.
    pub const INTERNAL_ERROR: i64 = -32603;
}

fn integral_code<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let number = serde_json::Number::deserialize(deserializer)?;
    if let Some(code) = number.as_i64() {
        return Ok(code);
    }
    match number.as_f64() {
        Some(code) if code.fract() == 0.0 && code.abs() < 9.0e15 => Ok(code as i64),
        _ => Err(serde::de::Error::custom(format!(
            "error code {number} is not an integer"
        ))),
    }
}

pub(crate) use crate::wire::transport::RequestId;

/// Appends `{"jsonrpc":"2.0","id":ID,"method":METHOD,"params":PARAMS}` to
/// `out`.
pub(crate) fn encode_request(
    out: &mut Vec<u8>,
    id: RequestId,
    method: &str,
    params: &impl Serialize,
) -> Result<(), serde_json::Error> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut *out, &id)?;
    out.extend_from_slice(br#","method":"#);
    serde_json::to_writer(&mut *out, method)?;
    out.extend_from_slice(br#","params":"#);
    serde_json::to_writer(WithSlack(&mut *out), params)?;
    out.push(b'}');
    Ok(())
}

/// Appends to a message being encoded, leaving room for a few bytes more
/// whenever the buffer grows: the braces that close the message then never
/// make it grow again. (A buffer grown to fit a large argument exactly was
/// grown, and so copied whole, once more by its last `}`: a mebibyte per
/// call when the allocator could not grow it in place.)
struct WithSlack<'a>(&'a mut Vec<u8>);

/// Room enough for every closing brace and bracket after the parameters.
const CLOSING_SLACK: usize = 64;

// Inlined, as `Vec`'s own `Write` is: serde writes a message in many
// small pieces.
impl std::io::Write for WithSlack<'_> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.capacity() - self.0.len() < buf.len() {
            self.0.reserve(buf.len() + CLOSING_SLACK);
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.write(buf).map(drop)
    }

    #[inline]
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a request carries besides its own parameters, joined into its
/// `params` object by [`encode_request_with`]: the `_meta` entries (a
/// progress token, a modern request's reserved entries) and further
/// members (a multi-round-trip retry's `inputResponses` and
/// `requestState`), each as JSON object members without braces.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Extras<'a> {
    /// The request's progress token, put in `_meta`.
    pub(crate) progress_token: Option<RequestId>,
    /// Further `_meta` members.
    pub(crate) meta: Option<&'a str>,
    /// A modern request's log level (`io.modelcontextprotocol/logLevel`),
    /// a `_meta` member of its own.
    pub(crate) log_level: Option<&'static str>,
    /// The W3C trace context of the request's span (`traceparent`, and
    /// `tracestate` when there is one), as `_meta` members.
    pub(crate) trace: Option<&'a str>,
    /// Further members of `params`.
    pub(crate) members: Option<&'a str>,
}

impl Extras<'_> {
    fn is_empty(&self) -> bool {
        self.progress_token.is_none()
            && self.meta.is_none()
            && self.log_level.is_none()
            && self.trace.is_none()
            && self.members.is_none()
    }
}

/// Appends a request whose `params` (which must serialize as an object)
/// are joined by `extras`, without decoding or copying the parameters:
/// they are written once, after the extras. Parameters that hold a `_meta`
/// of their own must not be given extras with `_meta` entries.
pub(crate) fn encode_request_with(
    out: &mut Vec<u8>,
    id: RequestId,
    method: &str,
    params: &impl Serialize,
    extras: Extras<'_>,
) -> Result<(), serde_json::Error> {
    if extras.is_empty() {
        return encode_request(out, id, method, params);
    }
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut *out, &id)?;
    out.extend_from_slice(br#","method":"#);
    serde_json::to_writer(&mut *out, method)?;
    out.extend_from_slice(br#","params":{"#);
    if extras.progress_token.is_some()
        || extras.meta.is_some()
        || extras.log_level.is_some()
        || extras.trace.is_some()
    {
        out.extend_from_slice(br#""_meta":{"#);
        let mut first = true;
        let mut separate = |out: &mut Vec<u8>| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
        };
        if let Some(token) = extras.progress_token {
            separate(out);
            out.extend_from_slice(br#""progressToken":"#);
            serde_json::to_writer(&mut *out, &token)?;
        }
        if let Some(meta) = extras.meta {
            separate(out);
            out.extend_from_slice(meta.as_bytes());
        }
        if let Some(level) = extras.log_level {
            separate(out);
            out.extend_from_slice(br#""io.modelcontextprotocol/logLevel":"#);
            serde_json::to_writer(&mut *out, level)?;
        }
        if let Some(trace) = extras.trace {
            separate(out);
            out.extend_from_slice(trace.as_bytes());
        }
        out.push(b'}');
        if extras.members.is_some() {
            out.push(b',');
        }
    }
    if let Some(members) = extras.members {
        out.extend_from_slice(members.as_bytes());
    }
    // The parameters are written whole, then joined to the members before
    // them: their opening brace becomes a comma (or goes, when they are
    // empty), and their closing brace closes `params`.
    let start = out.len();
    serde_json::to_writer(WithSlack(&mut *out), params)?;
    if out.get(start) != Some(&b'{') {
        out.truncate(start);
        return Err(serde::ser::Error::custom(
            "the request's parameters are not a JSON object",
        ));
    }
    let empty = out[start + 1..]
        .iter()
        .find(|byte| !byte.is_ascii_whitespace())
        == Some(&b'}');
    if empty {
        out.remove(start);
    } else {
        out[start] = b',';
    }
    out.push(b'}');
    Ok(())
}

/// Appends a notification (no id, so no reply) to `out`.
pub(crate) fn encode_notification(
    out: &mut Vec<u8>,
    method: &str,
    params: Option<&impl Serialize>,
) -> Result<(), serde_json::Error> {
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"#);
    serde_json::to_writer(&mut *out, method)?;
    if let Some(params) = params {
        out.extend_from_slice(br#","params":"#);
        serde_json::to_writer(WithSlack(&mut *out), params)?;
    }
    out.push(b'}');
    Ok(())
}

/// Appends a reply to a server-initiated request. `raw_id` is the request's
/// id exactly as the server wrote it, so the server sees its own id back.
pub(crate) fn encode_reply(out: &mut Vec<u8>, raw_id: &str, outcome: Result<&str, &ProtocolError>) {
    // The result's size is known: room for all of it at once, so that a
    // large one (a sampled completion) is not copied again by the closing
    // brace (see `WithSlack`).
    let result_len = outcome.map_or(0, str::len);
    out.reserve(raw_id.len() + result_len + CLOSING_SLACK);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(raw_id.as_bytes());
    match outcome {
        Ok(result) => {
            out.extend_from_slice(br#","result":"#);
            out.extend_from_slice(result.as_bytes());
        }
        Err(error) => {
            out.extend_from_slice(br#","error":"#);
            // A ProtocolError holds only strings, integers and JSON values:
            // serialising it cannot fail.
            if serde_json::to_writer(&mut *out, error).is_err() {
                out.extend_from_slice(br#"{"code":-32603,"message":"internal error"}"#);
            }
        }
    }
    out.push(b'}');
}

/// An incoming message with its `result` decoded as `R` in the same pass.
#[derive(Deserialize)]
#[serde(bound(deserialize = "R: Deserialize<'de>"))]
struct Envelope<'a, R> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    // Every other member (`jsonrpc`, extensions) is skipped without
    // allocating.
    #[serde(default = "none", deserialize_with = "present")]
    result: Option<R>,
    #[serde(default)]
    error: Option<ProtocolError>,
}

fn none<R>() -> Option<R> {
    None
}

/// A `result` member that is present is a result, even when it is `null`
/// (which `Option`'s own impl would turn into "absent").
fn present<'de, D: serde::Deserializer<'de>, R: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<R>, D::Error> {
    R::deserialize(deserializer).map(Some)
}

/// One incoming message, classified, borrowing from the transport's buffer.
#[derive(Debug)]
pub(crate) enum Incoming<'a, R> {
    /// A server-to-client request: it must be answered.
    Request {
        raw_id: &'a str,
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A notification: no answer.
    Notification {
        method: Cow<'a, str>,
        params: Option<&'a RawValue>,
    },
    /// A response to some request (ours or not): `raw_id` is `None` for the
    /// error responses a server sends when it could not read an id.
    Response {
        raw_id: Option<&'a str>,
        outcome: Outcome<R>,
    },
}

/// What a response carried.
#[derive(Debug)]
pub(crate) enum Outcome<R> {
    /// A result, decoded.
    Result(R),
    /// A JSON-RPC error.
    Error(ProtocolError),
    /// A result that is not an `R`: fine if the response is not the one
    /// awaited, an invalid answer if it is.
    Undecodable(serde_json::Error),
}

/// Why an incoming message was not understood.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Malformed {
    #[error("not a JSON object: {0}")]
    Json(#[from] serde_json::Error),
    #[error("a JSON-RPC message needs a method, a result or an error")]
    Shape,
}

impl<'a, R: Deserialize<'a>> Incoming<'a, R> {
    /// Classifies one message, decoding a response's result as `R` in the
    /// same pass: the awaited answer, usually the largest message, is read
    /// once. `params` stay raw.
    pub(crate) fn parse(bytes: &'a [u8]) -> Result<Self, Malformed> {
        let json = Json::new(bytes);
        let typed_error = match json.read::<Envelope<'a, R>>() {
            Ok(envelope) => return Self::classify(envelope),
            Err(error) => error,
        };
        // Either a result of another shape (an answer to some other
        // request), or a malformed message: read it shallowly.
        match json.read::<Envelope<'a, IgnoredAny>>() {
            Ok(envelope) => Ok(match Incoming::<IgnoredAny>::classify(envelope)? {
                Incoming::Request {
                    raw_id,
                    method,
                    params,
                } => Incoming::Request {
                    raw_id,
                    method,
                    params,
                },
                Incoming::Notification { method, params } => {
                    Incoming::Notification { method, params }
                }
                Incoming::Response { raw_id, outcome } => Incoming::Response {
                    raw_id,
                    outcome: match outcome {
                        Outcome::Error(error) => Outcome::Error(error),
                        Outcome::Result(_) | Outcome::Undecodable(_) => {
                            Outcome::Undecodable(typed_error)
                        }
                    },
                },
            }),
            Err(shallow_error) => {
                // Malformed beyond its result (an error object without an
                // integer code, a duplicated member): if it has an id and no
                // method, it still answers that request, which must fail
                // rather than wait forever.
                let head: Head<'a> = json.read().map_err(|_| Malformed::Json(shallow_error))?;
                match (head.id.map(RawValue::get), head.method) {
                    (Some(raw_id), None) if raw_id != "null" => Ok(Incoming::Response {
                        raw_id: Some(raw_id),
                        outcome: Outcome::Undecodable(typed_error),
                    }),
                    _ => Err(Malformed::Shape),
                }
            }
        }
    }

    fn classify(envelope: Envelope<'a, R>) -> Result<Self, Malformed> {
        let raw_id = envelope.id.map(RawValue::get).filter(|id| *id != "null");
        match (envelope.method, envelope.result, envelope.error) {
            (Some(method), _, _) => Ok(match raw_id {
                Some(raw_id) => Incoming::Request {
                    raw_id,
                    method,
                    params: envelope.params,
                },
                None => Incoming::Notification {
                    method,
                    params: envelope.params,
                },
            }),
            (None, _, Some(error)) => Ok(Incoming::Response {
                raw_id,
                outcome: Outcome::Error(error),
            }),
            (None, Some(result), None) => Ok(Incoming::Response {
                raw_id,
                outcome: Outcome::Result(result),
            }),
            (None, None, None) => match raw_id {
                // An answer to that request, but with nothing in it.
                Some(raw_id) => Ok(Incoming::Response {
                    raw_id: Some(raw_id),
                    outcome: Outcome::Undecodable(serde::de::Error::custom(
                        "the response has neither a result nor an error",
                    )),
                }),
                None => Err(Malformed::Shape),
            },
        }
    }
}

/// A message's bytes, checked for UTF-8 once: serde_json then reads it as
/// text and skips the check it would otherwise make on every string (one
/// pass instead of nine for a small tool result: about 700 of the 15,000
/// instructions its call cost, by callgrind). A message that is
/// not UTF-8 is read from its bytes, exactly as before the check, so what it
/// is accepted or refused for does not change.
#[derive(Clone, Copy)]
enum Json<'a> {
    Text(&'a str),
    Bytes(&'a [u8]),
}

impl<'a> Json<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => Json::Text(text),
            Err(_) => Json::Bytes(bytes),
        }
    }

    fn read<T: Deserialize<'a>>(self) -> serde_json::Result<T> {
        match self {
            Json::Text(text) => serde_json::from_str(text),
            Json::Bytes(bytes) => serde_json::from_slice(bytes),
        }
    }
}

/// Just enough of a message to tell which request a broken answer is for.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<IgnoredAny>,
}

/// The request id a reply's raw JSON id names, if it can be one of ours.
///
/// JSON-RPC ids match by value and type: the numbers `1`, `1.0` and `1e0` are
/// the same id, the string `"1"` is a different one (and never ours: this
/// client's ids are integers).
pub(crate) fn our_id(raw_id: &str) -> Option<RequestId> {
    let first = raw_id.bytes().next()?;
    if !first.is_ascii_digit() {
        return None; // a string, a negative number or some other type
    }
    if let Ok(integer) = raw_id.parse::<u64>() {
        return Some(integer);
    }
    // Fractional or exponent notation. Our ids stay far below 2^53, where
    // every integer is exact as an f64.
    let number = raw_id.parse::<f64>().ok()?;
    (number.fract() == 0.0 && number < 9.0e15).then_some(number as RequestId)
}

/// Whether a reply's id (raw JSON text) is the request id `expected`.
#[cfg(test)]
pub(crate) fn id_matches(raw_id: &str, expected: RequestId) -> bool {
    our_id(raw_id) == Some(expected)
}

/// What the inbound side needs to route a message: for a response, its id.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Route<'a> {
    /// A response (it has a `result` or an `error` and no `method`), with
    /// its raw id (`None` when absent or `null`).
    Response { raw_id: Option<&'a str> },
    /// Anything else: a request, a notification, or something malformed;
    /// [`Incoming::parse`] tells them apart.
    Other,
}

/// Routes a message as cheaply as possible: the members are read in order
/// and reading stops as soon as both the `id` and a `result` or `error`
/// member have been seen, so the usual `{"jsonrpc":"2.0","id":7,"result":…}`
/// costs a few bytes of parsing however large the result is. The result is
/// parsed once, by the caller that awaits it, which also reports a response
/// that turns out to be malformed further on.
pub(crate) fn route(bytes: &[u8]) -> Route<'_> {
    if let Some(raw_id) = usual_response_id(bytes) {
        return Route::Response {
            raw_id: Some(raw_id),
        };
    }
    let mut head = RouteHead::default();
    let mut deserializer = serde_json::Deserializer::from_slice(bytes);
    // Stopping early leaves the map unfinished, which the deserializer
    // reports as an error: what was read before it is what counts.
    let _ = serde::Deserializer::deserialize_map(&mut deserializer, RouteVisitor(&mut head));
    match head {
        RouteHead {
            answer: true,
            method: false,
            id,
        } => Route::Response {
            raw_id: id.map(RawValue::get).filter(|raw| *raw != "null"),
        },
        _ => Route::Other,
    }
}

/// The id of a response in the shape nearly every server writes,
/// `{"jsonrpc":"2.0","id":<digits>,"result":…` (or `"error"`), read without
/// a parser; `None` for any other shape, which the parser then reads.
fn usual_response_id(bytes: &[u8]) -> Option<&str> {
    const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
    let rest = bytes.strip_prefix(HEAD)?;
    let digits = rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
    let after = &rest[digits..];
    if digits == 0 || !(after.starts_with(br#","result":"#) || after.starts_with(br#","error":"#)) {
        return None;
    }
    // ASCII digits are UTF-8.
    std::str::from_utf8(&rest[..digits]).ok()
}

#[derive(Default)]
struct RouteHead<'a> {
    id: Option<&'a RawValue>,
    answer: bool,
    method: bool,
}

struct RouteVisitor<'h, 'a>(&'h mut RouteHead<'a>);

impl<'a> serde::de::Visitor<'a> for RouteVisitor<'_, 'a> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<M: serde::de::MapAccess<'a>>(self, mut map: M) -> Result<(), M::Error> {
        while let Some(key) = map.next_key::<Cow<'a, str>>()? {
            match key.as_ref() {
                "id" => self.0.id = Some(map.next_value()?),
                "result" | "error" => {
                    self.0.answer = true;
                    if self.0.id.is_some() && !self.0.method {
                        return Ok(()); // enough to route it
                    }
                    map.next_value::<IgnoredAny>()?;
                }
                "method" => {
                    self.0.method = true;
                    map.next_value::<IgnoredAny>()?;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn extras_join_the_params_object_before_its_members() {
        let encode = |params: &serde_json::Value, extras: Extras<'_>| {
            let mut out = Vec::new();
            encode_request_with(&mut out, 7, "m", params, extras).expect("encodes");
            String::from_utf8(out).expect("UTF-8")
        };
        let all = Extras {
            progress_token: Some(7),
            meta: Some(r#""a":1"#),
            log_level: Some("debug"),
            trace: Some(r#""traceparent":"00-01-02-01""#),
            members: Some(r#""inputResponses":{}"#),
        };
        assert_eq!(
            encode(&serde_json::json!({"name": "t"}), all),
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"_meta":{"progressToken":7,"a":1,"io.modelcontextprotocol/logLevel":"debug","traceparent":"00-01-02-01"},"inputResponses":{},"name":"t"}}"#
        );
        let trace_only = Extras {
            trace: Some(r#""traceparent":"00-01-02-01""#),
            ..Extras::default()
        };
        assert_eq!(
            encode(&serde_json::json!({"y": 2}), trace_only),
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"_meta":{"traceparent":"00-01-02-01"},"y":2}}"#
        );
        let meta_only = Extras {
            meta: Some(r#""a":1"#),
            ..Extras::default()
        };
        assert_eq!(
            encode(&serde_json::json!({}), meta_only),
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"_meta":{"a":1}}}"#
        );
        let members_only = Extras {
            members: Some(r#""x":true"#),
            ..Extras::default()
        };
        assert_eq!(
            encode(&serde_json::json!({"y": 2}), members_only),
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"x":true,"y":2}}"#
        );
        assert_eq!(
            encode(&serde_json::json!({"y": 2}), Extras::default()),
            r#"{"jsonrpc":"2.0","id":7,"method":"m","params":{"y":2}}"#
        );
        let mut out = Vec::new();
        assert!(encode_request_with(&mut out, 1, "m", &[1, 2], meta_only).is_err());
    }
    use super::*;

    #[test]
    fn a_large_argument_leaves_room_for_the_closing_braces() {
        let text = "x".repeat(1 << 20);
        let params = serde_json::json!({"name": "echo", "arguments": {"text": text}});
        let mut out = Vec::with_capacity(256);
        let extras = Extras {
            meta: Some(r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#),
            ..Extras::default()
        };
        encode_request_with(&mut out, 1, "tools/call", &params, extras).expect("encodes");
        // The buffer grew to fit the text and some room more, so the braces
        // after it did not grow it (and copy the mebibyte) once more: it
        // is at most the text plus the envelope plus the slack, not double.
        let decoded = grown_once(out);
        assert_eq!(
            decoded["params"]["arguments"]["text"]
                .as_str()
                .map(str::len),
            Some(1 << 20)
        );
    }

    /// `out` decoded, after checking that its buffer was not doubled past
    /// its contents (grown, and copied, once more for the last bytes).
    fn grown_once(out: Vec<u8>) -> serde_json::Value {
        assert!(
            out.capacity() < out.len() + 4096,
            "{} for {}",
            out.capacity(),
            out.len()
        );
        serde_json::from_slice(&out).expect("valid JSON")
    }

    #[test]
    fn a_large_reply_is_written_into_one_allocation() {
        let result = format!(r#"{{"text":"{}"}}"#, "x".repeat(1 << 20));
        let mut out = Vec::with_capacity(128);
        encode_reply(&mut out, "7", Ok(&result));
        // Reserved once for all of it: not doubled by the closing brace.
        let decoded = grown_once(out);
        assert_eq!(decoded["id"], 7);
    }

    #[test]
    fn ids_match_by_json_value_and_type() {
        assert!(id_matches("1", 1));
        assert!(id_matches("1.0", 1));
        assert!(id_matches("1e0", 1));
        assert!(id_matches("10E-1", 1));
        assert!(!id_matches("\"1\"", 1));
        assert!(!id_matches("2", 1));
        assert!(!id_matches("1.5", 1));
        assert!(!id_matches("-1", 1));
        assert!(!id_matches("null", 1));
        assert!(!id_matches("", 1));
        assert!(!id_matches("[1]", 1));
    }

    #[test]
    fn responses_are_routed_by_id_without_reading_the_result() {
        assert_eq!(
            route(br#"{"jsonrpc":"2.0","id":7,"result":{"big":"#),
            Route::Response { raw_id: Some("7") },
            "the result is not read, so even a truncated one routes"
        );
        assert_eq!(
            route(br#"{"result":{"x":1},"jsonrpc":"2.0","id":"a"}"#),
            Route::Response {
                raw_id: Some(r#""a""#)
            }
        );
        assert_eq!(
            route(br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}"#),
            Route::Response { raw_id: None }
        );
        assert_eq!(
            route(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Route::Other
        );
        assert_eq!(
            route(br#"{"jsonrpc":"2.0","result":{},"method":"x","id":1}"#),
            Route::Other
        );
        assert_eq!(route(b"not json"), Route::Other);
        // The usual shape is read without the parser, and only that shape.
        assert_eq!(
            usual_response_id(br#"{"jsonrpc":"2.0","id":42,"result":{}}"#),
            Some("42")
        );
        assert_eq!(
            usual_response_id(br#"{"jsonrpc":"2.0","id":42,"error":{}}"#),
            Some("42")
        );
        assert_eq!(
            usual_response_id(br#"{"jsonrpc":"2.0","id":42,"method":"x"}"#),
            None
        );
        assert_eq!(
            usual_response_id(br#"{"jsonrpc":"2.0","id":"42","result":{}}"#),
            None
        );
        assert_eq!(
            usual_response_id(br#"{"jsonrpc":"2.0","id":4.0,"result":{}}"#),
            None
        );
        assert_eq!(
            route(br#"{"jsonrpc":"2.0","id":4.0,"result":{}}"#),
            Route::Response {
                raw_id: Some("4.0")
            }
        );
        assert_eq!(our_id("12"), Some(12));
        assert_eq!(our_id("1e1"), Some(10));
        assert_eq!(our_id("\"12\""), None);
        assert_eq!(our_id("-1"), None);
    }

    #[test]
    fn requests_are_encoded_with_params_verbatim() {
        let mut out = Vec::new();
        let args = RawValue::from_string(r#"{ "b":1,"a" : 2 }"#.to_owned()).expect("valid JSON");
        encode_request(&mut out, 7, "tools/call", &args).expect("encodes");
        assert_eq!(
            std::str::from_utf8(&out).expect("utf-8"),
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{ "b":1,"a" : 2 }}"#
        );
    }

    #[test]
    fn replies_echo_the_raw_id() {
        let mut out = Vec::new();
        encode_reply(&mut out, r#""abc""#, Ok("{}"));
        assert_eq!(out, br#"{"jsonrpc":"2.0","id":"abc","result":{}}"#);
        out.clear();
        let error = ProtocolError {
            code: ProtocolError::METHOD_NOT_FOUND,
            message: "no".into(),
            data: None,
        };
        encode_reply(&mut out, "3", Err(&error));
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no"}}"#
        );
    }

    type Shallow<'a> = Incoming<'a, &'a RawValue>;

    #[test]
    fn incoming_messages_are_classified() {
        match Shallow::parse(br#"{"jsonrpc":"2.0","id":"p1","method":"ping"}"#) {
            Ok(Incoming::Request { raw_id, method, .. }) => {
                assert_eq!(raw_id, r#""p1""#);
                assert_eq!(method, "ping");
            }
            other => panic!("expected a request, got {other:?}"),
        }
        match Shallow::parse(
            br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"p":1}}"#,
        ) {
            Ok(Incoming::Notification { method, params }) => {
                assert_eq!(method, "notifications/progress");
                assert_eq!(params.map(RawValue::get), Some(r#"{"p":1}"#));
            }
            other => panic!("expected a notification, got {other:?}"),
        }
        match Shallow::parse(br#"{"jsonrpc":"2.0","id":4,"result":{"x":[1,2]}}"#) {
            Ok(Incoming::Response {
                raw_id,
                outcome: Outcome::Result(result),
            }) => {
                assert_eq!(raw_id, Some("4"));
                assert_eq!(result.get(), r#"{"x":[1,2]}"#);
            }
            other => panic!("expected a response, got {other:?}"),
        }
        match Shallow::parse(
            br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#,
        ) {
            Ok(Incoming::Response {
                raw_id,
                outcome: Outcome::Error(error),
            }) => {
                assert_eq!(raw_id, None);
                assert_eq!(error.code, -32700);
            }
            other => panic!("expected an error response, got {other:?}"),
        }
        assert!(matches!(Shallow::parse(b"{}"), Err(Malformed::Shape)));
        assert!(matches!(Shallow::parse(b"hello"), Err(Malformed::Json(_))));
    }

    #[derive(Debug, Deserialize)]
    struct Typed {
        n: u32,
    }

    #[test]
    fn results_are_decoded_in_the_same_pass_or_reported_undecodable() {
        match Incoming::<Typed>::parse(br#"{"id":1,"result":{"n":7},"jsonrpc":"2.0"}"#) {
            Ok(Incoming::Response {
                raw_id: Some("1"),
                outcome: Outcome::Result(Typed { n: 7 }),
            }) => {}
            other => panic!("expected a decoded result, got {other:?}"),
        }
        // A result of another shape (an answer to another request) is still
        // classified, with its id.
        match Incoming::<Typed>::parse(br#"{"jsonrpc":"2.0","result":{"tools":[]},"id":2}"#) {
            Ok(Incoming::Response {
                raw_id: Some("2"),
                outcome: Outcome::Undecodable(_),
            }) => {}
            other => panic!("expected an undecodable result, got {other:?}"),
        }
        // Broken answers that carry an id still answer that request.
        for broken in [
            &br#"{"jsonrpc":"2.0","id":5,"error":{"code":"E_TOOL","message":"x"}}"#[..],
            br#"{"jsonrpc":"2.0","id":5,"error":"plain string"}"#,
            br#"{"jsonrpc":"2.0","id":5}"#,
            br#"{"jsonrpc":"2.0","id":5,"result":{"n":1},"result":{"n":2}}"#,
        ] {
            match Incoming::<Typed>::parse(broken) {
                Ok(Incoming::Response {
                    raw_id: Some("5"),
                    outcome: Outcome::Undecodable(_),
                }) => {}
                other => panic!(
                    "{}: expected an undecodable answer, got {other:?}",
                    String::from_utf8_lossy(broken)
                ),
            }
        }
        // An integral float code is an integer code.
        match Incoming::<Typed>::parse(
            br#"{"jsonrpc":"2.0","id":6,"error":{"code":-32000.0,"message":"m"}}"#,
        ) {
            Ok(Incoming::Response {
                outcome: Outcome::Error(error),
                ..
            }) => assert_eq!(error.code, -32000),
            other => panic!("expected an error answer, got {other:?}"),
        }
        // A null result is a result, not a missing one.
        assert!(matches!(
            Incoming::<IgnoredAny>::parse(br#"{"jsonrpc":"2.0","id":3,"result":null}"#),
            Ok(Incoming::Response {
                outcome: Outcome::Result(_),
                ..
            })
        ));
        // Notifications are not affected by the expected result type.
        assert!(matches!(
            Incoming::<Typed>::parse(br#"{"jsonrpc":"2.0","method":"m","params":{"n":"x"}}"#),
            Ok(Incoming::Notification { .. })
        ));
    }

    #[test]
    fn a_message_that_is_not_utf8_is_judged_as_before_the_utf8_check() {
        // Invalid UTF-8 inside a member nobody reads does not cost the
        // message (serde_json skips such strings unchecked).
        let stray: &[u8] = b"{\"jsonrpc\":\"2.0\",\"x\":\"\xff\",\"id\":1,\"result\":{\"n\":7}}";
        match Incoming::<Typed>::parse(stray) {
            Ok(Incoming::Response {
                outcome: Outcome::Result(Typed { n: 7 }),
                ..
            }) => {}
            other => panic!("expected a decoded result, got {other:?}"),
        }
        // Inside a string that is read, it fails the answer to that id.
        let broken: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}}";
        match Incoming::<crate::wire::call_result::CallResult>::parse(broken) {
            Ok(Incoming::Response {
                raw_id: Some("1"),
                outcome: Outcome::Undecodable(error),
            }) => assert!(error.to_string().contains("unicode"), "{error}"),
            other => panic!("expected an undecodable answer, got {other:?}"),
        }
    }
}
