//! The client against a real server nobody here wrote: the reference
//! `@modelcontextprotocol/server-everything` from npm, over stdio. Installed
//! by `scripts/install-peers.sh` (the README's test command runs it); a
//! missing peer fails the test.

mod support;

use support::{everything_stdio, peer_bounded, raw, reaped};

use golem_mcp::{Client, Content, StdioTransport};

async fn connect() -> (Client, u32) {
    let transport = StdioTransport::spawn(everything_stdio()).expect("spawns server-everything");
    let pid = transport.pid().expect("running");
    let client = Client::new(transport);
    let server = peer_bounded(client.initialize())
        .await
        .expect("initializes");
    assert!(server.name.contains("everything"), "{server:?}");
    (client, pid)
}

#[tokio::test]
async fn lists_and_calls_the_reference_server_over_stdio() {
    let (client, pid) = connect().await;

    let tools = client.list_tools().await.expect("lists");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "get-tiny-image",
        "trigger-long-running-operation",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    let echo = tools.iter().find(|tool| tool.name == "echo").expect("echo");
    let schema = echo.input_schema.as_deref().expect("a schema").get();
    assert!(
        schema.starts_with('{') && schema.contains("message"),
        "{schema}"
    );

    let result = client
        .call_tool("echo", &raw(r#"{"message":"hello"}"#))
        .await
        .expect("echo");
    assert_eq!(result.text(), "Echo: hello");
    assert!(!result.is_error);

    let result = client
        .call_tool("get-tiny-image", &raw("{}"))
        .await
        .expect("image");
    assert!(
        result.content.iter().any(
            |item| matches!(item, Content::Image { mime_type, .. } if mime_type == "image/png")
        )
    );
    let text = result.text();
    let placeholder = text
        .lines()
        .find(|line| line.starts_with("[image: image/png, "))
        .unwrap_or_default();
    assert!(placeholder.ends_with(" bytes not shown]"), "{text}");

    // An unknown tool is a tool error (isError), not a protocol error, here.
    let result = client
        .call_tool("no-such-tool", &raw("{}"))
        .await
        .expect("answered");
    assert!(result.is_error, "{result:?}");

    client.close().await.expect("closes");
    // `close` returns once the server is reaped: no process and no zombie.
    assert!(reaped(pid), "the server {pid} was reaped by close");
}

#[tokio::test]
async fn progress_of_a_long_running_tool_arrives_in_order() {
    let (client, _) = connect().await;
    let mut reports = Vec::new();
    let result = peer_bounded(client.call_tool_with_progress(
        "trigger-long-running-operation",
        &raw(r#"{"duration":0.3,"steps":3}"#),
        |progress| reports.push(progress),
    ))
    .await
    .expect("completes");
    assert!(
        result.text().contains("Long running operation completed"),
        "{}",
        result.text()
    );
    let steps: Vec<f64> = reports.iter().map(|report| report.progress).collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);
    assert!(reports.iter().all(|report| report.total == Some(3.0)));

    // Without an observer no token is sent, and the call still completes.
    let result = client
        .call_tool(
            "trigger-long-running-operation",
            &raw(r#"{"duration":0.1,"steps":2}"#),
        )
        .await
        .expect("completes");
    assert!(result.text().contains("Steps: 2"), "{}", result.text());
    client.close().await.expect("closes");
}

/// What a newcomer writes first: one call to connect, arguments from
/// `json!` and from a struct of theirs, a prompt's arguments from `json!`.
#[tokio::test]
async fn one_call_connects_and_arguments_come_from_any_serializable_value() {
    #[derive(serde::Serialize)]
    struct Sum {
        a: i64,
        b: i64,
    }
    let transport = StdioTransport::spawn(everything_stdio()).expect("spawns server-everything");
    let client = peer_bounded(Client::connect(transport))
        .await
        .expect("connects");
    assert!(client.server().is_some(), "initialized");

    let echoed = peer_bounded(client.call_tool("echo", &serde_json::json!({"message": "hi"})))
        .await
        .expect("echo");
    assert_eq!(echoed.text(), "Echo: hi");
    let sum = peer_bounded(client.call_tool("get-sum", &Sum { a: 2, b: 3 }))
        .await
        .expect("get-sum");
    assert!(sum.text().contains('5'), "{}", sum.text());

    let prompt =
        peer_bounded(client.get_prompt("args-prompt", &serde_json::json!({"city": "Paris"})))
            .await
            .expect("a prompt");
    assert!(
        format!("{:?}", prompt.messages).contains("Paris"),
        "{prompt:?}"
    );
    let refused = client
        .get_prompt("args-prompt", &serde_json::json!({"city": 75}))
        .await
        .expect_err("prompt arguments are strings");
    assert!(
        refused
            .to_string()
            .contains(r#"argument "city" must be a string"#),
        "{refused}"
    );
    client.close().await.expect("closes");
}

/// A handshake that fails hands out no client and leaves no process: the
/// server refuses every request, then would live on for a minute.
#[tokio::test]
async fn a_failed_connect_leaves_no_server_process() {
    const REFUSER: &str = r#"
import json, sys, time
for line in sys.stdin:
    request = json.loads(line)
    if "id" in request:
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"],
                          "error": {"code": -32603, "message": "not today"}}), flush=True)
        if request["method"] == "initialize":
            time.sleep(60)
"#;
    let transport = StdioTransport::spawn(golem_mcp::StdioConfig {
        args: vec!["-c".into(), REFUSER.into()],
        ..golem_mcp::StdioConfig::new("python3")
    })
    .expect("spawns");
    let pid = transport.pid().expect("running");
    let error = peer_bounded(Client::connect(transport))
        .await
        .expect_err("the handshake is refused");
    assert!(
        matches!(error, golem_mcp::Error::Protocol { .. }),
        "{error:?}"
    );
    assert!(support::until_gone(pid).await, "process {pid} left behind");
}
