//! The streamable-HTTP transport: every message is one POST to the MCP
//! endpoint, answered by a JSON body or a `text/event-stream` of messages.
//!
//! `config.rs` checks the configuration; `post.rs` is the outbound side (one
//! POST per message, the session, its renewal, status errors); `stream.rs`
//! reads each event stream and resumes it when it breaks (parsing it with
//! the shared `golem-sse` crate). This module ties them together behind [`Transport`].

mod config;
mod post;
mod stream;

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, StatusCode, Url};
use tokio::sync::{Mutex, Notify, mpsc};
use tokio::task::AbortHandle;

use crate::auth::{AuthProvider, Secret};
use crate::error::{Error, TransportError};
use crate::wire::transport::{Inbound, Outgoing, OutgoingKind, RequestId, Transport};
pub use config::{HttpConfig, ResumePolicy};
pub(crate) use config::{check_header, check_url};
use post::status_error;

const SESSION_HEADER: &str = "mcp-session-id";
const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
const LAST_EVENT_ID_HEADER: &str = "last-event-id";
// The same names ready-made: a name given as a string is parsed (and
// hashed for its lower case) on every request.
const SESSION: HeaderName = HeaderName::from_static(SESSION_HEADER);
const PROTOCOL_VERSION: HeaderName = HeaderName::from_static(PROTOCOL_VERSION_HEADER);
const LAST_EVENT_ID: HeaderName = HeaderName::from_static(LAST_EVENT_ID_HEADER);

/// Whether `value` can be a header value as it is, without a copy (visible
/// ASCII and tabs, what [`HeaderValue::from_static`] requires).
fn is_header_value(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
}

/// How many received messages may wait for the client before the streams
/// and answers that carry them stop being read.
const INBOUND_QUEUE: usize = 64;
/// How long `notifications/initialized` waits for the server to answer the
/// standalone stream's first `GET`: one round trip normally; past this the
/// session goes on without waiting.
const STANDALONE_OPEN_WAIT: Duration = Duration::from_secs(2);

/// An MCP server reached over streamable HTTP.
///
/// Every message is one `POST` with `Accept: application/json,
/// text/event-stream`, sent as soon as it is made: requests are in flight
/// concurrently, each on its own connection from the client's pool. A JSON
/// answer is one message; an event stream yields its messages one by one
/// as they arrive, read by a task of its own so that no answer holds up
/// another; a `202` yields nothing. The session id the server assigns
/// (`Mcp-Session-Id`) is sent on every later request, and so is
/// `MCP-Protocol-Version` once the client has negotiated it. Once the
/// session is initialized, the standalone `GET` stream is opened for the
/// server's own requests and notifications (and left alone if the server
/// answers `405`).
///
/// When an event stream ends before its answer and the server gave event
/// ids, that stream is resumed with `GET` and `Last-Event-ID` after the
/// server's `retry` delay ([`ResumePolicy`]), independently of the others.
/// [`close`](Transport::close) ends the session with `DELETE`.
pub struct HttpTransport {
    shared: Arc<Shared>,
    inbound: Mutex<mpsc::Receiver<Inbound>>,
}

/// What the transport's sends, streams and close share.
struct Shared {
    url: Url,
    /// Taken by `close`, once the `DELETE` is under way: the pool's idle
    /// connections (and their tasks) go with the last handle on it.
    client: StdMutex<Option<reqwest::Client>>,
    headers: HeaderMap,
    max_message_bytes: usize,
    resume: ResumePolicy,
    reinitialize_expired_session: bool,
    close_timeout: Duration,
    /// Supplies `Authorization` and authorizes after a refusal.
    auth: Option<Arc<dyn AuthProvider>>,
    session: StdMutex<Session>,
    /// Held while an expired session is renewed, so that concurrent
    /// requests that meet the 404 renew it once.
    renewal: Mutex<()>,
    /// The revision the client negotiated, for the requests the transport
    /// makes on its own (resumption, `DELETE`).
    protocol_version: OnceLock<&'static str>,
    /// Where received messages go; the client's inbound task reads them.
    inbound: mpsc::Sender<Inbound>,
    /// The event streams being read, by the request they answer.
    streams: StdMutex<HashMap<RequestId, AbortHandle>>,
    /// The standalone `GET` stream: its task, once opened.
    standalone: StdMutex<stream::Standalone>,
    closed: AtomicBool,
    /// Notified by `close`, so that waits give way.
    closing: Notify,
}

#[derive(Default)]
struct Session {
    id: Option<HeaderValue>,
    /// The `initialize` request as sent, to start a new session with.
    initialize: Option<Outgoing>,
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &redact(&self.shared.url))
            .field("has_session", &self.shared.session().id.is_some())
            .field("protocol_version", &self.shared.protocol_version.get())
            .field("closed", &self.shared.closed.load(Ordering::Relaxed))
            .finish_non_exhaustive()
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
        let endpoint = config.endpoint()?;
        let (sender, receiver) = mpsc::channel(INBOUND_QUEUE);
        Ok(HttpTransport {
            shared: Arc::new(Shared {
                url: endpoint.url,
                client: StdMutex::new(Some(endpoint.client)),
                headers: endpoint.headers,
                max_message_bytes: config.max_message_bytes,
                resume: config.resume,
                reinitialize_expired_session: config.reinitialize_expired_session,
                close_timeout: config.close_timeout,
                auth: config.auth.clone(),
                session: StdMutex::new(Session::default()),
                renewal: Mutex::new(()),
                protocol_version: OnceLock::new(),
                inbound: sender,
                streams: StdMutex::new(HashMap::new()),
                standalone: StdMutex::new(stream::Standalone::default()),
                closed: AtomicBool::new(false),
                closing: Notify::new(),
            }),
            inbound: Mutex::new(receiver),
        })
    }

    /// The session id the server assigned, if any.
    pub fn session_id(&self) -> Option<String> {
        self.shared
            .session()
            .id
            .as_ref()
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    }
}

impl Shared {
    fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn streams(&self) -> MutexGuard<'_, HashMap<RequestId, AbortHandle>> {
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn standalone(&self) -> MutexGuard<'_, stream::Standalone> {
        self.standalone
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops every stream task.
    fn stop_streams(&self) {
        for (_, stream) in self.streams().drain() {
            stream.abort();
        }
        if let Some(standalone) = self.standalone().task.take() {
            standalone.abort();
        }
    }

    fn check_open(&self) -> Result<(), TransportError> {
        match self.closed.load(Ordering::Acquire) {
            true => Err(TransportError::Closed),
            false => Ok(()),
        }
    }

    fn client(&self) -> MutexGuard<'_, Option<reqwest::Client>> {
        self.client.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request to the endpoint with the extra headers, `session` as its
    /// session id, `protocol_version` as its `MCP-Protocol-Version` and
    /// the provider's current `Authorization`, when given. Fails once the
    /// transport is closed.
    fn request(
        &self,
        method: Method,
        session: Option<HeaderValue>,
        protocol_version: Option<&'static str>,
    ) -> Result<reqwest::RequestBuilder, TransportError> {
        self.request_with(
            method,
            session,
            protocol_version,
            self.authorization().as_ref(),
        )
    }

    /// [`request`](Shared::request) with `authorization` as the
    /// `Authorization` value.
    fn request_with(
        &self,
        method: Method,
        session: Option<HeaderValue>,
        protocol_version: Option<&'static str>,
        authorization: Option<&Secret>,
    ) -> Result<reqwest::RequestBuilder, TransportError> {
        let client = self.client().clone().ok_or(TransportError::Closed)?;
        let mut request = client
            .request(method, self.url.clone())
            .headers(self.headers.clone());
        if let Some(session_id) = session {
            request = request.header(SESSION, session_id);
        }
        if let Some(version) = protocol_version {
            request = match is_header_value(version) {
                true => request.header(PROTOCOL_VERSION, HeaderValue::from_static(version)),
                // Refused when the request is sent, as any bad value is.
                false => request.header(PROTOCOL_VERSION, version),
            };
        }
        if let Some(secret) = authorization
            && let Ok(mut value) = HeaderValue::from_str(secret.expose())
        {
            value.set_sensitive(true);
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        Ok(request)
    }

    /// Lets the auth provider renew a credential about to expire before a
    /// request goes out: every POST, and every GET that opens or resumes an
    /// event stream (a stream reopened after an idle hour must not carry
    /// the token that expired meanwhile). A failure is logged, and the
    /// request goes out with what there is: the server's refusal then says
    /// what is wrong.
    async fn prepare_authorization(&self) {
        if let Some(auth) = &self.auth
            && let Err(error) = auth.prepare(&self.url).await
        {
            tracing::debug!(%error, "mcp: the auth provider could not prepare the request");
        }
    }

    /// The `Authorization` to send now, from the provider; `None`
    /// without a provider or a credential.
    fn authorization(&self) -> Option<Secret> {
        self.auth.as_ref()?.authorization(&self.url)
    }

    /// A request the transport makes on its own (resumption, `DELETE`): in
    /// the current session, with the negotiated revision.
    fn session_request(&self, method: Method) -> Result<reqwest::RequestBuilder, TransportError> {
        let session = self.session().id.clone();
        self.request(method, session, self.protocol_version.get().copied())
    }

    /// Hands a received item to the client, waiting for room (backpressure
    /// on the stream or answer it came from). `false` once nobody receives.
    async fn deliver(&self, item: Inbound) -> bool {
        self.inbound.send(item).await.is_ok()
    }

    /// Runs `future` unless the transport closes first.
    async fn unless_closed<T>(&self, future: impl Future<Output = T>) -> Result<T, TransportError> {
        let closing = self.closing.notified();
        tokio::pin!(closing);
        closing.as_mut().enable();
        self.check_open()?;
        tokio::select! {
            biased;
            value = future => Ok(value),
            () = closing => Err(TransportError::Closed),
        }
    }
}

impl Transport for HttpTransport {
    /// POSTs the message and waits for the answer's headers (and, for a
    /// JSON answer, its body); an event-stream answer is read on a task of
    /// its own. A non-2xx answer fails this message with
    /// [`HttpStatusError`](crate::HttpStatusError), which keeps the
    /// `WWW-Authenticate` and `Retry-After` headers. Concurrent sends are
    /// concurrent POSTs.
    ///
    /// Cancel safe: a dropped send abandons its POST; the server sees the
    /// whole message or nothing. If the session had expired and
    /// [`HttpConfig::reinitialize_expired_session`] is on, an interrupted
    /// renewal starts over at the next request.
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        if let Some(version) = message.protocol_version() {
            let _ = self.shared.protocol_version.set(version);
        }
        if let OutgoingKind::Notification {
            cancels: Some(id), ..
        } = message.kind()
            && let Some(stream) = self.shared.streams().remove(id)
        {
            // The caller gave up: its answer's stream has nothing left to
            // deliver.
            stream.abort();
        }
        let opens_session = message.method() == Some("notifications/initialized");
        let shared = &self.shared;
        shared.unless_closed(post::send(shared, message)).await??;
        if opens_session && let Some(first_answer) = stream::open_standalone(shared) {
            // Server requests and notifications that belong to no request
            // of ours come on the standalone stream. The session is handed
            // over once the server has answered its GET (bounded): a
            // server may drop what it sends while no stream is open, such
            // as a request made from inside a tool call that follows at
            // once.
            let _ = tokio::time::timeout(STANDALONE_OPEN_WAIT, first_answer).await;
        }
        Ok(())
    }

    /// Returns the next message of any answer or stream, in the order each
    /// one carried them.
    ///
    /// Cancel safe: messages wait in a queue until taken.
    async fn recv(&self) -> Result<Inbound, TransportError> {
        let mut inbound = self.inbound.lock().await;
        match self.shared.unless_closed(inbound.recv()).await? {
            Some(item) => Ok(item),
            // Unreachable: the transport keeps a sender.
            None => Err(TransportError::Closed),
        }
    }

    /// Ends the session with `DELETE` (a `405` or `404` answer is fine: the
    /// server does not let clients end sessions, or already forgot this
    /// one), stops every stream, makes pending sends and receives give
    /// way, and lets go of the HTTP client, so that its pooled keep-alive
    /// connections close once the `DELETE` is done (the pool of a client
    /// given in [`HttpConfig::client`] is shared with its other users and
    /// stays theirs). Bounded by [`HttpConfig::close_timeout`].
    async fn close(&self) -> Result<(), TransportError> {
        let shared = &self.shared;
        shared.closed.store(true, Ordering::Release);
        shared.closing.notify_waiters();
        shared.stop_streams();
        let deadline = tokio::time::Instant::now() + shared.close_timeout;
        if shared.session().id.is_some() {
            // A credential that expired while the client was idle is renewed
            // first, within the same bound: the DELETE must not be refused.
            let _ = tokio::time::timeout_at(deadline, shared.prepare_authorization()).await;
        }
        // The DELETE below holds a handle of its own until it is done.
        let request = shared.session_request(Method::DELETE);
        drop(shared.client().take());
        let Ok(request) = request else {
            return Ok(()); // closed before
        };
        if shared.session().id.is_none() {
            return Ok(());
        }
        let request = request.send();
        shared.session().id = None;
        match tokio::time::timeout_at(deadline, request).await {
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
}

impl Drop for HttpTransport {
    fn drop(&mut self) {
        let shared = &self.shared;
        shared.stop_streams();
        // End the session on the server, best effort, if a runtime can run
        // the DELETE; a server also expires abandoned sessions on its own.
        if shared.closed.load(Ordering::Acquire) || shared.session().id.is_none() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let Ok(request) = shared.session_request(Method::DELETE) else {
            return;
        };
        let request = request.send();
        let timeout = shared.close_timeout;
        runtime.spawn(async move {
            let _ = tokio::time::timeout(timeout, request).await;
        });
    }
}

/// `message`, a response without an id that came as the answer to request
/// `id`, with `id` as its id: the client routes responses by id alone, and
/// guesses the request of an id-less one only when it is the sole one in
/// flight.
fn addressed_to(message: &Bytes, id: RequestId) -> Bytes {
    let Ok(mut object) =
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(message)
    else {
        return message.clone();
    };
    object.insert("id".to_owned(), id.into());
    serde_json::to_vec(&object).map_or_else(|_| message.clone(), Bytes::from)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_visible_ascii_and_tabs_are_used_as_header_values_without_a_copy() {
        for value in ["2025-11-25", "a b\tc~"] {
            assert!(is_header_value(value), "{value:?}");
            assert_eq!(HeaderValue::from_static(value), value);
        }
        for value in ["2025\n11", "caf\u{e9}", "\u{7f}"] {
            assert!(!is_header_value(value), "{value:?}");
        }
    }
}
