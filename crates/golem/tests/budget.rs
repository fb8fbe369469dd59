//! `AgentConfig::budget` (issue 35): each usage limit reached fails the
//! run with `RunError::UsageLimit` before the request or call past it is
//! made; the budget is shared by the agent's runs, so a conversation is
//! bounded as a whole, and by whatever else records into it.

use std::sync::Arc;

use golem_agent::model::BoxFuture;
use golem_agent::model::{Message, Response, Usage};
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::{
    Agent, AgentConfig, ApprovalRequest, Approver, Budget, Decision, Limit, RunError, UsageLimits,
};

mod support;
use support::{bounded, call, constant};

/// A response reporting `input` and `output` tokens.
fn costing(mut response: Response, input: u64, output: u64) -> Response {
    response.usage = Usage {
        input_tokens: input,
        output_tokens: output,
        ..Usage::default()
    };
    response
}

fn agent(model: &ScriptedModel, limits: UsageLimits) -> (Agent<(), String>, Arc<Budget>) {
    let budget = Arc::new(Budget::new(limits));
    let config = AgentConfig {
        tools: vec![constant("clock", "12:00")],
        budget: Some(Arc::clone(&budget)),
        ..AgentConfig::default()
    };
    let agent =
        Agent::new(Arc::new(model.clone()), golem_agent::decode::text, config).expect("valid");
    (agent, budget)
}

/// The limit a failed run names.
fn reached(error: RunError) -> (Limit, u64, u64) {
    match error {
        RunError::UsageLimit {
            limit, max, spent, ..
        } => (limit, max, spent),
        other => panic!("expected a usage limit, got {other:?}"),
    }
}

#[tokio::test]
async fn each_limit_stops_the_run_before_the_request_or_call_past_it() {
    let calls = || tool_calls_response([call("c1", "clock", "{}"), call("c2", "clock", "{}")]);
    let cases = [
        (
            UsageLimits {
                requests: Some(1),
                ..UsageLimits::default()
            },
            (Limit::Requests, 1, 1),
            1,
        ),
        (
            UsageLimits {
                tool_calls: Some(1),
                ..UsageLimits::default()
            },
            (Limit::ToolCalls, 1, 0),
            1,
        ),
        (
            UsageLimits {
                input_tokens: Some(100),
                ..UsageLimits::default()
            },
            (Limit::InputTokens, 100, 120),
            1,
        ),
        (
            UsageLimits {
                output_tokens: Some(10),
                ..UsageLimits::default()
            },
            (Limit::OutputTokens, 10, 30),
            1,
        ),
        (
            UsageLimits {
                total_tokens: Some(150),
                ..UsageLimits::default()
            },
            (Limit::TotalTokens, 150, 150),
            1,
        ),
    ];
    for (limits, expected, requests) in cases {
        let model = ScriptedModel::new([costing(calls(), 120, 30), text_response("noon")]);
        let (agent, _) = agent(&model, limits);

        let error = bounded("the run", agent.run((), "Time?"))
            .await
            .expect_err("a limit");

        assert_eq!(reached(error), expected, "{limits:?}");
        assert_eq!(model.requests().len(), requests, "{limits:?}");
    }
}

#[tokio::test]
async fn a_conversation_shares_its_budget_and_so_does_whatever_records_into_it() {
    let model = ScriptedModel::new([text_response("one"), text_response("two")]);
    let (agent, budget) = agent(
        &model,
        UsageLimits {
            requests: Some(3),
            ..UsageLimits::default()
        },
    );

    let first = bounded("the first run", agent.run((), "1"))
        .await
        .expect("ok");
    // Two requests answered elsewhere on the same account (sampling).
    budget.record(Usage {
        requests: 2,
        ..Usage::default()
    });
    let error = bounded(
        "the second run",
        agent.run_with_history((), first.messages, Message::user("2")),
    )
    .await
    .expect_err("the limit spans the runs");

    assert_eq!(reached(error), (Limit::Requests, 3, 3));
    assert_eq!(model.requests().len(), 1, "no request past the limit");
    let message = RunError::UsageLimit {
        limit: Limit::Requests,
        max: 3,
        spent: 3,
        asked: 0,
    }
    .to_string();
    assert_eq!(
        message,
        "the limit of 3 model requests is reached (3 spent); raise it (UsageLimits) to go on"
    );
}

/// Approves every call, counting the questions.
#[derive(Default)]
struct Counting(std::sync::atomic::AtomicU32);

impl Approver for Counting {
    fn needs_approval(&self, _: &ApprovalRequest<'_>) -> bool {
        true
    }

    fn decide<'a>(&'a self, _: &'a ApprovalRequest<'a>) -> BoxFuture<'a, Decision> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { Decision::Approve })
    }
}

#[tokio::test]
async fn tool_calls_used_up_fail_before_anyone_is_asked() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "clock", "{}")]),
        tool_calls_response([call("c2", "clock", "{}")]),
        text_response("unreachable"),
    ]);
    let approver = Arc::new(Counting::default());
    let config = AgentConfig {
        tools: vec![constant("clock", "12:00")],
        approver: Some(Arc::clone(&approver) as Arc<dyn Approver>),
        budget: Some(Arc::new(Budget::new(UsageLimits {
            tool_calls: Some(1),
            ..UsageLimits::default()
        }))),
        ..AgentConfig::default()
    };
    let agent =
        Agent::new(Arc::new(model.clone()), golem_agent::decode::text, config).expect("valid");

    let error = bounded("the run", agent.run((), "Time?"))
        .await
        .expect_err("limit");

    assert_eq!(reached(error), (Limit::ToolCalls, 1, 1));
    assert_eq!(
        approver.0.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the second call was not asked about"
    );
}
