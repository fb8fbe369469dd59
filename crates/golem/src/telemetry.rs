//! The `tracing` spans of a run: one per run, per model request and per
//! tool call, with sizes, durations and outcomes, never the content of a
//! message or of a tool's arguments (which may hold secrets or personal
//! data).
//!
//! Span names: `golem.agent.run` (`streaming`, `max_turns`, then
//! `requests`, `input_tokens`, `output_tokens`, `duration_ms`, `outcome`),
//! `golem.model.request` (`turn`, `messages`, `tools`, then `input_tokens`,
//! `output_tokens`, `finish_reason`, `duration_ms`, `outcome`) and
//! `golem.tool.call` (`turn`, `tool`, `call_id`, `argument_bytes`, then
//! `result_bytes`, `duration_ms`, `outcome`). Runs are `INFO`, the rest
//! `DEBUG`; the target is `golem_agent::agent`. An `outcome` is a word (`ok`,
//! `error`, `pending` (a run waiting for approvals), `rejected`, `failed`, `timed out`, `cancelled`), not an error
//! message, since messages may quote what a tool or model was given. A call
//! of a tool the agent does not have is a `WARN` event in the run's span.

use std::time::Duration;

use golem_model::{ModelError, Request, Response, ToolCall};
use tracing::Span;
use tracing::field::Empty;

use crate::error::RunError;

/// The span of one run.
pub(crate) fn run_span(streaming: bool, max_turns: u32) -> Span {
    tracing::info_span!(
        target: "golem_agent::agent",
        "golem.agent.run",
        streaming,
        max_turns,
        requests = Empty,
        input_tokens = Empty,
        output_tokens = Empty,
        duration_ms = Empty,
        outcome = Empty,
    )
}

/// Records how a run ended on its span.
pub(crate) fn run_finished(
    span: &Span,
    usage: Option<&golem_model::Usage>,
    error: Option<&RunError>,
    took: Duration,
) {
    if let Some(usage) = usage {
        span.record("requests", usage.requests);
        span.record("input_tokens", usage.input_tokens);
        span.record("output_tokens", usage.output_tokens);
    }
    span.record("duration_ms", millis(took));
    // A run waiting for approvals has not failed.
    let outcome = match error {
        None => "ok",
        Some(RunError::ApprovalsPending(_)) => "pending",
        Some(_) => "error",
    };
    span.record("outcome", outcome);
}

/// The span of one model request.
pub(crate) fn model_span(turn: u32, request: &Request) -> Span {
    tracing::debug_span!(
        target: "golem_agent::agent",
        "golem.model.request",
        turn,
        messages = request.messages.len(),
        tools = request.tools.len(),
        input_tokens = Empty,
        output_tokens = Empty,
        finish_reason = Empty,
        duration_ms = Empty,
        outcome = Empty,
    )
}

/// Records how a model request ended on its span.
pub(crate) fn model_finished(span: &Span, result: &Result<Response, ModelError>, took: Duration) {
    span.record("duration_ms", millis(took));
    match result {
        Ok(response) => {
            span.record("input_tokens", response.usage.input_tokens);
            span.record("output_tokens", response.usage.output_tokens);
            span.record(
                "finish_reason",
                tracing::field::debug(&response.finish_reason),
            );
            span.record("outcome", "ok")
        }
        Err(_) => span.record("outcome", "error"),
    };
}

/// The span of one tool call: its size, not its arguments.
pub(crate) fn tool_span(turn: u32, tool: &str, call: &ToolCall) -> Span {
    tracing::debug_span!(
        target: "golem_agent::agent",
        "golem.tool.call",
        turn,
        tool,
        call_id = %call.id,
        argument_bytes = call.arguments.get().len(),
        result_bytes = Empty,
        duration_ms = Empty,
        outcome = Empty,
    )
}

/// Records how a tool call ended on its span: `outcome` is its label ("ok",
/// "rejected", "failed", "timed out" or "cancelled"), `result_bytes` the
/// size of a result.
pub(crate) fn tool_finished(
    span: &Span,
    outcome: &'static str,
    result_bytes: Option<usize>,
    took: Duration,
) {
    span.record("duration_ms", millis(took));
    if let Some(bytes) = result_bytes {
        span.record("result_bytes", bytes);
    }
    span.record("outcome", outcome);
}

fn millis(took: Duration) -> u64 {
    u64::try_from(took.as_millis()).unwrap_or(u64::MAX)
}

/// A call of a tool the agent does not have, answered with a correction: a
/// `WARN` event (target `golem_agent::agent`) with the turn, the name the model
/// used and the call's id.
pub(crate) fn unknown_tool(turn: u32, call: &ToolCall) {
    tracing::warn!(
        target: "golem_agent::agent",
        turn,
        tool = %call.name,
        call_id = %call.id,
        "the model called a tool the agent does not have; told it the tools there are"
    );
}
