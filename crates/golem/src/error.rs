//! Why an agent could not be built, why a run failed, and why a decoder
//! did not produce an output.

use std::error::Error;
use std::time::Duration;

use golem_model::{ModelError, ModelRetry};

/// Why [`Agent::new`](crate::Agent::new) refused a configuration. Every
/// message says what to fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// Two tools have the same name, so the model could not tell them apart.
    #[error(
        "two tools are named {name:?}; tool names must be unique within an agent (rename one, \
         or leave one out)"
    )]
    DuplicateTool {
        /// The name given twice.
        name: String,
    },
    /// `max_turns` is zero: the run could never ask the model anything.
    #[error("max_turns is 0; an agent needs at least one model turn (the default is {default})")]
    ZeroMaxTurns {
        /// The default, as a suggestion.
        default: u32,
    },
}

/// Why a run failed.
///
/// Every message names what failed (the tool, the turn) and, where there is
/// a knob, which one to turn. The cause, when there is one, is the error's
/// `source()`, kept intact: [`RunError::find`] walks the chain and downcasts,
/// so a caller recovers, say, the `golem_mcp::ProtocolError` behind a failed
/// MCP tool.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// Two tool sources offered the same tool name for one model request
    /// (give a toolset a prefix to keep its names apart).
    #[error("the tool {name:?} is offered by both {first} and {second}; give one of them a prefix")]
    DuplicateTool {
        /// The name offered twice.
        name: String,
        /// The first source offering it (a toolset's name, or "the agent's tools").
        first: String,
        /// The second.
        second: String,
    },
    /// The model call failed.
    #[error("the model request of turn {turn} failed: {source}")]
    Model {
        /// The turn (1 for the first model request).
        turn: u32,
        /// The model's error.
        #[source]
        source: ModelError,
    },
    /// A tool failed with an error the model cannot correct.
    #[error("tool {tool:?} (call {call_id:?}) failed: {source}")]
    Tool {
        /// The tool's name.
        tool: String,
        /// The id of the model's call.
        call_id: String,
        /// The tool's error, exactly as it returned it (downcastable).
        #[source]
        source: Box<dyn Error + Send + Sync + 'static>,
    },
    /// A tool rejected its arguments ([`ModelRetry`]) more often than its
    /// correction budget allows.
    #[error(
        "tool {tool:?} (call {call_id:?}) rejected its arguments on attempt {attempts}, beyond \
         its retry budget of {budget} (raise AgentConfig::tool_retries or \
         Tool::with_max_retries to let the model correct them): {source}"
    )]
    ToolRetriesExhausted {
        /// The tool's name.
        tool: String,
        /// The id of the call whose rejection was one too many.
        call_id: String,
        /// How many of this tool's calls were rejected in the run, this one
        /// included.
        attempts: u32,
        /// The budget that applied: the tool's own, else the agent's.
        budget: u32,
        /// The last rejection.
        #[source]
        source: ModelRetry,
    },
    /// The approver deferred a call ([`Decision::Defer`](crate::Decision::Defer)):
    /// the run ended before any call of that turn ran, with what it takes
    /// to [resume](crate::Agent::resume) it once the calls are decided.
    /// Not a failure: the run waits.
    #[error(
        "the run waits for a decision on {}; resume it (Agent::resume) with the decisions",
        waiting(_0)
    )]
    ApprovalsPending(Box<crate::PendingApprovals>),
    /// The decisions given to [`Agent::resume`](crate::Agent::resume) do
    /// not match the calls that wait: nothing ran.
    #[error(
        "the decisions do not match the calls that wait{}{}",
        ids("; no decision for", missing),
        ids("; no call waits with the id", unexpected)
    )]
    Decisions {
        /// Ids of waiting calls with no decision.
        missing: Vec<String>,
        /// Ids of decisions for which no call waits.
        unexpected: Vec<String>,
    },
    /// The [`PendingApprovals`](crate::PendingApprovals) given to
    /// [`Agent::resume`](crate::Agent::resume) do not end with the
    /// assistant message of the calls that wait (edited since the run
    /// ended): nothing ran.
    #[error("the pending run's messages do not end with the tool calls that wait")]
    NotPending,
    /// A usage limit of the agent's [`Budget`](crate::Budget) is reached:
    /// no model request (or, for tool calls, none of the turn's calls) was
    /// made past it.
    #[error(
        "{}; raise it (UsageLimits) to go on",
        crate::Reached(*limit, *max, *spent, *asked)
    )]
    UsageLimit {
        /// Which limit.
        limit: crate::Limit,
        /// Its value.
        max: u64,
        /// What was spent against it.
        spent: u64,
        /// What more was asked for: the turn's tool calls for
        /// [`Limit::ToolCalls`](crate::Limit::ToolCalls), 0 otherwise.
        asked: u64,
    },
    /// A tool call outlived its timeout (idle: without a sign of life for
    /// that long; or the hard maximum); its future was dropped.
    #[error(
        "tool {tool:?} (call {call_id:?}) did not finish within {timeout:?} and was cancelled \
         (raise Tool::with_timeout, AgentConfig::tool_timeout or AgentConfig::tool_max_time \
         if it needs longer)"
    )]
    ToolTimeout {
        /// The tool's name.
        tool: String,
        /// The id of the call.
        call_id: String,
        /// The timeout that applied.
        timeout: Duration,
    },
    /// The model called tools this agent does not have more often than the
    /// run's correction budget allows (ADR 0020): each such call before
    /// went back to the model as a correction naming the tools there are.
    /// No call of the turn that was one too many was run.
    #[error(
        "the model called tool {tool:?} (call {call_id:?}), which this agent does not have (it \
         has: {}); that is its call {attempts} of a tool there is not, beyond the correction \
         budget of {budget} (raise AgentConfig::tool_retries to tell the model more often)",
        listed(available)
    )]
    UnknownTool {
        /// The name the model used.
        tool: String,
        /// The id of the call.
        call_id: String,
        /// The names of the agent's tools.
        available: Vec<String>,
        /// How many calls of tools the agent does not have the run saw, this
        /// turn's included.
        attempts: u32,
        /// The budget that applied:
        /// [`AgentConfig::tool_retries`](crate::AgentConfig::tool_retries).
        budget: u32,
    },
    /// The model was still calling tools when the turn limit was reached.
    /// The calls of the last turn were not run.
    #[error(
        "the run reached its limit of {max_turns} model turn(s) without a final answer (raise \
         AgentConfig::max_turns if the task needs more)"
    )]
    TurnLimit {
        /// The limit that applied.
        max_turns: u32,
    },
    /// The decoder rejected the model's answer ([`ModelRetry`]) more often
    /// than the output correction budget allows.
    #[error(
        "the final answer was rejected on attempt {attempts}, beyond the output retry budget \
         of {budget} (raise AgentConfig::output_retries to let the model correct it): {source}"
    )]
    OutputRetriesExhausted {
        /// How many answers were rejected, this one included.
        attempts: u32,
        /// The budget that applied.
        budget: u32,
        /// The last rejection.
        #[source]
        source: ModelRetry,
    },
    /// The decoder failed with an error the model cannot correct.
    #[error("the final answer could not be decoded: {source}")]
    Output {
        /// The decoder's error, exactly as it returned it.
        #[source]
        source: Box<dyn Error + Send + Sync + 'static>,
    },
}

/// The names of an error message: all of them, or the first 40 and how
/// many more (an agent may offer hundreds).
fn listed(names: &[String]) -> String {
    const SHOWN: usize = 40;
    if names.is_empty() {
        return "no tools".into();
    }
    let mut text = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

impl RunError {
    /// The first error of type `E` in this error's `source()` chain (this
    /// error itself excluded), e.g. the `golem_mcp::ProtocolError` of an MCP
    /// tool's JSON-RPC failure, or the [`ModelRetry`] of an exhausted budget.
    ///
    /// ```
    /// use golem_agent::RunError;
    /// use golem_agent::model::ModelRetry;
    ///
    /// let error = RunError::OutputRetriesExhausted {
    ///     attempts: 1,
    ///     budget: 0,
    ///     source: ModelRetry::new("answer with a number"),
    /// };
    /// assert_eq!(error.find::<ModelRetry>().map(ModelRetry::reason), Some("answer with a number"));
    /// ```
    pub fn find<E: Error + 'static>(&self) -> Option<&E> {
        let mut next = self.source();
        while let Some(error) = next {
            if let Some(found) = error.downcast_ref::<E>() {
                return Some(found);
            }
            next = error.source();
        }
        None
    }

    /// The name of the tool at fault, for the errors that have one.
    pub fn tool(&self) -> Option<&str> {
        match self {
            RunError::Tool { tool, .. }
            | RunError::ToolRetriesExhausted { tool, .. }
            | RunError::ToolTimeout { tool, .. }
            | RunError::UnknownTool { tool, .. } => Some(tool),
            _ => None,
        }
    }
}

/// `write_file (call c2) and 1 more call`, for
/// [`RunError::ApprovalsPending`].
fn waiting(pending: &crate::PendingApprovals) -> String {
    let Some(first) = pending.waiting.first() else {
        return "no call".into();
    };
    let more = pending.waiting.len() - 1;
    let head = format!("{} (call {})", first.call.name, first.call.id);
    match more {
        0 => head,
        1 => format!("{head} and 1 more call"),
        _ => format!("{head} and {more} more calls"),
    }
}

/// `; no decision for "c1", "c2"`, or nothing when `list` is empty.
fn ids(what: &str, list: &[String]) -> String {
    match list.is_empty() {
        true => String::new(),
        false => {
            let quoted: Vec<String> = list.iter().map(|id| format!("{id:?}")).collect();
            format!("{what} {}", quoted.join(", "))
        }
    }
}

/// Why a decoder did not produce an output.
///
/// Display shows the reason or the cause's message; `source()` returns the
/// inner error itself.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The model can fix this (e.g. the answer is not in the required form);
    /// the reason is shown to it.
    #[error("{0}")]
    Retry(#[source] ModelRetry),
    /// Anything else: the run fails with this cause, kept intact.
    #[error("{0}")]
    Fatal(#[source] Box<dyn Error + Send + Sync + 'static>),
}

impl DecodeError {
    /// A correctable rejection whose `reason` the model will see.
    pub fn retry(reason: impl Into<String>) -> Self {
        Self::Retry(ModelRetry::new(reason))
    }

    /// A fatal error keeping `cause` (any error, or a message string) as its
    /// source.
    pub fn fatal(cause: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Self {
        Self::Fatal(cause.into())
    }
}

impl From<ModelRetry> for DecodeError {
    fn from(retry: ModelRetry) -> Self {
        Self::Retry(retry)
    }
}
