//! `AgentConfig::approver` (ADR 0032): calls of tools that do not say they
//! only read wait for the approver's decision, in call order, before any
//! call of the turn runs; a denied call does not run and its tool message
//! says why; "this tool from now on" spares later questions in the run; a
//! deferred call ends the run with its approvals pending, and a resume
//! with the decisions runs the turn's calls.

use std::sync::{Arc, Mutex};

use golem_agent::model::{BoxFuture, Message, Role};
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::{Tool, ToolHints};
use golem_agent::{
    Agent, AgentConfig, ApprovalRequest, Approver, Decision, PendingApprovals, RunError, RunEvent,
    RunOutput,
};

mod support;
use support::{bounded, call};

/// Answers with its scripted decisions in turn, recording which calls it
/// was asked about; `asks_all` asks about read-only tools too.
struct Scripted {
    decisions: Mutex<Vec<Decision>>,
    asked: Mutex<Vec<String>>,
    asks_all: bool,
}

impl Scripted {
    fn new(decisions: Vec<Decision>, asks_all: bool) -> Arc<Self> {
        Arc::new(Scripted {
            decisions: Mutex::new(decisions),
            asked: Mutex::new(Vec::new()),
            asks_all,
        })
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().expect("lock").clone()
    }
}

impl Approver for Scripted {
    fn needs_approval(&self, request: &ApprovalRequest<'_>) -> bool {
        self.asks_all || !request.hints.is_read_only()
    }

    fn decide<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, Decision> {
        self.asked
            .lock()
            .expect("lock")
            .push(request.call.id.clone());
        let decision = self.decisions.lock().expect("lock").remove(0);
        Box::pin(async move { decision })
    }
}

/// `read` (says it only reads) and `write` (says nothing), each recording
/// that it ran in `ran`.
fn tools(ran: &Arc<Mutex<Vec<String>>>) -> Vec<Tool<()>> {
    let tool = |name: &'static str| {
        let ran = Arc::clone(ran);
        Tool::<()>::new(name, "", r#"{"type":"object"}"#, move |_, _| {
            let ran = Arc::clone(&ran);
            async move {
                ran.lock().expect("lock").push(name.to_owned());
                Ok(format!("{name} done"))
            }
        })
        .expect("valid tool")
    };
    vec![
        tool("read").with_hints(ToolHints {
            read_only: Some(true),
            ..ToolHints::default()
        }),
        tool("write"),
    ]
}

fn agent(
    model: &ScriptedModel,
    tools: Vec<Tool<()>>,
    approver: Arc<Scripted>,
) -> Agent<(), String> {
    let config = AgentConfig {
        tools,
        approver: Some(approver),
        ..AgentConfig::default()
    };
    Agent::new(Arc::new(model.clone()), golem_agent::decode::text, config).expect("valid")
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
async fn a_call_that_is_not_read_only_waits_and_a_denied_one_does_not_run() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "read", "{}"), call("c2", "write", "{}")]),
        text_response("I could only read."),
    ]);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let approver = Scripted::new(vec![Decision::Deny("the user said no".into())], false);
    let agent = agent(&model, tools(&ran), Arc::clone(&approver));
    let mut events = Vec::new();
    let mut sink = |event: RunEvent| events.push(event);

    let run = bounded("the run", agent.run_stream((), "Go", &mut sink))
        .await
        .expect("a denial does not fail the run");

    assert_eq!(run.output, "I could only read.");
    assert_eq!(
        approver.asked(),
        ["c2"],
        "the read-only call is not asked about"
    );
    assert_eq!(
        *ran.lock().expect("lock"),
        ["read"],
        "the denied call did not run"
    );
    assert_eq!(
        tool_contents(&model.requests()[1].messages),
        [
            "read done",
            "This call of \"write\" was not run: it was not approved (the user said no). Do \
             not call it again unless the user asks for it; go on without it.",
        ]
    );
    let denied: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolDenied { call, .. } => Some(call.id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(denied, ["c2"]);
    assert!(
        !events.iter().any(|event| matches!(
            event,
            RunEvent::ToolStarted { call, .. } if call.id == "c2"
        )),
        "a denied call never starts"
    );
}

#[tokio::test]
async fn approving_a_tool_for_the_run_spares_the_later_questions() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "write", "{}"), call("c2", "write", "{}")]),
        tool_calls_response([call("c3", "write", "{}"), call("c4", "read", "{}")]),
        text_response("Written three times."),
    ]);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let approver = Scripted::new(vec![Decision::ApproveTool, Decision::Approve], true);
    let agent = agent(&model, tools(&ran), Arc::clone(&approver));

    let run = bounded("the run", agent.run((), "Go")).await.expect("runs");

    assert_eq!(run.output, "Written three times.");
    assert_eq!(
        approver.asked(),
        ["c1", "c4"],
        "asked once for write, and for read (this approver asks for all)"
    );
    assert_eq!(ran.lock().expect("lock").len(), 4);
}

#[tokio::test]
async fn the_agents_own_search_tool_is_never_asked_about() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", golem_agent::SEARCH_TOOL, r#"{"query":"write"}"#)]),
        text_response("Found it."),
    ]);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let approver = Scripted::new(Vec::new(), true);
    let config = AgentConfig {
        tools: tools(&ran),
        tool_search: golem_agent::ToolSearch::Always,
        approver: Some(Arc::clone(&approver) as Arc<dyn Approver>),
        ..AgentConfig::default()
    };
    let agent =
        Agent::new(Arc::new(model.clone()), golem_agent::decode::text, config).expect("valid");

    let run = bounded("the run", agent.run((), "Go")).await.expect("runs");

    assert_eq!(run.output, "Found it.");
    assert!(approver.asked().is_empty(), "{:?}", approver.asked());
}

/// Runs `agent` until it waits: the pending approvals.
async fn pending_of(run: Result<RunOutput<String>, RunError>) -> PendingApprovals {
    match run {
        Err(RunError::ApprovalsPending(pending)) => *pending,
        other => panic!("the run should wait for a decision: {other:?}"),
    }
}

#[tokio::test]
async fn a_deferred_call_ends_the_run_before_any_call_runs_and_a_resume_runs_them() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "read", "{}"), call("c2", "write", r#"{"a":1}"#)]),
        text_response("Read and written."),
    ]);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let approver = Scripted::new(vec![Decision::Defer], false);
    let agent = agent(&model, tools(&ran), Arc::clone(&approver));
    let mut events = Vec::new();
    let mut sink = |event: RunEvent| events.push(event);

    let waiting = bounded("the run", agent.run_stream((), "Go", &mut sink)).await;
    let pending = pending_of(waiting).await;

    assert!(
        ran.lock().expect("lock").is_empty(),
        "no call of the turn ran"
    );
    let ids: Vec<&str> = pending.waiting.iter().map(|w| w.call.id.as_str()).collect();
    assert_eq!(ids, ["c2"], "the read-only call needs no decision");
    assert_eq!(pending.waiting[0].source, "the agent's tools");
    assert_eq!(pending.waiting[0].call.arguments.get(), r#"{"a":1}"#);
    assert_eq!((pending.turn, pending.usage.requests), (1, 1));
    let last = pending.messages.last().expect("messages");
    assert_eq!((last.role, last.tool_calls.len()), (Role::Assistant, 2));
    assert!(
        events
            .iter()
            .any(|event| matches!(event, RunEvent::ToolDeferred { call, .. } if call.id == "c2"))
    );
    assert!(
        !events
            .iter()
            .any(|event| matches!(event, RunEvent::ToolStarted { .. }))
    );
    // It waits in storage, as an application elsewhere would keep it.
    let stored = serde_json::to_string(&pending).expect("serializes");
    let pending: PendingApprovals = serde_json::from_str(&stored).expect("deserializes");

    let run = bounded(
        "the resumed run",
        agent.resume((), &pending, [("c2".to_owned(), Decision::Approve)]),
    )
    .await
    .expect("runs");

    assert_eq!(run.output, "Read and written.");
    assert_eq!(*ran.lock().expect("lock"), ["read", "write"]);
    assert_eq!(approver.asked(), ["c2"], "nobody is asked again");
    assert_eq!(
        model.requests().len(),
        2,
        "the model is not asked again for turn 1"
    );
    assert_eq!(
        tool_contents(&model.requests()[1].messages),
        ["read done", "write done"]
    );
    assert_eq!(run.usage.requests, 2, "the whole run's usage");
    assert_eq!(run.messages.len(), 5);
}

#[tokio::test]
async fn a_resume_checks_its_decisions_and_a_denial_reaches_the_model() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "read", "{}"), call("c2", "write", "{}")]),
        text_response("Only read."),
    ]);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let approver = Scripted::new(vec![Decision::Defer], false);
    let agent = agent(&model, tools(&ran), Arc::clone(&approver));
    let pending = pending_of(bounded("the run", agent.run((), "Go")).await).await;

    let none = agent.resume((), &pending, []).await;
    assert!(
        matches!(&none, Err(RunError::Decisions { missing, unexpected })
            if missing == &["c2"] && unexpected.is_empty()),
        "{none:?}"
    );
    let stray = agent
        .resume(
            (),
            &pending,
            [
                ("c2".to_owned(), Decision::Approve),
                ("c9".to_owned(), Decision::Approve),
            ],
        )
        .await
        .expect_err("a decision for no call");
    assert_eq!(
        stray.to_string(),
        "the decisions do not match the calls that wait; no call waits with the id \"c9\""
    );
    assert!(ran.lock().expect("lock").is_empty(), "nothing ran");
    assert_eq!(model.requests().len(), 1);

    let run = bounded(
        "the resumed run",
        agent.resume(
            (),
            &pending,
            [("c2".to_owned(), Decision::Deny("not today".into()))],
        ),
    )
    .await
    .expect("a denial does not fail the run");
    assert_eq!(run.output, "Only read.");
    assert_eq!(*ran.lock().expect("lock"), ["read"]);
    assert_eq!(
        tool_contents(&model.requests()[1].messages)[1],
        "This call of \"write\" was not run: it was not approved (not today). Do not call it \
         again unless the user asks for it; go on without it."
    );
}

#[tokio::test]
async fn deferring_again_keeps_the_call_waiting_and_always_lasts_past_a_resume() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "write", "{}")]),
        tool_calls_response([call("c2", "write", "{}")]),
        text_response("Written twice."),
    ]);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let approver = Scripted::new(vec![Decision::Defer], false);
    let agent = agent(&model, tools(&ran), Arc::clone(&approver));
    let pending = pending_of(bounded("the run", agent.run((), "Go")).await).await;

    let again = agent
        .resume((), &pending, [("c1".to_owned(), Decision::Defer)])
        .await;
    let again = pending_of(again).await;
    assert_eq!(again, pending, "still waiting, as before");
    assert!(ran.lock().expect("lock").is_empty());

    let run = bounded(
        "the resumed run",
        agent.resume((), &pending, [("c1".to_owned(), Decision::ApproveTool)]),
    )
    .await
    .expect("runs");
    assert_eq!(run.output, "Written twice.");
    assert_eq!(*ran.lock().expect("lock"), ["write", "write"]);
    assert_eq!(
        approver.asked(),
        ["c1"],
        "the later write was not asked about"
    );
}

#[tokio::test]
async fn a_resume_keeps_the_runs_settings_and_its_decisions_hold_for_that_turn_only() {
    // The model reuses the id c1 on its next turn, as some compatible
    // servers do: that later call is asked about afresh.
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "write", "{}")]),
        tool_calls_response([call("c1", "write", "{}")]),
        text_response("Done."),
    ]);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let approver = Scripted::new(
        vec![Decision::Defer, Decision::Deny("not twice".into())],
        false,
    );
    let agent = agent(&model, tools(&ran), Arc::clone(&approver));
    let settings = golem_agent::model::ModelSettings {
        temperature: Some(0.1),
        max_output_tokens: Some(77),
        ..Default::default()
    };
    let waiting = agent
        .run_with_settings((), Vec::new(), Message::user("Go"), &settings, None)
        .await;
    let pending = pending_of(waiting).await;

    let run = bounded(
        "the resumed run",
        agent.resume((), &pending, [("c1".to_owned(), Decision::Approve)]),
    )
    .await
    .expect("runs");

    assert_eq!(run.output, "Done.");
    assert_eq!(
        *ran.lock().expect("lock"),
        ["write"],
        "the second c1 was denied"
    );
    assert_eq!(approver.asked(), ["c1", "c1"]);
    for request in &model.requests()[1..] {
        assert_eq!(
            request.settings, settings,
            "the run's settings after the resume"
        );
    }
}

#[tokio::test]
async fn a_pending_state_edited_to_overrule_a_decision_is_refused() {
    let model = ScriptedModel::new([tool_calls_response([call("c1", "write", "{}")])]);
    let ran = Arc::new(Mutex::new(Vec::new()));
    let approver = Scripted::new(vec![Decision::Defer], false);
    let agent = agent(&model, tools(&ran), approver);
    let pending = pending_of(bounded("the run", agent.run((), "Go")).await).await;
    // The stored state says c1 was approved already, beside the waiting c1.
    let mut stored = serde_json::to_value(&pending).expect("serializes");
    stored["decided"] = serde_json::json!([["c1", "Approve"]]);
    let edited: PendingApprovals = serde_json::from_value(stored).expect("deserializes");

    let refused = agent
        .resume(
            (),
            &edited,
            [("c1".to_owned(), Decision::Deny("no".into()))],
        )
        .await;

    assert!(matches!(refused, Err(RunError::NotPending)), "{refused:?}");
    assert!(ran.lock().expect("lock").is_empty());
}
