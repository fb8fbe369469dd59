//! What a bridged tool gives the model: structured content, checked
//! against the output schema, and linked resources read inline on request.
//! Against the reference server where it has the behaviour, scripted
//! in-memory servers for the faults.

mod support;

use std::sync::Arc;

use golem_mcp::{BridgeConfig, Client, Error, OutputError, StdioTransport};
use golem_tool::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};
use support::memory::serving_one_tool;
use support::{peer_bounded, raw};

async fn everything() -> Client {
    let client = Client::new(StdioTransport::spawn(support::everything_stdio()).expect("spawns"));
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    client
}

async fn call(tools: &[Tool<()>], name: &str, arguments: &str) -> Result<String, ToolError> {
    let tool = tools
        .iter()
        .find(|tool| tool.name() == name)
        .unwrap_or_else(|| panic!("{name} is bridged"));
    peer_bounded(tool.call(ToolContext::new(Arc::new(()), "call_1", 0), raw(arguments))).await
}

#[tokio::test]
async fn structured_content_reaches_the_model_once_and_links_are_read_on_request() {
    let client = everything().await;
    let tools: Vec<Tool<()>> = golem_mcp::as_tools(&client).await.expect("bridges");

    // The text item is the JSON serialized: the model sees the JSON once.
    let weather = call(
        &tools,
        "get-structured-content",
        r#"{"location":"Chicago"}"#,
    )
    .await
    .expect("checked and rendered");
    let value: Value = serde_json::from_str(&weather).expect("only the JSON");
    assert_eq!(value["conditions"], "Light rain / drizzle");

    // Links stay placeholders by default...
    let links = call(&tools, "get-resource-links", r#"{"count":2}"#)
        .await
        .expect("links");
    assert!(
        links.contains("[resource link: demo://resource/dynamic/blob/1 (text/plain)]"),
        "{links}"
    );
    assert!(
        links.contains("[resource link: demo://resource/dynamic/text/2 (text/plain)]"),
        "{links}"
    );

    // ...and are read inline when the application asks.
    let reading = BridgeConfig::default().with_read_resource_links(true);
    let tools: Vec<Tool<()>> = golem_mcp::as_tools_with(&client, &reading)
        .await
        .expect("bridges");
    let read = call(&tools, "get-resource-links", r#"{"count":2}"#)
        .await
        .expect("links read");
    assert!(
        read.contains("[resource link: demo://resource/dynamic/text/2]\nResource 2:"),
        "{read}"
    );
    assert!(
        read.contains("[binary resource: demo://resource/dynamic/blob/1 ("),
        "{read}"
    );
    client.close().await.expect("closes");
}

/// A scripted server with one tool whose listing and results are given,
/// answering `resources/read` with an error.
async fn serving(tool: Value, result: Value) -> Client {
    let not_found = json!({"error": {"code": -32002, "message": "Resource not found"}});
    serving_one_tool(tool, result, not_found).await
}

fn weather(schema: Value) -> Value {
    json!({"name": "weather", "inputSchema": {"type": "object"}, "outputSchema": schema})
}

#[tokio::test]
async fn a_mismatch_is_a_correction_naming_it() {
    let client = serving(
        weather(json!({"type": "object", "required": ["celsius"]})),
        json!({"content": [], "structuredContent": {"kelvin": 300}}),
    )
    .await;
    let tools: Vec<Tool<()>> = golem_mcp::as_tools(&client).await.expect("bridges");
    let Err(ToolError::Retry(retry)) = call(&tools, "weather", "{}").await else {
        panic!("a mismatch is a correction");
    };
    let message = retry.to_string();
    assert!(
        message.contains("does not keep its output schema") && message.contains("celsius"),
        "{message}"
    );
}

#[tokio::test]
async fn missing_structured_content_is_a_correction() {
    let client = serving(
        weather(json!({"type": "object"})),
        json!({"content": [{"type": "text", "text": "21"}]}),
    )
    .await;
    let tools: Vec<Tool<()>> = golem_mcp::as_tools(&client).await.expect("bridges");
    let Err(ToolError::Retry(retry)) = call(&tools, "weather", "{}").await else {
        panic!("a missing structuredContent is a correction");
    };
    assert!(
        retry.to_string().contains("no structuredContent"),
        "{retry}"
    );
}

#[tokio::test]
async fn an_invalid_output_schema_is_fatal_with_the_output_error() {
    let client = serving(
        weather(json!({"type": "nonsense"})),
        json!({"content": [], "structuredContent": {}}),
    )
    .await;
    let tools: Vec<Tool<()>> = golem_mcp::as_tools(&client).await.expect("still bridged");
    let Err(ToolError::Fatal(fatal)) = call(&tools, "weather", "{}").await else {
        panic!("an invalid schema is fatal");
    };
    let error = fatal.downcast_ref::<Error>().expect("the client's error");
    assert!(
        matches!(
            error.output_error(),
            Some(OutputError::InvalidSchema { .. })
        ),
        "{error}"
    );
}

#[tokio::test]
async fn text_that_differs_from_the_json_is_kept_before_it_and_a_failed_read_is_a_placeholder() {
    let client = serving(
        json!({"name": "report", "inputSchema": {"type": "object"}}),
        json!({"content": [
            {"type": "text", "text": "Two findings."},
            {"type": "resource_link", "uri": "demo://gone", "name": "gone"}
        ], "structuredContent": {"findings": 2}}),
    )
    .await;
    let reading = BridgeConfig::default().with_read_resource_links(true);
    let tools: Vec<Tool<()>> = golem_mcp::as_tools_with(&client, &reading)
        .await
        .expect("bridges");
    let text = call(&tools, "report", "{}").await.expect("rendered");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Two findings."));
    let placeholder = lines.next().expect("the link");
    assert!(
        placeholder.starts_with("[resource link: demo://gone (could not be read: ")
            && placeholder.contains("Resource not found"),
        "{placeholder}"
    );
    assert_eq!(lines.next(), Some(r#"{"findings":2}"#));
}

#[tokio::test]
async fn a_toolset_presents_results_as_its_bridge_configuration_says() {
    use golem_tool::Toolset as _;
    let client = serving(
        json!({"name": "report", "inputSchema": {"type": "object"}}),
        json!({"content": [{"type": "resource_link", "uri": "demo://gone", "name": "gone"}]}),
    )
    .await;
    let reading = golem_mcp::ToolsetConfig::default()
        .with_bridge(BridgeConfig::default().with_read_resource_links(true));
    let toolset = golem_mcp::McpToolset::<()>::new(&client, reading)
        .await
        .expect("lists");
    let text = call(&toolset.tools(), "report", "{}")
        .await
        .expect("rendered");
    assert!(text.contains("(could not be read: "), "{text}");
    let plain = golem_mcp::McpToolset::<()>::new(&client, golem_mcp::ToolsetConfig::default())
        .await
        .expect("lists");
    let text = call(&plain.tools(), "report", "{}")
        .await
        .expect("rendered");
    assert_eq!(text, "[resource link: demo://gone]");
}

#[tokio::test]
async fn at_most_ten_links_of_a_result_are_read() {
    let links: Vec<Value> = (0..12)
        .map(|n| json!({"type": "resource_link", "uri": format!("demo://{n}"), "name": "n"}))
        .collect();
    let client = serving(
        json!({"name": "many", "inputSchema": {"type": "object"}}),
        json!({"content": links}),
    )
    .await;
    let reading = BridgeConfig::default().with_read_resource_links(true);
    let tools: Vec<Tool<()>> = golem_mcp::as_tools_with(&client, &reading)
        .await
        .expect("bridges");
    let text = call(&tools, "many", "{}").await.expect("rendered");
    let read = text
        .lines()
        .filter(|line| line.contains("could not be read"))
        .count();
    assert_eq!(read, 10, "ten reads were tried: {text}");
    assert_eq!(
        text.lines().count(),
        12,
        "the rest are placeholders: {text}"
    );
    assert!(
        !text
            .lines()
            .last()
            .unwrap_or_default()
            .contains("could not be read")
    );
}

#[tokio::test]
async fn a_linked_directory_shows_each_entry_under_its_own_uri() {
    let client = serving_one_tool(
        json!({"name": "ls", "inputSchema": {"type": "object"}}),
        json!({"content": [
            {"type": "resource_link", "uri": "file:///d/", "name": "d", "mimeType": "inode/directory"}
        ]}),
        json!({"result": {"contents": [
            {"uri": "file:///d/", "text": "2 entries"},
            {"uri": "file:///d/a.txt", "text": "alpha"},
            {"uri": "file:///d/b.txt", "text": "beta"}
        ]}}),
    )
    .await;
    let reading = BridgeConfig::default().with_read_resource_links(true);
    let tools: Vec<Tool<()>> = golem_mcp::as_tools_with(&client, &reading)
        .await
        .expect("bridges");
    let shown = call(&tools, "ls", "{}").await.expect("read");
    assert!(
        shown.contains(
            "[resource link: file:///d/]\n2 entries\n[resource: file:///d/a.txt]\nalpha\n\
             [resource: file:///d/b.txt]\nbeta"
        ),
        "{shown}"
    );
}
