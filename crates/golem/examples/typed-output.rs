//! Typed output: the agent's answer as a Rust struct. The struct's JSON
//! Schema (derived with `schemars`) goes to the model with the request, as
//! the provider asks for it (OpenAI: a strict `response_format`); the
//! answer is parsed into the struct, and one that does not fit goes back to
//! the model with the error, so it can correct itself.
//!
//! With `OPENAI_API_KEY` or `OPENAI_BASE_URL` set it asks that API (model
//! `$OPENAI_MODEL`, `gpt-4o-mini` when unset). Otherwise it starts a local
//! stand-in on 127.0.0.1 that speaks the same API: its first answer leaves
//! a field out, its second fits, so it runs offline and shows the
//! correction; the provider code is the same either way.
//!
//! ```sh
//! cargo run -p golem-agent --example typed-output
//! OPENAI_API_KEY=sk-... cargo run -p golem-agent --example typed-output
//! ```

use std::sync::Arc;

use axum::Json;
use axum::routing::post;
use golem_agent::model::{ApiKey, Role};
use golem_agent::{Agent, AgentConfig};
use golem_openai::{OpenAi, OpenAiConfig};
use serde_json::{Value, json};

/// What the agent answers: closed (no other fields) and every field
/// required, so OpenAI can hold the model to it strictly.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct City {
    /// The city's name.
    name: String,
    /// The country it is in.
    country: String,
    /// About how many people live there.
    population: u64,
}

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

    let agent = Agent::<(), City>::typed(
        Arc::new(OpenAi::new(config)?),
        AgentConfig {
            // Answers that do not fit go back to the model twice at most.
            output_retries: 2,
            ..AgentConfig::default()
        },
    )?;
    let run = agent
        .run((), "Which is the largest city of Norway?")
        .await?;

    // A correction is a user message the agent added after an answer.
    for message in run.messages.iter().skip(1) {
        if message.role == Role::User {
            println!("corrected: {}", message.content.replace('\n', " "));
        }
    }
    let city = run.output;
    println!(
        "answer: {} ({}), about {} people",
        city.name, city.country, city.population
    );
    println!("model requests: {}", run.usage.requests);
    Ok(())
}

/// Serves the stand-in on a free port of 127.0.0.1, in this process;
/// returns its base URL.
async fn serve_stand_in() -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}/v1", listener.local_addr()?);
    let app = axum::Router::new().route("/v1/chat/completions", post(chat_completions));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(base_url)
}

/// One answer of the stand-in: JSON without `population` the first time
/// (no correction in the conversation yet), then JSON that fits. Refuses a
/// request that does not ask for the schema, as a test of the example.
async fn chat_completions(Json(body): Json<Value>) -> Json<Value> {
    let format = &body["response_format"];
    let text = if format["type"] != "json_schema" {
        "the request asked for no schema".to_owned()
    } else if body["messages"].as_array().map_or(0, Vec::len) < 2 {
        json!({"name": "Oslo", "country": "Norway"}).to_string()
    } else {
        json!({"name": "Oslo", "country": "Norway", "population": 720_000}).to_string()
    };
    Json(json!({
        "id": "stand-in",
        "object": "chat.completion",
        "model": body["model"],
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    }))
}
