//! The client against a real server nobody here wrote: the reference
//! `@modelcontextprotocol/server-everything` from npm, over stdio. Installed
//! by `scripts/install-peers.sh` (the README's test command runs it); a
//! missing peer fails the test.

mod support;

use support::server_everything;

use std::path::Path;
use std::time::Duration;

use golem_mcp::{Client, Content, StdioConfig, StdioTransport};
use serde_json::value::RawValue;

const PATIENCE: Duration = Duration::from_secs(60);

async fn connect() -> (Client, u32) {
    let transport = StdioTransport::spawn(StdioConfig {
        args: vec!["stdio".into()],
        ..StdioConfig::new(server_everything().to_string_lossy())
    })
    .expect("spawns server-everything");
    let pid = transport.pid().expect("running");
    let client = Client::new(transport);
    let server = tokio::time::timeout(PATIENCE, client.initialize())
        .await
        .expect("in time")
        .expect("initializes");
    assert!(server.name.contains("everything"), "{server:?}");
    (client, pid)
}

fn args(json: &str) -> Box<RawValue> {
    RawValue::from_string(json.to_owned()).expect("valid JSON")
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
        .call_tool("echo", &args(r#"{"message":"hello"}"#))
        .await
        .expect("echo");
    assert_eq!(result.text(), "Echo: hello");
    assert!(!result.is_error);

    let result = client
        .call_tool("get-tiny-image", &args("{}"))
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
        .call_tool("no-such-tool", &args("{}"))
        .await
        .expect("answered");
    assert!(result.is_error, "{result:?}");

    client.close().await.expect("closes");
    // `close` returns once the server is reaped: no process and no zombie.
    assert!(reaped(pid), "the server {pid} was reaped by close");
}

/// Whether our child `pid` has been reaped: neither running nor a zombie (a
/// child's pid cannot be reused before we reap it). Reads /proc, so first
/// checks there is one: without it every process would look gone and the
/// check would pass vacuously.
fn reaped(pid: u32) -> bool {
    assert!(
        Path::new("/proc/self/stat").exists(),
        "/proc/self/stat is missing: this check reads /proc (Linux)"
    );
    !Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test]
async fn progress_of_a_long_running_tool_arrives_in_order() {
    let (client, _) = connect().await;
    let mut reports = Vec::new();
    let result = tokio::time::timeout(
        PATIENCE,
        client.call_tool_with_progress(
            "trigger-long-running-operation",
            &args(r#"{"duration":0.3,"steps":3}"#),
            |progress| reports.push(progress),
        ),
    )
    .await
    .expect("in time")
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
            &args(r#"{"duration":0.1,"steps":2}"#),
        )
        .await
        .expect("completes");
    assert!(result.text().contains("Steps: 2"), "{}", result.text());
    client.close().await.expect("closes");
}
