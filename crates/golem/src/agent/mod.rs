//! The agent and its run loop.

use std::collections::HashMap;
use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use golem_model::{BoxFuture, Message, Model, ModelRetry, Request, Response, ToolCall, Usage};
use golem_tool::{Tool, ToolContext, ToolError};

use tracing::Instrument;

use crate::decode::DecodeError;
use crate::error::{ConfigError, RunError};
use crate::telemetry;

mod config;
mod events;
mod gather;
mod observe;

use config::toolset_names;
pub use config::{AgentConfig, DEFAULT_MAX_TURNS};
use events::emit;
pub use events::{RunEvent, RunSink, ToolOutcome};
use gather::{Offered, Sources, resolve};
use observe::{CallObserver, CallOutcome, Ended, Watched};

/// The stored form of a decoder.
type Decoder<Output> = dyn Fn(&Response) -> Result<Output, DecodeError> + Send + Sync;

/// What a successful run produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOutput<Output> {
    /// The decoded final answer.
    pub output: Output,
    /// The whole conversation, oldest first: the user's prompt, every
    /// assistant message (with its tool calls), one tool message per call,
    /// any correction prompts, and the final answer. The instructions are
    /// not in it (they travel in [`Request::instructions`]).
    pub messages: Vec<Message>,
    /// The usage of every model request of the run, summed: tokens as the
    /// model reported them; `requests` counted by the agent (one per model
    /// call, whatever the model reports).
    pub usage: Usage,
}

/// An agent: a [`Model`], the [`Tool`]s it may call, and a decoder that
/// turns its final response into an `Output`.
///
/// [`run`](Agent::run) asks the model, runs the tools it calls, sends their
/// results back, and repeats until the model answers without calling a
/// tool; that answer is decoded. Within one model turn:
///
/// - the turn's calls run **concurrently** on the run's own task, except
///   that a call of a [sequential](Tool::sequential) tool is a barrier: the
///   calls before it finish first, it runs alone, and the calls after it
///   start once it is done;
/// - one tool message per call goes back to the model, with the call's id
///   and the tool's name, **in the order of the calls** (not of their
///   completion);
/// - a tool's [`ModelRetry`] goes back as that call's message, asking for
///   corrected arguments, while the tool's correction budget lasts (its own
///   [`Tool::max_retries`], else [`AgentConfig::tool_retries`], counted per
///   tool over the run); the turn's other calls still run. Past the budget
///   the run fails with [`RunError::ToolRetriesExhausted`];
/// - any other tool error fails the run ([`RunError::Tool`], the cause
///   intact), as does a call that outlives its timeout
///   ([`RunError::ToolTimeout`]: its future is dropped, which cancels it);
///   the turn's calls still running are dropped too;
/// - a call of a tool the agent does not have fails the run before any call
///   of that turn starts ([`RunError::UnknownTool`]).
///
/// The run also fails when the model is still calling tools on its last
/// allowed turn ([`RunError::TurnLimit`]).
///
/// # Example
///
/// An agent with one tool, driven by the scripted [test
/// model](crate::testmodel) so that it runs offline:
///
/// ```
/// use std::sync::Arc;
/// use golem::model::ToolCall;
/// use golem::testmodel::{ScriptedModel, text_response, tool_calls_response};
/// use golem::tool::{Tool, ToolContext};
/// use golem::{Agent, AgentConfig};
///
/// /// What every tool call of a run can use.
/// struct Deps {
///     city: String,
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let where_am_i = Tool::new(
///     "where_am_i",
///     "Says which city the user is in.",
///     r#"{"type":"object"}"#,
///     |ctx: ToolContext<Deps>, _args| async move { Ok(ctx.deps.city.clone()) },
/// )?;
///
/// // The model first calls the tool, then answers.
/// let model = ScriptedModel::new([
///     tool_calls_response([ToolCall::new("call_1", "where_am_i", "{}")?]),
///     text_response("You are in Lisbon."),
/// ]);
/// let agent = Agent::new(
///     Arc::new(model.clone()),
///     golem::decode::text,
///     AgentConfig {
///         tools: vec![where_am_i],
///         instructions: Some("Be brief.".into()),
///         ..AgentConfig::default()
///     },
/// )?;
///
/// let run = agent.run(Deps { city: "Lisbon".into() }, "Where am I?").await?;
/// assert_eq!(run.output, "You are in Lisbon.");
/// assert_eq!(run.usage.requests, 2);
/// // user, assistant (tool call), tool result, assistant (answer)
/// assert_eq!(run.messages.len(), 4);
/// assert_eq!(run.messages[2].content, "Lisbon");
/// // What the model saw on its second turn:
/// let seen = &model.requests()[1];
/// assert_eq!(seen.instructions.as_deref(), Some("Be brief."));
/// assert_eq!(seen.tools[0].name, "where_am_i");
/// # Ok(())
/// # }
/// ```
pub struct Agent<Deps, Output> {
    model: Arc<dyn Model>,
    decoder: Arc<Decoder<Output>>,
    /// The fixed tools and the toolsets.
    tools: Sources<Deps>,
    instructions: Option<String>,
    tool_retries: u32,
    tool_timeout: Option<Duration>,
    max_turns: u32,
    output_retries: u32,
}

impl<Deps, Output> fmt::Debug for Agent<Deps, Output> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.model.name())
            .field("tools", &self.tools.fixed())
            .field("toolsets", &toolset_names(self.tools.toolsets()))
            .field("instructions", &self.instructions)
            .field("tool_retries", &self.tool_retries)
            .field("tool_timeout", &self.tool_timeout)
            .field("max_turns", &self.max_turns)
            .field("output_retries", &self.output_retries)
            .finish_non_exhaustive()
    }
}

impl<Deps, Output> Agent<Deps, Output> {
    /// An agent asking `model`, offering the tools of `config`, and turning
    /// the final response into `Output` with `decoder` (for plain text:
    /// [`decode::text`](crate::decode::text)).
    ///
    /// # Errors
    ///
    /// [`ConfigError::DuplicateTool`] if two tools share a name,
    /// [`ConfigError::ZeroMaxTurns`] if `max_turns` is 0.
    pub fn new(
        model: Arc<dyn Model>,
        decoder: impl Fn(&Response) -> Result<Output, DecodeError> + Send + Sync + 'static,
        config: AgentConfig<Deps>,
    ) -> Result<Self, ConfigError> {
        if config.max_turns == 0 {
            return Err(ConfigError::ZeroMaxTurns {
                default: DEFAULT_MAX_TURNS,
            });
        }
        let tools = Sources::new(config.tools, config.toolsets)?;
        Ok(Self {
            model,
            decoder: Arc::new(decoder),
            tools,
            instructions: config.instructions,
            tool_retries: config.tool_retries,
            tool_timeout: config.tool_timeout,
            max_turns: config.max_turns,
            output_retries: config.output_retries,
        })
    }

    /// The agent's fixed tools, in the order they are offered to the model
    /// (its toolsets' tools are asked for before each model request).
    pub fn tools(&self) -> &[Tool<Deps>] {
        self.tools.fixed()
    }
}

impl<Deps: Send + Sync + 'static, Output> Agent<Deps, Output> {
    /// Runs the agent on one user prompt, with `deps` available to every
    /// tool call (pass a `Deps`, or an `Arc<Deps>` to share one), and
    /// returns the decoded output, the whole conversation and the summed
    /// usage. See [`Agent`] for the loop and its outcomes.
    ///
    /// Tool timeouts need a Tokio runtime with its timer enabled.
    ///
    /// # Errors
    ///
    /// A [`RunError`] naming what failed: the model, a tool (its cause
    /// intact), a tool's correction budget, a timeout, an unknown tool, the
    /// turn limit, or the decoder.
    ///
    /// # Cancel safety
    ///
    /// Dropping the future ends the run: the model request or the tool
    /// calls in progress are dropped (cancelled) with it. The agent keeps no
    /// state between runs, so it stays usable; what a dropped tool leaves
    /// behind is that tool's business (an MCP client, for one, stays usable
    /// and tells its server the call was abandoned).
    pub async fn run(
        &self,
        deps: impl Into<Arc<Deps>>,
        prompt: impl Into<String>,
    ) -> Result<RunOutput<Output>, RunError> {
        self.run_loop(deps.into(), vec![Message::user(prompt)], None)
            .await
    }

    /// [`run`](Self::run), continuing a conversation: `history` (the
    /// [`messages`](RunOutput::messages) of an earlier run, say) comes
    /// before `message`, the user's next message ([`Message::user`], or
    /// [`Message::user_with_images`]), and the output's `messages` hold all
    /// of it.
    pub async fn run_with_history(
        &self,
        deps: impl Into<Arc<Deps>>,
        mut history: Vec<Message>,
        message: Message,
    ) -> Result<RunOutput<Output>, RunError> {
        history.push(message);
        self.run_loop(deps.into(), history, None).await
    }

    /// [`run`](Self::run), streaming: the model is asked with
    /// [`Model::request_stream`], and `sink` receives, as they happen, what
    /// it streams (text fragments, tool calls and their argument
    /// fragments), the end of each model answer with its usage, and the
    /// start and end of each tool call with its duration and outcome (see
    /// [`RunEvent`]). The result is the one [`run`](Self::run) would have
    /// returned.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use golem::model::{StreamEvent, ToolCall};
    /// use golem::testmodel::{ScriptedModel, text_response, tool_calls_response};
    /// use golem::tool::Tool;
    /// use golem::{Agent, AgentConfig, RunEvent};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let clock = Tool::<()>::new("clock", "The time.", r#"{"type":"object"}"#, |_, _| async {
    ///     Ok("12:00".to_owned())
    /// })?;
    /// let model = ScriptedModel::new([
    ///     tool_calls_response([ToolCall::new("c1", "clock", "{}")?]),
    ///     text_response("It is noon."),
    /// ])
    /// .fragmented(4); // streams its answers four characters at a time
    /// let agent = Agent::new(Arc::new(model), golem::decode::text, AgentConfig {
    ///     tools: vec![clock],
    ///     ..AgentConfig::default()
    /// })?;
    ///
    /// let mut shown = String::new();
    /// let run = agent
    ///     .run_stream((), "What time is it?", &mut |event| match event {
    ///         RunEvent::Model { event: StreamEvent::Text(text), .. } => shown.push_str(&text),
    ///         RunEvent::ToolStarted { call, .. } => shown.push_str(&format!("[{}]", call.name)),
    ///         RunEvent::ToolFinished { outcome, .. } => shown.push_str(&format!("[{}]", outcome.is_ok())),
    ///         _ => {}
    ///     })
    ///     .await?;
    /// assert_eq!(shown, "[clock][true]It is noon.");
    /// assert_eq!(run.output, "It is noon.");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors and cancel safety
    ///
    /// As for [`run`](Self::run). Events already delivered stay delivered:
    /// a run that fails may have streamed part of an answer first.
    pub async fn run_stream(
        &self,
        deps: impl Into<Arc<Deps>>,
        prompt: impl Into<String>,
        sink: RunSink<'_>,
    ) -> Result<RunOutput<Output>, RunError> {
        self.run_loop(deps.into(), vec![Message::user(prompt)], Some(sink))
            .await
    }

    /// [`run_stream`](Self::run_stream), continuing a conversation, as
    /// [`run_with_history`](Self::run_with_history) does.
    pub async fn run_stream_with_history(
        &self,
        deps: impl Into<Arc<Deps>>,
        mut history: Vec<Message>,
        message: Message,
        sink: RunSink<'_>,
    ) -> Result<RunOutput<Output>, RunError> {
        history.push(message);
        self.run_loop(deps.into(), history, Some(sink)).await
    }

    /// The run loop in its `tracing` span; `sink` selects streaming.
    async fn run_loop(
        &self,
        deps: Arc<Deps>,
        messages: Vec<Message>,
        sink: Option<RunSink<'_>>,
    ) -> Result<RunOutput<Output>, RunError> {
        let span = telemetry::run_span(sink.is_some(), self.max_turns);
        let started = Instant::now();
        let result = self
            .turns(deps, messages, sink)
            .instrument(span.clone())
            .await;
        let (usage, error) = match &result {
            Ok(run) => (Some(&run.usage), None),
            Err(error) => (None, Some(error)),
        };
        telemetry::run_finished(&span, usage, error, started.elapsed());
        result
    }

    /// The turns of a run: model requests and the tool calls they ask for.
    async fn turns(
        &self,
        deps: Arc<Deps>,
        messages: Vec<Message>,
        mut sink: Option<RunSink<'_>>,
    ) -> Result<RunOutput<Output>, RunError> {
        let mut request = Request {
            instructions: self.instructions.clone(),
            messages,
            ..Request::default()
        };
        let mut usage = Usage::default();
        // Rejections so far in this run, per tool name (toolsets' tools may
        // come and go between turns).
        let mut tool_rejections: HashMap<String, u32> = HashMap::new();
        let mut output_rejections = 0u32;

        for turn in 1..=self.max_turns {
            let offered = self.tools.offered()?;
            request.tools.clone_from(&offered.specs);
            let span = telemetry::model_span(turn, &request);
            let started = Instant::now();
            let response = match sink.as_deref_mut() {
                None => self.model.request(&request).instrument(span.clone()).await,
                Some(sink) => {
                    let mut forward = |event| sink(RunEvent::Model { turn, event });
                    self.model
                        .request_stream(&request, &mut forward)
                        .instrument(span.clone())
                        .await
                }
            };
            telemetry::model_finished(&span, &response, started.elapsed());
            let response = response.map_err(|source| RunError::Model { turn, source })?;
            // Tokens as the model reports them; requests as counted here, so
            // the figure is right whatever the model fills in.
            let turn_usage = Usage {
                requests: 1,
                ..response.usage
            };
            usage += turn_usage;
            emit(&mut sink, || RunEvent::ModelResponse {
                turn,
                usage: turn_usage,
                finish_reason: response.finish_reason.clone(),
            });

            if response.tool_calls.is_empty() {
                let decoded = (self.decoder)(&response);
                request.messages.push(Message::assistant(response.text));
                match decoded {
                    Ok(output) => {
                        return Ok(RunOutput {
                            output,
                            messages: request.messages,
                            usage,
                        });
                    }
                    Err(DecodeError::Retry(retry)) => {
                        output_rejections += 1;
                        if output_rejections > self.output_retries {
                            return Err(RunError::OutputRetriesExhausted {
                                attempts: output_rejections,
                                budget: self.output_retries,
                                source: retry,
                            });
                        }
                        request
                            .messages
                            .push(Message::user(output_rejection(&retry)));
                        continue;
                    }
                    Err(DecodeError::Fatal(source)) => return Err(RunError::Output { source }),
                }
            }

            if turn == self.max_turns {
                return Err(RunError::TurnLimit {
                    max_turns: self.max_turns,
                });
            }
            let Response {
                text, tool_calls, ..
            } = response;
            let plan = resolve(&offered, &tool_calls)?;
            let turn_calls = TurnCalls {
                offered: &offered,
                calls: &tool_calls,
                plan: &plan,
            };
            let mut observer = CallObserver::new(turn, &mut sink);
            let results = self
                .run_calls(&turn_calls, &deps, &mut tool_rejections, &mut observer)
                .await?;
            let tool_messages: Vec<Message> = tool_calls
                .iter()
                .zip(&plan)
                .zip(results)
                .map(|((call, &tool), content)| {
                    Message::tool_result(&call.id, offered.tools[tool].name(), content)
                })
                .collect();
            request
                .messages
                .push(Message::assistant_with_tool_calls(text, tool_calls));
            request.messages.extend(tool_messages);
        }
        Err(RunError::TurnLimit {
            max_turns: self.max_turns,
        })
    }

    /// Runs one turn's calls, in groups: a run of non-sequential calls
    /// together, each sequential call alone. Returns each call's message
    /// content, in call order.
    async fn run_calls(
        &self,
        turn: &TurnCalls<'_, Deps>,
        deps: &Arc<Deps>,
        rejections: &mut HashMap<String, u32>,
        observer: &mut CallObserver<'_, '_>,
    ) -> Result<Vec<String>, RunError> {
        let tools = &turn.offered.tools;
        let (calls, plan) = (turn.calls, turn.plan);
        let mut results: Vec<String> = vec![String::new(); calls.len()];
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
    async fn run_group(
        &self,
        turn: &TurnCalls<'_, Deps>,
        deps: &Arc<Deps>,
        group: std::ops::Range<usize>,
        rejections: &mut HashMap<String, u32>,
        results: &mut [String],
        observer: &mut CallObserver<'_, '_>,
    ) -> Result<(), RunError> {
        let tools = &turn.offered.tools;
        let (calls, plan) = (turn.calls, turn.plan);
        let mut running: Vec<Option<Running>> = group
            .map(|index| {
                let tool = &tools[plan[index]];
                let call = &calls[index];
                let rejected = rejections.get(tool.name()).copied().unwrap_or(0);
                let ctx = ToolContext::new(Arc::clone(deps), &call.id, rejected);
                let watched =
                    observer.started(call, tool.name(), &turn.offered.sources[plan[index]]);
                let future = tool.call(ctx, call.arguments.clone());
                let timeout = tool.timeout().or(self.tool_timeout);
                let future: Pin<Box<CallFuture>> =
                    Box::pin(with_timeout(future, timeout).instrument(watched.span().clone()));
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
                            Ok(content) => results[index] = content,
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
    fn settle(
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
            CallOutcome::Done(Err(ToolError::Fatal(source))) => Err(RunError::Tool {
                tool: tool.name().to_owned(),
                call_id: call.id.clone(),
                source,
            }),
            CallOutcome::TimedOut(timeout) => Err(RunError::ToolTimeout {
                tool: tool.name().to_owned(),
                call_id: call.id.clone(),
                timeout,
            }),
        }
    }
}

/// The calls of one turn, with the tools they resolved to.
struct TurnCalls<'a, Deps> {
    offered: &'a Offered<Deps>,
    calls: &'a [ToolCall],
    /// For each call, the index of its tool in `offered`.
    plan: &'a [usize],
}

type CallFuture = dyn Future<Output = CallOutcome> + Send;

/// A call in flight: its index in the turn, when it started, its future,
/// what the observer reports its end with (its span among it).
type Running<'c> = (usize, Instant, Pin<Box<CallFuture>>, Watched<'c>);

/// Runs a call, dropping it if it outlives `timeout`.
async fn with_timeout(
    call: BoxFuture<'static, Result<String, ToolError>>,
    timeout: Option<Duration>,
) -> CallOutcome {
    match timeout {
        None => CallOutcome::Done(call.await),
        Some(limit) => match tokio::time::timeout(limit, call).await {
            Ok(result) => CallOutcome::Done(result),
            Err(_elapsed) => CallOutcome::TimedOut(limit),
        },
    }
}

/// The tool message for a call whose arguments the tool rejected.
fn tool_rejection(tool: &str, retry: &ModelRetry) -> String {
    format!(
        "Tool {tool:?} rejected the arguments of this call: {}\nCall it again with corrected \
         arguments.",
        retry.reason()
    )
}

/// The user message after a final answer the decoder rejected.
fn output_rejection(retry: &ModelRetry) -> String {
    format!(
        "Your answer was rejected: {}\nAnswer again, correcting it.",
        retry.reason()
    )
}
