//! An agent using an MCP server's tool, over streamable HTTP.
//!
//! The same flow as `mcp-client`, against a minimal MCP endpoint this
//! program serves itself on 127.0.0.1 (a free port): it answers `initialize`
//! with a JSON body and a session id, and `tools/call` with an event stream
//! (a log notification, then the result); notifications get `202 Accepted`
//! and closing the client ends the session with `DELETE`. Offline and
//! deterministic.
//!
//! ```sh
//! cargo run -p golem-agent --example mcp-http
//! ```
//!
//! For a remote server, only the URL (and maybe an `Authorization` header in
//! `HttpConfig::headers`) changes.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use golem_agent::mcp::{Client, HttpConfig, HttpTransport};
use serde_json::{Value, json};

/// The session id the endpoint assigns at `initialize`.
const SESSION: &str = "golem-example-session";

mod common;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The endpoint, in this process.
    let endpoint = Endpoint::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let app = Router::new()
        .route("/mcp", post(on_post).delete(on_delete))
        .with_state(endpoint.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    println!("endpoint: {url}");

    // The client: one POST per message.
    let client = Client::connect(HttpTransport::new(HttpConfig::new(url))?).await?;
    common::run_echo_agent(&client, "hello over http").await?;

    client.close().await?;
    println!("endpoint saw: {}", endpoint.seen().join(", "));
    Ok(())
}

/// What the endpoint received, in order, for the summary line.
#[derive(Clone, Default)]
struct Endpoint {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Endpoint {
    fn record(&self, what: String) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.push(what);
        }
    }

    fn seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .map(|seen| seen.clone())
            .unwrap_or_default()
    }
}

/// Every message is one POST. Requests other than `initialize` must carry
/// the session id.
async fn on_post(State(endpoint): State<Endpoint>, headers: HeaderMap, body: Bytes) -> Response {
    let Ok(message) = serde_json::from_slice::<Value>(&body) else {
        return plain(StatusCode::BAD_REQUEST, "the body is not JSON");
    };
    let method = message["method"].as_str().unwrap_or("").to_owned();
    let Some(id) = message.get("id").cloned() else {
        // A notification: nothing to answer.
        endpoint.record(format!("{method} (202)"));
        return plain(StatusCode::ACCEPTED, "");
    };
    let session = headers
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok());
    if method != "initialize" && session != Some(SESSION) {
        return plain(StatusCode::BAD_REQUEST, "missing or unknown Mcp-Session-Id");
    }
    match method.as_str() {
        "initialize" => {
            endpoint.record("initialize (JSON)".into());
            let result = json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "golem-example-http-server", "version": env!("CARGO_PKG_VERSION")}
            });
            let mut response = json_body(json!({"jsonrpc": "2.0", "id": id, "result": result}));
            // The session this client must name from now on.
            if let Ok(value) = SESSION.parse() {
                response.headers_mut().insert("mcp-session-id", value);
            }
            response
        }
        "tools/list" => {
            endpoint.record("tools/list (JSON)".into());
            let result = json!({"tools": [{
                "name": "echo",
                "description": "Returns its text argument.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
            }]});
            json_body(json!({"jsonrpc": "2.0", "id": id, "result": result}))
        }
        "tools/call" => {
            endpoint.record("tools/call (event stream)".into());
            let text = message["params"]["arguments"]["text"]
                .as_str()
                .unwrap_or_default();
            let log = json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": "echoing"}});
            let result = json!({"jsonrpc": "2.0", "id": id,
                "result": {"content": [{"type": "text", "text": format!("echo: {text}")}]}});
            event_stream(&[log, result])
        }
        other => json_body(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": format!("Method not found: {other}")}})),
    }
}

/// The client ends the session on close.
async fn on_delete(State(endpoint): State<Endpoint>, headers: HeaderMap) -> Response {
    let session = headers
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok());
    endpoint.record("DELETE session".into());
    if session == Some(SESSION) {
        plain(StatusCode::OK, "")
    } else {
        plain(StatusCode::NOT_FOUND, "no such session")
    }
}

fn json_body(message: Value) -> Response {
    respond(
        StatusCode::OK,
        "application/json",
        message.to_string().into(),
    )
}

/// One SSE event per message; the stream ends after the last.
fn event_stream(messages: &[Value]) -> Response {
    let body: String = messages
        .iter()
        .map(|message| format!("event: message\ndata: {message}\n\n"))
        .collect();
    respond(StatusCode::OK, "text/event-stream", body.into())
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    respond(status, "text/plain", Body::from(text))
}

fn respond(status: StatusCode, content_type: &str, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response.headers_mut().insert("content-type", value);
    }
    response
}
