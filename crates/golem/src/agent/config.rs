//! The agent's configuration: [`AgentConfig`], what an application sets
//! once (the tools and toolsets offered, the instructions, the correction
//! budgets, the tool timeout, what a tool failure does, the turn limit), with its defaults. It is data
//! only: it knows nothing of how a run uses it, and checks nothing (the
//! agent refuses a bad configuration when it is built).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use golem_model::{ModelSettings, OutputSchema};
use golem_tool::{Tool, Toolset};

use super::approval::Approver;
use super::budget::Budget;
use super::output::{DEFAULT_MAX_TOOL_OUTPUT, MemoryOutputStore, OutputStore};
use crate::telemetry::TelemetryConfig;

/// The turn limit of an [`AgentConfig::default`]: model requests per run.
pub const DEFAULT_MAX_TURNS: u32 = 50;

/// [`ToolSearch::default`]'s threshold: more tools than this are searched
/// rather than all offered.
pub const DEFAULT_SEARCH_ABOVE: usize = 30;

/// Whether a model is offered every tool or a search tool in place of most
/// of them (ADR 0028).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSearch {
    /// Search once more than `above` tools are offered; every tool
    /// otherwise. The default, with [`DEFAULT_SEARCH_ABOVE`].
    Auto {
        /// The most tools offered in full.
        above: usize,
    },
    /// Always offer the search tool in place of the tools not always loaded.
    Always,
    /// Always offer every tool.
    Never,
}

impl Default for ToolSearch {
    fn default() -> Self {
        ToolSearch::Auto {
            above: DEFAULT_SEARCH_ABOVE,
        }
    }
}

impl ToolSearch {
    /// Whether `count` tools are searched rather than all offered.
    pub(super) fn defers(self, count: usize) -> bool {
        match self {
            ToolSearch::Auto { above } => count > above,
            ToolSearch::Always => true,
            ToolSearch::Never => false,
        }
    }
}

/// What a run does when a tool call fails in a way the model cannot
/// correct: the tool's own error ([`ToolError::Fatal`](golem_tool::ToolError::Fatal),
/// such as a bridged MCP tool's JSON-RPC error, or its server dying
/// mid-call) or a call outliving its timeout. Arguments a tool rejects
/// ([`ModelRetry`](golem_model::ModelRetry)) always go back to the model,
/// within the tool's correction budget, whatever this says.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolFailures {
    /// The run fails with the typed error
    /// ([`RunError::Tool`](crate::RunError::Tool),
    /// [`RunError::ToolTimeout`](crate::RunError::ToolTimeout)), and the
    /// turn's calls still running are dropped. The default.
    #[default]
    FailRun,
    /// The call's tool message tells the model, in one line, what failed
    /// (the tool's error with its cause, or the timeout in seconds), and
    /// the run goes on within its turn limit; the turn's other calls run
    /// to their own end. The host still hears of the failure
    /// ([`ToolOutcome::Failed`](crate::ToolOutcome::Failed),
    /// [`ToolOutcome::TimedOut`](crate::ToolOutcome::TimedOut)).
    TellModel,
}

/// How an [`Agent`](crate::Agent) is set up. Every field has a default
/// ([`AgentConfig::default`]); set the ones you need:
///
/// ```
/// use std::time::Duration;
/// use golem_agent::AgentConfig;
///
/// let config = AgentConfig::<()> {
///     instructions: Some("Answer in one sentence.".into()),
///     tool_timeout: Some(Duration::from_secs(30)),
///     ..AgentConfig::default()
/// };
/// assert_eq!(config.tool_retries, 1);
/// ```
pub struct AgentConfig<Deps> {
    /// The tools offered to the model, in this order. Names must be unique.
    pub tools: Vec<Tool<Deps>>,
    /// Sources of tools that may change between model requests (an MCP
    /// server's, re-listed when it announces a change): asked before every
    /// model request, their tools offered after [`tools`](Self::tools). A
    /// name offered twice fails the run with [`RunError::DuplicateTool`](crate::RunError::DuplicateTool).
    pub toolsets: Vec<Arc<dyn Toolset<Deps>>>,
    /// Whether the model is offered every tool, or, past a number of tools,
    /// only those [always loaded](Tool::always_loaded) and found so far plus
    /// a search tool, [`SEARCH_TOOL`](crate::SEARCH_TOOL), that finds the
    /// others (ADR 0028). Default: search once more than
    /// [`DEFAULT_SEARCH_ABOVE`](crate::DEFAULT_SEARCH_ABOVE) tools are
    /// offered.
    pub tool_search: ToolSearch,
    /// The most bytes of one tool message the model gets whole; a longer
    /// one gets its head and tail around a line saying how many bytes were
    /// left out and how to read them with
    /// [`READ_OUTPUT_TOOL`](crate::READ_OUTPUT_TOOL), offered from the
    /// first cut on (ADR 0029). Default
    /// [`DEFAULT_MAX_TOOL_OUTPUT`](crate::DEFAULT_MAX_TOOL_OUTPUT) (32
    /// KiB); `None`: no limit.
    pub max_tool_output: Option<usize>,
    /// Where the whole text of a cut tool message is kept for the read
    /// tool. Default: a [`MemoryOutputStore`](crate::MemoryOutputStore).
    pub output_store: Arc<dyn OutputStore>,
    /// The system prompt, sent with every request as
    /// [`Request::instructions`](golem_model::Request::instructions). Default: none.
    pub instructions: Option<String>,
    /// How many times, in one run, each tool may reject its arguments with a
    /// [`ModelRetry`](golem_model::ModelRetry) and have the model try again; a tool's own
    /// [`Tool::max_retries`] replaces it for that tool. Default 1: a tool
    /// that rejects its arguments (a bridged MCP tool answering `isError`,
    /// such as a server's input-validation error) gives the model one
    /// chance to correct them before the run fails; 0 turns correction
    /// off, so the first `ModelRetry` fails the run.
    pub tool_retries: u32,
    /// How long one tool call may go without a sign of life when the tool
    /// sets no [`Tool::timeout`] of its own: an idle timeout, restarted by
    /// each report the call makes through its context's
    /// [`Liveness`](golem_tool::Liveness) (a bridged MCP tool reports each
    /// progress notification of its server), so a long tool that reports
    /// progress runs on. A call that reports nothing gets exactly this
    /// long. Default: no limit.
    pub tool_timeout: Option<Duration>,
    /// The longest one tool call may take, progress or not: the hard bound
    /// over [`tool_timeout`](AgentConfig::tool_timeout). Default: no
    /// limit.
    pub tool_max_time: Option<Duration>,
    /// Whether a tool call's failure fails the run or goes back to the
    /// model. Default [`ToolFailures::FailRun`].
    pub tool_failures: ToolFailures,
    /// What runs may spend, shared by every run of the agent (and whatever
    /// else records into it): checked before each model request and each
    /// turn's calls, a limit reached fails the run with
    /// [`RunError::UsageLimit`](crate::RunError::UsageLimit). Default
    /// `None`: only [`max_turns`](Self::max_turns) bounds a run.
    pub budget: Option<Arc<Budget>>,
    /// Who decides, before a call runs, whether it may (ADR 0032): the
    /// calls it says need approval wait for its decision, and a denied one
    /// is a tool message the model sees. Default `None`: every call runs.
    pub approver: Option<Arc<dyn Approver>>,
    /// How the model should answer (output limit, temperature, seed, tool
    /// choice, ...), for every request of every run; a run's own settings
    /// ([`Agent::run_with_settings`](crate::Agent::run_with_settings)) win
    /// where set. A tool choice of `Required` or `Tool` holds until the
    /// model has called a tool in the run, then the model decides, so that
    /// it can answer. Default: none set.
    pub settings: ModelSettings,
    /// The shape the final answer must have, sent with every request (see
    /// [`Request::output`](golem_model::Request::output)); the decoder then
    /// reads that JSON. [`Agent::typed`](crate::Agent::typed) sets it from
    /// the output type. Default: none (plain text).
    pub output: Option<OutputSchema>,
    /// The most model requests one run makes. Default
    /// [`DEFAULT_MAX_TURNS`]; must be at least 1.
    pub max_turns: u32,
    /// How many times, in one run, the decoder may reject the model's final
    /// answer with [`DecodeError::Retry`](crate::DecodeError::Retry) and have the model answer again.
    /// Default 0.
    pub output_retries: u32,
    /// What the run's OpenTelemetry spans say beyond the conventions'
    /// defaults: the agent's name, opt-in message content, separate MCP
    /// spans (ADR 0035).
    pub telemetry: TelemetryConfig,
}

impl<Deps> Default for AgentConfig<Deps> {
    fn default() -> Self {
        Self {
            tools: Vec::new(),
            toolsets: Vec::new(),
            tool_search: ToolSearch::default(),
            max_tool_output: Some(DEFAULT_MAX_TOOL_OUTPUT),
            output_store: Arc::new(MemoryOutputStore::default()),
            instructions: None,
            tool_retries: 1,
            tool_timeout: None,
            tool_max_time: None,
            tool_failures: ToolFailures::FailRun,
            approver: None,
            budget: None,
            settings: ModelSettings::default(),
            output: None,
            max_turns: DEFAULT_MAX_TURNS,
            output_retries: 0,
            telemetry: TelemetryConfig::default(),
        }
    }
}

// Manual: derives would demand `Deps: Clone` / `Deps: Debug`.
impl<Deps> Clone for AgentConfig<Deps> {
    fn clone(&self) -> Self {
        Self {
            tools: self.tools.clone(),
            toolsets: self.toolsets.clone(),
            tool_search: self.tool_search,
            max_tool_output: self.max_tool_output,
            output_store: Arc::clone(&self.output_store),
            instructions: self.instructions.clone(),
            tool_retries: self.tool_retries,
            tool_timeout: self.tool_timeout,
            tool_max_time: self.tool_max_time,
            tool_failures: self.tool_failures,
            approver: self.approver.clone(),
            budget: self.budget.clone(),
            settings: self.settings.clone(),
            output: self.output.clone(),
            max_turns: self.max_turns,
            output_retries: self.output_retries,
            telemetry: self.telemetry.clone(),
        }
    }
}

impl<Deps> fmt::Debug for AgentConfig<Deps> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentConfig")
            .field("tools", &self.tools)
            .field("toolsets", &toolset_names(&self.toolsets))
            .field("tool_search", &self.tool_search)
            .field("max_tool_output", &self.max_tool_output)
            .field("instructions", &self.instructions)
            .field("tool_retries", &self.tool_retries)
            .field("tool_timeout", &self.tool_timeout)
            .field("tool_max_time", &self.tool_max_time)
            .field("tool_failures", &self.tool_failures)
            .field("approver", &self.approver.as_ref().map(|_| "an approver"))
            .field("budget", &self.budget)
            .field("settings", &self.settings)
            .field("output", &self.output.as_ref().map(|output| &output.name))
            .field("max_turns", &self.max_turns)
            .field("output_retries", &self.output_retries)
            .field("telemetry", &self.telemetry)
            .finish()
    }
}

/// The toolsets' names, for `Debug`.
pub(super) fn toolset_names<Deps>(toolsets: &[Arc<dyn Toolset<Deps>>]) -> Vec<&str> {
    toolsets.iter().map(|set| set.name()).collect()
}
