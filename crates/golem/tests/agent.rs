//! The run loop, with fake tools and the test models: outcomes, budgets,
//! timeouts, the order of tool messages, and the concurrency rules.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use golem_agent::model::{Message, ModelRetry, Request, Response, Role, ToolCall, Usage};
use golem_agent::testmodel::{FunctionModel, ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::{Tool, ToolContext, ToolError};
use golem_agent::{Agent, AgentConfig, ConfigError, DecodeError, RunError};
use serde_json::value::RawValue;
use tokio::sync::{Barrier, Notify};

mod support;
use support::{bounded, call, constant};

fn agent<Deps, Output>(
    model: impl golem_agent::model::Model + 'static,
    decoder: impl Fn(&Response) -> Result<Output, DecodeError> + Send + Sync + 'static,
    config: AgentConfig<Deps>,
) -> Agent<Deps, Output> {
    Agent::new(Arc::new(model), decoder, config).expect("a valid configuration")
}

fn text_agent(model: ScriptedModel, tools: Vec<Tool<()>>) -> Agent<(), String> {
    agent(
        model,
        golem_agent::decode::text,
        AgentConfig {
            tools,
            ..AgentConfig::default()
        },
    )
}

/// The tool messages of a history, as (call id, tool name, content).
fn tool_messages(messages: &[Message]) -> Vec<(String, String, String)> {
    messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| {
            (
                message.tool_call_id.clone().unwrap_or_default(),
                message.tool_name.clone().unwrap_or_default(),
                message.content.clone(),
            )
        })
        .collect()
}

/// A shared record of what the fake tools did, in order.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<String>>>);

impl Log {
    fn push(&self, event: impl Into<String>) {
        self.0.lock().expect("log lock").push(event.into());
    }

    fn events(&self) -> Vec<String> {
        self.0.lock().expect("log lock").clone()
    }

    fn position(&self, event: &str) -> usize {
        let events = self.events();
        events
            .iter()
            .position(|e| e == event)
            .unwrap_or_else(|| panic!("{event:?} not in {events:?}"))
    }
}

#[tokio::test]
async fn a_text_answer_ends_the_run_with_the_history_and_summed_usage() {
    let model = ScriptedModel::new([
        Response {
            tool_calls: vec![call("c1", "clock", "{}")],
            // A model that leaves `requests` unset: the agent counts requests
            // itself.
            usage: Usage {
                input_tokens: 10,
                output_tokens: 2,
                requests: 0,
                ..Usage::default()
            },
            ..Response::default()
        },
        Response {
            text: "It is noon.".into(),
            usage: Usage {
                input_tokens: 15,
                output_tokens: 4,
                requests: 0,
                ..Usage::default()
            },
            ..Response::default()
        },
    ]);
    let agent = agent(
        model.clone(),
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![constant("clock", "12:00")],
            instructions: Some("Be brief.".into()),
            ..AgentConfig::default()
        },
    );

    let run = agent
        .run((), "What time is it?")
        .await
        .expect("run succeeds");

    assert_eq!(run.output, "It is noon.");
    assert_eq!(
        run.usage,
        Usage {
            input_tokens: 25,
            output_tokens: 6,
            requests: 2,
            ..Usage::default()
        }
    );
    assert_eq!(
        run.messages,
        vec![
            Message::user("What time is it?"),
            Message::assistant_with_tool_calls("", vec![call("c1", "clock", "{}")]),
            Message::tool_result("c1", "clock", "12:00"),
            Message::assistant("It is noon."),
        ]
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.instructions.as_deref(), Some("Be brief."));
        assert_eq!(request.tools.len(), 1);
        assert_eq!(request.tools[0].name, "clock");
        assert_eq!(request.tools[0].input_schema.get(), r#"{"type":"object"}"#);
    }
    assert_eq!(requests[0].messages, run.messages[..1]);
    assert_eq!(requests[1].messages, run.messages[..3]);
}

#[tokio::test]
async fn tool_messages_follow_the_order_of_the_calls_not_of_their_completion() {
    let log = Log::default();
    let second_done = Arc::new(Notify::new());
    // `slow` can only finish after `fast` has: it completes second.
    let slow = {
        let (log, second_done) = (log.clone(), Arc::clone(&second_done));
        Tool::new("slow", "", r#"{"type":"object"}"#, move |_, _| {
            let (log, second_done) = (log.clone(), Arc::clone(&second_done));
            async move {
                second_done.notified().await;
                log.push("slow done");
                Ok("slow result".to_owned())
            }
        })
        .expect("valid tool")
    };
    let fast = {
        let log = log.clone();
        Tool::new("fast", "", r#"{"type":"object"}"#, move |_, _| {
            let (log, second_done) = (log.clone(), Arc::clone(&second_done));
            async move {
                log.push("fast done");
                second_done.notify_one();
                Ok("fast result".to_owned())
            }
        })
        .expect("valid tool")
    };
    let model = ScriptedModel::new([
        tool_calls_response([call("a", "slow", "{}"), call("b", "fast", "{}")]),
        text_response("done"),
    ]);
    let agent = text_agent(model, vec![slow, fast]);

    let run = bounded("the run (no deadlock)", agent.run((), "go"))
        .await
        .expect("run succeeds");

    assert_eq!(log.events(), ["fast done", "slow done"]);
    assert_eq!(
        tool_messages(&run.messages),
        [
            ("a".into(), "slow".into(), "slow result".into()),
            ("b".into(), "fast".into(), "fast result".into()),
        ]
    );
}

/// A tool that logs `start NAME`, meets the others at `barrier` (if any),
/// yields, and logs `end NAME`; NAME is the call id.
fn meeting_tool(
    name: &str,
    log: &Log,
    barrier: Option<Arc<Barrier>>,
    sequential: bool,
) -> Tool<()> {
    let log = log.clone();
    Tool::new(
        name,
        "",
        r#"{"type":"object"}"#,
        move |ctx: ToolContext<()>, _| {
            let (log, barrier) = (log.clone(), barrier.clone());
            async move {
                log.push(format!("start {}", ctx.tool_call_id));
                if let Some(barrier) = barrier {
                    barrier.wait().await;
                }
                // Give any call that (wrongly) runs alongside a chance to start.
                for _ in 0..3 {
                    tokio::task::yield_now().await;
                }
                log.push(format!("end {}", ctx.tool_call_id));
                Ok(ctx.tool_call_id)
            }
        },
    )
    .expect("valid tool")
    .sequential(sequential)
}

#[tokio::test]
async fn calls_of_one_turn_run_concurrently() {
    let log = Log::default();
    // Three calls that can only finish once all three have started.
    let barrier = Arc::new(Barrier::new(3));
    let tool = meeting_tool("meet", &log, Some(barrier), false);
    let model = ScriptedModel::new([
        tool_calls_response([
            call("m1", "meet", "{}"),
            call("m2", "meet", "{}"),
            call("m3", "meet", "{}"),
        ]),
        text_response("met"),
    ]);
    let agent = text_agent(model, vec![tool]);

    let run = bounded(
        "the calls meeting (they run concurrently)",
        agent.run((), "go"),
    )
    .await
    .expect("run succeeds");

    let events = log.events();
    assert_eq!(
        events[..3],
        ["start m1", "start m2", "start m3"],
        "{events:?}"
    );
    let ids: Vec<String> = tool_messages(&run.messages)
        .into_iter()
        .map(|(id, _, content)| {
            assert_eq!(id, content);
            id
        })
        .collect();
    assert_eq!(ids, ["m1", "m2", "m3"]);
}

#[tokio::test]
async fn a_sequential_call_is_a_barrier() {
    let log = Log::default();
    let before = meeting_tool("before", &log, Some(Arc::new(Barrier::new(2))), false);
    let alone = meeting_tool("alone", &log, None, true);
    let after = meeting_tool("after", &log, Some(Arc::new(Barrier::new(2))), false);
    let model = ScriptedModel::new([
        tool_calls_response([
            call("b1", "before", "{}"),
            call("b2", "before", "{}"),
            call("s1", "alone", "{}"),
            call("s2", "alone", "{}"),
            call("a1", "after", "{}"),
            call("a2", "after", "{}"),
        ]),
        text_response("done"),
    ]);
    let agent = text_agent(model, vec![before, alone, after]);

    let run = bounded(
        "the concurrent groups meeting (they run concurrently)",
        agent.run((), "go"),
    )
    .await
    .expect("run succeeds");

    let at = |event: &str| log.position(event);
    // Earlier calls finish before the sequential one starts.
    assert!(
        at("end b1") < at("start s1") && at("end b2") < at("start s1"),
        "{:?}",
        log.events()
    );
    // Each sequential call runs alone: the next starts after it ends.
    assert!(at("end s1") < at("start s2"), "{:?}", log.events());
    // Later calls start after it.
    assert!(
        at("end s2") < at("start a1") && at("end s2") < at("start a2"),
        "{:?}",
        log.events()
    );
    assert_eq!(log.events().len(), 12);
    let ids: Vec<String> = tool_messages(&run.messages)
        .into_iter()
        .map(|(id, ..)| id)
        .collect();
    assert_eq!(ids, ["b1", "b2", "s1", "s2", "a1", "a2"]);
}

/// A tool that rejects calls without a `"n"` argument, and counts calls.
fn picky(calls: &Arc<AtomicU32>, seen_retries: &Arc<Mutex<Vec<u32>>>) -> Tool<()> {
    picky_named("picky", calls, seen_retries)
}

/// [`picky`] under another name.
fn picky_named(
    name: &str,
    calls: &Arc<AtomicU32>,
    seen_retries: &Arc<Mutex<Vec<u32>>>,
) -> Tool<()> {
    let (calls, seen_retries) = (Arc::clone(calls), Arc::clone(seen_retries));
    Tool::new(
        name,
        "",
        r#"{"type":"object"}"#,
        move |ctx: ToolContext<()>, args: Box<RawValue>| {
            let (calls, seen_retries) = (Arc::clone(&calls), Arc::clone(&seen_retries));
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                seen_retries.lock().expect("lock").push(ctx.retry);
                if args.get().contains("\"n\"") {
                    Ok("accepted".to_owned())
                } else {
                    Err(ModelRetry::new("`n` is required").into())
                }
            }
        },
    )
    .expect("valid tool")
}

#[tokio::test]
async fn within_budget_a_rejection_goes_back_to_the_model_and_the_batch_still_runs() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen_retries = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "picky", "{}"), call("c2", "other", "{}")]),
        tool_calls_response([call("c3", "picky", r#"{"n":1}"#)]),
        text_response("fixed"),
    ]);
    let agent = agent(
        model.clone(),
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![picky(&calls, &seen_retries), constant("other", "other ran")],
            tool_retries: 1,
            ..AgentConfig::default()
        },
    );

    let run = agent.run((), "go").await.expect("run succeeds");

    assert_eq!(run.output, "fixed");
    let messages = tool_messages(&run.messages);
    assert_eq!(messages[0].0, "c1");
    assert_eq!(messages[0].1, "picky");
    let rejection = &messages[0].2;
    assert!(
        rejection.contains("rejected the arguments")
            && rejection.contains("`n` is required")
            && rejection.contains("corrected arguments"),
        "{rejection}"
    );
    assert_eq!(
        messages[1],
        ("c2".into(), "other".into(), "other ran".into())
    );
    assert_eq!(
        messages[2],
        ("c3".into(), "picky".into(), "accepted".into())
    );
    // The model saw the rejection before trying again.
    let second = &model.requests()[1];
    assert!(second.messages.iter().any(|m| &m.content == rejection));
    // The tool was told how often it had been corrected.
    assert_eq!(*seen_retries.lock().expect("lock"), [0, 1]);
}

#[tokio::test]
async fn by_default_one_correction_is_allowed_and_the_second_rejection_fails_the_run() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen_retries = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "picky", "{}")]),
        tool_calls_response([call("c2", "picky", "{}")]),
        text_response("unreachable"),
    ]);
    let agent = text_agent(model.clone(), vec![picky(&calls, &seen_retries)]);

    let error = agent
        .run((), "go")
        .await
        .expect_err("one correction, then the run fails");

    assert!(
        matches!(
            &error,
            RunError::ToolRetriesExhausted { tool, call_id, attempts: 2, budget: 1, .. }
                if tool == "picky" && call_id == "c2"
        ),
        "{error:?}"
    );
    assert_eq!(error.tool(), Some("picky"));
    let message = error.to_string();
    assert!(
        message.contains("\"picky\"") && message.contains("attempt 2"),
        "{message}"
    );
    let retry = std::error::Error::source(&error)
        .and_then(|source| source.downcast_ref::<ModelRetry>())
        .expect("the ModelRetry is the source");
    assert_eq!(retry.reason(), "`n` is required");
    assert_eq!(error.find::<ModelRetry>(), Some(retry));
    assert_eq!(model.remaining(), 1, "the model was not asked again");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "the tool ran twice");
}

#[tokio::test]
async fn a_tools_own_budget_replaces_the_agents() {
    // The agent allows 5 corrections, the tool only 1: the second fails.
    let calls = Arc::new(AtomicU32::new(0));
    let seen_retries = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "picky", "{}")]),
        tool_calls_response([call("c2", "picky", "{}")]),
        text_response("unreachable"),
    ]);
    let strict = agent(
        model,
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![picky(&calls, &seen_retries).with_max_retries(1)],
            tool_retries: 5,
            ..AgentConfig::default()
        },
    );
    let error = strict.run((), "go").await.expect_err("budget of 1 spent");
    assert!(
        matches!(
            error,
            RunError::ToolRetriesExhausted {
                attempts: 2,
                budget: 1,
                ..
            }
        ),
        "{error:?}"
    );

    // The agent allows none, the tool 1: one correction succeeds.
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "picky", "{}")]),
        tool_calls_response([call("c2", "picky", r#"{"n":2}"#)]),
        text_response("ok"),
    ]);
    let lenient = text_agent(
        model,
        vec![picky(&calls, &seen_retries).with_max_retries(1)],
    );
    assert_eq!(
        lenient.run((), "go").await.expect("one correction").output,
        "ok"
    );
}

#[derive(Debug, thiserror::Error)]
#[error("disk full")]
struct DiskFull;

#[tokio::test]
async fn a_fatal_tool_error_fails_the_run_with_its_cause_intact() {
    let failing = Tool::<()>::new("save", "", r#"{"type":"object"}"#, |_, _| async {
        Err(ToolError::fatal(DiskFull))
    })
    .expect("valid tool");
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "save", "{}")]),
        text_response("unreachable"),
    ]);
    let agent = agent(
        model,
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![failing],
            tool_retries: 3, // a fatal error is never a retry
            ..AgentConfig::default()
        },
    );

    let error = agent.run((), "go").await.expect_err("fatal");

    assert!(
        matches!(&error, RunError::Tool { tool, call_id, .. } if tool == "save" && call_id == "c1"),
        "{error:?}"
    );
    let source = std::error::Error::source(&error).expect("a source");
    assert!(source.downcast_ref::<DiskFull>().is_some(), "{source:?}");
    assert!(error.find::<DiskFull>().is_some());
    assert!(error.to_string().contains("disk full"), "{error}");
}

/// Signals when dropped.
struct DropSignal(Option<tokio::sync::oneshot::Sender<()>>);

impl Drop for DropSignal {
    fn drop(&mut self) {
        if let Some(sender) = self.0.take() {
            let _ = sender.send(());
        }
    }
}

/// A tool that never finishes; its future reports being dropped.
fn hanging(name: &str) -> (Tool<()>, tokio::sync::oneshot::Receiver<()>) {
    let (sender, dropped) = tokio::sync::oneshot::channel();
    let sender = Arc::new(Mutex::new(Some(sender)));
    let tool = Tool::new(name, "", r#"{"type":"object"}"#, move |_, _| {
        let signal = DropSignal(sender.lock().expect("lock").take());
        async move {
            let _signal = signal;
            std::future::pending::<Result<String, ToolError>>().await
        }
    })
    .expect("valid tool");
    (tool, dropped)
}

#[tokio::test(start_paused = true)]
async fn a_call_outliving_the_agents_timeout_is_dropped_and_fails_the_run() {
    let (tool, mut dropped) = hanging("hang");
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "hang", "{}")]),
        text_response("unreachable"),
    ]);
    let agent = agent(
        model,
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![tool],
            tool_timeout: Some(Duration::from_secs(2)),
            ..AgentConfig::default()
        },
    );

    let error = agent.run((), "go").await.expect_err("timed out");

    assert!(
        matches!(&error, RunError::ToolTimeout { tool, timeout, .. } if tool == "hang" && *timeout == Duration::from_secs(2)),
        "{error:?}"
    );
    assert!(error.to_string().contains("\"hang\""), "{error}");
    assert_eq!(dropped.try_recv(), Ok(()), "the call's future was dropped");
}

/// A tool that works 10 s, saying it is alive every second.
fn reporting(name: &str) -> Tool<()> {
    Tool::new(
        name,
        "",
        r#"{"type":"object"}"#,
        |ctx: ToolContext<()>, _| async move {
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_secs(1)).await;
                ctx.alive.report();
            }
            Ok("done".to_owned())
        },
    )
    .expect("valid tool")
}

#[tokio::test(start_paused = true)]
async fn the_timeout_is_idle_each_report_restarts_it_under_the_maximum() {
    let run = |max: Option<Duration>| {
        let model = ScriptedModel::new([
            tool_calls_response([call("c1", "work", "{}")]),
            text_response("finished"),
        ]);
        let config = AgentConfig {
            tools: vec![reporting("work")],
            tool_timeout: Some(Duration::from_secs(2)),
            tool_max_time: max,
            ..AgentConfig::default()
        };
        agent(model, golem_agent::decode::text, config)
    };
    // 10 s of work, never 2 s without a report: it runs to its end.
    let started = tokio::time::Instant::now();
    let finished = run(None).run((), "go").await.expect("finished");
    assert_eq!(finished.output, "finished");
    assert!(started.elapsed() >= Duration::from_secs(10));
    // A hard maximum below the work ends it, progress or not.
    let error = run(Some(Duration::from_secs(5)))
        .run((), "go")
        .await
        .expect_err("past the maximum");
    assert!(
        matches!(&error, RunError::ToolTimeout { timeout, .. } if *timeout == Duration::from_secs(5)),
        "{error:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_tools_own_timeout_replaces_the_agents() {
    let (tool, mut dropped) = hanging("hang");
    let model = ScriptedModel::new([tool_calls_response([call("c1", "hang", "{}")])]);
    let agent = agent(
        model,
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![tool.with_timeout(Duration::from_millis(50))],
            tool_timeout: Some(Duration::from_secs(3600)),
            ..AgentConfig::default()
        },
    );
    let started = tokio::time::Instant::now();

    let error = agent.run((), "go").await.expect_err("timed out");

    assert!(
        matches!(error, RunError::ToolTimeout { timeout, .. } if timeout == Duration::from_millis(50)),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(1));
    assert_eq!(dropped.try_recv(), Ok(()));
}

#[tokio::test(start_paused = true)]
async fn a_failing_call_drops_the_calls_still_running_beside_it() {
    let (tool, mut dropped) = hanging("hang");
    let failing = Tool::<()>::new("fail", "", r#"{"type":"object"}"#, |_, _| async {
        Err(ToolError::fatal("broken"))
    })
    .expect("valid tool");
    let model = ScriptedModel::new([tool_calls_response([
        call("c1", "hang", "{}"),
        call("c2", "fail", "{}"),
    ])]);
    let agent = agent(
        model,
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![tool, failing],
            // A guard: were the calls not concurrent, this would end the run.
            tool_timeout: Some(Duration::from_secs(3600)),
            ..AgentConfig::default()
        },
    );

    let error = agent.run((), "go").await.expect_err("fatal");

    assert_eq!(error.tool(), Some("fail"));
    assert_eq!(dropped.try_recv(), Ok(()), "the hanging call was cancelled");
}

#[tokio::test]
async fn an_unknown_tool_goes_back_to_the_model_naming_the_tools_there_are() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen_retries = Arc::new(Mutex::new(Vec::new()));
    // The model drops the prefix of `srv_picky`, and the turn's other call
    // names a tool that exists: it runs.
    let model = ScriptedModel::new([
        tool_calls_response([
            call("c1", "picky", r#"{"n":1}"#),
            call("c2", "srv_picky", r#"{"n":1}"#),
        ]),
        tool_calls_response([call("c3", "srv_picky", r#"{"n":1}"#)]),
        text_response("done"),
    ]);
    let tool = picky_named("srv_picky", &calls, &seen_retries);
    let agent = agent(
        model.clone(),
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![tool, constant("clock", "noon")],
            ..AgentConfig::default()
        },
    );

    let run = agent.run((), "go").await.expect("corrected");

    assert_eq!(run.output, "done");
    let messages = tool_messages(&run.messages);
    assert_eq!(messages[0].0, "c1");
    assert_eq!(messages[0].1, "picky", "named as the model called it");
    assert_eq!(
        messages[0].2,
        "There is no tool named \"picky\". Did you mean \"srv_picky\"? The tools are: \
         \"srv_picky\", \"clock\". Call one of them by its exact name, or answer without a tool."
    );
    assert_eq!(messages[1].0, "c2");
    assert_eq!(calls.load(Ordering::SeqCst), 2, "the known calls ran");
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn past_the_budget_an_unknown_tool_fails_the_turn_before_any_call_runs() {
    let calls = Arc::new(AtomicU32::new(0));
    let seen_retries = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "nope", "{}")]),
        tool_calls_response([call("c2", "picky", r#"{"n":1}"#), call("c3", "nope", "{}")]),
        text_response("unreachable"),
    ]);
    let agent = agent(
        model.clone(),
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![picky(&calls, &seen_retries)],
            tool_retries: 1,
            ..AgentConfig::default()
        },
    );

    let error = agent.run((), "go").await.expect_err("unknown tool");

    assert!(
        matches!(&error, RunError::UnknownTool { tool, call_id, available, attempts: 2, budget: 1 } if tool == "nope" && call_id == "c3" && available == &["picky"]),
        "{error:?}"
    );
    assert!(error.to_string().contains("\"nope\""), "{error}");
    assert!(
        error.to_string().contains("AgentConfig::tool_retries"),
        "{error}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "no call of the turn ran");
    assert_eq!(model.requests().len(), 2, "the model was corrected once");

    // With no budget, the first unknown name fails the run.
    let model = ScriptedModel::new([tool_calls_response([call("c1", "nope", "{}")])]);
    let strict = agent_with_retries(model.clone(), 0);
    let error = strict.run((), "go").await.expect_err("unknown tool");
    assert!(
        matches!(
            &error,
            RunError::UnknownTool {
                attempts: 1,
                budget: 0,
                ..
            }
        ),
        "{error:?}"
    );
    assert_eq!(model.requests().len(), 1);
}

fn agent_with_retries(model: ScriptedModel, tool_retries: u32) -> Agent<(), String> {
    agent(
        model,
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![constant("clock", "noon")],
            tool_retries,
            ..AgentConfig::default()
        },
    )
}

#[test]
fn duplicate_tool_names_and_zero_turns_are_refused() {
    let error = Agent::<(), String>::new(
        Arc::new(ScriptedModel::new([])),
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![
                constant("twin", "a"),
                constant("other", "b"),
                constant("twin", "c"),
            ],
            ..AgentConfig::default()
        },
    )
    .expect_err("duplicate");
    assert!(
        matches!(&error, ConfigError::DuplicateTool { name } if name == "twin"),
        "{error:?}"
    );
    assert!(error.to_string().contains("\"twin\""), "{error}");

    let error = Agent::<(), String>::new(
        Arc::new(ScriptedModel::new([])),
        golem_agent::decode::text,
        AgentConfig {
            max_turns: 0,
            ..AgentConfig::default()
        },
    )
    .expect_err("zero turns");
    assert!(
        matches!(error, ConfigError::ZeroMaxTurns { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn the_turn_limit_ends_the_run_without_running_the_last_turns_calls() {
    let runs = Arc::new(AtomicU32::new(0));
    let counter = {
        let runs = Arc::clone(&runs);
        Tool::<()>::new("again", "", r#"{"type":"object"}"#, move |_, _| {
            let runs = Arc::clone(&runs);
            async move {
                runs.fetch_add(1, Ordering::SeqCst);
                Ok("again".to_owned())
            }
        })
        .expect("valid tool")
    };
    // A model that never stops calling the tool.
    let model = FunctionModel::new(|request: &Request| {
        Ok(tool_calls_response([ToolCall::new(
            format!("c{}", request.messages.len()),
            "again",
            "{}",
        )
        .map_err(|e| {
            golem_agent::model::ModelError::with_source("bad call", e)
        })?]))
    });
    let agent = agent(
        model.clone(),
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![counter],
            max_turns: 3,
            ..AgentConfig::default()
        },
    );

    let error = agent.run((), "go").await.expect_err("turn limit");

    assert!(
        matches!(error, RunError::TurnLimit { max_turns: 3 }),
        "{error:?}"
    );
    assert!(
        error.to_string().contains("limit of 3 model turn"),
        "{error}"
    );
    assert_eq!(model.requests().len(), 3);
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// Decodes a number; anything else is sent back for correction.
fn number(response: &Response) -> Result<u32, DecodeError> {
    response.text.trim().parse().map_err(|_| {
        DecodeError::retry(format!(
            "{:?} is not a number; answer with digits only",
            response.text
        ))
    })
}

#[tokio::test]
async fn a_rejected_answer_is_corrected_within_the_output_budget() {
    let model = ScriptedModel::new([text_response("forty-two"), text_response("42")]);
    let agent = agent(
        model.clone(),
        number,
        AgentConfig::<()> {
            output_retries: 1,
            ..AgentConfig::default()
        },
    );

    let run = agent.run((), "How many?").await.expect("corrected");

    assert_eq!(run.output, 42);
    assert_eq!(run.messages.len(), 4);
    assert_eq!(run.messages[1], Message::assistant("forty-two"));
    assert_eq!(run.messages[2].role, Role::User);
    assert!(
        run.messages[2]
            .content
            .contains("\"forty-two\" is not a number"),
        "{:?}",
        run.messages[2]
    );
    assert_eq!(model.requests()[1].messages, run.messages[..3]);
    assert_eq!(run.usage.requests, 2);
}

#[tokio::test]
async fn without_output_budget_a_rejected_answer_fails_the_run() {
    let model = ScriptedModel::new([text_response("forty-two"), text_response("42")]);
    let agent = agent(model, number, AgentConfig::<()>::default());

    let error = agent.run((), "How many?").await.expect_err("no correction");

    assert!(
        matches!(
            error,
            RunError::OutputRetriesExhausted {
                attempts: 1,
                budget: 0,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(
        error
            .find::<ModelRetry>()
            .is_some_and(|retry| retry.reason().contains("forty-two"))
    );
}

#[tokio::test]
async fn a_decoders_fatal_error_fails_the_run() {
    let model = ScriptedModel::new([text_response("anything")]);
    let agent = agent(
        model,
        |_: &Response| -> Result<(), DecodeError> { Err(DecodeError::fatal(DiskFull)) },
        AgentConfig::<()> {
            output_retries: 5,
            ..AgentConfig::default()
        },
    );

    let error = agent.run((), "go").await.expect_err("fatal");

    assert!(matches!(error, RunError::Output { .. }), "{error:?}");
    assert!(error.find::<DiskFull>().is_some());
}

#[tokio::test]
async fn a_model_error_fails_the_run_naming_the_turn() {
    // The script runs out on the second request.
    let model = ScriptedModel::new([tool_calls_response([call("c1", "clock", "{}")])]);
    let agent = text_agent(model, vec![constant("clock", "12:00")]);

    let error = agent.run((), "go").await.expect_err("script ran out");

    assert!(
        matches!(error, RunError::Model { turn: 2, .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(
        message.contains("turn 2") && message.contains("no scripted response"),
        "{message}"
    );
}

#[tokio::test]
async fn every_tool_call_sees_the_runs_dependencies() {
    struct Deps {
        user: String,
    }
    let whoami = Tool::new(
        "whoami",
        "",
        r#"{"type":"object"}"#,
        |ctx: ToolContext<Deps>, _| async move { Ok(ctx.deps.user.clone()) },
    )
    .expect("valid tool");
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "whoami", "{}")]),
        text_response("done"),
        tool_calls_response([call("c2", "whoami", "{}")]),
        text_response("done"),
    ]);
    let agent = agent(
        model,
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![whoami],
            ..AgentConfig::default()
        },
    );

    let run = agent
        .run(Deps { user: "ada".into() }, "who?")
        .await
        .expect("run");
    assert_eq!(tool_messages(&run.messages)[0].2, "ada");
    let shared = Arc::new(Deps {
        user: "grace".into(),
    });
    let run = agent.run(Arc::clone(&shared), "who?").await.expect("run");
    assert_eq!(tool_messages(&run.messages)[0].2, "grace");
}

#[test]
fn agents_and_their_runs_can_move_between_threads() {
    fn assert_send_sync<T: Send + Sync>(_: &T) {}
    fn assert_send<T: Send>(_: T) {}
    let agent = text_agent(ScriptedModel::new([]), vec![constant("clock", "12:00")]);
    assert_send_sync(&agent);
    assert_send(agent.run((), "go"));
}

/// A toolset whose tools a test swaps between turns.
struct Swappable {
    name: &'static str,
    tools: Mutex<Vec<Tool<()>>>,
}

impl golem_agent::tool::Toolset<()> for Swappable {
    fn name(&self) -> &str {
        self.name
    }

    fn tools(&self) -> Vec<Tool<()>> {
        self.tools.lock().expect("not poisoned").clone()
    }
}

#[tokio::test]
async fn toolsets_are_asked_before_every_model_request() {
    let set = Arc::new(Swappable {
        name: "server one",
        tools: Mutex::new(vec![constant("first", "1")]),
    });
    let swap = Arc::clone(&set);
    // The model calls `first`; the toolset then changes; the next request
    // offers the new list.
    let model = FunctionModel::new(move |request: &Request| {
        let names: Vec<&str> = request
            .tools
            .iter()
            .map(|spec| spec.name.as_str())
            .collect();
        if request.messages.len() == 1 {
            assert_eq!(names, ["fixed", "first"]);
            *swap.tools.lock().expect("not poisoned") = vec![constant("second", "2")];
            return Ok(tool_calls_response([call("c1", "first", "{}")]));
        }
        assert_eq!(names, ["fixed", "second"]);
        Ok(text_response("done"))
    });
    let config = AgentConfig {
        tools: vec![constant("fixed", "0")],
        toolsets: vec![set as Arc<dyn golem_agent::tool::Toolset<()>>],
        ..AgentConfig::default()
    };
    let agent = Agent::new(Arc::new(model), golem_agent::decode::text, config).expect("valid");
    let run = agent.run((), "go").await.expect("runs");
    assert_eq!(run.output, "done");
    assert_eq!(tool_messages(&run.messages)[0].2, "1");
}

#[tokio::test]
async fn two_sources_offering_one_name_fail_the_run_naming_both() {
    let set = |name: &'static str| {
        Arc::new(Swappable {
            name,
            tools: Mutex::new(vec![constant("read_file", "x")]),
        }) as Arc<dyn golem_agent::tool::Toolset<()>>
    };
    let config = AgentConfig {
        toolsets: vec![set("fs server"), set("git server")],
        ..AgentConfig::default()
    };
    let agent = Agent::new(
        Arc::new(ScriptedModel::new([text_response("unused")])),
        golem_agent::decode::text,
        config,
    )
    .expect("valid: the clash shows only when the tools are asked for");
    let error = agent.run((), "go").await.expect_err("a clash");
    let message = error.to_string();
    assert!(
        matches!(&error, RunError::DuplicateTool { name, first, second }
            if name == "read_file" && first == "fs server" && second == "git server"),
        "{error:?}"
    );
    assert!(message.contains("prefix"), "{message}");
}
