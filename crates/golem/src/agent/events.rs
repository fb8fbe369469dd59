//! What a streaming run reports while it goes: [`RunEvent`] (each model
//! request sent, model fragments, each answer's end and usage, each tool
//! call's start and end, a call of a tool there is not),
//! [`ToolOutcome`] (how a call ended, in words a host can show) and
//! [`RunSink`], the callback that receives them, with `emit`, which delivers
//! an event only when a run streams. It knows nothing of the run loop, of
//! telemetry, or of what goes back to the model.

use std::time::Duration;

use golem_model::{FinishReason, StreamEvent, ToolCall, Usage};

/// What a streaming run reports while it goes ([`Agent::run_stream`](crate::Agent::run_stream)), in
/// the order it happens, so that a host can show the answer as it is
/// written and each tool call as it runs.
///
/// `turn` counts model requests from 1, as in [`RunError::Model`](crate::RunError::Model).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RunEvent {
    /// A model request is sent: the first event of each turn. A host that
    /// counts requests counts it here, so that one interrupted before its
    /// answer counts too.
    ModelRequest {
        /// The model request: 1 for the first.
        turn: u32,
    },
    /// Something the model streamed: a fragment of its text, a tool call it
    /// began writing, or a fragment of that call's arguments (see
    /// [`StreamEvent`]).
    Model {
        /// The model request it belongs to.
        turn: u32,
        /// What the model streamed.
        event: StreamEvent,
    },
    /// The model's answer of this turn is complete.
    ModelResponse {
        /// The model request it answers.
        turn: u32,
        /// What this request cost, as the model reported it (`requests` is
        /// 1).
        usage: Usage,
        /// Why the model stopped writing.
        finish_reason: FinishReason,
    },
    /// A tool call began running. Calls of one turn may run concurrently,
    /// so several may be running at once.
    ToolStarted {
        /// The model request that asked for it.
        turn: u32,
        /// The call: its id, the tool's name and the model's arguments.
        call: ToolCall,
        /// Where the tool came from: a toolset's
        /// [`name`](golem_tool::Toolset::name) (an MCP server's), or
        /// `"the agent's tools"` for [`AgentConfig::tools`](crate::AgentConfig::tools).
        source: String,
    },
    /// A tool call ended; a [`ToolStarted`](Self::ToolStarted) with the
    /// same `call_id` came before it.
    ToolFinished {
        /// The model request that asked for it.
        turn: u32,
        /// The id of the call.
        call_id: String,
        /// The tool's name, as offered to the model.
        tool: String,
        /// Where the tool came from, as in [`ToolStarted`](Self::ToolStarted).
        source: String,
        /// How long the call ran.
        duration: Duration,
        /// How it ended.
        outcome: ToolOutcome,
    },
    /// A call was not approved ([`Approver`](crate::Approver)): it did not
    /// run, and its tool message tells the model why. It has no
    /// [`ToolStarted`](Self::ToolStarted) or
    /// [`ToolFinished`](Self::ToolFinished).
    ToolDenied {
        /// The model request that asked for it.
        turn: u32,
        /// The call, as the model wrote it.
        call: ToolCall,
        /// Where the tool came from, as in [`ToolStarted`](Self::ToolStarted).
        source: String,
        /// Why, as the approver said ([`Decision::Deny`](crate::Decision::Deny)).
        reason: String,
    },
    /// The approver deferred the call ([`Decision::Defer`](crate::Decision::Defer)):
    /// the run ends with
    /// [`RunError::ApprovalsPending`](crate::RunError::ApprovalsPending)
    /// once the turn's calls are decided, and no call of the turn runs.
    ToolDeferred {
        /// The model request that asked for it.
        turn: u32,
        /// The call, as the model wrote it.
        call: ToolCall,
        /// Where the tool came from, as in [`ToolStarted`](Self::ToolStarted).
        source: String,
    },
    /// The model called a tool the agent does not have: the call did not
    /// run, and its tool message tells the model the tools there are (ADR
    /// 0020). It has no [`ToolStarted`](Self::ToolStarted) or
    /// [`ToolFinished`](Self::ToolFinished).
    UnknownTool {
        /// The model request that asked for it.
        turn: u32,
        /// The call, as the model wrote it.
        call: ToolCall,
        /// The offered names it most likely meant (a prefix dropped or
        /// added, another separator or case), best first; often none.
        likely: Vec<String>,
    },
}

/// How one tool call of a streaming run ended ([`RunEvent::ToolFinished`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolOutcome {
    /// The tool answered; this text goes back to the model.
    Ok(String),
    /// The tool rejected the arguments with a [`ModelRetry`](golem_model::ModelRetry) (an MCP tool's
    /// `isError` answer): the reason goes back to the model while the
    /// tool's correction budget lasts, and fails the run past it.
    Rejected(String),
    /// The tool failed with an error the model cannot correct (its
    /// message); the run fails with it, or, with
    /// [`ToolFailures::TellModel`](crate::ToolFailures::TellModel), the
    /// model is told.
    Failed(String),
    /// The call outlived its timeout and was dropped; the run fails, or the
    /// model is told, as for [`Failed`](Self::Failed).
    TimedOut(Duration),
    /// The call was dropped, unfinished, because another call of its turn
    /// failed the run.
    Cancelled,
}

impl ToolOutcome {
    /// Whether the tool answered normally ([`Ok`](Self::Ok)).
    pub fn is_ok(&self) -> bool {
        matches!(self, ToolOutcome::Ok(_))
    }
}

/// Where a streaming run delivers its [`RunEvent`]s: a callback run on the
/// run's own task, in order. Keep it quick (print, forward to a channel).
pub type RunSink<'a> = &'a mut (dyn FnMut(RunEvent) + Send);

/// Delivers the event `make` builds, when the run streams.
pub(super) fn emit(sink: &mut Option<RunSink<'_>>, make: impl FnOnce() -> RunEvent) {
    if let Some(sink) = sink.as_deref_mut() {
        sink(make());
    }
}
