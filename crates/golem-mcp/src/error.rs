//! The crate's error types.
//!
//! [`Error`] is what every client operation returns; its message always
//! starts with `mcp: <operation>:` so a log line says where it came from.
//! [`TransportError`] (defined with the transport seam, in `wire/`) is what a
//! [`Transport`](crate::Transport) returns; the client wraps it, keeping it
//! as the `source()`. A configuration file's problems are [`ConfigError`],
//! a tool result that breaks its output schema [`OutputError`].

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::wire::call_result::CallResult;
use crate::wire::jsonrpc::ProtocolError;
use crate::wire::transport_error::stderr_excerpt;
use crate::wire::transport_error::{HttpStatusError, ProcessExit, TransportError};

/// An error from a client operation.
///
/// Which variant tells what went wrong and what to do; the helper methods
/// ([`protocol_error`](Error::protocol_error),
/// [`process_exit`](Error::process_exit)) reach into the common cases.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered the request with a JSON-RPC error.
    #[error("mcp: {operation}: the server answered with an error: {source}")]
    Protocol {
        /// The operation that failed, e.g. `tools/call echo`.
        operation: String,
        /// The server's error object.
        #[source]
        source: ProtocolError,
    },
    /// The transport failed: the connection broke, the server process died,
    /// a message was too large. The transport is unusable afterwards unless
    /// the error says otherwise.
    #[error("mcp: {operation}: {source}")]
    Transport {
        /// The operation that failed.
        operation: String,
        /// What the transport reported.
        #[source]
        source: TransportError,
    },
    /// An operation other than `initialize` ran before
    /// [`Client::initialize`](crate::Client::initialize) succeeded.
    #[error("mcp: {operation}: the client is not initialized; call Client::initialize first")]
    NotInitialized {
        /// The operation that was refused.
        operation: String,
    },
    /// The client was closed with [`Client::close`](crate::Client::close).
    #[error("mcp: {operation}: the client is closed; create a new client to reconnect")]
    Closed {
        /// The operation that was refused.
        operation: String,
    },
    /// The server chose a protocol version this client does not speak.
    #[error(
        "mcp: initialize: the server chose protocol version {received:?}, but this client \
         offered {offered:?} and speaks only {supported}"
    )]
    VersionMismatch {
        /// The version this client offered (its newest).
        offered: String,
        /// The version the server answered with.
        received: String,
        /// Every version this client accepts, comma-separated.
        supported: String,
    },
    /// The server's answer did not have the shape the protocol requires.
    #[error("mcp: {operation}: invalid answer from the server: {detail}")]
    InvalidResponse {
        /// The operation whose answer was invalid.
        operation: String,
        /// What was wrong with it.
        detail: String,
    },
    /// A tool's result does not keep the promise of its `outputSchema`
    /// (see [`OutputError`]): checked calls
    /// ([`Client::call_tool_checked`](crate::Client::call_tool_checked))
    /// return it with the result, which the caller may still use.
    #[error("mcp: {operation}: {source}")]
    Output {
        /// The call, e.g. `tools/call weather`.
        operation: String,
        /// The result as the server sent it.
        result: Box<CallResult>,
        /// What is wrong with it.
        #[source]
        source: OutputError,
    },
    /// The server or the tool does not offer what was asked for (a tool
    /// called as a task where tasks are not offered); nothing was sent.
    #[error("mcp: {operation}: not supported: {detail}")]
    NotSupported {
        /// What was asked for, e.g. `tools/call echo as a task`.
        operation: String,
        /// Why it cannot be done, and what to do instead.
        detail: String,
    },
    /// A request could not be encoded (its parameters failed to serialize).
    #[error("mcp: {operation}: cannot encode the request: {source}")]
    Encode {
        /// The operation whose request failed.
        operation: String,
        /// The serializer's error.
        #[source]
        source: serde_json::Error,
    },
    /// Paging through a list (`tools/list`, `resources/list`, ...) did not
    /// end: the server repeated a cursor.
    #[error(
        "mcp: {operation}: the server returned the cursor {cursor:?} twice; stopped paging to avoid an endless loop"
    )]
    CursorLoop {
        /// The list method, e.g. `tools/list`.
        operation: String,
        /// The repeated cursor.
        cursor: String,
    },
    /// A request the client refused to send because the server's own
    /// declarations say it cannot be right: a prompt the server does not
    /// list, a required prompt argument left out, an argument the prompt
    /// does not take. Nothing was sent.
    #[error("mcp: {operation}: not sent: {problem}")]
    InvalidRequest {
        /// The operation, e.g. `prompts/get args-prompt`.
        operation: String,
        /// What is wrong and what would be right.
        problem: String,
    },
    /// A modern server asked for input to finish a request (an
    /// elicitation, a sampling, the roots: a multi-round-trip request), and
    /// the client could not give it: no handler is registered for it, or
    /// the handler failed. The request was not sent again.
    #[error(
        "mcp: {operation}: the server asked for {method}, which could not be answered: {problem}"
    )]
    Input {
        /// The request that needed the input, e.g. `tools/call book`.
        operation: String,
        /// What the server asked for, e.g. `elicitation/create`.
        method: String,
        /// Why it could not be answered.
        problem: String,
    },
    /// A tool call the server ran as a task ended `cancelled` (the tasks
    /// extension, ADR 0025): someone cancelled it (another client holding
    /// its id, the server itself) before it was over; there is no result.
    #[error(
        "mcp: {operation}: the task was cancelled on the server before it was over{}",
        status_message.as_deref().map(|message| format!(": {message}")).unwrap_or_default()
    )]
    TaskCancelled {
        /// The call, e.g. `tools/call slow (task 786512e2)`.
        operation: String,
        /// The server's id of the task.
        task_id: String,
        /// The server's account of the cancellation, when it gave one.
        status_message: Option<String>,
    },
    /// A configuration value is invalid.
    #[error("mcp: {operation}: invalid {field}: {problem}")]
    InvalidConfig {
        /// The operation that checked it, e.g. `spawn`.
        operation: &'static str,
        /// The field at fault, e.g. `env[2]`.
        field: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// A configuration file entry was malformed (from
    /// [`Servers::connect_all`](crate::config::Servers::connect_all)).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An operation did not finish within the bound it was given (from
    /// [`Servers::connect_all`](crate::config::Servers::connect_all)); what
    /// it had started was stopped.
    #[error(
        "mcp: {operation}: no answer from the server within {after:?}{}",
        describe_stderr_tail(.stderr_tail)
    )]
    Timeout {
        /// The operation that ran out of time.
        operation: String,
        /// The bound.
        after: std::time::Duration,
        /// The end of what a stdio server wrote to stderr by then (empty
        /// for HTTP, or when it wrote nothing or stderr was not captured).
        stderr_tail: String,
    },
    /// The server process could not be started.
    #[error("mcp: spawn {command:?}: {}", describe_spawn_error(.source))]
    Spawn {
        /// The command that was to be run.
        command: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// How a timeout's message ends: the server's last stderr words, which
/// usually say why it never answered, or the two likely causes.
fn describe_stderr_tail(tail: &str) -> String {
    match stderr_excerpt(tail) {
        Some(excerpt) => format!("; its stderr ended with:\n{excerpt}"),
        None => "; it may be stuck or slow to start (allow it more time)".to_owned(),
    }
}

fn describe_spawn_error(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::NotFound => {
            format!("executable not found; check the command name and PATH ({error})")
        }
        io::ErrorKind::PermissionDenied => format!("not executable ({error})"),
        _ => error.to_string(),
    }
}

impl Error {
    /// The server's JSON-RPC error, when that is what this is.
    pub fn protocol_error(&self) -> Option<&ProtocolError> {
        match self {
            Error::Protocol { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Why a checked tool result was refused, when that is what this is.
    pub fn output_error(&self) -> Option<&OutputError> {
        match self {
            Error::Output { source, .. } => Some(source),
            _ => None,
        }
    }

    /// The server process's exit, when the server died.
    pub fn process_exit(&self) -> Option<&ProcessExit> {
        match self {
            Error::Transport {
                source: TransportError::ProcessExited(exit),
                ..
            } => Some(exit),
            _ => None,
        }
    }

    /// The HTTP status error, when an HTTP server answered with a non-2xx
    /// status.
    pub fn http_status(&self) -> Option<&HttpStatusError> {
        match self {
            Error::Transport {
                source: TransportError::HttpStatus(status),
                ..
            } => Some(status),
            _ => None,
        }
    }

    /// Whether an HTTP server dropped the session; see
    /// [`HttpStatusError::is_session_expired`] for how to recover.
    pub fn is_session_expired(&self) -> bool {
        self.http_status()
            .is_some_and(HttpStatusError::is_session_expired)
    }

    /// Why authorization failed, when the server refused the request and
    /// the transport's OAuth provider could not authorize.
    #[cfg(feature = "http")]
    pub fn auth_error(&self) -> Option<&golem_mcp_auth::AuthError> {
        match self {
            Error::Transport {
                source: TransportError::Authorization(cause),
                ..
            } => cause.downcast_ref(),
            _ => None,
        }
    }

    /// The transport's error, when the transport failed.
    pub fn transport_error(&self) -> Option<&TransportError> {
        match self {
            Error::Transport { source, .. } => Some(source),
            _ => None,
        }
    }

    pub(crate) fn transport(operation: &str, source: TransportError) -> Self {
        Error::Transport {
            operation: operation.to_owned(),
            source,
        }
    }

    pub(crate) fn encode(operation: &str, source: serde_json::Error) -> Self {
        Error::Encode {
            operation: operation.to_owned(),
            source,
        }
    }

    pub(crate) fn invalid_response(operation: &str, detail: impl fmt::Display) -> Self {
        Error::InvalidResponse {
            operation: operation.to_owned(),
            detail: detail.to_string(),
        }
    }
}

/// A problem with a configuration file. Every message starts with
/// `mcp: config <file>:` and says how to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("mcp: config {}: cannot read it: {detail}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        detail: String,
    },
    /// The text is not JSON.
    #[error("mcp: config {origin}: not valid JSON: {detail}")]
    Syntax {
        /// The file, or `configuration` for text given to [`parse`](crate::config::parse).
        origin: String,
        /// The parser's error, with line and column.
        detail: String,
    },
    /// A field has a wrong type or value, or a variable is not set.
    #[error("mcp: config {origin}: {field}: {problem}")]
    Invalid {
        /// The file, or `configuration` for text given to [`parse`](crate::config::parse).
        origin: String,
        /// The server entry, when the problem is inside one.
        server: Option<String>,
        /// The field at fault, e.g. `mcpServers.github.env.GITHUB_TOKEN`.
        field: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// [`Servers::get`](crate::config::Servers::get) was asked for a name the file does not have.
    #[error(
        "mcp: config {origin}: no server named {name:?} in \"mcpServers\"; {}",
        describe_available(available)
    )]
    UnknownServer {
        /// The file, or `configuration` for text given to [`parse`](crate::config::parse).
        origin: String,
        /// The name asked for.
        name: String,
        /// The names the file has, sorted.
        available: Vec<String>,
    },
}

fn describe_available(available: &[String]) -> String {
    if available.is_empty() {
        "the file defines no server".to_owned()
    } else {
        format!("it defines: {}", available.join(", "))
    }
}

/// Why a tool result's structured output was refused.
///
/// `isError` results are never checked: their content explains a failure
/// and need not match the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The tool declares an `outputSchema` but the result has no
    /// `structuredContent`.
    #[error("the result has no structuredContent, but the tool declares an outputSchema")]
    Missing,
    /// `structuredContent` does not match the `outputSchema`.
    #[error(
        "the structuredContent does not match the tool's outputSchema: {}",
        Mismatch::list(.mismatches, *.more)
    )]
    Mismatch {
        /// The first mismatches, in the validator's order (at least one).
        mismatches: Vec<Mismatch>,
        /// How many more there were beyond those.
        more: usize,
    },
    /// The tool's `outputSchema` is not a JSON Schema this client can
    /// compile (malformed, an unknown `$schema`, or a `$ref` to another
    /// document, which is never fetched), so no result can be checked. The
    /// tool stays listed; every checked call says this.
    #[error(
        "the tool's outputSchema is not a valid JSON Schema, so its results cannot be validated: {problem}"
    )]
    InvalidSchema {
        /// What the validator said about the schema.
        problem: String,
    },
}

/// One place where `structuredContent` does not match the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mismatch {
    /// A JSON Pointer to the offending value (`""` for the whole value,
    /// `/temperature`, `/items/0`).
    pub instance_path: String,
    /// What is wrong there, e.g. `"hot" is not of type "number"`.
    pub message: String,
}

impl Mismatch {
    fn list(mismatches: &[Mismatch], more: usize) -> String {
        let mut text = mismatches
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        if more > 0 {
            text.push_str(&format!("; and {more} more"));
        }
        text
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = match self.instance_path.as_str() {
            "" => "the top level",
            path => path,
        };
        write!(f, "at {path}: {}", self.message)
    }
}
