//! Nothing outlives a client: closing it, or dropping its last clone, ends
//! its inbound task and every task its transport started, and releases what
//! the transport holds (a stdio server's whole process group, an HTTP
//! session), over every transport, with calls in flight or not.
//!
//! Each test runs on a Tokio runtime of its own and counts its tasks with
//! the runtime's metrics (`num_alive_tasks`): before connecting, while
//! connected, and after the end. Ends that happen on a task (an aborted task
//! is dropped at the runtime's next turn; a dropped stdio transport ends its
//! server on the supervising task; a dropped HTTP transport ends its session
//! on a task) are polled for, within a bound, never waited for with a fixed
//! sleep: nothing signals a runtime's task count. The HTTP server (the fake
//! of `support/fake_http.rs`) runs on a runtime of its own, so that its
//! tasks are not counted with the client's, and says when it has the calls
//! and the session's end.
//!
//! The process checks read `/proc` and fail on a system without it, rather
//! than pass because every process looks gone.

mod support;

use support::calls::{CALLS, Call, call_text, drop_calls, spawn_call};
use support::fake_http::FakeHttp;
use support::memory::next_message;
use support::{
    PATIENCE, bounded, polled, process_alive, reaped, scratch_path, until_gone,
    wrapped_with_grandchild,
};

use std::path::PathBuf;

use golem_mcp::memory::MemoryPeer;
use golem_mcp::{Client, HttpConfig, HttpTransport, StdioTransport};
use serde_json::json;
use tokio::runtime::{Handle, Runtime};

// ---- runtimes and task counts ------------------------------------------------

/// A runtime for one test, with nothing else on it.
fn current_thread() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// A runtime for one test whose tasks run in parallel.
fn multi_thread() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// How many tasks the current runtime has that have not finished (the
/// future given to `block_on` is not one of them).
fn alive_tasks() -> usize {
    Handle::current().metrics().num_alive_tasks()
}

/// Polls until the runtime has `baseline` tasks again, within the bound.
async fn tasks_back_to(baseline: usize, when: &str) {
    let back = polled(async || (alive_tasks() == baseline).then_some(())).await;
    assert!(
        back.is_some(),
        "{when}: {} tasks still alive after {PATIENCE:?}, {baseline} before the client was made",
        alive_tasks()
    );
}

/// Starts `CALLS` calls of `tool`, with `{"text": "call N"}`, on tasks of
/// their own.
fn calls_of(client: &Client, tool: &str) -> Vec<Call> {
    let call = |n| spawn_call(client, tool, json!({"text": format!("call {n}")}));
    (0..CALLS).map(call).collect()
}

// ---- processes -----------------------------------------------------------------

/// A stdio client, initialized, with the server's and the grandchild's
/// pids.
struct StdioServer {
    client: Client,
    pid: u32,
    grandchild: u32,
    pid_file: PathBuf,
}

async fn connect_stdio(name: &str) -> StdioServer {
    let pid_file = scratch_path(name);
    let transport = StdioTransport::spawn(wrapped_with_grandchild(&pid_file)).expect("spawns");
    let pid = transport.pid().expect("running");
    let client = Client::new(transport);
    bounded(client.initialize()).await.expect("initializes");
    // The wrapper wrote the pid file before it became the server, which
    // answered the handshake: the file is complete.
    let grandchild = std::fs::read_to_string(&pid_file)
        .expect("the pid file")
        .trim()
        .parse()
        .expect("a pid");
    assert!(process_alive(pid), "the server runs");
    assert!(process_alive(grandchild), "the grandchild runs");
    StdioServer {
        client,
        pid,
        grandchild,
        pid_file,
    }
}

/// The tasks a connected stdio client adds: its inbound task, the stderr
/// drain and the process supervisor.
const STDIO_TASKS: usize = 3;

fn assert_stdio_tasks_running(baseline: usize) {
    let alive = alive_tasks();
    assert!(
        alive >= baseline + STDIO_TASKS,
        "the inbound task, the stderr drain and the process supervisor run: {alive} tasks \
         alive, {baseline} before"
    );
}

// ---- stdio -------------------------------------------------------------------

#[test]
fn closing_a_stdio_client_ends_its_tasks_and_its_process_group() {
    current_thread().block_on(async {
        let baseline = alive_tasks();
        let server = connect_stdio("close.pid").await;
        assert_stdio_tasks_running(baseline);

        bounded(server.client.close()).await.expect("closes");
        assert!(reaped(server.pid), "close reaped the server");
        assert!(
            until_gone(server.grandchild).await,
            "the grandchild was killed with the group"
        );
        // The client is still held: closing alone released everything.
        tasks_back_to(baseline, "after close, the client still held").await;
        drop(server.client);
        tasks_back_to(baseline, "after the closed client was dropped").await;
        let _ = std::fs::remove_file(&server.pid_file);
    });
}

#[test]
fn dropping_the_last_clone_of_a_stdio_client_ends_its_tasks_and_its_process_group() {
    current_thread().block_on(async {
        let baseline = alive_tasks();
        let server = connect_stdio("drop.pid").await;
        assert_stdio_tasks_running(baseline);
        let running = alive_tasks();

        // Dropping a clone that is not the last one ends nothing.
        let last = server.client.clone();
        drop(server.client);
        bounded(last.ping())
            .await
            .expect("the last clone still works");
        assert_eq!(alive_tasks(), running, "every task still runs");
        assert!(process_alive(server.pid) && process_alive(server.grandchild));

        drop(last);
        assert!(until_gone(server.pid).await, "the server ended");
        assert!(
            until_gone(server.grandchild).await,
            "the grandchild ended with the group"
        );
        tasks_back_to(baseline, "after the last clone was dropped").await;
        // The supervisor, now gone, reaped the server on its way out.
        assert!(reaped(server.pid), "no zombie is left behind");
        let _ = std::fs::remove_file(&server.pid_file);
    });
}

#[test]
fn a_client_dropped_after_its_eight_calls_in_flight_leaves_no_task_and_no_process() {
    multi_thread().block_on(async {
        let baseline = alive_tasks();
        let server = connect_stdio("in-flight.pid").await;
        let calls = calls_of(&server.client, "hold");
        // The fake answers `held` once it holds every call: all eight are in
        // flight.
        let held = call_text(&server.client, "held", json!({"count": CALLS}))
            .await
            .expect("held answered");
        assert_eq!(held, CALLS.to_string());
        let alive = alive_tasks();
        assert!(
            alive >= baseline + STDIO_TASKS + CALLS,
            "the client's tasks and the eight calls' run: {alive} tasks alive, {baseline} before"
        );

        drop_calls(calls).await;
        drop(server.client);
        assert!(until_gone(server.pid).await, "the server ended");
        assert!(
            until_gone(server.grandchild).await,
            "the grandchild ended with the group"
        );
        tasks_back_to(baseline, "after the calls and then the client were dropped").await;
        assert!(reaped(server.pid), "no zombie is left behind");
        let _ = std::fs::remove_file(&server.pid_file);
    });
}

// ---- in memory -----------------------------------------------------------------

/// A client over the in-memory transport, through the handshake.
async fn connect_memory() -> (Client, MemoryPeer) {
    support::memory::connected(json!({"tools": {}})).await
}

/// Waits, within the bound, until the client's end of the connection is
/// gone: the peer reads the end of it (after any message still queued).
async fn assert_transport_released(peer: &mut MemoryPeer) {
    bounded(async { while peer.recv().await.is_some() {} }).await;
}

#[test]
fn closing_a_memory_client_ends_its_inbound_task() {
    current_thread().block_on(async {
        let baseline = alive_tasks();
        let (client, mut peer) = connect_memory().await;
        assert_eq!(alive_tasks(), baseline + 1, "the inbound task runs");

        bounded(client.close()).await.expect("closes");
        tasks_back_to(baseline, "after close, the client still held").await;
        drop(client);
        tasks_back_to(baseline, "after the closed client was dropped").await;
        assert_transport_released(&mut peer).await;
    });
}

#[test]
fn dropping_the_last_clone_of_a_memory_client_ends_its_inbound_task() {
    current_thread().block_on(async {
        let baseline = alive_tasks();
        let (client, mut peer) = connect_memory().await;
        assert_eq!(alive_tasks(), baseline + 1, "the inbound task runs");

        let last = client.clone();
        drop(client);
        let (pinged, ()) = tokio::join!(last.ping(), async {
            let ping = next_message(&mut peer).await;
            assert_eq!(ping["method"], "ping");
            peer.send(&json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}}));
        });
        pinged.expect("the last clone still works");
        assert_eq!(alive_tasks(), baseline + 1, "the inbound task still runs");

        drop(last);
        tasks_back_to(baseline, "after the last clone was dropped").await;
        assert_transport_released(&mut peer).await;
    });
}

// ---- HTTP ------------------------------------------------------------------------

/// The fake HTTP server, served by a runtime of its own (tools used here:
/// `echo`, `json_echo`, and `hold`, an event stream that never answers).
struct HttpServer {
    fake: FakeHttp,
    /// Dropped last, after the client's runtime.
    _runtime: Runtime,
}

fn http_server() -> HttpServer {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime");
    HttpServer {
        fake: runtime.block_on(FakeHttp::start()),
        _runtime: runtime,
    }
}

async fn connect_http(server: &HttpServer) -> Client {
    let config = HttpConfig::new(server.fake.url());
    let client = Client::new(HttpTransport::new(config).expect("a config"));
    bounded(client.initialize()).await.expect("initializes");
    client
}

/// Eight calls at once, half answered on event streams (each read by a task
/// of the transport's), half as JSON, on as many pooled connections.
async fn eight_echoes(client: &Client) {
    let calls = (0..CALLS).map(|n| {
        let tool = if n % 2 == 0 { "echo" } else { "json_echo" };
        async move {
            let text = format!("call {n}");
            let answer = call_text(client, tool, json!({"text": text})).await;
            assert_eq!(answer.expect("answered"), text);
        }
    });
    futures_util::future::join_all(calls).await;
}

/// Waits, within the bound, until the server has seen `count` session
/// ends.
async fn until_deletes(fake: &FakeHttp, count: usize) {
    bounded(fake.wait_for(|fake| (fake.deletes().len() >= count).then_some(()))).await;
}

#[test]
fn closing_an_http_client_ends_its_tasks_and_its_session() {
    let server = http_server();
    current_thread().block_on(async {
        let baseline = alive_tasks();
        let client = connect_http(&server).await;
        eight_echoes(&client).await;
        assert!(alive_tasks() > baseline, "the inbound task runs");

        bounded(client.close()).await.expect("closes");
        assert_eq!(server.fake.deletes().len(), 1, "the session was ended");
        tasks_back_to(baseline, "after close, the client still held").await;
        drop(client);
        tasks_back_to(baseline, "after the closed client was dropped").await;
    });
}

#[test]
fn dropping_the_last_clone_of_an_http_client_ends_its_tasks_and_its_session() {
    let server = http_server();
    current_thread().block_on(async {
        let baseline = alive_tasks();
        let client = connect_http(&server).await;
        eight_echoes(&client).await;
        let last = client.clone();
        drop(client);
        bounded(last.ping())
            .await
            .expect("the last clone still works");
        assert_eq!(server.fake.deletes().len(), 0);

        drop(last);
        until_deletes(&server.fake, 1).await;
        tasks_back_to(baseline, "after the last clone was dropped").await;
    });
}

#[test]
fn an_http_client_dropped_after_its_eight_calls_in_flight_leaves_no_task() {
    let server = http_server();
    multi_thread().block_on(async {
        let baseline = alive_tasks();
        let client = connect_http(&server).await;
        let calls = calls_of(&client, "hold");
        server.fake.until_held(CALLS).await;

        drop_calls(calls).await;
        drop(client);
        until_deletes(&server.fake, 1).await;
        tasks_back_to(baseline, "after the calls and then the client were dropped").await;
    });
}
