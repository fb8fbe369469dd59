//! The agent and its run loop. [`Agent`] (this file) is the public handle:
//! built from an [`AgentConfig`] (`config.rs`), checked once, it starts runs
//! (`run`, `run_stream` and their `_with_history` forms) and hands each to
//! the turn loop (`turn.rs`), which gathers the tools before every model
//! request (`gather.rs`), corrects calls of tools there are not
//! (`unknown.rs`), asks the approver about them (`approval.rs`) and has
//! each turn's calls run (`calls.rs`), each
//! call reported once by the observer (`observe.rs`) to its span and to the
//! run's [`RunEvent`]s (`events.rs`). This file holds no loop logic: it
//! knows the configuration and the public API, not how a turn runs.

use std::fmt;
use std::sync::Arc;

use golem_model::{Message, Model, ModelSettings, Response};
use golem_tool::Tool;

use crate::decode::DecodeError;
use crate::error::{ConfigError, RunError};

mod approval;
mod budget;
mod calls;
mod config;
mod deferred;
mod events;
mod gather;
mod observe;
mod output;
mod search;
mod turn;
mod unknown;

pub use approval::{ApprovalRequest, Approver, Decision};
pub use budget::{Budget, Limit, Reached, Spent, UsageLimits};
use calls::CallRules;
use config::toolset_names;
pub use config::{AgentConfig, DEFAULT_MAX_TURNS, DEFAULT_SEARCH_ABOVE, ToolFailures, ToolSearch};
pub use deferred::{PendingApprovals, PendingCall};
pub use events::{RunEvent, RunSink, ToolOutcome};
use gather::Sources;
pub use output::{
    DEFAULT_MAX_TOOL_OUTPUT, Kept, MemoryOutputStore, OutputStore, READ_OUTPUT_TOOL,
    READ_OUTPUT_TOOL_FALLBACK,
};
use search::RunSearch;
pub use search::{OfferedTools, SEARCH_TOOL, SEARCH_TOOL_FALLBACK};
pub use turn::RunOutput;
use turn::{RunLoop, Start};

/// The settings of a run that sets none: the agent's apply.
static NO_SETTINGS: ModelSettings = ModelSettings::new();

/// An agent: a [`Model`], the [`Tool`]s it may call, and a decoder that
/// turns its final response into an `Output`.
///
/// [`run`](Agent::run) asks the model, runs the tools it calls, sends their
/// results back, and repeats until the model answers without calling a
/// tool; that answer is decoded. Within one model turn:
///
/// - with an [`Approver`](AgentConfig::approver), the calls it says need a
///   decision wait for it, one at a time in call order, before any call of
///   the turn runs; a denied call does not run, and its tool message says
///   why; a deferred one ends the run with [`RunError::ApprovalsPending`],
///   no call of the turn run, to be [resumed](Agent::resume) with the
///   decisions (ADR 0032);
/// - the turn's calls run **concurrently** on the run's own task, except
///   that a call of a [sequential](Tool::sequential) tool is a barrier: the
///   calls before it finish first, it runs alone, and the calls after it
///   start once it is done;
/// - one tool message per call goes back to the model, with the call's id
///   and the tool's name, **in the order of the calls** (not of their
///   completion);
/// - a tool's [`ModelRetry`](golem_model::ModelRetry) goes back as that
///   call's message, asking for corrected arguments, while the tool's
///   correction budget lasts (its own [`Tool::max_retries`], else
///   [`AgentConfig::tool_retries`], counted per tool over the run); the
///   turn's other calls still run. Past the budget the run fails with
///   [`RunError::ToolRetriesExhausted`];
/// - any other tool error fails the run ([`RunError::Tool`], the cause
///   intact), as does a call that outlives its timeout
///   ([`RunError::ToolTimeout`]: its future is dropped, which cancels it);
///   the turn's calls still running are dropped too. With
///   [`ToolFailures::TellModel`] such a failure is instead that call's
///   tool message, one line saying what failed, and the turn's other
///   calls run on;
/// - a call of a tool the agent does not have does not run: its tool message
///   tells the model the tools there are, and the name it most likely meant
///   (a prefix dropped or added), and the turn's other calls still run
///   ([`RunEvent::UnknownTool`] reports it). Such calls count against
///   [`AgentConfig::tool_retries`], all names together over the run; past
///   it the run fails before any call of that turn starts
///   ([`RunError::UnknownTool`]). See ADR 0020.
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
/// use golem_agent::model::ToolCall;
/// use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
/// use golem_agent::tool::{Tool, ToolContext};
/// use golem_agent::{Agent, AgentConfig};
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
///     golem_agent::decode::text,
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
    /// What every run runs with.
    run_loop: RunLoop<Deps, Output>,
}

impl<Deps, Output> fmt::Debug for Agent<Deps, Output> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let run = &self.run_loop;
        f.debug_struct("Agent")
            .field("model", &run.model.name())
            .field("tools", &run.tools.fixed())
            .field("toolsets", &toolset_names(run.tools.toolsets()))
            .field("tool_search", &run.tool_search)
            .field("max_tool_output", &run.max_tool_output)
            .field("instructions", &run.instructions)
            .field("tool_retries", &run.calls.tool_retries)
            .field("tool_timeout", &run.calls.tool_timeout)
            .field("tool_max_time", &run.calls.tool_max_time)
            .field("max_turns", &run.max_turns)
            .field("output_retries", &run.output_retries)
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
        let run_loop = RunLoop {
            model,
            decoder: Arc::new(decoder),
            tools,
            tool_search: config.tool_search,
            max_tool_output: config.max_tool_output,
            output_store: config.output_store,
            instructions: config.instructions,
            calls: CallRules {
                tool_retries: config.tool_retries,
                tool_timeout: config.tool_timeout,
                tool_max_time: config.tool_max_time,
                tool_failures: config.tool_failures,
            },
            approver: config.approver.clone(),
            budget: config.budget.clone(),
            settings: config.settings.clone(),
            output: config.output.clone(),
            max_turns: config.max_turns,
            output_retries: config.output_retries,
            telemetry: config.telemetry,
        };
        Ok(Self { run_loop })
    }

    /// An agent whose final answer is an `Output`: the type's JSON Schema
    /// goes to the model with every request
    /// ([`AgentConfig::output`], set here; to a model that cannot ask for it
    /// itself, [`Model::takes_output_schema`], as a `final_result` tool whose
    /// call is the answer), and its answer is parsed into
    /// the type ([`decode::typed`](crate::decode::typed)); an answer that
    /// does not fit goes back to it with the error, within
    /// [`AgentConfig::output_retries`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use golem_agent::testmodel::{ScriptedModel, text_response};
    /// use golem_agent::{Agent, AgentConfig};
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Capital { country: String, city: String }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::new([
    ///     text_response("Paris"), // not the shape: sent back with the error
    ///     text_response(r#"{"country": "France", "city": "Paris"}"#),
    /// ]);
    /// let agent = Agent::<(), Capital>::typed(Arc::new(model.clone()), AgentConfig {
    ///     output_retries: 2,
    ///     ..AgentConfig::default()
    /// })?;
    /// let run = agent.run((), "The capital of France?").await?;
    /// assert_eq!(run.output.city, "Paris");
    /// // The scripted model has no structured output of its own: the shape
    /// // is offered to it as the `final_result` tool.
    /// assert_eq!(model.requests()[0].tools[0].name, "final_result");
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// As for [`new`](Self::new).
    #[cfg(feature = "typed")]
    pub fn typed(model: Arc<dyn Model>, mut config: AgentConfig<Deps>) -> Result<Self, ConfigError>
    where
        Output: serde::de::DeserializeOwned + schemars::JsonSchema + 'static,
    {
        let (schema, decoder) = crate::decode::typed::<Output>();
        config.output = Some(schema);
        Self::new(model, decoder, config)
    }

    /// The agent's fixed tools, in the order they are offered to the model
    /// (its toolsets' tools are asked for before each model request).
    pub fn tools(&self) -> &[Tool<Deps>] {
        self.run_loop.tools.fixed()
    }
}

impl<Deps: Send + Sync + 'static, Output> Agent<Deps, Output> {
    /// What a run continuing `history` would offer the model now: every
    /// tool, or (with [tool search](AgentConfig::tool_search) in effect)
    /// the tools loaded (always loaded, called or found in `history`) and
    /// those only a search finds. For a host's tool listing; pass `&[]`
    /// for a new conversation.
    ///
    /// # Errors
    ///
    /// [`RunError::DuplicateTool`] when two sources offer the same name.
    pub fn offered_tools(&self, history: &[Message]) -> Result<OfferedTools, RunError> {
        let offered = self.run_loop.tools.offered()?;
        let search = RunSearch::<Deps>::new(self.run_loop.tool_search, history);
        Ok(search.split(&offered))
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
        self.run_loop
            .run(
                deps.into(),
                Start::New(vec![Message::user(prompt)]),
                &NO_SETTINGS,
                None,
            )
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
        self.run_loop
            .run(deps.into(), Start::New(history), &NO_SETTINGS, None)
            .await
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
    /// use golem_agent::model::{StreamEvent, ToolCall};
    /// use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
    /// use golem_agent::tool::Tool;
    /// use golem_agent::{Agent, AgentConfig, RunEvent};
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
    /// let agent = Agent::new(Arc::new(model), golem_agent::decode::text, AgentConfig {
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
        self.run_loop
            .run(
                deps.into(),
                Start::New(vec![Message::user(prompt)]),
                &NO_SETTINGS,
                Some(sink),
            )
            .await
    }

    /// The general form of the run methods: `history` (empty for a new
    /// conversation), then `message`, with this run's model `settings` over
    /// the agent's ([`AgentConfig::settings`]: each one set here wins), and
    /// streaming to `sink` when there is one. Errors and cancel safety as
    /// for [`run`](Self::run).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use golem_agent::model::{Message, ModelSettings};
    /// use golem_agent::testmodel::{ScriptedModel, text_response};
    /// use golem_agent::{Agent, AgentConfig};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let model = ScriptedModel::new([text_response("Four.")]);
    /// let agent = Agent::new(Arc::new(model.clone()), golem_agent::decode::text, AgentConfig::<()> {
    ///     settings: ModelSettings { temperature: Some(0.7), seed: Some(1), ..ModelSettings::default() },
    ///     ..AgentConfig::default()
    /// })?;
    /// let careful = ModelSettings { temperature: Some(0.0), ..ModelSettings::default() };
    /// agent.run_with_settings((), Vec::new(), Message::user("2 + 2?"), &careful, None).await?;
    /// let sent = &model.requests()[0].settings;
    /// assert_eq!((sent.temperature, sent.seed), (Some(0.0), Some(1)));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn run_with_settings(
        &self,
        deps: impl Into<Arc<Deps>>,
        mut history: Vec<Message>,
        message: Message,
        settings: &ModelSettings,
        sink: Option<RunSink<'_>>,
    ) -> Result<RunOutput<Output>, RunError> {
        history.push(message);
        self.run_loop
            .run(deps.into(), Start::New(history), settings, sink)
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
        self.run_loop
            .run(deps.into(), Start::New(history), &NO_SETTINGS, Some(sink))
            .await
    }

    /// Resumes a run that ended with [`RunError::ApprovalsPending`], with a
    /// decision for each of its [waiting](PendingApprovals::waiting) calls,
    /// by call id ([`Decision::Defer`] again leaves that call pending: the
    /// run ends as before). The pending turn's calls run first, as the
    /// decisions say, without asking the approver again about any call of
    /// that turn (the ones it decided keep its decision; "this tool from
    /// now on" answers still hold); then the run goes on as
    /// [`run`](Self::run)'s does, its turns counted from the pending one,
    /// with the model settings the run had. The decisions hold for the
    /// pending turn's calls only. The output's `messages` and `usage` cover
    /// the whole run.
    ///
    /// The agent should be the one that ran it, or one with the same
    /// tools: a call of a tool it does not have gets a correction.
    ///
    /// # Errors
    ///
    /// [`RunError::Decisions`] when a waiting call has no decision or a
    /// decision names no waiting call, and [`RunError::NotPending`] when
    /// the messages were edited so that they no longer end with the calls:
    /// then nothing runs. Otherwise as for [`run`](Self::run).
    ///
    /// # Cancel safety
    ///
    /// As for [`run`](Self::run); `pending` is only read, so a dropped
    /// resume can be started again from it.
    pub async fn resume(
        &self,
        deps: impl Into<Arc<Deps>>,
        pending: &PendingApprovals,
        decisions: impl IntoIterator<Item = (String, Decision)>,
    ) -> Result<RunOutput<Output>, RunError> {
        let resume = pending.resume(decisions)?;
        let settings = resume.settings.clone();
        self.run_loop
            .run(
                deps.into(),
                Start::Resume(Box::new(resume)),
                &settings,
                None,
            )
            .await
    }

    /// [`resume`](Self::resume), streaming, as [`run_stream`](Self::run_stream)
    /// does.
    pub async fn resume_stream(
        &self,
        deps: impl Into<Arc<Deps>>,
        pending: &PendingApprovals,
        decisions: impl IntoIterator<Item = (String, Decision)>,
        sink: RunSink<'_>,
    ) -> Result<RunOutput<Output>, RunError> {
        let resume = pending.resume(decisions)?;
        let settings = resume.settings.clone();
        self.run_loop
            .run(
                deps.into(),
                Start::Resume(Box::new(resume)),
                &settings,
                Some(sink),
            )
            .await
    }
}
