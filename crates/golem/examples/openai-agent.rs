//! An agent with a real model provider, `golem-openai` (the Chat
//! Completions API of OpenAI or of any compatible server), on the `echo`
//! tool of an MCP server.
//!
//! With `OPENAI_API_KEY` or `OPENAI_BASE_URL` set it asks that API (model
//! `$OPENAI_MODEL`, `gpt-4o-mini` when unset). Otherwise it starts a local
//! stand-in on 127.0.0.1 that speaks the same API, calls `echo` once and
//! then answers with the tool's result, so it runs offline; the provider
//! code is the same either way. The MCP server is the reference
//! `server-everything`, started with `npx` unless another command is given.
//!
//! ```sh
//! cargo run -p golem-agent --example openai-agent
//! OPENAI_API_KEY=sk-... cargo run -p golem-agent --example openai-agent
//! OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.2 cargo run -p golem-agent --example openai-agent
//! cargo run -p golem-agent --example openai-agent -- peers/node_modules/.bin/mcp-server-everything stdio
//! ```

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::routing::post;
use golem_agent::mcp::{Client, StdioConfig, StdioTransport};
use golem_agent::model::{ApiKey, Role};
use golem_agent::{Agent, AgentConfig};
use golem_openai::{OpenAi, OpenAiConfig};
use serde_json::{Value, json};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let api_key = std::env::var("OPENAI_API_KEY").ok().map(ApiKey::new);
    let base_url = std::env::var("OPENAI_BASE_URL").ok();
    let config = match (api_key, base_url) {
        (None, None) => OpenAiConfig {
            base_url: serve_stand_in().await?,
            ..OpenAiConfig::new("stand-in")
        },
        (api_key, base_url) => {
            let model = std::env::var("OPENAI_MODEL").unwrap_or_else(|_| "gpt-4o-mini".into());
            let defaults = OpenAiConfig::new(model);
            OpenAiConfig {
                base_url: base_url.unwrap_or(defaults.base_url.clone()),
                api_key,
                ..defaults
            }
        }
    };
    println!("model: {} at {}", config.model, config.base_url);
    let model = OpenAi::new(config)?;

    // The MCP server's tools, as agent tools; only `echo` is offered, to
    // keep the request small.
    let client = Client::connect(StdioTransport::spawn(server_from_args())?).await?;
    let mut tools = golem_agent::mcp::as_tools::<()>(&client).await?;
    tools.retain(|tool| tool.name() == "echo");

    let agent = Agent::new(
        Arc::new(model),
        golem_agent::decode::text,
        AgentConfig {
            tools,
            instructions: Some("Answer in one sentence.".into()),
            tool_timeout: Some(Duration::from_secs(30)),
            ..AgentConfig::default()
        },
    )?;
    let run = agent
        .run(
            (),
            "Send 'hello from golem' through the echo tool and tell me what came back.",
        )
        .await?;
    for message in run.messages.iter().filter(|m| m.role == Role::Tool) {
        let tool = message.tool_name.as_deref().unwrap_or("?");
        println!("{tool} returned: {}", message.content);
    }
    println!("answer: {}", run.output);
    println!(
        "usage: {} requests, {} input tokens, {} output tokens",
        run.usage.requests, run.usage.input_tokens, run.usage.output_tokens
    );

    client.close().await?;
    Ok(())
}

/// The server to run: the command line's, or `server-everything` by `npx`.
fn server_from_args() -> StdioConfig {
    let mut args = std::env::args().skip(1);
    match args.next() {
        Some(command) => StdioConfig {
            args: args.collect(),
            ..StdioConfig::new(command)
        },
        None => StdioConfig {
            args: vec![
                "-y".into(),
                "@modelcontextprotocol/server-everything".into(),
            ],
            ..StdioConfig::new("npx")
        },
    }
}

/// Serves the stand-in on a free port of 127.0.0.1, in this process;
/// returns its base URL (`/chat/completions` is appended by the provider).
async fn serve_stand_in() -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    let app = axum::Router::new().route("/v1/chat/completions", post(chat_completions));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(base_url)
}

/// One answer of the stand-in, in the API's non-streamed shape (what
/// `Agent::run` asks for; `run_stream` would need an event stream): a call
/// of `echo` while no tool has answered, then the last tool result as text.
async fn chat_completions(Json(body): Json<Value>) -> Json<Value> {
    let last = body["messages"]
        .as_array()
        .and_then(|messages| messages.last());
    let (message, finish_reason) = match last {
        Some(tool) if tool["role"] == "tool" => {
            let result = tool["content"].as_str().unwrap_or_default();
            let text = format!("The echo tool answered \"{result}\".");
            (json!({"role": "assistant", "content": text}), "stop")
        }
        _ => {
            let call = json!({
                "id": "call_1",
                "type": "function",
                "function": {"name": "echo", "arguments": r#"{"message":"hello from golem"}"#}
            });
            let message = json!({"role": "assistant", "content": null, "tool_calls": [call]});
            (message, "tool_calls")
        }
    };
    let answer = json!({
        "id": "stand-in",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    });
    Json(answer)
}
