//! The boundary between the client and the wire: owned messages out, owned
//! messages in, sending and receiving at the same time.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::hash::{BuildHasherDefault, Hasher};
use std::pin::Pin;

use bytes::Bytes;

use crate::wire::transport_error::TransportError;

/// The id of a request this client sent. Ids are consecutive and never
/// reused on one client.
pub type RequestId = u64;

/// A table keyed by request id, hashed with [`IdHasher`].
pub(crate) type IdMap<V> = HashMap<RequestId, V, BuildHasherDefault<IdHasher>>;

/// Hashes request ids, which this client hands out itself (consecutive
/// integers, never chosen by the server), with one multiplication instead of
/// SipHash: the table is on every call's path.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn write_u64(&mut self, id: u64) {
        // Fibonacci hashing spreads consecutive ids over the high bits the
        // table uses.
        self.0 = id.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// One JSON-RPC message to the server, already encoded, with what a
/// transport needs to know about it so that no transport has to parse JSON.
///
/// The body is one complete JSON text without a trailing newline; framing
/// (a newline, an HTTP POST) is the transport's business.
#[derive(Debug, Clone)]
pub struct Outgoing {
    body: Bytes,
    kind: OutgoingKind,
    protocol_version: Option<&'static str>,
    /// The request's target, for HTTP's `Mcp-Name` (modern requests only).
    name: Option<Box<str>>,
    /// `Mcp-Param-*` headers: full name and encoded value.
    param_headers: Vec<(String, String)>,
}

/// What an [`Outgoing`] message is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutgoingKind {
    /// A request: the server answers it with a response carrying `id`.
    Request {
        /// The request's id.
        id: RequestId,
        /// The request's method, e.g. `tools/call`.
        method: Cow<'static, str>,
    },
    /// A notification: the server answers nothing.
    Notification {
        /// The notification's method, e.g. `notifications/cancelled`.
        method: Cow<'static, str>,
        /// For `notifications/cancelled`: the request it gives up on, so a
        /// transport can drop whatever it holds open for that request.
        cancels: Option<RequestId>,
    },
    /// This client's response to a request the server sent.
    Response,
}

impl Outgoing {
    /// A request with id `id` and method `method`, encoded as `body`.
    pub fn request(id: RequestId, method: impl Into<Cow<'static, str>>, body: Bytes) -> Self {
        Outgoing::new(
            OutgoingKind::Request {
                id,
                method: method.into(),
            },
            body,
        )
    }

    /// A notification with method `method`, encoded as `body`.
    pub fn notification(method: impl Into<Cow<'static, str>>, body: Bytes) -> Self {
        Outgoing::new(
            OutgoingKind::Notification {
                method: method.into(),
                cancels: None,
            },
            body,
        )
    }

    /// The `notifications/cancelled` for request `id`, encoded as `body`.
    pub fn cancellation(id: RequestId, body: Bytes) -> Self {
        Outgoing::new(
            OutgoingKind::Notification {
                method: Cow::Borrowed("notifications/cancelled"),
                cancels: Some(id),
            },
            body,
        )
    }

    /// A response to a server request, encoded as `body`.
    pub fn response(body: Bytes) -> Self {
        Outgoing::new(OutgoingKind::Response, body)
    }

    fn new(kind: OutgoingKind, body: Bytes) -> Self {
        Outgoing {
            body,
            kind,
            protocol_version: None,
            name: None,
            param_headers: Vec::new(),
        }
    }

    /// The same message, marked with the protocol revision the session
    /// negotiated (HTTP sends it as the `MCP-Protocol-Version` header).
    pub fn with_protocol_version(mut self, version: &'static str) -> Self {
        self.protocol_version = Some(version);
        self
    }

    /// The same message, naming its target: the tool, prompt or resource a
    /// modern `tools/call`, `prompts/get` or `resources/read` is about
    /// (HTTP mirrors it as `Mcp-Name`, encoded when it is not header-safe).
    pub fn with_name(mut self, name: impl Into<Box<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The same message, with `Mcp-Param-*` headers (full names, values
    /// already encoded as header-safe text) for HTTP to send: a modern
    /// tool call's arguments that the tool's schema mirrors into headers.
    pub fn with_param_headers(mut self, headers: Vec<(String, String)>) -> Self {
        self.param_headers = headers;
        self
    }

    /// The request's target, when the session named one
    /// ([`with_name`](Outgoing::with_name)).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// The `Mcp-Param-*` headers to send, name and encoded value.
    pub fn param_headers(&self) -> &[(String, String)] {
        &self.param_headers
    }

    /// Whether the message is sent in the modern (stateless) era: its
    /// revision is 2026-07-28 or later.
    pub fn is_modern(&self) -> bool {
        self.protocol_version
            .is_some_and(|version| version >= "2026-07-28")
    }

    /// The encoded message: one JSON text, no trailing newline.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// The encoded message, taken out (no copy, no reference count).
    pub fn into_body(self) -> Bytes {
        self.body
    }

    /// What the message is.
    pub fn kind(&self) -> &OutgoingKind {
        &self.kind
    }

    /// The request id, when the message is a request.
    pub fn request_id(&self) -> Option<RequestId> {
        match self.kind {
            OutgoingKind::Request { id, .. } => Some(id),
            _ => None,
        }
    }

    /// The method, for requests and notifications.
    pub fn method(&self) -> Option<&str> {
        match &self.kind {
            OutgoingKind::Request { method, .. } | OutgoingKind::Notification { method, .. } => {
                Some(method)
            }
            OutgoingKind::Response => None,
        }
    }

    /// The protocol revision negotiated at `initialize`; `None` for
    /// `initialize` itself and for messages sent before it.
    pub fn protocol_version(&self) -> Option<&'static str> {
        self.protocol_version
    }
}

/// What a transport delivers to the client.
#[derive(Debug)]
#[non_exhaustive]
pub enum Inbound {
    /// One message from the server, exactly as received (one JSON text).
    Message(Bytes),
    /// The transport cannot deliver the answer to request `id` (for HTTP: the
    /// request's event stream broke beyond resumption, or its answer was too
    /// large). That request fails with `error`; the others go on.
    RequestFailed {
        /// The request whose answer is lost.
        id: RequestId,
        /// Why.
        error: TransportError,
    },
    /// The server had dropped the session, and the transport started a new
    /// one on its own; what the old session held on the server is gone. The
    /// client tells its subscribers
    /// ([`ServerNotification::SessionRenewed`](crate::ServerNotification::SessionRenewed)).
    /// The transports of this crate never send it: they report the expiry
    /// instead, and the client renews the session itself
    /// ([`Transport::renews_sessions`]).
    SessionRenewed,
}

/// Where a transport's connection goes, as OpenTelemetry's network
/// attributes name it ([`Transport::peer`]): what each request's span
/// carries.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Peer {
    /// `network.transport`: `"pipe"` for stdio, `"tcp"` for HTTP.
    pub network_transport: Option<&'static str>,
    /// `network.protocol.name`: `"http"` for the HTTP transports.
    pub protocol_name: Option<&'static str>,
    /// `server.address`: the server's host name or IP address.
    pub address: Option<String>,
    /// `server.port`: the server's port.
    pub port: Option<u16>,
}

impl Peer {
    /// A server reached through the pipes of a process it runs in (stdio).
    pub fn pipe() -> Self {
        Peer {
            network_transport: Some("pipe"),
            ..Peer::default()
        }
    }

    /// A server reached over HTTP at `host` and `port`.
    pub fn http(host: impl Into<String>, port: Option<u16>) -> Self {
        Peer {
            network_transport: Some("tcp"),
            protocol_name: Some("http"),
            address: Some(host.into()),
            port,
        }
    }
}

/// A bidirectional channel carrying JSON-RPC messages to and from one MCP
/// server.
///
/// The [`Client`](crate::Client) sends from many tasks at once (every call
/// sends its own request) and receives from one task, its inbound side,
/// which runs for as long as the client is open. All methods take `&self`:
/// implementations synchronize internally.
///
/// # Contract
///
/// - **One message per send, one per receive.** [`send`](Transport::send)
///   delivers exactly one [`Outgoing`] message; [`recv`](Transport::recv)
///   returns exactly one incoming message, never a part of one or two
///   merged. A transport may skip input that is clearly not a message (a
///   stdio server's stray log line).
/// - **Ordering.** Messages from one stream of the server (stdio's stdout,
///   one HTTP answer) are received in the order the server sent them.
///   Messages sent by one task are delivered in the order it sent them;
///   concurrent sends are delivered whole, in some order.
/// - **Independence.** A send never waits for a `recv`, nor a `recv` for a
///   send: a full pipe or a slow answer in one direction can never stall
///   the other. A send may wait for the server to take the message, and for
///   an answer that comes with it (an HTTP POST waits for the answer's
///   headers, so that a refused request fails its sender with the status,
///   and reads a JSON answer's body); answers reach the client through
///   `recv`, except the one a [`send_request`](Transport::send_request)
///   returns, and a long answer (an event stream) is read beside the send,
///   not by it.
/// - **Cancel safety.** Both may be dropped at any await point. A dropped
///   `send` has delivered the message whole or not at all, or will deliver
///   it whole before the next message; it never leaves half a message on
///   the wire. A dropped `recv` loses no input: a half-read message is
///   completed by the next `recv`.
/// - **Bounds.** A message larger than the transport's limit is refused
///   with [`TransportError::MessageTooLarge`]; nothing buffers without
///   bound: when the client does not receive, the transport stops reading.
/// - **Errors.** An error from `send` fails that message only (its request,
///   if it is one). An error from `recv` is fatal: the connection is gone,
///   every request in flight fails with it, and later calls should fail
///   promptly the same way. A failure that concerns one request only is
///   delivered as [`Inbound::RequestFailed`].
/// - **Close.** [`close`](Transport::close) releases the connection (for a
///   process: ends it), makes a pending `recv` and `send` give way, and is
///   called at most once by the client. Dropping a transport without
///   closing it must still release everything, without blocking.
pub trait Transport: Send + Sync + 'static {
    /// Sends one message. See the trait's contract.
    fn send(&self, message: Outgoing) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Sends one request (a `message` whose [`kind`](Outgoing::kind) is
    /// [`OutgoingKind::Request`]), as [`send`](Transport::send) does, and
    /// returns its answer when the send itself received it: streamable
    /// HTTP's JSON answer to its POST. The client then hands it straight to
    /// the request's caller; that answer never comes through
    /// [`recv`](Transport::recv). `None` when the answer comes, as every
    /// other message does, through `recv` (an event stream's, stdio's).
    ///
    /// What is returned must be the server's response to this request
    /// (its id, or an error without one, given this request's id): the
    /// client does not route it.
    ///
    /// The client calls it only when [`returns_answers`](Transport::returns_answers)
    /// says so, and `send` otherwise. The default sends with `send` and
    /// returns `None`, which is right for any transport: overriding it only
    /// saves the answer's trip through `recv`.
    fn send_request(
        &self,
        message: Outgoing,
    ) -> impl Future<Output = Result<Option<Bytes>, TransportError>> + Send {
        async move { self.send(message).await.map(|()| None) }
    }

    /// Receives the next message. See the trait's contract.
    fn recv(&self) -> impl Future<Output = Result<Inbound, TransportError>> + Send;

    /// Closes the connection and releases its resources.
    fn close(&self) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Whether the transport mirrors a modern request's body into headers
    /// ([`Outgoing::name`], [`Outgoing::param_headers`]): streamable HTTP
    /// does. The client then checks the tools' `x-mcp-header` annotations
    /// and leaves out the tools whose annotations are invalid, as the
    /// protocol asks of HTTP clients. `false` by default.
    fn mirrors_headers(&self) -> bool {
        false
    }

    /// Whether [`send_request`](Transport::send_request) may return a
    /// request's answer: streamable HTTP's does. The client asks once, when
    /// it is made; while this is `false` (the default) it sends every
    /// request with [`send`](Transport::send), so a transport that returns
    /// nothing pays nothing for it. A transport that wraps another forwards
    /// this and `send_request` to it, or its inner transport's answers come
    /// through `recv` again.
    fn returns_answers(&self) -> bool {
        false
    }

    /// Whether the transport carries only the initialize era of the
    /// protocol: the HTTP+SSE transport of 2024-11-05 does (no server of
    /// the modern era serves it). The client then sends `initialize` at
    /// once instead of probing with `server/discover` (which such a server
    /// may leave unanswered until the probe's timeout), and refuses a
    /// pinned modern revision (ADR 0018). `false` by default.
    fn legacy_only(&self) -> bool {
        false
    }

    /// Whether the client should start a new session when a request fails
    /// because the server dropped the one it belonged to
    /// ([`HttpStatusError::is_session_expired`](crate::HttpStatusError::is_session_expired)):
    /// the client then runs the handshake again on this transport, tells
    /// the new session what the old one was told (the log level, resource
    /// subscriptions) and sends the request again, once. Streamable HTTP
    /// answers as `HttpConfig::reinitialize_expired_session` says. `false`
    /// by default.
    fn renews_sessions(&self) -> bool {
        false
    }

    /// Where the connection goes, as telemetry names it (the
    /// OpenTelemetry `network.*` and `server.*` attributes of each request's
    /// span): asked only while something listens to the spans. Nothing by
    /// default.
    fn peer(&self) -> Peer {
        Peer::default()
    }

    /// The session the server assigned, if any (streamable HTTP's
    /// `Mcp-Session-Id`): the `mcp.session.id` of each request's span,
    /// asked only while something listens. `None` by default.
    fn session_id(&self) -> Option<String> {
        None
    }

    /// A new transport to the same server, for a client that restarts a
    /// server it lost ([`RestartPolicy`](crate::RestartPolicy)): the stdio
    /// transport starts its command again, with the same configuration.
    /// Called only after this transport has failed for good (and been
    /// closed). `None` (the default) for a transport that cannot start its
    /// server again; a client with a restart policy then gives up at once
    /// (`RestartAbandoned`) and ends as without one.
    fn reopen(&self) -> Option<Result<Self, TransportError>>
    where
        Self: Sized,
    {
        None
    }
}

/// A boxed future, as the object-safe form of [`Transport`] returns them.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`Transport`]'s sending half in object-safe form, so that
/// [`Client`](crate::Client) is one type whatever the transport. (The
/// receiving half is driven by a task generic over the transport: no box per
/// message there.)
pub(crate) trait DynTransport: Send + Sync {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>>;
    fn send_request(
        &self,
        message: Outgoing,
    ) -> BoxFuture<'_, Result<Option<Bytes>, TransportError>>;
    fn close(&self) -> BoxFuture<'_, Result<(), TransportError>>;
    fn peer(&self) -> Peer;
    fn session_id(&self) -> Option<String>;
}

impl<T: Transport> DynTransport for T {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(Transport::send(self, message))
    }

    fn send_request(
        &self,
        message: Outgoing,
    ) -> BoxFuture<'_, Result<Option<Bytes>, TransportError>> {
        Box::pin(Transport::send_request(self, message))
    }

    fn close(&self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(Transport::close(self))
    }

    fn peer(&self) -> Peer {
        Transport::peer(self)
    }

    fn session_id(&self) -> Option<String> {
        Transport::session_id(self)
    }
}
