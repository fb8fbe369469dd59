//! One agent with the tools of two MCP servers, named in an `mcpServers`
//! file (the format desktop MCP hosts use; `${VAR:-default}` is expanded).
//!
//! `examples/several-servers.json` starts the reference servers
//! `server-everything` and `server-filesystem` (on `$NOTES_DIR`, `/tmp`
//! when unset) with `npx`; another file can be given. Both servers are
//! connected at once, each one's tools are offered under its name
//! (`everything_echo`, `files_list_allowed_directories`) so that two
//! servers' tools cannot clash, and a scripted test model calls a tool of
//! each in one turn, then answers with what they returned. Swap in a real
//! model (see the `openai-agent` example) and it picks the tools itself.
//!
//! ```sh
//! cargo run -p golem-agent --example several-servers
//! cargo run -p golem-agent --example several-servers -- my-servers.json
//! ```

use std::sync::Arc;
use std::time::Duration;

use golem_agent::mcp::{ClientConfig, McpToolset, ToolsetConfig, config};
use golem_agent::model::{Request, Role, ToolCall};
use golem_agent::testmodel::{FunctionModel, text_response, tool_calls_response};
use golem_agent::tool::Toolset;
use golem_agent::{Agent, AgentConfig};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        concat!(env!("CARGO_MANIFEST_DIR"), "/examples/several-servers.json").to_owned()
    });
    let servers = config::load(&path)?;

    // Every enabled server at once, each given 60 s to start and shake
    // hands (`npx` may have to install it first); one result per server.
    let connected = servers
        .connect_all(&ClientConfig::default(), Duration::from_secs(60))
        .await;
    let mut clients = Vec::new();
    let mut toolsets: Vec<Arc<dyn Toolset<()>>> = Vec::new();
    for (name, client) in connected {
        // A desktop host would leave a failing server out; here it is fatal.
        let client = client.map_err(|error| format!("server {name}: {error}"))?;
        if let Some(server) = client.server() {
            println!("{name}: {} {}", server.name, server.version);
        }
        // The server's tools, prefixed with its name, and listed again
        // whenever the server says they changed.
        let tools = McpToolset::new(&client, ToolsetConfig::default().with_prefix(&name)).await?;
        toolsets.push(Arc::new(tools));
        clients.push(client);
    }

    // A stand-in for a real model: one tool of each server, then an answer
    // made of their results.
    let model = FunctionModel::new(|request: &Request| {
        let results: Vec<&str> = request
            .messages
            .iter()
            .filter(|message| message.role == Role::Tool)
            .map(|message| message.content.as_str())
            .collect();
        if !results.is_empty() {
            return Ok(text_response(format!("They said: {}", results.join(" | "))));
        }
        println!("tools offered: {}", request.tools.len());
        Ok(tool_calls_response([
            ToolCall::new("1", "everything_echo", r#"{"message":"hi, both"}"#)?,
            ToolCall::new("2", "files_list_allowed_directories", "{}")?,
        ]))
    });
    let agent = Agent::new(
        Arc::new(model),
        golem_agent::decode::text,
        AgentConfig {
            toolsets,
            tool_timeout: Some(Duration::from_secs(30)),
            ..AgentConfig::default()
        },
    )?;

    let run = agent.run((), "Greet, and say where the notes are.").await?;
    for message in run.messages.iter().filter(|m| m.role == Role::Tool) {
        let tool = message.tool_name.as_deref().unwrap_or("?");
        println!("{tool} returned: {}", message.content.replace('\n', " "));
    }
    println!("answer: {}", run.output.replace('\n', " "));

    for client in clients {
        client.close().await?; // ends the server's process group
    }
    Ok(())
}
