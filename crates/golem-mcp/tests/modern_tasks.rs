//! Tools called as tasks in the shape of the tasks extension of 2026-07-28
//! (`io.modelcontextprotocol/tasks`, ADR 0025): against a real server of
//! the extension (FastMCP with fastmcp-tasks, `peers/python/tasks_server.py`,
//! installed by `scripts/install-peers.sh`; a missing peer fails the test),
//! over stdio and HTTP, and, for the faults and the timing, against a
//! scripted in-memory server (time paused, so intervals are exact).

mod support;

use std::time::Duration;

use golem_mcp::memory::{MemoryPeer, memory_pair};
use golem_mcp::{
    Client, ClientConfig, ElicitationRequest, ElicitationResponse, Era, Error, HttpConfig,
    HttpTransport, MODERN_PROTOCOL_VERSION, StdioTransport, Task, TaskOptions, TaskStatus,
    ToolInfo,
};
use serde_json::{Value, json};
use support::memory::next_message;
use support::{peer_bounded, polled};
use tokio::sync::mpsc;

const CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const TASKS: &str = "io.modelcontextprotocol/tasks";

fn tasks_config() -> ClientConfig {
    ClientConfig::default().with_tasks(TaskOptions::default())
}

/// A client of the real tasks server over stdio, set up with `config`,
/// connected, and its tools.
async fn real(config: ClientConfig) -> (Client, Vec<ToolInfo>) {
    let client = Client::with_config(
        StdioTransport::spawn(support::tasks_stdio()).expect("spawns"),
        config,
    );
    let server = peer_bounded(client.initialize())
        .await
        .expect("initializes");
    assert_eq!(server.era(), Era::Modern);
    let tools = peer_bounded(client.list_tools()).await.expect("lists");
    (client, tools)
}

fn tool<'a>(tools: &'a [ToolInfo], name: &str) -> &'a ToolInfo {
    tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("{name} is listed"))
}

#[tokio::test]
async fn a_task_is_polled_to_its_result_showing_each_status() {
    let (client, tools) = real(tasks_config()).await;
    assert!(
        client.offers_tool_tasks(),
        "the server declares the extension"
    );
    let mut seen: Vec<(String, TaskStatus)> = Vec::new();
    let result = peer_bounded(client.call_tool_as_task(
        tool(&tools, "slow_echo"),
        &json!({"message": "tides"}),
        &TaskOptions::default(),
        |task: &Task| seen.push((task.task_id.clone(), task.status)),
    ))
    .await
    .expect("the task completes");
    assert_eq!(result.text(), "Echo: tides");
    assert_eq!(
        seen.first().map(|(_, status)| *status),
        Some(TaskStatus::Working)
    );
    assert_eq!(
        seen.last().map(|(_, status)| *status),
        Some(TaskStatus::Completed)
    );
    // The finished task is still there to read.
    let (task_id, _) = seen.last().expect("seen");
    let got = client.get_task(task_id).await.expect("tasks/get");
    assert_eq!(got.status, TaskStatus::Completed);
    assert_eq!(got.poll_interval, Some(Duration::from_millis(200)));
    client.close().await.expect("closes");
}

#[tokio::test]
async fn plain_calls_drive_tasks_when_enabled_and_without_it_nothing_is_declared() {
    // Not enabled: nothing is declared, so the server must refuse a tool it
    // runs only as a task (-32021), and the client refuses task requests
    // before sending them.
    let (client, tools) = real(ClientConfig::default()).await;
    let refused = peer_bounded(client.call_tool("slow_echo", &json!({"message": "x"})))
        .await
        .expect_err("the server needs the extension declared");
    assert_eq!(
        refused.protocol_error().map(|error| error.code),
        Some(-32021),
        "{refused}"
    );
    let not_enabled = client
        .call_tool_as_task(
            tool(&tools, "slow_echo"),
            &json!({"message": "x"}),
            &TaskOptions::default(),
            |_| {},
        )
        .await
        .expect_err("not enabled");
    assert!(
        matches!(&not_enabled, Error::NotSupported { detail, .. } if detail.contains("ClientConfig::with_tasks")),
        "{not_enabled}"
    );
    client.close().await.expect("closes");

    // Enabled: a plain call the server runs as a task returns its result,
    // and one it runs at once is untouched.
    let (client, _) = real(tasks_config()).await;
    let result = peer_bounded(client.call_tool("slow_echo", &json!({"message": "plain"})))
        .await
        .expect("driven to its result");
    assert_eq!(result.text(), "Echo: plain");
    let result = peer_bounded(client.call_tool("echo", &json!({"message": "now"})))
        .await
        .expect("at once");
    assert_eq!(result.text(), "Echo: now");
    // A tool error is a completed task whose result says so.
    let broken = peer_bounded(client.call_tool("broken", &json!({})))
        .await
        .expect("a result");
    assert!(
        broken.is_error && broken.text().contains("it broke"),
        "{}",
        broken.text()
    );
    client.close().await.expect("closes");
}

#[tokio::test]
async fn a_task_that_needs_input_gets_it_through_the_handler_and_tasks_update() {
    let (asked_sender, mut asked) = mpsc::unbounded_channel();
    let config = tasks_config().with_elicitation(move |request: ElicitationRequest, _| {
        let asked_sender = asked_sender.clone();
        async move {
            let ElicitationRequest::Form { message, .. } = request else {
                return Ok(ElicitationResponse::Cancel);
            };
            let _ = asked_sender.send(message);
            let mut content = serde_json::Map::new();
            content.insert("ok".into(), json!(true));
            Ok(ElicitationResponse::Accept(content))
        }
    });
    let (client, tools) = real(config).await;
    let mut statuses = Vec::new();
    let result = peer_bounded(client.call_tool_as_task(
        tool(&tools, "confirm"),
        &json!({"question": "Deploy?"}),
        &TaskOptions::default(),
        |task: &Task| statuses.push(task.status),
    ))
    .await
    .expect("the task completes");
    assert_eq!(result.text(), "confirmed: true");
    assert!(
        statuses.contains(&TaskStatus::InputRequired),
        "{statuses:?}"
    );
    assert_eq!(asked.recv().await.as_deref(), Some("Deploy?"));
    assert!(asked.try_recv().is_err(), "the question was answered once");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn dropping_the_call_cancels_the_task_on_the_server() {
    let (client, tools) = real(tasks_config()).await;
    let (id_sender, mut ids) = mpsc::unbounded_channel();
    let (arguments, options) = (json!({"seconds": 60}), TaskOptions::default());
    let call = client.call_tool_as_task(
        tool(&tools, "sleepy"),
        &arguments,
        &options,
        move |task: &Task| {
            let _ = id_sender.send(task.task_id.clone());
        },
    );
    let task_id = tokio::select! {
        result = call => panic!("sleepy ended: {result:?}"),
        id = ids.recv() => id.expect("a task id"),
    };
    // The call was dropped: its guard cancels the task on a task of its own.
    let cancelled = polled(async || {
        let task = client.get_task(&task_id).await.ok()?;
        (task.status == TaskStatus::Cancelled).then_some(task)
    })
    .await;
    assert!(cancelled.is_some(), "task {task_id} was never cancelled");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn an_unknown_task_and_the_legacy_only_calls_say_so() {
    let (client, _) = real(tasks_config()).await;
    let unknown = client.get_task("no-such-task").await.expect_err("unknown");
    assert_eq!(
        unknown.protocol_error().map(|error| error.code),
        Some(-32602),
        "{unknown}"
    );
    let unknown = client
        .cancel_task("no-such-task")
        .await
        .expect_err("unknown");
    assert_eq!(
        unknown.protocol_error().map(|error| error.code),
        Some(-32602),
        "{unknown}"
    );
    let listed = client.list_tasks(None).await.expect_err("no tasks/list");
    assert!(
        matches!(&listed, Error::NotSupported { operation, .. } if operation == "tasks/list"),
        "{listed}"
    );
    // cancel_task returns the state after the acknowledgement.
    let (id_sender, mut ids) = mpsc::unbounded_channel();
    let tools = client.list_tools().await.expect("lists");
    let options = TaskOptions::default().with_cancel_on_drop(false);
    let arguments = json!({});
    let call = client.call_tool_as_task(
        tool(&tools, "sleepy"),
        &arguments,
        &options,
        move |task: &Task| {
            let _ = id_sender.send(task.task_id.clone());
        },
    );
    let task_id = tokio::select! {
        result = call => panic!("sleepy ended: {result:?}"),
        id = ids.recv() => id.expect("a task id"),
    };
    let after = peer_bounded(client.cancel_task(&task_id))
        .await
        .expect("cancelled");
    assert_eq!(after.task_id, task_id);
    client.close().await.expect("closes");
}

#[tokio::test]
async fn over_http_the_task_requests_name_the_task() {
    let peer = support::tasks_http();
    let transport = HttpTransport::new(HttpConfig::new(&peer.url)).expect("a transport");
    let client = Client::with_config(transport, tasks_config());
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    let tools = peer_bounded(client.list_tools()).await.expect("lists");
    let result = peer_bounded(client.call_tool_as_task(
        tool(&tools, "slow_echo"),
        &json!({"message": "over http"}),
        &TaskOptions::default(),
        |_| {},
    ))
    .await
    .expect("the task completes over HTTP");
    assert_eq!(result.text(), "Echo: over http");
    client.close().await.expect("closes");
}

// ---- the scripted server ------------------------------------------------------------

/// Answers the probe as a modern server declaring the extension; returns
/// the probe.
async fn answer_probe(peer: &mut MemoryPeer) -> Value {
    let probe = next_message(peer).await;
    assert_eq!(probe["method"], "server/discover", "{probe}");
    peer.send(&json!({"jsonrpc": "2.0", "id": probe["id"], "result": {
        "resultType": "complete", "supportedVersions": [MODERN_PROTOCOL_VERSION],
        "capabilities": {"tools": {}, "extensions": {TASKS: {}}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "1"}},
    }}));
    probe
}

async fn scripted(config: ClientConfig) -> (Client, MemoryPeer, Value) {
    let (transport, mut peer) = memory_pair();
    let client = Client::with_config(transport, config);
    let (connected, probe) = tokio::join!(client.initialize(), answer_probe(&mut peer));
    connected.expect("connects");
    (client, peer, probe)
}

fn task(id: &str, status: &str, poll_ms: Option<u64>) -> Value {
    let mut task = json!({"taskId": id, "status": status, "ttlMs": 60000,
        "createdAt": "2026-07-28T10:00:00Z", "lastUpdatedAt": "2026-07-28T10:00:00Z"});
    if let Some(poll_ms) = poll_ms {
        task["pollIntervalMs"] = json!(poll_ms);
    }
    task
}

fn answer(peer: &MemoryPeer, request: &Value, mut result: Value, result_type: &str) {
    result["resultType"] = json!(result_type);
    peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
}

/// The next request, which must be `method`.
async fn expect(peer: &mut MemoryPeer, method: &str) -> Value {
    let request = next_message(peer).await;
    assert_eq!(request["method"], method, "{request}");
    request
}

#[tokio::test]
async fn the_extension_is_declared_on_every_modern_request_only_when_enabled() {
    let (client, mut peer, probe) = scripted(ClientConfig::default()).await;
    assert!(
        probe["params"]["_meta"][CAPABILITIES]
            .get("extensions")
            .is_none(),
        "{probe}"
    );
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", &json!({})).await }
    });
    let request = expect(&mut peer, "tools/call").await;
    assert!(
        request["params"]["_meta"][CAPABILITIES]
            .get("extensions")
            .is_none(),
        "{request}"
    );
    // A server that answers with a task all the same breaks the rule.
    answer(&peer, &request, task("t1", "working", None), "task");
    let refused = call.await.expect("joins").expect_err("undeclared task");
    assert!(
        matches!(&refused, Error::InvalidResponse { detail, .. } if detail.contains("did not declare the tasks extension")),
        "{refused}"
    );

    let (client, mut peer, probe) = scripted(tasks_config()).await;
    assert_eq!(
        probe["params"]["_meta"][CAPABILITIES]["extensions"],
        json!({TASKS: {}})
    );
    let listing = tokio::spawn({
        let client = client.clone();
        async move { client.list_prompts().await }
    });
    let request = expect(&mut peer, "prompts/list").await;
    assert_eq!(
        request["params"]["_meta"][CAPABILITIES]["extensions"],
        json!({TASKS: {}})
    );
    answer(&peer, &request, json!({"prompts": []}), "complete");
    listing.await.expect("joins").expect("listed");
}

#[tokio::test(start_paused = true)]
async fn the_poll_interval_is_the_servers_within_the_bounds() {
    let (client, mut peer, _) = scripted(tasks_config()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("slow", &json!({})).await }
    });
    let request = expect(&mut peer, "tools/call").await;
    answer(&peer, &request, task("t1", "working", Some(300)), "task");
    let mut since = tokio::time::Instant::now();
    // The server's interval; then one beyond the most (5 s) and one below
    // the least (100 ms); then none given (1 s).
    for (interval, next_poll_ms) in [
        (300, Some(3_600_000)),
        (5_000, Some(0)),
        (100, None),
        (1_000, None),
    ] {
        let poll = expect(&mut peer, "tasks/get").await;
        assert_eq!(since.elapsed(), Duration::from_millis(interval));
        assert_eq!(poll["params"]["taskId"], "t1");
        answer(
            &peer,
            &poll,
            task("t1", "working", next_poll_ms),
            "complete",
        );
        since = tokio::time::Instant::now();
    }
    let poll = expect(&mut peer, "tasks/get").await;
    let mut done = task("t1", "completed", None);
    done["result"] =
        json!({"content": [{"type": "text", "text": "done"}], "resultType": "complete"});
    answer(&peer, &poll, done, "complete");
    let result = call.await.expect("joins").expect("completes");
    assert_eq!(result.text(), "done");
}

#[tokio::test(start_paused = true)]
async fn a_failed_task_is_the_calls_error_and_a_cancelled_one_says_so() {
    let (client, mut peer, _) = scripted(tasks_config()).await;
    for (ending, extra) in [
        (
            "failed",
            json!({"error": {"code": -32603, "message": "rate limited"}, "statusMessage": "gave up"}),
        ),
        (
            "cancelled",
            json!({"statusMessage": "stopped by an operator"}),
        ),
    ] {
        let call = tokio::spawn({
            let client = client.clone();
            async move { client.call_tool("slow", &json!({})).await }
        });
        let request = expect(&mut peer, "tools/call").await;
        answer(&peer, &request, task("t2", "working", Some(100)), "task");
        let poll = expect(&mut peer, "tasks/get").await;
        let mut over = task("t2", ending, Some(100));
        for (key, value) in extra.as_object().expect("an object") {
            over[key] = value.clone();
        }
        answer(&peer, &poll, over, "complete");
        let error = call.await.expect("joins").expect_err(ending);
        match ending {
            "failed" => {
                assert_eq!(
                    error.protocol_error().map(|error| error.code),
                    Some(-32603),
                    "{error}"
                );
                assert!(
                    error.to_string().contains("tools/call slow (task t2)"),
                    "{error}"
                );
            }
            _ => assert!(
                matches!(&error, Error::TaskCancelled { task_id, status_message, .. }
                    if task_id == "t2" && status_message.as_deref() == Some("stopped by an operator")),
                "{error}"
            ),
        }
    }
    // Nothing is cancelled for a task that is over.
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("t", &json!({})).await }
    });
    let request = expect(&mut peer, "tools/call").await;
    answer(&peer, &request, json!({"content": []}), "complete");
    call.await.expect("joins").expect("a result");
}

#[tokio::test(start_paused = true)]
async fn a_poll_about_another_task_or_a_task_on_another_method_is_refused() {
    let (client, mut peer, _) = scripted(tasks_config()).await;
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("slow", &json!({})).await }
    });
    let request = expect(&mut peer, "tools/call").await;
    answer(&peer, &request, task("mine", "working", Some(100)), "task");
    let poll = expect(&mut peer, "tasks/get").await;
    answer(
        &peer,
        &poll,
        task("theirs", "working", Some(100)),
        "complete",
    );
    let error = call.await.expect("joins").expect_err("another task");
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error}");
    // The abandoned task is cancelled.
    let cancel = expect(&mut peer, "tasks/cancel").await;
    assert_eq!(cancel["params"]["taskId"], "mine");

    let listing = tokio::spawn({
        let client = client.clone();
        async move { client.list_prompts().await }
    });
    let request = expect(&mut peer, "prompts/list").await;
    answer(&peer, &request, task("t3", "working", None), "task");
    let error = listing
        .await
        .expect("joins")
        .expect_err("not a task method");
    assert!(
        error.to_string().contains("only tools/call may be"),
        "{error}"
    );
}

#[tokio::test]
async fn the_legacy_shape_is_refused_on_a_modern_connection_without_the_extension() {
    let (client, _peer, _) = scripted(ClientConfig::default()).await;
    for error in [
        client.get_task("t").await.expect_err("not enabled"),
        client.cancel_task("t").await.expect_err("not enabled"),
        client.list_tasks(None).await.expect_err("legacy only"),
    ] {
        assert!(matches!(error, Error::NotSupported { .. }), "{error}");
    }
}
