//! Approval before a tool acts (ADR 0032). An application gives the agent
//! an [`Approver`]: it says which calls need a decision (by default every
//! call of a tool that does not say it only reads) and decides each, with
//! the facts of an [`ApprovalRequest`]. [`RunApprovals`] asks it for one
//! turn's calls, one at a time and in call order, before any of them runs,
//! and keeps the run's "this tool from now on" answers; a denied call does
//! not run, and its tool message tells the model why; a deferred one ends
//! the run with its approvals pending (`deferred.rs`). It knows nothing of
//! how calls run, of the model, or of events.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use golem_model::{BoxFuture, ToolCall};
use golem_tool::ToolHints;

/// One call waiting for a decision: what an [`Approver`] decides on.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ApprovalRequest<'a> {
    /// The model request that asked for it (1 for the first).
    pub turn: u32,
    /// The call: its id, the tool's name as offered, the model's arguments.
    pub call: &'a ToolCall,
    /// Where the tool comes from: a toolset's name (an MCP server's), or
    /// `"the agent's tools"`.
    pub source: &'a str,
    /// The tool's title, if it has one.
    pub title: Option<&'a str>,
    /// What the tool says of its effects (an MCP tool's annotations).
    pub hints: &'a ToolHints,
}

/// What an [`Approver`] decided for one call (and what an application
/// decides when it [resumes](crate::Agent::resume) a run whose approvals
/// are pending).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Decision {
    /// Run this call.
    Approve,
    /// Run this call, and every later call of the same tool in this run
    /// without asking.
    ApproveTool,
    /// Do not run it: its tool message tells the model this reason, and
    /// the run goes on.
    Deny(String),
    /// Not now: once the turn's other calls are decided, the run ends
    /// without running any call of the turn, with
    /// [`RunError::ApprovalsPending`](crate::RunError::ApprovalsPending),
    /// to be [resumed](crate::Agent::resume) with the decisions (an
    /// application that asks a person elsewhere).
    Defer,
}

/// Decides whether tool calls may run: given to an agent as
/// [`AgentConfig::approver`](crate::AgentConfig::approver).
///
/// ```
/// use golem_agent::{ApprovalRequest, Approver, Decision};
/// use golem_agent::model::BoxFuture;
///
/// /// Lets nothing that writes run.
/// struct ReadOnly;
///
/// impl Approver for ReadOnly {
///     fn decide<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, Decision> {
///         let reason = format!("{} may change files, and this agent only reads", request.call.name);
///         Box::pin(async move { Decision::Deny(reason) })
///     }
/// }
/// ```
pub trait Approver: Send + Sync {
    /// Whether this call needs a decision; the others run at once. The
    /// default: every call of a tool that does not say it only reads
    /// ([`ToolHints::is_read_only`]).
    fn needs_approval(&self, request: &ApprovalRequest<'_>) -> bool {
        !request.hints.is_read_only()
    }

    /// Decides one call. Called on the run's task, one call at a time, in
    /// call order, before any call of the turn runs, so it may ask a
    /// person. Dropping the run drops the decision being made.
    fn decide<'a>(&'a self, request: &'a ApprovalRequest<'a>) -> BoxFuture<'a, Decision>;
}

/// What became of one call the approver was asked about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Verdict {
    /// It runs.
    Run,
    /// It does not run, for this reason.
    Denied(String),
    /// It waits for a decision made elsewhere.
    Deferred,
}

/// A run's approvals: the approver, the tools approved for the rest of
/// the run, and the decisions a resumed run was given.
pub(super) struct RunApprovals {
    approver: Option<Arc<dyn Approver>>,
    /// Tools whose calls run without asking ([`Decision::ApproveTool`]).
    approved_tools: HashSet<String>,
    /// Decisions made before, by call id: taken before anyone is asked.
    given: HashMap<String, Decision>,
}

impl RunApprovals {
    /// The approvals of a run: `approved_tools` run without asking, and the
    /// calls of `given` are decided already; the others are asked about,
    /// unless there is no approver.
    pub(super) fn new(
        approver: Option<Arc<dyn Approver>>,
        approved_tools: HashSet<String>,
        given: HashMap<String, Decision>,
    ) -> Self {
        RunApprovals {
            approver,
            approved_tools,
            given,
        }
    }

    /// Drops the decisions given for a resumed turn: they were for its
    /// calls alone (a later call reusing an id is asked about afresh).
    pub(super) fn forget_given(&mut self) {
        self.given.clear();
    }

    /// The tools approved for the rest of the run.
    pub(super) fn approved_tools(&self) -> &HashSet<String> {
        &self.approved_tools
    }

    /// Decides each of `requests` in order.
    pub(super) async fn screen(&mut self, requests: &[ApprovalRequest<'_>]) -> Vec<Verdict> {
        let mut verdicts = Vec::with_capacity(requests.len());
        for request in requests {
            verdicts.push(self.decide(request).await);
        }
        verdicts
    }

    async fn decide(&mut self, request: &ApprovalRequest<'_>) -> Verdict {
        let tool = request.call.name.as_str();
        let decision = match self.given.remove(&request.call.id) {
            Some(decision) => decision,
            None => {
                let Some(approver) = self.approver.as_ref() else {
                    return Verdict::Run;
                };
                if self.approved_tools.contains(tool) || !approver.needs_approval(request) {
                    return Verdict::Run;
                }
                approver.decide(request).await
            }
        };
        match decision {
            Decision::Approve => Verdict::Run,
            Decision::ApproveTool => {
                self.approved_tools.insert(tool.to_owned());
                Verdict::Run
            }
            Decision::Deny(reason) => Verdict::Denied(reason),
            Decision::Defer => Verdict::Deferred,
        }
    }
}

/// The tool message of a call that was not approved for `reason`.
pub(super) fn denial(tool: &str, reason: &str) -> String {
    format!(
        "This call of {tool:?} was not run: it was not approved ({reason}). Do not call it \
         again unless the user asks for it; go on without it."
    )
}
