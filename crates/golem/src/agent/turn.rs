//! The turn loop: one run, from its first model request to its
//! [`RunOutput`]. [`RunLoop`] holds what a run runs with (the model, the
//! decoder, the tools' [`Sources`], the instructions, the [`CallRules`], the
//! turn limit and the output budget); `run` puts the turns in the run's
//! span; `turns` asks the model (streaming when there is a sink), decodes an
//! answer without tool calls (a rejected one is corrected within the output
//! budget), and otherwise resolves the calls, has them run, and appends the
//! assistant message and one tool message per call, in call order; a model
//! still calling tools on the last allowed turn fails the run. It does not
//! know how calls are grouped, timed out or settled (`calls.rs`), how they
//! are reported (`observe.rs`), or how an agent is configured and checked
//! (`config.rs`, `mod.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use golem_model::{Message, Model, ModelRetry, Request, Response, Usage};
use tracing::Instrument;

use super::calls::{CallRules, TurnCalls};
use super::events::{RunEvent, RunSink, emit};
use super::gather::{Sources, resolve};
use super::observe::CallObserver;
use crate::decode::DecodeError;
use crate::error::RunError;
use crate::telemetry;

/// The stored form of a decoder.
pub(super) type Decoder<Output> = dyn Fn(&Response) -> Result<Output, DecodeError> + Send + Sync;

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

/// What a run runs with: everything an [`Agent`](crate::Agent) holds,
/// checked when it was built.
pub(super) struct RunLoop<Deps, Output> {
    pub(super) model: Arc<dyn Model>,
    pub(super) decoder: Arc<Decoder<Output>>,
    /// The fixed tools and the toolsets.
    pub(super) tools: Sources<Deps>,
    pub(super) instructions: Option<String>,
    /// The tool retry budget and timeout.
    pub(super) calls: CallRules,
    pub(super) max_turns: u32,
    pub(super) output_retries: u32,
}

impl<Deps: Send + Sync + 'static, Output> RunLoop<Deps, Output> {
    /// The run loop in its `tracing` span; `sink` selects streaming.
    pub(super) async fn run(
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
                .calls
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
}

/// The user message after a final answer the decoder rejected.
fn output_rejection(retry: &ModelRetry) -> String {
    format!(
        "Your answer was rejected: {}\nAnswer again, correcting it.",
        retry.reason()
    )
}
