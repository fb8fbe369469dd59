//! How to reach an HTTP server (streamable HTTP, or the HTTP+SSE transport
//! of 2024-11-05), and the checks made on it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::client::{HttpClient, MAX_REDIRECTS};
use super::headers::{LAST_EVENT_ID_HEADER, PROTOCOL_VERSION_HEADER, SESSION_HEADER, redact};
use crate::error::Error;
use crate::transports::stdio::DEFAULT_MAX_MESSAGE_BYTES;
use golem_mcp_auth::AuthProvider;

/// Headers the transport manages; extra headers may not set them.
const RESERVED_HEADERS: &[&str] = &[
    "content-type",
    "accept",
    SESSION_HEADER,
    PROTOCOL_VERSION_HEADER,
    LAST_EVENT_ID_HEADER,
];
/// The connect timeout of the default client.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How a broken or closed event stream is resumed (protocol revision
/// 2025-11-25): with a `GET` carrying `Last-Event-ID`, after the server's
/// `retry` delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePolicy {
    /// How many reconnections in a row may fail to deliver a message before
    /// the request fails. The count restarts whenever a message arrives, or
    /// a reconnection brings a new event id (a polling server's priming
    /// event), so a server that closes the connection after every event
    /// (SSE polling) can run as long as it makes progress. For the
    /// standalone stream, only failed openings count, and a stream that
    /// fails twice at the same unreadable event.
    pub max_attempts: u32,
    /// The delay before reconnecting when the server sent no `retry` field.
    pub default_retry: Duration,
    /// The longest delay honoured, whatever the server's `retry` says.
    pub max_retry: Duration,
}

impl Default for ResumePolicy {
    /// Three attempts, one second apart unless the server says otherwise,
    /// and never more than 30 seconds apart.
    fn default() -> Self {
        ResumePolicy {
            max_attempts: 3,
            default_retry: Duration::from_secs(1),
            max_retry: Duration::from_secs(30),
        }
    }
}

/// How to reach an HTTP server: a streamable-HTTP endpoint
/// ([`HttpTransport`](crate::HttpTransport)), or the event stream of the
/// deprecated HTTP+SSE transport of 2024-11-05
/// ([`SseTransport`](crate::SseTransport), which uses every field but
/// `resume`, `reinitialize_expired_session` and `close_timeout`: its stream
/// cannot be resumed, it has no session to renew or end).
///
/// Header values are secrets as far as this crate is concerned (think
/// `Authorization`): `Debug` shows only their names, and they are marked
/// sensitive for `reqwest`.
///
/// ```
/// use golem_mcp::HttpConfig;
///
/// let config = HttpConfig {
///     headers: vec![("Authorization".into(), "Bearer secret".into())],
///     ..HttpConfig::new("https://example.com/mcp")
/// };
/// assert!(!format!("{config:?}").contains("secret"));
/// ```
#[derive(Clone)]
pub struct HttpConfig {
    /// The MCP endpoint, `http://` or `https://`.
    pub url: String,
    /// Extra headers sent on every request.
    pub headers: Vec<(String, String)>,
    /// The reqwest client to use. By default the transport makes its own:
    /// hyper's pooled HTTP/1.1 client for a plain `http://` endpoint that
    /// names no user or password and that no proxy variable applies to
    /// (`HTTP_PROXY`, `ALL_PROXY`, minus `NO_PROXY`, upper or lower case),
    /// which spends less CPU per request (ADR 0027); reqwest with rustls
    /// otherwise (`https://`, a proxy, credentials in the URL, which it
    /// sends as `Authorization: Basic`). Either has a 10 s connect timeout
    /// (name lookup included), `TCP_NODELAY`, and **no** overall timeout: event
    /// streams last as long as the caller waits (bound calls with a timeout
    /// on the future, or supply a client with one). Either follows
    /// redirects within the endpoint's origin only (ADR 0017); a client
    /// given here brings its own redirect policy, and with it the decision
    /// what crosses origins.
    pub client: Option<reqwest::Client>,
    /// The longest message accepted, in bytes ([`DEFAULT_MAX_MESSAGE_BYTES`]
    /// by default).
    pub max_message_bytes: usize,
    /// How broken event streams are resumed.
    pub resume: ResumePolicy,
    /// When the server answers 404 to a request carrying a session id (it
    /// dropped the session), have the client start a new session on this
    /// transport (the handshake again, in the revision negotiated first,
    /// then the log level and the resource subscriptions the old session
    /// was told), tell its subscribers (`SessionRenewed`), and send the
    /// request again, once. Off by default: whatever else the server kept
    /// for the old session is gone, and the application may want to know.
    pub reinitialize_expired_session: bool,
    /// How long `close` waits for the server to acknowledge the end of the
    /// session (`DELETE`).
    pub close_timeout: Duration,
    /// How long the HTTP+SSE transport (2024-11-05) waits, from each `GET`
    /// of its event stream, for the server's `endpoint` event, which names
    /// the URL to post messages to (10 s): both [`SseTransport`](crate::SseTransport)
    /// and the streamable transport's fallback to it. The time an auth
    /// provider spends authorizing after a refusal is not counted.
    pub sse_endpoint_timeout: Duration,
    /// Who supplies the `Authorization` header, and authorizes when the
    /// server refuses a request (`401`, or `403` with `insufficient_scope`):
    /// a fixed [`BearerToken`](golem_mcp_auth::BearerToken) or the OAuth flow
    /// ([`OAuthProvider`](golem_mcp_auth::OAuthProvider)). The refused request
    /// is sent again once authorized. With a provider, `headers` may not
    /// set `Authorization`.
    pub auth: Option<Arc<dyn AuthProvider>>,
}

impl HttpConfig {
    /// A configuration for `url` with every other field at its default.
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            headers: Vec::new(),
            client: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            resume: ResumePolicy::default(),
            reinitialize_expired_session: false,
            close_timeout: Duration::from_secs(5),
            sse_endpoint_timeout: Duration::from_secs(10),
            auth: None,
        }
    }
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("HttpConfig")
            .field(
                "url",
                &Url::parse(&self.url)
                    .map_or_else(|_| "<not a URL>".to_owned(), |url| redact(&url)),
            )
            .field("headers", &header_names)
            .field("client", &self.client.as_ref().map(|_| "custom"))
            .field("max_message_bytes", &self.max_message_bytes)
            .field("resume", &self.resume)
            .field(
                "reinitialize_expired_session",
                &self.reinitialize_expired_session,
            )
            .field("close_timeout", &self.close_timeout)
            .field("sse_endpoint_timeout", &self.sse_endpoint_timeout)
            .field("auth", &self.auth.as_ref().map(|_| "provider"))
            .finish()
    }
}

/// The default reqwest client's redirect policy (ADR 0017; the direct
/// client's is in `client.rs`): a redirect within the
/// origin of the request is followed (a trailing slash added, a path
/// moved), one to another origin is not: the headers configured for this
/// server, its session and its `Authorization` never reach another origin,
/// and an answer from somewhere else is never taken for the server's (its
/// `401` would pick the authorization server). The `3xx` is then the
/// answer, an `HttpStatusError` naming where it pointed.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// A checked configuration: what the transports use.
pub(in crate::transports) struct Endpoint {
    pub(in crate::transports) url: Url,
    pub(in crate::transports) client: HttpClient,
    pub(in crate::transports) headers: HeaderMap,
}

fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Error {
    Error::InvalidConfig {
        operation: "http",
        field: field.into(),
        problem: problem.into(),
    }
}

impl HttpConfig {
    /// Checks the URL, the headers and the limits, and builds the default
    /// client when none is given.
    pub(in crate::transports) fn endpoint(&self) -> Result<Endpoint, Error> {
        let url = check_url(&self.url).map_err(|problem| invalid("url", problem))?;
        if self.max_message_bytes == 0 {
            return Err(invalid("max_message_bytes", "it must be at least 1"));
        }
        let mut headers = HeaderMap::new();
        for (index, (name, value)) in self.headers.iter().enumerate() {
            let field = || format!("headers[{index}] ({name:?})");
            let (header_name, mut header_value) =
                check_header(name, value).map_err(|problem| invalid(field(), problem))?;
            if RESERVED_HEADERS.contains(&header_name.as_str()) {
                return Err(invalid(
                    field(),
                    "the transport sets this header itself; remove it from the extra headers",
                ));
            }
            if self.auth.is_some() && header_name == reqwest::header::AUTHORIZATION {
                return Err(invalid(
                    field(),
                    "an auth provider supplies Authorization; remove the header or the provider",
                ));
            }
            header_value.set_sensitive(true);
            headers.append(header_name, header_value);
        }
        let client = match &self.client {
            Some(client) => HttpClient::Reqwest(client.clone()),
            None => HttpClient::for_endpoint(&url, CONNECT_TIMEOUT, || {
                reqwest::Client::builder()
                    .connect_timeout(CONNECT_TIMEOUT)
                    .tcp_nodelay(true)
                    .redirect(same_origin_redirects())
                    .build()
            })
            .map_err(|error| {
                invalid(
                    "client",
                    format!("cannot build the default HTTP client: {error}"),
                )
            })?,
        };
        Ok(Endpoint {
            url,
            client,
            headers,
        })
    }
}

/// Checks an MCP endpoint URL; the problem, worded for a person, if it is
/// not one. Shared with `config.rs`, which names the entry around it.
pub(crate) fn check_url(url: &str) -> Result<Url, String> {
    if url.trim().is_empty() {
        return Err(
            "it is empty; give the server's MCP endpoint, e.g. http://127.0.0.1:3000/mcp".into(),
        );
    }
    let parsed = Url::parse(url.trim()).map_err(|error| {
        format!("it is not a URL ({error}); give e.g. http://127.0.0.1:3000/mcp")
    })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!(
            "the scheme must be http or https, not {:?}",
            parsed.scheme()
        ));
    }
    Ok(parsed)
}

/// Checks one extra header; the problem if it cannot be sent. The value is
/// never quoted in the problem (it may be a secret). Shared with
/// `config.rs`.
pub(crate) fn check_header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue), String> {
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| "not a valid header name".to_owned())?;
    let value = HeaderValue::from_str(value.trim()).map_err(|_| {
        "the value has characters a header cannot carry (value not shown)".to_owned()
    })?;
    Ok((name, value))
}
