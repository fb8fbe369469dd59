//! The one scripted fake streamable-HTTP MCP server of these tests (as
//! `testing/fake_server.rs` is for stdio): in-process axum on 127.0.0.1,
//! reached through a relay of its own so that it can go away at once
//! ([`FakeHttp::go_away`]). It checks what a spec-true client must send,
//! records every request ([`Seen`]), says when anything changed
//! ([`FakeHttp::wait_for`]), and never sleeps: a call is held until the
//! test answers it ([`FakeHttp::answer`]), a standalone stream until a
//! [`Gate`] opens.
//!
//! It is a legacy server: the client's `server/discover` probe, outside a
//! session, gets 400 with the TypeScript SDK's -32000 "Server not
//! initialized", before anything else is checked.
//!
//! `POST /mcp` is refused with 406 without both media types in `Accept`,
//! 415 without a JSON body, 400 for an `initialize` that carries a session
//! or a later request without one or without `MCP-Protocol-Version:
//! LATEST_PROTOCOL_VERSION`, and 404 for a session that is not the current
//! one or has expired. Each `initialize` starts session `session-N` (and
//! answers with the version the client asked for); notifications and the
//! client's answers get 202; `ping` and `tools/list` (one tool, `echo`)
//! are answered; other methods get -32601.
//!
//! Its tools (`tools/call`) are listed in [`tools`]: each answers in one
//! way a server may (JSON, event streams ending early or broken, any
//! status), or holds the call until the test answers it.
//!
//! `GET /mcp` with a `Last-Event-ID` of a call's stream resumes it (see the
//! tools; [`Knobs`] can refuse resumptions). Any other `GET` is a
//! standalone stream, served as the test's [`Standalone`] script says (by
//! default 405: none offered). `DELETE /mcp` gets
//! [`Knobs::delete_status`].
//!
//! The fake is also its own OAuth authorization server ([`oauth`]): with
//! [`OAuth::protects`] set, everything but the handshake needs the current
//! access token, and so does the standalone stream it offers.

pub mod oauth;
pub mod tools;

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State as Shared;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use golem_mcp::LATEST_PROTOCOL_VERSION;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::{JoinHandle, JoinSet};

use super::Gate;
pub use oauth::OAuth;

/// The fake, served on 127.0.0.1 until the last clone of it is dropped.
#[derive(Clone)]
pub struct FakeHttp {
    state: Arc<State>,
    serving: Arc<Serving>,
}

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: &'static str,
    pub headers: HeaderMap,
    /// The JSON body (`null` for a `GET` or a `DELETE`).
    pub body: Value,
    /// When it arrived.
    pub at: Instant,
    /// The status it was answered with, once it was.
    pub status: Option<u16>,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        header(&self.headers, name)
    }

    /// Whether this is a `GET` that resumes a stream (of a call, or the
    /// standalone one): one with a `Last-Event-ID`.
    pub fn is_resumption(&self) -> bool {
        self.method == "GET" && self.header("last-event-id").is_some()
    }
}

/// How the fake misbehaves; each can be set at any time.
pub struct Knobs {
    /// The current session expired: requests carrying it get 404 (`expire`
    /// sets it too; an `initialize` clears it).
    pub expired: AtomicBool,
    /// The status a `DELETE` gets (200 by default).
    pub delete_status: AtomicU16,
    /// How many `initialize` requests get an event stream that ends
    /// without their answer.
    pub failing_initializes: AtomicUsize,
    /// How many resumptions of a call's stream get a stream that ends at
    /// once, with nothing.
    pub failing_resumes: AtomicUsize,
    /// How many resumptions of a call's stream get 503 with `Retry-After:
    /// 1`.
    pub unavailable_resumes: AtomicUsize,
    /// Every `POST` gets 503 (recorded first): a server that is down.
    pub unavailable: AtomicBool,
    /// `tools/list` gets a redirect (307) to this URL.
    pub redirect_to: Mutex<Option<String>>,
    /// A `POST` of this JSON-RPC method is recorded and never answered (its
    /// connection stays open): a server that ignores it.
    pub silent_to: Mutex<Option<&'static str>>,
}

impl Default for Knobs {
    fn default() -> Self {
        Knobs {
            expired: AtomicBool::new(false),
            delete_status: AtomicU16::new(200),
            failing_initializes: AtomicUsize::new(0),
            failing_resumes: AtomicUsize::new(0),
            unavailable_resumes: AtomicUsize::new(0),
            unavailable: AtomicBool::new(false),
            redirect_to: Mutex::new(None),
            silent_to: Mutex::new(None),
        }
    }
}

/// A standalone `GET` as the test's script sees it.
pub struct StandaloneGet<'a> {
    /// How many `GET`s the fake has seen, this one included.
    pub number: usize,
    pub last_event_id: Option<&'a str>,
}

/// How the fake answers a standalone `GET`.
pub enum Get {
    /// This status, before any check: 405 says no standalone stream is
    /// offered.
    Status(u16),
    /// An event stream of these chunks (SSE text), which then ends.
    Ended(Vec<String>),
    /// An event stream of these chunks, then held open while the fake
    /// runs.
    Open(Vec<String>),
    /// Answered as the inner `Get` once the gate opens.
    After(Gate, Box<Get>),
}

/// The test's script for the standalone stream.
pub type Standalone = Box<dyn Fn(&StandaloneGet<'_>) -> Get + Send + Sync>;

/// The body chunks of an answer the fake is still writing; an `Err` breaks
/// the connection mid-answer.
type Chunks = mpsc::UnboundedSender<Result<Bytes, io::Error>>;

/// How a held call will be answered.
enum Pending {
    /// An event stream, open: the answer is one more event.
    Stream(Chunks),
    /// An answer whose headers have not been sent.
    Json(oneshot::Sender<Response>),
    /// A JSON answer whose headers and first half went out: the rest of
    /// the body follows.
    JsonRest(Chunks),
}

/// A `hold` call, until the test answers it.
struct Held {
    /// The call's `n` argument: which of the test's calls it is.
    n: u64,
    /// Its JSON-RPC id.
    id: Value,
    pending: Pending,
}

/// What the resumption of a call's stream gets.
enum Resumable {
    /// The answer to request `id`, text `text`, as event `next_id`.
    Answer {
        id: Value,
        text: &'static str,
        next_id: &'static str,
    },
    /// Poll `k` of request `id` (see `poll`).
    Poll { id: Value, k: u32 },
}

struct State {
    knobs: Knobs,
    oauth: OAuth,
    standalone: Mutex<Standalone>,
    /// Where clients reach the fake: `http://127.0.0.1:PORT`.
    base: OnceLock<String>,
    seen: Mutex<Vec<Seen>>,
    held: Mutex<Vec<Held>>,
    /// Resumable call streams, by the `Last-Event-ID` that resumes them.
    resumable: Mutex<HashMap<String, Resumable>>,
    /// Standalone streams held open.
    open_streams: Mutex<Vec<Chunks>>,
    /// Sessions started so far; only the last one is live.
    sessions: AtomicUsize,
    /// How many `gather` calls have arrived.
    gathered: AtomicUsize,
    /// When the fake last ended or broke a call's stream on purpose.
    ended_stream_at: Mutex<Option<Instant>>,
    /// Bumped on every change to the above.
    changed: watch::Sender<u64>,
}

impl State {
    fn changed(&self) {
        self.changed.send_modify(|version| *version += 1);
    }

    /// Waits until `check` says yes; unbounded (the test bounds it).
    async fn wait_for<T>(&self, mut check: impl FnMut() -> Option<T>) -> T {
        let mut changed = self.changed.subscribe();
        loop {
            if let Some(value) = check() {
                return value;
            }
            // The sender lives in `self`: the wait cannot fail.
            let _ = changed.changed().await;
        }
    }

    fn record(&self, method: &'static str, headers: &HeaderMap, body: Value) -> usize {
        let index = {
            let mut seen = self.seen.lock().expect("lock");
            seen.push(Seen {
                method,
                headers: headers.clone(),
                body,
                at: Instant::now(),
                status: None,
            });
            seen.len() - 1
        };
        self.changed();
        index
    }

    fn answered(&self, index: usize, response: &Response) {
        self.seen.lock().expect("lock")[index].status = Some(response.status().as_u16());
        self.changed();
    }

    fn gets(&self) -> usize {
        let seen = self.seen.lock().expect("lock");
        seen.iter().filter(|seen| seen.method == "GET").count()
    }

    /// The client's answer (a POSTed response) to the server request `id`.
    fn response_to(&self, id: &Value) -> Option<Seen> {
        let seen = self.seen.lock().expect("lock");
        let answer = seen.iter().find(|seen| {
            seen.method == "POST" && seen.body.get("method").is_none() && seen.body["id"] == *id
        });
        answer.cloned()
    }

    fn base(&self) -> &str {
        self.base.get().expect("started")
    }

    fn session(&self) -> String {
        format!("session-{}", self.sessions.load(Ordering::SeqCst))
    }

    fn hold(&self, held: Held) {
        self.held.lock().expect("lock").push(held);
        self.changed();
    }

    fn take_held(&self, n: u64) -> Held {
        let mut held = self.held.lock().expect("lock");
        let index = held.iter().position(|held| held.n == n);
        held.remove(index.expect("the call is held"))
    }

    fn resumable(&self, event_id: &str, resumable: Resumable) {
        let mut streams = self.resumable.lock().expect("lock");
        streams.insert(event_id.to_owned(), resumable);
    }

    fn stream_ended(&self) {
        *self.ended_stream_at.lock().expect("lock") = Some(Instant::now());
        self.changed();
    }

    /// Takes one from `counter` if it is above zero.
    fn take_one(counter: &AtomicUsize) -> bool {
        counter
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
                left.checked_sub(1)
            })
            .is_ok()
    }
}

/// The relay in front of the fake, and the fake's own server.
struct Serving {
    /// Accepts connections and relays them to the fake.
    relay: Mutex<Option<JoinHandle<()>>>,
    /// The connections being relayed.
    connections: Arc<Mutex<JoinSet<()>>>,
    backend: JoinHandle<()>,
}

impl Drop for Serving {
    fn drop(&mut self) {
        if let Some(relay) = self.relay.lock().expect("lock").take() {
            relay.abort();
        }
        self.connections.lock().expect("lock").abort_all();
        self.backend.abort();
    }
}

impl FakeHttp {
    /// Starts the fake on the current runtime, with the default knobs and
    /// no standalone stream.
    pub async fn start() -> FakeHttp {
        let (changed, _) = watch::channel(0);
        let state = Arc::new(State {
            knobs: Knobs::default(),
            oauth: OAuth::default(),
            standalone: Mutex::new(Box::new(|_| Get::Status(405))),
            base: OnceLock::new(),
            seen: Mutex::default(),
            held: Mutex::default(),
            resumable: Mutex::default(),
            open_streams: Mutex::default(),
            sessions: AtomicUsize::new(0),
            gathered: AtomicUsize::new(0),
            ended_stream_at: Mutex::new(None),
            changed,
        });
        let app = oauth::routes(Router::new())
            .route("/mcp", post(on_post).get(on_get).delete(on_delete))
            .with_state(Arc::clone(&state));
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let backend_address = listener.local_addr().expect("address");
        let backend = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let front = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", front.local_addr().expect("address"));
        state.base.set(base).expect("set once");
        let connections = Arc::new(Mutex::new(JoinSet::new()));
        let relayed = Arc::clone(&connections);
        let relay = tokio::spawn(async move {
            while let Ok((mut client, _)) = front.accept().await {
                let Ok(mut server) = TcpStream::connect(backend_address).await else {
                    continue;
                };
                relayed.lock().expect("lock").spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        });
        FakeHttp {
            state,
            serving: Arc::new(Serving {
                relay: Mutex::new(Some(relay)),
                connections,
                backend,
            }),
        }
    }

    /// Its MCP endpoint.
    pub fn url(&self) -> String {
        format!("{}/mcp", self.base())
    }

    /// `http://127.0.0.1:PORT`, where its other endpoints are.
    pub fn base(&self) -> &str {
        self.state.base()
    }

    pub fn knobs(&self) -> &Knobs {
        &self.state.knobs
    }

    pub fn oauth(&self) -> &OAuth {
        &self.state.oauth
    }

    /// Serves the standalone stream as `script` says.
    pub fn serve_standalone(
        &self,
        script: impl Fn(&StandaloneGet<'_>) -> Get + Send + Sync + 'static,
    ) {
        *self.state.standalone.lock().expect("lock") = Box::new(script);
    }

    /// Every request so far, in order of arrival.
    pub fn seen(&self) -> Vec<Seen> {
        self.state.seen.lock().expect("lock").clone()
    }

    /// The `POST`s of JSON-RPC method `method`.
    pub fn posts_of(&self, method: &str) -> Vec<Seen> {
        self.requests(|seen| seen.method == "POST" && seen.body["method"] == method)
    }

    pub fn gets(&self) -> Vec<Seen> {
        self.requests(|seen| seen.method == "GET")
    }

    pub fn deletes(&self) -> Vec<Seen> {
        self.requests(|seen| seen.method == "DELETE")
    }

    fn requests(&self, wanted: impl Fn(&Seen) -> bool) -> Vec<Seen> {
        let seen = self.state.seen.lock().expect("lock");
        seen.iter().filter(|seen| wanted(seen)).cloned().collect()
    }

    /// The client's answer (a POSTed response) to the server request `id`.
    pub fn response_to(&self, id: &Value) -> Option<Seen> {
        self.state.response_to(id)
    }

    /// How many `gather` calls have arrived.
    pub fn gathered(&self) -> usize {
        self.state.gathered.load(Ordering::SeqCst)
    }

    /// When the fake last ended (`end_early_with_id`) or broke
    /// (`break_once`) a call's stream on purpose.
    pub fn ended_stream_at(&self) -> Option<Instant> {
        *self.state.ended_stream_at.lock().expect("lock")
    }

    /// Waits until `check` says yes: it is asked now and after every
    /// change the fake sees. Unbounded (the test bounds it).
    pub async fn wait_for<T>(&self, mut check: impl FnMut(&FakeHttp) -> Option<T>) -> T {
        self.state.wait_for(|| check(self)).await
    }

    /// How many calls the fake holds.
    pub fn held_count(&self) -> usize {
        self.state.held.lock().expect("lock").len()
    }

    /// Waits, within the bound, until the fake holds exactly `count`
    /// calls.
    pub async fn until_held(&self, count: usize) {
        super::bounded(self.wait_for(|fake| (fake.held_count() == count).then_some(()))).await;
    }

    /// The JSON-RPC id of held call `n`.
    pub fn id_of(&self, n: u64) -> Value {
        let held = self.state.held.lock().expect("lock");
        let call = held.iter().find(|held| held.n == n);
        call.expect("the call is held").id.clone()
    }

    /// Answers held call `n` with `text`.
    pub fn answer(&self, n: u64, text: &str) {
        let held = self.state.take_held(n);
        let message = result_message(&held.id, text);
        match held.pending {
            Pending::Stream(chunks) => {
                let _ = chunks.send(Ok(event(&message)));
            }
            Pending::Json(answer) => {
                let _ = answer.send(json_response(&message));
            }
            Pending::JsonRest(chunks) => {
                let _ = chunks.send(Ok(Bytes::from(format!(
                    r#""result":{}}}"#,
                    message["result"]
                ))));
            }
        }
        self.state.changed();
    }

    /// Answers held call `n` (an event stream or a JSON answer whose
    /// headers are held back) with `message` as it is.
    pub fn answer_with(&self, n: u64, message: &Value) {
        let held = self.state.take_held(n);
        match held.pending {
            Pending::Stream(chunks) => {
                let _ = chunks.send(Ok(event(message)));
            }
            Pending::Json(answer) => {
                let _ = answer.send(json_response(message));
            }
            Pending::JsonRest(_) => unreachable!("half a body went out already"),
        }
        self.state.changed();
    }

    /// Answers held call `n`, whose headers are held back, with HTTP
    /// `status` and a plain-text `body`.
    pub fn answer_status(&self, n: u64, status: u16, body: &str) {
        let held = self.state.take_held(n);
        let Pending::Json(answer) = held.pending else {
            unreachable!("the headers of call {n} went out already");
        };
        let _ = answer.send(text_response(status, "text/plain", body));
        self.state.changed();
    }

    /// Returns once the client has let go of held call `n`'s event stream.
    pub async fn stream_closed(&self, n: u64) {
        let chunks = {
            let held = self.state.held.lock().expect("lock");
            match &held.iter().find(|held| held.n == n).expect("held").pending {
                Pending::Stream(chunks) => chunks.clone(),
                _ => unreachable!("call {n} holds an event stream"),
            }
        };
        chunks.closed().await;
    }

    /// The server goes away: it stops listening, every connection is cut,
    /// and every held call and open stream is let go.
    pub async fn go_away(&self) {
        let relay = self.serving.relay.lock().expect("lock").take();
        if let Some(relay) = relay {
            relay.abort();
            // Once the relay task is gone, so is its listener: nothing is
            // accepted after the cut.
            let _ = relay.await;
        }
        self.serving.connections.lock().expect("lock").abort_all();
        self.state.held.lock().expect("lock").clear();
        self.state.open_streams.lock().expect("lock").clear();
    }
}

// ---- answers ------------------------------------------------------------------------

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn result_message(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id,
        "result": {"content": [{"type": "text", "text": text}]}})
}

fn event(message: &Value) -> Bytes {
    Bytes::from(format!("data: {message}\n\n"))
}

fn json_response(message: &Value) -> Response {
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from(message.to_string()))
        .expect("response")
}

fn text_response(status: u16, content_type: &str, body: &str) -> Response {
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Body::from(body.to_owned()))
        .expect("response")
}

fn accepted() -> Response {
    Response::builder()
        .status(StatusCode::ACCEPTED)
        .body(Body::empty())
        .expect("response")
}

/// A streamed answer of type `content_type` whose body chunks are sent
/// through the returned sender; it ends when the sender is dropped, and
/// breaks the connection when the sender sends an error.
fn streamed(content_type: &str) -> (Chunks, Response) {
    let (sender, receiver) = mpsc::unbounded_channel::<Result<Bytes, io::Error>>();
    let body = futures_util::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|chunk| (chunk, receiver))
    });
    let response = Response::builder()
        .header("content-type", content_type)
        .body(Body::from_stream(body))
        .expect("response");
    (sender, response)
}

/// An event stream of `chunks`; open while the returned sender lives.
fn event_stream(chunks: &[&str]) -> (Chunks, Response) {
    let (sender, response) = streamed("text/event-stream");
    for chunk in chunks {
        let _ = sender.send(Ok(Bytes::from(chunk.to_string())));
    }
    (sender, response)
}

// ---- POST -----------------------------------------------------------------------------

async fn on_post(Shared(state): Shared<Arc<State>>, headers: HeaderMap, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let index = state.record("POST", &headers, message.clone());
    let response = answer_post(&state, &headers, message).await;
    state.answered(index, &response);
    response
}

async fn answer_post(state: &Arc<State>, headers: &HeaderMap, message: Value) -> Response {
    if state.knobs.unavailable.load(Ordering::SeqCst) {
        return text_response(503, "text/plain", "down for now");
    }
    let method = message["method"].as_str().unwrap_or_default();
    let silent = *state.knobs.silent_to.lock().expect("lock");
    if silent == Some(method) {
        return std::future::pending().await;
    }
    // A legacy server: the era probe, outside a session, gets what the
    // TypeScript SDK answers (server-everything's 400 and -32000), and the
    // client falls back to the handshake.
    if method == "server/discover" && header(headers, "mcp-session-id").is_none() {
        let refusal = json!({"jsonrpc": "2.0", "id": null,
            "error": {"code": -32000, "message": "Bad Request: Server not initialized"}});
        return text_response(400, "application/json", &refusal.to_string());
    }
    // The handshake is open; everything else may need the current token.
    let open = method == "initialize" || method.starts_with("notifications/");
    if !open && let Some(refusal) = state.oauth.refusal(headers, state.base()) {
        return refusal;
    }
    let accept = header(headers, "accept").unwrap_or("");
    if !(accept.contains("application/json") && accept.contains("text/event-stream")) {
        return text_response(406, "text/plain", "accept both");
    }
    if header(headers, "content-type") != Some("application/json") {
        return text_response(415, "text/plain", "json only");
    }
    let id = message["id"].clone();
    if method == "initialize" {
        return initialize(state, headers, &message);
    }
    if let Some(refusal) = session_refusal(state, headers) {
        return refusal;
    }
    if message.get("method").is_none() || message.get("id").is_none() {
        // The client's answer to a server request, or a notification.
        return accepted();
    }
    match method {
        "tools/list" => {
            if let Some(target) = state.knobs.redirect_to.lock().expect("lock").clone() {
                return Response::builder()
                    .status(StatusCode::TEMPORARY_REDIRECT)
                    .header("location", target)
                    .body(Body::empty())
                    .expect("response");
            }
            json_response(&json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}}]}}))
        }
        // Session state a legacy server keeps, acknowledged.
        "ping" | "logging/setLevel" | "resources/subscribe" => {
            json_response(&json!({"jsonrpc": "2.0", "id": id, "result": {}}))
        }
        "tools/call" => tools::call(Arc::clone(state), id, &message["params"]).await,
        _ => json_response(&json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "not here"}})),
    }
}

fn initialize(state: &State, headers: &HeaderMap, message: &Value) -> Response {
    if header(headers, "mcp-session-id").is_some() {
        return text_response(400, "text/plain", "initialize carries no session");
    }
    if State::take_one(&state.knobs.failing_initializes) {
        let (sender, response) = event_stream(&[": no answer\n\n"]);
        drop(sender);
        return response;
    }
    state.sessions.fetch_add(1, Ordering::SeqCst);
    state.knobs.expired.store(false, Ordering::SeqCst);
    let mut response = json_response(&json!({"jsonrpc": "2.0", "id": message["id"], "result": {
        "protocolVersion": message["params"]["protocolVersion"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "fake-http", "version": "1.0"}}}));
    response
        .headers_mut()
        .insert("mcp-session-id", state.session().parse().expect("header"));
    response
}

/// The refusal of a request that is not in the current session, or does
/// not carry the negotiated protocol version.
fn session_refusal(state: &State, headers: &HeaderMap) -> Option<Response> {
    match header(headers, "mcp-session-id") {
        Some(session)
            if session == state.session() && !state.knobs.expired.load(Ordering::SeqCst) => {}
        Some(_) => return Some(text_response(404, "text/plain", "unknown session")),
        None => return Some(text_response(400, "text/plain", "missing session")),
    }
    if header(headers, "mcp-protocol-version") != Some(LATEST_PROTOCOL_VERSION) {
        let problem = "missing or wrong MCP-Protocol-Version";
        return Some(text_response(400, "text/plain", problem));
    }
    None
}

// ---- GET and DELETE ----------------------------------------------------------------------

async fn on_get(Shared(state): Shared<Arc<State>>, headers: HeaderMap) -> Response {
    let index = state.record("GET", &headers, Value::Null);
    let response = answer_get(&state, &headers).await;
    state.answered(index, &response);
    response
}

async fn answer_get(state: &Arc<State>, headers: &HeaderMap) -> Response {
    let last_event_id = header(headers, "last-event-id");
    let resumption = last_event_id.and_then(|event_id| {
        let resumable = state.resumable.lock().expect("lock");
        resumable.get(event_id).map(|resumable| match resumable {
            Resumable::Answer { id, text, next_id } => {
                let answer = result_message(id, text);
                (None, format!("id: {next_id}\ndata: {answer}\n\n"))
            }
            Resumable::Poll { id, k } if *k < 5 => {
                let next = (id.clone(), k + 1);
                (
                    Some(next),
                    format!("id: poll-{}\nretry: 10\ndata:\n\n", k + 1),
                )
            }
            Resumable::Poll { id, .. } => {
                (None, format!("data: {}\n\n", result_message(id, "polled")))
            }
        })
    });
    if let Some((next_poll, chunk)) = resumption {
        return resume(state, headers, next_poll, &chunk);
    }
    let mut answer = {
        let script = state.standalone.lock().expect("lock");
        script(&StandaloneGet {
            number: state.gets(),
            last_event_id,
        })
    };
    while let Get::After(gate, next) = answer {
        gate.opened().await;
        answer = *next;
    }
    if let Get::Status(status) = answer {
        return text_response(status, "text/plain", "no standalone stream");
    }
    if state.oauth.refuses(headers) {
        return text_response(401, "text/plain", "no valid token");
    }
    if let Some(refusal) = session_refusal(state, headers) {
        return refusal;
    }
    match answer {
        Get::Ended(chunks) => {
            let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
            event_stream(&chunks).1
        }
        Get::Open(chunks) => {
            let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
            let (sender, response) = event_stream(&chunks);
            state.open_streams.lock().expect("lock").push(sender);
            response
        }
        Get::Status(_) | Get::After(..) => unreachable!("answered above"),
    }
}

/// The resumption of a call's stream: `chunk`, unless the knobs refuse it;
/// a poll goes on from `next_poll`.
fn resume(
    state: &State,
    headers: &HeaderMap,
    next_poll: Option<(Value, u32)>,
    chunk: &str,
) -> Response {
    if let Some(refusal) = session_refusal(state, headers) {
        return refusal;
    }
    if State::take_one(&state.knobs.unavailable_resumes) {
        return Response::builder()
            .status(StatusCode::SERVICE_UNAVAILABLE)
            .header("retry-after", "1")
            .body(Body::from("restarting"))
            .expect("response");
    }
    if State::take_one(&state.knobs.failing_resumes) {
        return event_stream(&[]).1; // ends at once, with nothing
    }
    if let Some((id, k)) = next_poll {
        state.resumable(&format!("poll-{k}"), Resumable::Poll { id, k });
    }
    event_stream(&[chunk]).1
}

async fn on_delete(Shared(state): Shared<Arc<State>>, headers: HeaderMap) -> Response {
    let index = state.record("DELETE", &headers, Value::Null);
    let status = state.knobs.delete_status.load(Ordering::SeqCst);
    let response = Response::builder()
        .status(status)
        .body(Body::empty())
        .expect("response");
    state.answered(index, &response);
    response
}
