//! Requests in flight: ids, the replies awaited, cancellation, and the end
//! of the connection.
//!
//! Any number of requests may be in flight. Each caller encodes and sends
//! its own request on its own task, registers a [`Waiter`] under the
//! request's id, and waits for the inbound driver (`inbound.rs`) to hand it
//! the reply's bytes, which it decodes itself; unless its send returned the
//! answer already (an HTTP JSON answer: [`Transport::send_request`]), which
//! it then takes in the waiter's place. Dropping a caller's future drops
//! its [`InFlight`] guard, which forgets the waiter and asks the inbound
//! side to announce the cancellation at once.
//!
//! [`Transport::send_request`]: crate::Transport::send_request

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Instant;

use bytes::Bytes;
use futures_util::future::Either;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::{mpsc, oneshot};
use tracing::Instrument;

use crate::error::Error;
use crate::session::modern::era::ModernMeta;
use crate::session::progress::Progress;
use crate::session::protocol::CancelledParams;
use crate::session::telemetry::{self, RequestSpan};
use crate::wire::jsonrpc::{self, Extras, Incoming, Outcome};
use crate::wire::transport::{DynTransport, IdMap, Outgoing, OutgoingKind, RequestId};
use crate::wire::transport_error::TransportError;

/// How many progress reports may wait for a slow observer; beyond that,
/// reports are dropped (each one supersedes the previous anyway).
const PROGRESS_QUEUE: usize = 64;

/// What the inbound side hands a waiting request.
#[derive(Debug)]
pub(crate) enum Reply {
    /// The response's bytes, to be decoded by the caller.
    Message(Bytes),
    /// The transport lost this request's answer.
    Failed(TransportError),
}

/// Something the inbound side must send on the connection's behalf.
#[derive(Debug)]
pub(crate) enum Command {
    /// Announce that the caller of request `id` went away.
    Cancel(RequestId),
    /// Say on `done` once every send queued before this one is over
    /// (delivered, failed or given up): what `close` waits for, so that
    /// the cancellations of requests abandoned just before reach the
    /// server before the session ends.
    Flush(oneshot::Sender<()>),
}

/// Why the connection carries no more requests.
#[derive(Debug)]
enum Ended {
    /// The client was closed.
    Closed,
    /// The transport failed for good (the server died, the connection
    /// broke); every later request fails with a copy of this.
    Failed(Arc<TransportError>),
}

/// A request waiting for its reply.
struct Waiter {
    reply: oneshot::Sender<Reply>,
    /// Where this request's progress reports go, when the caller asked for
    /// them (the progress token is the request id).
    progress: Option<mpsc::Sender<Progress>>,
}

struct Waiters {
    by_id: IdMap<Waiter>,
    ended: Option<Ended>,
}

/// The shared half of a client's connection: the transport's sending side
/// and the table of requests in flight.
pub(crate) struct Connection {
    transport: Arc<dyn DynTransport>,
    next_id: AtomicU64,
    waiters: Mutex<Waiters>,
    /// The revision negotiated at `initialize` or chosen by discovery,
    /// marked on every later message.
    protocol_version: OnceLock<&'static str>,
    /// Set when the connection speaks the modern era: the `_meta` entries
    /// every request carries.
    modern: OnceLock<ModernMeta>,
    commands: mpsc::UnboundedSender<Command>,
    /// Set once the server's `initialize` answer was accepted (the revision
    /// is negotiated): from then on the server may send requests.
    negotiated: AtomicBool,
    /// What the transport says of itself.
    traits: TransportTraits,
    /// The log level every modern request names (`set_log_level`): an
    /// index into [`LOG_LEVELS`] plus one, 0 for none.
    log_level: AtomicU8,
    /// Set once the connection has ended, closed or failed: a check
    /// without the table's lock.
    has_ended: AtomicBool,
    /// Woken when the connection ends (what a restart waits for).
    ending: tokio::sync::Notify,
    /// When the connection was made: its session's duration is measured
    /// from here (`telemetry.rs`).
    opened: Instant,
}

/// What a transport says of itself, asked once when the client is made.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TransportTraits {
    /// It mirrors modern requests into headers (HTTP).
    pub(crate) mirrors_headers: bool,
    /// It carries the initialize era only (HTTP+SSE).
    pub(crate) legacy_only: bool,
    /// The client starts a new session when the server dropped it (HTTP,
    /// when configured so).
    pub(crate) renews_sessions: bool,
    /// Its `send_request` may return a request's answer (HTTP).
    pub(crate) returns_answers: bool,
}

/// The log levels a modern request may name, least severe first.
const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("next_id", &self.next_id)
            .field("protocol_version", &self.protocol_version.get())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// A connection over `transport`; the receiver takes the commands for
    /// the inbound side.
    pub(crate) fn new(
        transport: Arc<dyn DynTransport>,
        traits: TransportTraits,
    ) -> (Self, mpsc::UnboundedReceiver<Command>) {
        let (commands, receiver) = mpsc::unbounded_channel();
        let connection = Connection {
            transport,
            next_id: AtomicU64::new(1),
            waiters: Mutex::new(Waiters {
                by_id: HashMap::default(),
                ended: None,
            }),
            protocol_version: OnceLock::new(),
            modern: OnceLock::new(),
            commands,
            negotiated: AtomicBool::new(false),
            traits,
            log_level: AtomicU8::new(0),
            has_ended: AtomicBool::new(false),
            ending: tokio::sync::Notify::new(),
            opened: Instant::now(),
        };
        (connection, receiver)
    }

    fn waiters(&self) -> MutexGuard<'_, Waiters> {
        // The table is consistent after every statement: a panic elsewhere
        // cannot leave it half-updated.
        self.waiters.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records the negotiated protocol revision: the handshake is done as
    /// far as the server's requests are concerned.
    pub(crate) fn set_protocol_version(&self, version: &'static str) {
        let _ = self.protocol_version.set(version);
        self.negotiated.store(true, Ordering::Release);
    }

    /// The legacy revision negotiated at `initialize`, once it was.
    pub(crate) fn protocol_version(&self) -> Option<&'static str> {
        self.protocol_version.get().copied()
    }

    /// Decides the modern era for good: every later request carries
    /// `meta`'s entries and revision.
    pub(crate) fn set_modern(&self, meta: ModernMeta) {
        let version = meta.version();
        let _ = self.modern.set(meta);
        self.set_protocol_version(version);
    }

    /// The modern `_meta` entries, when the connection speaks that era.
    pub(crate) fn modern(&self) -> Option<&ModernMeta> {
        self.modern.get()
    }

    /// Whether modern requests' bodies are mirrored into headers (HTTP):
    /// then tool annotations for them are checked and used.
    pub(crate) fn mirrors_headers(&self) -> bool {
        self.traits.mirrors_headers && self.modern.get().is_some()
    }

    /// Whether the transport carries the initialize era only: the
    /// handshake then skips the probe.
    pub(crate) fn legacy_only(&self) -> bool {
        self.traits.legacy_only
    }

    /// What a request's span says of this connection: its revision, where
    /// it goes ([`Transport::peer`](crate::Transport::peer)) and its
    /// session ([`Transport::session_id`](crate::Transport::session_id)).
    pub(crate) fn reached(&self) -> telemetry::Reached {
        telemetry::Reached {
            protocol: self.protocol_version(),
            peer: self.transport.peer(),
            session_id: self.transport.session_id(),
        }
    }

    /// Whether a session the server dropped is renewed
    /// ([`Transport::renews_sessions`](crate::Transport::renews_sessions)).
    pub(crate) fn renews_sessions(&self) -> bool {
        self.traits.renews_sessions
    }

    /// Names `level` (one of the protocol's eight, e.g. `"debug"`) in every
    /// later modern request, which is how the modern era asks for log
    /// messages. An unknown level is ignored.
    pub(crate) fn set_log_level(&self, level: &str) {
        if let Some(index) = LOG_LEVELS.iter().position(|known| *known == level) {
            self.log_level.store(index as u8 + 1, Ordering::Relaxed);
        }
    }

    /// Whether the server's `initialize` answer was accepted.
    pub(crate) fn is_negotiated(&self) -> bool {
        self.negotiated.load(Ordering::Acquire)
    }

    /// Marks `message` with the negotiated revision, if there is one yet
    /// and the message names none of its own (never `initialize`, which
    /// negotiates it).
    pub(crate) fn stamp(&self, message: Outgoing) -> Outgoing {
        match self.protocol_version.get() {
            Some(version)
                if message.protocol_version().is_none()
                    && message.method() != Some("initialize") =>
            {
                message.with_protocol_version(version)
            }
            _ => message,
        }
    }

    /// Sends a message, stamped, through the transport; a notification in
    /// a span of its own while anything listens (`telemetry.rs`).
    pub(crate) async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        let message = self.stamp(message);
        if let OutgoingKind::Notification { method, .. } = message.kind()
            && telemetry::listening()
        {
            let span = telemetry::notification_span(method, self.protocol_version());
            return self.transport.send(message).instrument(span).await;
        }
        self.transport.send(message).await
    }

    /// Sends a request, stamped, through the transport: its answer when
    /// the send received it itself (HTTP's JSON answer), `None` when the
    /// inbound side will hand it over (always, for a transport that returns
    /// no answers: its requests go through its plain `send`).
    /// [`exchange`](Connection::exchange) does the same inline.
    async fn send_request(&self, message: Outgoing) -> Result<Option<Bytes>, TransportError> {
        let message = self.stamp(message);
        match self.traits.returns_answers {
            true => self.transport.send_request(message).await,
            false => self.transport.send(message).await.map(|()| None),
        }
    }

    /// Waits until the inbound side has sent everything queued so far (the
    /// cancellations of abandoned requests, answers to the server); at once
    /// when the inbound side is not running. Unbounded itself (each send is
    /// bounded by the inbound side): the caller sets the limit.
    pub(crate) async fn flush(&self) {
        let (done, flushed) = oneshot::channel();
        if self.commands.send(Command::Flush(done)).is_ok() {
            // An error means the inbound side is gone: nothing is queued.
            let _ = flushed.await;
        }
    }

    /// Closes the transport.
    pub(crate) async fn close_transport(&self) -> Result<(), TransportError> {
        self.transport.close().await
    }

    /// Sends `request` and returns its answer's bytes, undecoded (a result
    /// or an error): what the modern era's retries look at first. Traced in
    /// a client span while anything listens (`telemetry.rs`).
    /// Cancel safe: dropped before the answer, the request is forgotten and
    /// announced with `notifications/cancelled` (see
    /// [`Client`](crate::Client)).
    pub(crate) fn exchange<'a, 'r: 'a, 'd: 'a, P: Serialize>(
        &'a self,
        operation: &'a (dyn fmt::Display + Sync),
        request: &'a Request<'r, P>,
        on_progress: Option<&'a mut (dyn FnMut(Progress) + Send + 'd)>,
    ) -> impl Future<Output = Result<Bytes, Error>> + use<'a, 'r, 'd, P> {
        // The observer's own lifetime shortened to the borrow's (the
        // exchange holds it no longer).
        let on_progress =
            on_progress.map(|observer| -> &'a mut (dyn FnMut(Progress) + Send) { observer });
        // Either the plain exchange's future or a box: while nobody
        // listens, every call's future holds nothing more than before
        // (tests/future_sizes.rs); while something does, the span costs
        // more than the allocation.
        match telemetry::listening() {
            true => Either::Right(Box::pin(self.exchange_traced(
                operation,
                request,
                on_progress,
            ))),
            false => Either::Left(self.exchange_in(operation, request, on_progress, None)),
        }
    }

    /// [`exchange`](Connection::exchange) in a client span.
    async fn exchange_traced<P: Serialize>(
        &self,
        operation: &(dyn fmt::Display + Sync),
        request: &Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<Bytes, Error> {
        match telemetry::request_span(request.method, request.name, || self.reached()) {
            Some(traced) => {
                traced
                    .run(self.exchange_in(operation, request, on_progress, Some(&traced)))
                    .await
            }
            None => {
                self.exchange_in(operation, request, on_progress, None)
                    .await
            }
        }
    }

    /// [`exchange`](Connection::exchange), in `traced`'s span if any.
    async fn exchange_in<P: Serialize>(
        &self,
        operation: &(dyn fmt::Display + Sync),
        request: &Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
        traced: Option<&RequestSpan>,
    ) -> Result<Bytes, Error> {
        let (mut in_flight, message) =
            self.start(operation, request, on_progress.is_some(), traced)?;
        // `send_request`, inlined: every call comes this way, and one more
        // state machine around the transport's send cost each stdio call
        // about 80 instructions (callgrind).
        let message = self.stamp(message);
        let sent = match self.traits.returns_answers {
            true => self.transport.send_request(message).await,
            false => self.transport.send(message).await.map(|()| None),
        };
        let answer = sent.map_err(|source| in_flight.send_failed(operation, source))?;
        let reply = in_flight.reply(answer, on_progress).await;
        reply.map_err(|ended| ended.error(operation))
    }

    /// [`exchange`](Connection::exchange), telling `started` the request's
    /// id before it is sent: a subscription's acknowledgment names it.
    pub(crate) async fn exchange_noting_id<P: Serialize>(
        &self,
        operation: &(dyn fmt::Display + Sync),
        request: &Request<'_, P>,
        started: impl FnOnce(RequestId),
    ) -> Result<Bytes, Error> {
        self.exchange_plain(operation, request, Some(started), true)
            .await
    }

    /// [`exchange`](Connection::exchange) for the era probe: given up on
    /// (dropped), it is forgotten without announcing a cancellation, which
    /// would be the first thing a legacy server hears before `initialize`.
    pub(crate) async fn exchange_quietly<P: Serialize>(
        &self,
        operation: &(dyn fmt::Display + Sync),
        request: &Request<'_, P>,
    ) -> Result<Bytes, Error> {
        self.exchange_plain(operation, request, None::<fn(RequestId)>, false)
            .await
    }

    /// An exchange without progress, in a client span while anything
    /// listens: `started` is told the id; `announce` says whether giving
    /// up is announced to the server.
    async fn exchange_plain<P: Serialize>(
        &self,
        operation: &(dyn fmt::Display + Sync),
        request: &Request<'_, P>,
        started: Option<impl FnOnce(RequestId)>,
        announce: bool,
    ) -> Result<Bytes, Error> {
        let traced = telemetry::request_span(request.method, request.name, || self.reached());
        let exchanged = async {
            let (mut in_flight, message) =
                self.start(operation, request, false, traced.as_ref())?;
            in_flight.announce = announce;
            if let Some(started) = started {
                started(in_flight.id());
            }
            let answer = self
                .send_request(message)
                .await
                .map_err(|source| in_flight.send_failed(operation, source))?;
            let reply = in_flight.reply(answer, None).await;
            reply.map_err(|ended| ended.error(operation))
        };
        match &traced {
            None => exchanged.await,
            Some(traced) => traced.run(exchanged).await,
        }
    }

    /// Registers a request and encodes it; the caller sends the message.
    /// A modern connection adds its `_meta` entries (or the request's own,
    /// for a probe or a version retry); `with_progress` puts the request's
    /// id in `_meta` as its progress token.
    pub(crate) fn start<P: Serialize>(
        &self,
        operation: &(dyn fmt::Display + Sync),
        request: &Request<'_, P>,
        with_progress: bool,
        traced: Option<&RequestSpan>,
    ) -> Result<(InFlight<'_>, Outgoing), Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let trace = traced.and_then(|traced| {
            traced.sent_as(id);
            trace_members(traced.span())
        });
        let modern = request.modern.or_else(|| self.modern.get());
        let log_level = match (modern, self.log_level.load(Ordering::Relaxed)) {
            (Some(_), level @ 1..) => LOG_LEVELS.get(usize::from(level) - 1).copied(),
            _ => None,
        };
        let extras = Extras {
            progress_token: with_progress.then_some(id),
            meta: modern.map(ModernMeta::entries),
            log_level,
            trace: trace.as_deref(),
            members: request.members,
        };
        let mut body = Vec::with_capacity(256);
        jsonrpc::encode_request_with(&mut body, id, request.method, request.params, extras)
            .map_err(|error| Error::encode(&operation.to_string(), error))?;
        let (reply_sender, reply) = oneshot::channel();
        let (progress_sender, progress) = match with_progress {
            true => {
                let (sender, receiver) = mpsc::channel(PROGRESS_QUEUE);
                (Some(sender), Some(receiver))
            }
            false => (None, None),
        };
        {
            let mut waiters = self.waiters();
            if let Some(ended) = &waiters.ended {
                return Err(ended.error(operation));
            }
            waiters.by_id.insert(
                id,
                Waiter {
                    reply: reply_sender,
                    progress: progress_sender,
                },
            );
        }
        let in_flight = InFlight {
            connection: self,
            id,
            reply,
            progress,
            armed: true,
            announce: true,
        };
        let mut message = Outgoing::request(id, request.method, Bytes::from(body));
        if let Some(modern) = modern {
            message = message.with_protocol_version(modern.version());
            if let (Some(name), true) = (request.name, names_its_target(request.method)) {
                message = message.with_name(name);
            }
            if !request.param_headers.is_empty() {
                message = message.with_param_headers(request.param_headers.to_vec());
            }
        }
        Ok((in_flight, message))
    }

    /// Fails early if the connection has ended.
    pub(crate) fn check_open(&self, operation: &(dyn fmt::Display + Sync)) -> Result<(), Error> {
        match &self.waiters().ended {
            Some(ended) => Err(ended.error(operation)),
            None => Ok(()),
        }
    }

    /// Hands a response to the request waiting for it. Returns `false` when
    /// nobody waits for `id` (its caller went away): the reply is dropped.
    pub(crate) fn deliver(&self, id: RequestId, message: Bytes) -> bool {
        let waiter = self.waiters().by_id.remove(&id);
        match waiter {
            Some(waiter) => waiter.reply.send(Reply::Message(message)).is_ok(),
            None => false,
        }
    }

    /// The only request in flight, if exactly one is: the one an error
    /// response without an id can only be about.
    pub(crate) fn sole_request(&self) -> Option<RequestId> {
        let waiters = self.waiters();
        match waiters.by_id.len() {
            1 => waiters.by_id.keys().next().copied(),
            _ => None,
        }
    }

    /// Forgets a request whose answer will never come (its message could not
    /// be sent).
    pub(crate) fn forget(&self, id: RequestId) {
        self.waiters().by_id.remove(&id);
    }

    /// Fails one request with a transport error.
    pub(crate) fn fail(&self, id: RequestId, error: TransportError) {
        if let Some(waiter) = self.waiters().by_id.remove(&id) {
            let _ = waiter.reply.send(Reply::Failed(error));
        }
    }

    /// Passes a progress report to the request it is for, if it asked for
    /// progress. A full queue drops the report: the next one supersedes it.
    pub(crate) fn progress(&self, id: RequestId, progress: Progress) {
        let waiters = self.waiters();
        if let Some(sender) = waiters.by_id.get(&id).and_then(|w| w.progress.as_ref())
            && sender.try_send(progress).is_err()
        {
            tracing::debug!(
                request_id = id,
                "mcp: dropped a progress report the caller has not read yet"
            );
        }
    }

    /// Ends the connection because the transport failed: every request in
    /// flight and every later one fails with (a copy of) `error`.
    pub(crate) fn fail_all(&self, error: TransportError) {
        self.end(Ended::Failed(Arc::new(error)));
    }

    /// Ends the connection because the client is closing.
    pub(crate) fn close(&self) {
        self.end(Ended::Closed);
    }

    fn end(&self, ended: Ended) {
        let failure;
        let waiters = {
            let mut waiters = self.waiters();
            if waiters.ended.is_some() {
                return;
            }
            failure = match &ended {
                Ended::Failed(error) => Some(error.clone()),
                Ended::Closed => None,
            };
            waiters.ended = Some(ended);
            self.has_ended.store(true, Ordering::Release);
            std::mem::take(&mut waiters.by_id)
        };
        // Dropping the senders wakes every waiter, which then reads `ended`.
        drop(waiters);
        telemetry::session_ended(failure.as_deref(), self.opened.elapsed(), || {
            (
                self.protocol_version(),
                self.transport.peer().network_transport,
            )
        });
        self.ending.notify_waiters();
    }

    /// Whether the connection has ended (closed, or its transport failed).
    pub(crate) fn has_ended(&self) -> bool {
        self.has_ended.load(Ordering::Acquire)
    }

    /// Waits for the connection to end: the transport's error when it
    /// failed, `None` when it was closed.
    pub(crate) async fn ended(&self) -> Option<Arc<TransportError>> {
        loop {
            // Registered before the check, so an end in between is seen.
            let ending = self.ending.notified();
            tokio::pin!(ending);
            ending.as_mut().enable();
            match &self.waiters().ended {
                Some(Ended::Failed(error)) => return Some(error.clone()),
                Some(Ended::Closed) => return None,
                None => {}
            }
            ending.await;
        }
    }

    /// The error a request sees once the connection has ended.
    fn ended_error(&self, operation: &(dyn fmt::Display + Sync)) -> Error {
        match &self.waiters().ended {
            Some(ended) => ended.error(operation),
            // Unreachable: a waiter's sender is only dropped unanswered by
            // `end`. Say something true anyway.
            None => Error::Closed {
                operation: operation.to_string(),
            },
        }
    }
}

impl Ended {
    fn error(&self, operation: &(dyn fmt::Display + Sync)) -> Error {
        match self {
            Ended::Closed => Error::Closed {
                operation: operation.to_string(),
            },
            Ended::Failed(error) => Error::transport(&operation.to_string(), error.duplicate()),
        }
    }
}

/// A request as the session sends it: its method and parameters, and what
/// the modern era adds.
pub(crate) struct Request<'a, P> {
    pub(crate) method: &'static str,
    pub(crate) params: &'a P,
    /// What the request is about (a tool's or prompt's name, a URI): the
    /// `Mcp-Name` of a modern HTTP request for the methods that have one.
    pub(crate) name: Option<&'a str>,
    /// Further members of `params` (a multi-round-trip retry's answers).
    pub(crate) members: Option<&'a str>,
    /// The modern `_meta` to send instead of the connection's (the probe,
    /// before the era is decided; a retry with another revision).
    pub(crate) modern: Option<&'a ModernMeta>,
    /// `Mcp-Param-*` headers, name and encoded value (modern HTTP).
    pub(crate) param_headers: &'a [(String, String)],
}

impl<P> Clone for Request<'_, P> {
    fn clone(&self) -> Self {
        *self
    }
}

// References only, whatever `P` is.
impl<P> Copy for Request<'_, P> {}

impl<'a, P> Request<'a, P> {
    /// Request `method` with `params`, nothing more.
    pub(crate) fn new(method: &'static str, params: &'a P) -> Self {
        Request {
            method,
            params,
            name: None,
            members: None,
            modern: None,
            param_headers: &[],
        }
    }
}

/// Whether a modern HTTP request of `method` names its target in
/// `Mcp-Name` (for the tasks extension's methods, the task id: what a
/// load balancer routes the task's requests by).
fn names_its_target(method: &str) -> bool {
    matches!(
        method,
        "tools/call"
            | "resources/read"
            | "prompts/get"
            | "tasks/get"
            | "tasks/update"
            | "tasks/cancel"
    )
}

/// The `_meta` members carrying `span`'s W3C trace context (feature
/// `otel`), when it has one.
#[cfg(feature = "otel")]
fn trace_members(span: &tracing::Span) -> Option<String> {
    crate::session::trace_context::meta_members(span)
}

/// Without the `otel` feature no trace context is known.
#[cfg(not(feature = "otel"))]
fn trace_members(_span: &tracing::Span) -> Option<String> {
    None
}

/// Encodes a notification as an [`Outgoing`] message.
pub(crate) fn encode_notification(
    method: &'static str,
    params: Option<&impl Serialize>,
) -> Result<Outgoing, serde_json::Error> {
    let mut body = Vec::with_capacity(128);
    jsonrpc::encode_notification(&mut body, method, params)?;
    Ok(Outgoing::notification(method, Bytes::from(body)))
}

/// Encodes the `notifications/cancelled` for request `id`.
pub(crate) fn encode_cancellation(id: RequestId) -> Outgoing {
    let mut body = Vec::with_capacity(128);
    // Two integers and a constant string: serialising cannot fail.
    let _ = jsonrpc::encode_notification(
        &mut body,
        "notifications/cancelled",
        Some(&CancelledParams::abandoned(id)),
    );
    Outgoing::cancellation(id, Bytes::from(body))
}

/// Decodes a response handed over by the inbound side.
pub(crate) fn decode<R: DeserializeOwned>(
    operation: &(dyn fmt::Display + Sync),
    message: Bytes,
) -> Result<R, Error> {
    match Incoming::<R>::parse(&message) {
        Ok(Incoming::Response { outcome, .. }) => match outcome {
            Outcome::Result(result) => Ok(result),
            Outcome::Error(source) => Err(Error::Protocol {
                operation: operation.to_string(),
                source,
            }),
            Outcome::Undecodable(error) => {
                Err(Error::invalid_response(&operation.to_string(), error))
            }
        },
        Ok(_) => Err(Error::invalid_response(
            &operation.to_string(),
            "the answer is not a JSON-RPC response",
        )),
        Err(problem) => Err(Error::invalid_response(&operation.to_string(), problem)),
    }
}

/// Why a request got no reply.
pub(crate) enum NoReply {
    /// The connection ended (closed, or the transport failed).
    Ended,
    /// The transport lost this request's answer.
    Failed(TransportError),
}

impl NoReply {
    fn error(self, operation: &(dyn fmt::Display + Sync), connection: &Connection) -> Error {
        match self {
            NoReply::Ended => connection.ended_error(operation),
            NoReply::Failed(source) => Error::transport(&operation.to_string(), source),
        }
    }
}

/// A request that was registered and (is being) sent, until its reply is
/// read.
///
/// Dropped before the reply arrives (its caller went away), it removes the
/// waiter, so a late reply is dropped on arrival, and asks the inbound side
/// to send `notifications/cancelled` for it right away.
pub(crate) struct InFlight<'c> {
    connection: &'c Connection,
    id: RequestId,
    reply: oneshot::Receiver<Reply>,
    progress: Option<mpsc::Receiver<Progress>>,
    /// Whether dropping it forgets the request (and announces that).
    armed: bool,
    /// Whether forgetting it on drop announces a cancellation.
    announce: bool,
}

impl InFlight<'_> {
    /// The request's id.
    pub(crate) fn id(&self) -> RequestId {
        self.id
    }

    /// The message could not be sent: forget the request (the server never
    /// saw it whole, so there is nothing to cancel). A send that gave way to
    /// [`close`](Connection::close) fails as every request in flight then
    /// does, with [`Error::Closed`].
    fn send_failed(
        &mut self,
        operation: &(dyn fmt::Display + Sync),
        source: TransportError,
    ) -> Error {
        self.armed = false;
        let mut waiters = self.connection.waiters();
        waiters.by_id.remove(&self.id);
        match &waiters.ended {
            Some(ended @ Ended::Closed) => ended.error(operation),
            _ => Error::transport(&operation.to_string(), source),
        }
    }

    /// Waits for the reply, handing progress reports to `on_progress`
    /// meanwhile; `answer` is the reply when the send returned it already
    /// (see [`Transport::send_request`](crate::Transport::send_request)).
    async fn reply(
        &mut self,
        answer: Option<Bytes>,
        mut on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<Bytes, ReplyError<'_>> {
        let reply = match answer {
            // Taken in the waiter's place, while the waiter is there.
            Some(answer) if self.take_waiter() => Ok(Reply::Message(answer)),
            // The inbound side's answer; at once for a waiter settled while
            // the send was under way (the connection ended).
            _ => loop {
                let Some(progress) = self.progress.as_mut() else {
                    break (&mut self.reply).await;
                };
                tokio::select! {
                    biased;
                    reply = &mut self.reply => break reply,
                    Some(report) = progress.recv() => {
                        if let Some(observer) = on_progress.as_deref_mut() {
                            observer(report);
                        }
                    }
                }
            },
        };
        self.armed = false;
        // Reports that arrived before the reply may still be queued: the
        // inbound side queued them first, so they are all here now (for an
        // answer the send returned: all that the inbound side has read).
        if let (Some(progress), Some(observer)) = (self.progress.as_mut(), on_progress) {
            while let Ok(report) = progress.try_recv() {
                observer(report);
            }
        }
        match reply {
            Ok(Reply::Message(message)) => Ok(message),
            Ok(Reply::Failed(error)) => Err(ReplyError {
                connection: self.connection,
                no_reply: NoReply::Failed(error),
            }),
            Err(_) => Err(ReplyError {
                connection: self.connection,
                no_reply: NoReply::Ended,
            }),
        }
    }

    /// Removes the waiter from the table; `false` if it was gone already.
    fn take_waiter(&self) -> bool {
        self.connection.waiters().by_id.remove(&self.id).is_some()
    }

    /// Stops treating a drop as a cancellation and hands over the reply
    /// receiver: for `initialize`, which is never cancelled and whose reply
    /// a later call may wait for.
    pub(crate) fn detach(mut self) -> oneshot::Receiver<Reply> {
        self.armed = false;
        let (_, placeholder) = oneshot::channel();
        std::mem::replace(&mut self.reply, placeholder)
    }
}

/// A request's missing reply, with what is needed to explain it.
pub(crate) struct ReplyError<'c> {
    connection: &'c Connection,
    no_reply: NoReply,
}

impl ReplyError<'_> {
    fn error(self, operation: &(dyn fmt::Display + Sync)) -> Error {
        self.no_reply.error(operation, self.connection)
    }
}

/// Reads a reply received through a detached [`InFlight`].
pub(crate) fn settle<R: DeserializeOwned>(
    connection: &Connection,
    operation: &(dyn fmt::Display + Sync),
    reply: Result<Reply, oneshot::error::RecvError>,
) -> Result<R, Error> {
    match reply {
        Ok(Reply::Message(message)) => decode(operation, message),
        Ok(Reply::Failed(source)) => Err(Error::transport(&operation.to_string(), source)),
        Err(_) => Err(connection.ended_error(operation)),
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let was_waiting = self.connection.waiters().by_id.remove(&self.id).is_some();
        if was_waiting && self.announce {
            tracing::debug!(
                request_id = self.id,
                "mcp: request abandoned; announcing it"
            );
            let _ = self.connection.commands.send(Command::Cancel(self.id));
        }
    }
}
