//! What the fake answers to one request.

use std::time::Duration;

/// What the fake answers to one request. The first three are written in the
/// wire format of the endpoint asked (see [`openai`](crate::openai) and
/// [`anthropic`](crate::anthropic) for the exact shapes); [`Reply::Raw`] is
/// sent as it is.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A text answer: streamed in pieces of three characters when the
    /// request asked for a stream, one JSON body otherwise.
    Text(String),
    /// A call of the tool `name` with these `arguments` (a JSON text):
    /// streamed in pieces of five characters when the request asked for a
    /// stream, one JSON body otherwise.
    ToolCall {
        /// The tool's name.
        name: String,
        /// The call's arguments, a JSON object as text.
        arguments: String,
    },
    /// Calls of several tools in one answer, each (name, arguments as a
    /// JSON text), as [`ToolCall`](Self::ToolCall) writes one; their ids
    /// are `call_1`, `call_2` ... (`toolu_1` ... for Anthropic).
    ToolCalls(Vec<(String, String)>),
    /// An error status with the endpoint's documented error body.
    Error {
        /// The HTTP status.
        status: u16,
        /// The error's type (`invalid_request_error`, `overloaded_error` ...).
        kind: String,
        /// The error's message.
        message: String,
    },
    /// Exactly this status, these headers and these body chunks.
    Raw(Raw),
    /// No answer at all: the request waits for ever, that is until the
    /// client gives up or the [`FakeProvider`](crate::FakeProvider) is
    /// dropped (its runtime, and the request with it, ends then).
    Hang,
}

impl From<Raw> for Reply {
    fn from(raw: Raw) -> Self {
        Reply::Raw(raw)
    }
}

/// A reply given to the byte. Any value is valid: a test builds one with
/// [`Raw::json`] or [`Raw::sse`], then changes what it needs (a
/// `retry-after` header, a delay).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raw {
    /// The HTTP status.
    pub status: u16,
    /// The response's headers (name, value), in order.
    pub headers: Vec<(String, String)>,
    /// The body, each element sent as a chunk of its own.
    pub chunks: Vec<Vec<u8>>,
    /// How long to wait, once the request is read, before answering.
    pub delay: Duration,
}

impl Raw {
    /// `body` in one chunk, as `application/json`, right away.
    pub fn json(status: u16, body: &str) -> Self {
        Raw {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            chunks: vec![body.as_bytes().to_vec()],
            delay: Duration::ZERO,
        }
    }

    /// A `200` stream (`text/event-stream`) sent in these chunks, right away.
    pub fn sse(chunks: Vec<Vec<u8>>) -> Self {
        Raw {
            status: 200,
            headers: vec![("content-type".into(), "text/event-stream".into())],
            chunks,
            delay: Duration::ZERO,
        }
    }
}

/// `text` in pieces of `size` characters (the last one shorter).
pub(crate) fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size)
        .map(|piece| piece.iter().collect())
        .collect()
}
