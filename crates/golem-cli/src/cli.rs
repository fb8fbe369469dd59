//! The command line: what clap parses, and the checks that turn it into a
//! [`Plan`] before any server is started or any request sent.

use std::collections::HashMap;
use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use golem_agent::mcp::config::{self, ServerConfig};
use golem_agent::mcp::{LogLevel, Root};
use golem_agent::model::{ApiKey, Message, Model, ModelSettings, ToolChoice};
use golem_agent::{Budget, Conversation, DEFAULT_MAX_TURNS, UsageLimits};
use golem_anthropic::{Anthropic, AnthropicConfig};
use golem_openai::{OpenAi, OpenAiConfig};

use crate::approve::{ApproveMode, Pattern, Policy, ToolRules, entry_rules};
use crate::exit::Failure;
use crate::requests::Answers;
use crate::schema;
use crate::tool_search::{SearchMode, always_loaded};
use golem_agent::mcp::AlwaysLoaded;

/// The default of `--tool-timeout`, in seconds.
pub const DEFAULT_TOOL_TIMEOUT_SECS: u64 = 60;
/// The default of `--tool-max-time`, in seconds.
pub const DEFAULT_TOOL_MAX_TIME_SECS: u64 = 600;
/// `--start-timeout` when not given: long enough for an `npx -y` download
/// on a first run.
pub const DEFAULT_START_TIMEOUT_SECS: u64 = 60;

const AFTER_HELP: &str = "\
Models: --model openai:MODEL (the Chat Completions API of OpenAI, or of any compatible
server with --base-url: Ollama http://localhost:11434/v1, llama.cpp's llama-server
http://localhost:8080/v1, vLLM, LM Studio, OpenRouter, Groq ...) or anthropic:MODEL (the
Messages API). The key comes from OPENAI_API_KEY or ANTHROPIC_API_KEY, or from the
variable named by --api-key-env; it is required for the vendor's own URL, optional with
--base-url. It is never printed.

Tools: the tools of every server of the --config file (an mcpServers JSON file), or of
the servers named by --server. A server whose tool names clash with another's has its
tools prefixed with its name (fs_read_file). The servers are started once and closed
at the end, also on Ctrl-C.

Approval: tools that say they only read run at once; any other call is asked about at
the terminal (one key: y, n, or a for the rest of the command), or, when stdin is not a
terminal, denied (the model is told). --approve, --allow-tool, --ask-tool, --deny-tool
and an entry's allowTools, askTools and denyTools change which.

A tool's error, and a call of a tool no server offers, go back to the model (which is
told the tools there are), within --max-turns. So does a call that fails (the server's
JSON-RPC error, --tool-timeout or --tool-max-time, the server ending mid-call): the
model is told what failed, the other calls run on, and stderr shows the failed call;
--fail-on-tool-error ends the run instead.

Server requests: a server that asks for input is answered per --on-elicitation (a
form on the terminal, as golem-mcp does); --root offers directories; sampling is
answered by the model only with --allow-sampling, each request and answer on stderr.
Ctrl-C, SIGTERM and SIGHUP cancel the calls in flight and close every session (an
HTTP server's with DELETE) before golem exits; --tool-timeout (reset by each progress
report of the call) and --tool-max-time cancel the one call.

Output: the answer on stdout as it is written (escaped at a terminal, exact in a pipe
or a file); each tool call on stderr as it runs (server, tool, arguments, then ok or
error and its duration), the servers' log messages of --log-level and above, each after
its server's name; the usage totals as the last line of stderr, also when the run
fails or is interrupted. --quiet leaves only the answer and golem's own errors.

Exit status: 0 success; 1 the run ended without an answer (turn limit, a tool failing
on its own with --fail-on-tool-error); 2 usage error (flags, --model, a missing key, the
config file); 3 a server answered with an error (the provider's HTTP error, an MCP
server's JSON-RPC error with --fail-on-tool-error); 4 a server could not be reached or
talked to; 5 a timeout (--start-timeout, the provider's, a tool's with
--fail-on-tool-error); 6 a limit of the whole command (--max-requests, --max-tool-calls,
--max-input-tokens, --max-output-tokens, --max-total-tokens); 130 Ctrl-C, 143 SIGTERM,
129 SIGHUP.";

const RUN_EXAMPLES: &str = "\
Examples:
  golem run --model openai:gpt-4o-mini --config mcp.json 'What is in notes.txt?'
  golem run --model anthropic:claude-sonnet-4-5 --config mcp.json --server fs 'List my files'
  golem run --model openai:llama3.2 --base-url http://localhost:11434/v1 'Say hi'
  echo 'Say hi' | golem run --model openai:gpt-4o-mini -";

const CHAT_HELP: &str = "\
In the conversation: /tools lists the tools, /clear forgets the conversation so far,
/exit (or end of input) ends it. Ctrl-C stops the answer being written; at the prompt
it ends the command. The exit status is that of the last exchange.

Example:
  golem chat --model openai:gpt-4o-mini --config mcp.json";

/// Run an agent on a real model, with the tools of MCP servers.
#[derive(Debug, Parser)]
#[command(name = "golem", version, arg_required_else_help = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Answer one prompt, using the tools, and stream the answer to stdout.
    #[command(after_help = format!("{AFTER_HELP}\n\n{RUN_EXAMPLES}"))]
    Run {
        /// The prompt ("-" reads it from stdin).
        #[arg(value_name = "PROMPT")]
        prompt: String,
        /// An image sent with the prompt: a .png, .jpg, .gif or .webp file,
        /// or an http(s) URL (repeatable).
        #[arg(long = "image", value_name = "FILE|URL", help_heading = "Model")]
        images: Vec<String>,
        /// The model, the servers and the limits.
        #[command(flatten)]
        options: Options,
    },
    /// Hold a conversation on stdin and stdout, with history and the tools.
    #[command(after_help = format!("{AFTER_HELP}\n\n{CHAT_HELP}"))]
    Chat {
        /// The model, the servers and the limits.
        #[command(flatten)]
        options: Options,
    },
}

/// Options of both subcommands.
#[derive(Debug, Args)]
pub struct Options {
    /// The model: openai:MODEL or anthropic:MODEL (e.g. openai:gpt-4o-mini,
    /// anthropic:claude-sonnet-4-5, openai:llama3.2:1b).
    #[arg(long, value_name = "PROVIDER:MODEL", help_heading = "Model")]
    pub model: String,
    /// The API's base URL: with /v1 for openai (http://localhost:11434/v1),
    /// the host for anthropic [default: the vendor's].
    #[arg(long, value_name = "URL", help_heading = "Model")]
    pub base_url: Option<String>,
    /// The environment variable holding the API key [default:
    /// OPENAI_API_KEY or ANTHROPIC_API_KEY].
    #[arg(long, value_name = "VAR", help_heading = "Model")]
    pub api_key_env: Option<String>,
    /// The system prompt.
    #[arg(long, value_name = "TEXT", help_heading = "Model")]
    pub system: Option<String>,
    /// The most tokens the model may write in one answer (OpenAI
    /// max_completion_tokens, Anthropic max_tokens) [default: the API's;
    /// Anthropic 4096]. (--max-output-tokens is the whole command's budget.)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Model")]
    pub max_tokens: Option<u32>,
    /// Sampling temperature (OpenAI takes 0 to 2, Anthropic 0 to 1)
    /// [default: the API's].
    #[arg(long, value_name = "T", value_parser = parse_temperature, help_heading = "Model")]
    pub temperature: Option<f32>,
    /// A sampling seed, for answers that repeat (OpenAI; Anthropic has none
    /// and refuses it).
    #[arg(long, value_name = "N", help_heading = "Model")]
    pub seed: Option<i64>,
    /// Whether the model must call a tool: auto (it decides), none,
    /// required (some tool), or tool:NAME (that tool, by its offered name).
    /// required and tool:NAME hold until the model has called a tool in
    /// the answer, so that it can then answer [default: auto].
    #[arg(long, value_name = "CHOICE", value_parser = parse_tool_choice, help_heading = "Model")]
    pub tool_choice: Option<ToolChoice>,
    /// golem run: the answer is JSON that fits the JSON Schema in FILE,
    /// printed alone and compact on stdout once it fits (nothing on stdout
    /// when it never does).
    #[arg(long, value_name = "FILE", help_heading = "Model")]
    pub output_schema: Option<PathBuf>,
    /// With --output-schema: how many answers that do not fit go back to
    /// the model with the error before the run fails.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2,
        requires = "output_schema",
        help_heading = "Model"
    )]
    pub output_retries: u32,
    /// An mcpServers JSON file (the format desktop MCP hosts use) naming the
    /// MCP servers whose tools the model may call.
    #[arg(long, value_name = "FILE", help_heading = "Tools")]
    pub config: Option<PathBuf>,
    /// Use only this server of the --config file (repeatable) [default:
    /// all of them].
    #[arg(long = "server", value_name = "NAME", help_heading = "Tools")]
    pub servers: Vec<String>,
    /// Fail when an MCP server of the --config file cannot be read or
    /// started [default: report it on stderr and go on without it, as
    /// desktop hosts do; a server named with --server always fails].
    #[arg(long, help_heading = "Tools")]
    pub strict: bool,
    /// Speak exactly this MCP protocol revision (e.g. 2026-07-28 or
    /// 2025-11-25) with every server, instead of finding each server's era
    /// with a server/discover probe (a config entry's "protocol" pins one
    /// server's).
    #[arg(long, value_name = "VERSION", value_parser = parse_protocol, help_heading = "Tools")]
    pub protocol: Option<String>,
    /// Do not start a stdio MCP server again when it exits during the run,
    /// nor renew an HTTP session the server dropped [default: a server that
    /// exits is started again, at most 5 times in a row, and only the call
    /// it was running fails].
    #[arg(long, help_heading = "Tools")]
    pub no_restart: bool,
    /// Whether the model gets a search tool (search_tools) in place of the
    /// tools' definitions: auto does once there are more than 30 tools; a
    /// config entry's "alwaysLoad": true (or a list of its tool names)
    /// keeps its tools offered.
    #[arg(
        long,
        value_name = "WHEN",
        value_enum,
        default_value = "auto",
        help_heading = "Tools"
    )]
    pub tool_search: SearchMode,
    /// Show the model a tool's images as placeholder lines only (for a
    /// model that takes no images) [default: a tool's PNG, JPEG, GIF and
    /// WebP images reach the model].
    #[arg(long, help_heading = "Tools")]
    pub no_tool_images: bool,
    /// Start every MCP server with the command [default: a server whose
    /// tool list an earlier run kept (under $XDG_CACHE_HOME/golem/manifests/,
    /// fresh for the server's ttlMs, else 24 hours) starts on the model's
    /// first call of one of its tools].
    #[arg(long, help_heading = "Tools")]
    pub eager: bool,
    /// Ignore the kept tool lists: start every server and list its tools
    /// afresh (the new lists are kept).
    #[arg(long, help_heading = "Tools")]
    pub refresh: bool,
    /// Which tools run without asking: read-only (those that say they only
    /// read, readOnlyHint), all, or none; the others are asked about at
    /// the terminal, or denied (the model is told) when stdin is not one.
    #[arg(
        long,
        value_name = "WHICH",
        value_enum,
        default_value = "read-only",
        overrides_with = "approve",
        help_heading = "Tools"
    )]
    pub approve: ApproveMode,
    /// Run the tools whose offered name matches PATTERN without asking
    /// ("*" for any characters; repeatable).
    #[arg(long = "allow-tool", value_name = "PATTERN", help_heading = "Tools")]
    pub allow_tools: Vec<String>,
    /// Ask before every call of the tools matching PATTERN (repeatable).
    #[arg(long = "ask-tool", value_name = "PATTERN", help_heading = "Tools")]
    pub ask_tools: Vec<String>,
    /// Do not offer the tools matching PATTERN at all (repeatable).
    #[arg(long = "deny-tool", value_name = "PATTERN", help_heading = "Tools")]
    pub deny_tools: Vec<String>,
    /// End the run when a tool call fails (the server's error, a timeout,
    /// the server ending mid-call), with the exit status of its cause
    /// [default: the model is told what failed and the run goes on].
    #[arg(long, help_heading = "Tools")]
    pub fail_on_tool_error: bool,
    /// How to answer a server that asks the user for input (elicitation):
    /// ask on the terminal, decline, or accept the form's defaults
    /// (declining a form with a required field that has none) [default:
    /// ask when stdin is a terminal, decline otherwise].
    #[arg(
        long,
        value_name = "MODE",
        value_enum,
        help_heading = "Server requests"
    )]
    pub on_elicitation: Option<golem_elicit::Mode>,
    /// A directory the MCP servers may work in, offered as a file:// root
    /// (repeatable); declares the roots capability.
    #[arg(long = "root", value_name = "DIR", help_heading = "Server requests")]
    pub roots: Vec<PathBuf>,
    /// Let the MCP servers ask the model (sampling): each request and the
    /// model's answer are shown on stderr, the server's maxTokens bounds
    /// the answer, and what it cost is counted in the usage totals
    /// [default: sampling is not offered, so a server's request is refused].
    #[arg(long, help_heading = "Server requests")]
    pub allow_sampling: bool,
    /// With --allow-sampling: the most sampling requests answered per
    /// server in this run; later ones are declined with an error naming
    /// the limit.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3,
        value_parser = clap::value_parser!(u32).range(1..),
        requires = "allow_sampling",
        help_heading = "Server requests"
    )]
    pub max_samplings: u32,
    /// Save the conversation to FILE after each answer (versioned JSON,
    /// written atomically, mode 0600), to go on with --resume FILE.
    #[arg(long, value_name = "FILE", help_heading = "Conversation")]
    pub save: Option<PathBuf>,
    /// Go on with the conversation saved in FILE (by --save), whichever
    /// model saved it.
    #[arg(long, value_name = "FILE", help_heading = "Conversation")]
    pub resume: Option<PathBuf>,
    /// Keep the conversation under N tokens: the oldest exchanges are left
    /// out, whole (a tool call with its result), estimated from the
    /// provider's reported usage; a note on stderr says when.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Conversation")]
    pub context_tokens: Option<u64>,
    /// The most model requests for one answer [default: 50].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), help_heading = "Limits")]
    pub max_turns: Option<u32>,
    /// The most model requests of the whole command (every answer of a
    /// chat, and the servers' sampling requests) [default: no limit].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Limits")]
    pub max_requests: Option<u64>,
    /// The most tool calls of the whole command [default: no limit].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Limits")]
    pub max_tool_calls: Option<u64>,
    /// The most input tokens of the whole command [default: no limit].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Limits")]
    pub max_input_tokens: Option<u64>,
    /// The most output tokens of the whole command [default: no limit].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Limits")]
    pub max_output_tokens: Option<u64>,
    /// The most input and output tokens of the whole command [default: no
    /// limit].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Limits")]
    pub max_total_tokens: Option<u64>,
    /// The longest one tool call may go without a sign of life, in
    /// seconds: each progress report of its server starts the wait again
    /// [default: 60].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, help_heading = "Limits")]
    pub tool_timeout: Option<Duration>,
    /// The longest one tool call may take, progress or not, in seconds
    /// [default: 600].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, help_heading = "Limits")]
    pub tool_max_time: Option<Duration>,
    /// The most bytes of one tool result the model gets whole; a longer one
    /// gets its head and tail around a note, the whole kept under
    /// $XDG_CACHE_HOME/golem/outputs/ for the model to read with
    /// read_tool_output; 0 for no limit [default: 32768].
    #[arg(long, value_name = "BYTES", help_heading = "Limits")]
    pub max_tool_output: Option<usize>,
    /// The longest each MCP server may take to answer initialize, and then
    /// to list its tools, in seconds [default: 60].
    #[arg(long, value_name = "SECS", value_parser = parse_seconds, help_heading = "Limits")]
    pub start_timeout: Option<Duration>,
    /// Write only the answer on stdout and the command's own errors on
    /// stderr: no tool calls, server logs, notes or usage totals (what a
    /// server asks the user is still shown).
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,
    /// Show the servers' log messages of LEVEL and above: debug, info,
    /// notice, warning, error, critical, alert or emergency.
    #[arg(long, value_name = "LEVEL", default_value = "warning", value_parser = parse_log_level, help_heading = "Output")]
    pub log_level: LogLevel,
}

/// `--log-level`: a level's name, in any case.
fn parse_log_level(text: &str) -> Result<LogLevel, String> {
    text.parse()
        .map_err(|error: golem_agent::mcp::UnknownLogLevel| error.to_string())
}

fn parse_seconds(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds, e.g. 30"))?;
    if seconds.is_nan() || seconds <= 0.0 {
        return Err(format!("{text:?}: it must be more than 0 seconds"));
    }
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("{text:?} seconds is too long"))
}

/// What to do with the agent.
#[derive(Debug)]
pub enum Mode {
    /// Answer this prompt (a user message, with its images).
    Run(Message),
    /// Converse on stdin.
    Chat,
}

/// A checked command line: everything needed to run, nothing started yet.
pub struct Plan {
    /// Run or chat.
    pub mode: Mode,
    /// The model, built (no request sent).
    pub model: Arc<dyn Model>,
    /// The MCP servers, by name, in the order given (or the file's).
    pub servers: Vec<(String, ServerConfig)>,
    /// Entries of the file that could not be read, reported and left out
    /// (none with `--strict` or `--server`, which fail instead).
    pub skipped: Vec<Failure>,
    /// Whether a server that fails to start fails the command
    /// (`--strict`, or named with `--server`) instead of being left out.
    pub strict: bool,
    /// `--system`.
    pub system: Option<String>,
    /// `--max-tokens`, `--temperature`, `--seed`, `--tool-choice`.
    pub settings: ModelSettings,
    /// `--output-schema`: the answer's shape and the decoder that checks it.
    pub output: Option<schema::Shape>,
    /// `--output-retries`.
    pub output_retries: u32,
    /// `--max-turns`.
    pub max_turns: u32,
    /// `--tool-timeout`.
    pub tool_timeout: Duration,
    /// `--tool-max-time`.
    pub tool_max_time: Duration,
    /// `--start-timeout`.
    pub start_timeout: Duration,
    /// The MCP revision each server pinned speaks, by name: `--protocol`
    /// for all, else an entry's `"protocol"`; the others are probed.
    pub protocols: HashMap<String, String>,
    /// `--tool-search`.
    pub tool_search: SearchMode,
    /// `--max-tool-output`: `None` for no limit.
    pub max_tool_output: Option<usize>,
    /// Whether a tool's images reach the model (not `--no-tool-images`).
    pub tool_images: bool,
    /// Whether kept tool lists spare starting their servers (neither
    /// `--eager` nor `--refresh`).
    pub read_manifests: bool,
    /// Each server's `"alwaysLoad"`, by name.
    pub always_loaded: HashMap<String, AlwaysLoaded>,
    /// Whether a lost server is started again (not `--no-restart`).
    pub restart: bool,
    /// `--fail-on-tool-error`: a failed call ends the run.
    pub fail_on_tool_error: bool,
    /// Which calls run without asking, which are asked about, which tools
    /// are not offered.
    pub policy: Policy,
    /// `--quiet`: the answer and the command's errors only.
    pub quiet: bool,
    /// `--log-level`: the least severe server log message shown.
    pub log_level: LogLevel,
    /// How the servers' requests are answered (`--on-elicitation`,
    /// `--root`, `--allow-sampling`), and the command's budget
    /// (`--max-requests` and the other limits), which sampling spends too.
    pub answers: Answers,
    /// `--save`.
    pub save: Option<PathBuf>,
    /// `--resume`: the conversation read.
    pub resumed: Option<Conversation>,
    /// `--context-tokens`.
    pub context_tokens: Option<u64>,
}

impl Plan {
    /// Checks the command line, the model, the key and the config file,
    /// and reads the prompt (from stdin for `-`): every usage error is
    /// found here, before any server is started.
    pub fn from_cli(
        cli: Cli,
        env: impl Fn(&str) -> Option<String>,
        stdin: impl Read,
    ) -> Result<Plan, Failure> {
        let (mode, options, prompt_from_stdin) = match cli.command {
            Command::Run {
                prompt,
                images,
                options,
            } => {
                let images = images
                    .iter()
                    .map(|image| crate::image::load(image))
                    .collect::<Result<Vec<_>, _>>()?;
                let from_stdin = prompt == "-";
                let prompt = read_prompt(&prompt, stdin)?;
                (
                    Mode::Run(Message::user_with_images(prompt, images)),
                    options,
                    from_stdin,
                )
            }
            Command::Chat { options } => (Mode::Chat, options, false),
        };
        let chat = matches!(mode, Mode::Chat);
        if chat && options.output_schema.is_some() {
            return Err(Failure::usage(
                "--output-schema is for golem run: a chat's answers are text",
            ));
        }
        let output = options
            .output_schema
            .as_deref()
            .map(schema::load)
            .transpose()?;
        let resumed = match &options.resume {
            None => None,
            Some(path) => Some(Conversation::load(path).map_err(|error| {
                Failure::usage(format!("--resume: {}", crate::exit::describe(&error)))
            })?),
        };
        let elicitation = elicitation_mode(
            options.on_elicitation,
            std::io::stdin().is_terminal(),
            prompt_from_stdin,
            chat,
        )?;
        let roots = roots(&options.roots)?;
        let model = build_model(&options, &env)?;
        let limits = UsageLimits {
            requests: options.max_requests,
            tool_calls: options.max_tool_calls,
            input_tokens: options.max_input_tokens,
            output_tokens: options.max_output_tokens,
            total_tokens: options.max_total_tokens,
        };
        let answers = Answers {
            elicitation,
            roots,
            sampling: options.allow_sampling.then(|| Arc::clone(&model)),
            max_samplings: options.max_samplings,
            budget: Arc::new(Budget::new(limits)),
            max_tokens: options.max_tokens,
        };
        // Named servers are the user's choice: they fail, never skipped.
        let strict = options.strict || !options.servers.is_empty();
        let (mut servers, skipped, entries) =
            select_servers(options.config.as_deref(), &options.servers, strict)?;
        // The command line beats the file.
        let protocols = entries
            .iter()
            .filter_map(|(name, entry)| {
                let version = options.protocol.as_deref().or(entry.protocol)?;
                Some((name.clone(), version.to_owned()))
            })
            .collect();
        let mut tool_rules = HashMap::new();
        let always_loaded = entries
            .into_iter()
            .map(|(name, entry)| {
                tool_rules.insert(name.clone(), entry.tool_rules);
                (name, entry.always_loaded)
            })
            .collect();
        withhold_model_keys(&mut servers, options.api_key_env.as_deref());
        Ok(Plan {
            mode,
            model,
            servers,
            skipped,
            strict,
            system: options.system.filter(|text| !text.trim().is_empty()),
            settings: ModelSettings {
                max_output_tokens: options.max_tokens,
                temperature: options.temperature,
                seed: options.seed,
                tool_choice: options.tool_choice,
                ..ModelSettings::default()
            },
            output,
            output_retries: options.output_retries,
            max_turns: options.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
            tool_timeout: options
                .tool_timeout
                .unwrap_or(Duration::from_secs(DEFAULT_TOOL_TIMEOUT_SECS)),
            tool_max_time: options
                .tool_max_time
                .unwrap_or(Duration::from_secs(DEFAULT_TOOL_MAX_TIME_SECS)),
            start_timeout: options
                .start_timeout
                .unwrap_or(Duration::from_secs(DEFAULT_START_TIMEOUT_SECS)),
            protocols,
            tool_search: options.tool_search,
            read_manifests: !options.eager && !options.refresh,
            tool_images: !options.no_tool_images,
            max_tool_output: match options.max_tool_output {
                Some(0) => None,
                Some(bytes) => Some(bytes),
                None => Some(golem_agent::DEFAULT_MAX_TOOL_OUTPUT),
            },
            always_loaded,
            restart: !options.no_restart,
            fail_on_tool_error: options.fail_on_tool_error,
            policy: Policy {
                mode: options.approve,
                flags: ToolRules {
                    allow: patterns(&options.allow_tools),
                    ask: patterns(&options.ask_tools),
                    deny: patterns(&options.deny_tools),
                },
                entries: tool_rules,
            },
            quiet: options.quiet,
            log_level: options.log_level,
            answers,
            save: options.save,
            resumed,
            context_tokens: options.context_tokens,
        })
    }
}

/// `--temperature`: a number from 0 to 2 (what a provider takes within
/// that is the provider's to check).
fn parse_temperature(text: &str) -> Result<f32, String> {
    match text.parse::<f32>() {
        Ok(value) if (0.0..=2.0).contains(&value) => Ok(value),
        Ok(_) => Err("a temperature is from 0 to 2".into()),
        Err(_) => Err(format!("{text:?} is not a number")),
    }
}

/// `--tool-choice auto|none|required|tool:NAME`.
fn parse_tool_choice(text: &str) -> Result<ToolChoice, String> {
    match text {
        "auto" => Ok(ToolChoice::Auto),
        "none" => Ok(ToolChoice::None),
        "required" => Ok(ToolChoice::Required),
        _ => match text.strip_prefix("tool:") {
            Some(name) if !name.is_empty() => Ok(ToolChoice::Tool(name.to_owned())),
            _ => Err("expected auto, none, required or tool:NAME".into()),
        },
    }
}

/// `--on-elicitation`, or its default: `ask` needs stdin for the answers,
/// so it is the default only at a terminal, and refused where stdin is the
/// prompt (`golem run -`) or, not a terminal, chat's lines.
fn elicitation_mode(
    given: Option<golem_elicit::Mode>,
    stdin_is_terminal: bool,
    prompt_from_stdin: bool,
    chat: bool,
) -> Result<golem_elicit::Mode, Failure> {
    use golem_elicit::Mode;
    match given {
        Some(Mode::Ask) if prompt_from_stdin => Err(Failure::usage(
            "--on-elicitation ask reads the answers from stdin, which PROMPT \"-\" already \
             reads; give the prompt as an argument, or choose --on-elicitation decline or \
             defaults",
        )),
        Some(Mode::Ask) if chat && !stdin_is_terminal => Err(Failure::usage(
            "--on-elicitation ask reads the answers from stdin, where golem chat reads its \
             lines when stdin is not a terminal; choose --on-elicitation decline or defaults",
        )),
        Some(mode) => Ok(mode),
        None if stdin_is_terminal && !prompt_from_stdin => Ok(Mode::Ask),
        None => Ok(Mode::Decline),
    }
}

/// `--root DIR` entries as `file://` roots; relative paths are taken from
/// the directory golem runs in. `None` when there are none.
fn roots(dirs: &[PathBuf]) -> Result<Option<Vec<Root>>, Failure> {
    if dirs.is_empty() {
        return Ok(None);
    }
    dirs.iter()
        .map(|dir| {
            let absolute = std::path::absolute(dir)
                .map_err(|error| Failure::usage(format!("--root {}: {error}", dir.display())))?;
            Root::directory(&absolute)
                .map_err(|problem| Failure::usage(format!("--root {}: {problem}", dir.display())))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// `--protocol`: a revision the MCP client speaks.
fn parse_protocol(text: &str) -> Result<String, String> {
    let text = text.trim();
    let known: Vec<&str> = golem_agent::mcp::MODERN_PROTOCOL_VERSIONS
        .iter()
        .chain(golem_agent::mcp::SUPPORTED_PROTOCOL_VERSIONS)
        .copied()
        .collect();
    match known.contains(&text) {
        true => Ok(text.to_owned()),
        false => Err(format!(
            "{text:?} is not an MCP protocol revision golem speaks: {}",
            known.join(", ")
        )),
    }
}

/// `PROMPT`, or stdin for `-`.
fn read_prompt(prompt: &str, mut stdin: impl Read) -> Result<String, Failure> {
    let text = if prompt == "-" {
        let mut text = String::new();
        stdin.read_to_string(&mut text).map_err(|error| {
            Failure::usage(format!(
                "PROMPT is \"-\", but stdin could not be read as UTF-8 text: {error}"
            ))
        })?;
        text
    } else {
        prompt.to_owned()
    };
    if text.trim().is_empty() {
        return Err(Failure::usage(
            "the prompt is empty; give it as the last argument, in quotes, or \"-\" to read it \
             from stdin",
        ));
    }
    Ok(text.trim_end_matches(['\n', '\r']).to_owned())
}

/// The providers `--model` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Provider {
    OpenAi,
    Anthropic,
}

impl Provider {
    fn key_variable(self) -> &'static str {
        match self {
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

const MODEL_FORMS: &str = "give it as openai:MODEL or anthropic:MODEL, e.g. --model \
                           openai:gpt-4o-mini or --model anthropic:claude-sonnet-4-5";

/// `--model PROVIDER:MODEL`, split at the first colon (model names may
/// hold colons: `openai:llama3.2:1b`).
fn parse_model(spec: &str) -> Result<(Provider, String), Failure> {
    let Some((provider, model)) = spec.split_once(':') else {
        return Err(Failure::usage(format!(
            "--model {spec:?} names no provider; {MODEL_FORMS}"
        )));
    };
    let provider = match provider.trim().to_ascii_lowercase().as_str() {
        "openai" => Provider::OpenAi,
        "anthropic" => Provider::Anthropic,
        other => {
            return Err(Failure::usage(format!(
                "--model {spec:?}: unknown provider {other:?}; {MODEL_FORMS} (openai also \
                 reaches compatible servers with --base-url)"
            )));
        }
    };
    let model = model.trim();
    if model.is_empty() {
        return Err(Failure::usage(format!(
            "--model {spec:?} names no model; {MODEL_FORMS}"
        )));
    }
    Ok((provider, model.to_owned()))
}

/// The model of `--model`, with its key and base URL.
fn build_model(
    options: &Options,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Model>, Failure> {
    let (provider, name) = parse_model(&options.model)?;
    check_settings(provider, options)?;
    let api_key = api_key(provider, options, env)?;
    let invalid = |error: golem_agent::model::ModelError| {
        Failure::usage(format!("--base-url: {}", crate::exit::describe(&error)))
    };
    Ok(match provider {
        Provider::OpenAi => {
            let mut config = OpenAiConfig::new(name);
            config.api_key = api_key;
            if let Some(url) = &options.base_url {
                config.base_url = url.clone();
            }
            Arc::new(OpenAi::new(config).map_err(invalid)?)
        }
        Provider::Anthropic => {
            let mut config = AnthropicConfig::new(name);
            config.api_key = api_key;
            if let Some(url) = &options.base_url {
                config.base_url = url.clone();
            }
            Arc::new(Anthropic::new(config).map_err(|error| {
                // A key that cannot be a header is refused here, never shown.
                Failure::usage(crate::exit::describe(&error))
            })?)
        }
    })
}

/// The model settings `provider`'s API cannot take, refused before any
/// server starts (the provider would refuse them at the first request).
fn check_settings(provider: Provider, options: &Options) -> Result<(), Failure> {
    if provider != Provider::Anthropic {
        return Ok(());
    }
    if options.seed.is_some() {
        return Err(Failure::usage(
            "--seed: Anthropic's Messages API has no seed; leave it out for anthropic: models",
        ));
    }
    if options.temperature.is_some_and(|t| t > 1.0) {
        return Err(Failure::usage(
            "--temperature: Anthropic's Messages API takes 0 to 1",
        ));
    }
    Ok(())
}

/// The key from `--api-key-env` or the provider's variable. Required for
/// the vendor's own URL or when a variable was named. With `--base-url`
/// and no `--api-key-env`, no key is read: the vendor's key
/// (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) must never go to another host
/// just because it is exported.
fn api_key(
    provider: Provider,
    options: &Options,
    env: &impl Fn(&str) -> Option<String>,
) -> Result<Option<ApiKey>, Failure> {
    if options.base_url.is_some() && options.api_key_env.is_none() {
        return Ok(None);
    }
    let variable = options
        .api_key_env
        .as_deref()
        .unwrap_or(provider.key_variable());
    if variable.is_empty() || variable.contains(['=', '\0']) {
        return Err(Failure::usage(format!(
            "--api-key-env {variable:?} is not a variable name"
        )));
    }
    let value = env(variable).filter(|value| !value.trim().is_empty());
    let required = options.api_key_env.is_some() || options.base_url.is_none();
    match value {
        Some(value) => Ok(Some(ApiKey::new(value.trim().to_owned()))),
        None if required => Err(Failure::usage(format!(
            "no API key: the environment variable {variable} is not set (or empty); export it, \
             or name another variable with --api-key-env{}",
            if options.base_url.is_none() {
                " (a local server given with --base-url needs none)"
            } else {
                ""
            }
        ))),
        None => Ok(None),
    }
}

/// The model's keys are for the model's provider: stdio servers (often
/// third-party packages) do not inherit the vendors' key variables or the
/// one `--api-key-env` names. An entry's own `env` can still pass one on.
fn withhold_model_keys(servers: &mut [(String, ServerConfig)], named: Option<&str>) {
    let variables: Vec<String> = [Provider::OpenAi, Provider::Anthropic]
        .map(|provider| provider.key_variable().to_owned())
        .into_iter()
        .chain(named.map(str::to_owned))
        .collect();
    for (_, server) in servers {
        if let ServerConfig::Stdio(stdio) = server {
            stdio.env_remove.extend(variables.iter().cloned());
        }
    }
}

/// The servers chosen, by name, and the entries left out (with why).
/// The entries chosen, those that could not be read, and each chosen
/// one's `"alwaysLoad"`.
/// The servers chosen, the entries left out, and what the file says of
/// each server beyond its transport.
type Selected = (
    Vec<(String, ServerConfig)>,
    Vec<Failure>,
    HashMap<String, Entry>,
);

/// What an entry says of its server beyond how to reach it.
#[derive(Debug, Default)]
struct Entry {
    /// `"alwaysLoad"`.
    always_loaded: AlwaysLoaded,
    /// `"protocol"`: the revision it pins, if any.
    protocol: Option<&'static str>,
    /// `"allowTools"`, `"askTools"`, `"denyTools"`.
    tool_rules: ToolRules,
}

/// `--allow-tool` and kin as patterns.
fn patterns(texts: &[String]) -> Vec<Pattern> {
    texts.iter().map(|text| Pattern::new(text.trim())).collect()
}

/// The servers of `--config` named by `--server` (all by default), and the
/// entries that could not be read (left out, unless `strict`: then the
/// first one fails the command).
fn select_servers(
    path: Option<&std::path::Path>,
    names: &[String],
    strict: bool,
) -> Result<Selected, Failure> {
    let Some(path) = path else {
        if names.is_empty() {
            return Ok((Vec::new(), Vec::new(), HashMap::new()));
        }
        return Err(Failure::usage(
            "--server names an entry of a config file; add --config FILE",
        ));
    };
    let servers = config::load(path).map_err(|error| Failure::usage(describe_config(&error)))?;
    let names: Vec<String> = if names.is_empty() {
        // Entries marked "disabled": true are left out unless named.
        servers.enabled().map(str::to_owned).collect()
    } else {
        let mut unique: Vec<String> = Vec::new();
        for name in names {
            if !unique.contains(name) {
                unique.push(name.clone());
            }
        }
        unique
    };
    let (mut selected, mut skipped) = (Vec::new(), Vec::new());
    let mut entries: HashMap<String, Entry> = HashMap::new();
    for name in names {
        match servers.get(&name) {
            Ok(server) => match always_loaded(&servers, &name)
                .and_then(|always| Ok((always, entry_rules(&servers, &name)?)))
            {
                Ok((always_loaded, tool_rules)) => {
                    let protocol = servers.protocol(&name);
                    let entry = Entry {
                        always_loaded,
                        protocol,
                        tool_rules,
                    };
                    entries.insert(name.clone(), entry);
                    selected.push((name, server));
                }
                // A bad entry: left out, as any other, unless strict.
                Err(problem) if strict => return Err(Failure::usage(problem)),
                Err(problem) => skipped.push(Failure::usage(problem)),
            },
            Err(error) if strict => return Err(Failure::usage(describe_config(&error))),
            Err(error) => skipped.push(Failure::usage(describe_config(&error))),
        }
    }
    Ok((selected, skipped, entries))
}

fn describe_config(error: &config::ConfigError) -> String {
    let message = error.to_string();
    message
        .strip_prefix("mcp: ")
        .map(str::to_owned)
        .unwrap_or(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::Exit;

    fn usage_message<T>(result: Result<T, Failure>) -> String {
        match result {
            Ok(_) => panic!("expected a usage error"),
            Err(failure) => {
                assert_eq!(failure.exit, Exit::Usage, "{failure:?}");
                failure.message
            }
        }
    }

    fn options(model: &str) -> Options {
        Options {
            model: model.into(),
            base_url: None,
            api_key_env: None,
            system: None,
            config: None,
            servers: Vec::new(),
            strict: false,
            protocol: None,
            no_restart: false,
            fail_on_tool_error: false,
            approve: ApproveMode::ReadOnly,
            allow_tools: Vec::new(),
            ask_tools: Vec::new(),
            deny_tools: Vec::new(),
            quiet: false,
            log_level: LogLevel::Warning,
            tool_search: SearchMode::Auto,
            eager: false,
            refresh: false,
            no_tool_images: false,
            on_elicitation: None,
            roots: Vec::new(),
            allow_sampling: false,
            max_samplings: 3,
            max_tokens: None,
            temperature: None,
            seed: None,
            tool_choice: None,
            output_schema: None,
            output_retries: 2,
            save: None,
            resume: None,
            context_tokens: None,
            max_turns: None,
            max_requests: None,
            max_tool_calls: None,
            max_input_tokens: None,
            max_output_tokens: None,
            max_total_tokens: None,
            tool_timeout: None,
            tool_max_time: None,
            max_tool_output: None,
            start_timeout: None,
        }
    }

    #[test]
    fn models_are_provider_colon_name() {
        assert_eq!(
            parse_model("openai:gpt-4o").ok(),
            Some((Provider::OpenAi, "gpt-4o".into()))
        );
        assert_eq!(
            parse_model("openai:llama3.2:1b").ok(),
            Some((Provider::OpenAi, "llama3.2:1b".into()))
        );
        assert_eq!(
            parse_model("Anthropic:claude-x").ok(),
            Some((Provider::Anthropic, "claude-x".into()))
        );
        assert!(usage_message(parse_model("gpt-4o")).contains("names no provider"));
        assert!(usage_message(parse_model("gemini:pro")).contains("unknown provider \"gemini\""));
        assert!(usage_message(parse_model("openai:")).contains("names no model"));
    }

    #[test]
    fn keys_are_required_for_the_vendors_url_and_never_shown() {
        let none = |_: &str| None;
        let message = usage_message(api_key(Provider::OpenAi, &options("openai:m"), &none));
        assert!(message.contains("OPENAI_API_KEY"), "{message}");
        let message = usage_message(api_key(Provider::Anthropic, &options("anthropic:m"), &none));
        assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");

        // A local server needs none...
        let local = Options {
            base_url: Some("http://localhost:11434/v1".into()),
            ..options("openai:m")
        };
        assert_eq!(api_key(Provider::OpenAi, &local, &none).ok(), Some(None));
        // ... and does not get the vendor's key when it is exported: that
        // key is for the vendor's host only.
        let vendor_key = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-vendor".to_owned());
        assert_eq!(
            api_key(Provider::OpenAi, &local, &vendor_key).ok(),
            Some(None)
        );
        // ... unless a variable was named.
        let named = Options {
            api_key_env: Some("MY_KEY".into()),
            ..local
        };
        assert!(usage_message(api_key(Provider::OpenAi, &named, &none)).contains("MY_KEY"));
        let set = |name: &str| (name == "MY_KEY").then(|| " sk-secret\n".to_owned());
        assert_eq!(
            api_key(Provider::OpenAi, &named, &set).ok(),
            Some(Some(ApiKey::new("sk-secret")))
        );
    }

    #[test]
    fn stdio_servers_do_not_inherit_the_model_keys() {
        let mut servers = vec![(
            "fs".to_owned(),
            ServerConfig::Stdio(golem_agent::mcp::StdioConfig::new("mcp-fs")),
        )];
        withhold_model_keys(&mut servers, Some("GROQ_API_KEY"));
        let ServerConfig::Stdio(stdio) = &servers[0].1 else {
            panic!("a stdio server")
        };
        assert_eq!(
            stdio.env_remove,
            ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GROQ_API_KEY"]
        );
    }

    #[test]
    fn prompts_come_from_the_argument_or_stdin() {
        assert_eq!(
            read_prompt("hi", std::io::empty()).ok().as_deref(),
            Some("hi")
        );
        assert_eq!(
            read_prompt("-", &b"from stdin\n"[..]).ok().as_deref(),
            Some("from stdin")
        );
        assert!(usage_message(read_prompt("  ", std::io::empty())).contains("prompt is empty"));
        assert!(usage_message(read_prompt("-", &b""[..])).contains("prompt is empty"));
    }

    #[test]
    fn servers_need_a_config_file() {
        assert!(select_servers(None, &[], false).expect("none").0.is_empty());
        assert!(usage_message(select_servers(None, &["fs".into()], true)).contains("--config"));
        // A file that cannot be read fails even when entries may be skipped.
        let message = usage_message(select_servers(
            Some(std::path::Path::new("/no/such/mcp.json")),
            &[],
            false,
        ));
        assert!(message.contains("/no/such/mcp.json"), "{message}");
    }

    #[test]
    fn elicitation_asks_at_a_terminal_unless_stdin_is_taken() {
        use golem_elicit::Mode;
        assert_eq!(
            elicitation_mode(None, true, false, false).ok(),
            Some(Mode::Ask)
        );
        assert_eq!(
            elicitation_mode(None, true, false, true).ok(),
            Some(Mode::Ask)
        );
        assert_eq!(
            elicitation_mode(None, false, false, false).ok(),
            Some(Mode::Decline)
        );
        assert_eq!(
            elicitation_mode(None, true, true, false).ok(),
            Some(Mode::Decline)
        );
        assert_eq!(
            elicitation_mode(Some(Mode::Ask), false, false, false).ok(),
            Some(Mode::Ask)
        );
        assert!(
            usage_message(elicitation_mode(Some(Mode::Ask), false, true, false))
                .contains("PROMPT \"-\"")
        );
        assert!(
            usage_message(elicitation_mode(Some(Mode::Ask), false, false, true))
                .contains("golem chat")
        );
    }

    #[test]
    fn roots_are_directories_given_as_file_uris() {
        assert_eq!(roots(&[]).ok(), Some(None));
        let listed = roots(&[PathBuf::from(".")]).expect("a root").expect("some");
        assert!(listed[0].uri.starts_with("file:///"), "{:?}", listed[0]);
        let message = usage_message(roots(&[PathBuf::from("no/such/dir")]));
        assert!(message.starts_with("--root no/such/dir: "), "{message}");
    }

    #[test]
    fn timeouts_are_positive_seconds() {
        assert_eq!(parse_seconds("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["0", "-1", "soon", "NaN", "inf"] {
            assert!(parse_seconds(bad).is_err(), "{bad}");
        }
    }
}
