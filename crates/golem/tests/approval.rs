//! `AgentConfig::approver` (ADR 0032): calls of tools that do not say they
//! only read wait for the approver's decision, in call order, before any
//! call of the turn runs; a denied call does not run and its tool message
//! says why; "this tool from now on" spares later questions in the run.

use std::sync::{Arc, Mutex};

use golem_agent::model::{BoxFuture, Message, Role};
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::{Tool, ToolHints};
use golem_agent::{Agent, AgentConfig, ApprovalRequest, Approver, Decision, RunEvent};

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
