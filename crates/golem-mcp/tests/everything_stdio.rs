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
