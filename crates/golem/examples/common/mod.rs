//! The agent flow both MCP examples share: bridge the server's tools, run an
//! agent whose stand-in model calls `echo`, and print what happened.

use std::sync::Arc;

use golem_agent::mcp::Client;
use golem_agent::model::{Request, Role, ToolCall};
use golem_agent::testmodel::{FunctionModel, text_response, tool_calls_response};
use golem_agent::{Agent, AgentConfig};

/// Runs the flow against an initialized `client`; the model asks `echo` to
/// say `greeting`.
pub async fn run_echo_agent(
    client: &Client,
    greeting: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(server) = client.server() {
        println!(
            "server: {} {} (protocol {})",
            server.name, server.version, server.protocol_version
        );
    }

    // The server's tools, as ordinary agent tools.
    let tools = golem_agent::mcp::as_tools::<()>(client).await?;
    println!("bridged tools: {}", tools.len());

    // A stand-in for a real model: it calls `echo` first, then answers with
    // the tool's result.
    let arguments = serde_json::json!({ "text": greeting }).to_string();
    let model = FunctionModel::new(move |request: &Request| match request.messages.last() {
        Some(last) if last.role == Role::Tool => Ok(text_response(format!(
            "The server answered: {}",
            last.content
        ))),
        _ => {
            let call = ToolCall::new("call_1", "echo", &arguments)?;
            Ok(tool_calls_response([call]))
        }
    });
    let agent = Agent::new(
        Arc::new(model),
        golem_agent::decode::text,
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
    Ok(())
}
