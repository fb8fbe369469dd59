//! The HTTP+SSE transport of 2024-11-05 against an in-process fake (axum on
//! 127.0.0.1) that misbehaves on request: an `endpoint` event on another
//! origin, no `endpoint` event at all, a stream that ends in the middle of
//! a call, a message over the size limit, refusals that an auth provider
//! answers; and the streamable transport's fallback, which reaches the
//! same transport, or reports its own refusal when the URL is no event
//! stream either.
#![cfg(feature = "http")]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use golem_mcp::auth::{AuthError, AuthFuture, AuthProvider, Refusal, Secret};
use golem_mcp::{
    Client, Error, HowChosen, HttpConfig, HttpTransport, SseTransport, TransportError,
};
use serde_json::{Value, json};
use support::{bounded, raw};
use tokio::sync::mpsc;

/// What the fake does with one POSTed message on the stream.
enum Reply {
    /// Sends these events (raw SSE text).
    Events(Vec<String>),
    /// Ends the stream.
    End,
}

type Script = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

/// One request the fake saw.
#[derive(Clone, Debug)]
struct Seen {
    method: Method,
    path: String,
    authorization: Option<String>,
    status: u16,
}

#[derive(Clone)]
struct Fake {
    /// What the stream starts with (the `endpoint` event, or not).
    opening: Arc<String>,
    script: Script,
    /// The open stream, to send events on.
    stream: Arc<Mutex<Option<mpsc::UnboundedSender<Bytes>>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
    /// The `Authorization` the fake accepts, when it wants one.
    accepted: Arc<Mutex<Option<String>>>,
    /// Whether a GET gets an event stream (else `405`, as a streamable
    /// server that offers none answers).
    serves_stream: bool,
}

impl Fake {
    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().expect("not poisoned").clone()
    }

    fn posts(&self) -> Vec<Seen> {
        let posts = self.seen().into_iter();
        posts.filter(|seen| seen.method == Method::POST).collect()
    }

    fn accept(&self, authorization: &str) {
        *self.accepted.lock().expect("not poisoned") = Some(authorization.to_owned());
    }

    fn refuses(&self, headers: &HeaderMap) -> bool {
        let wanted = self.accepted.lock().expect("not poisoned").clone();
        wanted.is_some_and(|wanted| {
            headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                != Some(&wanted)
        })
    }

    fn record(&self, method: Method, path: &str, headers: &HeaderMap, status: u16) {
        self.seen.lock().expect("not poisoned").push(Seen {
            method,
            path: path.to_owned(),
            authorization: headers
                .get(header::AUTHORIZATION)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned),
            status,
        });
    }

    fn push(&self, text: String) {
        if let Some(stream) = &*self.stream.lock().expect("not poisoned") {
            let _ = stream.send(Bytes::from(text));
        }
    }
}

/// The URL of a fake whose stream (at `/sse`) starts with `opening` and
/// answers each message as `script` says; posts go to `/messages`.
async fn serve(
    opening: &str,
    script: impl Fn(&Value) -> Reply + Send + Sync + 'static,
) -> (String, Fake) {
    serve_with(opening, true, script).await
}

async fn serve_with(
    opening: &str,
    serves_stream: bool,
    script: impl Fn(&Value) -> Reply + Send + Sync + 'static,
) -> (String, Fake) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port on 127.0.0.1");
    let url = format!("http://{}/sse", listener.local_addr().expect("its address"));
    let fake = Fake {
        opening: Arc::new(opening.to_owned()),
        script: Arc::new(script),
        stream: Arc::default(),
        seen: Arc::default(),
        accepted: Arc::default(),
        serves_stream,
    };
    let app = Router::new()
        .route("/sse", axum::routing::any(stream))
        .route("/messages", axum::routing::post(message))
        .with_state(fake.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, fake)
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "",
    )
        .into_response()
}

async fn stream(State(fake): State<Fake>, method: Method, headers: HeaderMap) -> Response {
    if method != Method::GET || !fake.serves_stream {
        // A route of GET only, as FastMCP's, refuses a POST with 405.
        fake.record(method, "/sse", &headers, 405);
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    if fake.refuses(&headers) {
        fake.record(method, "/sse", &headers, 401);
        return unauthorized();
    }
    fake.record(method, "/sse", &headers, 200);
    let (sender, receiver) = mpsc::unbounded_channel::<Bytes>();
    let _ = sender.send(Bytes::from(fake.opening.to_string()));
    *fake.stream.lock().expect("not poisoned") = Some(sender);
    let events = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let chunk = receiver.recv().await?;
        Some((Ok::<_, std::io::Error>(chunk), receiver))
    });
    (
        [(header::CONTENT_TYPE, "text/event-stream")],
        Body::from_stream(events),
    )
        .into_response()
}

async fn message(State(fake): State<Fake>, headers: HeaderMap, body: Bytes) -> Response {
    if fake.refuses(&headers) {
        fake.record(Method::POST, "/messages", &headers, 401);
        return unauthorized();
    }
    fake.record(Method::POST, "/messages", &headers, 202);
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    match (fake.script)(&message) {
        Reply::Events(events) => events.into_iter().for_each(|event| fake.push(event)),
        Reply::End => drop(fake.stream.lock().expect("not poisoned").take()),
    }
    (StatusCode::ACCEPTED, "Accepted").into_response()
}

/// A `message` event carrying `value`.
fn event(value: Value) -> String {
    format!("event: message\ndata: {value}\n\n")
}

/// The legacy handshake's answers; `tools/call` as `call` says.
fn legacy_server(
    call: impl Fn(&Value) -> Reply + Send + Sync + 'static,
) -> impl Fn(&Value) -> Reply + Send + Sync + 'static {
    move |message: &Value| match message["method"].as_str() {
        Some("initialize") => Reply::Events(vec![event(json!({
            "jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2024-11-05", "capabilities": {"tools": {}},
                "serverInfo": {"name": "fake-sse", "version": "1"}}}))]),
        Some("tools/list") => Reply::Events(vec![event(json!({
            "jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}}]}}))]),
        Some("tools/call") => call(message),
        _ => Reply::Events(Vec::new()),
    }
}

fn echo(message: &Value) -> Reply {
    let text = format!("Echo: {}", message["params"]["arguments"]["message"]);
    Reply::Events(vec![event(json!({"jsonrpc": "2.0", "id": message["id"],
        "result": {"content": [{"type": "text", "text": text}]}}))])
}

const ENDPOINT: &str = "event: endpoint\ndata: /messages?session_id=s1\n\n";

fn explicit(config: HttpConfig) -> Client {
    Client::new(SseTransport::new(config).expect("valid"))
}

/// The transport error inside a client error.
fn transport_error(error: &Error) -> &TransportError {
    match error {
        Error::Transport { source, .. } => source,
        other => panic!("expected a transport error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_server_over_http_sse_is_initialized_without_a_probe_and_called() {
    let (url, fake) = serve(ENDPOINT, legacy_server(echo)).await;
    let client = explicit(HttpConfig {
        headers: vec![("X-Api-Key".into(), "k".into())],
        ..HttpConfig::new(url)
    });
    let server = bounded(client.initialize()).await.expect("initializes");
    assert_eq!(server.chosen, HowChosen::LegacyTransport);
    let result = bounded(client.call_tool("echo", &raw(r#"{"message":"hi"}"#)))
        .await
        .expect("echo");
    assert_eq!(result.text(), "Echo: \"hi\"");
    let methods: Vec<(Method, String)> = fake
        .seen()
        .into_iter()
        .map(|seen| (seen.method, seen.path))
        .collect();
    assert_eq!(
        methods,
        [
            (Method::GET, "/sse".to_owned()),
            (Method::POST, "/messages".to_owned()),
            (Method::POST, "/messages".to_owned()),
            (Method::POST, "/messages".to_owned()),
        ],
        "the stream, then initialize, notifications/initialized and the call: no server/discover"
    );
    bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn an_endpoint_on_another_origin_is_refused_and_named_explicitly_and_by_fallback() {
    let opening = "event: endpoint\ndata: http://127.0.0.1:9/steal?session_id=secret\n\n";
    for fallback in [false, true] {
        let (url, fake) = serve(opening, legacy_server(echo)).await;
        let client = match fallback {
            false => explicit(HttpConfig::new(url)),
            true => Client::new(HttpTransport::new(HttpConfig::new(url)).expect("valid")),
        };
        let error = bounded(client.initialize()).await.expect_err("refused");
        let text = error.to_string();
        assert!(
            text.contains("another origin") && text.contains("http://127.0.0.1:9/steal"),
            "fallback {fallback}: {text}"
        );
        assert!(!text.contains("secret"), "{text}");
        assert!(
            fake.posts().iter().all(|post| post.path == "/sse"),
            "fallback {fallback}: nothing was posted to the endpoint: {:?}",
            fake.seen()
        );
    }
}

#[tokio::test]
async fn a_stream_without_an_endpoint_event_fails_within_the_bound() {
    // A comment and an unrelated event, then silence.
    let (url, _fake) = serve(": hello\n\nevent: other\ndata: x\n\n", legacy_server(echo)).await;
    let client = explicit(HttpConfig {
        sse_endpoint_timeout: Duration::from_millis(200),
        ..HttpConfig::new(url)
    });
    let error = bounded(client.initialize()).await.expect_err("no endpoint");
    let text = error.to_string();
    assert!(text.contains("no endpoint event within 200ms"), "{text}");
}

#[tokio::test]
async fn the_fallback_reports_the_refusal_when_the_url_is_no_event_stream_either() {
    let (url, fake) = serve_with(ENDPOINT, false, legacy_server(echo)).await;
    let transport = HttpTransport::new(HttpConfig::new(url)).expect("valid");
    let fallback = transport.fallback();
    let client = Client::new(transport);
    let error = bounded(client.initialize()).await.expect_err("refused");
    let TransportError::HttpStatus(status) = transport_error(&error) else {
        panic!("expected the refusal of initialize, got {error:?}");
    };
    assert_eq!(status.status, 405, "{error}");
    assert_eq!(fallback.refused_with(), None, "no HTTP+SSE connection");
    let requests: Vec<Method> = fake.seen().into_iter().map(|seen| seen.method).collect();
    assert_eq!(
        requests,
        [Method::POST, Method::POST, Method::GET],
        "the probe, initialize, then the GET of the fallback"
    );
}

#[tokio::test]
async fn the_fallback_reports_a_get_that_wants_authorization_rather_than_the_refused_post() {
    let (url, fake) = serve(ENDPOINT, legacy_server(echo)).await;
    fake.accept("Bearer secret");
    let client = Client::new(HttpTransport::new(HttpConfig::new(url)).expect("valid"));
    let error = bounded(client.initialize()).await.expect_err("refused");
    let TransportError::HttpStatus(status) = transport_error(&error) else {
        panic!("expected the GET's refusal, got {error:?}");
    };
    assert_eq!(status.status, 401, "{error}");
    assert!(
        error.to_string().contains("requires authorization"),
        "{error}"
    );
}

#[tokio::test]
async fn the_stream_ending_in_the_middle_of_a_call_fails_it_and_the_connection() {
    let (url, _fake) = serve(ENDPOINT, legacy_server(|_| Reply::End)).await;
    let client = explicit(HttpConfig::new(url));
    bounded(client.initialize()).await.expect("initializes");
    let error = bounded(client.call_tool("echo", &raw("{}")))
        .await
        .expect_err("the stream ended");
    assert!(
        matches!(transport_error(&error), TransportError::StreamEnded { detail } if detail.contains("ended its event stream")),
        "{error:?}"
    );
    let later = bounded(client.list_tools())
        .await
        .expect_err("gone for good");
    assert!(later.to_string().contains("event stream"), "{later}");
}

#[tokio::test]
async fn a_message_over_the_limit_ends_the_connection_with_the_limit_named() {
    let big = |message: &Value| {
        let text = "x".repeat(4000);
        Reply::Events(vec![event(json!({"jsonrpc": "2.0", "id": message["id"],
            "result": {"content": [{"type": "text", "text": text}]}}))])
    };
    let (url, _fake) = serve(ENDPOINT, legacy_server(big)).await;
    let client = explicit(HttpConfig {
        max_message_bytes: 1024,
        ..HttpConfig::new(url)
    });
    bounded(client.initialize()).await.expect("initializes");
    let error = bounded(client.call_tool("echo", &raw("{}")))
        .await
        .expect_err("too large");
    assert!(
        matches!(
            transport_error(&error),
            TransportError::MessageTooLarge { limit: 1024 }
        ),
        "{error:?}"
    );
}

/// A provider whose `n`th authorization yields the token `t<n>`.
#[derive(Default)]
struct Counting {
    authorizations: AtomicUsize,
    refused_with: Mutex<Vec<u16>>,
}

impl AuthProvider for Counting {
    fn authorization(&self, _url: &reqwest::Url) -> Option<Secret> {
        match self.authorizations.load(Ordering::SeqCst) {
            0 => None,
            n => Some(Secret::new(format!("Bearer t{n}"))),
        }
    }

    fn authorize<'a>(&'a self, refusal: &'a Refusal) -> AuthFuture<'a, ()> {
        self.refused_with
            .lock()
            .expect("not poisoned")
            .push(refusal.status);
        self.authorizations.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok::<(), AuthError>(()) })
    }
}

#[tokio::test]
async fn a_401_on_the_stream_or_a_post_is_authorized_and_sent_again() {
    let (url, fake) = serve(ENDPOINT, legacy_server(echo)).await;
    fake.accept("Bearer t1");
    let provider = Arc::new(Counting::default());
    let client = explicit(HttpConfig {
        auth: Some(provider.clone()),
        ..HttpConfig::new(url)
    });
    bounded(client.initialize()).await.expect("initializes");
    // The server wants another token now (the first one expired).
    fake.accept("Bearer t2");
    let result = bounded(client.call_tool("echo", &raw(r#"{"message":"again"}"#)))
        .await
        .expect("echo after authorizing again");
    assert_eq!(result.text(), "Echo: \"again\"");
    assert_eq!(provider.authorizations.load(Ordering::SeqCst), 2);
    let seen: Vec<(Method, Option<String>, u16)> = fake
        .seen()
        .into_iter()
        .map(|seen| (seen.method, seen.authorization, seen.status))
        .collect();
    let bearer = |n: u8| Some(format!("Bearer t{n}"));
    assert_eq!(
        seen,
        [
            (Method::GET, None, 401),
            (Method::GET, bearer(1), 200),
            (Method::POST, bearer(1), 202), // initialize
            (Method::POST, bearer(1), 202), // notifications/initialized
            (Method::POST, bearer(1), 401), // tools/call, refused
            (Method::POST, bearer(2), 202), // tools/call, again
        ]
    );
}

#[tokio::test]
async fn a_server_that_never_accepts_is_authorized_twice_and_then_refuses() {
    let (url, fake) = serve(ENDPOINT, legacy_server(echo)).await;
    fake.accept("Bearer never");
    let provider = Arc::new(Counting::default());
    let client = explicit(HttpConfig {
        auth: Some(provider.clone()),
        ..HttpConfig::new(url)
    });
    let error = bounded(client.initialize()).await.expect_err("refused");
    let TransportError::HttpStatus(status) = transport_error(&error) else {
        panic!("expected the refusal, got {error:?}");
    };
    assert_eq!(status.status, 401);
    assert_eq!(provider.authorizations.load(Ordering::SeqCst), 2);
    assert_eq!(fake.seen().len(), 3, "{:?}", fake.seen());
}
