//! Running one turn's tool calls. [`CallRules::run_calls`] splits the
//! calls into groups at sequential tools and runs each group's calls
//! concurrently on the run's own task (`run_group`, the poller), each
//! wrapped in its timeout; as each call finishes it is reported once to the
//! [`CallObserver`] and settled: its text, or a correction within the
//! tool's budget, becomes its message content, and anything else fails the
//! run at once, dropping the calls still running, unless the agent tells
//! the model of failures (`ToolFailures::TellModel`): then a failure's one
//! line is that call's message content and the other calls run on. It does not know the
//! model, the messages of the conversation, the turn limit, or where a
//! report goes (spans, a sink): the observer does.

use std::collections::HashMap;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use golem_model::{BoxFuture, Image, ModelRetry, ToolCall};
use golem_tool::{Liveness, Tool, ToolContext, ToolError, ToolImages};
use tracing::Instrument;

use super::config::ToolFailures;
use super::gather::Offered;
use super::observe::{CallObserver, CallOutcome, Ended, Watched};
use crate::error::RunError;

/// The agent's rules for its tools' calls: the defaults that a tool's own
/// settings replace.
pub(super) struct CallRules {
    /// How many times each tool may reject its arguments in one run
    /// ([`AgentConfig::tool_retries`](crate::AgentConfig::tool_retries)).
    pub(super) tool_retries: u32,
    /// How long one call may go without a sign of life
    /// ([`AgentConfig::tool_timeout`](crate::AgentConfig::tool_timeout)).
    pub(super) tool_timeout: Option<Duration>,
    /// The longest one call may take
    /// ([`AgentConfig::tool_max_time`](crate::AgentConfig::tool_max_time)).
    pub(super) tool_max_time: Option<Duration>,
    /// Whether a call's failure fails the run or goes back to the model
    /// ([`AgentConfig::tool_failures`](crate::AgentConfig::tool_failures)).
    pub(super) tool_failures: ToolFailures,
}

/// What one call gives the model: its tool message's text (its result, or
/// a correction), and the images it attached.
#[derive(Clone, Debug, Default)]
pub(super) struct Reply {
    pub(super) text: String,
    pub(super) images: Vec<Image>,
}

/// The calls of one turn, with the tools they resolved to.
pub(super) struct TurnCalls<'a, Deps> {
    pub(super) offered: &'a Offered<Deps>,
    pub(super) calls: &'a [ToolCall],
    /// For each call, the index of its tool in `offered`.
    pub(super) plan: &'a [usize],
}

impl CallRules {
    /// Runs one turn's calls, in groups: a run of non-sequential calls
    /// together, each sequential call alone. Returns each call's message
    /// content, in call order.
    pub(super) async fn run_calls<Deps: Send + Sync + 'static>(
        &self,
        turn: &TurnCalls<'_, Deps>,
        deps: &Arc<Deps>,
        rejections: &mut HashMap<String, u32>,
        observer: &mut CallObserver<'_, '_>,
    ) -> Result<Vec<Reply>, RunError> {
        let tools = &turn.offered.tools;
        let (calls, plan) = (turn.calls, turn.plan);
        let mut results: Vec<Reply> = vec![Reply::default(); calls.len()];
        let mut start = 0;
        while start < calls.len() {
            let end = if tools[plan[start]].is_sequential() {
                start + 1
            } else {
                (start..calls.len())
                    .find(|&index| tools[plan[index]].is_sequential())
                    .unwrap_or(calls.len())
            };
            self.run_group(turn, deps, start..end, rejections, &mut results, observer)
                .await?;
            start = end;
        }
        Ok(results)
    }

    /// Runs the calls `group` concurrently on this task and settles each as
    /// it finishes; `observer` hears of each call's start, and of its end
    /// exactly once. The first failure returns at once, dropping
    /// (cancelling) the calls still running.
    async fn run_group<Deps: Send + Sync + 'static>(
        &self,
        turn: &TurnCalls<'_, Deps>,
        deps: &Arc<Deps>,
        group: std::ops::Range<usize>,
        rejections: &mut HashMap<String, u32>,
        results: &mut [Reply],
        observer: &mut CallObserver<'_, '_>,
    ) -> Result<(), RunError> {
        let tools = &turn.offered.tools;
        let (calls, plan) = (turn.calls, turn.plan);
        // What each call attaches for the model, by its index in the turn.
        let mut attached: HashMap<usize, ToolImages> = HashMap::new();
        let mut running: Vec<Option<Running>> = group
            .map(|index| {
                let tool = &tools[plan[index]];
                let call = &calls[index];
                let rejected = rejections.get(tool.name()).copied().unwrap_or(0);
                let ctx = ToolContext::new(Arc::clone(deps), &call.id, rejected);
                let alive = ctx.alive.clone();
                attached.insert(index, ctx.images.clone());
                let watched =
                    observer.started(call, tool.name(), &turn.offered.sources[plan[index]]);
                let future = tool.call(ctx, call.arguments.clone());
                let bounds = Bounds {
                    idle: tool.timeout().or(self.tool_timeout),
                    max: self.tool_max_time,
                };
                let future: Pin<Box<CallFuture>> = Box::pin(
                    with_timeout(future, bounds, alive).instrument(watched.span().clone()),
                );
                Some((index, Instant::now(), future, watched))
            })
            .collect();

        let outcome = poll_fn(|cx| {
            let mut still_running = false;
            for slot in running.iter_mut() {
                // A call leaves its slot when it finishes, so that it is
                // reported once.
                let Some((index, started, mut future, watched)) = slot.take() else {
                    continue;
                };
                match future.as_mut().poll(cx) {
                    Poll::Pending => {
                        *slot = Some((index, started, future, watched));
                        still_running = true;
                    }
                    Poll::Ready(outcome) => {
                        let took = started.elapsed();
                        // The finished future goes first, so that the span
                        // closes before the host hears of the end; a
                        // cancelled call's goes after its report (below).
                        drop(future);
                        observer.finished(watched, took, Ended::Ran(&outcome));
                        match self.settle(&tools[plan[index]], &calls[index], outcome, rejections) {
                            Ok(text) => {
                                let images = attached
                                    .get(&index)
                                    .map(ToolImages::take)
                                    .unwrap_or_default();
                                results[index] = Reply { text, images };
                            }
                            Err(error) => return Poll::Ready(Err(error)),
                        }
                    }
                }
            }
            if still_running {
                Poll::Pending
            } else {
                Poll::Ready(Ok(()))
            }
        })
        .await;
        // The calls a failure leaves running are dropped here; a host that
        // showed them starting hears that they ended.
        for (_, started, _, watched) in running.into_iter().flatten() {
            observer.finished(watched, started.elapsed(), Ended::Cancelled);
        }
        outcome
    }

    /// Turns one finished call into its message content, or the run's
    /// error.
    fn settle<Deps>(
        &self,
        tool: &Tool<Deps>,
        call: &ToolCall,
        outcome: CallOutcome,
        rejections: &mut HashMap<String, u32>,
    ) -> Result<String, RunError> {
        match outcome {
            CallOutcome::Done(Ok(content)) => Ok(content),
            CallOutcome::Done(Err(ToolError::Retry(retry))) => {
                let rejected = rejections.entry(tool.name().to_owned()).or_insert(0);
                let attempts = rejected.saturating_add(1);
                *rejected = attempts;
                let budget = tool.max_retries().unwrap_or(self.tool_retries);
                if attempts > budget {
                    return Err(RunError::ToolRetriesExhausted {
                        tool: tool.name().to_owned(),
                        call_id: call.id.clone(),
                        attempts,
                        budget,
                        source: retry,
                    });
                }
                Ok(tool_rejection(tool.name(), &retry))
            }
            CallOutcome::Done(Err(ToolError::Fatal(source))) => match self.tool_failures {
                ToolFailures::TellModel => Ok(tool_failure(tool.name(), &*source)),
                ToolFailures::FailRun => Err(RunError::Tool {
                    tool: tool.name().to_owned(),
                    call_id: call.id.clone(),
                    source,
                }),
            },
            CallOutcome::TimedOut(timeout) => match self.tool_failures {
                ToolFailures::TellModel => Ok(tool_timed_out(tool.name(), timeout)),
                ToolFailures::FailRun => Err(RunError::ToolTimeout {
                    tool: tool.name().to_owned(),
                    call_id: call.id.clone(),
                    timeout,
                }),
            },
        }
    }
}

type CallFuture = dyn Future<Output = CallOutcome> + Send;

/// A call in flight: its index in the turn, when it started, its future,
/// what the observer reports its end with (its span among it).
type Running<'c> = (usize, Instant, Pin<Box<CallFuture>>, Watched<'c>);

/// How long a call may run: without a sign of life, and at all.
#[derive(Clone, Copy)]
struct Bounds {
    idle: Option<Duration>,
    max: Option<Duration>,
}

/// Runs a call, dropping it once it went `bounds.idle` without reporting
/// on `alive` (each report restarts that wait; reports are looked at four
/// times per idle period, so a call is dropped at most a quarter of it
/// late), or ran `bounds.max`.
async fn with_timeout(
    mut call: BoxFuture<'static, Result<String, ToolError>>,
    bounds: Bounds,
    alive: Liveness,
) -> CallOutcome {
    let started = tokio::time::Instant::now();
    let hard = bounds.max.map(|max| started + max);
    let Some(idle) = bounds.idle else {
        return match bounds.max {
            Some(max) => match tokio::time::timeout(max, call).await {
                Ok(result) => CallOutcome::Done(result),
                Err(_) => CallOutcome::TimedOut(max),
            },
            None => CallOutcome::Done(call.await),
        };
    };
    let look = (idle / 4).max(Duration::from_millis(1));
    let (mut seen, mut alive_at) = (alive.reports(), started);
    loop {
        let mut next = (started.max(tokio::time::Instant::now()) + look).min(alive_at + idle);
        if let Some(hard) = hard {
            next = next.min(hard);
        }
        if let Ok(result) = tokio::time::timeout_at(next, &mut call).await {
            return CallOutcome::Done(result);
        }
        let now = tokio::time::Instant::now();
        if let (Some(hard), Some(max)) = (hard, bounds.max)
            && now >= hard
        {
            return CallOutcome::TimedOut(max);
        }
        let reports = alive.reports();
        if reports != seen {
            (seen, alive_at) = (reports, now);
        } else if now >= alive_at + idle {
            return CallOutcome::TimedOut(idle);
        }
    }
}

/// The tool message for a call that failed ([`ToolFailures::TellModel`]):
/// one line, the error and, when its message does not already say it,
/// its root cause (a bridged MCP tool's error names the request and wraps
/// the server's own message or how the server ended).
fn tool_failure(tool: &str, error: &(dyn std::error::Error + 'static)) -> String {
    let mut why = error.to_string();
    let mut root = error.source();
    while let Some(next) = root.and_then(|cause| cause.source()) {
        root = Some(next);
    }
    if let Some(root) = root.map(ToString::to_string)
        && !root.is_empty()
        && !why.contains(&root)
    {
        why = format!("{why}: {root}");
    }
    format!(
        "Tool {tool:?} failed, so this call has no result: {}. Call it again only if the \
         error says what to change; otherwise go on without it.",
        one_line(&why)
    )
}

/// The tool message for a call that outlived its timeout
/// ([`ToolFailures::TellModel`]).
fn tool_timed_out(tool: &str, timeout: Duration) -> String {
    format!(
        "Tool {tool:?} did not finish within {} s and was cancelled, so this call has no \
         result. Try a smaller request, or go on without it.",
        timeout.as_secs_f64()
    )
}

/// `text` on one line: its lines, trimmed, joined by spaces, so that a
/// multi-line error (a dead server's last words) stays one message line.
fn one_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The tool message for a call whose arguments the tool rejected.
fn tool_rejection(tool: &str, retry: &ModelRetry) -> String {
    format!(
        "Tool {tool:?} rejected the arguments of this call: {}\nCall it again with corrected \
         arguments.",
        retry.reason()
    )
}
