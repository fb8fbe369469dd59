//! An MCP server's tools as an agent's toolset: prefixed names, and the list
//! kept current when the server announces a change.

mod support;

use std::time::Duration;

use golem_mcp::memory::{MemoryPeer, memory_pair};
use golem_mcp::{Client, LATEST_PROTOCOL_VERSION, McpToolset, ToolsetConfig};
use golem_tool::{ToolContext, Toolset};
use serde_json::{Value, json};
use support::memory::next_message;
use support::{polled, raw};

/// Answers the next `tools/list` with tools of these names.
async fn list(peer: &mut MemoryPeer, names: &[&str]) {
    let request = loop {
        let message = next_message(peer).await;
        if message["method"] == "tools/list" {
            break message;
        }
    };
    let tools: Vec<Value> = names
        .iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": tools}}));
}

fn names(toolset: &McpToolset<()>) -> Vec<String> {
    toolset
        .tools()
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect()
}

#[tokio::test]
async fn a_prefixed_toolset_follows_list_changes_and_calls_the_servers_names() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let (initialized, _) = tokio::join!(client.initialize(), async {
        let initialize = support::memory::refuse_probe(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {"tools": {"listChanged": true}},
            "serverInfo": {"name": "files", "version": "1"}}}));
    });
    initialized.expect("initialized");
    let (toolset, _) = tokio::join!(
        McpToolset::<()>::new(&client, ToolsetConfig::default().with_prefix("fs")),
        list(&mut peer, &["read"])
    );
    let toolset = toolset.expect("bridged");
    assert_eq!(toolset.name(), "files");
    assert_eq!(names(&toolset), ["fs_read"]);

    // A call names the server's tool, not the prefixed one.
    let tool = toolset.tools().remove(0);
    let arguments = raw("{}");
    let (called, request) = tokio::join!(
        tool.call(
            ToolContext::new(std::sync::Arc::new(()), "c1", 0),
            arguments
        ),
        async {
            let request = loop {
                let message = next_message(&mut peer).await;
                if message["method"] == "tools/call" {
                    break message;
                }
            };
            peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"content": [{"type": "text", "text": "ok"}]}}));
            request
        }
    );
    assert_eq!(called.expect("called"), "ok");
    assert_eq!(request["params"]["name"], "read");

    // Two announcements in a burst: one new listing, and the next request
    // of an agent sees it.
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    list(&mut peer, &["read", "write"]).await;
    // The toolset takes the new list on a task of its own, and says nothing.
    polled(async || (names(&toolset).len() >= 2).then_some(()))
        .await
        .expect("the new list arrived");
    assert_eq!(names(&toolset), ["fs_read", "fs_write"]);
    // Debounced: no second listing follows the burst.
    let extra = tokio::time::timeout(Duration::from_millis(300), async {
        loop {
            let message = next_message(&mut peer).await;
            if message["method"] == "tools/list" {
                return message;
            }
        }
    })
    .await;
    assert!(extra.is_err(), "one listing for the burst");
}
