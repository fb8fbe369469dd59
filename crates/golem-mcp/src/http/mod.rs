//! The streamable-HTTP transport: every message is one POST to the MCP
//! endpoint, answered by a JSON body or a `text/event-stream` of messages.

mod sse;

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Response, StatusCode, Url};
use serde::de::IgnoredAny;
use tokio::time::Instant;

use crate::error::{Error, HttpStatusError, TransportError};
use crate::jsonrpc::{self, Incoming};
use crate::stdio::DEFAULT_MAX_MESSAGE_BYTES;
use crate::transport::Transport;
use sse::SseParser;

const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
const LAST_EVENT_ID_HEADER: &str = "last-event-id";
/// Headers the transport manages; extra headers may not set them.
const RESERVED_HEADERS: &[&str] = &[
    "content-type",
    "accept",
    SESSION_HEADER,
    PROTOCOL_VERSION_HEADER,
    LAST_EVENT_ID_HEADER,
];
/// How much of an error response's body is kept for the error message.
const BODY_EXCERPT_BYTES: usize = 1024;
/// How long reading that excerpt may take.
const BODY_EXCERPT_TIME: Duration = Duration::from_secs(2);
/// The connect timeout of the default client.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How a broken or closed event stream is resumed (protocol revision
/// 2025-11-25): with a `GET` carrying `Last-Event-ID`, after the server's
/// `retry` delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePolicy {
    /// How many reconnections in a row may fail to deliver a message before
    /// the request fails. The count restarts whenever a message arrives, so
    /// a server that closes the connection after every event (SSE polling)
    /// can run as long as it makes progress.
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

/// How to reach a streamable-HTTP server.
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
    /// The HTTP client to use. The default one has a 10 s connect timeout,
    /// `TCP_NODELAY`, and **no** overall timeout: event streams last as long
    /// as the caller waits (bound calls with a timeout on the future, or
    /// supply a client with one).
    pub client: Option<reqwest::Client>,
    /// The longest message accepted, in bytes ([`DEFAULT_MAX_MESSAGE_BYTES`]
    /// by default).
    pub max_message_bytes: usize,
    /// How broken event streams are resumed.
    pub resume: ResumePolicy,
    /// When the server answers 404 to a request carrying a session id (it
    /// dropped the session), start a new session with the `initialize`
    /// request of the first one and send the request again, once. Off by
    /// default: whatever state the server kept for the old session is gone,
    /// and the application may want to know.
    pub reinitialize_expired_session: bool,
    /// How long `close` waits for the server to acknowledge the end of the
    /// session (`DELETE`).
    pub close_timeout: Duration,
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
            .finish()
    }
}

type ResponseFuture = Pin<Box<dyn Future<Output = reqwest::Result<Response>> + Send>>;

/// A message to POST, queued in the transport before the first await so
/// that a send dropped at any point is still delivered, in order, by the
/// next operation.
struct Post {
    body: Bytes,
    /// Whether the message is a request (its answer is awaited).
    is_request: bool,
    is_initialize: bool,
    /// Whether this is the resend after a session was re-established.
    is_resend: bool,
    /// The POST under way, once the ones before it are done, and whether it
    /// carried a session id.
    started: Option<(ResponseFuture, bool)>,
}

/// Where incoming messages come from right now.
enum Inbound {
    /// Nothing is open.
    Idle,
    /// A JSON body being read.
    Json { response: Response, body: Vec<u8> },
    /// An event stream being read.
    Events { response: Response },
    /// The stream ended early; reconnect at this instant.
    Backoff { until: Instant },
    /// The `GET` that resumes the stream is under way.
    Resuming { response: ResponseFuture },
}

/// An MCP server reached over streamable HTTP.
///
/// Every message is one `POST` with `Accept: application/json,
/// text/event-stream`. A JSON answer is one message; an event stream yields
/// its messages one by one as they arrive; a `202` yields nothing. The
/// session id the server assigns (`Mcp-Session-Id`) is sent on every later
/// request, and so is `MCP-Protocol-Version` once the client has negotiated
/// it. The standalone server-to-client `GET` stream is never opened: tool use
/// does not need server pushes.
///
/// When an event stream ends before the awaited answer and the server gave
/// event ids, the stream is resumed with `GET` and `Last-Event-ID` after the
/// server's `retry` delay ([`ResumePolicy`]). [`close`](Transport::close)
/// ends the session with `DELETE`.
pub struct HttpTransport {
    url: Url,
    client: reqwest::Client,
    headers: HeaderMap,
    session_id: Option<HeaderValue>,
    protocol_version: Option<HeaderValue>,
    max_message_bytes: usize,
    resume: ResumePolicy,
    reinitialize_expired_session: bool,
    close_timeout: Duration,
    /// The `initialize` request as sent, to start a new session with.
    initialize_request: Option<Bytes>,
    /// Messages not yet answered with headers, oldest first.
    posts: VecDeque<Post>,
    inbound: Inbound,
    sse: SseParser,
    /// The raw id of the request whose answer the open stream should carry;
    /// `None` once it arrived.
    awaiting: Option<String>,
    resume_attempts: u32,
    inbox: VecDeque<Vec<u8>>,
    /// The message returned by the last `read`, which its slice borrows.
    current: Vec<u8>,
    closed: bool,
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &redact(&self.url))
            .field("has_session", &self.session_id.is_some())
            .field("protocol_version", &self.protocol_version)
            .field("closed", &self.closed)
            .finish_non_exhaustive()
    }
}

fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Error {
    Error::InvalidConfig {
        operation: "http",
        field: field.into(),
        problem: problem.into(),
    }
}

impl HttpTransport {
    /// Checks the configuration and prepares the transport; nothing is sent
    /// until the first message.
    ///
    /// Fails with [`Error::InvalidConfig`] naming the field: an empty or
    /// unparsable `url`, a scheme other than `http`/`https`, an invalid
    /// header name or value, a zero `max_message_bytes`.
    pub fn new(config: HttpConfig) -> Result<Self, Error> {
        if config.url.trim().is_empty() {
            return Err(invalid(
                "url",
                "it is empty; give the server's MCP endpoint, e.g. http://127.0.0.1:3000/mcp",
            ));
        }
        let url = Url::parse(config.url.trim()).map_err(|error| {
            invalid(
                "url",
                format!("it is not a URL ({error}); give e.g. http://127.0.0.1:3000/mcp"),
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid(
                "url",
                format!("the scheme must be http or https, not {:?}", url.scheme()),
            ));
        }
        if config.max_message_bytes == 0 {
            return Err(invalid("max_message_bytes", "it must be at least 1"));
        }
        let mut headers = HeaderMap::new();
        for (index, (name, value)) in config.headers.iter().enumerate() {
            let header_name = HeaderName::from_bytes(name.trim().as_bytes()).map_err(|_| {
                invalid(
                    format!("headers[{index}] ({name:?})"),
                    "not a valid header name",
                )
            })?;
            let mut header_value = HeaderValue::from_str(value.trim()).map_err(|_| {
                invalid(
                    format!("headers[{index}] ({name:?})"),
                    "the value has characters a header cannot carry",
                )
            })?;
            if RESERVED_HEADERS.contains(&header_name.as_str()) {
                return Err(invalid(
                    format!("headers[{index}] ({name:?})"),
                    "the transport sets this header itself; remove it from the extra headers",
                ));
            }
            header_value.set_sensitive(true);
            headers.append(header_name, header_value);
        }
        let client = match config.client {
            Some(client) => client,
            None => reqwest::Client::builder()
                .connect_timeout(CONNECT_TIMEOUT)
                .tcp_nodelay(true)
                .build()
                .map_err(|error| {
                    invalid(
                        "client",
                        format!("cannot build the default HTTP client: {error}"),
                    )
                })?,
        };
        Ok(HttpTransport {
            url,
            client,
            headers,
            session_id: None,
            protocol_version: None,
            max_message_bytes: config.max_message_bytes,
            resume: config.resume,
            reinitialize_expired_session: config.reinitialize_expired_session,
            close_timeout: config.close_timeout,
            initialize_request: None,
            posts: VecDeque::new(),
            inbound: Inbound::Idle,
            sse: SseParser::new(config.max_message_bytes),
            awaiting: None,
            resume_attempts: 0,
            inbox: VecDeque::new(),
            current: Vec::new(),
            closed: false,
        })
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id
            .as_ref()
            .and_then(|value| value.to_str().ok())
    }

    /// A request to the endpoint with the extra headers and, except for an
    /// `initialize` (which starts a session), the session id and the
    /// protocol version.
    fn request(&self, method: Method, for_initialize: bool) -> reqwest::RequestBuilder {
        let mut request = self
            .client
            .request(method, self.url.clone())
            .headers(self.headers.clone());
        if for_initialize {
            return request;
        }
        if let Some(session_id) = &self.session_id {
            request = request.header(SESSION_HEADER, session_id.clone());
        }
        if let Some(version) = &self.protocol_version {
            request = request.header(PROTOCOL_VERSION_HEADER, version.clone());
        }
        request
    }

    /// A POST of one message, with the headers every POST carries.
    fn post_message(&self, body: Bytes, for_initialize: bool) -> reqwest::RequestBuilder {
        self.request(Method::POST, for_initialize)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream")
            .body(body)
    }

    /// A request still waiting for its answer's headers when the client
    /// sends something else was abandoned (a serialized client sends nothing
    /// while it waits): stop waiting for it, so that its cancellation and
    /// the next request go out now, not when the abandoned call finishes. A
    /// POST already under way is driven to completion on a task, so the
    /// server sees the whole request that the cancellation names; its answer
    /// and any error are dropped.
    fn abandon_pending_requests(&mut self) {
        self.posts.retain_mut(|post| {
            if !post.is_request {
                return true;
            }
            if let Some((response, _)) = post.started.take() {
                tokio::spawn(async move {
                    if let Err(error) = response.await {
                        tracing::debug!(error = %error.without_url(), "mcp: an abandoned request's POST failed");
                    }
                });
            }
            false
        });
    }

    /// Sends the queued POSTs in order and handles their answers' headers.
    /// Cancel safe: the queue and the POST under way live in `self`.
    async fn drive_posts(&mut self) -> Result<(), TransportError> {
        loop {
            let Some(front) = self.posts.front() else {
                return Ok(());
            };
            if front.started.is_none() {
                let sent_session = self.session_id.is_some() && !front.is_initialize;
                let response = self
                    .post_message(front.body.clone(), front.is_initialize)
                    .send();
                if let Some(front) = self.posts.front_mut() {
                    front.started = Some((Box::pin(response), sent_session));
                }
            }
            let Some((response, sent_session)) = self
                .posts
                .front_mut()
                .and_then(|post| post.started.as_mut())
            else {
                return Ok(());
            };
            let sent_session = *sent_session;
            let result = response.as_mut().await;
            let Some(post) = self.posts.pop_front() else {
                return Ok(());
            };
            let response = result.map_err(|error| http_error("POST", error))?;
            self.handle_answer(post, sent_session, response).await?;
        }
    }

    /// Handles the headers of a POST's answer.
    async fn handle_answer(
        &mut self,
        post: Post,
        sent_session: bool,
        response: Response,
    ) -> Result<(), TransportError> {
        let status = response.status();
        if status == StatusCode::NOT_FOUND && sent_session {
            if self.reinitialize_expired_session && self.initialize_request.is_some() {
                if !post.is_request {
                    // A notification or reply about the old session has
                    // nothing left to say to a new one.
                    tracing::debug!("mcp: dropped a notification for an expired session");
                    return Ok(());
                }
                if !post.is_resend {
                    tracing::info!(url = %redact(&self.url), "mcp: session expired; starting a new one and resending the request");
                    self.start_new_session().await?;
                    self.posts.push_front(Post {
                        is_resend: true,
                        started: None,
                        ..post
                    });
                    return Ok(());
                }
            }
            return Err(status_error(response, true).await);
        }
        if !status.is_success() {
            return Err(status_error(response, false).await);
        }
        if let Some(session_id) = response.headers().get(SESSION_HEADER) {
            self.session_id = Some(session_id.clone());
        }
        if post.is_request {
            self.inbound = self.classify_answer(response)?;
        }
        // The answer to a notification or a response carries nothing (202);
        // a body, if any, is dropped with the response.
        Ok(())
    }

    /// Decides how to read the answer to a request.
    fn classify_answer(&self, response: Response) -> Result<Inbound, TransportError> {
        if response.status() == StatusCode::ACCEPTED || response.content_length() == Some(0) {
            return Ok(Inbound::Idle);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        if content_type.starts_with("text/event-stream") {
            Ok(Inbound::Events { response })
        } else if content_type.starts_with("application/json") {
            if let Some(length) = response.content_length()
                && length > self.max_message_bytes as u64
            {
                return Err(TransportError::MessageTooLarge {
                    limit: self.max_message_bytes,
                });
            }
            Ok(Inbound::Json {
                response,
                body: Vec::new(),
            })
        } else {
            Err(TransportError::UnexpectedResponse {
                detail: format!(
                    "the server answered a request with content type {content_type:?}; \
                     expected application/json or text/event-stream"
                ),
            })
        }
    }
}

/// Builds the error for a non-2xx answer, with the start of its body. (A free
/// function: a `&self` held across an await would require the transport to be
/// `Sync`.)
async fn status_error(response: Response, session_expired: bool) -> TransportError {
    let status = response.status();
    let url = redact(response.url());
    let body_excerpt = tokio::time::timeout(BODY_EXCERPT_TIME, read_excerpt(response))
        .await
        .unwrap_or_default();
    TransportError::HttpStatus(HttpStatusError {
        status: status.as_u16(),
        url,
        body_excerpt,
        session_expired,
    })
}

impl HttpTransport {
    /// Replays the first session's `initialize` to start a new session, and
    /// sends `notifications/initialized`. The server's answer is read and
    /// dropped: the client already knows the server.
    async fn start_new_session(&mut self) -> Result<(), TransportError> {
        let Some(initialize) = self.initialize_request.clone() else {
            return Err(TransportError::Closed);
        };
        // The old id stays until a new one arrives (the initialize POST does
        // not carry it): if this is interrupted, the next request meets the
        // 404 again and starts over.
        let response = self
            .post_message(initialize, true)
            .send()
            .await
            .map_err(|error| http_error("POST initialize", error))?;
        if !response.status().is_success() {
            return Err(status_error(response, false).await);
        }
        let new_session = response.headers().get(SESSION_HEADER).cloned();
        // Read the answer to its end so the connection is reusable.
        let mut response = response;
        while let Some(_chunk) = response
            .chunk()
            .await
            .map_err(|error| http_error("read initialize answer", error))?
        {}
        self.session_id = new_session;
        let initialized =
            Bytes::from_static(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        let response = self
            .post_message(initialized, false)
            .send()
            .await
            .map_err(|error| http_error("POST notifications/initialized", error))?;
        if !response.status().is_success() {
            return Err(status_error(response, false).await);
        }
        Ok(())
    }

    /// Moves complete events from the parser to the inbox.
    fn collect_events(&mut self) {
        while let Some(event) = self.sse.next_event() {
            if event.data.is_empty() || event.event.as_deref().is_some_and(|kind| kind != "message")
            {
                continue; // a priming event (id only), or not a JSON-RPC message
            }
            let message = event.data.into_bytes();
            self.note_answer(&message);
            self.resume_attempts = 0;
            self.inbox.push_back(message);
        }
    }

    /// Clears `awaiting` if `message` is the awaited answer.
    fn note_answer(&mut self, message: &[u8]) {
        let Some(awaited) = &self.awaiting else {
            return;
        };
        if let Ok(Incoming::Response { raw_id, .. }) = Incoming::<IgnoredAny>::parse(message) {
            let answered = match raw_id {
                None => true, // an error about a message the server could not read
                Some(raw_id) => same_id(raw_id, awaited),
            };
            if answered {
                self.awaiting = None;
            }
        }
    }

    /// The event stream ended: done if the answer came, else resume or fail.
    fn stream_ended(&mut self, broken: Option<reqwest::Error>) -> Result<(), TransportError> {
        self.sse.finish();
        self.collect_events();
        self.inbound = Inbound::Idle;
        if self.awaiting.is_none() {
            return Ok(());
        }
        if self.sse.last_event_id().is_some() && self.resume_attempts < self.resume.max_attempts {
            let delay = self
                .sse
                .retry()
                .unwrap_or(self.resume.default_retry)
                .min(self.resume.max_retry);
            tracing::debug!(
                ?delay,
                attempt = self.resume_attempts + 1,
                "mcp: event stream ended early; resuming"
            );
            self.resume_attempts += 1;
            self.inbound = Inbound::Backoff {
                until: Instant::now() + delay,
            };
            return Ok(());
        }
        let resumable = self.sse.last_event_id().is_some();
        Err(TransportError::StreamEnded {
            detail: match (resumable, broken) {
                (false, None) => "the server's event stream ended before the response, and gave no event id to resume from".to_owned(),
                (false, Some(error)) => format!("the server's event stream broke before the response ({error}), and gave no event id to resume from"),
                (true, _) => format!("the server's event stream ended before the response, {} resumption attempt(s) did not deliver it", self.resume_attempts),
            },
        })
    }

    fn start_resume(&mut self) {
        let mut request = self
            .request(Method::GET, false)
            .header(ACCEPT, "text/event-stream");
        if let Some(last_event_id) = self.sse.last_event_id() {
            request = request.header(LAST_EVENT_ID_HEADER, last_event_id);
        }
        self.inbound = Inbound::Resuming {
            response: Box::pin(request.send()),
        };
    }
}

/// Whether two raw JSON ids are the same id (by value and type).
fn same_id(raw: &str, awaited: &str) -> bool {
    match awaited.parse::<u64>() {
        Ok(number) => jsonrpc::id_matches(raw, number),
        Err(_) => raw == awaited,
    }
}

/// An HTTP client error, without the URL (which may carry credentials in
/// its query; the error's operation already says what failed).
fn http_error(context: &'static str, error: reqwest::Error) -> TransportError {
    TransportError::Http {
        context,
        source: Box::new(error.without_url()),
    }
}

/// The URL as errors and logs show it: without credentials, query or
/// fragment, any of which may hold a secret.
fn redact(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

async fn read_excerpt(mut response: Response) -> String {
    let mut body = Vec::new();
    while body.len() < BODY_EXCERPT_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(BODY_EXCERPT_BYTES);
    String::from_utf8_lossy(&body).trim().to_owned()
}

/// The raw id of an outgoing request, and whether it is `initialize`;
/// `None` for notifications and responses.
fn request_head(message: &[u8]) -> Option<(String, bool)> {
    match Incoming::<IgnoredAny>::parse(message) {
        Ok(Incoming::Request { raw_id, method }) => {
            Some((raw_id.to_owned(), method == "initialize"))
        }
        _ => None,
    }
}

impl Transport for HttpTransport {
    /// POSTs the message and waits for the answer's headers.
    ///
    /// Cancel safe: the message is queued before the first await, so once
    /// polled it is delivered, in order, by this call or the next operation.
    /// A request whose answer headers never came is not waited for once the
    /// client moves on (see the type's docs). If the session had expired and
    /// [`HttpConfig::reinitialize_expired_session`] is on, an interrupted
    /// re-initialization starts over at the next request.
    async fn send(&mut self, message: &[u8]) -> Result<(), TransportError> {
        if self.closed {
            return Err(TransportError::Closed);
        }
        self.abandon_pending_requests();
        let head = request_head(message);
        let body = Bytes::copy_from_slice(message);
        let (is_request, is_initialize) = match head {
            Some((raw_id, is_initialize)) => {
                // A new request: whatever was still open belongs to an
                // abandoned one.
                self.inbound = Inbound::Idle;
                self.inbox.clear();
                self.sse = SseParser::new(self.max_message_bytes);
                self.awaiting = Some(raw_id);
                self.resume_attempts = 0;
                if is_initialize {
                    self.initialize_request = Some(body.clone());
                }
                (true, is_initialize)
            }
            None => (false, false),
        };
        self.posts.push_back(Post {
            body,
            is_request,
            is_initialize,
            is_resend: false,
            started: None,
        });
        self.drive_posts().await
    }

    /// Returns the next message of the open answer: the JSON body, or the
    /// next event of the stream as it arrives, resuming a broken stream when
    /// the server allows it.
    ///
    /// Cancel safe: the open response, the parser and the resumption state
    /// live in the transport.
    async fn read(&mut self) -> Result<&[u8], TransportError> {
        if self.closed {
            return Err(TransportError::Closed);
        }
        self.drive_posts().await?;
        loop {
            if let Some(message) = self.inbox.pop_front() {
                self.current = message;
                return Ok(&self.current);
            }
            match &mut self.inbound {
                Inbound::Idle => {
                    return Err(TransportError::StreamEnded {
                        detail: if self.awaiting.is_some() {
                            "the server accepted the request without answering it".to_owned()
                        } else {
                            "no answer is pending".to_owned()
                        },
                    });
                }
                Inbound::Json { response, body } => match response.chunk().await {
                    Ok(Some(chunk)) => {
                        if body.len() + chunk.len() > self.max_message_bytes {
                            self.inbound = Inbound::Idle;
                            return Err(TransportError::MessageTooLarge {
                                limit: self.max_message_bytes,
                            });
                        }
                        body.extend_from_slice(&chunk);
                    }
                    Ok(None) => {
                        let body = std::mem::take(body);
                        self.inbound = Inbound::Idle;
                        if !body.iter().all(u8::is_ascii_whitespace) {
                            self.note_answer(&body);
                            self.inbox.push_back(body);
                        }
                    }
                    Err(error) => {
                        self.inbound = Inbound::Idle;
                        return Err(http_error("read the JSON answer", error));
                    }
                },
                Inbound::Events { response } => match response.chunk().await {
                    Ok(Some(chunk)) => {
                        if let Err(error) = self.sse.feed(&chunk) {
                            self.inbound = Inbound::Idle;
                            self.collect_events();
                            return Err(match error {
                                sse::SseError::TooLarge { limit } => {
                                    TransportError::MessageTooLarge { limit }
                                }
                                other => TransportError::UnexpectedResponse {
                                    detail: other.to_string(),
                                },
                            });
                        }
                        self.collect_events();
                    }
                    Ok(None) => self.stream_ended(None)?,
                    Err(error) => self.stream_ended(Some(error))?,
                },
                Inbound::Backoff { until } => {
                    tokio::time::sleep_until(*until).await;
                    self.start_resume();
                }
                Inbound::Resuming { response } => {
                    let result = response.as_mut().await;
                    self.inbound = Inbound::Idle;
                    match result {
                        Ok(response) if response.status().is_success() => {
                            self.inbound = Inbound::Events { response };
                        }
                        Ok(response) => {
                            let expired = response.status() == StatusCode::NOT_FOUND
                                && self.session_id.is_some();
                            return Err(status_error(response, expired).await);
                        }
                        Err(error) if self.resume_attempts < self.resume.max_attempts => {
                            tracing::debug!(%error, "mcp: resuming the event stream failed; retrying");
                            self.stream_ended(Some(error))?;
                        }
                        Err(error) => {
                            return Err(http_error("GET (resume the event stream)", error));
                        }
                    }
                }
            }
        }
    }

    /// Ends the session with `DELETE` (a `405` answer is fine: the server
    /// does not let clients end sessions) and drops any open stream. Bounded
    /// by [`HttpConfig::close_timeout`].
    async fn close(&mut self) -> Result<(), TransportError> {
        self.closed = true;
        self.posts.clear();
        self.inbound = Inbound::Idle;
        self.inbox.clear();
        if self.session_id.is_none() {
            return Ok(());
        }
        let request = self.request(Method::DELETE, false).send();
        self.session_id = None;
        match tokio::time::timeout(self.close_timeout, request).await {
            Ok(Ok(response)) => {
                let status = response.status();
                if status.is_success()
                    || status == StatusCode::METHOD_NOT_ALLOWED
                    || status == StatusCode::NOT_FOUND
                {
                    Ok(())
                } else {
                    Err(status_error(response, false).await)
                }
            }
            Ok(Err(error)) => Err(http_error("DELETE (end the session)", error)),
            Err(_) => {
                tracing::debug!(
                    "mcp: the server did not acknowledge the end of the session in time"
                );
                Err(TransportError::Io {
                    context: "DELETE (end the session)",
                    source: std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "no answer within the close timeout",
                    ),
                })
            }
        }
    }

    fn protocol_version_negotiated(&mut self, version: &str) {
        self.protocol_version = HeaderValue::from_str(version).ok();
    }
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        // End the session on the server, best effort, if a runtime can run
        // the DELETE; a server also expires abandoned sessions on its own.
        if self.closed {
            return;
        }
        let Some(session_id) = self.session_id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let request = self
            .request(Method::DELETE, false)
            .header(SESSION_HEADER, session_id)
            .send();
        let timeout = self.close_timeout;
        runtime.spawn(async move {
            let _ = tokio::time::timeout(timeout, request).await;
        });
    }
}
