//! The `tracing` spans of a run, by OpenTelemetry's GenAI conventions:
//! `invoke_agent`, `chat {model}` per model request and `execute_tool
//! {tool}` per tool call, with their attributes and sizes, how each ended
//! (`error.type`), and never the arguments' content unless asked.

use std::collections::BTreeMap;
use std::sync::Arc;

use golem_agent::model::ToolCall;
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::{Tool, ToolContext, ToolError};
use golem_agent::{Agent, AgentConfig, TelemetryConfig};
use serde_json::value::RawValue;
use tracing_subscriber::layer::SubscriberExt;

mod support;
use support::spans::{Seen, Spans};

const SECRET: &str = "hunter2-secret-argument";

/// The spans of one successful run of an agent with `tool` on a model
/// that answers `responses` in turn.
async fn spans_of_run(tool: Tool<()>, responses: Vec<golem_agent::model::Response>) -> Vec<Seen> {
    let (result, spans) = spans_of(vec![tool], responses).await;
    result.expect("the run succeeds");
    spans
}

/// The result and the spans of one run of an agent with `tools` on a model
/// that answers `responses` in turn.
async fn spans_of(
    tools: Vec<Tool<()>>,
    responses: Vec<golem_agent::model::Response>,
) -> (
    Result<golem_agent::RunOutput<String>, golem_agent::RunError>,
    Vec<Seen>,
) {
    spans_with(tools, responses, TelemetryConfig::default()).await
}

/// [`spans_of`] with `telemetry` in the agent's configuration.
async fn spans_with(
    tools: Vec<Tool<()>>,
    responses: Vec<golem_agent::model::Response>,
    telemetry: TelemetryConfig,
) -> (
    Result<golem_agent::RunOutput<String>, golem_agent::RunError>,
    Vec<Seen>,
) {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let _guard = tracing::subscriber::set_default(subscriber);
    let agent = Agent::new(
        Arc::new(ScriptedModel::new(responses)),
        golem_agent::decode::text,
        AgentConfig {
            tools,
            instructions: Some("Be brief.".into()),
            telemetry,
            ..AgentConfig::default()
        },
    )
    .expect("valid agent");
    let result = agent.run((), "go").await;
    let spans = spans.0.lock().expect("lock").clone();
    (result, spans)
}

/// The fields of the `execute_tool` spans, in the order the calls started.
fn call_spans(spans: &[Seen]) -> Vec<&BTreeMap<String, String>> {
    spans
        .iter()
        .filter(|(name, _)| name == "execute_tool")
        .map(|(_, fields)| fields)
        .collect()
}

/// A tool that answers its arguments.
fn echo() -> Tool<()> {
    Tool::new(
        "echo",
        "Echoes.",
        r#"{"type":"object"}"#,
        |_ctx: ToolContext<()>, args: Box<RawValue>| async move { Ok(args.get().to_owned()) },
    )
    .expect("valid tool")
}

/// A model that calls `echo` once with `arguments`, then answers.
fn echo_once(arguments: &str) -> Vec<golem_agent::model::Response> {
    vec![
        tool_calls_response([ToolCall::new("c1", "echo", arguments).expect("JSON")]),
        text_response("done"),
    ]
}

#[tokio::test]
async fn a_run_has_spans_for_itself_its_requests_and_its_tool_calls() {
    let arguments = format!(r#"{{"password":"{SECRET}"}}"#);
    let spans = spans_of_run(echo(), echo_once(&arguments)).await;
    let names: Vec<&str> = spans.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["invoke_agent", "chat", "execute_tool", "chat"]);
    let run = &spans[0].1;
    assert_eq!(run["otel.name"], "\"invoke_agent\"");
    assert_eq!(run["otel.kind"], "\"internal\"");
    assert_eq!(run["gen_ai.operation.name"], "\"invoke_agent\"");
    assert_eq!(run["gen_ai.provider.name"], "\"testmodel\"");
    assert_eq!(run["golem.requests"], "2");
    assert!(!run.contains_key("error.type"), "{run:?}");
    let request = &spans[1].1;
    assert_eq!(request["otel.name"], "\"chat scripted\"");
    assert_eq!(request["otel.kind"], "\"client\"");
    assert_eq!(request["golem.turn"], "1");
    assert!(!request.contains_key("error.type"), "{request:?}");
    let call = &spans[2].1;
    assert_eq!(call["otel.name"], "\"execute_tool echo\"");
    assert_eq!(call["gen_ai.tool.name"], "\"echo\"");
    assert_eq!(call["gen_ai.tool.call.id"], "\"c1\"");
    assert_eq!(call["golem.argument_bytes"], arguments.len().to_string());
    assert_eq!(call["golem.result_bytes"], arguments.len().to_string());
    assert!(!call.contains_key("error.type"), "{call:?}");
    assert!(!call.contains_key("gen_ai.tool.call.arguments"), "{call:?}");
    for (name, fields) in &spans {
        assert!(
            fields.values().all(|value| !value.contains(SECRET)),
            "{name} shows an argument's value: {fields:?}"
        );
    }
}

#[tokio::test]
async fn a_rejected_call_records_its_outcome_and_no_result_size() {
    let picky = Tool::new(
        "picky",
        "Refuses its first call.",
        r#"{"type":"object"}"#,
        |ctx: ToolContext<()>, _args: Box<RawValue>| async move {
            match ctx.retry {
                0 => Err(ToolError::retry("try again")),
                _ => Ok("fine".to_owned()),
            }
        },
    )
    .expect("valid tool");
    let spans = spans_of_run(
        picky,
        vec![
            tool_calls_response([ToolCall::new("c1", "picky", "{}").expect("JSON")]),
            tool_calls_response([ToolCall::new("c2", "picky", "{}").expect("JSON")]),
            text_response("done"),
        ],
    )
    .await;
    let calls = call_spans(&spans);
    assert_eq!(calls.len(), 2, "{spans:?}");
    assert_eq!(calls[0]["error.type"], "\"tool_error\"");
    assert_eq!(calls[0]["otel.status_code"], "\"ERROR\"");
    assert!(
        !calls[0].contains_key("golem.result_bytes"),
        "{:?}",
        calls[0]
    );
    assert!(!calls[1].contains_key("error.type"), "{:?}", calls[1]);
    assert_eq!(calls[1]["golem.result_bytes"], "4");
}

/// A tool whose calls never finish.
fn hanging(name: &str) -> Tool<()> {
    Tool::new(name, "Hangs.", r#"{"type":"object"}"#, |_, _| async {
        std::future::pending::<Result<String, ToolError>>().await
    })
    .expect("valid tool")
}

#[tokio::test(start_paused = true)]
async fn a_failed_call_and_the_call_it_drops_record_their_outcomes() {
    let broken = Tool::<()>::new("broken", "Fails.", r#"{"type":"object"}"#, |_, _| async {
        Err(ToolError::fatal("disk on fire"))
    })
    .expect("valid tool");
    let (result, spans) = spans_of(
        vec![hanging("slow"), broken],
        vec![tool_calls_response([
            ToolCall::new("s", "slow", "{}").expect("JSON"),
            ToolCall::new("b", "broken", "{}").expect("JSON"),
        ])],
    )
    .await;
    assert_eq!(result.expect_err("the run fails").tool(), Some("broken"));
    let calls = call_spans(&spans);
    assert_eq!(calls.len(), 2, "{spans:?}");
    assert_eq!(calls[0]["gen_ai.tool.name"], "\"slow\"");
    assert_eq!(calls[0]["error.type"], "\"cancelled\"");
    assert_eq!(calls[1]["gen_ai.tool.name"], "\"broken\"");
    assert_eq!(calls[1]["error.type"], "\"_OTHER\"");
    for call in calls {
        assert!(!call.contains_key("golem.result_bytes"), "{call:?}");
    }
    assert_eq!(spans[0].1["error.type"], "\"tool_error\"");
    assert_eq!(spans[0].1["otel.status_code"], "\"ERROR\"");
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_call_records_its_outcome() {
    let (result, spans) = spans_of(
        vec![hanging("slow").with_timeout(std::time::Duration::from_secs(2))],
        vec![tool_calls_response([
            ToolCall::new("s", "slow", "{}").expect("JSON")
        ])],
    )
    .await;
    assert!(
        matches!(result, Err(golem_agent::RunError::ToolTimeout { .. })),
        "{result:?}"
    );
    let calls = call_spans(&spans);
    assert_eq!(calls.len(), 1, "{spans:?}");
    assert_eq!(calls[0]["error.type"], "\"timeout\"");
    assert!(
        !calls[0].contains_key("golem.result_bytes"),
        "{:?}",
        calls[0]
    );
}

#[tokio::test]
async fn content_and_the_agents_name_are_recorded_when_asked() {
    let arguments = format!(r#"{{"password":"{SECRET}"}}"#);
    let (result, spans) = spans_with(
        vec![echo()],
        echo_once(&arguments),
        TelemetryConfig::default()
            .with_agent_name("helper")
            .with_content(true),
    )
    .await;
    result.expect("the run succeeds");
    let run = &spans[0].1;
    assert_eq!(run["otel.name"], "\"invoke_agent helper\"");
    assert_eq!(run["gen_ai.agent.name"], "\"helper\"");
    assert!(
        run["gen_ai.system_instructions"].contains("Be brief."),
        "{run:?}"
    );
    let first = &spans[1].1;
    assert!(first["gen_ai.input.messages"].contains("go"), "{first:?}");
    assert!(
        first["gen_ai.output.messages"].contains(SECRET),
        "{first:?}"
    );
    let call = &call_spans(&spans)[0];
    assert!(
        call["gen_ai.tool.call.arguments"].contains(SECRET),
        "{call:?}"
    );
    assert!(call["gen_ai.tool.call.result"].contains(SECRET), "{call:?}");
}

#[tokio::test]
async fn content_is_not_recorded_by_default() {
    let arguments = format!(r#"{{"password":"{SECRET}"}}"#);
    let spans = spans_of_run(echo(), echo_once(&arguments)).await;
    for (name, fields) in &spans {
        for key in [
            "gen_ai.system_instructions",
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
            "gen_ai.tool.call.result",
        ] {
            assert!(
                !fields.contains_key(key),
                "{name} records {key}: {fields:?}"
            );
        }
    }
}
