//! `Agent::typed` through both real providers, against the stand-in that
//! enforces the APIs' rules: the type's schema reaches OpenAI as a strict
//! `response_format` and Anthropic as the output tool it must call; an
//! answer that does not fit goes back to the model with the error, and the
//! next is decoded into the type.

use std::sync::Arc;

use golem_agent::model::{Model, ToolCall};
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::Tool;
use golem_agent::{Agent, AgentConfig, RunError};
use golem_anthropic::{Anthropic, AnthropicConfig};
use golem_fake_provider::{FakeProvider, Reply, messages};
use golem_openai::{OpenAi, OpenAiConfig};
use serde_json::Value;

#[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Capital {
    country: String,
    city: String,
}

fn config() -> AgentConfig<()> {
    AgentConfig {
        output_retries: 2,
        ..AgentConfig::default()
    }
}

/// The last user message of a request body (either API's shape).
fn last_user_text(body: &Value) -> String {
    let last = messages(body)
        .into_iter()
        .rev()
        .find(|message| message["role"] == "user")
        .expect("a user message");
    match &last["content"] {
        Value::String(text) => text.clone(),
        blocks => blocks.to_string(),
    }
}

#[tokio::test]
async fn openai_gets_a_strict_response_format_and_a_wrong_answer_is_corrected() {
    let fake = FakeProvider::start([
        Reply::Text("Paris".into()),
        Reply::Text(r#"{"country": "France", "city": "Paris"}"#.into()),
    ]);
    let model = OpenAi::new(OpenAiConfig {
        base_url: fake.openai_base_url().to_owned(),
        ..OpenAiConfig::new("gpt-4o-mini")
    })
    .expect("config");
    let agent = Agent::<(), Capital>::typed(Arc::new(model), config()).expect("agent");

    let run = agent.run((), "The capital of France?").await.expect("runs");

    assert_eq!(
        run.output,
        Capital {
            country: "France".into(),
            city: "Paris".into()
        }
    );
    let requests = fake.requests();
    assert_eq!(requests.len(), 2);
    let format = &requests[0].body["response_format"];
    assert_eq!(format["json_schema"]["strict"], true, "{format}");
    assert_eq!(format["json_schema"]["name"], "final_result");
    let correction = last_user_text(&requests[1].body);
    assert!(
        correction.contains("the answer is not JSON"),
        "{correction}"
    );
}

#[tokio::test]
async fn anthropic_answers_through_the_output_tool_after_using_a_real_one() {
    let fake = FakeProvider::start([
        Reply::ToolCall {
            name: "lookup".into(),
            arguments: r#"{"country": "Norway"}"#.into(),
        },
        Reply::ToolCall {
            name: "final_result".into(),
            arguments: r#"{"country": "Norway", "city": "Oslo"}"#.into(),
        },
    ]);
    let model = Anthropic::new(AnthropicConfig {
        base_url: fake.anthropic_base_url().to_owned(),
        ..AnthropicConfig::new("claude-test")
    })
    .expect("config");
    let lookup = Tool::new(
        "lookup",
        "Looks a country up.",
        r#"{"type":"object","properties":{"country":{"type":"string"}}}"#,
        |_, _| async { Ok("Its capital is Oslo.".to_owned()) },
    )
    .expect("tool");
    let agent = Agent::<(), Capital>::typed(
        Arc::new(model),
        AgentConfig {
            tools: vec![lookup],
            ..config()
        },
    )
    .expect("agent");

    let run = agent.run((), "The capital of Norway?").await.expect("runs");

    assert_eq!(run.output.city, "Oslo");
    for request in fake.requests() {
        let body = &request.body;
        assert_eq!(body["tool_choice"]["type"], "any", "{body}");
        let names: Vec<&str> = body["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert_eq!(names, ["lookup", "final_result"]);
    }
}

#[tokio::test]
async fn an_answer_that_never_fits_fails_the_run_after_its_retries() {
    let model = ScriptedModel::new([
        tool_calls_response([ToolCall::new("c1", "none", "{}").expect("json")]),
        text_response("{}"),
        text_response("[]"),
        text_response("null"),
    ]);
    let model: Arc<dyn Model> = Arc::new(model);
    let agent = Agent::<(), Capital>::typed(
        model,
        AgentConfig {
            tool_retries: 1,
            ..config()
        },
    )
    .expect("agent");

    let error = agent.run((), "?").await.expect_err("never fits");

    assert!(
        matches!(
            error,
            RunError::OutputRetriesExhausted {
                attempts: 3,
                budget: 2,
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_model_without_structured_output_answers_through_the_final_result_tool() {
    let model = ScriptedModel::new([tool_calls_response([ToolCall::new(
        "c1",
        "final_result",
        r#"{"country": "Japan", "city": "Tokyo"}"#,
    )
    .expect("json")])]);
    let agent = Agent::<(), Capital>::typed(Arc::new(model.clone()), config()).expect("agent");

    let run = agent.run((), "The capital of Japan?").await.expect("runs");

    assert_eq!(run.output.city, "Tokyo");
    let request = &model.requests()[0];
    assert!(request.output.is_none(), "the model cannot take it");
    let tool = request.tools.last().expect("the output tool");
    assert_eq!(tool.name, "final_result");
    assert!(tool.input_schema.get().contains(r#""city""#));
    assert_eq!(
        run.usage.requests, 1,
        "the call is the answer: no second request"
    );
}

#[tokio::test]
async fn the_fallback_tool_goes_by_the_name_the_schema_gives() {
    let model = ScriptedModel::new([tool_calls_response([ToolCall::new(
        "c1",
        "weather_report",
        r#"{"country": "Chile", "city": "Santiago"}"#,
    )
    .expect("json")])]);
    let (mut schema, decoder) = golem_agent::decode::typed::<Capital>();
    schema.name = "weather_report".into();
    let agent = Agent::new(
        Arc::new(model.clone()),
        decoder,
        AgentConfig {
            output: Some(schema),
            ..config()
        },
    )
    .expect("agent");

    let run = agent.run((), "?").await.expect("runs");

    assert_eq!(run.output.city, "Santiago");
    assert_eq!(model.requests()[0].tools[0].name, "weather_report");
}
