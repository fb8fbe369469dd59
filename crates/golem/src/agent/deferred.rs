//! Deferred approvals (ADR 0032): a run whose approver said
//! [`Decision::Defer`] for a call ends before any call of that turn runs,
//! with [`PendingApprovals`]: the conversation up to the model's tool
//! calls, the calls that wait, and what was decided already. An
//! application stores it (it is serializable), asks a person wherever it
//! likes, and [resumes](crate::Agent::resume) the run with the decisions;
//! [`PendingApprovals::resume`] checks them against the calls that wait
//! and gives the turn loop what it starts from. It knows nothing of how a
//! turn runs.

use std::collections::{HashMap, HashSet};

use golem_model::{Message, ModelSettings, Role, ToolCall, Usage};
use golem_tool::ToolHints;
use serde::{Deserialize, Serialize};

use super::approval::Decision;
use crate::error::RunError;

/// A run that ended with tool calls waiting for a decision, to be
/// [resumed](crate::Agent::resume); carried by
/// [`RunError::ApprovalsPending`]. Serializable, so that it can wait in a
/// database while a person decides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingApprovals {
    /// The conversation so far, ending with the assistant message whose
    /// tool calls wait (none of them has run).
    pub messages: Vec<Message>,
    /// The calls that wait for a decision, in call order.
    pub waiting: Vec<PendingCall>,
    /// The model request that asked for the calls (a resumed run goes on
    /// from it: `max_turns` counts over the whole run).
    pub turn: u32,
    /// The usage of the run's model requests so far (a resumed run's
    /// output adds its own).
    pub usage: Usage,
    /// The decisions already made for the turn's other calls, by call id
    /// (calls that needed none are approved), so that nobody is asked again.
    decided: Vec<(String, Decision)>,
    /// Tools approved for the rest of the run ([`Decision::ApproveTool`]).
    approved_tools: Vec<String>,
    /// The run's model settings (over the agent's), which its resume keeps.
    #[serde(default)]
    settings: ModelSettings,
}

/// One call waiting for a decision: what a person needs to decide on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PendingCall {
    /// The call: its id (the key of its decision), the tool's name as
    /// offered, the model's arguments.
    pub call: ToolCall,
    /// Where the tool comes from: a toolset's name (an MCP server's), or
    /// `"the agent's tools"`.
    pub source: String,
    /// The tool's title, if it has one.
    pub title: Option<String>,
    /// What the tool says of its effects.
    pub hints: ToolHints,
}

/// Where a resumed run starts: the pending turn's calls, decided.
pub(super) struct Resume {
    /// The conversation without the assistant message of the pending calls.
    pub(super) messages: Vec<Message>,
    /// That message's text and calls.
    pub(super) text: String,
    pub(super) calls: Vec<ToolCall>,
    pub(super) turn: u32,
    pub(super) usage: Usage,
    /// Every decision of the turn, by call id.
    pub(super) decisions: HashMap<String, Decision>,
    pub(super) approved_tools: HashSet<String>,
    /// The run's model settings.
    pub(super) settings: ModelSettings,
}

impl PendingApprovals {
    /// A run's pending approvals at `turn`: `messages` end with the
    /// assistant message of the calls.
    pub(super) fn new(
        messages: Vec<Message>,
        waiting: Vec<PendingCall>,
        (turn, usage): (u32, Usage),
        decided: Vec<(String, Decision)>,
        (approved_tools, settings): (&HashSet<String>, ModelSettings),
    ) -> Self {
        let mut approved_tools: Vec<String> = approved_tools.iter().cloned().collect();
        approved_tools.sort();
        PendingApprovals {
            messages,
            waiting,
            turn,
            usage,
            decided,
            approved_tools,
            settings,
        }
    }

    /// Where a run resumed with `decisions` (by call id) starts.
    ///
    /// # Errors
    ///
    /// [`RunError::Decisions`] when a waiting call has no decision or a
    /// decision names no waiting call; [`RunError::NotPending`] when the
    /// messages do not end with the assistant message of the calls (a
    /// pending state edited by hand).
    pub(super) fn resume(
        &self,
        decisions: impl IntoIterator<Item = (String, Decision)>,
    ) -> Result<Resume, RunError> {
        let mut given: HashMap<String, Decision> = decisions.into_iter().collect();
        let missing: Vec<String> = self
            .waiting
            .iter()
            .map(|waiting| waiting.call.id.clone())
            .filter(|id| !given.contains_key(id))
            .collect();
        let mut unexpected: Vec<String> = given
            .keys()
            .filter(|id| !self.waiting.iter().any(|waiting| &&waiting.call.id == id))
            .cloned()
            .collect();
        if !missing.is_empty() || !unexpected.is_empty() {
            unexpected.sort();
            return Err(RunError::Decisions {
                missing,
                unexpected,
            });
        }
        let mut messages = self.messages.clone();
        let last = messages
            .pop()
            .filter(|last| last.role == Role::Assistant && !last.tool_calls.is_empty())
            .ok_or(RunError::NotPending)?;
        // Every id is one of the calls, and none is both decided and waiting
        // (a stored state edited by hand must not overrule the decisions).
        let is_call = |id: &str| last.tool_calls.iter().any(|call| call.id == id);
        let consistent = self.waiting.iter().all(|waiting| is_call(&waiting.call.id))
            && self
                .decided
                .iter()
                .all(|(id, _)| is_call(id) && !given.contains_key(id));
        if !consistent {
            return Err(RunError::NotPending);
        }
        given.extend(self.decided.iter().cloned());
        Ok(Resume {
            messages,
            text: last.content,
            calls: last.tool_calls,
            turn: self.turn,
            usage: self.usage,
            decisions: given,
            approved_tools: self.approved_tools.iter().cloned().collect(),
            settings: self.settings.clone(),
        })
    }
}
