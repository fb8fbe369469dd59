//! The streamable-HTTP transport: every message is one POST to the MCP
//! endpoint, answered by a JSON body or a `text/event-stream` of messages;
//! and, when a server refuses it as the specification describes, the
//! fallback to the HTTP+SSE transport of 2024-11-05 (`transports/sse/`).
//!
//! `config.rs` checks the configuration; `client.rs` is the HTTP client the
//! requests go through (hyper's own for plain `http://`, reqwest for the
//! rest: ADR 0027); `headers.rs` names the headers the
//! transport sets; `shared.rs` is the state every part shares; `post.rs` is
//! the outbound side (one POST per message, the session);
//! `stream.rs` reads each event stream and resumes it when it breaks
//! (parsing it with the shared `golem-sse` crate); `drain.rs` reads an
//! answered stream to its end, so that its connection is reused; `status.rs` builds the
//! error of a refused answer; `authorize.rs` says which refusals the auth
//! provider answers. This module ties them together behind [`Transport`];
//! the parts below it never import each other in a circle (`post.rs`
//! starts streams, `stream.rs` knows nothing of posting). `client.rs`,
//! `config.rs`, `headers.rs`, `status.rs` and `authorize.rs` are the
//! HTTP+SSE transport's plumbing too; of that transport, only this file
//! uses anything (its `Link`).

pub(in crate::transports) mod authorize;
pub(in crate::transports) mod client;
pub(in crate::transports) mod config;
mod drain;
pub(in crate::transports) mod headers;
mod post;
mod shared;
pub(in crate::transports) mod status;
mod stream;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use reqwest::{Method, StatusCode};
use tokio::sync::{Mutex, Notify, mpsc};

use crate::error::Error;
use crate::transports::sse::{Link, LinkSettings, OpenError};
use crate::wire::transport::{IdMap, Inbound, Outgoing, OutgoingKind, Peer, Transport};
use crate::wire::transport_error::{HttpStatusError, TransportError};
use client::HttpClient;
pub use config::{HttpConfig, ResumePolicy};
pub(crate) use config::{check_header, check_url};
use drain::Drains;
use headers::redact;
use shared::{Session, Shared, Standalone};
use status::{http_error, status_error};

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
///
/// When the server refuses `initialize` with `400`, `404` or `405` and a
/// body that is no JSON-RPC error (so its answer to the `server/discover`
/// probe was no modern one either), the endpoint may be the event stream
/// of the deprecated HTTP+SSE transport (2024-11-05): the transport then
/// sends `GET` to the same URL, and if it answers with an event stream
/// whose first event names where to post messages (on the same origin),
/// the rest of the connection uses that transport, exactly as
/// [`SseTransport`](crate::SseTransport) does; otherwise the refusal of
/// `initialize` is the error, as before. So a URL ending in `/sse` works
/// here too.
pub struct HttpTransport {
    shared: Arc<Shared>,
    inbound: Mutex<mpsc::Receiver<Result<Inbound, TransportError>>>,
    /// The HTTP+SSE connection, once the server turned out to speak only
    /// that transport.
    legacy: OnceLock<Link>,
    /// The status streamable HTTP was refused with, once the connection
    /// went on over HTTP+SSE ([`HttpTransport::fallback`]).
    fell_back: Arc<OnceLock<u16>>,
}

/// Whether an [`HttpTransport`]'s connection went on over the HTTP+SSE
/// transport of 2024-11-05 (the server refused streamable HTTP), and after
/// which HTTP status: what `golem-mcp info` says. Taken with
/// [`HttpTransport::fallback`] before the transport goes into a client;
/// clones share the state, which stays readable after the transport is
/// dropped.
#[derive(Debug, Clone, Default)]
pub struct SseFallback(Arc<OnceLock<u16>>);

impl SseFallback {
    /// The HTTP status streamable HTTP's `initialize` was refused with,
    /// when the connection went on over HTTP+SSE; `None` while it is
    /// streamable HTTP (or nothing was sent yet).
    pub fn refused_with(&self) -> Option<u16> {
        self.0.get().copied()
    }
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &redact(&self.shared.url))
            .field(
                "http_client",
                &match self.shared.client().as_ref().map(HttpClient::is_direct) {
                    Some(true) => "direct",
                    Some(false) => "reqwest",
                    None => "closed",
                },
            )
            .field("has_session", &self.shared.session().id.is_some())
            .field("protocol_version", &self.shared.protocol_version.get())
            .field("closed", &self.shared.closed.load(Ordering::Relaxed))
            .field("legacy_sse", &self.legacy.get().is_some())
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
                sse_endpoint_timeout: config.sse_endpoint_timeout,
                auth: config.auth.clone(),
                session: StdMutex::new(Session::default()),
                protocol_version: OnceLock::new(),
                inbound: sender,
                streams: StdMutex::new(IdMap::default()),
                drains: Drains::default(),
                standalone: StdMutex::new(Standalone::default()),
                closed: AtomicBool::new(false),
                closing: Notify::new(),
            }),
            inbound: Mutex::new(receiver),
            legacy: OnceLock::new(),
            fell_back: Arc::default(),
        })
    }

    /// A handle that tells, once the handshake ran, whether the connection
    /// went on over HTTP+SSE and why ([`SseFallback::refused_with`]). It
    /// stays valid after the transport is moved into a client.
    pub fn fallback(&self) -> SseFallback {
        SseFallback(Arc::clone(&self.fell_back))
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

impl Transport for HttpTransport {
    fn peer(&self) -> Peer {
        headers::peer_of(&self.shared.url)
    }

    fn session_id(&self) -> Option<String> {
        HttpTransport::session_id(self)
    }

    /// POSTs the message and waits for the answer's headers (and, for a
    /// JSON answer, its body, which [`recv`](Transport::recv) then
    /// returns); an event-stream answer is read on a task of its own. A
    /// non-2xx answer fails this message with
    /// [`HttpStatusError`](crate::HttpStatusError), which keeps the
    /// `WWW-Authenticate` and `Retry-After` headers. Concurrent sends are
    /// concurrent POSTs. An `initialize` refused the way an HTTP+SSE
    /// server refuses it falls back to that transport, which carries this
    /// and every later message (see [`HttpTransport`]).
    ///
    /// Cancel safe: a dropped send abandons its POST; the server sees the
    /// whole message or nothing.
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        if let Some(answer) = self.post_message(message).await? {
            let shared = &self.shared;
            shared
                .unless_closed(shared.deliver(Inbound::Message(answer)))
                .await?;
        }
        Ok(())
    }

    /// [`send`](Transport::send), returning a JSON answer instead of
    /// queueing it for [`recv`](Transport::recv): the request's response,
    /// checked by its id (an error without an id is given the request's).
    /// An event stream's answer comes through `recv` (`None`), and so does
    /// every answer once the transport has fallen back to HTTP+SSE.
    ///
    /// Cancel safe, as `send`.
    async fn send_request(&self, message: Outgoing) -> Result<Option<Bytes>, TransportError> {
        self.post_message(message).await
    }

    /// Returns the next message of any answer or stream, in the order each
    /// one carried them. After a fallback to HTTP+SSE, the end of that
    /// transport's stream is fatal, as on [`SseTransport`](crate::SseTransport).
    ///
    /// Cancel safe: messages wait in a queue until taken.
    async fn recv(&self) -> Result<Inbound, TransportError> {
        let mut inbound = self.inbound.lock().await;
        match self.shared.unless_closed(inbound.recv()).await? {
            Some(item) => item,
            // Unreachable: the transport keeps a sender.
            None => Err(TransportError::Closed),
        }
    }

    /// Yes: a JSON answer is returned by
    /// [`send_request`](Transport::send_request).
    fn returns_answers(&self) -> bool {
        true
    }

    /// Yes: modern requests carry `Mcp-Method`, `Mcp-Name` and the
    /// tools' `Mcp-Param-*` headers.
    fn mirrors_headers(&self) -> bool {
        true
    }

    fn renews_sessions(&self) -> bool {
        self.shared.reinitialize_expired_session
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
        shared.closed.store(true, Ordering::SeqCst);
        // After the flag: a fallback that sets its link later sees the flag
        // and closes the link itself.
        if let Some(legacy) = self.legacy.get() {
            // Its stream dropped: that ends an HTTP+SSE session.
            legacy.close();
        }
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

impl HttpTransport {
    /// What [`send`](Transport::send) and
    /// [`send_request`](Transport::send_request) share: sends `message` and
    /// returns its JSON answer, when it is a request answered so.
    async fn post_message(&self, message: Outgoing) -> Result<Option<Bytes>, TransportError> {
        if let Some(legacy) = self.legacy.get() {
            // Boxed, as every rare path here: this future is moved a few
            // times per call.
            return Box::pin(legacy.send(message)).await.map(|()| None);
        }
        // The revision of the session, for the requests the transport makes
        // on its own (a stream's GET, the DELETE): a legacy one only. The
        // probe names the modern revision, and a legacy server that refused
        // it would refuse those requests too.
        if let Some(version) = message.protocol_version()
            && !message.is_modern()
        {
            let _ = self.shared.protocol_version.set(version);
        }
        if let OutgoingKind::Notification {
            cancels: Some(id), ..
        } = message.kind()
        {
            if let Some(stream) = self.shared.streams().remove(id) {
                // The caller gave up: its answer's stream has nothing left
                // to deliver. In the modern era, closing it is the
                // cancellation.
                stream.abort();
            }
            if message.is_modern() {
                return Ok(None);
            }
        }
        let opens_session = message.method() == Some("notifications/initialized");
        // Kept for the fallback: a clone shares the encoded bytes.
        let initialize = (message.method() == Some("initialize")).then(|| message.clone());
        let shared = &self.shared;
        // Pinned here and lent: passed by value, the send would be stored
        // twice in `unless_closed`'s future (its argument, then its pinned
        // copy), and this future is moved a few times per call.
        let send = std::pin::pin!(post::send(shared, message));
        let sent = shared.unless_closed(send).await?;
        let answer = match (sent, initialize) {
            (Err(TransportError::HttpStatus(refused)), Some(initialize))
                if refuses_streamable(&refused) =>
            {
                return Box::pin(self.fall_back(initialize, refused))
                    .await
                    .map(|()| None);
            }
            (sent, _) => sent?,
        };
        if opens_session && let Some(first_answer) = stream::open_standalone(shared) {
            // Server requests and notifications that belong to no request
            // of ours come on the standalone stream. The session is handed
            // over once the server has answered its GET (bounded): a
            // server may drop what it sends while no stream is open, such
            // as a request made from inside a tool call that follows at
            // once.
            let _ = Box::pin(tokio::time::timeout(STANDALONE_OPEN_WAIT, first_answer)).await;
        }
        Ok(answer)
    }

    /// The fallback to HTTP+SSE after `initialize` was `refused`: a `GET`
    /// to the same URL, which must answer with an event stream and its
    /// `endpoint` event; then `initialize` goes there, and so does every
    /// later message. A server that answers the `GET` with no event stream
    /// is not an HTTP+SSE server: the refusal is the error, unless the
    /// `GET` wanted authorization (then that says what to do). One that
    /// does but then fails (no `endpoint` event in time, one on another
    /// origin) is one, and its failure is the error.
    async fn fall_back(
        &self,
        initialize: Outgoing,
        refused: Box<HttpStatusError>,
    ) -> Result<(), TransportError> {
        let shared = &self.shared;
        let client = shared.client().clone().ok_or(TransportError::Closed)?;
        let settings = LinkSettings {
            url: shared.url.clone(),
            client,
            headers: shared.headers.clone(),
            auth: shared.auth.clone(),
            max_message_bytes: shared.max_message_bytes,
            endpoint_timeout: shared.sse_endpoint_timeout,
        };
        let link = Link::new(settings, shared.inbound.clone());
        match shared.unless_closed(link.open()).await? {
            Ok(()) => {}
            // A GET that wants authorization is likely the right one: its
            // refusal says what to do, the POST's would not.
            Err(OpenError {
                event_stream: false,
                error,
            }) if !is_authorization(&error) => {
                tracing::debug!(%error, "mcp: the endpoint is no HTTP+SSE event stream either");
                return Err(TransportError::HttpStatus(refused));
            }
            Err(OpenError { error, .. }) => return Err(error),
        }
        tracing::info!(
            url = %redact(&shared.url),
            status = refused.status,
            "mcp: the server refused streamable HTTP; continuing on the HTTP+SSE transport (2024-11-05)"
        );
        // One `initialize` is sent at a time, so no other fallback can
        // have won; were one to, its link is kept and this one dropped.
        let _ = self.legacy.set(link);
        let _ = self.fell_back.set(refused.status);
        let Some(legacy) = self.legacy.get() else {
            return Err(TransportError::Closed); // unreachable: just set
        };
        if shared.closed.load(Ordering::SeqCst) {
            legacy.close(); // closed while the stream opened
            return Err(TransportError::Closed);
        }
        legacy.send(initialize).await
    }
}

/// Whether a failure to open the event stream is about authorization: the
/// auth provider failed, or the `GET` was refused with `401` or `403`.
fn is_authorization(error: &TransportError) -> bool {
    match error {
        TransportError::Authorization(_) => true,
        TransportError::HttpStatus(status) => matches!(status.status, 401 | 403),
        _ => false,
    }
}

/// Whether a refusal of `initialize` is the one the specification tells a
/// client to try HTTP+SSE after: `400`, `404` or `405` with a body that is
/// no JSON-RPC error (a server of streamable HTTP refusing the request
/// itself says why in one).
fn refuses_streamable(refused: &HttpStatusError) -> bool {
    matches!(refused.status, 400 | 404 | 405)
        && !post::is_error_response(refused.body_excerpt.as_bytes())
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
