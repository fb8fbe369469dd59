//! The streaming run: what `run_stream` reports (model fragments, the end of
//! each answer, tool calls starting and finishing with their outcome), that
//! it ends as `run` would, and conversations continued from a history.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use golem_agent::model::{FinishReason, Message, Role, StreamEvent, Usage};
use golem_agent::testmodel::{FunctionModel, ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::{Tool, ToolError, Toolset};
use golem_agent::{Agent, AgentConfig, RunError, RunEvent, ToolOutcome};

mod support;
use support::{bounded, call, constant};

fn agent(
    model: impl golem_agent::model::Model + 'static,
    config: AgentConfig<()>,
) -> Agent<(), String> {
    Agent::new(Arc::new(model), golem_agent::decode::text, config).expect("a valid configuration")
}

/// Runs `agent` streaming and returns its result with every event.
async fn stream(
    agent: &Agent<(), String>,
    prompt: &str,
) -> (
    Result<golem_agent::RunOutput<String>, RunError>,
    Vec<RunEvent>,
) {
    let mut events = Vec::new();
    let result = agent
        .run_stream((), prompt, &mut |event| events.push(event))
        .await;
    (result, events)
}

/// The text fragments the model streamed.
fn text_of(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::Model {
                event: StreamEvent::Text(text),
                ..
            } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

/// Each event as a short line, for asserting on the order.
fn outline(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .map(|event| match event {
            RunEvent::ModelRequest { turn } => format!("{turn} request"),
            RunEvent::Model { turn, event } => match event {
                StreamEvent::Text(text) => format!("{turn} text {text}"),
                StreamEvent::ToolCallStarted { index, name, .. } => {
                    format!("{turn} model calls #{index} {name}")
                }
                StreamEvent::ToolCallArguments { index, fragment } => {
                    format!("{turn} arguments #{index} {fragment}")
                }
            },
            RunEvent::ModelResponse {
                turn,
                finish_reason,
                ..
            } => format!("{turn} answered {finish_reason:?}"),
            RunEvent::ToolStarted { turn, call, source } => {
                format!("{turn} start {} {} from {source}", call.id, call.name)
            }
            RunEvent::ToolFinished {
                turn,
                call_id,
                tool,
                outcome,
                ..
            } => format!("{turn} finish {call_id} {tool} {outcome:?}"),
            other => format!("{other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn fragments_tool_calls_and_answers_arrive_in_order() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "clock", r#"{"tz":"UTC"}"#)]),
        text_response("It is noon."),
    ])
    .fragmented(5);
    let agent = agent(
        model.clone(),
        AgentConfig {
            tools: vec![constant("clock", "12:00")],
            ..AgentConfig::default()
        },
    );

    let (result, events) = stream(&agent, "What time is it?").await;
    let run = result.expect("the run succeeds");

    assert_eq!(run.output, "It is noon.");
    assert_eq!(
        outline(&events),
        [
            "1 request",
            "1 model calls #0 clock",
            "1 arguments #0 {\"tz\"",
            "1 arguments #0 :\"UTC",
            "1 arguments #0 \"}",
            "1 answered ToolCalls",
            "1 start c1 clock from the agent's tools",
            "1 finish c1 clock Ok(\"12:00\")",
            "2 request",
            "2 text It is",
            "2 text  noon",
            "2 text .",
            "2 answered Stop",
        ]
    );
    assert_eq!(text_of(&events).concat(), run.output);
    // The same conversation and usage as the run without streaming.
    let plain = agent_for_comparison().run((), "What time is it?").await;
    let plain = plain.expect("the plain run succeeds");
    assert_eq!(run.messages, plain.messages);
    assert_eq!(run.usage, plain.usage);
}

fn agent_for_comparison() -> Agent<(), String> {
    agent(
        ScriptedModel::new([
            tool_calls_response([call("c1", "clock", r#"{"tz":"UTC"}"#)]),
            text_response("It is noon."),
        ]),
        AgentConfig {
            tools: vec![constant("clock", "12:00")],
            ..AgentConfig::default()
        },
    )
}

#[tokio::test]
async fn each_answer_reports_its_usage_and_the_run_sums_them() {
    let usage = |input, output| Usage {
        input_tokens: input,
        output_tokens: output,
        requests: 0,
        cache_read_tokens: 1,
        cache_write_tokens: 0,
    };
    let model = ScriptedModel::new([
        golem_agent::model::Response {
            usage: usage(10, 2),
            ..tool_calls_response([call("c1", "clock", "{}")])
        },
        golem_agent::model::Response {
            usage: usage(20, 3),
            ..text_response("noon")
        },
    ]);
    let agent = agent(
        model,
        AgentConfig {
            tools: vec![constant("clock", "12:00")],
            ..AgentConfig::default()
        },
    );
    let (result, events) = stream(&agent, "time?").await;
    let run = result.expect("the run succeeds");
    let reported: Usage = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ModelResponse { usage, .. } => Some(*usage),
            _ => None,
        })
        .sum();
    assert_eq!(reported, run.usage);
    assert_eq!(run.usage.requests, 2, "requests are counted by the agent");
    assert_eq!(run.usage.input_tokens, 30);
    assert_eq!(run.usage.cache_read_tokens, 2);
}

#[tokio::test]
async fn concurrent_calls_all_start_before_any_finishes_and_report_durations() {
    let (release, released) = tokio::sync::watch::channel(false);
    // Each call says when it is waiting for the release, and how long it ran
    // by its own clock.
    let (waiting_tx, mut waiting_rx) = tokio::sync::mpsc::unbounded_channel();
    let ran: Arc<Mutex<Vec<(String, Duration)>>> = Arc::default();
    let waiting = |name: &str| {
        let (released, waiting_tx, ran) = (released.clone(), waiting_tx.clone(), Arc::clone(&ran));
        Tool::<()>::new(name, "waits", r#"{"type":"object"}"#, move |ctx, _| {
            let (mut released, waiting_tx) = (released.clone(), waiting_tx.clone());
            let ran = Arc::clone(&ran);
            async move {
                let began = Instant::now();
                let _ = waiting_tx.send(());
                let _ = released.wait_for(|go| *go).await;
                let own = began.elapsed();
                ran.lock().expect("lock").push((ctx.tool_call_id, own));
                Ok("done".to_owned())
            }
        })
        .expect("valid tool")
    };
    let model = ScriptedModel::new([
        tool_calls_response([call("a", "first", "{}"), call("b", "second", "{}")]),
        text_response("both done"),
    ]);
    let agent = agent(
        model,
        AgentConfig {
            tools: vec![waiting("first"), waiting("second")],
            ..AgentConfig::default()
        },
    );
    let mut events = Vec::new();
    let began = Instant::now();
    let run = {
        let mut record = |event| events.push(event);
        let run = agent.run_stream((), "go", &mut record);
        let release_when_both_wait = async {
            bounded("both calls waiting", async {
                for _ in 0..2 {
                    waiting_rx.recv().await.expect("the tools hold a sender");
                }
            })
            .await;
            let _ = release.send(true);
        };
        let (result, ()) = tokio::join!(bounded("the run", run), release_when_both_wait);
        result.expect("the run succeeds")
    };
    let whole_run = began.elapsed();
    assert_eq!(run.output, "both done");
    let lines = outline(&events);
    let position = |line: &str| {
        lines
            .iter()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("{line:?} not in {lines:?}"))
    };
    let first_finish =
        position("1 finish a first Ok(\"done\")").min(position("1 finish b second Ok(\"done\")"));
    assert!(position("1 start a first from the agent's tools") < first_finish);
    assert!(position("1 start b second from the agent's tools") < first_finish);
    let ran = ran.lock().expect("lock").clone();
    assert_eq!(ran.len(), 2, "{ran:?}");
    for (id, own) in ran {
        let duration = events
            .iter()
            .find_map(|event| match event {
                RunEvent::ToolFinished {
                    call_id, duration, ..
                } if *call_id == id => Some(*duration),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no end of call {id} in {lines:?}"));
        // The reported duration covers the whole call, wait included, and
        // no more than the run.
        assert!(
            own <= duration && duration <= whole_run,
            "call {id}: {own:?} <= {duration:?} <= {whole_run:?}"
        );
    }
}

#[tokio::test]
async fn a_rejection_is_reported_and_goes_back_to_the_model() {
    let picky = Tool::<()>::new("picky", "rejects", r#"{"type":"object"}"#, |_, _| async {
        Err(ToolError::retry("say please"))
    })
    .expect("valid tool");
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "picky", "{}")]),
        text_response("I could not."),
    ]);
    let agent = agent(
        model,
        AgentConfig {
            tools: vec![picky],
            tool_retries: 1,
            ..AgentConfig::default()
        },
    );
    let (result, events) = stream(&agent, "try").await;
    assert_eq!(result.expect("the run succeeds").output, "I could not.");
    assert!(
        outline(&events).contains(&"1 finish c1 picky Rejected(\"say please\")".to_owned()),
        "{:?}",
        outline(&events)
    );
}

#[tokio::test(start_paused = true)]
async fn a_failure_reports_the_failed_call_and_cancels_the_others() {
    let broken = Tool::<()>::new("broken", "fails", r#"{"type":"object"}"#, |_, _| async {
        Err(ToolError::fatal(std::io::Error::other("disk on fire")))
    })
    .expect("valid tool");
    let slow = Tool::<()>::new("slow", "hangs", r#"{"type":"object"}"#, |_, _| async {
        std::future::pending::<()>().await;
        Ok(String::new())
    })
    .expect("valid tool");
    let model = ScriptedModel::new([tool_calls_response([
        call("s", "slow", "{}"),
        call("b", "broken", "{}"),
    ])]);
    let agent = agent(
        model,
        AgentConfig {
            tools: vec![slow, broken],
            ..AgentConfig::default()
        },
    );
    let (result, events) = stream(&agent, "go").await;
    assert!(
        matches!(result, Err(RunError::Tool { ref tool, .. }) if tool == "broken"),
        "{result:?}"
    );
    let lines = outline(&events);
    assert_eq!(
        lines[lines.len() - 2..],
        [
            "1 finish b broken Failed(\"disk on fire\")",
            "1 finish s slow Cancelled"
        ],
        "{lines:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_timeout_is_reported() {
    let slow = Tool::<()>::new("slow", "hangs", r#"{"type":"object"}"#, |_, _| async {
        std::future::pending::<()>().await;
        Ok(String::new())
    })
    .expect("valid tool");
    let model = ScriptedModel::new([tool_calls_response([call("s", "slow", "{}")])]);
    let agent = agent(
        model,
        AgentConfig {
            tools: vec![slow],
            tool_timeout: Some(Duration::from_secs(2)),
            ..AgentConfig::default()
        },
    );
    let (result, events) = stream(&agent, "go").await;
    assert!(
        matches!(result, Err(RunError::ToolTimeout { .. })),
        "{result:?}"
    );
    assert!(
        events.iter().any(|event| matches!(
            event,
            RunEvent::ToolFinished { outcome: ToolOutcome::TimedOut(limit), .. }
                if *limit == Duration::from_secs(2)
        )),
        "{:?}",
        outline(&events)
    );
}

#[tokio::test]
async fn a_history_comes_before_the_new_prompt() {
    let model = FunctionModel::new(|request| {
        let said: Vec<&str> = request
            .messages
            .iter()
            .filter(|message| message.role == Role::User)
            .map(|message| message.content.as_str())
            .collect();
        Ok(text_response(format!("you said: {}", said.join(", "))))
    })
    .fragmented(3);
    let agent = agent(model.clone(), AgentConfig::default());

    let (first, _) = stream(&agent, "one").await;
    let first = first.expect("first run");
    assert_eq!(first.output, "you said: one");

    let mut events = Vec::new();
    let second = agent
        .run_stream_with_history(
            (),
            first.messages.clone(),
            Message::user("two"),
            &mut |event| events.push(event),
        )
        .await
        .expect("second run");
    assert_eq!(second.output, "you said: one, two");
    assert_eq!(text_of(&events).concat(), "you said: one, two");
    assert_eq!(
        second.messages,
        [
            Message::user("one"),
            Message::assistant("you said: one"),
            Message::user("two"),
            Message::assistant("you said: one, two"),
        ]
    );
    // The same without streaming.
    let third = agent
        .run_with_history((), second.messages, Message::user("three"))
        .await
        .expect("third run");
    assert_eq!(third.output, "you said: one, two, three");
    assert_eq!(third.messages.len(), 6);
}

/// A toolset named like an MCP server.
struct Named(Vec<Tool<()>>);

impl Toolset<()> for Named {
    fn name(&self) -> &str {
        "files"
    }

    fn tools(&self) -> Vec<Tool<()>> {
        self.0.clone()
    }
}

#[tokio::test]
async fn a_toolsets_calls_name_the_toolset_and_answers_stop() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "read", "{}")]),
        text_response("read it"),
    ]);
    let agent = agent(
        model,
        AgentConfig {
            toolsets: vec![Arc::new(Named(vec![constant("read", "contents")]))],
            ..AgentConfig::default()
        },
    );
    let (result, events) = stream(&agent, "read").await;
    result.expect("the run succeeds");
    assert!(events.iter().any(|event| matches!(
        event,
        RunEvent::ToolStarted { source, .. } if source == "files"
    )));
    assert!(events.iter().any(|event| matches!(
        event,
        RunEvent::ModelResponse {
            turn: 2,
            finish_reason: FinishReason::Stop,
            ..
        }
    )));
}

#[tokio::test]
async fn a_model_error_after_a_streamed_answer_keeps_what_was_delivered() {
    let model = ScriptedModel::new([tool_calls_response([call("c1", "clock", "{}")])]);
    let agent = agent(
        model,
        AgentConfig {
            tools: vec![constant("clock", "12:00")],
            ..AgentConfig::default()
        },
    );
    let (result, events) = stream(&agent, "time?").await;
    assert!(
        matches!(result, Err(RunError::Model { turn: 2, .. })),
        "the script has no second answer: {result:?}"
    );
    assert!(outline(&events).contains(&"1 finish c1 clock Ok(\"12:00\")".to_owned()));
}

#[tokio::test]
async fn the_next_message_may_carry_images() {
    let model = ScriptedModel::new([text_response("a cat")]);
    let agent = agent(model.clone(), AgentConfig::default());
    let message = Message::user_with_images(
        "What is this?",
        vec![golem_agent::model::Image::url(
            "https://example.com/cat.jpg",
        )],
    );
    let run = agent
        .run_with_history((), Vec::new(), message.clone())
        .await
        .expect("the run succeeds");
    assert_eq!(run.messages[0], message);
    assert_eq!(model.requests()[0].messages, [message]);
}
