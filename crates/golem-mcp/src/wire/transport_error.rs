//! What a transport reports when it fails: [`TransportError`], with the
//! exit of a server process ([`ProcessExit`]) and a refused HTTP answer
//! ([`HttpStatusError`]) as its own types. Part of the transport seam: the
//! crate's [`Error`](crate::Error) wraps these, they know nothing of it.

use std::fmt;
use std::io;
use std::process::ExitStatus;
use std::sync::Arc;

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
    /// TLS failure, ...), or an answer's body broke. The message names the
    /// request and its URL and ends with the root cause, once:
    /// `POST http://127.0.0.1:9/mcp: Connection refused (os error 111)`.
    #[error("{}: {}", request_line(.context, .url.as_deref()), with_root_cause(&**.source))]
    Http {
        /// What the transport was doing, e.g. `POST` or `GET (resume the
        /// event stream)`.
        context: &'static str,
        /// The URL of the request that failed, without credentials, query
        /// or fragment (as [`HttpStatusError::url`]); `None` when the
        /// answer had begun and its body broke, as the URL was reached.
        url: Option<String>,
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
    /// this crate; see [`Error::auth_error`](crate::Error::auth_error)).
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
            TransportError::Http { context, url, .. } => TransportError::Http {
                context,
                url: url.clone(),
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
    /// The status's standard reason phrase (`Internal Server Error` for
    /// 500), when it has one: the message shows it after the code.
    pub reason: Option<&'static str>,
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
    /// Where a redirect that was not followed pointed (its `Location`,
    /// without credentials, query or fragment): the default client follows
    /// redirects within the server's origin only.
    pub location: Option<String>,
}

impl HttpStatusError {
    /// Whether the server dropped the session (a 404 to a request carrying
    /// its id). The session cannot be continued: close this client and
    /// initialize a fresh one (or set
    /// `HttpConfig::reinitialize_expired_session` to have the client start a
    /// new session and resend the request once).
    pub fn is_session_expired(&self) -> bool {
        self.session_expired
    }
}

impl fmt::Display for HttpStatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(reason) = self.reason {
            write!(f, " {reason}")?;
        }
        write!(f, " from {}", self.url)?;
        // Whether the message says what the status means here; if not, and
        // the body is empty, it says so, lest the reader look for more.
        let explained =
            self.session_expired || matches!(self.status, 401 | 404) || self.location.is_some();
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
        } else if self.status == 404 {
            write!(
                f,
                " (no MCP endpoint at this URL; check its path: servers usually serve it at \
                 /mcp, or at /sse for the older HTTP+SSE transport)"
            )?;
        } else if let Some(location) = &self.location {
            write!(
                f,
                " (a redirect to {location}, another origin: not followed, so that \
                 nothing sent to this server goes there; use that URL if you trust it)"
            )?;
        }
        let excerpt = one_line(&self.body_excerpt, DISPLAYED_BODY);
        if !excerpt.is_empty() {
            write!(f, ": {excerpt}")?;
        } else if !explained {
            f.write_str(" (empty body)")?;
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
    /// Whether stderr was captured at all (`StderrMode::Tail` or `Lines`);
    /// when it was not, an empty tail says nothing about what the server
    /// wrote.
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

/// What a [`TransportError::Http`] names: the request, with its URL after
/// the method when there is one (`GET http://…/mcp (resume the event
/// stream)`), so that a refused connection says where it was refused.
fn request_line(context: &str, url: Option<&str>) -> String {
    let Some(url) = url else {
        return context.to_owned();
    };
    match context.split_once(" (") {
        Some((method, purpose)) => format!("{method} {url} ({purpose}"),
        None => format!("{context} {url}"),
    }
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

/// The last `DISPLAYED_STDERR` bytes of a stderr tail, `…` in front when
/// cut; `None` when there is nothing but whitespace.
pub(crate) fn stderr_excerpt(tail: &str) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16, body: &str) -> HttpStatusError {
        // The phrases `http::StatusCode::canonical_reason` gives.
        let reason = match status {
            307 => "Temporary Redirect",
            400 => "Bad Request",
            401 => "Unauthorized",
            404 => "Not Found",
            _ => "Internal Server Error",
        };
        HttpStatusError {
            status,
            reason: Some(reason),
            url: "http://127.0.0.1:1/mcp".to_owned(),
            body_excerpt: body.to_owned(),
            session_expired: false,
            www_authenticate: None,
            retry_after: None,
            location: None,
        }
    }

    #[test]
    fn a_redirect_not_followed_says_where_it_pointed_and_why() {
        let error = HttpStatusError {
            location: Some("https://elsewhere.example/mcp".to_owned()),
            ..status(307, "")
        };
        let text = error.to_string();
        assert!(
            text.starts_with("HTTP 307 Temporary Redirect from http://127.0.0.1:1/mcp (a redirect to https://elsewhere.example/mcp, another origin: not followed"),
            "{text}"
        );
    }

    #[test]
    fn a_401_says_how_to_authorize() {
        assert_eq!(
            status(401, "").to_string(),
            "HTTP 401 Unauthorized from http://127.0.0.1:1/mcp (the server requires authorization: send a \
             token in an \"Authorization: Bearer …\" header)"
        );
    }

    #[test]
    fn a_body_shows_as_one_short_line() {
        assert_eq!(
            status(
                500,
                "<!DOCTYPE html>\n<html>\n  <h1>Not   Found</h1>\n</html>"
            )
            .to_string(),
            "HTTP 500 Internal Server Error from http://127.0.0.1:1/mcp: Not Found"
        );
        assert_eq!(
            status(500, "line one\n\tline two").to_string(),
            "HTTP 500 Internal Server Error from http://127.0.0.1:1/mcp: line one line two"
        );
        let long = status(500, &"é".repeat(300)).to_string();
        assert!(
            long.ends_with(&format!("{}…", "é".repeat(DISPLAYED_BODY))),
            "{long}"
        );
        // Not markup: a '<' in plain text stays.
        assert_eq!(
            status(400, "a < b").to_string(),
            "HTTP 400 Bad Request from http://127.0.0.1:1/mcp: a < b"
        );
    }

    #[test]
    fn an_empty_body_is_said_to_be_empty_where_nothing_else_explains_the_status() {
        assert_eq!(
            status(500, "").to_string(),
            "HTTP 500 Internal Server Error from http://127.0.0.1:1/mcp (empty body)"
        );
        // Whitespace is no more of a body.
        assert_eq!(
            status(500, " \n").to_string(),
            "HTTP 500 Internal Server Error from http://127.0.0.1:1/mcp (empty body)"
        );
        let unnamed = HttpStatusError {
            reason: None,
            ..status(599, "")
        };
        assert_eq!(
            unnamed.to_string(),
            "HTTP 599 from http://127.0.0.1:1/mcp (empty body)"
        );
        // A status the message explains needs no word on its body.
        assert!(!status(401, "").to_string().contains("empty body"));
        assert!(!status(404, "").to_string().contains("empty body"));
    }

    #[test]
    fn the_root_cause_ends_the_message_once() {
        let io = io::Error::new(io::ErrorKind::ConnectionRefused, "Connection refused");
        let error = TransportError::Http {
            context: "POST",
            url: None,
            source: Box::new(io),
        };
        assert_eq!(error.to_string(), "POST: Connection refused");
    }

    #[test]
    fn a_failed_request_names_its_url_after_the_method() {
        let refused = || io::Error::new(io::ErrorKind::ConnectionRefused, "Connection refused");
        let url = Some("http://127.0.0.1:9/mcp".to_owned());
        let post = TransportError::Http {
            context: "POST",
            url: url.clone(),
            source: Box::new(refused()),
        };
        assert_eq!(
            post.to_string(),
            "POST http://127.0.0.1:9/mcp: Connection refused"
        );
        let get = TransportError::Http {
            context: "GET (resume the event stream)",
            url,
            source: Box::new(refused()),
        };
        assert_eq!(
            get.to_string(),
            "GET http://127.0.0.1:9/mcp (resume the event stream): Connection refused"
        );
        // A copy for another request in flight says the same.
        assert_eq!(
            Arc::new(get).duplicate().to_string(),
            "GET http://127.0.0.1:9/mcp (resume the event stream): Connection refused"
        );
    }

    #[test]
    fn a_404_outside_a_session_says_to_check_the_path() {
        let text = status(404, "").to_string();
        assert!(text.contains("check its path"), "{text}");
        assert!(
            text.contains("at /mcp, or at /sse for the older HTTP+SSE transport"),
            "{text}"
        );
        let expired = HttpStatusError {
            session_expired: true,
            ..status(404, "")
        };
        assert!(!expired.to_string().contains("check its path"));
    }
}
