//! Exit statuses, and how a failure becomes one clear line on stderr.

use std::process::ExitCode;

use golem_agent::model::{ModelError, ProviderError, ProviderErrorKind};
use golem_agent::{Limit, Reached, RunError};

/// The exit status of `golem`. The numbers are part of its interface
/// (ADR 0010), and mean what they mean for `golem-mcp` (ADR 0005).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The answer was printed (chat: the last exchange succeeded).
    Success = 0,
    /// The run ended without an answer for a reason of the agent's: the
    /// turn limit, a tool's correction budget, a tool the model made up,
    /// a tool that failed on its own (not through its server).
    Run = 1,
    /// The command line, the model, the key or the configuration are wrong.
    Usage = 2,
    /// A server answered with an error: the model provider (an HTTP error
    /// status, after retries) or an MCP server (a JSON-RPC error).
    Refused = 3,
    /// A server could not be reached or talked to: an MCP server did not
    /// start or died, the provider was unreachable, its answer invalid or
    /// cut.
    Transport = 4,
    /// A tool call outlived `--tool-timeout`, or the provider did not
    /// answer within its request timeout.
    Timeout = 5,
    /// A limit of the whole command (`--max-requests`, `--max-tool-calls`,
    /// `--max-input-tokens`, `--max-output-tokens`, `--max-total-tokens`)
    /// was reached: nothing more was asked of the model.
    Budget = 6,
    /// Ctrl-C (SIGINT).
    Interrupted = 130,
    /// SIGHUP: the terminal went away.
    HangUp = 129,
    /// SIGTERM.
    Terminated = 143,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit as u8)
    }
}

/// A failed command: its exit status and the message for stderr.
#[derive(Debug)]
pub struct Failure {
    /// The exit status.
    pub exit: Exit,
    /// What failed and, where possible, how to fix it; printed after
    /// `golem: `.
    pub message: String,
}

impl Failure {
    /// A failure with this exit status and message.
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Failure {
            exit,
            message: message.into(),
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::new(Exit::Usage, message)
    }

    /// An MCP server that could not be started or talked to, named.
    pub fn server(name: &str, error: &golem_agent::mcp::Error) -> Self {
        let exit = match error {
            golem_agent::mcp::Error::Protocol { .. } => Exit::Refused,
            golem_agent::mcp::Error::InvalidConfig { .. } | golem_agent::mcp::Error::Config(_) => {
                Exit::Usage
            }
            golem_agent::mcp::Error::Timeout { .. } => Exit::Timeout,
            _ => Exit::Transport,
        };
        Failure::new(exit, format!("MCP server {name:?}: {}", describe(error)))
    }

    /// A failed run, with the status its cause deserves. Where the
    /// library's message names a setting, this one names the option. When
    /// `calls_shown`, the failed call's own line on stderr already said
    /// why it failed: this one points at it rather than say it twice.
    pub fn run(error: &RunError, calls_shown: bool) -> Self {
        let message = match error {
            RunError::Tool { tool, .. } | RunError::ToolTimeout { tool, .. } if calls_shown => {
                format!("the run ends on the failed call of {tool:?} above (--fail-on-tool-error)")
            }
            RunError::Tool { tool, source, .. } => {
                format!("the tool {tool:?} failed: {}", describe(&**source))
            }
            RunError::ToolTimeout { tool, timeout, .. } => format!(
                "the tool {tool:?} did not finish within {} s and was cancelled; raise \
                 --tool-timeout (a wait without progress) or --tool-max-time if it needs longer",
                timeout.as_secs_f64()
            ),
            RunError::UsageLimit {
                limit,
                max,
                spent,
                asked,
            } => format!(
                "{} in this command; raise {} to go on",
                Reached(*limit, *max, *spent, *asked),
                limit_option(*limit)
            ),
            RunError::TurnLimit { max_turns } => format!(
                "no answer after {max_turns} model request(s); raise --max-turns if the task \
                 needs more"
            ),
            RunError::ToolRetriesExhausted {
                tool,
                attempts,
                source,
                ..
            } => format!(
                "the tool {tool:?} rejected its arguments {attempts} times, more than \
                 --max-turns allows: {source}"
            ),
            RunError::UnknownTool {
                tool,
                available,
                attempts,
                ..
            } => format!(
                "the model called {tool:?}, a tool no server offers, {attempts} times, more \
                 than --max-turns allows (the tools: {})",
                listed(available)
            ),
            RunError::OutputRetriesExhausted {
                attempts, source, ..
            } => format!(
                "the answer did not fit --output-schema after {attempts} attempts; raise \
                 --output-retries to let the model correct it: {}",
                source.reason()
            ),
            _ => describe(error),
        };
        Failure::new(run_exit(error), message)
    }

    /// Prints the message on stderr and returns the exit status.
    pub fn report(self) -> Exit {
        // The message carries what servers and models said: escaped, and
        // indented past its first line so that none of it passes for ours.
        eprintln!("golem: {}", golem_terminal::message(&self.message));
        self.exit
    }
}

/// The option that sets `limit`.
pub fn limit_option(limit: Limit) -> &'static str {
    match limit {
        Limit::Requests => "--max-requests",
        Limit::ToolCalls => "--max-tool-calls",
        Limit::InputTokens => "--max-input-tokens",
        Limit::OutputTokens => "--max-output-tokens",
        _ => "--max-total-tokens",
    }
}

/// Tool names for a message: at most 20, then how many more.
fn listed(names: &[String]) -> String {
    const SHOWN: usize = 20;
    if names.is_empty() {
        return "none".into();
    }
    let mut text = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    text
}

/// The exit status of a failed run.
fn run_exit(error: &RunError) -> Exit {
    match error {
        RunError::Model { source, .. } => model_exit(source),
        RunError::ToolTimeout { .. } => Exit::Timeout,
        RunError::UsageLimit { .. } => Exit::Budget,
        RunError::Tool { .. } => match error.find::<golem_agent::mcp::Error>() {
            Some(golem_agent::mcp::Error::Protocol { .. }) => Exit::Refused,
            Some(_) => Exit::Transport,
            None => Exit::Run,
        },
        _ => Exit::Run,
    }
}

/// The exit status of a failed model request.
pub fn model_exit(error: &ModelError) -> Exit {
    let provider =
        std::error::Error::source(error).and_then(|source| source.downcast_ref::<ProviderError>());
    match provider.map(|error| error.kind) {
        Some(ProviderErrorKind::Status) => Exit::Refused,
        Some(ProviderErrorKind::Timeout) => Exit::Timeout,
        _ => Exit::Transport,
    }
}

/// An error's message without a library's `mcp: ` prefix, followed by its
/// root cause when the message does not already say it.
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let shown = error.to_string();
    let mut message = shown.strip_prefix("mcp: ").unwrap_or(&shown).to_owned();
    let mut root = error.source();
    while let Some(next) = root.and_then(|cause| cause.source()) {
        root = Some(next);
    }
    if let Some(root) = root {
        let cause = root.to_string();
        let cause = cause.strip_prefix("mcp: ").unwrap_or(&cause);
        if !cause.is_empty() && !message.contains(cause) {
            message.push_str(": ");
            message.push_str(cause);
        }
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(kind: ProviderErrorKind) -> ModelError {
        let error = ProviderError::new("openai", kind, "it failed");
        ModelError::with_source(error.to_string(), error)
    }

    #[test]
    fn model_failures_map_by_kind() {
        let run = |kind| RunError::Model {
            turn: 1,
            source: provider(kind),
        };
        assert_eq!(run_exit(&run(ProviderErrorKind::Status)), Exit::Refused);
        assert_eq!(run_exit(&run(ProviderErrorKind::Timeout)), Exit::Timeout);
        assert_eq!(
            run_exit(&run(ProviderErrorKind::Connection)),
            Exit::Transport
        );
        assert_eq!(
            run_exit(&run(ProviderErrorKind::StreamCut)),
            Exit::Transport
        );
        let plain = RunError::Model {
            turn: 1,
            source: ModelError::new("no provider error"),
        };
        assert_eq!(run_exit(&plain), Exit::Transport);
    }

    #[test]
    fn an_unknown_tool_past_the_budget_names_the_option() {
        let error = RunError::UnknownTool {
            tool: "weather".into(),
            call_id: "c3".into(),
            available: (0..25).map(|n| format!("t{n}")).collect(),
            attempts: 3,
            budget: 2,
        };
        let failure = Failure::run(&error, true);
        assert_eq!(failure.exit, Exit::Run);
        assert!(
            failure.message.starts_with(
                "the model called \"weather\", a tool no server offers, 3 times, more than \
                 --max-turns allows (the tools: t0, t1,"
            ),
            "{}",
            failure.message
        );
        assert!(
            failure.message.ends_with("t19 and 5 more)"),
            "{}",
            failure.message
        );
    }

    #[test]
    fn tool_failures_map_by_their_mcp_cause() {
        let tool = |source: Box<dyn std::error::Error + Send + Sync>| RunError::Tool {
            tool: "read".into(),
            call_id: "c1".into(),
            source,
        };
        let protocol = golem_agent::mcp::Error::Protocol {
            operation: "tools/call read".into(),
            source: golem_agent::mcp::ProtocolError {
                code: -32602,
                message: "bad".into(),
                data: None,
            },
        };
        assert_eq!(run_exit(&tool(Box::new(protocol))), Exit::Refused);
        let closed = golem_agent::mcp::Error::Spawn {
            command: "x".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(run_exit(&tool(Box::new(closed))), Exit::Transport);
        assert_eq!(
            run_exit(&tool(Box::new(std::io::Error::other("own")))),
            Exit::Run
        );
        assert_eq!(run_exit(&RunError::TurnLimit { max_turns: 3 }), Exit::Run);
        assert_eq!(
            run_exit(&RunError::ToolTimeout {
                tool: "t".into(),
                call_id: "c".into(),
                timeout: std::time::Duration::from_secs(1)
            }),
            Exit::Timeout
        );
    }
}
