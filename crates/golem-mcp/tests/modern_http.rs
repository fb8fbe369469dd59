//! Streamable HTTP in the 2026-07-28 era, against an in-process fake: one
//! POST per request with the mirrored headers and no session, a modern
//! refusal's JSON-RPC body as the request's answer, the fallback to the
//! legacy shape, tools with invalid `x-mcp-header` annotations left out,
//! and cancellation by closing the request's stream.
#![cfg(feature = "http")]

mod support;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use golem_mcp::{
    Client, Era, Error, HowChosen, HttpConfig, HttpTransport, MODERN_PROTOCOL_VERSION,
    TransportError,
};
use serde_json::{Value, json};
use support::{bounded, raw};
use tokio::sync::{Notify, oneshot};

/// How the fake answers one request (its body and headers).
type Script = Arc<dyn Fn(&Value, &HeaderMap) -> Response + Send + Sync>;

/// What the fake saw: each request's HTTP method, headers and body.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<(Method, HeaderMap, Value)>>>);

impl Seen {
    fn all(&self) -> Vec<(Method, HeaderMap, Value)> {
        self.0.lock().expect("not poisoned").clone()
    }

    /// The headers of the first POST of JSON-RPC method `method`.
    fn headers_of(&self, method: &str) -> HeaderMap {
        self.all()
            .into_iter()
            .find(|(_, _, body)| body["method"] == method)
            .map(|(_, headers, _)| headers)
            .unwrap_or_else(|| panic!("no {method} was sent"))
    }
}

#[derive(Clone)]
struct Fake {
    seen: Seen,
    script: Script,
}

async fn serve(
    script: impl Fn(&Value, &HeaderMap) -> Response + Send + Sync + 'static,
) -> (String, Seen) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port on 127.0.0.1");
    let url = format!("http://{}/mcp", listener.local_addr().expect("its address"));
    let fake = Fake {
        seen: Seen::default(),
        script: Arc::new(script),
    };
    let seen = fake.seen.clone();
    let app = Router::new()
        .route("/mcp", axum::routing::any(endpoint))
        .with_state(fake);
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, seen)
}

async fn endpoint(
    State(fake): State<Fake>,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    fake.seen.0.lock().expect("not poisoned").push((
        method.clone(),
        headers.clone(),
        message.clone(),
    ));
    if method != Method::POST {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    (fake.script)(&message, &headers)
}

fn json_response(status: StatusCode, value: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn result(message: &Value, result: Value) -> Response {
    json_response(
        StatusCode::OK,
        json!({"jsonrpc": "2.0", "id": message["id"], "result": result}),
    )
}

fn discovered(message: &Value) -> Response {
    let mut response = result(
        message,
        json!({
        "resultType": "complete", "supportedVersions": [MODERN_PROTOCOL_VERSION],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}},
        "ttlMs": 0, "cacheScope": "private"}),
    );
    // A modern server mints no session; one that sends an id anyway must
    // not have it sent back.
    response
        .headers_mut()
        .insert("mcp-session-id", "stray".parse().expect("valid"));
    response
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

async fn connect(url: &str) -> Client {
    let transport = HttpTransport::new(HttpConfig::new(url)).expect("valid config");
    let client = Client::new(transport);
    bounded(client.initialize()).await.expect("connects");
    client
}

fn tools() -> Value {
    json!({"resultType": "complete", "tools": [
        {"name": "café", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "limit": {"type": "integer", "x-mcp-header": "Limit"},
            "note": {"type": "string"}}}},
        {"name": "broken", "inputSchema": {"type": "object", "properties": {
            "items": {"type": "array", "items": {"type": "string", "x-mcp-header": "Item"}}}}},
        {"name": "plain", "inputSchema": {"type": "object"}},
    ]})
}

#[tokio::test]
async fn modern_requests_mirror_their_body_into_headers_and_carry_no_session() {
    let (url, seen) = serve(|message, _| match message["method"].as_str() {
        Some("server/discover") => discovered(message),
        Some("tools/list") => result(message, tools()),
        _ => result(message, json!({"resultType": "complete", "content": []})),
    })
    .await;
    let client = connect(&url).await;
    assert_eq!(client.server().expect("connected").era(), Era::Modern);

    let listed = bounded(client.list_tools()).await.expect("lists");
    let names: Vec<_> = listed.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(
        names,
        ["café", "plain"],
        "the tool with an invalid annotation is left out"
    );

    let arguments = raw(r#"{"region":"us-west1\r\nX-Injected: 1","limit":7,"note":"n"}"#);
    bounded(client.call_tool("café", &arguments))
        .await
        .expect("called");
    bounded(client.close()).await.expect("closes");

    let call = seen.headers_of("tools/call");
    assert_eq!(
        header(&call, "mcp-protocol-version"),
        Some(MODERN_PROTOCOL_VERSION)
    );
    assert_eq!(header(&call, "mcp-method"), Some("tools/call"));
    assert_eq!(header(&call, "mcp-name"), Some("=?base64?Y2Fmw6k=?=")); // "café"
    assert_eq!(
        header(&call, "mcp-param-region"),
        Some("=?base64?dXMtd2VzdDENClgtSW5qZWN0ZWQ6IDE=?=")
    );
    assert_eq!(header(&call, "mcp-param-limit"), Some("7"));
    assert!(call.get("x-injected").is_none() && call.get("mcp-param-note").is_none());
    assert_eq!(
        header(&seen.headers_of("tools/list"), "mcp-method"),
        Some("tools/list")
    );
    assert!(seen.headers_of("tools/list").get("mcp-name").is_none());
    for (method, headers, body) in seen.all() {
        assert_eq!(method, Method::POST, "no GET stream, no DELETE: {body}");
        assert!(headers.get("mcp-session-id").is_none(), "{body}");
        assert!(body["method"] != "initialize", "{body}");
    }
}

#[tokio::test]
async fn a_modern_refusal_is_the_requests_own_error() {
    let (url, _seen) = serve(|message, _| match message["method"].as_str() {
        Some("server/discover") => discovered(message),
        _ => json_response(
            StatusCode::NOT_FOUND,
            json!({"jsonrpc": "2.0", "id": message["id"],
            "error": {"code": -32601, "message": "Method not found: tools/call"}}),
        ),
    })
    .await;
    let client = connect(&url).await;
    let error = bounded(client.call_tool("t", &raw("{}")))
        .await
        .expect_err("refused");
    assert_eq!(
        error.protocol_error().map(|e| e.code),
        Some(-32601),
        "{error}"
    );
}

#[tokio::test]
async fn a_tool_whose_headers_the_server_finds_wrong_is_listed_again_and_called_once_more() {
    let (url, seen) = serve(|message, headers| match message["method"].as_str() {
        Some("server/discover") => discovered(message),
        Some("tools/list") => result(message, tools()),
        _ if header(headers, "mcp-param-region").is_none() => json_response(
            StatusCode::BAD_REQUEST,
            json!({"jsonrpc": "2.0", "id": message["id"],
                "error": {"code": -32020, "message": "Header mismatch: Mcp-Param-Region missing"}}),
        ),
        _ => result(
            message,
            json!({"resultType": "complete", "content": [{"type": "text", "text": "ok"}]}),
        ),
    })
    .await;
    let client = connect(&url).await;
    // Called without listing first: sent without the header, refused,
    // listed, sent again with it.
    let called = bounded(client.call_tool("café", &raw(r#"{"region":"eu"}"#))).await;
    assert_eq!(called.expect("called").text(), "ok");
    let methods: Vec<_> = seen
        .all()
        .into_iter()
        .map(|(_, _, body)| body["method"].clone())
        .collect();
    assert_eq!(
        methods,
        [
            json!("server/discover"),
            json!("tools/call"),
            json!("tools/list"),
            json!("tools/call")
        ]
    );
}

/// A legacy server's answer to `initialize`: revision 2025-11-25 and the
/// session `s-1`.
fn legacy_session(message: &Value, name: &str) -> Response {
    let mut response = result(
        message,
        json!({"protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}}, "serverInfo": {"name": name, "version": "1"}}),
    );
    response
        .headers_mut()
        .insert("mcp-session-id", "s-1".parse().expect("valid"));
    response
}

#[tokio::test]
async fn a_legacy_servers_refusal_of_the_probe_falls_back_to_a_session() {
    let (url, seen) = serve(|message, headers| match message["method"].as_str() {
        Some("initialize") => legacy_session(message, "legacy"),
        _ if header(headers, "mcp-session-id").is_none() => json_response(
            StatusCode::BAD_REQUEST,
            json!({"jsonrpc": "2.0", "id": null,
                "error": {"code": -32000, "message": "Bad Request: Server not initialized"}}),
        ),
        _ if message.get("id").is_none() => StatusCode::ACCEPTED.into_response(),
        _ => result(message, json!({"tools": []})),
    })
    .await;
    let client = connect(&url).await;
    let server = client.server().expect("connected");
    assert_eq!(server.era(), Era::Legacy);
    assert!(
        matches!(&server.chosen, HowChosen::FellBack { probe } if probe.contains("-32000")),
        "{:?}",
        server.chosen
    );
    bounded(client.list_tools())
        .await
        .expect("lists in the session");
    let list = seen.headers_of("tools/list");
    assert_eq!(header(&list, "mcp-session-id"), Some("s-1"));
    assert_eq!(header(&list, "mcp-protocol-version"), Some("2025-11-25"));
    assert!(
        list.get("mcp-method").is_none(),
        "legacy requests are as they were"
    );
}

#[tokio::test]
async fn authorization_refusals_of_the_probe_are_errors_not_verdicts() {
    for status in [StatusCode::UNAUTHORIZED, StatusCode::FORBIDDEN] {
        // An OAuth error body is no JSON-RPC error: the status stays the error.
        let (url, seen) = serve(move |_, _| {
            json_response(
                status,
                json!({"error": "invalid_token", "error_description": "expired"}),
            )
        })
        .await;
        let transport = HttpTransport::new(HttpConfig::new(&url)).expect("valid config");
        let client = Client::new(transport);
        let error = bounded(client.initialize()).await.expect_err("no fallback");
        assert!(
            matches!(&error, Error::Transport { source: TransportError::HttpStatus(refusal), .. }
                if refusal.status == status.as_u16()),
            "{status}: {error}"
        );
        assert_eq!(seen.all().len(), 1, "{status}: initialize was not tried");
    }
}

#[tokio::test]
async fn a_server_failure_on_the_probe_falls_back_and_says_so() {
    // What @cyanheads/git-mcp-server 2.15 does: HTTP 500 to a request
    // without a session, a session for `initialize`.
    let (url, _) = serve(|message, headers| match message["method"].as_str() {
        Some("initialize") => legacy_session(message, "git"),
        _ if header(headers, "mcp-session-id").is_none() => {
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
        _ if message.get("id").is_none() => StatusCode::ACCEPTED.into_response(),
        _ => result(message, json!({"tools": []})),
    })
    .await;
    let client = connect(&url).await;
    let server = client.server().expect("connected");
    assert_eq!(server.era(), Era::Legacy);
    assert!(
        matches!(&server.chosen, HowChosen::FellBack { probe } if probe == "HTTP 500"),
        "{:?}",
        server.chosen
    );
    bounded(client.list_tools())
        .await
        .expect("lists in the session");

    // A server that fails everything fails `initialize` too: an error, not
    // a hang or a verdict.
    let (url, seen) = serve(|_, _| StatusCode::INTERNAL_SERVER_ERROR.into_response()).await;
    let client = Client::new(HttpTransport::new(HttpConfig::new(&url)).expect("valid config"));
    let error = bounded(client.initialize()).await.expect_err("fails");
    assert!(error.to_string().contains("500"), "{error}");
    assert_eq!(seen.all().len(), 2, "the probe, then initialize");
}

/// Signals when the response body it belongs to is dropped: the client
/// closed the stream.
struct OnClose(Option<oneshot::Sender<()>>);

impl Drop for OnClose {
    fn drop(&mut self) {
        if let Some(closed) = self.0.take() {
            let _ = closed.send(());
        }
    }
}

#[tokio::test]
async fn a_dropped_modern_call_closes_its_stream_and_posts_no_cancellation() {
    let (closed_sender, closed) = oneshot::channel();
    let closed_sender = Mutex::new(Some(closed_sender));
    let opened = Arc::new(Notify::new());
    let stream_opened = opened.clone();
    let (url, seen) = serve(move |message, _| match message["method"].as_str() {
        Some("server/discover") => discovered(message),
        Some("tools/call") => {
            let guard = OnClose(closed_sender.lock().expect("not poisoned").take());
            stream_opened.notify_one();
            // An event stream that never ends; it holds the guard.
            let events = futures_util::stream::unfold(guard, |guard| async move {
                std::future::pending::<()>().await;
                Some((Ok::<_, std::io::Error>(Bytes::new()), guard))
            });
            Response::builder()
                .header(header::CONTENT_TYPE, "text/event-stream")
                .body(Body::from_stream(events))
                .expect("a response")
        }
        _ => result(message, json!({"resultType": "complete", "tools": []})),
    })
    .await;
    let client = connect(&url).await;
    {
        let arguments = raw("{}");
        let call = client.call_tool("slow", &arguments);
        tokio::pin!(call);
        tokio::select! {
            _ = &mut call => panic!("answered"),
            () = opened.notified() => {}
        }
    }
    bounded(closed).await.expect("the stream was closed");
    bounded(client.list_tools()).await.expect("lists");
    let cancellations = seen
        .all()
        .into_iter()
        .filter(|(_, _, body)| body["method"] == "notifications/cancelled")
        .count();
    assert_eq!(cancellations, 0, "closing the stream is the cancellation");
}

#[tokio::test]
async fn a_modern_stream_that_breaks_is_not_resumed_and_fails_its_call() {
    let (url, seen) = serve(|message, _| match message["method"].as_str() {
        Some("server/discover") => discovered(message),
        // An event id, as a legacy server would give for resumption, and
        // then the end of the stream without the answer.
        _ => Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from("id: e-1\ndata: \n\n"))
            .expect("a response"),
    })
    .await;
    let client = connect(&url).await;
    let error = bounded(client.call_tool("t", &raw("{}")))
        .await
        .expect_err("the answer is lost");
    assert!(error.to_string().contains("no resumption"), "{error}");
    assert!(
        seen.all()
            .iter()
            .all(|(method, _, _)| method == Method::POST),
        "no GET resumes a modern stream"
    );
}
