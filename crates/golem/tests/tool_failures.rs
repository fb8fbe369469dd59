//! `AgentConfig::tool_failures` (ADR 0031): with `ToolFailures::TellModel`
//! a tool's own error and a call past its timeout become that call's tool
//! message, one line, while the turn's other calls run to their end and the
//! run goes on; the host still hears of the failure. The default fails the
//! run and drops the calls still running.

use std::sync::Arc;
use std::time::Duration;

use golem_agent::model::{Message, Role};
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::{Tool, ToolError};
use golem_agent::{Agent, AgentConfig, RunError, RunEvent, ToolFailures, ToolOutcome};
use tokio::sync::Notify;

mod support;
use support::{bounded, call};

/// The disk's own error, wrapped as a library would wrap it.
#[derive(Debug, thiserror::Error)]
#[error("save: cannot write\nthe file")]
struct CannotWrite(#[source] DiskFull);

#[derive(Debug, thiserror::Error)]
#[error("disk full")]
struct DiskFull;

/// `save` fails at once (after letting `slow` go); `slow` answers once
/// `save` has failed, so it is still running when `save`'s failure is
/// settled.
fn failing_and_slow() -> Vec<Tool<()>> {
    let failed = Arc::new(Notify::new());
    let told = Arc::clone(&failed);
    let save = Tool::<()>::new("save", "", r#"{"type":"object"}"#, move |_, _| {
        let told = Arc::clone(&told);
        async move {
            told.notify_one();
            Err(ToolError::fatal(CannotWrite(DiskFull)))
        }
    })
    .expect("valid tool");
    let slow = Tool::<()>::new("slow", "", r#"{"type":"object"}"#, move |_, _| {
        let failed = Arc::clone(&failed);
        async move {
            failed.notified().await;
            Ok("slow finished".to_owned())
        }
    })
    .expect("valid tool");
    vec![save, slow]
}

fn agent(model: &ScriptedModel, config: AgentConfig<()>) -> Agent<(), String> {
    Agent::new(Arc::new(model.clone()), golem_agent::decode::text, config)
        .expect("a valid configuration")
}

/// The tool messages' contents of `messages`, in order.
fn tool_contents(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| message.content.clone())
        .collect()
}

#[tokio::test]
async fn told_the_model_gets_the_failure_in_one_line_and_the_other_call_runs_on() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "save", "{}"), call("c2", "slow", "{}")]),
        text_response("I could not save."),
    ]);
    let agent = agent(
        &model,
        AgentConfig {
            tools: failing_and_slow(),
            tool_failures: ToolFailures::TellModel,
            ..AgentConfig::default()
        },
    );
    let mut events = Vec::new();
    let mut sink = |event: RunEvent| events.push(event);

    let run = bounded("the run", agent.run_stream((), "Save it", &mut sink))
        .await
        .expect("the run goes on");

    assert_eq!(run.output, "I could not save.");
    let told = tool_contents(&model.requests()[1].messages);
    assert_eq!(
        told,
        [
            "Tool \"save\" failed, so this call has no result: save: cannot write the file: \
             disk full. Call it again only if the error says what to change; otherwise go on \
             without it.",
            "slow finished",
        ]
    );
    let failed: Vec<&ToolOutcome> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolFinished { outcome, .. } if !outcome.is_ok() => Some(outcome),
            _ => None,
        })
        .collect();
    assert_eq!(
        failed,
        [&ToolOutcome::Failed("save: cannot write\nthe file".into())],
        "the host hears of the failure, and of no cancelled call"
    );
}

#[tokio::test]
async fn by_default_the_failure_ends_the_run_and_drops_the_other_call() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "save", "{}"), call("c2", "slow", "{}")]),
        text_response("unreachable"),
    ]);
    let agent = agent(
        &model,
        AgentConfig {
            tools: failing_and_slow(),
            ..AgentConfig::default()
        },
    );
    let mut events = Vec::new();
    let mut sink = |event: RunEvent| events.push(event);

    let error = bounded("the run", agent.run_stream((), "Save it", &mut sink))
        .await
        .expect_err("the seed's contract");

    assert!(
        matches!(&error, RunError::Tool { tool, .. } if tool == "save"),
        "{error:?}"
    );
    assert!(
        events.iter().any(|event| matches!(
            event,
            RunEvent::ToolFinished { tool, outcome: ToolOutcome::Cancelled, .. } if tool == "slow"
        )),
        "{events:?}"
    );
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn told_the_model_hears_of_a_timeout_with_its_seconds() {
    let stuck = Tool::<()>::new("stuck", "", r#"{"type":"object"}"#, |_, _| async {
        std::future::pending::<Result<String, ToolError>>().await
    })
    .expect("valid tool");
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "stuck", "{}")]),
        text_response("It timed out."),
    ]);
    let agent = agent(
        &model,
        AgentConfig {
            tools: vec![stuck],
            tool_timeout: Some(Duration::from_millis(250)),
            tool_failures: ToolFailures::TellModel,
            ..AgentConfig::default()
        },
    );

    let run = bounded("the run", agent.run((), "Go"))
        .await
        .expect("the run goes on");

    assert_eq!(run.output, "It timed out.");
    assert_eq!(
        tool_contents(&model.requests()[1].messages),
        [
            "Tool \"stuck\" did not finish within 0.25 s and was cancelled, so this call has no \
          result. Try a smaller request, or go on without it."
        ]
    );
}

#[tokio::test]
async fn told_the_model_a_failing_tool_is_bounded_by_the_turn_limit() {
    let model = ScriptedModel::new(
        (0..3).map(|turn| tool_calls_response([call(&format!("c{turn}"), "save", "{}")])),
    );
    let agent = agent(
        &model,
        AgentConfig {
            tools: failing_and_slow(),
            tool_failures: ToolFailures::TellModel,
            max_turns: 3,
            ..AgentConfig::default()
        },
    );

    let error = bounded("the run", agent.run((), "Save it"))
        .await
        .expect_err("three turns of failures");

    assert!(
        matches!(error, RunError::TurnLimit { max_turns: 3 }),
        "{error:?}"
    );
}
