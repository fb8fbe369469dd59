//! The fake's tools (`tools/call`): each answers in one way a server may,
//! or holds the call until the test answers it. In their arguments, `n`
//! names a test's call, and `text` is repeated `repeat` times (once by
//! default).
//!
//! - `json_echo {"text", "repeat"?}`: a JSON answer with `text`.
//! - `echo {"text", "repeat"?}`: an event stream: a priming event (id
//!   `prime-1`, no data), then the answer.
//! - `framing`: an event stream using every framing rule at once, sent one
//!   byte at a time; answered `framed`.
//! - `hold {"n", "answer", "request"?, "same_id"?, "progress"?}`: held
//!   until the test answers it. `answer` says how: `sse` (an open event
//!   stream; the default), `sse_with_id` (the same, after an event with
//!   id `held-N` and `retry: 50`), `json` (headers held back), `json_rest`
//!   (headers and half the body sent). On an event stream, `progress`
//!   sends a progress report for the call's token first, and `request` (a
//!   message from the server) is sent then, with the call's own id when
//!   `same_id`.
//! - `gather {"n", "count", "answer"}`: answered `call N` once `count`
//!   `gather` calls have arrived, as JSON (headers held back) when
//!   `answer` is `json`, else on an event stream open at once.
//! - `break_once`: an event stream with one event (id `a-1`, `retry:
//!   1500`) carrying a server `ping` (id `a-ping`), broken once the client
//!   has answered the ping; resumed (`GET`, `Last-Event-ID: a-1`) with
//!   the answer `resumed A`.
//! - `end_early_with_id {"retry"?}`: an event stream of one priming event
//!   (id `stream-1-0`, with `retry` when given) that then ends; resumed
//!   with the answer `resumed`.
//! - `end_early_without_id`: an event stream of one event without an id,
//!   which then ends.
//! - `poll`: an event stream of one priming event (id `poll-0`, `retry:
//!   10`) that then ends; each resumption from `poll-K` gets the priming
//!   event `poll-K+1` and ends, until `poll-5`, which gets the answer
//!   `polled`.
//! - `status {"status", "content_type"?, "body"?, "headers"?}`: that HTTP
//!   status, with that body and those headers (an object).
//! - `expire`: the session expires: 404.
//!
//! Any other name gets a JSON-RPC error, -32602.

use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{
    Held, Pending, Resumable, State, event, event_stream, json_response, result_message, streamed,
    text_response,
};

/// Answers `tools/call` of the tool `params` names.
pub(super) async fn call(state: Arc<State>, id: Value, params: &Value) -> Response {
    let arguments = &params["arguments"];
    let text = || {
        let text = arguments["text"].as_str().unwrap_or_default();
        text.repeat(arguments["repeat"].as_u64().unwrap_or(1) as usize)
    };
    match params["name"].as_str().unwrap_or_default() {
        "json_echo" => json_response(&result_message(&id, &text())),
        "echo" => {
            let answer = format!("data: {}\n\n", result_message(&id, &text()));
            event_stream(&["id: prime-1\ndata:\n\n", &answer]).1
        }
        "framing" => framing(&id),
        "hold" => hold(state, id, params).await,
        "gather" => gather(state, id, arguments).await,
        "break_once" => break_once(state, id),
        "end_early_with_id" => {
            let mut prime = String::from("id: stream-1-0\ndata:\n");
            if let Some(retry) = arguments["retry"].as_u64() {
                prime.push_str(&format!("retry: {retry}\n"));
            }
            prime.push('\n');
            state.resumable(
                "stream-1-0",
                Resumable::Answer {
                    id,
                    text: "resumed",
                    next_id: "stream-1-1",
                },
            );
            let (sender, response) = event_stream(&[&prime]);
            drop(sender);
            state.stream_ended();
            response
        }
        "end_early_without_id" => event_stream(&["data:\n\n"]).1,
        "poll" => {
            state.resumable("poll-0", Resumable::Poll { id, k: 0 });
            event_stream(&["id: poll-0\nretry: 10\ndata:\n\n"]).1
        }
        "status" => {
            let status = arguments["status"].as_u64().expect("a status") as u16;
            let mut response = Response::builder().status(status);
            if let Some(content_type) = arguments["content_type"].as_str() {
                response = response.header("content-type", content_type);
            }
            let extra = arguments["headers"].as_object().into_iter().flatten();
            for (name, value) in extra {
                response = response.header(name, value.as_str().expect("a header value"));
            }
            let body = arguments["body"].as_str().unwrap_or_default().to_owned();
            response.body(Body::from(body)).expect("response")
        }
        "expire" => {
            state.knobs.expired.store(true, Ordering::SeqCst);
            text_response(404, "text/plain", "session gone")
        }
        other => json_response(&json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32602, "message": format!("Unknown tool: {other}")}})),
    }
}

/// Every SSE framing rule at once, sent one byte at a time.
fn framing(id: &Value) -> Response {
    let note =
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}});
    let result = result_message(id, "framed").to_string();
    // Split between two tokens: the data lines are joined with "\n".
    let (first, second) = result.split_at(result.find(",\"result\"").expect("a result member"));
    let body = format!(
        "\u{feff}: a comment\r\nretry: 10\r\nevent: message\r\ndata: {note}\r\n\r\n\
         :keep-alive\n\nevent: other\ndata: {{\"ignored\": true}}\n\n\
         id: 7\rdata: {first}\rdata: {second}\r\r"
    );
    let (sender, response) = streamed("text/event-stream");
    for byte in body.into_bytes() {
        let _ = sender.send(Ok(Bytes::from(vec![byte])));
    }
    response
}

async fn hold(state: Arc<State>, id: Value, params: &Value) -> Response {
    let arguments = &params["arguments"];
    let n = arguments["n"].as_u64().unwrap_or_default();
    match arguments["answer"].as_str().unwrap_or("sse") {
        "json" => {
            let (answer, answered) = oneshot::channel();
            state.hold(Held {
                n,
                id,
                pending: Pending::Json(answer),
            });
            match answered.await {
                Ok(response) => response,
                Err(_) => text_response(503, "text/plain", "never answered"),
            }
        }
        "json_rest" => {
            let (chunks, response) = streamed("application/json");
            let _ = chunks.send(Ok(Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{id},"#))));
            state.hold(Held {
                n,
                id,
                pending: Pending::JsonRest(chunks),
            });
            response
        }
        kind => {
            let opening = match kind {
                "sse_with_id" => format!("id: held-{n}\nretry: 50\ndata:\n\n"),
                _ => ": held\n\n".to_owned(),
            };
            let (chunks, response) = event_stream(&[&opening]);
            if arguments["progress"] == true {
                let token = &params["_meta"]["progressToken"];
                let _ = chunks.send(Ok(event(&json!({"jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1}}))));
            }
            if let Some(request) = arguments.get("request") {
                let mut request = request.clone();
                if arguments["same_id"] == true {
                    request["id"] = id.clone();
                }
                let _ = chunks.send(Ok(event(&request)));
            }
            state.hold(Held {
                n,
                id,
                pending: Pending::Stream(chunks),
            });
            response
        }
    }
}

async fn gather(state: Arc<State>, id: Value, arguments: &Value) -> Response {
    let n = arguments["n"].as_u64().unwrap_or_default();
    let count = arguments["count"].as_u64().unwrap_or_default() as usize;
    state.gathered.fetch_add(1, Ordering::SeqCst);
    state.changed();
    let answer = result_message(&id, &format!("call {n}"));
    let all_here = {
        let state = Arc::clone(&state);
        move || (state.gathered.load(Ordering::SeqCst) >= count).then_some(())
    };
    if arguments["answer"] == "json" {
        state.wait_for(all_here).await;
        return json_response(&answer);
    }
    let (chunks, response) = streamed("text/event-stream");
    tokio::spawn(async move {
        state.wait_for(all_here).await;
        let _ = chunks.send(Ok(event(&answer)));
    });
    response
}

fn break_once(state: Arc<State>, id: Value) -> Response {
    let ping = json!({"jsonrpc": "2.0", "id": "a-ping", "method": "ping"});
    let (chunks, response) = event_stream(&[&format!("id: a-1\nretry: 1500\ndata: {ping}\n\n")]);
    state.resumable(
        "a-1",
        Resumable::Answer {
            id,
            text: "resumed A",
            next_id: "a-2",
        },
    );
    tokio::spawn(async move {
        // The client has read the event when it answers the ping.
        let ping = json!("a-ping");
        state.wait_for(|| state.response_to(&ping)).await;
        let _ = chunks.send(Err(io::Error::other("the fake drops the connection")));
        state.stream_ended();
    });
    response
}
