//! The agent with bridged MCP tools, against an in-process server scripted
//! over the in-memory transport: what real servers will not readily do on
//! demand (a JSON-RPC error for a call, a schema with odd spacing).

use std::sync::Arc;

use golem_agent::mcp::memory::{MemoryPeer, memory_pair};
use golem_agent::mcp::{Client, LATEST_PROTOCOL_VERSION, ProtocolError};
use golem_agent::model::ToolCall;
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::{Agent, AgentConfig, RunError};
use serde_json::{Value, json};

mod support;
use support::bounded;

/// The one tool the server lists, as raw text: spacing and key order that
/// any re-serialisation would change.
const TOOLS: &str = r#"[{"name":"lookup","description":"Looks things up.",
  "inputSchema":{ "type":"object",  "properties" : {"zeta":{"type":"string"},"alpha":{}} }}]"#;

const SCHEMA: &str =
    r#"{ "type":"object",  "properties" : {"zeta":{"type":"string"},"alpha":{}} }"#;

/// Serves the handshake and `tools/list`, answers every `tools/call` with a
/// JSON-RPC error, and refuses other requests.
async fn serve(mut peer: MemoryPeer) {
    while let Some(message) = peer.recv().await {
        let id = message["id"].clone();
        let answer = match message["method"].as_str() {
            Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "scripted", "version": "1"}
            }}),
            Some("tools/list") => {
                peer.send_raw(format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":{TOOLS}}}}}"#
                ));
                continue;
            }
            Some("tools/call") => json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32603, "message": "lookup backend unavailable", "data": {"retry_after": 30}
            }}),
            _ if message.get("id").is_none() => continue, // notifications
            // A legacy server's answer to the probe, and to anything else.
            _ => json!({"jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "Method not found"}}),
        };
        peer.send(&answer);
    }
}

async fn connected() -> Client {
    let (transport, peer) = memory_pair();
    tokio::spawn(serve(peer));
    let client = Client::new(transport);
    bounded("initialize", client.initialize())
        .await
        .expect("initializes");
    client
}

fn lookup_call() -> ToolCall {
    ToolCall::new("call_1", "lookup", r#"{"zeta":"x"}"#).expect("valid JSON")
}

#[tokio::test]
async fn a_json_rpc_error_fails_the_run_with_the_protocol_error_recoverable() {
    let client = connected().await;
    let tools = golem_agent::mcp::as_tools::<()>(&client)
        .await
        .expect("bridged");
    let model = ScriptedModel::new([
        tool_calls_response([lookup_call()]),
        text_response("unreachable"),
    ]);
    let agent = Agent::new(
        Arc::new(model.clone()),
        golem_agent::decode::text,
        AgentConfig {
            tools,
            tool_retries: 3, // a protocol error is never a correction
            ..AgentConfig::default()
        },
    )
    .expect("valid agent");

    let error = bounded("the run", agent.run((), "Look it up."))
        .await
        .expect_err("the server failed the call");

    assert!(
        matches!(&error, RunError::Tool { tool, call_id, .. } if tool == "lookup" && call_id == "call_1"),
        "{error:?}"
    );
    let protocol = error
        .find::<ProtocolError>()
        .expect("the ProtocolError is recoverable");
    assert_eq!(protocol.code, ProtocolError::INTERNAL_ERROR);
    assert_eq!(protocol.message, "lookup backend unavailable");
    assert_eq!(protocol.data, Some(json!({"retry_after": 30})));
    let mcp = error
        .find::<golem_agent::mcp::Error>()
        .expect("the MCP error is the tool's cause");
    assert_eq!(mcp.protocol_error(), Some(protocol));
    assert!(
        error.to_string().contains("lookup backend unavailable"),
        "{error}"
    );
    assert_eq!(model.remaining(), 1, "the model was not asked again");
}

#[tokio::test]
async fn the_model_is_offered_the_servers_schema_byte_for_byte() {
    let client = connected().await;
    let tools = golem_agent::mcp::as_tools::<()>(&client)
        .await
        .expect("bridged");
    let model = ScriptedModel::new([text_response("nothing to do")]);
    let agent = Agent::new(
        Arc::new(model.clone()),
        golem_agent::decode::text,
        AgentConfig {
            tools,
            ..AgentConfig::default()
        },
    )
    .expect("valid agent");

    agent.run((), "Hello.").await.expect("run succeeds");

    let offered = &model.requests()[0].tools;
    assert_eq!(offered.len(), 1);
    assert_eq!(offered[0].name, "lookup");
    assert_eq!(offered[0].description, "Looks things up.");
    assert_eq!(offered[0].input_schema.get(), SCHEMA);
    // And serialised for a provider, the bytes are embedded as they are.
    let wire = serde_json::to_string(&offered[0]).expect("serialises");
    assert!(wire.contains(SCHEMA), "{wire}");
    let parsed: Value = serde_json::from_str(&wire).expect("valid JSON");
    assert_eq!(parsed["name"], "lookup");
}
