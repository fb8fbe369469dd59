//! Tools called as tasks (2025-11-25): against the reference server (its
//! `simulate-research-query` must run as a task) and, for the faults,
//! against scripted in-memory servers.

mod support;

use std::sync::Arc;
use std::time::Duration;

use golem_mcp::memory::memory_pair;
use golem_mcp::{
    Client, ClientConfig, ElicitationRequest, ElicitationResponse, Error, LATEST_PROTOCOL_VERSION,
    StdioTransport, Task, TaskOptions, TaskStatus, ToolInfo,
};
use golem_tool::{Tool, ToolContext};
use serde_json::{Value, json};
use support::memory::{handshake, next_message, reply};
use support::{peer_bounded, raw};
use tokio::sync::mpsc;

async fn everything() -> (Client, Vec<ToolInfo>) {
    let client = Client::new(StdioTransport::spawn(support::everything_stdio()).expect("spawns"));
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    let tools = client.list_tools().await.expect("lists");
    (client, tools)
}

fn tool<'a>(tools: &'a [ToolInfo], name: &str) -> &'a ToolInfo {
    tools
        .iter()
        .find(|tool| tool.name == name)
        .unwrap_or_else(|| panic!("{name} is listed"))
}

#[tokio::test]
async fn the_reference_servers_task_tool_runs_to_its_result_showing_each_stage() {
    let (client, tools) = everything().await;
    assert!(client.offers_tool_tasks());
    let research = tool(&tools, "simulate-research-query");
    let mut seen: Vec<(TaskStatus, Option<String>)> = Vec::new();
    let result = peer_bounded(client.call_tool_as_task(
        research,
        &raw(r#"{"topic":"tides"}"#),
        &TaskOptions::default(),
        |task: &Task| seen.push((task.status, task.status_message.clone())),
    ))
    .await
    .expect("the task completes");
    assert!(
        result.text().contains("Research Report: tides"),
        "{}",
        result.text()
    );
    assert_eq!(
        seen.first().map(|(status, _)| *status),
        Some(TaskStatus::Working)
    );
    assert!(
        seen.iter()
            .any(|(_, message)| message.as_deref() == Some("Analyzing content...")),
        "the stages are seen as they change: {seen:?}"
    );

    // The finished task is listed, and `tasks/get` reads it.
    let page = client.list_tasks(None).await.expect("tasks/list");
    let listed = page.tasks.first().expect("one task");
    let got = client.get_task(&listed.task_id).await.expect("tasks/get");
    assert_eq!(got.status, TaskStatus::Completed);

    // A plain call of a tool that offers no tasks still works on a server
    // that offers them; asking for a task there is refused before sending.
    let echo = tool(&tools, "echo");
    assert_eq!(
        client
            .call_tool("echo", &raw(r#"{"message":"hi"}"#))
            .await
            .expect("plain call")
            .text(),
        "Echo: hi"
    );
    let refused = client
        .call_tool_as_task(echo, &raw("{}"), &TaskOptions::default(), |_| {})
        .await
        .expect_err("echo forbids tasks");
    assert!(matches!(refused, Error::NotSupported { .. }), "{refused}");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn a_task_that_needs_input_gets_it_through_the_elicitation_handler() {
    // An ambiguous query moves the task to input_required; the server asks
    // its question while tasks/result is pending.
    let config =
        ClientConfig::default().with_elicitation(|request: ElicitationRequest, _| async move {
            let ElicitationRequest::Form { form, .. } = request else {
                return Ok(ElicitationResponse::Cancel);
            };
            assert_eq!(form.fields[0].name, "interpretation");
            let mut content = serde_json::Map::new();
            content.insert("interpretation".into(), json!("snake"));
            Ok(ElicitationResponse::Accept(content))
        });
    let client = Client::with_config(
        StdioTransport::spawn(support::everything_stdio()).expect("spawns"),
        config,
    );
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    let tools = client.list_tools().await.expect("lists");
    let mut statuses = Vec::new();
    let result = peer_bounded(client.call_tool_as_task(
        tool(&tools, "simulate-research-query"),
        &raw(r#"{"topic":"python","ambiguous":true}"#),
        &TaskOptions::default(),
        |task: &Task| statuses.push(task.status),
    ))
    .await
    .expect("the task completes");
    assert!(
        result.text().contains("Research Report: python (snake)"),
        "{}",
        result.text()
    );
    assert_eq!(
        statuses.last(),
        Some(&TaskStatus::Completed),
        "{statuses:?}"
    );
    client.close().await.expect("closes");
}

#[tokio::test]
async fn over_streamable_http_a_task_runs_and_structured_output_is_checked() {
    let peer = support::everything_http();
    let client = Client::new(
        golem_mcp::HttpTransport::new(golem_mcp::HttpConfig::new(peer.url.clone()))
            .expect("transport"),
    );
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    let tools = client.list_tools().await.expect("lists");
    let weather = client
        .call_tool_checked(
            tool(&tools, "get-structured-content"),
            &raw(r#"{"location":"New York"}"#),
        )
        .await
        .expect("matches its schema");
    assert!(weather.structured_content.is_some());
    let result = peer_bounded(client.call_tool_as_task(
        tool(&tools, "simulate-research-query"),
        &raw(r#"{"topic":"rivers"}"#),
        &TaskOptions::default(),
        |_| {},
    ))
    .await
    .expect("the task completes");
    assert!(
        result.text().contains("Research Report: rivers"),
        "{}",
        result.text()
    );
    client.close().await.expect("closes");
}

#[tokio::test]
async fn a_running_task_can_be_cancelled_and_then_reads_as_cancelled() {
    let (client, tools) = everything().await;
    // Started as a task whose first status is seen, then abandoned without
    // cancelling on drop, so that the test cancels it itself.
    let options = TaskOptions::default().with_cancel_on_drop(false);
    let (seen_sender, mut seen) = mpsc::unbounded_channel();
    let arguments = raw(r#"{"topic":"dunes"}"#);
    let call = client.call_tool_as_task(
        tool(&tools, "simulate-research-query"),
        &arguments,
        &options,
        move |task: &Task| {
            let _ = seen_sender.send(task.task_id.clone());
        },
    );
    let task_id = tokio::select! {
        _ = call => panic!("the task ended before its first status was seen"),
        task_id = seen.recv() => task_id.expect("a status"),
    };
    let cancelled = client.cancel_task(&task_id).await.expect("tasks/cancel");
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(
        client.get_task(&task_id).await.expect("tasks/get").status,
        TaskStatus::Cancelled
    );
    // A finished task cannot be cancelled again: the server says why.
    let again = client
        .cancel_task(&task_id)
        .await
        .expect_err("already over");
    assert!(again.protocol_error().is_some(), "{again}");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn the_bridge_calls_a_task_only_tool_as_a_task() {
    let (client, _) = everything().await;
    let tools: Vec<Tool<()>> = golem_mcp::as_tools(&client).await.expect("bridges");
    let research = tools
        .iter()
        .find(|tool| tool.name() == "simulate-research-query")
        .expect("bridged");
    let text = peer_bounded(research.call(
        ToolContext::new(Arc::new(()), "call_1", 0),
        raw(r#"{"topic":"owls"}"#),
    ))
    .await
    .expect("the task's result");
    assert!(text.contains("Research Report: owls"), "{text}");
    client.close().await.expect("closes");
}

/// How a scripted task server answers `tasks/get`, by poll number (from 0).
type Polls = Box<dyn FnMut(usize) -> Value + Send>;

/// A scripted server whose one tool runs as a task `task-1`. It reports
/// every message it receives on `seen`; `tasks/result` is answered at once,
/// or, with `hold_result_until`, only after that many polls were answered.
async fn task_server(
    mut polls: Polls,
    hold_result_until: Option<usize>,
) -> (Client, ToolInfo, mpsc::UnboundedReceiver<Value>) {
    let (transport, mut peer) = memory_pair();
    let (seen_sender, seen) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut count = 0;
        let mut held: Option<Value> = None;
        let done = json!({"content": [{"type": "text", "text": "done"}]});
        while let Some(message) = peer.recv().await {
            let _ = seen_sender.send(message.clone());
            let id = message["id"].clone();
            let result = match message["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
                    "serverInfo": {"name": "tasks", "version": "1"}
                }),
                Some("tools/list") => json!({"tools": [{
                    "name": "slow", "inputSchema": {"type": "object"},
                    "execution": {"taskSupport": "optional"}
                }]}),
                Some("tools/call") if message["params"].get("task").is_none() => {
                    json!({"content": [{"type": "text", "text": "plain"}]})
                }
                Some("tools/call") => json!({"task": task("task-1", "working")}),
                Some("tasks/get") => {
                    count += 1;
                    let answer = polls(count - 1);
                    reply(&peer, &id, answer);
                    if let Some(held_id) = held.take_if(|_| Some(count) >= hold_result_until) {
                        reply(&peer, &held_id, done.clone());
                    }
                    continue;
                }
                Some("tasks/cancel") => task("task-1", "cancelled"),
                Some("tasks/result") if hold_result_until.is_some_and(|n| count < n) => {
                    held = Some(id);
                    continue;
                }
                Some("tasks/result") => done.clone(),
                _ if message.get("id").is_none() => continue,
                // A legacy server's answer to the probe, and to anything else.
                _ => {
                    peer.send(&json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": "Method not found"}}));
                    continue;
                }
            };
            reply(&peer, &id, result);
        }
    });
    let client = Client::new(transport);
    client.initialize().await.expect("initializes");
    let tool = client.list_tools().await.expect("lists").remove(0);
    (client, tool, seen)
}

fn task(id: &str, status: &str) -> Value {
    json!({"taskId": id, "status": status, "createdAt": "2025-11-25T10:30:00Z",
           "lastUpdatedAt": "2025-11-25T10:30:00Z", "ttl": null, "pollInterval": 1})
}

fn fast() -> TaskOptions {
    TaskOptions::default().with_poll_bounds(Duration::from_millis(1), Duration::from_millis(5))
}

async fn next_method(seen: &mut mpsc::UnboundedReceiver<Value>, method: &str) -> Value {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let message = seen.recv().await.expect("the server runs");
            if message["method"] == method {
                return message;
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {method} arrived"))
}

#[tokio::test]
async fn a_task_that_never_finishes_is_cancelled_on_the_server_when_the_caller_gives_up() {
    let (client, tool, mut seen) = task_server(Box::new(|_| task("task-1", "working")), None).await;
    let outcome = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool_as_task(&tool, &raw("{}"), &fast(), |_| {}),
    )
    .await;
    assert!(outcome.is_err(), "the task never finishes");
    // Polled while it ran...
    next_method(&mut seen, "tasks/get").await;
    // ...and cancelled once the caller gave up.
    let cancel = next_method(&mut seen, "tasks/cancel").await;
    assert_eq!(cancel["params"]["taskId"], "task-1");
    // The client is still usable.
    assert_eq!(
        client.get_task("task-1").await.expect("polls").status,
        TaskStatus::Working
    );
}

#[tokio::test]
async fn a_plain_call_of_a_tool_that_offers_tasks_as_an_option_sends_no_task() {
    let (client, tool, mut seen) = task_server(Box::new(|_| task("task-1", "working")), None).await;
    assert_eq!(tool.task_support(), golem_mcp::TaskSupport::Optional);
    let result = client
        .call_tool("slow", &raw("{}"))
        .await
        .expect("plain call");
    assert_eq!(result.text(), "plain");
    let call = next_method(&mut seen, "tools/call").await;
    assert!(call["params"].get("task").is_none(), "{call}");
}

#[tokio::test]
async fn a_task_call_before_initialize_says_so() {
    let (transport, _peer) = memory_pair();
    let client = Client::new(transport);
    let tool: ToolInfo =
        serde_json::from_value(json!({"name": "slow", "execution": {"taskSupport": "required"}}))
            .expect("a tool");
    let error = client
        .call_tool_as_task(&tool, &raw("{}"), &TaskOptions::default(), |_| {})
        .await
        .expect_err("not initialized");
    assert!(matches!(error, Error::NotInitialized { .. }), "{error}");
}

#[tokio::test]
async fn a_caller_gone_before_the_task_was_created_still_cancels_it() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let capabilities = json!({"tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}});
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut peer, capabilities));
    initialized.expect("initializes");
    let tool: ToolInfo =
        serde_json::from_value(json!({"name": "slow", "execution": {"taskSupport": "required"}}))
            .expect("a tool");
    let arguments = raw("{}");
    let options = TaskOptions::default();
    // The caller gives up while the server has not answered the call yet.
    let (outcome, call) = tokio::join!(
        tokio::time::timeout(
            Duration::from_millis(50),
            client.call_tool_as_task(&tool, &arguments, &options, |_| {}),
        ),
        async { peer.recv().await.expect("tools/call") }
    );
    assert!(outcome.is_err(), "the call was abandoned");
    assert_eq!(call["method"], "tools/call");
    // The answer comes late: the task it names is cancelled.
    reply(
        &peer,
        &call["id"],
        json!({"task": task("task-7", "working")}),
    );
    let cancel = next_message(&mut peer).await;
    assert_eq!(cancel["method"], "tasks/cancel", "{cancel}");
    assert_eq!(cancel["params"]["taskId"], "task-7");
}

#[tokio::test]
async fn a_poll_about_another_task_fails_the_call_and_cancels_the_task() {
    let (client, tool, mut seen) =
        task_server(Box::new(|_| task("task-2", "completed")), None).await;
    let error = client
        .call_tool_as_task(&tool, &raw("{}"), &fast(), |_| {})
        .await
        .expect_err("task-2 is not ours");
    assert!(
        matches!(&error, Error::InvalidResponse { detail, .. } if detail.contains("\"task-2\"")),
        "{error}"
    );
    let cancel = next_method(&mut seen, "tasks/cancel").await;
    assert_eq!(cancel["params"]["taskId"], "task-1");
}

#[tokio::test]
async fn a_status_that_goes_back_from_completed_fails_the_call() {
    // Completed at the first poll, working again at the second; the result
    // is held back until the second poll was answered.
    let polls: Polls = Box::new(|poll| match poll {
        0 => task("task-1", "completed"),
        _ => task("task-1", "working"),
    });
    let (client, tool, _seen) = task_server(polls, Some(2)).await;
    let mut statuses = Vec::new();
    let outcome = client
        .call_tool_as_task(&tool, &raw("{}"), &fast(), |task: &Task| {
            statuses.push(task.status)
        })
        .await;
    let error = outcome.expect_err("the status went back");
    assert!(
        error.to_string().contains("from completed back to working"),
        "{error}"
    );
    assert_eq!(statuses, [TaskStatus::Working, TaskStatus::Completed]);
}

#[tokio::test]
async fn status_notifications_are_delivered_and_a_server_that_answers_at_once_is_accepted() {
    let (transport, mut peer) = memory_pair();
    tokio::spawn(async move {
        while let Some(message) = peer.recv().await {
            let result = match message["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
                    "serverInfo": {"name": "eager", "version": "1"}
                }),
                Some("tools/list") => json!({"tools": [{"name": "quick", "inputSchema": {},
                    "execution": {"taskSupport": "optional"}}]}),
                Some("tools/call") => {
                    assert_eq!(message["params"]["task"], json!({"ttl": 5000}));
                    peer.send(
                        &json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                        "params": task("task-9", "completed")}),
                    );
                    json!({"content": [{"type": "text", "text": "at once"}]})
                }
                _ => continue,
            };
            peer.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": result}));
        }
    });
    let client = Client::new(transport);
    client.initialize().await.expect("initializes");
    let mut notifications = client.notifications();
    let quick = client.list_tools().await.expect("lists").remove(0);
    let options = TaskOptions::default().with_ttl(Duration::from_secs(5));
    let result = client
        .call_tool_as_task(&quick, &raw("{}"), &options, |_| {})
        .await
        .expect("a plain result is accepted");
    assert_eq!(result.text(), "at once");
    let Some(golem_mcp::ServerNotification::TaskStatus(status)) = notifications.recv().await else {
        panic!("the status notification is delivered");
    };
    assert_eq!(
        (status.task_id.as_str(), status.status),
        ("task-9", TaskStatus::Completed)
    );
}

#[tokio::test]
async fn a_result_that_fails_while_the_task_runs_still_cancels_it() {
    // The task needs input, so the client asks for its result at once; the
    // server answers that request with an error (as a broken result stream
    // would end it), while the task itself goes on.
    let (transport, mut peer) = memory_pair();
    let (seen_sender, mut seen) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(message) = peer.recv().await {
            let _ = seen_sender.send(message.clone());
            let id = message["id"].clone();
            let result = match message["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {"tools": {}, "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
                    "serverInfo": {"name": "tasks", "version": "1"}
                }),
                Some("tools/list") => json!({"tools": [{
                    "name": "slow", "inputSchema": {"type": "object"},
                    "execution": {"taskSupport": "optional"}
                }]}),
                Some("tools/call") => json!({"task": task("task-1", "working")}),
                Some("tasks/get") => task("task-1", "input_required"),
                Some("tasks/result") => {
                    peer.send(&json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32603, "message": "the result stream broke"}}));
                    continue;
                }
                Some("tasks/cancel") => task("task-1", "cancelled"),
                _ => continue,
            };
            reply(&peer, &id, result);
        }
    });
    let client = Client::new(transport);
    client.initialize().await.expect("initializes");
    let tool = client.list_tools().await.expect("lists").remove(0);

    let error = client
        .call_tool_as_task(&tool, &raw("{}"), &fast(), |_| {})
        .await
        .expect_err("the result failed");
    assert!(error.protocol_error().is_some(), "{error}");
    let cancel = next_method(&mut seen, "tasks/cancel").await;
    assert_eq!(cancel["params"]["taskId"], "task-1");
}
