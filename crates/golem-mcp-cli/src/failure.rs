//! Exit statuses, and how a failure becomes one clear line on stderr (and,
//! with `--json`, one JSON object on stdout). It knows nothing of the stage
//! that failed: planning and running alike return a `Failure`, library
//! errors mapped by kind.

use std::io::Write as _;
use std::process::ExitCode;

use golem_mcp::ProtocolError;
use serde_json::{Value, json};

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
    /// SIGHUP (the terminal went away) ended the command; 128 + 1.
    HungUp = 129,
    /// Ctrl-C (SIGINT) ended the command; 128 + 2, as shells report it.
    Interrupted = 130,
    /// SIGTERM ended the command; 128 + 15.
    Terminated = 143,
}

impl Exit {
    /// The status as `--json` errors name it.
    pub fn kind(self) -> &'static str {
        match self {
            Exit::Success => "success",
            Exit::ToolError => "tool",
            Exit::Usage => "usage",
            Exit::Protocol => "protocol",
            Exit::Transport => "transport",
            Exit::Timeout => "timeout",
            Exit::HungUp => "hangup",
            Exit::Interrupted => "interrupted",
            Exit::Terminated => "terminated",
        }
    }
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
    /// What the server answered, when it refused (boxed: a `Failure` is
    /// the error of every planning step, and mostly has none).
    pub answer: Option<Box<Answer>>,
}

/// What the server answered when it refused, for `--json`.
#[derive(Debug)]
pub struct Answer {
    /// Its JSON-RPC error, when it answered with one.
    pub jsonrpc: Option<ProtocolError>,
    /// The HTTP status and the URL that answered with it, when an HTTP
    /// answer was refused.
    pub http: Option<(u16, String)>,
}

impl Failure {
    /// A failure with this exit status and message.
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        Failure {
            exit,
            message: message.into(),
            server_exited: false,
            answer: None,
        }
    }

    /// A usage error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure::new(Exit::Usage, message)
    }

    /// A failure of the client library, with the exit status its kind
    /// deserves.
    pub fn from_mcp(error: &golem_mcp::Error) -> Self {
        if let Some(operation) = echoed(error) {
            return Failure::new(
                Exit::Transport,
                format!(
                    "{operation}: the server sent our own request back instead of answering \
                     it: it is not an MCP server (a program that echoes its input, such as \
                     `cat`, does this); check the server command"
                ),
            );
        }
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
        let answer = Answer {
            jsonrpc: error.protocol_error().cloned(),
            http: error
                .http_status()
                .map(|refused| (refused.status, refused.url.clone())),
        };
        Failure {
            exit,
            message: describe(error),
            server_exited: error.process_exit().is_some(),
            answer: (answer.jsonrpc.is_some() || answer.http.is_some()).then(|| Box::new(answer)),
        }
    }

    /// Prints the message on stderr and, with `--json` (`json`), the
    /// failure as one JSON object on stdout ([`Failure::to_json`]); returns
    /// the exit status.
    pub fn report(self, json: bool) -> Exit {
        // The message carries what servers said: escaped, and indented
        // past its first line so that none of it passes for a line of ours.
        eprintln!("golem-mcp: {}", golem_terminal::message(&self.message));
        if json {
            self.print_json();
        }
        self.exit
    }

    /// Prints [`Failure::to_json`] on stdout.
    pub fn print_json(&self) {
        let mut text = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        text.push('\n');
        let mut stdout = std::io::stdout().lock();
        // Nothing is left to report a closed stdout to.
        let _ = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
    }

    /// A command line clap refused: a usage error (exit 2) with clap's
    /// one-line message.
    pub fn from_clap(error: &clap::Error) -> Self {
        let rendered = error.render().to_string();
        let first = rendered.lines().next().unwrap_or_default();
        let message = first.strip_prefix("error: ").unwrap_or(first).trim();
        Failure::usage(message.to_owned())
    }

    /// The failure as `--json` prints it: `{"error": {"kind", "exit",
    /// "message"}}`, with `"jsonrpc": {"code", "message", "data"}` when the
    /// server answered with a JSON-RPC error and `"http": {"status",
    /// "url"}` when an HTTP answer was refused.
    pub fn to_json(&self) -> Value {
        let mut error = json!({
            "kind": self.exit.kind(),
            "exit": self.exit as u8,
            "message": self.message,
        });
        let answer = self.answer.as_deref();
        if let Some(rpc) = answer.and_then(|answer| answer.jsonrpc.as_ref()) {
            error["jsonrpc"] = json!({"code": rpc.code, "message": rpc.message, "data": rpc.data});
        }
        if let Some((status, url)) = answer.and_then(|answer| answer.http.as_ref()) {
            error["http"] = json!({"status": status, "url": url});
        }
        json!({ "error": error })
    }
}

/// The operation, when `error` is the client's own refusal come back: a
/// "server" that echoes its input (`cat`) sends our request back, the
/// client refuses it as a server request it does not offer (-32601, "this
/// client does not offer" the method), and the echo of that refusal then
/// answers our request, which would blame the client. The refusal is the
/// error (a JSON-RPC error), or ends what made an answer invalid (a
/// `server/discover` probe pinned to the modern era).
fn echoed(error: &golem_mcp::Error) -> Option<&str> {
    let (operation, said) = match error {
        golem_mcp::Error::Protocol {
            operation, source, ..
        } if source.code == -32601 => (operation, source.message.as_str()),
        golem_mcp::Error::InvalidResponse {
            operation, detail, ..
        } => (operation, detail.as_str()),
        _ => return None,
    };
    let method = operation.split(' ').next().unwrap_or_default();
    let refusal = format!("Method not found: this client does not offer {method:?}");
    said.ends_with(&refusal).then_some(operation.as_str())
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

    #[test]
    fn our_own_refusal_echoed_back_says_the_server_is_no_mcp_server() {
        let refusal = |operation: &str, method: &str| golem_mcp::Error::Protocol {
            operation: operation.into(),
            source: ProtocolError {
                code: -32601,
                message: format!("Method not found: this client does not offer {method:?}"),
                data: None,
            },
        };
        let echoed = Failure::from_mcp(&refusal("initialize", "initialize"));
        assert_eq!(echoed.exit, Exit::Transport);
        assert!(
            echoed
                .message
                .starts_with("initialize: the server sent our own request back"),
            "{echoed:?}"
        );
        assert!(echoed.answer.is_none(), "{echoed:?}");
        let listed = Failure::from_mcp(&refusal("tools/call echo", "tools/call"));
        assert!(listed.message.contains("not an MCP server"), "{listed:?}");
        let pinned = golem_mcp::Error::InvalidResponse {
            operation: "server/discover".into(),
            detail: "the server does not speak protocol 2026-07-28: error -32601: Method not \
                     found: this client does not offer \"server/discover\""
                .into(),
        };
        assert!(
            Failure::from_mcp(&pinned)
                .message
                .contains("not an MCP server"),
            "{:?}",
            Failure::from_mcp(&pinned)
        );
        // A server's own -32601 for another method is its answer.
        let refused = Failure::from_mcp(&refusal("tools/call echo", "sampling/createMessage"));
        assert_eq!(refused.exit, Exit::Protocol);
    }

    #[test]
    fn as_json_a_failure_names_its_kind_exit_and_the_servers_answer() {
        let usage = Failure::usage("no server given").to_json();
        assert_eq!(
            usage,
            json!({"error": {"kind": "usage", "exit": 2, "message": "no server given"}})
        );
        let protocol = golem_mcp::Error::Protocol {
            operation: "tools/call x".into(),
            source: ProtocolError {
                code: -32602,
                message: "Unknown tool: x".into(),
                data: Some(json!({"tool": "x"})),
            },
        };
        let value = Failure::from_mcp(&protocol).to_json();
        assert_eq!(value["error"]["kind"], "protocol");
        assert_eq!(value["error"]["exit"], 3);
        assert_eq!(
            value["error"]["jsonrpc"],
            json!({"code": -32602, "message": "Unknown tool: x", "data": {"tool": "x"}})
        );
        assert!(value["error"].get("http").is_none(), "{value}");
        let cut = Failure::new(Exit::Terminated, "terminated (SIGTERM) while calling x");
        assert_eq!(cut.to_json()["error"]["kind"], "terminated");
        assert_eq!(cut.to_json()["error"]["exit"], 143);
    }
}
