//! Running a checked command line: start the MCP servers, run the agent
//! (one prompt, or a conversation), show what happens, close the servers,
//! also when a signal ends the command.

use std::future::Future;
use std::io::IsTerminal;
use std::sync::Arc;

use golem_agent::mcp::{FileManifestStore, ManifestStore, golem_cache_dir};
use golem_agent::model::{Message, StreamEvent, Usage};
use golem_agent::{Agent, AgentConfig, MemoryOutputStore, OutputStore, RunEvent, ToolFailures};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::signal::unix::{Signal as Stream, SignalKind, signal};

use crate::approve::Asker;
use crate::cli::{Mode, Plan};
use crate::exit::{Exit, Failure};
use crate::keep::Keeper;
use crate::outputs;
use crate::servers::{Manifests, Presentation, Servers};
use crate::show::{self, Output};

/// Runs `plan` and returns the exit status; failures are reported on
/// stderr. The servers started are closed whatever happens.
pub async fn execute(mut plan: Plan) -> Exit {
    let output = Output::new(plan.quiet);
    let mut signals = match Signals::new() {
        Ok(signals) => signals,
        Err(error) => {
            return Failure::new(Exit::Transport, format!("cannot watch for Ctrl-C: {error}"))
                .report();
        }
    };
    let always_loaded = std::mem::take(&mut plan.always_loaded);
    let manifests = Manifests {
        store: cache_dir().map(|dir| {
            let store = FileManifestStore::new(dir.join("manifests"));
            // Entries edited or gone leave theirs behind.
            store.prune(MANIFESTS_KEPT_FOR);
            Arc::new(store) as Arc<dyn ManifestStore>
        }),
        read: plan.read_manifests,
    };
    let presentation = Presentation {
        always_loaded,
        images: plan.tool_images,
    };
    // Under --quiet no log message is shown, so none is asked for.
    let log_level = (!plan.quiet).then_some(plan.log_level);
    let policy = Arc::new(std::mem::take(&mut plan.policy));
    let mut servers = Servers::new(plan.restart, presentation, manifests, (log_level, policy));
    let exit = work(plan, &mut servers, &output, &mut signals).await;
    output.end_line();
    servers.close().await;
    exit
}

async fn work(
    mut plan: Plan,
    servers: &mut Servers,
    output: &Output,
    signals: &mut Signals,
) -> Exit {
    let started = signals
        .or_signal(servers.start(
            plan.servers,
            plan.start_timeout,
            output,
            plan.strict,
            &plan.protocols,
            &plan.answers,
        ))
        .await;
    let failed = match started {
        Err(signal) => return signal.report(output),
        Ok(Err(failure)) => return failure.report(),
        Ok(Ok(failed)) => failed,
    };
    // Entries that could not be read or started, together, before the
    // run: the others carry on without them (`--strict` fails instead).
    for failure in plan.skipped.iter().chain(&failed) {
        output.note(&format!("left out: {}", failure.message));
    }
    // Servers were asked for, and none offers a tool: say so, or the model's
    // "I cannot do that" would be the only sign.
    if servers.started() > 0 && servers.listing().is_empty() {
        output.note("the MCP servers offer no tools: the model answers without any");
    } else if servers.started() == 0 {
        output.note("no MCP servers (--config FILE names them): the model answers without tools");
    }
    // The calls approved at a question, which showed their line already.
    let asked: Arc<std::sync::Mutex<std::collections::HashSet<String>>> = Arc::default();
    let (keeper, history) = Keeper::new(
        (plan.save.take(), plan.context_tokens),
        plan.model.name(),
        plan.resumed.take(),
        output,
    );
    let agent = match Agent::new(
        plan.model,
        decoder(plan.output.as_ref().map(|shape| Arc::clone(&shape.decoder))),
        AgentConfig {
            toolsets: servers.toolsets(),
            tool_search: plan.tool_search.into(),
            max_tool_output: plan.max_tool_output,
            output_store: output_store(),
            instructions: plan.system,
            // An MCP tool's `isError` answer goes back to the model, which
            // may correct itself; the turn limit bounds the run.
            tool_retries: plan.max_turns,
            tool_timeout: Some(plan.tool_timeout),
            tool_max_time: Some(plan.tool_max_time),
            // A host carries on: the model hears of a failed call (ADR 0031).
            tool_failures: match plan.fail_on_tool_error {
                true => ToolFailures::FailRun,
                false => ToolFailures::TellModel,
            },
            // One budget for the whole command: every answer of a chat, and
            // the servers' sampling requests.
            budget: Some(Arc::clone(&plan.answers.budget)),
            approver: Some(Arc::new(Asker {
                policy: Arc::clone(servers.policy()),
                prefixes: Arc::new(servers.prefixes()),
                output: output.clone(),
                // The question goes to stderr, the key comes from stdin.
                interactive: std::io::stdin().is_terminal() && std::io::stderr().is_terminal(),
                approved: Default::default(),
                asked: Arc::clone(&asked),
            })),
            settings: plan.settings,
            max_turns: plan.max_turns,
            output: plan.output.as_ref().map(|shape| shape.output.clone()),
            output_retries: plan.output_retries,
            ..AgentConfig::default()
        },
    ) {
        Ok(agent) => agent,
        Err(error) => return Failure::usage(crate::exit::describe(&error)).report(),
    };
    let mut session = Session {
        agent,
        asked,
        keeper,
        last_input_tokens: 0,
        structured: plan.output.is_some(),
        servers,
        output,
        usage: Usage::default(),
    };
    match plan.mode {
        Mode::Run(prompt) => session.run(history, prompt, signals).await,
        Mode::Chat => session.chat(history, signals).await,
    }
}

/// Where cut tool results are kept: files under the cache directory, or
/// memory when there is none (no `$XDG_CACHE_HOME` or `$HOME`).
fn output_store() -> Arc<dyn OutputStore> {
    match cache_dir() {
        Some(dir) => outputs::FileOutputStore::open(dir.join("outputs")),
        None => Arc::new(MemoryOutputStore::default()),
    }
}

/// How long a manifest no run wrote again is kept.
const MANIFESTS_KEPT_FOR: std::time::Duration = std::time::Duration::from_secs(30 * 24 * 60 * 60);

/// golem's cache directory (`$XDG_CACHE_HOME/golem`, else
/// `~/.cache/golem`), if there is one.
fn cache_dir() -> Option<std::path::PathBuf> {
    golem_cache_dir(|name| std::env::var(name).ok())
}

/// The agent and what the command shows of it.
struct Session<'a> {
    agent: Agent<(), String>,
    /// The calls approved at a question (`Asker::asked`).
    asked: Arc<std::sync::Mutex<std::collections::HashSet<String>>>,
    /// `--save`, `--resume`, `--context-tokens`.
    keeper: Keeper,
    /// What the provider counted for the last request's input.
    last_input_tokens: u64,
    /// `--output-schema`: the answer is printed once checked, not streamed.
    structured: bool,
    servers: &'a Servers,
    output: &'a Output,
    /// Every model request's usage so far, failed runs included.
    usage: Usage,
}

impl Session<'_> {
    /// `golem run`: one exchange, what ended it when it failed, then the
    /// usage totals, always the last line.
    async fn run(
        &mut self,
        mut history: Vec<Message>,
        prompt: Message,
        signals: &mut Signals,
    ) -> Exit {
        let sent = self.keeper.fit(&history, &prompt, self.output);
        let sent_len = sent.len();
        let outcome = signals.or_signal(self.exchange(sent, prompt)).await;
        self.output.end_line();
        let exit = match outcome {
            Err(signal) => signal.report(self.output),
            Ok(Ok(messages)) => {
                self.keep(&mut history, sent_len, messages);
                Exit::Success
            }
            Ok(Err(failure)) => failure.report(),
        };
        // Last, whatever happened: a script reads the totals from the last
        // line of stderr.
        self.output.note(&show::usage(&self.totals()));
        exit
    }

    /// `golem chat`: exchanges on stdin's lines until `/exit` or the end of
    /// input, with the conversation so far.
    async fn chat(&mut self, mut history: Vec<Message>, signals: &mut Signals) -> Exit {
        let interactive = std::io::stdin().is_terminal();
        let mut lines = BufReader::new(tokio::io::stdin()).lines();
        let mut exit = Exit::Success;
        if interactive {
            self.output.note(
                "chat: /tools lists the tools, /clear forgets the conversation, /exit ends it",
            );
        }
        loop {
            if interactive {
                self.output.prompt();
            }
            let line = signals.or_signal(lines.next_line()).await;
            self.output.answered();
            let line = match line {
                Err(signal) => {
                    exit = signal.report(self.output);
                    break;
                }
                Ok(Ok(Some(line))) => line,
                Ok(Ok(None)) => break,
                Ok(Err(error)) => {
                    exit = Failure::usage(format!("cannot read stdin: {error}")).report();
                    break;
                }
            };
            let line = line.trim();
            match line {
                "" => continue,
                "/exit" | "/quit" => break,
                "/clear" => {
                    history.clear();
                    self.output.note("the conversation so far is forgotten");
                    continue;
                }
                "/tools" => {
                    self.list_tools(&history);
                    continue;
                }
                "/help" => {
                    self.output.note(
                        "/tools lists the tools, /clear forgets the conversation, /exit ends it",
                    );
                    continue;
                }
                command if command.starts_with('/') && !command.contains(char::is_whitespace) => {
                    self.output.note(&format!(
                        "unknown command {command}; the commands are /tools, /clear and /exit"
                    ));
                    continue;
                }
                _ => {}
            }
            let prompt = Message::user(line);
            let sent = self.keeper.fit(&history, &prompt, self.output);
            let sent_len = sent.len();
            let outcome = signals.or_signal(self.exchange(sent, prompt)).await;
            self.output.end_line();
            exit = match outcome {
                Ok(Ok(messages)) => {
                    self.keep(&mut history, sent_len, messages);
                    Exit::Success
                }
                // A limit of the command ends it: every later line would
                // meet it too.
                Ok(Err(failure)) if failure.exit == Exit::Budget => {
                    exit = failure.report();
                    break;
                }
                Ok(Err(failure)) => failure.report(),
                Err(Signal::Interrupt) => {
                    self.output
                        .note("interrupted; the answer is dropped from the conversation");
                    Exit::Interrupted
                }
                Err(signal) => {
                    exit = signal.report(self.output);
                    break;
                }
            };
        }
        self.output.end_line();
        self.output.note(&show::usage(&self.totals()));
        exit
    }

    /// One user message answered, after `history`: the answer streamed to
    /// stdout, tool calls to stderr. Returns the conversation with it.
    async fn exchange(
        &mut self,
        history: Vec<Message>,
        prompt: Message,
    ) -> Result<Vec<Message>, Failure> {
        let (servers, output, structured) = (self.servers, self.output, self.structured);
        let usage = &mut self.usage;
        let last_input_tokens = &mut self.last_input_tokens;
        let asked = &self.asked;
        let mut sink = |event: RunEvent| match event {
            // JSON is shown once it fits, whole.
            RunEvent::Model {
                event: StreamEvent::Text(_),
                ..
            } if structured => {}
            // The question showed this call's line: its start is not shown
            // again.
            RunEvent::ToolStarted { call, .. }
                if asked
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .remove(&call.id) => {}
            event => {
                if let RunEvent::ModelResponse { usage, .. } = &event {
                    *last_input_tokens = usage.input_tokens;
                }
                show_event(event, servers, output, usage)
            }
        };
        let result = self
            .agent
            .run_stream_with_history((), history, prompt, &mut sink)
            .await;
        match result {
            Ok(run) => {
                if structured {
                    output.text(&run.output);
                }
                Ok(run.messages)
            }
            Err(error) => Err(Failure::run(&error, output.shows_notes())),
        }
    }

    /// After an answer: `messages` (the `sent_len` messages sent, then the
    /// exchange's) carried on in the whole `history`, what
    /// `--context-tokens` learns from it, and the conversation saved
    /// (`--save`).
    fn keep(&mut self, history: &mut Vec<Message>, sent_len: usize, messages: Vec<Message>) {
        let asked = &messages[..messages.len().saturating_sub(1)];
        self.keeper.learn(asked, self.last_input_tokens);
        history.extend(messages.into_iter().skip(sent_len));
        let tools = self
            .servers
            .listing()
            .into_iter()
            .map(|(_, name, _)| name)
            .collect();
        self.keeper.save(history, tools, self.totals(), self.output);
    }

    /// The usage of every model request so far: the runs' and the servers'
    /// sampling requests'.
    fn totals(&self) -> Usage {
        let mut total = self.usage;
        total += self.servers.sampling_usage();
        total
    }

    /// `/tools`: one line per tool on stdout, `server  tool  description`
    /// in aligned columns; under tool search, the tools the model is
    /// offered after `history`, then those only a search finds, each under
    /// a heading.
    fn list_tools(&self, history: &[Message]) {
        let tools = self.servers.listing();
        if tools.is_empty() {
            self.output
                .note("no tools (name MCP servers with --config FILE)");
            return;
        }
        let offered = match self.agent.offered_tools(history) {
            Ok(offered) => offered,
            Err(error) => return self.output.note(&crate::exit::describe(&error)),
        };
        if offered.searchable.is_empty() {
            for line in show::tool_table(&tools) {
                self.output.line(&line);
            }
            return;
        }
        let (loaded, searchable): (Vec<_>, Vec<_>) = tools
            .into_iter()
            .partition(|(_, name, _)| offered.loaded.contains(name));
        let sections = [
            (format!("loaded ({}):", loaded.len()), loaded),
            (
                format!(
                    "searchable with {} ({}):",
                    golem_agent::SEARCH_TOOL,
                    searchable.len()
                ),
                searchable,
            ),
        ];
        for (heading, tools) in sections {
            self.output.line(&heading);
            for line in show::tool_table(&tools) {
                self.output.line(&format!("  {line}"));
            }
        }
    }
}

/// The answer's decoder: its text, or with `--output-schema` its checked
/// JSON.
fn decoder(
    checked: Option<crate::schema::Decoder>,
) -> impl Fn(&golem_agent::model::Response) -> Result<String, golem_agent::DecodeError>
+ Send
+ Sync
+ 'static {
    move |response| match &checked {
        None => golem_agent::decode::text(response),
        Some(check) => check(response),
    }
}

/// Shows one event of a run.
fn show_event(event: RunEvent, servers: &Servers, output: &Output, usage: &mut Usage) {
    match event {
        RunEvent::Model {
            event: StreamEvent::Text(text),
            ..
        } => output.text(&text),
        // A request counts when it is sent, so that one interrupted before
        // its answer counts too; its tokens count when they are known.
        RunEvent::ModelRequest { .. } => usage.requests += 1,
        RunEvent::ModelResponse {
            usage: turn_usage, ..
        } => {
            *usage += Usage {
                requests: 0,
                ..turn_usage
            };
        }
        RunEvent::ToolStarted { call, source, .. } => {
            let tool = servers.server_tool(&source, &call.name);
            output.note(&show::call_started(&source, tool, call.arguments.get()));
        }
        RunEvent::ToolFinished {
            tool,
            source,
            duration,
            outcome,
            ..
        } => {
            let tool = servers.server_tool(&source, &tool);
            output.note(&show::call_finished(&source, tool, duration, &outcome));
        }
        RunEvent::ToolDenied {
            call,
            source,
            reason,
            ..
        } => {
            let tool = servers.server_tool(&source, &call.name);
            output.note(&format!("[{source}] {tool} not run: {reason}"));
        }
        RunEvent::UnknownTool { call, likely, .. } => {
            output.note(&show::unknown_tool(&call.name, &likely));
        }
        _ => {}
    }
}

/// A signal that ends the command (or, in chat, the answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    Interrupt,
    Terminate,
    HangUp,
}

impl Signal {
    /// Says so on stderr and returns the exit status.
    fn report(self, output: &Output) -> Exit {
        let (name, exit) = match self {
            Signal::Interrupt => ("interrupted (Ctrl-C)", Exit::Interrupted),
            Signal::Terminate => ("terminated (SIGTERM)", Exit::Terminated),
            Signal::HangUp => ("hung up (SIGHUP)", Exit::HangUp),
        };
        output.note(&format!("{name}; closing the MCP servers"));
        exit
    }
}

/// SIGINT, SIGTERM and SIGHUP, caught from the start so that none of them
/// kills the command before it has closed its servers.
struct Signals {
    interrupt: Stream,
    terminate: Stream,
    hang_up: Stream,
}

impl Signals {
    fn new() -> std::io::Result<Self> {
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hang_up: signal(SignalKind::hangup())?,
        })
    }

    /// `future`, unless a signal comes first.
    async fn or_signal<T>(&mut self, future: impl Future<Output = T>) -> Result<T, Signal> {
        tokio::select! {
            output = future => Ok(output),
            _ = self.interrupt.recv() => Err(Signal::Interrupt),
            _ = self.terminate.recv() => Err(Signal::Terminate),
            _ = self.hang_up.recv() => Err(Signal::HangUp),
        }
    }
}
