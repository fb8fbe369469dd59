//! The crate's error types.
//!
//! [`Error`] is what every client operation returns; its message always
//! starts with `mcp: <operation>:` so a log line says where it came from.
//! [`TransportError`] is what a [`Transport`](crate::Transport) returns; the
//! client wraps it, keeping it as the `source()`.

use std::fmt;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;

use crate::wire::call_result::CallResult;
use crate::wire::jsonrpc::ProtocolError;

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

/// `error`'s message, followed by its innermost cause's when that says
/// something more ("error sending request: Connection refused (os error
/// 111)"), so that a one-line message names what actually went wrong.
fn with_root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut root = error;
    while let Some(source) = root.source() {
        root = source;
    }
    let (top, bottom) = (error.to_string(), root.to_string());
    if std::ptr::addr_eq(root, error) || top.contains(&bottom) {
        top
    } else {
        format!("{top}: {bottom}")
    }
}

/// How a timeout's message ends: the server's last stderr words, which
/// usually say why it never answered, or the two likely causes.
fn describe_stderr_tail(tail: &str) -> String {
    match stderr_excerpt(tail) {
        Some(excerpt) => format!("; its stderr ended with:\n{excerpt}"),
        None => "; it may be stuck or slow to start (allow it more time)".to_owned(),
    }
}

/// The last [`DISPLAYED_STDERR`] bytes of a stderr tail, `…` in front when
/// cut; `None` when there is nothing but whitespace.
fn stderr_excerpt(tail: &str) -> Option<String> {
    let tail = tail.trim_end();
    if tail.is_empty() {
        return None;
    }
    let mut start = tail.len().saturating_sub(DISPLAYED_STDERR);
    while !tail.is_char_boundary(start) {
        start += 1;
    }
    let ellipsis = if start > 0 { "…" } else { "" };
    Some(format!("{ellipsis}{}", &tail[start..]))
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
    pub fn auth_error(&self) -> Option<&crate::auth::AuthError> {
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

/// An error from a [`Transport`](crate::Transport).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// An I/O operation on the connection failed.
    #[error("{context}: {source}")]
    Io {
        /// What the transport was doing, e.g. `write to the server's stdin`.
        context: &'static str,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The server process exited (or closed its stdout, which ends the
    /// session just the same).
    #[error("{0}")]
    ProcessExited(ProcessExit),
    /// The peer sent a message longer than the configured maximum. The
    /// transport closed itself: the rest of that message cannot be skipped
    /// reliably.
    #[error(
        "the server sent a message longer than the limit of {limit} bytes; the transport was \
         closed (raise max_message_bytes if such messages are expected)"
    )]
    MessageTooLarge {
        /// The configured limit in bytes.
        limit: usize,
    },
    /// The server answered with a non-2xx HTTP status.
    #[error("{0}")]
    HttpStatus(Box<HttpStatusError>),
    /// An HTTP request failed before an answer (connection refused, reset,
    /// TLS failure, ...). The message ends with the root cause (the HTTP
    /// client's own message says little: "error sending request").
    #[error("{context}: {}", with_root_cause(&**.source))]
    Http {
        /// What the transport was doing, e.g. `POST`.
        context: &'static str,
        /// The HTTP client's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// The answer ended without the response to the request.
    #[error("{detail}")]
    StreamEnded {
        /// What happened.
        detail: String,
    },
    /// The server answered in a way the transport cannot read (an unexpected
    /// content type, a malformed event stream).
    #[error("unexpected answer from the server: {detail}")]
    UnexpectedResponse {
        /// What was unexpected.
        detail: String,
    },
    /// The peer ended the connection (for transports without a process).
    #[error("the server closed the connection")]
    ConnectionClosed,
    /// The transport was closed earlier, by `close()` or after a fatal error.
    #[error("the transport is closed")]
    Closed,
    /// The server refused the request for want of authorization, and the
    /// transport's auth provider could not authorize: the cause is the
    /// provider's error (`golem_mcp::auth::AuthError` for the providers of
    /// this crate; see [`Error::auth_error`]).
    #[error("{0}")]
    Authorization(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
    /// Any other failure of a custom transport.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl TransportError {
    /// A copy of this error for one more request that it fails: the
    /// connection's end is reported to every request in flight, each with
    /// an error of its own. Variants holding only data are cloned; the
    /// others keep the original as their cause.
    pub(crate) fn duplicate(self: &Arc<Self>) -> TransportError {
        match &**self {
            TransportError::Io { context, source } => TransportError::Io {
                context,
                source: io::Error::new(source.kind(), SharedCause(self.clone())),
            },
            TransportError::ProcessExited(exit) => TransportError::ProcessExited(exit.clone()),
            TransportError::MessageTooLarge { limit } => {
                TransportError::MessageTooLarge { limit: *limit }
            }
            TransportError::HttpStatus(status) => TransportError::HttpStatus(status.clone()),
            TransportError::Http { context, .. } => TransportError::Http {
                context,
                source: Box::new(SharedCause(self.clone())),
            },
            TransportError::StreamEnded { detail } => TransportError::StreamEnded {
                detail: detail.clone(),
            },
            TransportError::UnexpectedResponse { detail } => TransportError::UnexpectedResponse {
                detail: detail.clone(),
            },
            TransportError::ConnectionClosed => TransportError::ConnectionClosed,
            TransportError::Closed => TransportError::Closed,
            TransportError::Authorization(_) => {
                TransportError::Authorization(Box::new(SharedCause(self.clone())))
            }
            TransportError::Other(_) => TransportError::Other(Box::new(SharedCause(self.clone()))),
        }
    }
}

/// The cause inside a [`TransportError`] shared by several requests: it
/// shows as, and chains to, the original's cause.
#[derive(Debug)]
struct SharedCause(Arc<TransportError>);

impl SharedCause {
    fn cause(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.0 {
            TransportError::Io { source, .. } => Some(source),
            TransportError::Http { source, .. }
            | TransportError::Authorization(source)
            | TransportError::Other(source) => Some(&**source),
            _ => None,
        }
    }
}

impl fmt::Display for SharedCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cause() {
            Some(cause) => fmt::Display::fmt(cause, f),
            None => fmt::Display::fmt(&self.0, f),
        }
    }
}

impl std::error::Error for SharedCause {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause().and_then(std::error::Error::source)
    }
}

/// A non-2xx answer from an HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpStatusError {
    /// The HTTP status code.
    pub status: u16,
    /// The URL that answered.
    pub url: String,
    /// The start of the answer's body (at most 1 KiB), for diagnostics.
    pub body_excerpt: String,
    /// Whether this is a 404 to a request that carried a session id: the
    /// server no longer knows the session. See
    /// [`is_session_expired`](HttpStatusError::is_session_expired).
    pub session_expired: bool,
    /// The answer's `WWW-Authenticate` header, when it had one (a `401` or
    /// `403` says there how to authorize).
    pub www_authenticate: Option<String>,
    /// The answer's `Retry-After` header, when it had one (a `429` or `503`
    /// says there when to try again).
    pub retry_after: Option<String>,
}

impl HttpStatusError {
    /// Whether the server dropped the session (a 404 to a request carrying
    /// its id). The session cannot be continued: close this client and
    /// initialize a fresh one (or set
    /// `HttpConfig::reinitialize_expired_session` to have the transport do
    /// it and resend the request once).
    pub fn is_session_expired(&self) -> bool {
        self.session_expired
    }
}

impl fmt::Display for HttpStatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {} from {}", self.status, self.url)?;
        if self.session_expired {
            write!(
                f,
                " (the server no longer knows this session; initialize a new client)"
            )?;
        } else if self.status == 401 {
            write!(
                f,
                " (the server requires authorization: send a token in an \
                 \"Authorization: Bearer …\" header)"
            )?;
        }
        let excerpt = one_line(&self.body_excerpt, DISPLAYED_BODY);
        if !excerpt.is_empty() {
            write!(f, ": {excerpt}")?;
        }
        Ok(())
    }
}

/// How much of an HTTP error body a message shows (the full excerpt stays
/// in [`HttpStatusError::body_excerpt`]).
const DISPLAYED_BODY: usize = 200;

/// `body` as one line of at most `limit` characters: markup tags dropped
/// (an error page's text is what says something), whitespace runs made one
/// space, `…` where it was cut.
fn one_line(body: &str, limit: usize) -> String {
    let mut text = String::with_capacity(body.len().min(limit * 4));
    let mut in_tag = false;
    let markup = body.trim_start().starts_with('<');
    for c in body.chars() {
        match c {
            '<' if markup => in_tag = true,
            '>' if markup && in_tag => {
                in_tag = false;
                text.push(' ');
            }
            _ if in_tag => {}
            c if c.is_whitespace() => text.push(' '),
            c => text.push(c),
        }
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    let line = words.join(" ");
    match line.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// How a stdio server process ended, with the last words it wrote to stderr.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessExit {
    /// The exit status; `None` when the process closed its stdout but had not
    /// exited yet when the transport gave up waiting for it.
    pub status: Option<ExitStatus>,
    /// The end of what the server wrote to stderr (empty when stderr was
    /// inherited or discarded), lossily decoded as UTF-8.
    pub stderr_tail: String,
    /// Whether stderr was captured at all (`StderrMode::Tail`); when it was
    /// not, an empty tail says nothing about what the server wrote.
    pub stderr_captured: bool,
    /// Lines the server wrote to stdout that were not JSON-RPC messages and
    /// were skipped (the last few, each shortened).
    pub skipped_stdout: Vec<String>,
}

/// How much of the stderr tail an error message shows (the full tail stays in
/// [`ProcessExit::stderr_tail`]).
const DISPLAYED_STDERR: usize = 2048;

impl fmt::Display for ProcessExit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.status {
            Some(status) => write!(f, "the server process exited ({status})")?,
            None => write!(f, "the server process closed its pipes but has not exited")?,
        }
        match stderr_excerpt(&self.stderr_tail) {
            Some(excerpt) => write!(f, "; its stderr ended with:\n{excerpt}")?,
            None if self.stderr_captured => write!(f, "; it wrote nothing to stderr")?,
            None => {}
        }
        if let Some(last) = self.skipped_stdout.last() {
            write!(
                f,
                "\n(it also wrote {} non-JSON line(s) to stdout, the last: {last:?})",
                self.skipped_stdout.len()
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, body: &str) -> HttpStatusError {
        HttpStatusError {
            status,
            url: "http://127.0.0.1:1/mcp".to_owned(),
            body_excerpt: body.to_owned(),
            session_expired: false,
            www_authenticate: None,
            retry_after: None,
        }
    }

    #[test]
    fn a_401_says_how_to_authorize() {
        assert_eq!(
            status(401, "").to_string(),
            "HTTP 401 from http://127.0.0.1:1/mcp (the server requires authorization: send a \
             token in an \"Authorization: Bearer …\" header)"
        );
    }

    #[test]
    fn a_body_shows_as_one_short_line() {
        assert_eq!(
            status(
                404,
                "<!DOCTYPE html>\n<html>\n  <h1>Not   Found</h1>\n</html>"
            )
            .to_string(),
            "HTTP 404 from http://127.0.0.1:1/mcp: Not Found"
        );
        assert_eq!(
            status(500, "line one\n\tline two").to_string(),
            "HTTP 500 from http://127.0.0.1:1/mcp: line one line two"
        );
        let long = status(500, &"é".repeat(300)).to_string();
        assert!(
            long.ends_with(&format!("{}…", "é".repeat(DISPLAYED_BODY))),
            "{long}"
        );
        // Not markup: a '<' in plain text stays.
        assert_eq!(
            status(400, "a < b").to_string(),
            "HTTP 400 from http://127.0.0.1:1/mcp: a < b"
        );
    }

    #[test]
    fn the_root_cause_ends_the_message_once() {
        let io = io::Error::new(io::ErrorKind::ConnectionRefused, "Connection refused");
        let error = TransportError::Http {
            context: "POST",
            source: Box::new(io),
        };
        assert_eq!(error.to_string(), "POST: Connection refused");
    }
}
