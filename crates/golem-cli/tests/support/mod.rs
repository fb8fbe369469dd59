//! A fake model provider for the `golem` command's tests: an HTTP server on
//! 127.0.0.1, on a thread of its own, that answers `POST
//! /v1/chat/completions` as the Chat Completions API documents it (JSON or,
//! for `"stream": true`, `chat.completion.chunk` events ending in
//! `data: [DONE]`) and `POST /v1/messages` as Anthropic's Messages API
//! streams (`message_start` ... `message_stop`), with answers a test decides
//! from each request, which it records.

#![allow(dead_code)] // each test binary uses a part

use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::Response as HttpResponse;
use axum::routing::post;
use serde_json::{Value, json};

/// What the fake answers to one request.
pub enum Reply {
    /// A streamed answer (or a JSON one if the request did not ask for a
    /// stream): this text, cut in pieces of a few characters.
    Text(String),
    /// A call of `tool` with these arguments (sent in pieces).
    ToolCall { tool: String, arguments: String },
    /// An error status with the documented error body.
    Error {
        status: u16,
        kind: &'static str,
        message: String,
    },
    /// No answer at all (the request hangs until the client gives up).
    Hang,
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Seen {
    /// The path asked for.
    pub path: String,
    /// The `Authorization` header.
    pub authorization: Option<String>,
    /// The `x-api-key` header.
    pub api_key: Option<String>,
    /// The body.
    pub body: Value,
}

type Script = dyn Fn(&Value) -> Reply + Send + Sync;

struct Fake {
    script: Box<Script>,
    seen: Mutex<Vec<Seen>>,
}

/// A running fake provider. Its thread ends with the test process.
pub struct FakeProvider {
    fake: Arc<Fake>,
    /// `http://127.0.0.1:PORT/v1`, for `--base-url`.
    pub base_url: String,
}

impl FakeProvider {
    /// Starts a fake answering each request with `script(body)`.
    pub fn start(script: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Self {
        let fake = Arc::new(Fake {
            script: Box::new(script),
            seen: Mutex::new(Vec::new()),
        });
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let address = listener.local_addr().expect("address");
        let app = Router::new()
            .route("/v1/chat/completions", post(completions))
            .route("/v1/messages", post(anthropic_messages))
            .with_state(Arc::clone(&fake));
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let _ = axum::serve(listener, app).await;
            });
        });
        FakeProvider {
            fake,
            base_url: format!("http://{address}/v1"),
        }
    }

    /// Every request so far, oldest first.
    pub fn seen(&self) -> Vec<Seen> {
        self.fake.seen.lock().expect("lock").clone()
    }
}

/// Records the request; returns its body.
fn record(fake: &Fake, path: &str, headers: &HeaderMap, body: &Bytes) -> Value {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    fake.seen.lock().expect("lock").push(Seen {
        path: path.to_owned(),
        authorization: header("authorization"),
        api_key: header("x-api-key"),
        body: body.clone(),
    });
    body
}

/// `POST /v1/messages`, streamed.
async fn anthropic_messages(
    State(fake): State<Arc<Fake>>,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResponse {
    let body = record(&fake, "/v1/messages", &headers, &body);
    let event = |data: Value| {
        let kind = data["type"].as_str().unwrap_or_default().to_owned();
        format!("event: {kind}\ndata: {data}\n\n").into_bytes()
    };
    let start = json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message",
        "role": "assistant", "content": [], "model": "claude-fake", "stop_reason": null,
        "stop_sequence": null, "usage": {"input_tokens": 15, "output_tokens": 1}}});
    let mut chunks = vec![event(start)];
    let stop_reason = match (fake.script)(&body) {
        Reply::Text(text) => {
            chunks.push(event(json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "text", "text": ""}})));
            for piece in pieces(&text, 3) {
                chunks.push(event(json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": piece}})));
            }
            "end_turn"
        }
        Reply::ToolCall { tool, arguments } => {
            chunks.push(event(json!({"type": "content_block_start", "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": tool, "input": {}}})));
            for piece in pieces(&arguments, 5) {
                chunks.push(event(json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": piece}})));
            }
            "tool_use"
        }
        Reply::Error {
            status,
            kind,
            message,
        } => {
            let body = json!({"type": "error", "error": {"type": kind, "message": message}});
            return respond(
                status,
                "application/json",
                vec![body.to_string().into_bytes()],
            );
        }
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            return respond(500, "application/json", vec![b"{}".to_vec()]);
        }
    };
    chunks.push(event(json!({"type": "content_block_stop", "index": 0})));
    chunks.push(event(json!({"type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": null},
        "usage": {"output_tokens": 5}})));
    chunks.push(event(json!({"type": "message_stop"})));
    respond(200, "text/event-stream", chunks)
}

async fn completions(
    State(fake): State<Arc<Fake>>,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResponse {
    let body = record(&fake, "/v1/chat/completions", &headers, &body);
    let stream = body["stream"].as_bool() == Some(true);
    match (fake.script)(&body) {
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            respond(500, "application/json", vec![b"{}".to_vec()])
        }
        Reply::Error {
            status,
            kind,
            message,
        } => {
            let body =
                json!({"error": {"message": message, "type": kind, "param": null, "code": kind}});
            respond(
                status,
                "application/json",
                vec![body.to_string().into_bytes()],
            )
        }
        Reply::Text(text) if stream => {
            let mut events = vec![chunk(json!({"role": "assistant", "content": ""}), None)];
            for piece in pieces(&text, 3) {
                events.push(chunk(json!({"content": piece}), None));
            }
            events.push(chunk(json!({}), Some("stop")));
            events.push(usage_chunk(12, 7));
            respond(200, "text/event-stream", sse(events))
        }
        Reply::ToolCall { tool, arguments } if stream => {
            let mut events = vec![chunk(
                json!({"role": "assistant", "content": null, "tool_calls": [{
                    "index": 0, "id": "call_1", "type": "function",
                    "function": {"name": tool, "arguments": ""}
                }]}),
                None,
            )];
            for piece in pieces(&arguments, 5) {
                events.push(chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}),
                    None,
                ));
            }
            events.push(chunk(json!({}), Some("tool_calls")));
            events.push(usage_chunk(20, 9));
            respond(200, "text/event-stream", sse(events))
        }
        Reply::Text(text) => {
            let body = completion(json!({"role": "assistant", "content": text}), "stop");
            respond(200, "application/json", vec![body.to_string().into_bytes()])
        }
        Reply::ToolCall { tool, arguments } => {
            let message = json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_1", "type": "function",
                "function": {"name": tool, "arguments": arguments}
            }]});
            let body = completion(message, "tool_calls");
            respond(200, "application/json", vec![body.to_string().into_bytes()])
        }
    }
}

fn respond(status: u16, content_type: &str, chunks: Vec<Vec<u8>>) -> HttpResponse {
    let chunks = chunks.into_iter().map(Ok::<_, Infallible>);
    HttpResponse::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Body::from_stream(futures_util::stream::iter(chunks)))
        .expect("a valid response")
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

/// The events as `data:` lines, then `data: [DONE]`, each sent as its own
/// chunk of the body, cut in two to exercise the parser.
fn sse(events: Vec<Value>) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    for event in events {
        let text = format!("data: {event}\n\n").into_bytes();
        let (first, second) = text.split_at(text.len() / 2);
        chunks.push(first.to_vec());
        chunks.push(second.to_vec());
    }
    chunks.push(b"data: [DONE]\n\n".to_vec());
    chunks
}

fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars
        .chunks(size)
        .map(|piece| piece.iter().collect())
        .collect()
}

/// The messages of a request.
pub fn messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().cloned().unwrap_or_default()
}

/// The content of the last tool message, if the request ends with one
/// (Chat Completions: a `tool` message; Messages: a user turn with a
/// `tool_result` block).
pub fn last_tool_result(body: &Value) -> Option<String> {
    let messages = messages(body);
    let last = messages.last()?;
    if last["role"] == "tool" {
        return Some(last["content"].as_str().unwrap_or_default().to_owned());
    }
    let block = last["content"]
        .as_array()?
        .iter()
        .rev()
        .find(|block| block["type"] == "tool_result")?;
    Some(block["content"].as_str().unwrap_or_default().to_owned())
}

/// The names of the tools offered (either API's shape).
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| {
                    tool["function"]["name"]
                        .as_str()
                        .or(tool["name"].as_str())
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default()
}
