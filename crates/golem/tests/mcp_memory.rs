//! The agent with bridged MCP tools, against an in-process server scripted
//! over the in-memory transport: what real servers will not readily do on
//! demand (a JSON-RPC error for a call, a schema with odd spacing).

use std::sync::Arc;

use golem_agent::mcp::ProtocolError;
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::{Agent, AgentConfig, RunError};
use serde_json::{Value, json};

mod support;
use support::bounded;

#[path = "support/lookup_server.rs"]
mod lookup_server;
use lookup_server::{SCHEMA, connected, lookup_call};

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
