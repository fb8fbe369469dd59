//! `as_tools`: the server's tools as agent tools, over the in-memory
//! transport with the server's side scripted.

mod support;

use std::sync::Arc;
use std::time::Duration;

use golem_mcp::memory::MemoryPeer;
use golem_mcp::{Client, Error, ProtocolError, TransportError};
use golem_tool::{Tool, ToolContext, ToolError};
use serde_json::{Value, json};
use support::memory::next_message;
use support::{bounded, raw};

/// A `tools/list` answer with odd spacing and key order, as raw text: one
/// tool with a schema, one without a schema or description.
const TOOLS: &str = r#"[
  {"name":"search","description":"Searches.","inputSchema":{ "type" : "object",
     "properties":{"z":{"type":"string"},  "a":{"type":"integer"}}, "required":["z"] }},
  {"name":"bare"}
]"#;

/// A client after the handshake, and the peer.
async fn connected() -> (Client, MemoryPeer) {
    support::memory::connected(json!({"tools": {}})).await
}

/// Bridges the tools listed as `tools` (raw JSON).
async fn bridged(
    client: &Client,
    peer: &mut MemoryPeer,
    tools: &str,
) -> Result<Vec<Tool<()>>, Error> {
    let (result, _) = tokio::join!(golem_mcp::as_tools::<()>(client), async {
        let list = next_message(peer).await;
        assert_eq!(list["method"], "tools/list");
        peer.send_raw(format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":{tools}}}}}"#,
            list["id"]
        ));
    });
    result
}

/// Calls `tool` with `arguments`; the peer answers the `tools/call` with
/// `answer` (a JSON-RPC message without its id) and the raw request is
/// returned.
async fn call(
    tool: &Tool<()>,
    peer: &mut MemoryPeer,
    arguments: &str,
    answer: Value,
) -> (Result<String, ToolError>, String) {
    let ctx = ToolContext::new(Arc::new(()), "call_1", 0);
    let (result, request) = tokio::join!(tool.call(ctx, raw(arguments)), async {
        let request = bounded(peer.recv_raw()).await.expect("connected");
        let parsed: Value = serde_json::from_slice(&request).expect("JSON");
        let mut answer = answer;
        answer["jsonrpc"] = json!("2.0");
        answer["id"] = parsed["id"].clone();
        peer.send(&answer);
        String::from_utf8(request).expect("UTF-8")
    });
    (result, request)
}

#[tokio::test]
async fn names_descriptions_and_schemas_are_the_servers_verbatim() {
    let (client, mut peer) = connected().await;

    let tools = bridged(&client, &mut peer, TOOLS).await.expect("bridged");

    assert_eq!(tools.len(), 2);
    assert_eq!(tools[0].name(), "search");
    assert_eq!(tools[0].description(), "Searches.");
    assert_eq!(
        tools[0].input_schema().get(),
        r#"{ "type" : "object",
     "properties":{"z":{"type":"string"},  "a":{"type":"integer"}}, "required":["z"] }"#
    );
    assert_eq!(
        tools[0].spec().input_schema.get(),
        tools[0].input_schema().get()
    );
    // No schema: any object. No description: empty.
    assert_eq!(tools[1].name(), "bare");
    assert_eq!(tools[1].input_schema().get(), r#"{"type":"object"}"#);
    assert_eq!(tools[1].description(), "");
    // No options of their own: the agent's apply.
    assert_eq!(
        (
            tools[0].max_retries(),
            tools[0].timeout(),
            tools[0].is_sequential()
        ),
        (None, None, false)
    );
}

#[tokio::test]
async fn a_call_sends_the_arguments_verbatim_and_returns_the_text() {
    let (client, mut peer) = connected().await;
    let tools = bridged(&client, &mut peer, TOOLS).await.expect("bridged");
    let arguments = r#"{"z":"rust",   "a" : 3}"#;

    let (result, request) = call(
        &tools[0],
        &mut peer,
        arguments,
        json!({"result": {"content": [
            {"type": "text", "text": "first"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "second"}
        ]}}),
    )
    .await;

    assert_eq!(
        result.expect("a result"),
        "first\n[image: image/png, 3 bytes not shown]\nsecond"
    );
    assert!(request.contains(r#""name":"search""#), "{request}");
    assert!(
        request.contains(&format!(r#""arguments":{arguments}"#)),
        "arguments verbatim: {request}"
    );
}

#[tokio::test]
async fn is_error_is_a_model_retry_with_the_servers_explanation() {
    let (client, mut peer) = connected().await;
    let tools = bridged(&client, &mut peer, TOOLS).await.expect("bridged");

    let (result, _) = call(
        &tools[0],
        &mut peer,
        "{}",
        json!({"result": {"isError": true, "content": [{"type": "text", "text": "z is required"}]}}),
    )
    .await;
    let error = result.expect_err("rejected");
    assert_eq!(
        error.as_retry().map(|retry| retry.reason()),
        Some("z is required")
    );

    // An empty explanation still tells the model something.
    let (result, _) = call(
        &tools[0],
        &mut peer,
        "{}",
        json!({"result": {"isError": true, "content": []}}),
    )
    .await;
    let reason = result
        .expect_err("rejected")
        .as_retry()
        .map(|retry| retry.reason().to_owned())
        .expect("a retry");
    assert!(
        reason.contains("\"search\"") && reason.contains("error"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_json_rpc_error_is_fatal_with_the_protocol_error_downcastable() {
    let (client, mut peer) = connected().await;
    let tools = bridged(&client, &mut peer, TOOLS).await.expect("bridged");

    let (result, _) = call(
        &tools[0],
        &mut peer,
        "{}",
        json!({"error": {"code": -32602, "message": "Unknown tool: search"}}),
    )
    .await;

    let error = result.expect_err("fatal");
    assert!(!error.is_retry());
    let cause = error.fatal_cause().expect("a cause");
    let mcp = cause.downcast_ref::<Error>().expect("a golem_mcp::Error");
    let protocol = mcp.protocol_error().expect("a protocol error");
    assert_eq!(protocol.code, ProtocolError::INVALID_PARAMS);
    assert_eq!(protocol.message, "Unknown tool: search");
    let through_source = std::error::Error::source(mcp)
        .and_then(|source| source.downcast_ref::<ProtocolError>())
        .expect("ProtocolError in the source chain");
    assert_eq!(through_source, protocol);
}

#[tokio::test]
async fn a_broken_transport_is_fatal_with_its_cause() {
    let (client, mut peer) = connected().await;
    let tools = bridged(&client, &mut peer, TOOLS).await.expect("bridged");
    drop(peer);

    let ctx = ToolContext::new(Arc::new(()), "call_1", 0);
    let error = tools[0].call(ctx, raw("{}")).await.expect_err("fatal");

    let mcp = error
        .fatal_cause()
        .and_then(|cause| cause.downcast_ref::<Error>())
        .expect("a golem_mcp::Error");
    assert!(
        matches!(
            mcp.transport_error(),
            Some(TransportError::ConnectionClosed)
        ),
        "{mcp:?}"
    );
}

#[tokio::test]
async fn a_tool_that_cannot_be_bridged_is_an_error_naming_it() {
    let (client, mut peer) = connected().await;

    let error = bridged(
        &client,
        &mut peer,
        r#"[{"name":"odd","inputSchema":[1,2]}]"#,
    )
    .await
    .expect_err("not an object");

    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.starts_with("mcp: tools/list:") && message.contains("\"odd\""),
        "{message}"
    );
}

#[tokio::test]
async fn the_bridge_is_a_snapshot() {
    let (client, mut peer) = connected().await;
    let first = bridged(&client, &mut peer, TOOLS).await.expect("bridged");
    // The server's list changes; the tools already bridged do not.
    let second = bridged(&client, &mut peer, r#"[{"name":"new"}]"#)
        .await
        .expect("bridged again");
    assert_eq!(
        first.iter().map(Tool::name).collect::<Vec<_>>(),
        ["search", "bare"]
    );
    assert_eq!(second.iter().map(Tool::name).collect::<Vec<_>>(), ["new"]);
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_a_correction_not_a_request() {
    let (client, mut peer) = connected().await;
    let tools = bridged(&client, &mut peer, TOOLS).await.expect("bridged");
    for arguments in ["null", "[1]", "\"hi\"", "3"] {
        let ctx = ToolContext::new(Arc::new(()), "call_1", 0);
        let error = tools[0]
            .call(ctx, raw(arguments))
            .await
            .expect_err("rejected before sending");
        let reason = error
            .as_retry()
            .map(|retry| retry.reason().to_owned())
            .expect("a retry");
        assert!(
            reason.contains("must be a JSON object") && reason.contains(arguments),
            "{reason}"
        );
    }
    // Nothing reached the server.
    let sent = tokio::time::timeout(Duration::from_millis(100), peer.recv_raw()).await;
    assert!(sent.is_err(), "a request was sent: {sent:?}");
}
