//! An agent using an MCP server's tool, over stdio.
//!
//! Offline and deterministic: started with `serve`, this same binary is a
//! minimal MCP stdio server offering an `echo` tool; without arguments it
//! spawns itself in that role, bridges the server's tools into agent tools
//! with `golem_mcp::as_tools`, and runs an agent whose (test) model first
//! calls `echo` and then answers with what the tool returned.
//!
//! ```sh
//! cargo run -p golem --example mcp-client
//! ```
//!
//! To use a real server instead, spawn it (`StdioConfig::new("npx")` with
//! `args: ["-y", "@modelcontextprotocol/server-everything"]`) and give the
//! agent a real model.

use std::io::{BufRead, Write};
use std::sync::Arc;

use golem::mcp::{Client, StdioConfig, StdioTransport};
use golem::model::{ModelError, Request, Role, ToolCall};
use golem::testmodel::{FunctionModel, text_response, tool_calls_response};
use golem::{Agent, AgentConfig};
use serde_json::{Value, json};

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
    let client = Client::new(transport);
    let server = client.initialize().await?;
    println!(
        "server: {} {} (protocol {})",
        server.name, server.version, server.protocol_version
    );

    // The server's tools, as ordinary agent tools.
    let tools = golem::mcp::as_tools::<()>(&client).await?;
    println!("bridged tools: {}", tools.len());

    // A stand-in for a real model: it calls `echo` first, then answers with
    // the tool's result.
    let model = FunctionModel::new(|request: &Request| match request.messages.last() {
        Some(last) if last.role == Role::Tool => Ok(text_response(format!(
            "The server answered: {}",
            last.content
        ))),
        _ => {
            let call = ToolCall::new("call_1", "echo", r#"{"text":"hello from golem"}"#)
                .map_err(|error| ModelError::with_source("bad scripted call", error))?;
            Ok(tool_calls_response([call]))
        }
    });
    let agent = Agent::new(
        Arc::new(model),
        golem::decode::text,
        AgentConfig {
            tools,
            ..AgentConfig::default()
        },
    )?;

    let run = agent.run((), "Please echo a greeting.").await?;
    for message in run.messages.iter().filter(|m| m.role == Role::Tool) {
        println!(
            "{} returned: {}",
            message.tool_name.as_deref().unwrap_or("?"),
            message.content
        );
    }
    println!("answer: {}", run.output);
    println!("model requests: {}", run.usage.requests);

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
