//! The server: its thread and runtime, its routes, the script it follows and
//! the record it keeps.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::future::IntoFuture;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use axum::routing::post;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::reply::{Raw, Reply};
use crate::request::Recorded;
use crate::rules;
use crate::{anthropic, openai};

/// What decides each answer, from the request's body.
type Script = dyn Fn(&Value) -> Reply + Send + Sync;

impl std::fmt::Debug for FakeProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeProvider")
            .field("address", &self.address)
            .field("requests", &self.request_count())
            .finish_non_exhaustive()
    }
}

/// What the handlers and the test share.
struct Shared {
    script: Box<Script>,
    seen: Mutex<Vec<Recorded>>,
    /// Notified at each request recorded.
    arrived: Condvar,
}

impl Shared {
    fn seen(&self) -> MutexGuard<'_, Vec<Recorded>> {
        // A test's assertion failing in a script poisons nothing we keep.
        self.seen.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running fake provider on `127.0.0.1`, on a thread of its own with its
/// own runtime (so that it serves synchronous tests and asynchronous ones
/// alike). Dropping it stops the server: a request still waiting for its
/// answer is cut.
pub struct FakeProvider {
    shared: Arc<Shared>,
    address: SocketAddr,
    openai_base_url: String,
    anthropic_base_url: String,
    /// Dropped with the fake, which ends the server's thread.
    _stop: oneshot::Sender<()>,
}

impl FakeProvider {
    /// Starts a fake that answers the requests, whichever endpoint they ask,
    /// with `replies` in order, then, once they are used up, with a `500`
    /// error of type `api_error` ("script exhausted").
    ///
    /// # Panics
    ///
    /// If no port can be bound on 127.0.0.1, or no thread started.
    pub fn start<R: Into<Reply>>(replies: impl IntoIterator<Item = R>) -> Self {
        let queue: Mutex<VecDeque<Reply>> =
            Mutex::new(replies.into_iter().map(Into::into).collect());
        Self::start_with(move |_| {
            let next = queue
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .pop_front();
            next.unwrap_or_else(|| Reply::Error {
                status: 500,
                kind: "api_error".into(),
                message: "script exhausted".into(),
            })
        })
    }

    /// Starts a fake that answers each request with `script(body)`, `body`
    /// being the request's body as JSON (`null` if it is not JSON). The
    /// script runs on the server's thread, once per request, after the
    /// request is recorded.
    ///
    /// # Panics
    ///
    /// If no port can be bound on 127.0.0.1, or no thread started.
    pub fn start_with(script: impl Fn(&Value) -> Reply + Send + Sync + 'static) -> Self {
        let shared = Arc::new(Shared {
            script: Box::new(script),
            seen: Mutex::new(Vec::new()),
            arrived: Condvar::new(),
        });
        let listener =
            std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind 127.0.0.1");
        listener
            .set_nonblocking(true)
            .expect("a nonblocking listener");
        let address = listener.local_addr().expect("the listener's address");
        let app = Router::new()
            .route(openai::PATH, post(chat_completions))
            .route(anthropic::PATH, post(messages))
            .fallback(unknown)
            .with_state(Arc::clone(&shared));
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name("golem-fake-provider".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the fake's runtime");
                // Leaving `block_on` drops the runtime, and every connection.
                runtime.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("the listener");
                    tokio::select! {
                        _ = axum::serve(listener, app).into_future() => {}
                        _ = stopped => {}
                    }
                });
            })
            .expect("the fake's thread");
        FakeProvider {
            shared,
            address,
            openai_base_url: format!("http://{address}/v1"),
            anthropic_base_url: format!("http://{address}"),
            _stop: stop,
        }
    }

    /// The address it listens on (`127.0.0.1:PORT`).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://127.0.0.1:PORT/v1`: the base URL of an OpenAI-compatible API
    /// (the one `/chat/completions` is appended to).
    pub fn openai_base_url(&self) -> &str {
        &self.openai_base_url
    }

    /// `http://127.0.0.1:PORT`: the base URL of the Anthropic API (the one
    /// `/v1/messages` is appended to).
    pub fn anthropic_base_url(&self) -> &str {
        &self.anthropic_base_url
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.seen().clone()
    }

    /// How many requests it has received so far.
    pub fn request_count(&self) -> usize {
        self.shared.seen().len()
    }

    /// Blocks the calling thread until `count` requests have arrived, at most
    /// `timeout`; then every request so far, or `None` if fewer came in
    /// time. For synchronous tests: in an asynchronous one it would block
    /// the runtime's thread.
    pub fn wait_for_requests(&self, count: usize, timeout: Duration) -> Option<Vec<Recorded>> {
        let (seen, _) = self
            .shared
            .arrived
            .wait_timeout_while(self.shared.seen(), timeout, |seen| seen.len() < count)
            .unwrap_or_else(PoisonError::into_inner);
        (seen.len() >= count).then(|| seen.clone())
    }
}

/// How one API's endpoint writes its answers.
struct Wire {
    path: &'static str,
    text: fn(&str, bool) -> Raw,
    tool_calls: fn(&[(String, String)], bool) -> Raw,
    error: fn(u16, &str, &str) -> Raw,
    /// Why the real API would refuse the request's tools (`rules.rs`).
    refuse: fn(&Value) -> Option<String>,
    /// Sent before a reply's own headers, [`Reply::Raw`] ones too.
    headers: &'static [(&'static str, &'static str)],
}

const OPENAI: Wire = Wire {
    path: openai::PATH,
    text: openai::text,
    tool_calls: openai::tool_calls,
    error: openai::error,
    refuse: rules::openai,
    headers: &[],
};

const ANTHROPIC: Wire = Wire {
    path: anthropic::PATH,
    text: anthropic::text,
    tool_calls: anthropic::tool_calls,
    error: anthropic::error,
    refuse: rules::anthropic,
    headers: &[("request-id", anthropic::REQUEST_ID)],
};

async fn chat_completions(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    answer(&shared, &OPENAI, &headers, &body).await
}

async fn messages(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    answer(&shared, &ANTHROPIC, &headers, &body).await
}

/// Any other path or method: recorded, and answered 404 without asking the
/// script.
async fn unknown(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(&shared, uri.path(), &headers, &body);
    let raw = Raw {
        status: 404,
        headers: vec![("content-type".into(), "text/plain".into())],
        chunks: vec![b"no such endpoint in the fake provider".to_vec()],
        delay: Duration::ZERO,
    };
    respond(raw, &[])
}

async fn answer(shared: &Shared, wire: &Wire, headers: &HeaderMap, body: &Bytes) -> Response {
    let body = record(shared, wire.path, headers, body);
    let stream = body["stream"] == true;
    if let Some(refusal) = (wire.refuse)(&body) {
        return respond(
            (wire.error)(400, "invalid_request_error", &refusal),
            wire.headers,
        );
    }
    let raw = match (shared.script)(&body) {
        Reply::Raw(raw) => raw,
        Reply::Hang => std::future::pending().await,
        Reply::Text(text) => (wire.text)(&text, stream),
        Reply::ToolCall { name, arguments } => (wire.tool_calls)(&[(name, arguments)], stream),
        Reply::ToolCalls(calls) => (wire.tool_calls)(&calls, stream),
        Reply::Error {
            status,
            kind,
            message,
        } => (wire.error)(status, &kind, &message),
    };
    if !raw.delay.is_zero() {
        // The scripted lateness of the answer (what a timeout test needs).
        tokio::time::sleep(raw.delay).await;
    }
    respond(raw, wire.headers)
}

/// Records the request; returns its body as JSON.
fn record(shared: &Shared, path: &str, headers: &HeaderMap, body: &Bytes) -> Value {
    let mut by_name = BTreeMap::<String, String>::new();
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes());
        by_name
            .entry(name.as_str().to_owned())
            .and_modify(|values| {
                values.push_str(", ");
                values.push_str(&value);
            })
            .or_insert_with(|| value.into_owned());
    }
    let json = serde_json::from_slice(body).unwrap_or(Value::Null);
    shared.seen().push(Recorded {
        path: path.to_owned(),
        headers: by_name,
        raw: body.to_vec(),
        body: json.clone(),
    });
    shared.arrived.notify_all();
    json
}

/// `raw` as a response, `extra` headers first.
fn respond(raw: Raw, extra: &[(&str, &str)]) -> Response {
    let mut response = Response::builder().status(raw.status);
    for (name, value) in extra {
        response = response.header(*name, *value);
    }
    for (name, value) in raw.headers {
        response = response.header(name, value);
    }
    let chunks = raw.chunks.into_iter().map(Ok::<_, Infallible>);
    response
        .body(Body::from_stream(futures_util::stream::iter(chunks)))
        .expect("a valid response")
}
