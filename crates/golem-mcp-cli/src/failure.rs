//! Exit statuses, and how a failure becomes one clear line on stderr. It
//! knows nothing of the stage that failed: planning and running alike
//! return a `Failure`, library errors mapped by kind.

use std::process::ExitCode;

/// The exit status of `golem-mcp`. The numbers are part of its interface
/// (ADR 0005).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The command did what was asked.
    Success = 0,
    /// The tool answered with `isError: true` (its text is still printed).
    ToolError = 1,
    /// The command line, the arguments or the configuration are wrong.
    Usage = 2,
    /// The server answered with a JSON-RPC error.
    Protocol = 3,
    /// The server could not be reached or talked to: it is not there, the
    /// process died or could not start, HTTP failed, an answer was invalid.
    Transport = 4,
    /// `--timeout` ran out.
    Timeout = 5,
    /// Ctrl-C (SIGINT) ended the command; 128 + 2, as shells report it.
    Interrupted = 130,
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
    /// `golem-mcp: `.
    pub message: String,
    /// Whether the stdio server process is known to have exited: there is
    /// no session left to close.
    pub server_exited: bool,
}

impl Failure {
    /// A failure with this exit status and message.
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Failure {
            exit,
            message: message.into(),
            server_exited: false,
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::new(Exit::Usage, message)
    }

    /// A failure of the client library, with the exit status its kind
    /// deserves.
    pub fn from_mcp(error: &golem_mcp::Error) -> Self {
        let exit = match error {
            golem_mcp::Error::Protocol { .. } => Exit::Protocol,
            // A malformed -H value, a --cwd that is not a directory, a URL
            // that does not parse: found before anything was started.
            golem_mcp::Error::InvalidConfig { .. } => Exit::Usage,
            // A prompt's arguments that do not fit its declaration: nothing
            // was sent.
            golem_mcp::Error::InvalidRequest { .. } => Exit::Usage,
            // `call --task` where the server or the tool offers no tasks.
            golem_mcp::Error::NotSupported { .. } => Exit::Usage,
            _ => Exit::Transport,
        };
        Failure {
            exit,
            message: describe(error),
            server_exited: error.process_exit().is_some(),
        }
    }

    /// Prints the message on stderr and returns the exit status.
    pub fn report(self) -> Exit {
        // The message carries what servers said: escaped, and indented
        // past its first line so that none of it passes for a line of ours.
        eprintln!("golem-mcp: {}", golem_terminal::message(&self.message));
        self.exit
    }
}

/// An error's message without the library's `mcp: ` prefix, followed by its
/// root cause when the message does not already say it (for HTTP failures
/// the root cause is what matters: "Connection refused").
pub fn describe(error: &(dyn std::error::Error + 'static)) -> String {
    let shown = error.to_string();
    let mut message = shown.strip_prefix("mcp: ").unwrap_or(&shown).to_owned();
    let mut root = error.source();
    while let Some(next) = root.and_then(|cause| cause.source()) {
        root = Some(next);
    }
    if let Some(root) = root {
        let cause = root.to_string();
        if !cause.is_empty() && !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    message
}

/// The message of `result`, which must be a usage error (exit 2); for the
/// tests of the usage checks.
#[cfg(test)]
#[track_caller]
pub fn usage_message<T: std::fmt::Debug>(result: Result<T, Failure>) -> String {
    let failure = result.expect_err("a usage error");
    assert_eq!(failure.exit, Exit::Usage, "{failure:?}");
    failure.message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Layered {
        text: &'static str,
        source: Option<Box<Layered>>,
    }

    impl std::fmt::Display for Layered {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.text)
        }
    }

    impl std::error::Error for Layered {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.source
                .as_deref()
                .map(|inner| inner as &(dyn std::error::Error + 'static))
        }
    }

    fn chain(texts: &[&'static str]) -> Layered {
        let mut error: Option<Layered> = None;
        for text in texts.iter().rev() {
            error = Some(Layered {
                text,
                source: error.map(Box::new),
            });
        }
        error.expect("at least one")
    }

    #[test]
    fn the_root_cause_is_appended_once() {
        let error = chain(&[
            "mcp: initialize: POST: error sending request",
            "client error (Connect)",
            "Connection refused (os error 111)",
        ]);
        assert_eq!(
            describe(&error),
            "initialize: POST: error sending request: Connection refused (os error 111)"
        );
        let error = chain(&["mcp: spawn: not found (No such file)", "No such file"]);
        assert_eq!(describe(&error), "spawn: not found (No such file)");
        assert_eq!(describe(&chain(&["plain"])), "plain");
    }

    #[test]
    fn library_errors_map_to_exit_statuses() {
        let protocol = golem_mcp::Error::Protocol {
            operation: "tools/call x".into(),
            source: golem_mcp::ProtocolError {
                code: -32602,
                message: "Unknown tool: x".into(),
                data: None,
            },
        };
        let failure = Failure::from_mcp(&protocol);
        assert_eq!(failure.exit, Exit::Protocol);
        assert!(failure.message.contains("Unknown tool: x"), "{failure:?}");
        let invalid = golem_mcp::Error::InvalidConfig {
            operation: "spawn",
            field: "dir".into(),
            problem: "missing".into(),
        };
        assert_eq!(Failure::from_mcp(&invalid).exit, Exit::Usage);
        let spawn = golem_mcp::Error::Spawn {
            command: "nope".into(),
            source: std::io::Error::from(std::io::ErrorKind::NotFound),
        };
        assert_eq!(Failure::from_mcp(&spawn).exit, Exit::Transport);
    }
}
