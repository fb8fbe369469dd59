//! Many requests in flight on one client over streamable HTTP: each message
//! its own POST, JSON and event-stream answers read independently, one
//! stream broken and resumed while the others complete, a server going away
//! under eight calls, the server's own requests answered between calls,
//! dropped calls cancelled one by one, and what a refusing server says.
//!
//! The fake server is in-process axum (`tests/http_transport.rs` checks the
//! wire format one request at a time; this file checks concurrency). It
//! says when it holds a call (`Fake::wait_for`), and the test says when it
//! answers (`Fake::answer`), so no test sleeps to let something happen and
//! every wait is bounded: a client that serializes its requests fails these
//! tests by timeout instead of hanging them. The last test does the same
//! against the real `server-everything` (`scripts/install-peers.sh`).
#![cfg(feature = "http")]

mod support;

use support::everything_http;

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use golem_mcp::{
    CallResult, Client, Error, HttpConfig, HttpTransport, LATEST_PROTOCOL_VERSION, TransportError,
};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio::task::{JoinHandle, JoinSet};

/// A bound for anything that should take milliseconds: generous, so a busy
/// machine does not fail the test, and finite, so a client that serializes
/// requests fails rather than hangs.
const PATIENCE: Duration = Duration::from_secs(10);

/// How many calls each test keeps in flight.
const CALLS: usize = 8;

/// The session the fake hands out.
const SESSION: &str = "session-1";

/// The `retry` (ms) of the stream the fake breaks on purpose: long enough
/// that calls waiting for it would show.
const BROKEN_STREAM_RETRY_MS: u64 = 1500;

// ---- the fake server ----------------------------------------------------------------

/// One request as the fake saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: &'static str,
    headers: HeaderMap,
    body: Value,
    at: Instant,
}

/// The body chunks of an answer the fake is still writing; an `Err` breaks
/// the connection mid-answer.
type Chunks = mpsc::UnboundedSender<Result<Bytes, io::Error>>;

/// How a held call will be answered.
enum Pending {
    /// An event stream, open: the answer is one more event.
    Stream(Chunks),
    /// A JSON answer whose headers have not been sent.
    Json(oneshot::Sender<Value>),
    /// A JSON answer whose headers and first half went out: the rest of the
    /// body follows.
    JsonRest(Chunks),
}

/// A call the fake holds until the test answers it.
struct Held {
    /// The call's `n` argument: which of the test's calls it is.
    n: u64,
    /// Its JSON-RPC id.
    id: Value,
    pending: Pending,
}

#[derive(Default)]
struct Fake {
    seen: Mutex<Vec<Seen>>,
    held: Mutex<Vec<Held>>,
    /// How many `gather` calls have arrived.
    gathered: AtomicUsize,
    /// The request each resumable stream answers, by the `Last-Event-ID`
    /// that resumes it.
    resumable: Mutex<HashMap<String, Value>>,
    /// When the fake broke a stream on purpose.
    broken_at: Mutex<Option<Instant>>,
    /// Woken on every change to the above.
    changed: Notify,
}

impl Fake {
    fn record(&self, method: &'static str, headers: &HeaderMap, body: Value) {
        self.seen.lock().expect("lock").push(Seen {
            method,
            headers: headers.clone(),
            body,
            at: Instant::now(),
        });
        self.changed.notify_waiters();
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

    /// The client's answer (a POSTed response) to the server request `id`.
    fn response_to(&self, id: &Value) -> Option<Seen> {
        self.seen().into_iter().find(|seen| {
            seen.method == "POST" && seen.body.get("method").is_none() && seen.body["id"] == *id
        })
    }

    fn gets(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|seen| seen.method == "GET")
            .collect()
    }

    fn hold(&self, held: Held) {
        self.held.lock().expect("lock").push(held);
        self.changed.notify_waiters();
    }

    fn held_count(&self) -> usize {
        self.held.lock().expect("lock").len()
    }

    /// The JSON-RPC id of held call `n`.
    fn id_of(&self, n: u64) -> Value {
        let held = self.held.lock().expect("lock");
        let call = held.iter().find(|held| held.n == n);
        call.expect("the call is held").id.clone()
    }

    /// Answers held call `n` with `text`.
    fn answer(&self, n: u64, text: &str) {
        let held = {
            let mut held = self.held.lock().expect("lock");
            let index = held.iter().position(|held| held.n == n);
            held.remove(index.expect("the call is held"))
        };
        let message = result_message(&held.id, text);
        match held.pending {
            Pending::Stream(chunks) => {
                let _ = chunks.send(Ok(event(&message)));
            }
            Pending::Json(answer) => {
                let _ = answer.send(message);
            }
            Pending::JsonRest(chunks) => {
                let _ = chunks.send(Ok(Bytes::from(format!(
                    r#""result":{}}}"#,
                    message["result"]
                ))));
            }
        }
    }

    /// Answers held call `n` (an event stream or a JSON answer whose
    /// headers are held back) with `message` as it is, and ends the answer.
    fn answer_with(&self, n: u64, message: &Value) {
        let held = {
            let mut held = self.held.lock().expect("lock");
            let index = held.iter().position(|held| held.n == n);
            held.remove(index.expect("the call is held"))
        };
        match held.pending {
            Pending::Stream(chunks) => {
                let _ = chunks.send(Ok(event(message)));
            }
            Pending::Json(answer) => {
                let _ = answer.send(message.clone());
            }
            Pending::JsonRest(_) => unreachable!("half a body went out already"),
        }
    }

    /// Waits until `check` says yes; unbounded (the test bounds it).
    async fn wait_for<T>(&self, mut check: impl FnMut(&Fake) -> Option<T>) -> T {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if let Some(value) = check(self) {
                return value;
            }
            changed.await;
        }
    }
}

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

fn status(code: StatusCode, body: &str) -> Response {
    Response::builder()
        .status(code)
        .header("content-type", "text/plain")
        .body(Body::from(body.to_owned()))
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

async fn on_post(State(fake): State<Arc<Fake>>, headers: HeaderMap, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    fake.record("POST", &headers, message.clone());
    let id = message["id"].clone();
    if message["method"] == "initialize" {
        let mut response = json_response(&json!({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-http-multiplex", "version": "1.0"}}}));
        response
            .headers_mut()
            .insert("mcp-session-id", SESSION.parse().expect("header"));
        return response;
    }
    if header(&headers, "mcp-session-id") != Some(SESSION) {
        return status(StatusCode::BAD_REQUEST, "missing or unknown session");
    }
    if header(&headers, "mcp-protocol-version") != Some(LATEST_PROTOCOL_VERSION) {
        return status(StatusCode::BAD_REQUEST, "missing MCP-Protocol-Version");
    }
    if message.get("method").is_none() || message.get("id").is_none() {
        // A notification, or the client's answer to a server request.
        return Response::builder()
            .status(StatusCode::ACCEPTED)
            .body(Body::empty())
            .expect("response");
    }
    if message["method"] != "tools/call" {
        return json_response(&json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32601, "message": "not here"}}));
    }
    let name = message["params"]["name"].as_str().unwrap_or_default();
    let arguments = &message["params"]["arguments"];
    let n = arguments["n"].as_u64().unwrap_or_default();
    match name {
        "json_echo" => json_response(&result_message(
            &id,
            arguments["text"].as_str().unwrap_or_default(),
        )),
        "gather" => gather(fake, id, n, arguments).await,
        "hold" => hold(fake, id, n, arguments).await,
        "break_once" => break_once(fake, id),
        "unauthorized" => {
            let mut response = status(StatusCode::UNAUTHORIZED, "log in first");
            response.headers_mut().insert(
                "www-authenticate",
                arguments["challenge"]
                    .as_str()
                    .unwrap_or_default()
                    .parse()
                    .expect("header"),
            );
            response
        }
        "rate_limited" => {
            let mut response = status(StatusCode::TOO_MANY_REQUESTS, "slow down");
            response
                .headers_mut()
                .insert("retry-after", "3".parse().expect("header"));
            response
        }
        other => json_response(&json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": -32602, "message": format!("Unknown tool: {other}")}})),
    }
}

/// Answers only once `count` `gather` calls have arrived: with JSON (its
/// headers held back until then) or with an event stream (open at once, its
/// answer held back until then).
async fn gather(fake: Arc<Fake>, id: Value, n: u64, arguments: &Value) -> Response {
    let count = arguments["count"].as_u64().unwrap_or_default() as usize;
    fake.gathered.fetch_add(1, Ordering::SeqCst);
    fake.changed.notify_waiters();
    let all_here = move |fake: &Fake| (fake.gathered.load(Ordering::SeqCst) >= count).then_some(());
    let answer = result_message(&id, &format!("call {n}"));
    if arguments["answer"] == "json" {
        fake.wait_for(all_here).await;
        return json_response(&answer);
    }
    let (chunks, response) = streamed("text/event-stream");
    tokio::spawn(async move {
        fake.wait_for(all_here).await;
        let _ = chunks.send(Ok(event(&answer)));
    });
    response
}

/// Holds the call until the test answers it (`Fake::answer`). `answer`
/// says how: `sse` (an open event stream), `sse_with_id` (the same, after
/// an event with an id and a short `retry`), `json` (headers held back),
/// `json_rest` (headers and half the body sent). On an event stream,
/// `request` is sent first: a request from the server, whose id is the
/// call's own id when `same_id` is true.
async fn hold(fake: Arc<Fake>, id: Value, n: u64, arguments: &Value) -> Response {
    match arguments["answer"].as_str().unwrap_or_default() {
        "json" => {
            let (answer, answered) = oneshot::channel();
            fake.hold(Held {
                n,
                id,
                pending: Pending::Json(answer),
            });
            match answered.await {
                Ok(message) => json_response(&message),
                Err(_) => status(StatusCode::SERVICE_UNAVAILABLE, "never answered"),
            }
        }
        "json_rest" => {
            let (chunks, response) = streamed("application/json");
            let _ = chunks.send(Ok(Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":{id},"#))));
            fake.hold(Held {
                n,
                id,
                pending: Pending::JsonRest(chunks),
            });
            response
        }
        kind => {
            let (chunks, response) = streamed("text/event-stream");
            if kind == "sse_with_id" {
                let _ = chunks.send(Ok(Bytes::from(format!(
                    "id: held-{n}\nretry: 50\ndata:\n\n"
                ))));
            } else {
                let _ = chunks.send(Ok(Bytes::from_static(b": held\n\n")));
            }
            if let Some(request) = arguments.get("request") {
                let mut request = request.clone();
                if arguments["same_id"] == true {
                    request["id"] = id.clone();
                }
                let _ = chunks.send(Ok(event(&request)));
            }
            fake.hold(Held {
                n,
                id,
                pending: Pending::Stream(chunks),
            });
            response
        }
    }
}

/// An event stream that sends one event with an id and a `retry` field (a
/// `ping` request from the server), then breaks the connection once the
/// client has answered that ping. Resumed by `on_get`.
fn break_once(fake: Arc<Fake>, id: Value) -> Response {
    let (chunks, response) = streamed("text/event-stream");
    let ping = json!({"jsonrpc": "2.0", "id": "a-ping", "method": "ping"});
    let _ = chunks.send(Ok(Bytes::from(format!(
        "id: a-1\nretry: {BROKEN_STREAM_RETRY_MS}\ndata: {ping}\n\n"
    ))));
    fake.resumable
        .lock()
        .expect("lock")
        .insert("a-1".to_owned(), id);
    tokio::spawn(async move {
        // The client has read the event when it answers the ping.
        fake.wait_for(|fake| fake.response_to(&json!("a-ping")))
            .await;
        let _ = chunks.send(Err(io::Error::other("the fake drops the connection")));
        *fake.broken_at.lock().expect("lock") = Some(Instant::now());
        fake.changed.notify_waiters();
    });
    response
}

/// Resumes a stream `break_once` broke: the answer, as a new event.
async fn on_get(State(fake): State<Arc<Fake>>, headers: HeaderMap) -> Response {
    fake.record("GET", &headers, Value::Null);
    if header(&headers, "mcp-session-id") != Some(SESSION)
        || header(&headers, "mcp-protocol-version") != Some(LATEST_PROTOCOL_VERSION)
    {
        return status(StatusCode::BAD_REQUEST, "missing session or version");
    }
    let last_event_id = header(&headers, "last-event-id").unwrap_or_default();
    let Some(id) = fake
        .resumable
        .lock()
        .expect("lock")
        .get(last_event_id)
        .cloned()
    else {
        return status(StatusCode::METHOD_NOT_ALLOWED, "no standalone stream");
    };
    let (chunks, response) = streamed("text/event-stream");
    let resumed = result_message(&id, "resumed A");
    let _ = chunks.send(Ok(Bytes::from(format!("id: a-2\ndata: {resumed}\n\n"))));
    response
}

async fn on_delete(State(fake): State<Arc<Fake>>, headers: HeaderMap) -> StatusCode {
    fake.record("DELETE", &headers, Value::Null);
    StatusCode::OK
}

/// The fake, served on 127.0.0.1 until it goes away. Clients reach it
/// through a relay of its own, so that it can go away at once: every
/// connection cut, answers half-written or not, and nothing listening.
struct Server {
    url: String,
    /// Accepts connections and relays them to the fake.
    relay: JoinHandle<()>,
    /// The connections being relayed.
    connections: Arc<Mutex<JoinSet<()>>>,
    fake: JoinHandle<()>,
}

impl Server {
    async fn start(fake: Arc<Fake>) -> Server {
        let app = Router::new()
            .route("/mcp", post(on_post).get(on_get).delete(on_delete))
            .with_state(fake);
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let backend = listener.local_addr().expect("address");
        let fake = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let front = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/mcp", front.local_addr().expect("address"));
        let connections = Arc::new(Mutex::new(JoinSet::new()));
        let relayed = Arc::clone(&connections);
        let relay = tokio::spawn(async move {
            while let Ok((mut client, _)) = front.accept().await {
                let Ok(mut server) = TcpStream::connect(backend).await else {
                    continue;
                };
                relayed.lock().expect("lock").spawn(async move {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                });
            }
        });
        Server {
            url,
            relay,
            connections,
            fake,
        }
    }

    /// The server goes away: it stops listening, and every connection is
    /// cut.
    async fn go_away(&mut self) {
        self.relay.abort();
        // Once the relay task is gone, so is its listener: nothing is
        // accepted after the cut.
        let _ = (&mut self.relay).await;
        self.connections.lock().expect("lock").abort_all();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.relay.abort();
        self.connections.lock().expect("lock").abort_all();
        self.fake.abort();
    }
}

async fn setup() -> (Arc<Fake>, Server, Client) {
    let fake = Arc::new(Fake::default());
    let server = Server::start(Arc::clone(&fake)).await;
    let client =
        Client::new(HttpTransport::new(HttpConfig::new(server.url.clone())).expect("valid"));
    bounded("initialize", client.initialize())
        .await
        .expect("initializes");
    (fake, server, client)
}

// ---- helpers --------------------------------------------------------------------------

async fn bounded<F: std::future::Future>(what: &str, future: F) -> F::Output {
    match tokio::time::timeout(PATIENCE, future).await {
        Ok(output) => output,
        Err(_) => panic!("{what} did not finish within {PATIENCE:?}"),
    }
}

fn args(json: Value) -> Box<RawValue> {
    RawValue::from_string(json.to_string()).expect("valid JSON")
}

/// The text the fake answers call `n` with.
fn text_of(n: usize) -> String {
    format!("call {n}")
}

/// Starts a call on a clone of `client`, on its own task.
fn start_call(
    client: &Client,
    tool: &str,
    arguments: Value,
) -> JoinHandle<Result<CallResult, Error>> {
    let client = client.clone();
    let tool = tool.to_owned();
    tokio::spawn(async move { client.call_tool(&tool, &args(arguments)).await })
}

/// Starts `hold` call `n`, answered the way `answer` says.
fn start_held(client: &Client, n: usize, answer: &str) -> JoinHandle<Result<CallResult, Error>> {
    start_call(client, "hold", json!({"n": n, "answer": answer}))
}

/// Waits until the fake holds `count` calls.
async fn until_held(fake: &Fake, count: usize) {
    bounded(
        "the calls reaching the fake",
        fake.wait_for(|fake| (fake.held_count() == count).then_some(())),
    )
    .await;
}

/// The outcome of a call that was not dropped.
async fn outcome_of(task: JoinHandle<Result<CallResult, Error>>) -> Result<CallResult, Error> {
    bounded("a call", task).await.expect("the call's task")
}

async fn text_from(task: JoinHandle<Result<CallResult, Error>>) -> String {
    outcome_of(task).await.expect("answered").text()
}

fn assert_in_flight(calls: &[JoinHandle<Result<CallResult, Error>>], why: &str) {
    for (index, call) in calls.iter().enumerate() {
        assert!(!call.is_finished(), "call #{index} finished early: {why}");
    }
}

// ---- many calls at once ----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_calls_are_in_flight_at_once_with_json_and_event_stream_answers() {
    let (fake, _server, client) = setup().await;
    // The fake answers none of them before all eight have arrived: a client
    // that waits for one answer (JSON headers, or the end of a stream)
    // before sending the next request deadlocks, and the bound fails it.
    let calls: Vec<_> = (0..CALLS)
        .map(|n| {
            let answer = if n % 2 == 0 { "json" } else { "sse" };
            start_call(
                &client,
                "gather",
                json!({"n": n, "count": CALLS, "answer": answer}),
            )
        })
        .collect();
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(text_from(call).await, text_of(n), "call {n}'s own answer");
    }
    assert_eq!(fake.gathered.load(Ordering::SeqCst), CALLS);
    let posts = fake.posts_of("tools/call");
    assert_eq!(posts.len(), CALLS, "one POST per call, none repeated");
    let mut ids: Vec<u64> = posts
        .iter()
        .map(|post| post.body["id"].as_u64().expect("a numeric id"))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), CALLS, "every call has an id of its own");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_in_reverse_order_over_open_event_streams_reach_their_own_calls() {
    let (fake, _server, client) = setup().await;
    let mut calls: Vec<_> = (0..CALLS).map(|n| start_held(&client, n, "sse")).collect();
    until_held(&fake, CALLS).await;
    // The last call is answered first; each answer must complete its own
    // call, and only it, while every earlier stream stays open.
    while let Some(call) = calls.pop() {
        let n = calls.len();
        fake.answer(n as u64, &text_of(n));
        assert_eq!(text_from(call).await, text_of(n));
        assert_in_flight(&calls, "their answers were not sent yet");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_broken_stream_is_resumed_while_the_others_complete_without_waiting_for_it() {
    let (fake, _server, client) = setup().await;
    let a = start_call(&client, "break_once", json!({}));
    let broken_at = bounded(
        "stream A breaking",
        fake.wait_for(|fake| *fake.broken_at.lock().expect("lock")),
    )
    .await;
    let ping_answer = fake.response_to(&json!("a-ping")).expect("answered");
    assert_eq!(
        ping_answer.body,
        json!({"jsonrpc": "2.0", "id": "a-ping", "result": {}})
    );

    // A now waits out the server's retry (1.5 s) before resuming; B..H are
    // sent, held and answered meanwhile.
    let others: Vec<_> = (1..CALLS).map(|n| start_held(&client, n, "sse")).collect();
    until_held(&fake, CALLS - 1).await;
    for n in 1..CALLS {
        fake.answer(n as u64, &text_of(n));
    }
    for (n, call) in (1..CALLS).zip(others) {
        assert_eq!(text_from(call).await, text_of(n));
    }
    let others_done = Instant::now();
    assert!(!a.is_finished(), "A is still waiting for its resumption");

    assert_eq!(text_from(a).await, "resumed A");
    // The standalone stream's GET (refused with 405: this fake offers
    // none) carries no Last-Event-ID; the resumption does.
    let gets: Vec<_> = fake
        .gets()
        .into_iter()
        .filter(|get| header(&get.headers, "last-event-id").is_some())
        .collect();
    assert_eq!(gets.len(), 1, "A was resumed once: {gets:?}");
    let get = &gets[0];
    assert_eq!(header(&get.headers, "last-event-id"), Some("a-1"));
    assert_eq!(header(&get.headers, "mcp-session-id"), Some(SESSION));
    assert!(
        header(&get.headers, "accept").is_some_and(|accept| accept.contains("text/event-stream")),
        "{:?}",
        get.headers
    );
    let waited = get.at.duration_since(broken_at);
    assert!(
        waited >= Duration::from_millis(BROKEN_STREAM_RETRY_MS),
        "A reconnected after {waited:?}, before the server's retry"
    );
    assert!(
        others_done < get.at,
        "B..H completed only {:?} after A reconnected: they waited for A",
        others_done.duration_since(get.at)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_json_body_does_not_hold_up_another_call() {
    let (fake, _server, client) = setup().await;
    // The slow call's headers and the first half of its JSON body are out;
    // the rest waits for the test.
    let slow = start_held(&client, 0, "json_rest");
    until_held(&fake, 1).await;
    let fast = start_call(&client, "json_echo", json!({"text": "fast"}));
    assert_eq!(text_from(fast).await, "fast");
    let streamed = start_held(&client, 1, "sse");
    until_held(&fake, 2).await;
    fake.answer(1, "fast stream");
    assert_eq!(text_from(streamed).await, "fast stream");
    assert!(!slow.is_finished(), "the slow body is not complete yet");

    fake.answer(0, "slow");
    assert_eq!(text_from(slow).await, "slow");
}

// ---- the server going away -------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_going_away_fails_every_call_in_flight_and_later_calls_fast() {
    let (fake, mut server, client) = setup().await;
    // Streams without event ids, streams with (whose resumption then finds
    // nobody listening), and JSON answers whose headers never come. Each
    // stream carries a ping: once the client has answered it, the client is
    // reading that stream.
    let kinds = ["sse", "sse_with_id", "json"];
    let ping_id = |n: usize| json!(format!("ping-{n}"));
    let calls: Vec<_> = (0..CALLS)
        .map(|n| {
            let answer = kinds[n % kinds.len()];
            start_call(
                &client,
                "hold",
                json!({"n": n, "answer": answer,
                    "request": {"jsonrpc": "2.0", "id": ping_id(n), "method": "ping"}}),
            )
        })
        .collect();
    until_held(&fake, CALLS).await;
    let streams = (0..CALLS).filter(|n| kinds[n % kinds.len()] != "json");
    for n in streams {
        bounded(
            "the client answering the ping on its stream",
            fake.wait_for(|fake| fake.response_to(&ping_id(n))),
        )
        .await;
    }

    let gone = Instant::now();
    server.go_away().await;
    fake.held.lock().expect("lock").clear();
    for (n, call) in calls.into_iter().enumerate() {
        let error = outcome_of(call).await.expect_err("the server is gone");
        let kind = kinds[n % kinds.len()];
        let transport = error
            .transport_error()
            .unwrap_or_else(|| panic!("call {n} ({kind}): not a transport error: {error:?}"));
        match (kind, transport) {
            ("sse", TransportError::StreamEnded { detail }) => assert!(
                detail.contains("broke before the response"),
                "call {n}: the cause is named: {detail}"
            ),
            ("sse_with_id", TransportError::Http { context, source }) => {
                assert_eq!(*context, "GET (resume the event stream)", "call {n}");
                assert!(!source.to_string().is_empty());
            }
            ("json", TransportError::Http { context, source }) => {
                assert_eq!(*context, "POST", "call {n}");
                assert!(!source.to_string().is_empty());
            }
            _ => panic!("call {n} ({kind}): unexpected error {error:?}"),
        }
    }
    let failed_within = gone.elapsed();
    assert!(
        failed_within < Duration::from_secs(5),
        "the calls failed only after {failed_within:?}"
    );

    let started = Instant::now();
    let error = bounded(
        "a call after the server went away",
        client.call_tool("json_echo", &args(json!({"text": "anyone?"}))),
    )
    .await
    .expect_err("nobody listens");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::Http {
                context: "POST",
                ..
            })
        ),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "failed after {:?}",
        started.elapsed()
    );
}

// ---- the server's own requests, cancellation --------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_requests_on_call_streams_are_answered_while_calls_are_in_flight() {
    let (fake, _server, client) = setup().await;
    // Call 0's stream carries a ping whose id is call 0's own id (the client
    // must not take it for call 0's answer); call 1's a sampling request.
    let calls = vec![
        start_call(
            &client,
            "hold",
            json!({"n": 0, "answer": "sse", "same_id": true,
                "request": {"jsonrpc": "2.0", "method": "ping"}}),
        ),
        start_call(
            &client,
            "hold",
            json!({"n": 1, "answer": "sse", "request": {"jsonrpc": "2.0", "id": "sample-1",
                "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}}),
        ),
        start_held(&client, 2, "sse"),
        start_held(&client, 3, "sse"),
    ];
    until_held(&fake, 4).await;
    let ping_id = fake.id_of(0);
    let (pong, refusal) = bounded(
        "the client's answers",
        fake.wait_for(|fake| {
            Some((
                fake.response_to(&ping_id)?,
                fake.response_to(&json!("sample-1"))?,
            ))
        }),
    )
    .await;
    assert_eq!(
        pong.body,
        json!({"jsonrpc": "2.0", "id": ping_id, "result": {}})
    );
    assert_eq!(refusal.body["id"], "sample-1");
    assert_eq!(refusal.body["error"]["code"], -32601, "{}", refusal.body);
    assert!(refusal.body.get("result").is_none());
    for answer in [&pong, &refusal] {
        assert_eq!(header(&answer.headers, "mcp-session-id"), Some(SESSION));
        assert_eq!(
            header(&answer.headers, "mcp-protocol-version"),
            Some(LATEST_PROTOCOL_VERSION)
        );
    }
    assert_in_flight(&calls, "the server's requests are not their answers");

    for n in 0..calls.len() {
        fake.answer(n as u64, &text_of(n));
    }
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(text_from(call).await, text_of(n));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_one_call_cancels_it_at_once_and_the_others_complete() {
    let (fake, _server, client) = setup().await;
    let mut calls: Vec<_> = (0..4).map(|n| start_held(&client, n, "sse")).collect();
    until_held(&fake, 4).await;
    let dropped_id = fake.id_of(2);

    let dropped = calls.remove(2);
    dropped.abort();
    let outcome = bounded("the aborted call", dropped).await;
    assert!(
        outcome.as_ref().is_err_and(|error| error.is_cancelled()),
        "the call was dropped before its answer: {outcome:?}"
    );
    let cancelled = bounded(
        "notifications/cancelled",
        fake.wait_for(|fake| fake.posts_of("notifications/cancelled").pop()),
    )
    .await;
    assert_eq!(cancelled.body["params"]["requestId"], dropped_id);
    assert_in_flight(&calls, "the cancellation comes while they are in flight");
    // The dropped call's event stream is released on the server too.
    let stream = {
        let held = fake.held.lock().expect("lock");
        match &held.iter().find(|held| held.n == 2).expect("held").pending {
            Pending::Stream(chunks) => chunks.clone(),
            _ => unreachable!("call 2 holds an event stream"),
        }
    };
    bounded("the dropped call's stream closing", stream.closed()).await;
    assert_in_flight(&calls, "closing one stream leaves the others open");

    for n in [0, 1, 3] {
        fake.answer(n, &text_of(n as usize));
    }
    for (n, call) in [0, 1, 3].into_iter().zip(calls) {
        assert_eq!(text_from(call).await, text_of(n));
    }
    assert_eq!(
        fake.posts_of("notifications/cancelled").len(),
        1,
        "only the dropped call is cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_without_an_id_fails_the_call_whose_answer_carried_it() {
    let (fake, _server, client) = setup().await;
    // A server that cannot read a request answers with an error whose id is
    // null. Over HTTP the answer says which request that is (the one whose
    // POST it answers), with any number of other calls in flight.
    let mut calls = vec![
        start_held(&client, 0, "sse"),
        start_held(&client, 1, "json"),
        start_held(&client, 2, "sse"),
    ];
    until_held(&fake, 3).await;
    let unreadable = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32600, "message": "Invalid Request"}});
    fake.answer_with(0, &unreadable);
    fake.answer_with(1, &unreadable);
    let last = calls.pop().expect("call 2");
    for (n, call) in calls.into_iter().enumerate() {
        let error = outcome_of(call)
            .await
            .expect_err("the server could not read it");
        assert_eq!(
            error.protocol_error().map(|error| error.code),
            Some(-32600),
            "call {n}: {error:?}"
        );
    }
    assert!(!last.is_finished(), "call 2 is not answered yet");
    fake.answer(2, &text_of(2));
    assert_eq!(text_from(last).await, text_of(2));
}

// ---- refusals ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_and_a_429_keep_their_www_authenticate_and_retry_after() {
    let (_fake, server, client) = setup().await;
    let challenge = format!(
        r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource""#,
        server.url.trim_end_matches("/mcp")
    );
    let unauthorized = start_call(&client, "unauthorized", json!({"challenge": challenge}));
    let limited = start_call(&client, "rate_limited", json!({}));
    let fine = start_call(&client, "json_echo", json!({"text": "fine"}));

    let error = outcome_of(unauthorized).await.expect_err("401");
    let status = error.http_status().expect("a status error");
    assert_eq!(status.status, 401);
    assert_eq!(status.www_authenticate.as_deref(), Some(challenge.as_str()));
    assert_eq!(status.retry_after, None);
    assert_eq!(status.body_excerpt, "log in first");

    let error = outcome_of(limited).await.expect_err("429");
    let status = error.http_status().expect("a status error");
    assert_eq!(status.status, 429);
    assert_eq!(status.retry_after.as_deref(), Some("3"));
    assert_eq!(status.www_authenticate, None);

    assert_eq!(
        text_from(fine).await,
        "fine",
        "a refusal fails its call only"
    );
}

// ---- a real server ------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_calls_to_server_everything_over_http_overlap() {
    let peer = everything_http();
    let client = Client::new(HttpTransport::new(HttpConfig::new(peer.url.clone())).expect("valid"));
    tokio::time::timeout(Duration::from_secs(60), client.initialize())
        .await
        .expect("initialized in time")
        .expect("initializes");
    // Each call takes 0.3 s on the server, in `steps` steps: eight in a row
    // take 2.4 s, eight at once about 0.3 s.
    let started = Instant::now();
    let calls: Vec<_> = (1..=CALLS)
        .map(|steps| {
            start_call(
                &client,
                "trigger-long-running-operation",
                json!({"duration": 0.3, "steps": steps}),
            )
        })
        .collect();
    for (steps, call) in (1..=CALLS).zip(calls) {
        assert_eq!(
            text_from(call).await,
            format!("Long running operation completed. Duration: 0.3 seconds, Steps: {steps}.")
        );
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_millis(1500),
        "eight 0.3 s calls took {elapsed:?}: they did not overlap"
    );
    bounded("close", client.close()).await.expect("closes");
}
