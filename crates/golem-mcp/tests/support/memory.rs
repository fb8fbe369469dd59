//! A scripted server over the in-memory transport: the test plays the
//! server's side, message by message, and sees exactly what was sent.

use golem_mcp::memory::{MemoryPeer, memory_pair};
use golem_mcp::{Client, ClientConfig, LATEST_PROTOCOL_VERSION};
use serde_json::{Value, json};

use super::bounded;

/// The next message the client sends, within the bound.
pub async fn next_message(peer: &mut MemoryPeer) -> Value {
    bounded(peer.recv()).await.expect("the client is connected")
}

/// Answers the client's `server/discover` probe as a legacy server does
/// (`-32601`: it knows no such method); returns the next message, which
/// the fallback makes `initialize`.
pub async fn refuse_probe(peer: &mut MemoryPeer) -> Value {
    let probe = next_message(peer).await;
    assert_eq!(probe["method"], "server/discover", "{probe}");
    peer.send(&json!({"jsonrpc": "2.0", "id": probe["id"],
        "error": {"code": -32601, "message": "Method not found"}}));
    next_message(peer).await
}

/// Answers the handshake of a legacy server offering `capabilities`: the
/// probe refused, then `initialize`, up to the client's
/// `notifications/initialized`; returns the `initialize` request.
pub async fn handshake(peer: &mut MemoryPeer, capabilities: Value) -> Value {
    let initialize = refuse_probe(peer).await;
    assert_eq!(initialize["method"], "initialize", "{initialize}");
    peer.send(
        &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": capabilities,
            "serverInfo": {"name": "scripted", "version": "1"}
        }}),
    );
    let initialized = next_message(peer).await;
    assert_eq!(initialized["method"], "notifications/initialized");
    assert!(initialized.get("id").is_none(), "{initialized}");
    initialize
}

/// A client, initialized against a scripted server offering
/// `capabilities`.
pub async fn connected(capabilities: Value) -> (Client, MemoryPeer) {
    let (client, peer, _) = connected_with(ClientConfig::default(), capabilities).await;
    (client, peer)
}

/// A client with `config`, initialized against a scripted server offering
/// `capabilities`; with the `initialize` request it sent.
pub async fn connected_with(
    config: ClientConfig,
    capabilities: Value,
) -> (Client, MemoryPeer, Value) {
    let (transport, mut peer) = memory_pair();
    let client = Client::with_config(transport, config);
    let (initialized, initialize) =
        tokio::join!(client.initialize(), handshake(&mut peer, capabilities));
    initialized.expect("the handshake succeeds");
    (client, peer, initialize)
}

/// Answers the request `id` with `result`.
pub fn reply(peer: &MemoryPeer, id: &Value, result: Value) {
    peer.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
}

/// Answers the next message, which must be a `method` request, with
/// `result`; returns the request.
pub async fn answer(peer: &mut MemoryPeer, method: &str, result: Value) -> Value {
    let request = next_message(peer).await;
    assert_eq!(request["method"], method, "{request}");
    reply(peer, &request["id"], result);
    request
}

/// An initialized client of a scripted server, on a task of its own, that
/// offers one tool: `tool` is its listing, `result` the result of every
/// `tools/call`, and `read` the answer to every `resources/read` (a
/// JSON-RPC answer without its `jsonrpc` and `id`: `{"result": ...}` or
/// `{"error": ...}`).
pub async fn serving_one_tool(tool: Value, result: Value, read: Value) -> Client {
    let (transport, mut peer) = memory_pair();
    tokio::spawn(async move {
        while let Some(message) = peer.recv().await {
            let mut answer = match message["method"].as_str() {
                Some("initialize") => json!({"result": {
                    "protocolVersion": LATEST_PROTOCOL_VERSION,
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "scripted", "version": "1"}
                }}),
                Some("tools/list") => json!({"result": {"tools": [tool]}}),
                Some("tools/call") => json!({"result": result}),
                Some("resources/read") => read.clone(),
                // Notifications are not answered.
                _ if message.get("id").is_none() => continue,
                // What a legacy server answers the probe, and anything else.
                _ => json!({"error": {"code": -32601, "message": "Method not found"}}),
            };
            answer["jsonrpc"] = json!("2.0");
            answer["id"] = message["id"].clone();
            peer.send(&answer);
        }
    });
    let client = Client::new(transport);
    bounded(client.initialize()).await.expect("initializes");
    client
}
