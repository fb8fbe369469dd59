//! An in-process MCP server scripted over the in-memory transport, for the
//! agent's tests with bridged tools: it lists one tool, `lookup`, and
//! answers every call of it with a JSON-RPC error (what real servers will
//! not readily do on demand).

#![allow(dead_code)] // each test binary uses a part

use golem_agent::mcp::memory::{MemoryPeer, memory_pair};
use golem_agent::mcp::{Client, LATEST_PROTOCOL_VERSION};
use golem_agent::model::ToolCall;
use serde_json::json;

use super::support::bounded;

/// The one tool the server lists, as raw text: spacing and key order that
/// any re-serialisation would change.
pub const TOOLS: &str = r#"[{"name":"lookup","description":"Looks things up.",
  "inputSchema":{ "type":"object",  "properties" : {"zeta":{"type":"string"},"alpha":{}} }}]"#;

pub const SCHEMA: &str =
    r#"{ "type":"object",  "properties" : {"zeta":{"type":"string"},"alpha":{}} }"#;

/// Serves the handshake and `tools/list`, answers every `tools/call` with a
/// JSON-RPC error, and refuses other requests.
pub async fn serve(mut peer: MemoryPeer) {
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

pub async fn connected() -> Client {
    let (transport, peer) = memory_pair();
    tokio::spawn(serve(peer));
    let client = Client::new(transport);
    bounded("initialize", client.initialize())
        .await
        .expect("initializes");
    client
}

pub fn lookup_call() -> ToolCall {
    ToolCall::new("call_1", "lookup", r#"{"zeta":"x"}"#).expect("valid JSON")
}
