//! The one report of each tool call. [`CallObserver`] hears of every call
//! of a turn as it starts (it opens the call's `tracing` span and, when the
//! run streams, delivers [`RunEvent::ToolStarted`]) and exactly once as it
//! ends, whether it ran to a [`CallOutcome`] or was dropped by a failure
//! beside it: it records the span's outcome, result size and duration
//! (`telemetry.rs`) and delivers [`RunEvent::ToolFinished`] with the
//! [`ToolOutcome`]. It does not know how calls are grouped, polled or timed
//! out, nor what a call's end makes of the run (a tool message, a
//! correction, an error): that is the settlement's, in the poller.

use std::time::Duration;

use golem_model::ToolCall;
use golem_tool::ToolError;
use tracing::Span;

use super::events::{RunEvent, RunSink, ToolOutcome, emit};
use crate::telemetry::{self, TelemetryConfig};

/// Reports the tool calls of one turn: to their spans always, to the run's
/// sink when it streams.
pub(super) struct CallObserver<'s, 'k> {
    turn: u32,
    telemetry: &'s TelemetryConfig,
    sink: &'s mut Option<RunSink<'k>>,
}

/// A call the observer saw start: what its end is reported with.
pub(super) struct Watched<'c> {
    call_id: &'c str,
    tool: &'c str,
    source: &'c str,
    span: Span,
}

/// How a call ended, as the observer hears it.
pub(super) enum Ended<'o> {
    /// It ran to this outcome.
    Ran(&'o CallOutcome),
    /// It was dropped, unfinished, because another call of its turn failed
    /// the run.
    Cancelled,
}

impl<'s, 'k> CallObserver<'s, 'k> {
    /// The observer of turn `turn`'s calls; `sink` is the run's (`None`
    /// when it does not stream).
    pub(super) fn new(
        turn: u32,
        telemetry: &'s TelemetryConfig,
        sink: &'s mut Option<RunSink<'k>>,
    ) -> Self {
        CallObserver {
            turn,
            telemetry,
            sink,
        }
    }

    /// Call `call` of `tool`, offered by `source`, starts: the host hears
    /// of it, and its span is opened (the caller runs the call in it).
    pub(super) fn started<'c>(
        &mut self,
        call: &'c ToolCall,
        tool: &'c str,
        source: &'c str,
    ) -> Watched<'c> {
        let turn = self.turn;
        emit(self.sink, || RunEvent::ToolStarted {
            turn,
            call: call.clone(),
            source: source.to_owned(),
        });
        let span = telemetry::tool_span(turn, tool, call, self.telemetry);
        Watched {
            call_id: &call.id,
            tool,
            source,
            span,
        }
    }

    /// A call ended after `took`: its span records how, then the host hears
    /// of it. Called once per call, with the [`Watched`] that
    /// [`started`](Self::started) gave.
    pub(super) fn finished(&mut self, watched: Watched<'_>, took: Duration, ended: Ended<'_>) {
        let Watched {
            call_id,
            tool,
            source,
            span,
        } = watched;
        let (label, result) = match ended {
            Ended::Ran(outcome) => outcome.summary(),
            Ended::Cancelled => ("cancelled", None),
        };
        telemetry::tool_finished(&span, label, result, self.telemetry.capture_content);
        // Done with the span before the host hears of the end.
        drop(span);
        let turn = self.turn;
        emit(self.sink, || RunEvent::ToolFinished {
            turn,
            call_id: call_id.to_owned(),
            tool: tool.to_owned(),
            source: source.to_owned(),
            duration: took,
            outcome: match ended {
                Ended::Ran(outcome) => reported(outcome),
                Ended::Cancelled => ToolOutcome::Cancelled,
            },
        });
    }
}

impl Watched<'_> {
    /// The call's span, to run the call in.
    pub(super) fn span(&self) -> &Span {
        &self.span
    }
}

/// How a finished call is reported to a host.
fn reported(outcome: &CallOutcome) -> ToolOutcome {
    match outcome {
        CallOutcome::Done(Ok(content)) => ToolOutcome::Ok(content.clone()),
        CallOutcome::Done(Err(ToolError::Retry(retry))) => {
            ToolOutcome::Rejected(retry.reason().to_owned())
        }
        CallOutcome::Done(Err(ToolError::Fatal(source))) => ToolOutcome::Failed(source.to_string()),
        CallOutcome::TimedOut(timeout) => ToolOutcome::TimedOut(*timeout),
    }
}

/// How one tool call ended.
pub(super) enum CallOutcome {
    /// The tool answered, or failed.
    Done(Result<String, ToolError>),
    /// The call outlived this timeout and was dropped.
    TimedOut(Duration),
}

impl CallOutcome {
    /// What the call's span records: the outcome's label and, for a result,
    /// its size (without copying it, as [`reported`] would).
    fn summary(&self) -> (&'static str, Option<&str>) {
        match self {
            CallOutcome::Done(Ok(content)) => ("ok", Some(content.as_str())),
            CallOutcome::Done(Err(ToolError::Retry(_))) => ("rejected", None),
            CallOutcome::Done(Err(ToolError::Fatal(_))) => ("failed", None),
            CallOutcome::TimedOut(_) => ("timed out", None),
        }
    }
}
