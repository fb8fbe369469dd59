//! The OpenAI Chat Completions wire format, as the fake writes it.
//!
//! A [`Reply::Text`](crate::Reply::Text) or [`Reply::ToolCall`](crate::Reply::ToolCall)
//! is a `chat.completion` (usage: 12 prompt, 7 completion tokens), or, for a
//! request with `"stream": true`, `chat.completion.chunk` events, each cut
//! in two chunks of the body, then a usage chunk without choices (12 and 7
//! for a text, 20 and 9 for a tool call) and `data: [DONE]`. A tool call's
//! id is `call_1`. A [`Reply::Error`](crate::Reply::Error) is
//! `{"error": {"message", "type", "param": null, "code"}}` (`code` is the
//! type).

use serde_json::{Value, json};

use crate::reply::{Raw, pieces};

/// The endpoint's path.
pub const PATH: &str = "/v1/chat/completions";

/// `data: DATA` and a blank line for each of `datas`, as a Chat Completions
/// stream sends its events (the last one is `[DONE]`: the caller writes it).
pub fn sse(datas: &[&str]) -> String {
    datas
        .iter()
        .map(|data| format!("data: {data}\n\n"))
        .collect()
}

/// The documented error body: this `type` (also the `code`) and `message`.
pub fn error_body(kind: &str, message: &str) -> String {
    json!({"error": {"message": message, "type": kind, "param": null, "code": kind}}).to_string()
}

pub(crate) fn text(text: &str, stream: bool) -> Raw {
    if !stream {
        let message = json!({"role": "assistant", "content": text});
        return Raw::json(200, &completion(message, "stop").to_string());
    }
    let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
    for piece in pieces(text, 3) {
        events.push(chunk(json!({"content": piece}), None));
    }
    events.push(chunk(json!({}), Some("stop")));
    events.push(usage_chunk(12, 7));
    Raw::sse(halves(&events))
}

pub(crate) fn tool_calls(calls: &[(String, String)], stream: bool) -> Raw {
    if !stream {
        let calls: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(index, (name, arguments))| {
                json!({"id": format!("call_{}", index + 1), "type": "function",
                    "function": {"name": name, "arguments": arguments}})
            })
            .collect();
        let message = json!({"role": "assistant", "content": null, "tool_calls": calls});
        return Raw::json(200, &completion(message, "tool_calls").to_string());
    }
    let mut events = Vec::new();
    for (index, (name, arguments)) in calls.iter().enumerate() {
        events.push(chunk(
            json!({"role": "assistant", "content": null, "tool_calls": [{
                "index": index, "id": format!("call_{}", index + 1), "type": "function",
                "function": {"name": name, "arguments": ""}
            }]}),
            None,
        ));
        for piece in pieces(arguments, 5) {
            events.push(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            ));
        }
    }
    events.push(chunk(json!({}), Some("tool_calls")));
    events.push(usage_chunk(20, 9));
    Raw::sse(halves(&events))
}

pub(crate) fn error(status: u16, kind: &str, message: &str) -> Raw {
    Raw::json(status, &error_body(kind, message))
}

/// A `chat.completion.chunk` with one choice.
fn chunk(delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-fake", "system_fingerprint": null,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]
    })
}

/// The last chunk of a stream with `stream_options.include_usage`: no
/// choices, the usage.
fn usage_chunk(prompt: u64, completion: u64) -> Value {
    json!({
        "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1,
        "model": "gpt-fake", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion}
    })
}

fn completion(message: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": "gpt-fake",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
    })
}

/// The events as a stream ending in `data: [DONE]`, each event sent as two
/// chunks of the body (cut in its middle, to exercise the parser).
fn halves(events: &[Value]) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    for event in events {
        let text = sse(&[&event.to_string()]).into_bytes();
        let (first, second) = text.split_at(text.len() / 2);
        chunks.push(first.to_vec());
        chunks.push(second.to_vec());
    }
    chunks.push(sse(&["[DONE]"]).into_bytes());
    chunks
}
