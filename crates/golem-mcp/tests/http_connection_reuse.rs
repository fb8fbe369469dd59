//! An answer that came on an event stream leaves its connection reusable:
//! the client reads the stream to its end before it hands the answer over,
//! so HTTP/1.1 keep-alive carries the next request on the same TCP
//! connection, in either era. A stream the server leaves open after the
//! answer delays no call beyond a short grace, once (answers wait again
//! once a stream ends promptly), and its connection is let go within the
//! drain's bounds (time, bytes, streams at once) or when the transport
//! closes.
//!
//! The fake here is a few lines of raw HTTP/1.1 on a `TcpListener`, not
//! the axum fake of `support::fake_http`: the point is where one response's
//! bytes are split between TCP writes (the answer event in one, the end of
//! the chunked body in another, after the server let the client run) and
//! how many connections the client opened, which an HTTP server library
//! hides. The tests run on a paused clock: the client's grace and bounds
//! are timers, and a paused clock moves only when nothing else can, so a
//! busy machine cannot make the grace run out while the server writes.
#![cfg(feature = "http")]

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use golem_mcp::{
    Client, ClientConfig, HttpConfig, HttpTransport, LATEST_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSION,
};
use serde_json::{Value, json};
use support::{bounded, raw};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::time::Instant;

/// How the fake ends an event stream after the answer event.
#[derive(Clone, Copy)]
enum Ending {
    /// In a write of its own, after yielding a few times: the client has
    /// read the answer, and acted on it, before the end of the body comes.
    Apart,
    /// It does not: the stream stays open until the client lets go.
    Never,
    /// After this many bytes of comments that follow the answer (in
    /// writes of 4 KiB), if the client reads them all.
    AfterBytes(usize),
    /// `Never` for the first stream the fake answers with, `Apart` for the
    /// others.
    NeverOnce,
}

/// How often the server yields between the answer event and the end of
/// its stream.
const YIELDS: usize = 8;

/// The drain's bounds, as `transports/http/drain.rs` documents them: how
/// long the rest of an answered stream is read, and how many such streams
/// at once.
const DRAIN_TIME: Duration = Duration::from_secs(1);
const MAX_DRAINS: usize = 4;

/// The fake, with what it counts.
struct Fake {
    url: String,
    /// TCP connections accepted so far.
    accepted: Arc<AtomicUsize>,
    /// The connection (its number, from 1) of each `tools/call`, in order.
    calls_on: Arc<Mutex<Vec<usize>>>,
    /// Connections the client has closed (the fake saw their end).
    released: watch::Receiver<usize>,
}

impl Fake {
    async fn start(ending: Ending) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
        let accepted = Arc::new(AtomicUsize::new(0));
        let (released_tx, released) = watch::channel(0);
        let released_tx = Arc::new(released_tx);
        let counted = Arc::clone(&accepted);
        let calls_on = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::new(Seen {
            streams: AtomicUsize::new(0),
            calls_on: Arc::clone(&calls_on),
        });
        tokio::spawn(async move {
            while let Ok((connection, _)) = listener.accept().await {
                let number = counted.fetch_add(1, Ordering::SeqCst) + 1;
                connection.set_nodelay(true).expect("TCP_NODELAY");
                let released = Arc::clone(&released_tx);
                let seen = Arc::clone(&seen);
                tokio::spawn(async move {
                    serve(connection, number, ending, &seen).await;
                    released.send_modify(|count| *count += 1);
                });
            }
        });
        Fake {
            url,
            accepted,
            calls_on,
            released,
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    /// The connection of each `tools/call` so far.
    fn calls_on(&self) -> Vec<usize> {
        self.calls_on.lock().expect("lock").clone()
    }

    /// Waits until the client has closed `count` connections (unbounded:
    /// the test bounds it).
    async fn released(&self, count: usize) {
        let mut released = self.released.clone();
        released
            .wait_for(|released| *released >= count)
            .await
            .expect("the fake runs");
    }
}

/// What the fake records across its connections.
struct Seen {
    /// Event streams answered with.
    streams: AtomicUsize,
    calls_on: Arc<Mutex<Vec<usize>>>,
}

impl Seen {
    /// How the next event stream ends.
    fn ending(&self, ending: Ending) -> Ending {
        let first = self.streams.fetch_add(1, Ordering::SeqCst) == 0;
        match ending {
            Ending::NeverOnce if first => Ending::Never,
            Ending::NeverOnce => Ending::Apart,
            ending => ending,
        }
    }
}

/// Serves connection `number`'s requests, one after the other, until the
/// client closes it (or breaks it).
async fn serve(connection: TcpStream, number: usize, ending: Ending, seen: &Seen) {
    let (read, mut write) = connection.into_split();
    let mut read = BufReader::new(read);
    while let Some((method, body)) = request(&mut read).await {
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if message["method"] == "tools/call" {
            seen.calls_on.lock().expect("lock").push(number);
        }
        let answered = match (method.as_str(), message["method"].as_str()) {
            ("POST", Some("server/discover")) => {
                json_answer(&mut write, &message, discovered()).await
            }
            ("POST", Some("initialize")) => json_answer(&mut write, &message, initialized()).await,
            ("POST", Some("tools/list")) => {
                stream_answer(&mut write, &message, tools(), seen.ending(ending)).await
            }
            ("POST", Some("tools/call")) => {
                stream_answer(&mut write, &message, echoed(), seen.ending(ending)).await
            }
            // Notifications; the standalone stream is not offered; a
            // session's end is acknowledged.
            ("POST", _) => status(&mut write, "202 Accepted").await,
            ("GET", _) => status(&mut write, "405 Method Not Allowed").await,
            _ => status(&mut write, "200 OK").await,
        };
        if answered.is_err() {
            return; // the client broke the connection mid-answer
        }
    }
}

/// Reads one request's method and body; `None` once the client closed the
/// connection.
async fn request(
    read: &mut BufReader<tokio::net::tcp::OwnedReadHalf>,
) -> Option<(String, Vec<u8>)> {
    let mut line = String::new();
    read.read_line(&mut line).await.ok().filter(|n| *n > 0)?;
    let method = line.split(' ').next()?.to_owned();
    let mut length = 0;
    loop {
        line.clear();
        read.read_line(&mut line).await.ok().filter(|n| *n > 0)?;
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    read.read_exact(&mut body).await.ok()?;
    Some((method, body))
}

async fn status(write: &mut OwnedWriteHalf, status: &str) -> std::io::Result<()> {
    let head = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
    write.write_all(head.as_bytes()).await
}

fn response(message: &Value, result: Value) -> String {
    json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string()
}

async fn json_answer(
    write: &mut OwnedWriteHalf,
    message: &Value,
    result: Value,
) -> std::io::Result<()> {
    let body = response(message, result);
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: one\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    write.write_all(format!("{head}{body}").as_bytes()).await
}

/// The answer as one event of a chunked event stream, written on its own,
/// then the stream's end as `ending` says.
async fn stream_answer(
    write: &mut OwnedWriteHalf,
    message: &Value,
    result: Value,
    ending: Ending,
) -> std::io::Result<()> {
    let event = format!("event: message\ndata: {}\n\n", response(message, result));
    let head =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
    write
        .write_all(format!("{head}{:x}\r\n{event}\r\n", event.len()).as_bytes())
        .await?;
    write.flush().await?;
    // Each yield lets the client's tasks run a round (hyper's connection
    // reads the answer, the stream's task parses it, ...).
    for _ in 0..YIELDS {
        tokio::task::yield_now().await;
    }
    match ending {
        Ending::Apart | Ending::NeverOnce => {}
        // Left open: the next read of the connection (`serve`) ends when
        // the client lets go of it.
        Ending::Never => return Ok(()),
        Ending::AfterBytes(bytes) => {
            let comment = format!(": {}\n", "x".repeat(4093));
            for _ in 0..bytes.div_ceil(comment.len()) {
                write
                    .write_all(format!("{:x}\r\n{comment}\r\n", comment.len()).as_bytes())
                    .await?;
            }
        }
    }
    write.write_all(b"0\r\n\r\n").await
}

fn discovered() -> Value {
    json!({"resultType": "complete", "supportedVersions": [MODERN_PROTOCOL_VERSION],
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake", "version": "1"}},
        "ttlMs": 0, "cacheScope": "private"})
}

fn initialized() -> Value {
    json!({"protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {"tools": {}},
        "serverInfo": {"name": "fake", "version": "1"}})
}

fn tools() -> Value {
    json!({"resultType": "complete", "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
}

fn echoed() -> Value {
    json!({"resultType": "complete", "content": [{"type": "text", "text": "echo"}]})
}

async fn connect(fake: &Fake, protocol: &str) -> Client {
    let transport = HttpTransport::new(HttpConfig::new(&fake.url)).expect("valid config");
    let config = ClientConfig::default().with_protocol(protocol);
    let client = Client::with_config(transport, config);
    bounded(client.initialize()).await.expect("connects");
    client
}

async fn calls(client: &Client, count: usize) {
    for _ in 0..count {
        let result = bounded(client.call_tool("echo", &raw("{}")))
            .await
            .expect("called");
        assert_eq!(result.content.len(), 1);
    }
}

async fn twenty_calls_on_one_connection(protocol: &str) {
    let fake = Fake::start(Ending::Apart).await;
    let client = connect(&fake, protocol).await;
    calls(&client, 20).await;
    assert_eq!(
        fake.accepted(),
        1,
        "every request went over the first connection ({protocol})"
    );
    bounded(client.close()).await.expect("closes");
}

#[tokio::test(start_paused = true)]
async fn modern_calls_answered_on_event_streams_share_one_connection() {
    twenty_calls_on_one_connection(MODERN_PROTOCOL_VERSION).await;
}

#[tokio::test(start_paused = true)]
async fn legacy_calls_answered_on_event_streams_share_one_connection() {
    twenty_calls_on_one_connection(LATEST_PROTOCOL_VERSION).await;
}

#[tokio::test(start_paused = true)]
async fn what_follows_an_answer_is_read_to_the_end_within_the_byte_bound() {
    // 16 KiB of comments after each answer: read, and the connection is
    // reused.
    let fake = Fake::start(Ending::AfterBytes(16 * 1024)).await;
    let client = connect(&fake, MODERN_PROTOCOL_VERSION).await;
    calls(&client, 5).await;
    assert_eq!(fake.accepted(), 1, "the connection was reused");
    bounded(client.close()).await.expect("closes");

    // 1 MiB: the client stops reading at its bound (64 KiB) and lets the
    // connection go, at once; the server's writes fail.
    let fake = Fake::start(Ending::AfterBytes(1024 * 1024)).await;
    let client = connect(&fake, MODERN_PROTOCOL_VERSION).await;
    let start = Instant::now();
    calls(&client, 2).await;
    bounded(fake.released(2)).await;
    assert!(
        start.elapsed() < DRAIN_TIME,
        "let go at the byte bound, not at the time bound"
    );
    assert_eq!(
        fake.accepted(),
        2,
        "a new connection for the call after such an answer"
    );
    bounded(client.close()).await.expect("closes");
}

#[tokio::test(start_paused = true)]
async fn a_stream_left_open_after_its_answer_holds_up_no_call_and_is_let_go() {
    let fake = Fake::start(Ending::Never).await;
    let client = connect(&fake, MODERN_PROTOCOL_VERSION).await;
    let calls_made = MAX_DRAINS + 2;
    let start = Instant::now();
    calls(&client, calls_made).await;
    // The first answer waited the grace (milliseconds) for the end of its
    // stream; the later ones were handed over at once.
    let called = start.elapsed();
    assert!(
        called < Duration::from_millis(50),
        "the calls took {called:?}"
    );
    // Each call found the connections before it busy with a stream.
    assert_eq!(fake.accepted(), calls_made);
    // Beyond MAX_DRAINS streams read at once, a stream is let go at once...
    bounded(fake.released(calls_made - MAX_DRAINS)).await;
    assert!(start.elapsed() < DRAIN_TIME);
    // ... and the others when the drain's time is up: nothing is left open.
    bounded(fake.released(calls_made)).await;
    assert!(start.elapsed() >= DRAIN_TIME);
    bounded(client.close()).await.expect("closes");
}

#[tokio::test(start_paused = true)]
async fn closing_the_transport_lets_go_of_a_stream_being_read_after_its_answer() {
    let fake = Fake::start(Ending::Never).await;
    let client = connect(&fake, MODERN_PROTOCOL_VERSION).await;
    calls(&client, 2).await;
    let closed_at = Instant::now();
    bounded(client.close()).await.expect("closes");
    bounded(fake.released(2)).await;
    assert!(
        closed_at.elapsed() < DRAIN_TIME,
        "the drains were aborted by the close, not timed out"
    );
}

#[tokio::test(start_paused = true)]
async fn answers_wait_for_the_ends_of_their_streams_again_once_a_stream_ends_promptly() {
    let fake = Fake::start(Ending::NeverOnce).await;
    let client = connect(&fake, MODERN_PROTOCOL_VERSION).await;
    // The first stream stays open: its answer waited the grace, and the
    // ones after it are handed over at once, the rest of their streams
    // read behind them, until one ends within the grace of its answer.
    // (Handed over at once, the calls would take turns on three
    // connections, each busy with the last call's stream when the next
    // one starts.)
    calls(&client, 23).await;
    let calls_on = fake.calls_on();
    let last = &calls_on[3..];
    assert!(
        last.iter().all(|number| *number == last[0]),
        "answers wait for their streams' ends again, so each call reuses the connection of the one before: {calls_on:?}"
    );
    bounded(client.close()).await.expect("closes");
}
