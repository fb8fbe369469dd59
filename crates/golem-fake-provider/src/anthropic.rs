//! The Anthropic Messages wire format, as the fake writes it.
//!
//! A [`Reply::Text`](crate::Reply::Text) or [`Reply::ToolCall`](crate::Reply::ToolCall)
//! is a `message` (usage: 15 input, 5 output tokens), or, for a request with
//! `"stream": true`, the events `message_start`, `content_block_start`, its
//! deltas (`text_delta` or `input_json_delta`), `content_block_stop`,
//! `message_delta` and `message_stop`, each a chunk of the body (the same
//! usage in all). A tool call's id is `toolu_1`. A
//! [`Reply::Error`](crate::Reply::Error) is
//! `{"type": "error", "error": {"type", "message"}}`. Every answer on this
//! endpoint, [`Raw`] ones too, carries a `request-id` header.

use serde_json::{Value, json};

use crate::reply::{Raw, pieces};

/// The endpoint's path.
pub const PATH: &str = "/v1/messages";

/// The `request-id` header the fake adds to every answer of [`PATH`].
pub const REQUEST_ID: &str = "req_fake";

/// `event: TYPE`, `data: DATA` and a blank line for each of `datas`, as a
/// Messages stream sends its events, `TYPE` read from the data's `type`.
///
/// # Panics
///
/// If a data is not a JSON object with a string `type`: a mistake in the
/// test.
pub fn sse(datas: &[&str]) -> String {
    datas
        .iter()
        .map(|data| {
            let value: Value = serde_json::from_str(data).expect("an event's data is JSON");
            let kind = value["type"].as_str().expect("an event's data has a type");
            format!("event: {kind}\ndata: {data}\n\n")
        })
        .collect()
}

/// The documented error body: this `type` and `message`.
pub fn error_body(kind: &str, message: &str) -> String {
    json!({"type": "error", "error": {"type": kind, "message": message}}).to_string()
}

pub(crate) fn text(text: &str, stream: bool) -> Raw {
    if !stream {
        return message(json!([{"type": "text", "text": text}]), "end_turn");
    }
    let mut deltas = Vec::new();
    for piece in pieces(text, 3) {
        deltas.push(json!({"type": "text_delta", "text": piece}));
    }
    events(
        vec![(json!({"type": "text", "text": ""}), deltas)],
        "end_turn",
    )
}

pub(crate) fn tool_calls(calls: &[(String, String)], stream: bool) -> Raw {
    let id = |index: usize| format!("toolu_{}", index + 1);
    if !stream {
        let blocks: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(index, (name, arguments))| {
                // `input` is an object: arguments that are not JSON go as a string.
                let input = serde_json::from_str(arguments).unwrap_or_else(|_| json!(arguments));
                json!({"type": "tool_use", "id": id(index), "name": name, "input": input})
            })
            .collect();
        return message(Value::Array(blocks), "tool_use");
    }
    let blocks = calls
        .iter()
        .enumerate()
        .map(|(index, (name, arguments))| {
            let deltas = pieces(arguments, 5)
                .into_iter()
                .map(|piece| json!({"type": "input_json_delta", "partial_json": piece}))
                .collect();
            let block = json!({"type": "tool_use", "id": id(index), "name": name, "input": {}});
            (block, deltas)
        })
        .collect();
    events(blocks, "tool_use")
}

pub(crate) fn error(status: u16, kind: &str, message: &str) -> Raw {
    Raw::json(status, &error_body(kind, message))
}

fn message(content: Value, stop_reason: &str) -> Raw {
    let message = json!({"id": "msg_fake", "type": "message", "role": "assistant",
        "model": "claude-fake", "content": content, "stop_reason": stop_reason,
        "stop_sequence": null, "usage": {"input_tokens": 15, "output_tokens": 5}});
    Raw::json(200, &message.to_string())
}

/// A stream of content blocks, each its start block then its deltas.
fn events(blocks: Vec<(Value, Vec<Value>)>, stop_reason: &str) -> Raw {
    let start = json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message",
        "role": "assistant", "content": [], "model": "claude-fake", "stop_reason": null,
        "stop_sequence": null, "usage": {"input_tokens": 15, "output_tokens": 1}}});
    let mut events = vec![start];
    for (index, (block, deltas)) in blocks.into_iter().enumerate() {
        events.push(json!({"type": "content_block_start", "index": index, "content_block": block}));
        for delta in deltas {
            events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
        }
        events.push(json!({"type": "content_block_stop", "index": index}));
    }
    events.push(json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": 5}}));
    events.push(json!({"type": "message_stop"}));
    let chunks = events
        .iter()
        .map(|event| sse(&[&event.to_string()]).into_bytes())
        .collect();
    Raw::sse(chunks)
}
