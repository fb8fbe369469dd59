//! Connects to an MCP server over stdio, lists its tools and calls one.
//!
//! Offline and deterministic: started with `serve`, this same binary is a
//! minimal MCP stdio server offering an `echo` tool, and without arguments
//! it spawns itself in that role.
//!
//! ```sh
//! cargo run -p golem-mcp --example mcp-client
//! ```

use std::io::{BufRead, Write};

use golem_mcp::{Client, StdioConfig, StdioTransport};
use serde_json::value::RawValue;
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("serve") {
        serve();
        return Ok(());
    }

    let me = std::env::current_exe()?;
    let transport = StdioTransport::spawn(StdioConfig {
        args: vec!["serve".into()],
        ..StdioConfig::new(me.to_string_lossy())
    })?;
    let client = Client::new(transport);

    let server = client.initialize().await?;
    println!(
        "server: {} {} (protocol {})",
        server.name, server.version, server.protocol_version
    );

    let tools = client.list_tools().await?;
    println!("tools: {}", tools.len());
    for tool in &tools {
        println!(
            "  {}: {}",
            tool.name,
            tool.description.as_deref().unwrap_or("")
        );
    }

    let arguments = RawValue::from_string(r#"{"text":"hello from golem"}"#.to_owned())?;
    let result = client.call_tool("echo", &arguments).await?;
    println!("echo returned: {}", result.text());

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
