//! Tool details and structured output: against the reference server (its
//! `get-structured-content` tool declares an output schema and annotations)
//! and, for the faults, against scripted in-memory servers.

mod support;

use golem_mcp::{Client, Error, OutputError, StdioTransport, TaskSupport, ToolInfo};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use support::memory::serving_one_tool;
use support::{peer_bounded, python_stdio, raw};

#[tokio::test]
async fn the_reference_server_keeps_its_output_schema_and_annotations() {
    let client = Client::new(StdioTransport::spawn(support::everything_stdio()).expect("spawns"));
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    let tools = client.list_tools().await.expect("lists");
    let weather = tools
        .iter()
        .find(|tool| tool.name == "get-structured-content")
        .expect("get-structured-content is listed");
    assert_eq!(
        weather.title.as_deref(),
        Some("Get Structured Content Tool")
    );
    let hints = weather.annotations.as_ref().expect("annotations");
    assert!(hints.read_only() && hints.idempotent() && !hints.open_world());
    assert!(
        weather
            .output_schema
            .as_deref()
            .is_some_and(|schema| schema.get().contains("temperature")),
        "{weather:?}"
    );
    let result = client
        .call_tool_checked(weather, &raw(r#"{"location":"Chicago"}"#))
        .await
        .expect("the result matches its schema");
    let structured: Value = serde_json::from_str(
        result
            .structured_content
            .as_deref()
            .expect("structured")
            .get(),
    )
    .expect("JSON");
    assert_eq!(structured["humidity"], 82);

    // The task-based tool says it must run as a task.
    let research = tools
        .iter()
        .find(|tool| tool.name == "simulate-research-query")
        .expect("simulate-research-query is listed");
    assert_eq!(research.task_support(), TaskSupport::Required);
    // A tool without an output schema is not checked.
    let echo = tools.iter().find(|tool| tool.name == "echo").expect("echo");
    assert!(echo.output_schema.is_none());
    let echoed = client
        .call_tool_checked(echo, &raw(r#"{"message":"hi"}"#))
        .await
        .expect("unchecked");
    assert_eq!(echoed.text(), "Echo: hi");
    client.close().await.expect("closes");
}

/// The official Python SDK's server (peers/python/mcp_py_server.py) over
/// stdio: it derives an output schema from every tool's return type.
#[tokio::test]
async fn the_python_sdk_servers_derived_schemas_are_checked_and_bridged() {
    let client = Client::new(StdioTransport::spawn(python_stdio()).expect("spawns"));
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    let tools = client.list_tools().await.expect("lists");
    let add = tools.iter().find(|tool| tool.name == "add").expect("add");
    assert!(add.output_schema.is_some(), "{add:?}");
    let sum = client
        .call_tool_checked(add, &raw(r#"{"a":2,"b":3}"#))
        .await
        .expect("matches its derived schema");
    assert_eq!(
        sum.structured_content.as_deref().map(RawValue::get),
        Some(r#"{"result":5}"#)
    );
    // An isError result carries no structured content and is not checked.
    let fail = tools.iter().find(|tool| tool.name == "fail").expect("fail");
    let failed = client
        .call_tool_checked(fail, &raw("{}"))
        .await
        .expect("isError is not checked");
    assert!(failed.is_error);

    // The Python SDK wraps the plain return value: the text is "5", the
    // structured content {"result": 5}. The JSON only repeats the text, so
    // the bridge gives the model the text alone.
    let bridged: Vec<golem_tool::Tool<()>> = golem_mcp::as_tools(&client).await.expect("bridges");
    let add = bridged
        .iter()
        .find(|tool| tool.name() == "add")
        .expect("add");
    let text = add
        .call(
            golem_tool::ToolContext::new(std::sync::Arc::new(()), "call_1", 0),
            raw(r#"{"a":2,"b":3}"#),
        )
        .await
        .expect("checked and rendered");
    assert_eq!(text, "5");
    client.close().await.expect("closes");
}

/// A scripted server with one tool whose listing and result are given.
async fn serving(tool: Value, result: Value) -> (Client, ToolInfo) {
    let unread = json!({"error": {"code": -32601, "message": "not in this test"}});
    let client = serving_one_tool(tool, result, unread).await;
    let tool = client.list_tools().await.expect("lists").remove(0);
    (client, tool)
}

fn weather_tool(schema: Value) -> Value {
    json!({"name": "weather", "inputSchema": {"type": "object"}, "outputSchema": schema})
}

const SCHEMA: &str =
    r#"{"type":"object","properties":{"celsius":{"type":"number"}},"required":["celsius"]}"#;

#[tokio::test]
async fn a_result_that_breaks_the_schema_is_an_output_error_naming_the_mismatch() {
    let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
    let (client, tool) = serving(
        weather_tool(schema),
        json!({"content": [{"type": "text", "text": "warm"}], "structuredContent": {"celsius": "warm"}}),
    )
    .await;
    let error = client
        .call_tool_checked(&tool, &raw("{}"))
        .await
        .expect_err("a string is not a number");
    let Error::Output { result, source, .. } = &error else {
        panic!("not an output error: {error}");
    };
    assert_eq!(result.text(), "warm", "the result is kept");
    let OutputError::Mismatch { mismatches, .. } = source else {
        panic!("not a mismatch: {source}");
    };
    assert_eq!(mismatches[0].instance_path, "/celsius");
    let message = error.to_string();
    assert!(
        message.starts_with("mcp: tools/call weather: ") && message.contains("at /celsius:"),
        "{message}"
    );
    // The plain call does not check.
    assert!(client.call_tool("weather", &raw("{}")).await.is_ok());
}

#[tokio::test]
async fn a_result_without_structured_content_is_told_apart() {
    let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
    let (client, tool) = serving(
        weather_tool(schema),
        json!({"content": [{"type": "text", "text": "21"}]}),
    )
    .await;
    let error = client
        .call_tool_checked(&tool, &raw("{}"))
        .await
        .expect_err("missing structuredContent");
    assert_eq!(error.output_error(), Some(&OutputError::Missing));
}

#[tokio::test]
async fn an_is_error_result_is_not_checked() {
    let schema: Value = serde_json::from_str(SCHEMA).expect("JSON");
    let (client, tool) = serving(
        weather_tool(schema),
        json!({"content": [{"type": "text", "text": "no such city"}], "isError": true}),
    )
    .await;
    let result = client
        .call_tool_checked(&tool, &raw("{}"))
        .await
        .expect("isError results pass");
    assert!(result.is_error);
}

#[tokio::test]
async fn an_invalid_output_schema_keeps_the_tool_listed_and_calls_say_why() {
    let (client, tool) = serving(
        weather_tool(json!({"type": 12})),
        json!({"content": [], "structuredContent": {"celsius": 1}}),
    )
    .await;
    assert_eq!(tool.name, "weather");
    for _ in 0..2 {
        let error = client
            .call_tool_checked(&tool, &raw("{}"))
            .await
            .expect_err("cannot be validated");
        assert!(
            matches!(
                error.output_error(),
                Some(OutputError::InvalidSchema { .. })
            ),
            "{error}"
        );
        assert!(error.to_string().contains("cannot be validated"), "{error}");
    }
}

#[tokio::test]
async fn a_draft_07_schema_is_read_as_draft_07() {
    // Under draft-07, `dependentRequired` (2019-09 and later) is unknown and
    // ignored, so the result passes; under 2020-12 it would fail.
    let tool = weather_tool(json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "dependentRequired": {"celsius": ["unit"]}
    }));
    let (client, listed) = serving(
        tool,
        json!({"content": [], "structuredContent": {"celsius": 1}}),
    )
    .await;
    client
        .call_tool_checked(&listed, &raw("{}"))
        .await
        .expect("draft-07 ignores dependentRequired");
}
