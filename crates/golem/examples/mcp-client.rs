//! An agent using an MCP server's tool, over stdio.
//!
//! Offline and deterministic: started with `serve`, this same binary is a
//! minimal MCP stdio server offering an `echo` tool; without arguments it
//! spawns itself in that role, bridges the server's tools into agent tools
//! with `golem_mcp::as_tools`, and runs an agent whose (test) model first
//! calls `echo` and then answers with what the tool returned.
//!
//! ```sh
//! cargo run -p golem-agent --example mcp-client
//! ```
//!
//! To use a real server instead, spawn it (`StdioConfig::new("npx")` with
//! `args: ["-y", "@modelcontextprotocol/server-everything"]`) and give the
//! agent a real model.

use std::io::{BufRead, Write};

use golem_agent::mcp::{Client, StdioConfig, StdioTransport};
use serde_json::{Value, json};

mod common;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        serve();
        return Ok(());
    }

    // Start the server (this binary, in its `serve` role) and shake hands.
    let me = std::env::current_exe()?;
    let transport = StdioTransport::spawn(StdioConfig {
        args: vec!["serve".into()],
        ..StdioConfig::new(me.to_string_lossy())
    })?;
    let client = Client::connect(transport).await?;
    common::run_echo_agent(&client, "hello from golem").await?;

    client.close().await?;
    Ok(())
}
/// A minimal MCP server on stdin/stdout: one `echo` tool.
fn serve() {
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { return };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            continue; // a notification: nothing to answer
        };
        let result = match message["method"].as_str().unwrap_or_default() {
            "initialize" => json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "golem-example-server", "version": env!("CARGO_PKG_VERSION")}
            }),
            "tools/list" => json!({"tools": [{
                "name": "echo",
                "description": "Returns its text argument.",
                "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
            }]}),
            "tools/call" => {
                let text = message["params"]["arguments"]["text"]
                    .as_str()
                    .unwrap_or_default();
                json!({"content": [{"type": "text", "text": format!("echo: {text}")}]})
            }
            "ping" => json!({}),
            other => {
                let error =
                    json!({"code": -32601, "message": format!("Method not found: {other}")});
                answer(&stdout, json!({"jsonrpc": "2.0", "id": id, "error": error}));
                continue;
            }
        };
        answer(
            &stdout,
            json!({"jsonrpc": "2.0", "id": id, "result": result}),
        );
    }
}

fn answer(stdout: &std::io::Stdout, message: Value) {
    let mut out = stdout.lock();
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}
