//! The streamable-HTTP transport against an in-process axum server that
//! checks what a spec-true client must send and answers in every way a real
//! server may: JSON, event streams framed every legal way, 202, expired
//! sessions, errors, streams that end early with and without event ids.
#![cfg(feature = "http")]

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use golem_mcp::{
    Client, Error, HttpConfig, HttpTransport, LATEST_PROTOCOL_VERSION, ResumePolicy, TransportError,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

const PATIENCE: Duration = Duration::from_secs(20);

/// One request as the fake server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: &'static str,
    headers: HeaderMap,
    body: Value,
    at: Instant,
}

/// The fake server's state and knobs.
struct Fake {
    seen: Mutex<Vec<Seen>>,
    /// Session ids handed out so far; only the last one is live.
    sessions: AtomicUsize,
    expired: AtomicBool,
    delete_status: StatusCode,
    /// Signalled when the client answers the server's ping.
    pong: Notify,
    /// Signalled by a test to let a waiting stream finish.
    release: Notify,
    /// When the last early-ending stream ended.
    stream_ended_at: Mutex<Option<Instant>>,
    /// Standalone GET streams still to end at once (with a short `retry`)
    /// before one carries a notification; `None`: no standalone stream
    /// (405).
    standalone_endings: Mutex<Option<usize>>,
    /// How many resumption GETs to refuse with a stream that ends again.
    failing_resumes: AtomicUsize,
    /// How many resumption GETs to refuse with `503` (and `Retry-After: 1`).
    unavailable_resumes: AtomicUsize,
    /// How many initialize requests to answer with a stream that ends
    /// without the answer.
    failing_initializes: AtomicUsize,
    /// The standalone stream delivers event `s-1`, then an event larger
    /// than any client limit; reopened after `s-1`, it delivers another.
    standalone_oversized: AtomicBool,
    /// The standalone stream is resumable: every GET replays the stored
    /// events after its `Last-Event-ID` (`s-1`, an oversized `s-2`, `s-3`)
    /// and stays open.
    standalone_replaying: AtomicBool,
    /// Every standalone stream starts with an event over any client limit
    /// that has no id of its own, and stays open.
    standalone_poisoned: AtomicBool,
}

impl Fake {
    fn new(delete_status: StatusCode) -> Arc<Self> {
        Arc::new(Fake {
            seen: Mutex::new(Vec::new()),
            sessions: AtomicUsize::new(0),
            expired: AtomicBool::new(false),
            delete_status,
            pong: Notify::new(),
            release: Notify::new(),
            stream_ended_at: Mutex::new(None),
            standalone_endings: Mutex::new(None),
            failing_resumes: AtomicUsize::new(0),
            unavailable_resumes: AtomicUsize::new(0),
            failing_initializes: AtomicUsize::new(0),
            standalone_oversized: AtomicBool::new(false),
            standalone_replaying: AtomicBool::new(false),
            standalone_poisoned: AtomicBool::new(false),
        })
    }

    fn session(&self) -> String {
        format!("session-{}", self.sessions.load(Ordering::SeqCst))
    }

    fn record(&self, method: &'static str, headers: &HeaderMap, body: Value) {
        self.seen.lock().expect("lock").push(Seen {
            method,
            headers: headers.clone(),
            body,
            at: Instant::now(),
        });
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("lock").clone()
    }

    fn posts_of(&self, method: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|seen| seen.method == "POST" && seen.body["method"] == method)
            .collect()
    }
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn json_response(message: Value) -> Response {
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(message.to_string()))
        .expect("response")
}

fn status(code: StatusCode, content_type: &str, body: &str) -> Response {
    Response::builder()
        .status(code)
        .header("content-type", content_type)
        .body(Body::from(body.to_owned()))
        .expect("response")
}

/// An event-stream response whose body chunks are sent by the returned
/// sender; the stream ends when the sender is dropped.
fn sse_channel() -> (mpsc::UnboundedSender<Bytes>, Response) {
    let (sender, receiver) = mpsc::unbounded_channel::<Bytes>();
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver
            .recv()
            .await
            .map(|chunk| (Ok::<_, Infallible>(chunk), receiver))
    });
    let response = Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("response");
    (sender, response)
}

fn event(id: &Value, result: Value) -> Bytes {
    Bytes::from(format!(
        "data: {}\n\n",
        json!({"jsonrpc": "2.0", "id": id, "result": result})
    ))
}

fn text(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

async fn on_post(State(fake): State<Arc<Fake>>, headers: HeaderMap, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    fake.record("POST", &headers, message.clone());
    let accept = header(&headers, "accept").unwrap_or("");
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return status(StatusCode::NOT_ACCEPTABLE, "text/plain", "accept both");
    }
    if header(&headers, "content-type") != Some("application/json") {
        return status(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "text/plain",
            "json only",
        );
    }
    let id = message["id"].clone();
    if message["method"] == "initialize" {
        if header(&headers, "mcp-session-id").is_some() {
            return status(
                StatusCode::BAD_REQUEST,
                "text/plain",
                "initialize carries no session",
            );
        }
        if fake.failing_initializes.load(Ordering::SeqCst) > 0 {
            fake.failing_initializes.fetch_sub(1, Ordering::SeqCst);
            let (sender, response) = sse_channel();
            let _ = sender.send(Bytes::from_static(b": no answer\n\n"));
            return response;
        }
        fake.sessions.fetch_add(1, Ordering::SeqCst);
        fake.expired.store(false, Ordering::SeqCst);
        let mut response = json_response(json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-http", "version": "1.0"}}}));
        response
            .headers_mut()
            .insert("mcp-session-id", fake.session().parse().expect("header"));
        return response;
    }
    match header(&headers, "mcp-session-id") {
        Some(session) if session == fake.session() && !fake.expired.load(Ordering::SeqCst) => {}
        Some(_) => return status(StatusCode::NOT_FOUND, "text/plain", "unknown session"),
        None => return status(StatusCode::BAD_REQUEST, "text/plain", "missing session"),
    }
    if header(&headers, "mcp-protocol-version") != Some(LATEST_PROTOCOL_VERSION) {
        return status(
            StatusCode::BAD_REQUEST,
            "text/plain",
            "missing or wrong MCP-Protocol-Version",
        );
    }
    if message.get("method").is_none() {
        if message["id"] == "srv-ping" {
            fake.pong.notify_one();
        }
        return Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Body::empty())
            .expect("response");
    }
    if message.get("id").is_none() {
        return Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Body::empty())
            .expect("response");
    }
    match message["method"].as_str().unwrap_or_default() {
        "tools/list" => json_response(json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}}]}})),
        "tools/call" => call_tool(fake, id, &message["params"]).await,
        _ => json_response(
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
        ),
    }
}

async fn call_tool(fake: Arc<Fake>, id: Value, params: &Value) -> Response {
    let arguments = &params["arguments"];
    match params["name"].as_str().unwrap_or_default() {
        "json_echo" => json_response(json!({"jsonrpc": "2.0", "id": id,
            "result": text(arguments["text"].as_str().unwrap_or_default())})),
        "echo" => {
            let (sender, response) = sse_channel();
            let _ = sender.send(Bytes::from_static(b"id: prime-1\ndata:\n\n"));
            let _ = sender.send(event(
                &id,
                text(arguments["text"].as_str().unwrap_or_default()),
            ));
            response
        }
        "framing" => {
            // Every framing rule at once, sent one byte at a time.
            let note = json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}});
            let result = json!({"jsonrpc": "2.0", "id": id, "result": text("framed")}).to_string();
            // Split between two tokens: the data lines are joined with "\n".
            let (first, second) =
                result.split_at(result.find(",\"result\"").expect("a result member"));
            let body = format!(
                "\u{feff}: a comment\r\nretry: 10\r\nevent: message\r\ndata: {note}\r\n\r\n\
                 :keep-alive\n\nevent: other\ndata: {{\"ignored\": true}}\n\n\
                 id: 7\rdata: {first}\rdata: {second}\r\r"
            );
            let (sender, response) = sse_channel();
            for byte in body.into_bytes() {
                let _ = sender.send(Bytes::from(vec![byte]));
            }
            response
        }
        "wait_for_release" => {
            // A progress report, then the answer only once the test says so:
            // a transport that buffered the stream until its end would never
            // show the report.
            let token = params["_meta"]["progressToken"].clone();
            let (sender, response) = sse_channel();
            let _ = sender.send(Bytes::from(format!("data: {}\n\n", json!({"jsonrpc": "2.0",
                "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}}))));
            tokio::spawn(async move {
                fake.release.notified().await;
                let _ = sender.send(event(&id, text("released")));
            });
            response
        }
        "ping_first" => {
            let (sender, response) = sse_channel();
            let _ = sender.send(Bytes::from(format!(
                "data: {}\n\n",
                json!({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"})
            )));
            tokio::spawn(async move {
                fake.pong.notified().await;
                let _ = sender.send(event(&id, text("pong received")));
            });
            response
        }
        "hang" => {
            let (sender, response) = sse_channel();
            let _ = sender.send(Bytes::from_static(b": waiting\n\n"));
            tokio::spawn(async move {
                fake.release.notified().await;
                drop(sender);
            });
            response
        }
        "slow_json" => {
            // JSON answers send their headers only once the tool is done.
            fake.release.notified().await;
            json_response(json!({"jsonrpc": "2.0", "id": id, "result": text("late")}))
        }
        "slow_500" => {
            fake.release.notified().await;
            status(
                StatusCode::INTERNAL_SERVER_ERROR,
                "text/plain",
                "boom from the abandoned call",
            )
        }
        "accepted" => Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Body::empty())
            .expect("response"),
        "html500" => status(
            StatusCode::INTERNAL_SERVER_ERROR,
            "text/html",
            &format!(
                "<html><body><h1>Internal Server Error</h1>{}</body></html>",
                "x".repeat(5000)
            ),
        ),
        "expire" => {
            fake.expired.store(true, Ordering::SeqCst);
            status(StatusCode::NOT_FOUND, "text/plain", "session gone")
        }
        "big_json" => {
            json_response(json!({"jsonrpc": "2.0", "id": id, "result": text(&"y".repeat(10_000))}))
        }
        "big_event" => {
            let (sender, response) = sse_channel();
            let _ = sender.send(event(&id, text(&"y".repeat(10_000))));
            response
        }
        "end_early_with_id" => {
            let (sender, response) = sse_channel();
            let retry = arguments["retry"].as_u64();
            let mut prime = String::from("id: stream-1-0\ndata:\n");
            if let Some(retry) = retry {
                prime.push_str(&format!("retry: {retry}\n"));
            }
            prime.push('\n');
            let _ = sender.send(Bytes::from(prime));
            drop(sender);
            *fake.stream_ended_at.lock().expect("lock") = Some(Instant::now());
            response
        }
        "poll" => {
            // SSE polling: a priming event, then the connection closes; each
            // poll (see `on_get`) gets the next priming event until the
            // fifth, which carries the answer.
            let (sender, response) = sse_channel();
            let _ = sender.send(Bytes::from_static(b"id: poll-0\nretry: 10\ndata:\n\n"));
            response
        }
        "end_early_without_id" => {
            let (sender, response) = sse_channel();
            let _ = sender.send(Bytes::from_static(b"data:\n\n"));
            response
        }
        other => json_response(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32602, "message": format!("Unknown tool: {other}")}})),
    }
}

/// Whether a request is a resumption: a GET with `Last-Event-ID` (the
/// client's standalone stream, refused here with 405, carries none).
fn is_resumption(seen: &Seen) -> bool {
    seen.method == "GET" && header(&seen.headers, "last-event-id").is_some()
}

/// The resumption GET: replays the answer to the request that the stream
/// `stream-1` was for (the last tools/call seen).
async fn on_get(State(fake): State<Arc<Fake>>, headers: HeaderMap) -> Response {
    fake.record("GET", &headers, Value::Null);
    if fake.standalone_oversized.load(Ordering::SeqCst) {
        let notification = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let (sender, response) = sse_channel();
        let _ = sender.send(Bytes::from(format!("id: s-1\ndata: {notification}\n\n")));
        if header(&headers, "last-event-id").is_none() {
            let _ = sender.send(Bytes::from(format!("data: {}\n\n", "x".repeat(64 * 1024))));
        }
        // Kept open: the client reads on.
        std::mem::forget(sender);
        return response;
    }
    if fake.standalone_poisoned.load(Ordering::SeqCst) {
        let (sender, response) = sse_channel();
        let _ = sender.send(Bytes::from(format!("data: {}\n\n", "x".repeat(64 * 1024))));
        std::mem::forget(sender);
        return response;
    }
    if fake.standalone_replaying.load(Ordering::SeqCst) {
        let list_changed = |kind: &str| json!({"jsonrpc": "2.0", "method": format!("notifications/{kind}/list_changed")});
        let stored = [
            ("s-1", list_changed("tools").to_string()),
            ("s-2", "x".repeat(64 * 1024)),
            ("s-3", list_changed("prompts").to_string()),
        ];
        let after = header(&headers, "last-event-id");
        let start = stored
            .iter()
            .position(|(id, _)| Some(*id) == after)
            .map_or(0, |at| at + 1);
        let (sender, response) = sse_channel();
        for (id, data) in &stored[start..] {
            let _ = sender.send(Bytes::from(format!("id: {id}\ndata: {data}\n\n")));
        }
        // Kept open: the client reads on.
        std::mem::forget(sender);
        return response;
    }
    if let Some(polled) = header(&headers, "last-event-id").and_then(|id| id.strip_prefix("poll-"))
    {
        let polled: u32 = polled.parse().expect("a poll number");
        let (sender, response) = sse_channel();
        if polled < 5 {
            let next = format!("id: poll-{}\nretry: 10\ndata:\n\n", polled + 1);
            let _ = sender.send(Bytes::from(next));
        } else {
            let call = fake.posts_of("tools/call").pop().expect("the call").body;
            let _ = sender.send(event(&call["id"], text("polled")));
        }
        return response;
    }
    if header(&headers, "last-event-id").is_none() {
        let mut endings = fake.standalone_endings.lock().expect("lock");
        if let Some(left) = endings.as_mut() {
            let (sender, response) = sse_channel();
            if *left > 0 {
                *left -= 1;
                let _ = sender.send(Bytes::from_static(b"retry: 10\n\n"));
            } else {
                let _ = sender.send(Bytes::from(format!(
                    "data: {}\n\n",
                    json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                )));
                // Kept open: the client reads on.
                std::mem::forget(sender);
            }
            return response;
        }
    }
    if header(&headers, "last-event-id") != Some("stream-1-0") {
        return status(
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain",
            "no standalone stream",
        );
    }
    if fake.unavailable_resumes.load(Ordering::SeqCst) > 0 {
        fake.unavailable_resumes.fetch_sub(1, Ordering::SeqCst);
        return Response::builder()
            .status(StatusCode::SERVICE_UNAVAILABLE)
            .header("retry-after", "1")
            .body(Body::from("restarting"))
            .expect("response");
    }
    let (sender, response) = sse_channel();
    if fake.failing_resumes.load(Ordering::SeqCst) > 0 {
        fake.failing_resumes.fetch_sub(1, Ordering::SeqCst);
        return response; // ends at once, with nothing
    }
    let call = fake
        .posts_of("tools/call")
        .pop()
        .map(|seen| seen.body)
        .unwrap_or(Value::Null);
    let _ = sender.send(Bytes::from_static(b"id: stream-1-1\n"));
    let _ = sender.send(event(&call["id"], text("resumed")));
    response
}

async fn on_delete(State(fake): State<Arc<Fake>>, headers: HeaderMap) -> StatusCode {
    fake.record("DELETE", &headers, Value::Null);
    fake.delete_status
}

/// Serves the fake on 127.0.0.1 and returns its endpoint URL.
async fn serve(fake: Arc<Fake>) -> String {
    let app = Router::new()
        .route("/mcp", post(on_post).get(on_get).delete(on_delete))
        .with_state(fake);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{address}/mcp")
}

async fn connect_with(config: HttpConfig) -> Client {
    let client = Client::new(HttpTransport::new(config).expect("valid config"));
    bounded(client.initialize()).await.expect("initializes");
    client
}

async fn setup() -> (Arc<Fake>, String, Client) {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig::new(url.clone())).await;
    (fake, url, client)
}

async fn bounded<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(PATIENCE, future)
        .await
        .expect("finished within the bound")
}

async fn call(client: &Client, tool: &str, arguments: Value) -> Result<String, Error> {
    let arguments = RawValue::from_string(arguments.to_string()).expect("JSON");
    bounded(client.call_tool(tool, &arguments))
        .await
        .map(|result| result.text())
}

// ---- configuration ------------------------------------------------------------

#[test]
fn invalid_configuration_names_the_field() {
    let cases = [
        (HttpConfig::new(""), "url"),
        (HttpConfig::new("not a url"), "url"),
        (HttpConfig::new("ftp://example.com/mcp"), "url"),
        (
            HttpConfig {
                headers: vec![("Bad Name".into(), "x".into())],
                ..HttpConfig::new("http://127.0.0.1/mcp")
            },
            "headers[0] (\"Bad Name\")",
        ),
        (
            HttpConfig {
                headers: vec![
                    ("X-Ok".into(), "1".into()),
                    ("X-Bad".into(), "line\nbreak".into()),
                ],
                ..HttpConfig::new("http://127.0.0.1/mcp")
            },
            "headers[1] (\"X-Bad\")",
        ),
    ];
    for (config, field) in cases {
        match HttpTransport::new(config) {
            Err(Error::InvalidConfig { field: named, .. }) => assert_eq!(named, field),
            other => panic!("expected InvalidConfig for {field}, got {other:?}"),
        }
    }
}

#[test]
fn header_values_never_appear_in_debug_output() {
    let config = HttpConfig {
        headers: vec![("Authorization".into(), "Bearer hunter2".into())],
        ..HttpConfig::new("http://127.0.0.1/mcp")
    };
    assert!(!format!("{config:?}").contains("hunter2"));
    let transport = HttpTransport::new(config).expect("valid");
    assert!(!format!("{transport:?}").contains("hunter2"));
}

// ---- answers ---------------------------------------------------------------------

#[tokio::test]
async fn json_and_event_stream_answers_with_session_and_version_headers() {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig {
        headers: vec![("X-Api-Key".into(), "k-123".into())],
        ..HttpConfig::new(url)
    })
    .await;
    // The fake answers 400 without the session id or the negotiated version.
    let tools = bounded(client.list_tools()).await.expect("lists");
    assert_eq!(tools.len(), 1);
    assert_eq!(
        call(&client, "json_echo", json!({"text": "as json"}))
            .await
            .expect("JSON"),
        "as json"
    );
    assert_eq!(
        call(&client, "echo", json!({"text": "as events"}))
            .await
            .expect("SSE"),
        "as events"
    );
    bounded(client.close()).await.expect("closes");

    let seen = fake.seen();
    assert!(
        seen.iter()
            .all(|seen| header(&seen.headers, "x-api-key") == Some("k-123")),
        "extra headers ride on every request"
    );
    let initialized = fake.posts_of("notifications/initialized");
    assert_eq!(initialized.len(), 1);
    assert_eq!(
        header(&initialized[0].headers, "mcp-session-id"),
        Some("session-1")
    );
    assert_eq!(
        header(&initialized[0].headers, "mcp-protocol-version"),
        Some(LATEST_PROTOCOL_VERSION)
    );
    let initialize = &fake.posts_of("initialize")[0];
    assert_eq!(
        header(&initialize.headers, "mcp-protocol-version"),
        None,
        "no version before it is negotiated"
    );
}

#[tokio::test]
async fn every_sse_framing_rule_is_understood() {
    let (_fake, _url, client) = setup().await;
    assert_eq!(
        call(&client, "framing", json!({})).await.expect("framed"),
        "framed"
    );
}

#[tokio::test]
async fn events_are_delivered_as_they_arrive() {
    let (fake, _url, client) = setup().await;
    let arguments = RawValue::from_string("{}".into()).expect("JSON");
    let (first_report, mut reported) = mpsc::unbounded_channel();
    let release = Arc::clone(&fake);
    let releaser = tokio::spawn(async move {
        reported.recv().await;
        release.release.notify_one();
    });
    let result =
        bounded(
            client.call_tool_with_progress("wait_for_release", &arguments, move |_| {
                let _ = first_report.send(());
            }),
        )
        .await
        .expect("answered after the release");
    assert_eq!(result.text(), "released");
    releaser.await.expect("released");
}

#[tokio::test]
async fn a_server_request_on_the_stream_is_answered_with_a_post() {
    let (_fake, _url, client) = setup().await;
    assert_eq!(
        call(&client, "ping_first", json!({}))
            .await
            .expect("answered"),
        "pong received"
    );
}

#[tokio::test]
async fn a_request_answered_with_202_is_an_error() {
    let (_fake, _url, client) = setup().await;
    let error = call(&client, "accepted", json!({}))
        .await
        .expect_err("no answer");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::StreamEnded { .. })
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_500_with_html_is_a_status_error_with_a_bounded_excerpt() {
    let (_fake, url, client) = setup().await;
    let error = call(&client, "html500", json!({})).await.expect_err("500");
    let status = error.http_status().expect("a status error");
    assert_eq!(status.status, 500);
    assert_eq!(status.url, url);
    assert!(
        status.body_excerpt.starts_with("<html>"),
        "{}",
        status.body_excerpt
    );
    assert!(status.body_excerpt.len() <= 1024);
    let shown = status.to_string();
    let (_, body) = shown.split_once(": ").expect("the body follows");
    assert!(
        body.starts_with("Internal Server Error xxx") && body.ends_with('…'),
        "the page's text, not its markup: {shown}"
    );
    assert!(
        !shown.contains('\n') && body.chars().count() <= 201,
        "{shown}"
    );
    assert!(!error.is_session_expired());
    // The session is intact: the next call works.
    assert_eq!(
        call(&client, "json_echo", json!({"text": "ok"}))
            .await
            .expect("works"),
        "ok"
    );
}

#[tokio::test]
async fn oversized_messages_are_refused() {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig {
        max_message_bytes: 4096,
        ..HttpConfig::new(url)
    })
    .await;
    for tool in ["big_json", "big_event"] {
        let error = call(&client, tool, json!({})).await.expect_err("too large");
        assert!(
            matches!(
                error.transport_error(),
                Some(TransportError::MessageTooLarge { limit: 4096 })
            ),
            "{tool}: {error:?}"
        );
    }
}

// ---- sessions ----------------------------------------------------------------------

#[tokio::test]
async fn an_expired_session_is_recognisable_by_default() {
    let (_fake, _url, client) = setup().await;
    let error = call(&client, "expire", json!({})).await.expect_err("404");
    assert!(error.is_session_expired(), "{error:?}");
    assert!(
        error.to_string().contains("initialize a new client"),
        "{error}"
    );
}

#[tokio::test]
async fn an_expired_session_can_be_renewed_and_the_request_resent_once() {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig {
        reinitialize_expired_session: true,
        ..HttpConfig::new(url)
    })
    .await;
    // The first call expires the session; the fake then answers 404 to the
    // old id. The transport re-initializes and resends: the resent "expire"
    // expires the new session too, so the error surfaces after one resend.
    let error = call(&client, "expire", json!({}))
        .await
        .expect_err("expired twice");
    assert!(error.is_session_expired(), "{error:?}");
    assert_eq!(
        fake.posts_of("initialize").len(),
        2,
        "one re-initialization"
    );
    assert_eq!(fake.posts_of("tools/call").len(), 2, "one resend");

    // A session that expired between calls is renewed transparently.
    fake.expired.store(true, Ordering::SeqCst);
    assert_eq!(
        call(&client, "json_echo", json!({"text": "renewed"}))
            .await
            .expect("renewed"),
        "renewed"
    );
    assert_eq!(fake.posts_of("initialize").len(), 3);
    let last = fake.posts_of("tools/call").pop().expect("a call");
    assert_eq!(header(&last.headers, "mcp-session-id"), Some("session-3"));
    assert_eq!(fake.posts_of("notifications/initialized").len(), 3);
}

#[tokio::test]
async fn close_deletes_the_session_and_a_405_is_fine() {
    for delete_status in [StatusCode::OK, StatusCode::METHOD_NOT_ALLOWED] {
        let fake = Fake::new(delete_status);
        let url = serve(Arc::clone(&fake)).await;
        let client = connect_with(HttpConfig::new(url)).await;
        bounded(client.close()).await.expect("closes");
        let deletes: Vec<Seen> = fake
            .seen()
            .into_iter()
            .filter(|seen| seen.method == "DELETE")
            .collect();
        assert_eq!(deletes.len(), 1);
        assert_eq!(
            header(&deletes[0].headers, "mcp-session-id"),
            Some("session-1")
        );
    }
}

/// An auth provider whose token is renewed by every `prepare`: what an
/// OAuth provider does with a token that expired while the client idled.
struct RenewedEachTime(AtomicUsize);

impl golem_mcp::auth::AuthProvider for RenewedEachTime {
    fn authorization(&self, _url: &reqwest::Url) -> Option<golem_mcp::auth::Secret> {
        let renewals = self.0.load(Ordering::SeqCst);
        Some(golem_mcp::auth::Secret::new(format!("Bearer t-{renewals}")))
    }

    fn prepare<'a>(&'a self, _url: &'a reqwest::Url) -> golem_mcp::auth::AuthFuture<'a, ()> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(()) })
    }

    fn authorize<'a>(
        &'a self,
        refusal: &'a golem_mcp::auth::Refusal,
    ) -> golem_mcp::auth::AuthFuture<'a, ()> {
        let status = refusal.status;
        Box::pin(async move {
            Err(golem_mcp::auth::AuthError::Refused {
                status,
                detail: "not in this test".into(),
            })
        })
    }
}

#[tokio::test]
async fn the_delete_that_ends_the_session_carries_a_renewed_credential() {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let provider = Arc::new(RenewedEachTime(AtomicUsize::new(0)));
    let client = connect_with(HttpConfig {
        auth: Some(provider.clone()),
        ..HttpConfig::new(url)
    })
    .await;
    let before_close = provider.0.load(Ordering::SeqCst);
    bounded(client.close()).await.expect("closes");
    let delete = fake
        .seen()
        .into_iter()
        .find(|seen| seen.method == "DELETE")
        .expect("a DELETE");
    let renewed = format!("Bearer t-{}", before_close + 1);
    assert_eq!(
        header(&delete.headers, "authorization"),
        Some(renewed.as_str())
    );
}

// ---- resumption ----------------------------------------------------------------------

#[tokio::test]
async fn a_stream_ending_early_is_resumed_after_the_servers_retry_delay() {
    let (fake, _url, client) = setup().await;
    let text = call(&client, "end_early_with_id", json!({"retry": 300}))
        .await
        .expect("resumed");
    assert_eq!(text, "resumed");
    let get = fake.seen().into_iter().find(is_resumption).expect("a GET");
    assert_eq!(header(&get.headers, "last-event-id"), Some("stream-1-0"));
    assert_eq!(header(&get.headers, "mcp-session-id"), Some("session-1"));
    let ended = fake
        .stream_ended_at
        .lock()
        .expect("lock")
        .expect("the stream ended");
    let waited = get.at.duration_since(ended);
    assert!(
        waited >= Duration::from_millis(300),
        "reconnected after {waited:?}, before the retry delay"
    );
}

#[tokio::test]
async fn without_a_retry_field_the_default_delay_applies() {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig {
        resume: ResumePolicy {
            max_attempts: 3,
            default_retry: Duration::from_millis(150),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(url)
    })
    .await;
    assert_eq!(
        call(&client, "end_early_with_id", json!({}))
            .await
            .expect("resumed"),
        "resumed"
    );
    let get = fake.seen().into_iter().find(is_resumption).expect("a GET");
    let ended = fake.stream_ended_at.lock().expect("lock").expect("ended");
    assert!(get.at.duration_since(ended) >= Duration::from_millis(150));
}

#[tokio::test]
async fn a_resumption_refused_for_now_is_tried_again() {
    let (fake, _url, client) = setup().await;
    fake.unavailable_resumes.store(2, Ordering::SeqCst);
    // Two 503s, then the replay: within the three attempts allowed.
    assert_eq!(
        call(&client, "end_early_with_id", json!({"retry": 10}))
            .await
            .expect("resumed"),
        "resumed"
    );
    let gets: Vec<Seen> = fake.seen().into_iter().filter(is_resumption).collect();
    assert_eq!(gets.len(), 3);
    // After a refusal, its `Retry-After` (a second) is waited, not the
    // stream's `retry` (10 ms).
    for pair in gets.windows(2) {
        assert!(pair[1].at.duration_since(pair[0].at) >= Duration::from_millis(900));
    }
}

#[tokio::test]
async fn resumption_attempts_are_bounded() {
    let fake = Fake::new(StatusCode::OK);
    fake.failing_resumes.store(10, Ordering::SeqCst);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig {
        resume: ResumePolicy {
            max_attempts: 2,
            default_retry: Duration::from_millis(10),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(url)
    })
    .await;
    let error = call(&client, "end_early_with_id", json!({}))
        .await
        .expect_err("gave up");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::StreamEnded { .. })
        ),
        "{error:?}"
    );
    let gets = fake.seen().into_iter().filter(is_resumption).count();
    assert_eq!(gets, 2);
}

#[tokio::test]
async fn a_polling_server_is_waited_for_while_each_poll_moves_the_stream_on() {
    let (fake, _url, client) = setup().await;
    // Five polls, each closed after a new priming event: more than the
    // three resumption attempts allowed in a row without progress.
    assert_eq!(
        call(&client, "poll", json!({})).await.expect("answered"),
        "polled"
    );
    let polls: Vec<_> = fake
        .seen()
        .into_iter()
        .filter(is_resumption)
        .filter_map(|seen| header(&seen.headers, "last-event-id").map(str::to_owned))
        .collect();
    assert_eq!(
        polls,
        ["poll-0", "poll-1", "poll-2", "poll-3", "poll-4", "poll-5"]
    );
}

#[tokio::test]
async fn a_stream_ending_early_without_ids_is_a_clear_error() {
    let (fake, _url, client) = setup().await;
    let error = call(&client, "end_early_without_id", json!({}))
        .await
        .expect_err("ended");
    assert!(
        error.to_string().contains("ended before the response"),
        "{error}"
    );
    assert!(
        !fake.seen().iter().any(is_resumption),
        "nothing to resume from"
    );
}

// ---- cancellation -----------------------------------------------------------------------

#[tokio::test]
async fn a_call_cancelled_mid_stream_leaves_the_client_usable() {
    let (fake, _url, client) = setup().await;
    let arguments = RawValue::from_string("{}".into()).expect("JSON");
    let abandoned = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool("hang", &arguments),
    )
    .await;
    assert!(abandoned.is_err(), "the stream never answers");
    assert_eq!(
        call(&client, "echo", json!({"text": "next"}))
            .await
            .expect("reused"),
        "next"
    );
    let hung_id = fake.posts_of("tools/call")[0].body["id"].clone();
    let cancelled = fake.posts_of("notifications/cancelled");
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0].body["params"]["requestId"], hung_id);
    fake.release.notify_one();
}

// ---- clients and connections ---------------------------------------------------------------

#[tokio::test]
async fn a_caller_supplied_client_is_used() {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let custom = reqwest_client_with_agent("golem-test-agent");
    let client = connect_with(HttpConfig {
        client: Some(custom),
        ..HttpConfig::new(url)
    })
    .await;
    bounded(client.list_tools()).await.expect("lists");
    assert!(
        fake.seen()
            .iter()
            .all(|seen| header(&seen.headers, "user-agent") == Some("golem-test-agent"))
    );
}

fn reqwest_client_with_agent(agent: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(agent)
        .build()
        .expect("client")
}

#[tokio::test]
async fn a_server_that_is_not_there_fails_fast() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener); // nothing listens there now
    let client = Client::new(
        HttpTransport::new(HttpConfig::new(format!("http://{address}/mcp"))).expect("valid"),
    );
    let started = Instant::now();
    let error = bounded(client.initialize()).await.expect_err("refused");
    assert!(
        matches!(error.transport_error(), Some(TransportError::Http { .. })),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let message = error.to_string();
    assert!(
        message.starts_with("mcp: initialize: POST: ")
            && message.ends_with("Connection refused (os error 111)"),
        "the message ends with the root cause: {message}"
    );
}

#[tokio::test]
async fn a_call_abandoned_before_its_json_answer_does_not_hold_up_the_next() {
    let (fake, _url, client) = setup().await;
    let arguments = RawValue::from_string("{}".into()).expect("JSON");
    for tool in ["slow_json", "slow_500"] {
        let abandoned = tokio::time::timeout(
            Duration::from_millis(200),
            client.call_tool(tool, &arguments),
        )
        .await;
        assert!(abandoned.is_err(), "{tool}: no answer yet");
        // The abandoned call is still running on the server; the next call
        // must not wait for it, nor inherit its outcome.
        let started = Instant::now();
        assert_eq!(
            call(&client, "json_echo", json!({"text": "next"}))
                .await
                .expect("next call"),
            "next"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{tool}: waited {:?}",
            started.elapsed()
        );
        let abandoned_id = fake
            .posts_of("tools/call")
            .iter()
            .rev()
            .find(|seen| seen.body["params"]["name"] == tool)
            .expect("sent")
            .body["id"]
            .clone();
        let cancelled = fake.posts_of("notifications/cancelled");
        assert_eq!(
            cancelled.last().expect("a cancellation").body["params"]["requestId"],
            abandoned_id
        );
        // Releases the abandoned handler if the server still runs it (its
        // connection was dropped with the call), without leaving a permit
        // for the next one.
        fake.release.notify_waiters();
    }
    assert_eq!(
        call(&client, "json_echo", json!({"text": "still fine"}))
            .await
            .expect("works"),
        "still fine"
    );
}

#[tokio::test]
async fn a_failed_initialize_can_be_retried() {
    let fake = Fake::new(StatusCode::OK);
    fake.failing_initializes.store(1, Ordering::SeqCst);
    let url = serve(Arc::clone(&fake)).await;
    let client = Client::new(HttpTransport::new(HttpConfig::new(url)).expect("valid"));
    let error = bounded(client.initialize())
        .await
        .expect_err("the first answer never comes");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::StreamEnded { .. })
        ),
        "{error:?}"
    );
    bounded(client.initialize())
        .await
        .expect("the second initialize succeeds");
    assert_eq!(fake.posts_of("initialize").len(), 2);
}

#[tokio::test]
async fn a_huge_retry_is_capped_by_the_policy() {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig {
        resume: ResumePolicy {
            max_retry: Duration::from_millis(100),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(url)
    })
    .await;
    let started = Instant::now();
    let text = call(&client, "end_early_with_id", json!({"retry": 3_600_000}))
        .await
        .expect("resumed");
    assert_eq!(text, "resumed");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?}",
        started.elapsed()
    );
}

#[test]
fn headers_the_transport_manages_are_refused() {
    for name in [
        "Accept",
        "content-type",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
        "Last-Event-ID",
    ] {
        let config = HttpConfig {
            headers: vec![(name.into(), "x".into())],
            ..HttpConfig::new("http://127.0.0.1/mcp")
        };
        match HttpTransport::new(config) {
            Err(Error::InvalidConfig { field, problem, .. }) => {
                assert!(field.contains(name), "{field}");
                assert!(problem.contains("sets this header itself"), "{problem}");
            }
            other => panic!("{name}: expected InvalidConfig, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn secrets_in_the_url_stay_out_of_errors() {
    let fake = Fake::new(StatusCode::OK);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig::new(format!("{url}?api_key=hunter2"))).await;
    let error = call(&client, "html500", json!({})).await.expect_err("500");
    assert!(!error.to_string().contains("hunter2"), "{error}");
    assert!(!format!("{error:?}").contains("hunter2"), "{error:?}");
}

#[tokio::test]
async fn the_standalone_stream_is_asked_for_once_and_a_405_is_respected() {
    let (fake, _url, client) = setup().await;
    let standalone = || {
        fake.seen()
            .into_iter()
            .filter(|seen| seen.method == "GET" && !is_resumption(seen))
            .collect::<Vec<_>>()
    };
    // Opened right after notifications/initialized, on a task: wait for it.
    bounded(async {
        while standalone().is_empty() {
            tokio::task::yield_now().await;
        }
    })
    .await;
    let get = &standalone()[0];
    assert!(
        header(&get.headers, "mcp-session-id").is_some(),
        "in the session"
    );
    assert_eq!(
        header(&get.headers, "mcp-protocol-version"),
        Some(LATEST_PROTOCOL_VERSION)
    );
    // Calls go on; the refused stream is not asked for again.
    call(&client, "json_echo", json!({"text": "after"}))
        .await
        .expect("works");
    assert_eq!(standalone().len(), 1, "a 405 is final");
}

#[tokio::test]
async fn a_standalone_stream_that_broke_on_an_oversized_event_resumes_after_the_last_whole_one() {
    let fake = Fake::new(StatusCode::OK);
    fake.standalone_oversized.store(true, Ordering::SeqCst);
    let (_client, mut notifications) = with_16_kib_messages(&fake).await;
    // Event s-1 arrives whole; the next is over the limit, so the stream is
    // started afresh, asking for what came after s-1.
    for _ in 0..2 {
        assert_eq!(
            bounded(notifications.recv()).await,
            Some(golem_mcp::ServerNotification::ToolsListChanged)
        );
    }
    assert_eq!(
        standalone_resumed_from(&fake)[..2],
        [None, Some("s-1".to_owned())]
    );
}

/// A client with a 16 KiB message limit, subscribed to notifications and
/// initialized.
async fn with_16_kib_messages(fake: &Arc<Fake>) -> (Client, golem_mcp::Notifications) {
    let url = serve(Arc::clone(fake)).await;
    let client = Client::new(
        HttpTransport::new(HttpConfig {
            max_message_bytes: 16 * 1024,
            ..HttpConfig::new(url)
        })
        .expect("valid"),
    );
    let notifications = client.notifications();
    bounded(client.initialize()).await.expect("initializes");
    (client, notifications)
}

/// The `Last-Event-ID` of each `GET` the fake has seen, in order.
fn standalone_resumed_from(fake: &Fake) -> Vec<Option<String>> {
    fake.seen()
        .into_iter()
        .filter(|seen| seen.method == "GET")
        .map(|seen| header(&seen.headers, "last-event-id").map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn an_unreadable_event_a_resumable_server_replays_is_skipped_by_its_id() {
    let fake = Fake::new(StatusCode::OK);
    fake.standalone_replaying.store(true, Ordering::SeqCst);
    let (_client, mut notifications) = with_16_kib_messages(&fake).await;
    // s-1 arrives; s-2 is over the limit and would be replayed after s-1
    // for ever: the stream resumes after s-2 instead, and s-3 arrives.
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::ToolsListChanged)
    );
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::PromptsListChanged)
    );
    assert_eq!(
        standalone_resumed_from(&fake),
        [None, Some("s-2".to_owned())]
    );
}

#[tokio::test]
async fn a_standalone_stream_that_fails_the_same_way_each_time_is_given_up() {
    let fake = Fake::new(StatusCode::OK);
    fake.standalone_poisoned.store(true, Ordering::SeqCst);
    let url = serve(Arc::clone(&fake)).await;
    let client = connect_with(HttpConfig {
        max_message_bytes: 16 * 1024,
        resume: ResumePolicy {
            max_attempts: 1,
            default_retry: Duration::from_millis(10),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(url)
    })
    .await;
    let gets = || standalone_resumed_from(&fake).len();
    // The first failure reopens after the last whole event (none); the
    // same failure there starts a new stream, once (max_attempts); the
    // next gives up.
    let deadline = Instant::now() + Duration::from_secs(10);
    while gets() < 3 {
        assert!(Instant::now() < deadline, "reopened {} time(s)", gets());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Five times the shortest reopening delay: long enough for a fourth
    // GET to show, if the task had not given up.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(gets(), 3, "given up");
    assert_eq!(
        call(&client, "json_echo", json!({"text": "still"}))
            .await
            .expect("requests go on"),
        "still"
    );
}

#[tokio::test]
async fn a_standalone_stream_the_server_keeps_ending_is_reopened() {
    let fake = Fake::new(StatusCode::OK);
    *fake.standalone_endings.lock().expect("lock") = Some(5);
    let url = serve(Arc::clone(&fake)).await;
    let client = Client::new(HttpTransport::new(HttpConfig::new(url)).expect("valid"));
    let mut notifications = client.notifications();
    bounded(client.initialize()).await.expect("initializes");
    // Five streams that end at once (more than the resume attempts), then
    // one that carries a notification: servers may close it at will.
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::ToolsListChanged)
    );
    let gets = fake
        .seen()
        .into_iter()
        .filter(|seen| seen.method == "GET")
        .count();
    assert_eq!(gets, 6, "reopened after each end");
}
