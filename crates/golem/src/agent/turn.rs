//! The turn loop: one run, from its first model request to its
//! [`RunOutput`]. [`RunLoop`] holds what a run runs with (the model, the
//! decoder, the tools' [`Sources`], the instructions, the [`CallRules`], the
//! turn limit and the output budget); `run` puts the turns in the run's
//! span; `turns` asks the model (streaming when there is a sink), decodes an
//! answer without tool calls (a rejected one is corrected within the output
//! budget), and otherwise resolves the calls (one naming a tool the agent
//! does not have gets a correction, within the tool budget, ADR 0020), has
//! the others run, and appends the
//! assistant message and one tool message per call, in call order; a model
//! still calling tools on the last allowed turn fails the run. It does not
//! know how calls are grouped, timed out or settled (`calls.rs`), how they
//! are reported (`observe.rs`), or how an agent is configured and checked
//! (`config.rs`, `mod.rs`).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use golem_model::{
    Image, Message, Model, ModelRetry, ModelSettings, OutputSchema, Request, Response, ToolCall,
    ToolChoice, Usage,
};
use tracing::Instrument;

use super::approval::{self, ApprovalRequest, Approver, Decision, RunApprovals, Verdict};
use super::budget::Budget;
use super::calls::{CallRules, TurnCalls};
use super::config::ToolSearch;
use super::deferred::{PendingApprovals, PendingCall, Resume};
use super::events::{RunEvent, RunSink, emit};
use super::gather::{Offered, Sources, resolve};
use super::observe::CallObserver;
use super::output::{self, OUTPUT_SOURCE, OutputStore, RunOutputs};
use super::search::{RunSearch, SEARCH_SOURCE};
use super::unknown;
use crate::conversation::CORRECTION;
use crate::decode::DecodeError;
use crate::error::RunError;
use crate::telemetry::{self, TelemetryConfig};

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

/// Where a run starts: a conversation whose last message is the user's,
/// or a run whose approvals were pending, now decided.
pub(super) enum Start {
    /// A new run on these messages.
    New(Vec<Message>),
    /// A resumed run: its pending turn's calls run first.
    Resume(Box<Resume>),
}

/// What a run runs with: everything an [`Agent`](crate::Agent) holds,
/// checked when it was built.
pub(super) struct RunLoop<Deps, Output> {
    pub(super) model: Arc<dyn Model>,
    pub(super) decoder: Arc<Decoder<Output>>,
    /// The fixed tools and the toolsets.
    pub(super) tools: Sources<Deps>,
    /// When the model gets a search tool in place of most tools.
    pub(super) tool_search: ToolSearch,
    /// The most bytes of one tool message, and where longer ones are kept.
    pub(super) max_tool_output: Option<usize>,
    pub(super) output_store: Arc<dyn OutputStore>,
    pub(super) instructions: Option<String>,
    /// The tool retry budget and timeout.
    pub(super) calls: CallRules,
    /// Who approves calls before they run, if anyone.
    pub(super) approver: Option<Arc<dyn Approver>>,
    /// What runs may spend, and spent.
    pub(super) budget: Option<Arc<Budget>>,
    /// The agent's model settings, under each run's.
    pub(super) settings: ModelSettings,
    /// The shape of the final answer, if any.
    pub(super) output: Option<OutputSchema>,
    pub(super) max_turns: u32,
    pub(super) output_retries: u32,
    /// What the spans say beyond the conventions' defaults.
    pub(super) telemetry: TelemetryConfig,
}

impl<Deps: Send + Sync + 'static, Output> RunLoop<Deps, Output> {
    /// The run loop in its `tracing` span, with the run's `settings` over
    /// the agent's; `sink` selects streaming.
    pub(super) async fn run(
        &self,
        deps: Arc<Deps>,
        start: Start,
        settings: &ModelSettings,
        sink: Option<RunSink<'_>>,
    ) -> Result<RunOutput<Output>, RunError> {
        let settings = settings.over(&self.settings);
        let span = telemetry::run_span(
            &*self.model,
            &self.telemetry,
            &settings,
            self.instructions.as_deref(),
            self.output.is_some(),
            sink.is_some(),
            self.max_turns,
        );
        let result = self
            .turns(deps, start, settings, sink)
            .instrument(span.clone())
            .await;
        let (usage, error) = match &result {
            Ok(run) => (Some(&run.usage), None),
            Err(error) => (None, Some(error)),
        };
        telemetry::run_finished(&span, usage, error);
        result
    }

    /// The turns of a run: model requests and the tool calls they ask for
    /// (a resumed run's first turn runs its pending calls, without asking
    /// the model).
    async fn turns(
        &self,
        deps: Arc<Deps>,
        start: Start,
        settings: ModelSettings,
        mut sink: Option<RunSink<'_>>,
    ) -> Result<RunOutput<Output>, RunError> {
        let (messages, mut pending, first_turn, mut usage, mut approvals) = match start {
            Start::New(messages) => (
                messages,
                None,
                1,
                Usage::default(),
                RunApprovals::new(self.approver.clone(), HashSet::new(), HashMap::new()),
            ),
            Start::Resume(resume) => (
                resume.messages,
                Some((resume.text, resume.calls)),
                resume.turn,
                resume.usage,
                RunApprovals::new(
                    self.approver.clone(),
                    resume.approved_tools,
                    resume.decisions,
                ),
            ),
        };
        // A resumed run's model has called tools already.
        let mut called_a_tool = pending.is_some();
        // A model that cannot ask for the answer's shape itself is offered
        // it as a tool, whose call is the answer.
        let output_tool = self
            .output
            .as_ref()
            .filter(|_| !self.model.takes_output_schema())
            .map(OutputSchema::tool);
        let mut request = Request {
            instructions: self.instructions.clone(),
            messages,
            output: self.output.clone().filter(|_| output_tool.is_none()),
            ..Request::default()
        };
        // Rejections so far in this run, per tool name (toolsets' tools may
        // come and go between turns).
        let mut tool_rejections: HashMap<String, u32> = HashMap::new();
        let mut output_rejections = 0u32;
        // Calls of tools the agent does not have, so far in this run.
        let mut unknown_calls = 0u32;
        let search = RunSearch::new(self.tool_search, &request.messages);
        // A tool the model must call is offered whole, searched or not.
        if let Some(ToolChoice::Tool(name)) = &settings.tool_choice {
            search.called(name);
        }
        let outputs = RunOutputs::new(
            self.max_tool_output,
            Arc::clone(&self.output_store),
            &request.messages,
        );

        for turn in first_turn..=self.max_turns {
            let mut offered = self.tools.offered()?;
            if let Some(read) = outputs.read_tool(&offered) {
                offered.to_mut().add(read.clone(), OUTPUT_SOURCE)?;
            }
            let view = search.view(offered)?;
            let offered = view.offered;
            request.tools = view.specs;
            request.settings = settings_now(&settings, called_a_tool);
            // While a call of a real tool is forced, answering cannot meet it.
            let forced = matches!(
                request.settings.tool_choice,
                Some(ToolChoice::Required | ToolChoice::Tool(_))
            );
            request
                .tools
                .extend(output_tool.clone().filter(|_| !forced));
            output::bound_images(&mut request.messages);
            // A resumed run's pending calls are this turn's: the model
            // asked for them before the run ended.
            let (text, tool_calls) = match pending.take() {
                Some(calls) => calls,
                None => match self
                    .ask_model(
                        turn,
                        &mut request,
                        &mut usage,
                        &mut output_rejections,
                        &mut sink,
                    )
                    .await?
                {
                    Answer::Final(output) => {
                        return Ok(RunOutput {
                            output,
                            messages: request.messages,
                            usage,
                        });
                    }
                    Answer::Retry => continue,
                    Answer::Calls(text, calls) => (text, calls),
                },
            };
            let resolved = resolve(&offered, &tool_calls);
            // A forced choice is met by a tool of the run's, not by the
            // agent's own search or output reader.
            called_a_tool |= resolved
                .iter()
                .flatten()
                .any(|&tool| !is_own(&offered.sources[tool]));
            for tool in resolved.iter().flatten() {
                search.called(offered.tools[*tool].name());
            }
            let listed: Option<(Vec<&str>, &str)> = view.listed.as_ref().map(|names| {
                let names = names.iter().map(String::as_str).collect();
                (names, view.search.unwrap_or_default())
            });
            let mut unknown = self.correct_unknown(
                turn,
                &offered.names(),
                listed
                    .as_ref()
                    .map(|(names, search)| (names.as_slice(), *search)),
                &tool_calls,
                &resolved,
                &mut unknown_calls,
                &mut sink,
            )?;
            // The calls of tools the agent has, each approved or denied
            // before any runs; a denied call's message is its denial.
            let known: Vec<(usize, usize)> = resolved
                .iter()
                .enumerate()
                .filter_map(|(index, tool)| tool.map(|tool| (index, tool)))
                .collect();
            // A budget whose tool calls are used up fails before anyone is
            // asked about more.
            if let (Some(budget), false) = (&self.budget, known.is_empty()) {
                budget.check_tool_calls(1)?;
            }
            let screened = self
                .approve(
                    &mut approvals,
                    turn,
                    &offered,
                    &tool_calls,
                    known,
                    &mut unknown,
                    &mut sink,
                )
                .await;
            let known = match screened {
                Screened::Run(known) => known,
                Screened::Deferred { waiting, decided } => {
                    let waiting = waiting
                        .into_iter()
                        .map(|(index, tool)| PendingCall {
                            call: tool_calls[index].clone(),
                            source: offered.sources[tool].clone(),
                            title: offered.tools[tool].title().map(str::to_owned),
                            hints: *offered.tools[tool].hints(),
                        })
                        .collect();
                    let mut messages = request.messages;
                    messages.push(Message::assistant_with_tool_calls(text, tool_calls));
                    return Err(RunError::ApprovalsPending(Box::new(PendingApprovals::new(
                        messages,
                        waiting,
                        (turn, usage),
                        decided,
                        (approvals.approved_tools(), settings),
                    ))));
                }
            };
            approvals.forget_given();
            // The calls that run; the others' messages are their
            // corrections or denials.
            if let Some(budget) = &self.budget {
                budget.reserve_tool_calls(known.len() as u64)?;
            }
            let plan: Vec<usize> = known.iter().map(|&(_, tool)| tool).collect();
            let known_calls: Cow<'_, [ToolCall]> = match known.len() == tool_calls.len() {
                true => Cow::Borrowed(&tool_calls),
                false => known
                    .iter()
                    .map(|&(index, _)| tool_calls[index].clone())
                    .collect(),
            };
            let turn_calls = TurnCalls {
                offered: &offered,
                calls: &known_calls,
                plan: &plan,
            };
            let mut observer = CallObserver::new(turn, &self.telemetry, &mut sink);
            let results = self
                .calls
                .run_calls(&turn_calls, &deps, &mut tool_rejections, &mut observer)
                .await?;
            let mut contents: Vec<(String, String, Vec<Image>)> = unknown
                .into_iter()
                .map(|(name, text)| (name, text, Vec::new()))
                .collect();
            let reader = outputs.name_among(&offered);
            for (&(index, tool), reply) in known.iter().zip(results) {
                let name = offered.tools[tool].name();
                let source = &offered.sources[tool];
                let text = outputs.cap(&tool_calls[index].id, source, reply.text, reader);
                contents[index] = (name.to_owned(), text, reply.images);
            }
            let tool_messages: Vec<Message> = tool_calls
                .iter()
                .zip(contents)
                .map(|(call, (name, text, images))| {
                    Message::tool_result_with_images(&call.id, name, text, images)
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

impl<Deps, Output> RunLoop<Deps, Output> {
    /// Asks the model once (streaming when there is a sink), counting the
    /// request in `usage` and the budget: its final answer decoded (a
    /// rejected one gets a correction prompt, within the output budget), or
    /// its tool calls, unless this is the last allowed turn.
    async fn ask_model(
        &self,
        turn: u32,
        request: &mut Request,
        usage: &mut Usage,
        output_rejections: &mut u32,
        sink: &mut Option<RunSink<'_>>,
    ) -> Result<Answer<Output>, RunError> {
        // A request counts once sent, answered or not.
        if let Some(budget) = &self.budget {
            budget.reserve_request()?;
        }
        let span = telemetry::model_span(
            turn,
            &*self.model,
            request,
            sink.is_some(),
            self.telemetry.capture_content,
        );
        emit(sink, || RunEvent::ModelRequest { turn });
        let started = Instant::now();
        let response = match sink.as_deref_mut() {
            None => self.model.request(request).instrument(span.clone()).await,
            Some(sink) => {
                let mut forward = |event| sink(RunEvent::Model { turn, event });
                self.model
                    .request_stream(request, &mut forward)
                    .instrument(span.clone())
                    .await
            }
        };
        telemetry::model_finished(
            &span,
            &*self.model,
            &response,
            started.elapsed(),
            self.telemetry.capture_content,
        );
        let response = response.map_err(|source| RunError::Model { turn, source })?;
        let response = match &request.output {
            None => match &self.output {
                Some(output) => output.answer_from_tool(response),
                None => response,
            },
            Some(_) => response,
        };
        // Tokens as the model reports them; requests as counted here, so
        // the figure is right whatever the model fills in.
        let turn_usage = Usage {
            requests: 1,
            ..response.usage
        };
        *usage += turn_usage;
        if let Some(budget) = &self.budget {
            // Its tokens; the request itself was counted when sent.
            budget.record(Usage {
                requests: 0,
                ..response.usage
            });
        }
        emit(sink, || RunEvent::ModelResponse {
            turn,
            usage: turn_usage,
            finish_reason: response.finish_reason.clone(),
        });

        if response.tool_calls.is_empty() {
            let decoded = (self.decoder)(&response);
            request.messages.push(Message::assistant(response.text));
            match decoded {
                Ok(output) => return Ok(Answer::Final(output)),
                Err(DecodeError::Retry(retry)) => {
                    *output_rejections += 1;
                    if *output_rejections > self.output_retries {
                        return Err(RunError::OutputRetriesExhausted {
                            attempts: *output_rejections,
                            budget: self.output_retries,
                            source: retry,
                        });
                    }
                    request
                        .messages
                        .push(Message::user(output_rejection(&retry)));
                    return Ok(Answer::Retry);
                }
                Err(DecodeError::Fatal(source)) => return Err(RunError::Output { source }),
            }
        }

        if turn == self.max_turns {
            return Err(RunError::TurnLimit {
                max_turns: self.max_turns,
            });
        }
        Ok(Answer::Calls(response.text, response.tool_calls))
    }

    /// Has the approver decide `known`'s calls (call index, tool index),
    /// those of the agent's own tools (tool search, tool output: they only
    /// read what the run has) excepted; a denied call's slot in `unknown`
    /// gets its tool message and the host hears of it. Returns the calls
    /// that run, or, when any was deferred, those that wait and what was
    /// decided for the others (then nothing is reported as denied: the
    /// resumed run does it).
    #[allow(clippy::too_many_arguments)]
    async fn approve(
        &self,
        approvals: &mut RunApprovals,
        turn: u32,
        offered: &Offered<Deps>,
        calls: &[ToolCall],
        known: Vec<(usize, usize)>,
        unknown: &mut [(String, String)],
        sink: &mut Option<RunSink<'_>>,
    ) -> Screened {
        let own = |tool: usize| is_own(&offered.sources[tool]);
        let asked: Vec<(usize, usize)> = known
            .iter()
            .copied()
            .filter(|&(_, tool)| !own(tool))
            .collect();
        let requests: Vec<ApprovalRequest<'_>> = asked
            .iter()
            .map(|&(index, tool)| ApprovalRequest {
                turn,
                call: &calls[index],
                source: &offered.sources[tool],
                title: offered.tools[tool].title(),
                hints: offered.tools[tool].hints(),
            })
            .collect();
        let verdicts = approvals.screen(&requests).await;
        if verdicts.contains(&Verdict::Deferred) {
            let mut waiting = Vec::new();
            let mut decided = Vec::new();
            for (&(index, tool), verdict) in asked.iter().zip(verdicts) {
                let id = calls[index].id.clone();
                match verdict {
                    Verdict::Deferred => {
                        emit(sink, || RunEvent::ToolDeferred {
                            turn,
                            call: calls[index].clone(),
                            source: offered.sources[tool].clone(),
                        });
                        waiting.push((index, tool));
                    }
                    Verdict::Run => decided.push((id, Decision::Approve)),
                    Verdict::Denied(reason) => decided.push((id, Decision::Deny(reason))),
                }
            }
            return Screened::Deferred { waiting, decided };
        }
        let mut denied: HashMap<usize, String> = asked
            .iter()
            .zip(verdicts)
            .filter_map(|(&(index, _), verdict)| match verdict {
                Verdict::Denied(reason) => Some((index, reason)),
                _ => None,
            })
            .collect();
        let mut approved = Vec::with_capacity(known.len());
        for (index, tool) in known {
            let Some(reason) = denied.remove(&index) else {
                approved.push((index, tool));
                continue;
            };
            let (call, name) = (&calls[index], offered.tools[tool].name());
            let text = approval::denial(name, &reason);
            emit(sink, || RunEvent::ToolDenied {
                turn,
                call: call.clone(),
                source: offered.sources[tool].clone(),
                reason,
            });
            unknown[index] = (name.to_owned(), text);
        }
        Screened::Run(approved)
    }

    /// The calls of a turn that name no offered tool (`resolved` is
    /// `None`): each is reported and gets a correction naming the tools
    /// there are, counted in `unknown_calls` against the agent's
    /// `tool_retries`; past it the run fails before any call of the turn
    /// runs. Returns one (tool name, message content) slot per call, the
    /// corrections filled in (the others for the calls' results). A
    /// correction suggests any of `names`, and lists them, or only those
    /// `listed` when tool search offers the model those alone.
    #[allow(clippy::too_many_arguments)]
    fn correct_unknown(
        &self,
        turn: u32,
        names: &[&str],
        listed: Option<(&[&str], &str)>,
        calls: &[ToolCall],
        resolved: &[Option<usize>],
        unknown_calls: &mut u32,
        sink: &mut Option<RunSink<'_>>,
    ) -> Result<Vec<(String, String)>, RunError> {
        let unknown: Vec<&ToolCall> = calls
            .iter()
            .zip(resolved)
            .filter(|(_, tool)| tool.is_none())
            .map(|(call, _)| call)
            .collect();
        let mut slots = vec![(String::new(), String::new()); calls.len()];
        let Some(first) = unknown.first() else {
            return Ok(slots);
        };
        let attempts = unknown_calls.saturating_add(unknown.len() as u32);
        *unknown_calls = attempts;
        let budget = self.calls.tool_retries;
        if attempts > budget {
            return Err(RunError::UnknownTool {
                tool: first.name.clone(),
                call_id: first.id.clone(),
                available: names.iter().map(|&name| name.to_owned()).collect(),
                attempts,
                budget,
            });
        }
        for (slot, (call, tool)) in slots.iter_mut().zip(calls.iter().zip(resolved)) {
            if tool.is_some() {
                continue;
            }
            let likely = unknown::likely_names(&call.name, names);
            telemetry::unknown_tool(turn, call);
            emit(sink, || RunEvent::UnknownTool {
                turn,
                call: call.clone(),
                likely: likely.iter().map(|&name| name.to_owned()).collect(),
            });
            let text = match listed {
                None => unknown::correction(&call.name, &likely, names),
                Some((listed, search)) => {
                    unknown::correction_when_searching(&call.name, &likely, listed, search)
                }
            };
            *slot = (call.name.clone(), text);
        }
        Ok(slots)
    }
}

/// What one model request came to.
enum Answer<Output> {
    /// The final answer, decoded.
    Final(Output),
    /// The final answer was rejected: the model is asked again.
    Retry,
    /// The assistant's text and tool calls.
    Calls(String, Vec<ToolCall>),
}

/// A turn's calls once the approver has decided them: (call index, tool
/// index) pairs.
enum Screened {
    /// These run.
    Run(Vec<(usize, usize)>),
    /// Some wait for a decision made elsewhere: the run ends.
    Deferred {
        /// The calls that wait.
        waiting: Vec<(usize, usize)>,
        /// The decisions made for the others asked about, by call id.
        decided: Vec<(String, Decision)>,
    },
}

/// Whether `source` is the agent's own (tool search, the output reader).
fn is_own(source: &str) -> bool {
    [OUTPUT_SOURCE, SEARCH_SOURCE].contains(&source)
}

/// The settings of the next request: a tool choice that forces a call
/// (`Required`, `Tool`) holds until the model has called a tool, then the
/// model decides, so that it can answer.
fn settings_now(settings: &ModelSettings, called_a_tool: bool) -> ModelSettings {
    let forced = matches!(
        settings.tool_choice,
        Some(ToolChoice::Required | ToolChoice::Tool(_))
    );
    let mut now = settings.clone();
    if forced && called_a_tool {
        now.tool_choice = None;
    }
    now
}

/// The user message after a final answer the decoder rejected.
fn output_rejection(retry: &ModelRetry) -> String {
    format!(
        "{CORRECTION}{}\nAnswer again, correcting it.",
        retry.reason()
    )
}
