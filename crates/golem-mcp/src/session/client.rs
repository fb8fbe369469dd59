//! The MCP client: the handshake, the requests every feature is built on,
//! notifications, close.

use std::fmt;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock, PoisonError, RwLock, Weak};

use tokio::sync::{Mutex, oneshot};
use tokio::task::JoinHandle;

use bytes::Bytes;

use crate::error::Error;
use crate::session::cache::{self, ResultCache};
use crate::session::connection::{Connection, Reply, Request, encode_notification, settle};
use crate::session::era::ModernMeta;
use crate::session::extensions::Extensions;
use crate::session::inbound::{self, Sinks};
use crate::session::listen::{self, Listening};
use crate::session::mrtr;
use crate::session::notifications::{Hub, Notifications};
use crate::session::paging;
use crate::session::probe::{Probe, Verdict};
use crate::session::progress::Progress;
use crate::session::protocol::{
    ClientInfo, Era, HowChosen, InitializeParams, InitializeResult, MODERN_PROTOCOL_VERSION,
    ProtocolChoice, ServerInfo,
};
use crate::session::restart::{RestartPolicy, Restarts};
use crate::session::serving::Offer;
use crate::wire::transport::{Outgoing, RequestId, Transport};
use crate::wire::transport_error::TransportError;

/// How long [`Client::close`] waits for the cancellations of requests
/// abandoned just before it to be sent.
const CLOSE_FLUSH_TIME: std::time::Duration = std::time::Duration::from_secs(1);

/// A client for one MCP server, over any [`Transport`].
///
/// Cheap to clone (clones share the connection) and `Send + Sync`. Any
/// number of requests may be in flight at once, from any number of tasks:
/// each is sent as soon as it is made and its reply is routed back to it by
/// id. From [`initialize`](Client::initialize) until the client is closed,
/// an inbound task reads the server, calls or no calls: a server `ping` is
/// answered at once, the requests the application registered handlers for
/// ([`ClientConfig`](crate::ClientConfig)) go to them and any other is refused with "method not
/// found", progress reports go to the call that asked for them, and other
/// notifications to [`notifications`](Client::notifications) subscribers.
/// (ADRs 0006 and 0007 say why.) A modern (2026-07-28) server sends no
/// requests: one that needs input answers a call with `input_required`,
/// and the same handlers answer it before the call is sent again (ADR
/// 0018).
///
/// # Cancel safety
///
/// Every async method may be dropped at any await point (a timeout, a
/// `select!`), and every other request on the client goes on untouched.
/// A dropped request is announced to the server with
/// `notifications/cancelled` right away (a modern HTTP request's stream is
/// closed instead), and its late answer is dropped. A
/// dropped [`initialize`](Client::initialize) is not cancelled (the
/// protocol forbids it): the next call waits for the same answer. After a
/// dropped [`close`](Client::close), the client is closed.
///
/// # Lifetime
///
/// The inbound task runs on the Tokio runtime that `initialize` ran on.
/// Closing the client, or dropping its last clone, ends it and releases the
/// transport (a stdio server's whole process group is ended). With a
/// [`RestartPolicy`](crate::RestartPolicy), a restart under way holds the
/// client until its attempt ends (at most its handshake timeout); `close`
/// stops it at once.
///
/// # Example
///
/// ```no_run
/// use golem_mcp::{Client, StdioConfig, StdioTransport};
///
/// # async fn run() -> Result<(), golem_mcp::Error> {
/// let transport = StdioTransport::spawn(StdioConfig {
///     args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
///     ..StdioConfig::new("npx")
/// })?;
/// let client = Client::new(transport);
/// let server = client.initialize().await?;
/// println!("connected to {} {}", server.name, server.version);
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// let arguments = serde_json::value::RawValue::from_string(r#"{"message":"hi"}"#.into()).expect("valid JSON");
/// // Calls run concurrently on the one connection (from clones too).
/// let other = client.clone();
/// let (a, b) = tokio::join!(
///     client.call_tool("echo", &arguments),
///     other.call_tool("echo", &arguments),
/// );
/// println!("{} / {}", a?.text(), b?.text());
/// client.close().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
    /// The session every request of this handle must go to, when it is
    /// one of a sequence that only that server understands (the pages of a
    /// list, a task's polls): after a restart, such a request fails rather
    /// than reach a server that never handed out the cursor or the task.
    pinned: Option<u64>,
}

/// A reference to a client that does not keep it (or its server) alive:
/// what a handler's [`RequestContext`](crate::RequestContext) and a
/// [`ResourceSubscription`](crate::ResourceSubscription) hold.
#[derive(Clone, Default)]
pub(crate) struct WeakClient(Weak<Inner>);

impl fmt::Debug for WeakClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl WeakClient {
    /// The client, while any clone of it is left.
    pub(crate) fn upgrade(&self) -> Option<Client> {
        self.0.upgrade().map(|inner| Client {
            inner,
            pinned: None,
        })
    }
}

/// The state clones of a [`Client`] share.
pub(crate) struct Inner {
    /// The connection the client uses now. A restart (`restart.rs`)
    /// replaces it with one to the server started again.
    session: RwLock<Arc<Session>>,
    /// The same session, when no restart can replace it (no policy): what
    /// every call borrows, without the lock or a reference count.
    fixed: Option<Arc<Session>>,
    /// Set by `close`: no session is made or used after it.
    closed: AtomicBool,
    /// Whether the transport mirrors requests into headers in the era
    /// decided (set when the first session is ready).
    mirrors_headers: AtomicBool,
    /// What the client offers the server (its capabilities, its handlers).
    offer: Arc<dyn Offer>,
    /// Where the server's notifications are broadcast.
    hub: Arc<Hub>,
    /// The modern era's results, kept while fresh (ADR 0024).
    cache: Arc<ResultCache>,
    /// The modern era's subscriptions: what the application wants to hear
    /// (ADR 0023).
    listening: Arc<Listening>,
    /// What the first handshake learnt of the server (a restarted server
    /// must speak the same revision).
    server: OnceLock<ServerInfo>,
    settings: Settings,
    /// What the features keep per client (`prompts.rs`'s prompt list).
    extensions: Extensions,
    /// Restarts a lost server, when the application asked for it (ADR
    /// 0026).
    restarts: Option<Restarts>,
    /// Makes the session after a lost one, when restarts were asked for.
    reopen: Option<Reopen>,
}

/// One connection to the server: the first, or one to the server started
/// again after it was lost. Everything here ends with it.
pub(crate) struct Session {
    /// Counts this client's sessions from 0.
    generation: u64,
    connection: Arc<Connection>,
    /// The transport, as what a restart makes the next one like.
    transport: Arc<dyn std::any::Any + Send + Sync>,
    /// The task that keeps a modern connection's listen open, started when
    /// the era is decided; aborted on close and on drop.
    listener: StdMutex<Option<AbortOnDrop>>,
    /// Set once the handshake is complete (`notifications/initialized`
    /// sent): the hot path's only check. The connection's own flag
    /// ([`Connection::is_negotiated`]) is set one step earlier, when the
    /// server's answer is accepted.
    initialized: AtomicBool,
    lifecycle: Mutex<Lifecycle>,
    /// Whether `close` has closed the transport (a `close` dropped half-way
    /// leaves it `false`, and the next one closes it again).
    transport_closed: Mutex<bool>,
    /// The inbound driver, until the handshake spawns it on its runtime (a
    /// future does nothing until it is polled).
    driver: StdMutex<Option<Pin<Box<dyn Future<Output = ()> + Send>>>>,
    /// The inbound task, aborted on close and on drop.
    inbound: StdMutex<Option<AbortOnDrop>>,
    /// What this session's handshake learnt of the server.
    server: OnceLock<ServerInfo>,
}

impl Session {
    /// A session over `transport`, its inbound driver not yet running.
    fn over<T: Transport>(
        generation: u64,
        transport: Arc<T>,
        offer: Arc<dyn Offer>,
        sinks: Sinks,
    ) -> Self {
        let (connection, driver) = inbound::open(transport.clone(), offer, sinks);
        Session {
            generation,
            connection,
            transport,
            listener: StdMutex::new(None),
            initialized: AtomicBool::new(false),
            lifecycle: Mutex::new(Lifecycle::New),
            transport_closed: Mutex::new(false),
            driver: StdMutex::new(Some(Box::pin(driver.run()))),
            inbound: StdMutex::new(None),
            server: OnceLock::new(),
        }
    }

    /// The session's connection.
    pub(crate) fn connection(&self) -> &Arc<Connection> {
        &self.connection
    }

    /// What the session's handshake learnt of the server.
    pub(crate) fn server_info(&self) -> Option<&ServerInfo> {
        self.server.get()
    }

    /// Whether the session's handshake completed and it was not closed.
    fn is_ready(&self) -> bool {
        self.initialized.load(Ordering::Acquire)
    }

    /// Closes the transport once, whatever the caller is told.
    pub(crate) async fn close_transport(&self) -> Result<(), TransportError> {
        let mut closed = self.transport_closed.lock().await;
        if *closed {
            return Ok(());
        }
        let result = self.connection.close_transport().await;
        *closed = true;
        result
    }

    /// Stops the session's listen task (a lost session's, so that it says
    /// nothing more of the subscriptions the next session opens).
    pub(crate) fn stop_listening(&self) {
        drop(lock(&self.listener).take());
    }

    /// Ends the session at once: nothing more is read or sent (what a
    /// close does first, and a restart that failed half-way).
    pub(crate) fn end(&self) {
        self.connection.close();
        drop(lock(&self.listener).take());
        self.initialized.store(false, Ordering::Release);
    }
}

/// The session in use: borrowed from a client whose session cannot change,
/// shared from one whose session a restart may replace.
pub(crate) enum Current<'c> {
    Fixed(&'c Session),
    Shared(Arc<Session>),
}

impl std::ops::Deref for Current<'_> {
    type Target = Session;

    fn deref(&self) -> &Session {
        match self {
            Current::Fixed(session) => session,
            Current::Shared(session) => session,
        }
    }
}

/// Makes session `generation` after the lost one: its transport started
/// again ([`Transport::reopen`]), `None` when it cannot be.
pub(crate) type Reopen =
    Box<dyn Fn(&Session, u64) -> Option<Result<Session, TransportError>> + Send + Sync>;

/// How a client introduces itself and chooses the protocol revision.
pub(crate) struct Settings {
    /// Its name and version.
    pub(crate) client_info: ClientInfo,
    /// Auto (probe) or a pinned revision.
    pub(crate) protocol: ProtocolChoice,
    /// How long the probe waits for an answer.
    pub(crate) probe_timeout: std::time::Duration,
    /// How a lost server is restarted, if it is (ADR 0026).
    pub(crate) restart: Option<RestartPolicy>,
}

/// Aborts a task when dropped, so nothing outlives the client.
struct AbortOnDrop(JoinHandle<()>);

/// The era probe, on a task of its own (so that a dropped `initialize`
/// does not interrupt it), aborted if the client goes away first.
struct ProbeTask(JoinHandle<Result<Verdict, Error>>);

impl Drop for ProbeTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Where the handshake stands. Every stage keeps what it waits for, so a
/// dropped `initialize` is resumed by the next one, never repeated. (A
/// handshake that failed starts again from `New`; closing is the
/// connection's state, not a stage.)
enum Lifecycle {
    New,
    /// `server/discover` is out, on a task of its own: the era is being
    /// decided.
    Probing(ProbeTask),
    /// `initialize` (request `id`) is being sent (on a task of its own, so
    /// that dropping the caller cannot interrupt it) and its answer awaited.
    Initializing {
        id: RequestId,
        sent: Option<AbortOnDropResult>,
        reply: oneshot::Receiver<Reply>,
        /// How the legacy era was chosen.
        chosen: HowChosen,
        /// The revision pinned, if one was.
        pinned: Option<&'static str>,
    },
    /// The answer was accepted; `notifications/initialized` is being sent.
    Confirming {
        sent: AbortOnDropResult,
    },
    Ready,
}

/// A spawned send, aborted if the client goes away first.
struct AbortOnDropResult(JoinHandle<Result<(), TransportError>>);

impl Drop for AbortOnDropResult {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl AbortOnDropResult {
    fn spawn(connection: &Arc<Connection>, message: Outgoing) -> Self {
        let connection = connection.clone();
        AbortOnDropResult(tokio::spawn(async move { connection.send(message).await }))
    }

    /// Waits for the send; cancel safe (the handle stays in place).
    async fn wait(&mut self) -> Result<(), TransportError> {
        match (&mut self.0).await {
            Ok(result) => result,
            Err(error) => Err(TransportError::Other(Box::new(error))),
        }
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field(
                "server",
                &self.inner.server.get().map(|server| &server.name),
            )
            .finish_non_exhaustive()
    }
}

/// Names an operation in error messages, e.g. `tools/call echo`, without
/// allocating unless an error is built.
#[derive(Clone, Copy)]
struct Operation<'a>(&'static str, Option<&'a str>);

impl fmt::Display for Operation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

impl Client {
    /// A client over `transport` that introduces itself as `settings` say
    /// and offers what `offer` makes (given the way back to this client,
    /// for the handlers' contexts): how the `server_requests` layer builds
    /// [`Client::with_config`].
    pub(crate) fn open<T: Transport>(
        transport: T,
        settings: Settings,
        offer: impl FnOnce(WeakClient) -> Arc<dyn Offer>,
    ) -> Self {
        let inner = Arc::new_cyclic(|weak| {
            let offer = offer(WeakClient(weak.clone()));
            let hub = Arc::new(Hub::default());
            let cache = Arc::new(ResultCache::default());
            let listening = Arc::new(Listening::default());
            let supervised = Arc::new(AtomicBool::new(false));
            let sinks = Sinks {
                hub: hub.clone(),
                cache: cache.clone(),
                listening: listening.clone(),
                supervised: supervised.clone(),
            };
            let first = Arc::new(Session::over(
                0,
                Arc::new(transport),
                offer.clone(),
                sinks.clone(),
            ));
            let restarts = settings
                .restart
                .clone()
                .map(|policy| Restarts::new(policy, supervised));
            let reopen = restarts.is_some().then(|| {
                let offer = offer.clone();
                // The next transport is made like the lost one.
                Box::new(move |lost: &Session, generation| {
                    let lost = lost.transport.clone().downcast::<T>().ok()?;
                    let next = match lost.reopen()? {
                        Ok(next) => Arc::new(next),
                        Err(error) => return Some(Err(error)),
                    };
                    Some(Ok(Session::over(
                        generation,
                        next,
                        offer.clone(),
                        sinks.clone(),
                    )))
                }) as Reopen
            });
            Inner {
                fixed: restarts.is_none().then(|| first.clone()),
                session: RwLock::new(first),
                closed: AtomicBool::new(false),
                mirrors_headers: AtomicBool::new(false),
                offer,
                hub,
                cache,
                listening,
                server: OnceLock::new(),
                settings,
                extensions: Extensions::default(),
                restarts,
                reopen,
            }
        });
        Client {
            inner,
            pinned: None,
        }
    }

    /// The session the client uses now.
    pub(crate) fn session(&self) -> Arc<Session> {
        self.inner
            .session
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The session the client uses now, borrowed when it cannot change:
    /// the hot path's look at it.
    fn current(&self) -> Current<'_> {
        match &self.inner.fixed {
            Some(fixed) => Current::Fixed(fixed),
            None => Current::Shared(self.session()),
        }
    }

    /// A reference to this client that does not keep it alive.
    pub(crate) fn downgrade(&self) -> WeakClient {
        WeakClient(Arc::downgrade(&self.inner))
    }

    /// [`initialize`](Client::initialize), closing the client when it
    /// fails (a stdio server's process ends): the handshake of the
    /// connecting constructors, which hand out no half-made client.
    pub(crate) async fn initialize_or_close(&self) -> Result<(), Error> {
        if let Err(error) = self.initialize().await {
            // Best effort: the handshake's error is the one to report.
            let _ = self.close().await;
            return Err(error);
        }
        Ok(())
    }

    /// Connects to the server: decides the protocol era once, and records
    /// the server's identity, capabilities and instructions (ADR 0018).
    /// Starts the inbound task on the current Tokio runtime.
    ///
    /// By default ([`ProtocolChoice::Auto`]) the client probes with
    /// `server/discover`: a modern (2026-07-28) server's answer decides the
    /// revision, and nothing more is sent; a legacy server (any other
    /// error, an HTTP refusal without a modern error, or no answer within
    /// [`ClientConfig::probe_timeout`](crate::ClientConfig::probe_timeout))
    /// is then sent the `initialize` handshake on the same connection,
    /// offering [`LATEST_PROTOCOL_VERSION`](crate::LATEST_PROTOCOL_VERSION)
    /// and accepting any revision this client speaks (refusing others with
    /// [`Error::VersionMismatch`]). A pinned revision
    /// ([`ClientConfig::protocol`](crate::ClientConfig::protocol)) skips the
    /// probe (legacy) or the fallback (modern). A transport that carries the
    /// initialize era only ([`Transport::legacy_only`](crate::Transport::legacy_only),
    /// the HTTP+SSE one) gets `initialize` at once, unprobed.
    /// [`ServerInfo::chosen`] says which happened.
    ///
    /// Must succeed before any other operation. Calling it again once it has
    /// succeeded does nothing and returns the same server information.
    ///
    /// Cancel safe: neither the probe nor `initialize` is cancelled (the
    /// protocol forbids cancelling `initialize`); if the future is dropped,
    /// what was sent runs on, and the next call waits for that same answer
    /// rather than sending the request again.
    pub async fn initialize(&self) -> Result<&ServerInfo, Error> {
        let session = self.session();
        self.handshake(&session).await?;
        self.server_or_invalid()
    }

    /// Runs `session`'s handshake to its end, or resumes it where a dropped
    /// one left it (see [`initialize`](Client::initialize)).
    pub(crate) async fn handshake(&self, session: &Arc<Session>) -> Result<(), Error> {
        let operation = Operation("initialize", None);
        let connection = &session.connection;
        let mut lifecycle = session.lifecycle.lock().await;
        loop {
            if matches!(*lifecycle, Lifecycle::Ready) {
                return Ok(());
            }
            // Closed, or the transport failed: say so at once.
            connection.check_open(&operation)?;
            match &mut *lifecycle {
                Lifecycle::Ready => return Ok(()),
                Lifecycle::New => {
                    start_inbound(session);
                    let pinned = self.inner.settings.protocol.pinned()?;
                    let legacy_only = connection.legacy_only();
                    *lifecycle = match pinned {
                        Some(version) if Era::of(version) == Era::Legacy => {
                            self.start_initialize(connection, HowChosen::Pinned, Some(version))?
                        }
                        Some(version) if legacy_only => return Err(modern_on_legacy(version)),
                        // A transport only legacy servers serve: nothing to
                        // probe (ADR 0018).
                        None if legacy_only => {
                            self.start_initialize(connection, HowChosen::LegacyTransport, None)?
                        }
                        _ => Lifecycle::Probing(self.start_probe(connection, pinned)),
                    };
                }
                Lifecycle::Probing(task) => {
                    let verdict = match (&mut task.0).await {
                        Ok(verdict) => verdict,
                        Err(error) => Err(Error::transport(
                            &operation.to_string(),
                            TransportError::Other(Box::new(error)),
                        )),
                    };
                    match verdict {
                        Ok(Verdict::Modern { info, meta }) => {
                            connection.set_modern(meta);
                            let _ = session.server.set(*info);
                            // Idle until something is wanted; what an
                            // earlier connection's server acknowledged no
                            // longer holds.
                            self.inner.listening.reset();
                            *lock(&session.listener) = Some(AbortOnDrop(tokio::spawn(
                                listen::run(connection.clone(), self.inner.listening.clone()),
                            )));
                            *lifecycle = Lifecycle::Ready;
                            self.became_ready(session);
                        }
                        Ok(Verdict::Legacy { probe }) => {
                            *lifecycle = self.start_initialize(
                                connection,
                                HowChosen::FellBack { probe },
                                None,
                            )?;
                        }
                        Err(error) => {
                            *lifecycle = Lifecycle::New;
                            return Err(error);
                        }
                    }
                }
                Lifecycle::Initializing {
                    id,
                    sent,
                    reply,
                    chosen,
                    pinned,
                } => {
                    let answer = loop {
                        let Some(sending) = sent.as_mut() else {
                            break (&mut *reply).await;
                        };
                        let sent_result = tokio::select! {
                            biased;
                            answer = &mut *reply => Err(answer),
                            result = sending.wait() => Ok(result),
                        };
                        match sent_result {
                            Err(answer) => break answer,
                            Ok(Ok(())) => *sent = None,
                            Ok(Err(source)) => {
                                // No answer will come: forget the request.
                                connection.forget(*id);
                                *lifecycle = Lifecycle::New;
                                return Err(failure(connection, operation, source));
                            }
                        }
                    };
                    let pinned = *pinned;
                    let accepted = settle::<InitializeResult>(connection, &operation, answer)
                        .and_then(|result| result.accept(pinned));
                    let mut server = match accepted {
                        Ok(server) => server,
                        Err(error) => {
                            // After an error a later call starts again from
                            // scratch (a dead transport then fails it at once).
                            *lifecycle = Lifecycle::New;
                            return Err(error);
                        }
                    };
                    server.info.chosen = std::mem::replace(chosen, HowChosen::Pinned);
                    connection.set_protocol_version(server.protocol_version);
                    // A session is initialized once; should a resumed
                    // handshake race a value in, the first one stays.
                    let _ = session.server.set(server.info);
                    let confirm = encode_notification("notifications/initialized", None::<&()>)
                        .map_err(|error| Error::encode("initialize", error))?;
                    *lifecycle = Lifecycle::Confirming {
                        sent: AbortOnDropResult::spawn(connection, confirm),
                    };
                }
                Lifecycle::Confirming { sent } => {
                    if let Err(source) = sent.wait().await {
                        *lifecycle = Lifecycle::New;
                        return Err(failure(connection, operation, source));
                    }
                    *lifecycle = Lifecycle::Ready;
                    self.became_ready(session);
                }
            }
        }
    }

    /// Marks `session` ready. The first session's server information is
    /// the client's; from then on a lost server is restarted, when asked
    /// for.
    fn became_ready(&self, session: &Session) {
        self.inner
            .mirrors_headers
            .store(session.connection.mirrors_headers(), Ordering::Relaxed);
        session.initialized.store(true, Ordering::Release);
        if session.generation == 0
            && let Some(info) = session.server.get()
        {
            let _ = self.inner.server.set(info.clone());
        }
        if let Some(restarts) = &self.inner.restarts {
            restarts.start(self.downgrade());
        }
    }

    /// Sends `initialize` on a task of its own: the legacy handshake's
    /// first stage.
    fn start_initialize(
        &self,
        connection: &Arc<Connection>,
        chosen: HowChosen,
        pinned: Option<&'static str>,
    ) -> Result<Lifecycle, Error> {
        let operation = Operation("initialize", None);
        let params = InitializeParams::new(
            &self.inner.settings.client_info,
            self.inner.offer.capabilities(),
            pinned,
        );
        let (in_flight, message) =
            connection.start(&operation, &Request::new("initialize", &params), false)?;
        Ok(Lifecycle::Initializing {
            id: in_flight.id(),
            sent: Some(AbortOnDropResult::spawn(connection, message)),
            reply: in_flight.detach(),
            chosen,
            pinned,
        })
    }

    /// Starts the era probe on a task of its own, asking for the pinned
    /// revision or the newest one.
    fn start_probe(&self, connection: &Arc<Connection>, pinned: Option<&'static str>) -> ProbeTask {
        let probe = Probe {
            connection: connection.clone(),
            version: pinned.unwrap_or(MODERN_PROTOCOL_VERSION),
            pinned: pinned.is_some(),
            timeout: self.inner.settings.probe_timeout,
            remake: Box::new(self.meta_maker()),
        };
        ProbeTask(tokio::spawn(probe.run()))
    }

    /// Makes the modern `_meta` entries for a revision: this client's
    /// identity and exactly the capabilities the application registered.
    fn meta_maker(&self) -> impl Fn(&'static str) -> ModernMeta + Send + Sync + 'static {
        let client_info = self.inner.settings.client_info.clone();
        let capabilities = self.inner.offer.modern_capabilities();
        move |version| ModernMeta::new(version, &client_info, &capabilities)
    }

    /// What the server said about itself (at `initialize`, or in its
    /// `server/discover` answer), and the revision chosen and how; `None`
    /// before a successful [`initialize`](Client::initialize).
    pub fn server(&self) -> Option<&ServerInfo> {
        self.inner.server.get()
    }

    fn server_or_invalid(&self) -> Result<&ServerInfo, Error> {
        self.inner.server.get().ok_or_else(|| {
            Error::invalid_response("initialize", "no server information was recorded")
        })
    }

    /// Sends a `ping` and waits for the answer: a liveness check. The
    /// modern era has no `ping`: there the check is a `server/discover`.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn ping(&self) -> Result<(), Error> {
        let method = match self.session().connection.modern() {
            Some(_) => "server/discover",
            None => "ping",
        };
        // Never from the cache: a kept answer would prove nothing.
        let request = Request::new(method, &EmptyParams {});
        let _: serde::de::IgnoredAny = self.send_uncached(request, None).await?;
        Ok(())
    }

    /// Subscribes to the server's notifications: list changes, resource
    /// updates, log messages, the end of URL elicitations (progress goes to
    /// the call that asked for it instead). Each subscription sees what
    /// arrives after it was made, in order; one that falls more than 256
    /// behind skips the oldest. Log messages also go to `tracing`, target
    /// `mcp::server`, at the matching level. A subscription ends (`recv`
    /// returns `None`) when the client is closed or the connection is lost
    /// (with a [`RestartPolicy`](crate::RestartPolicy): once the restarts
    /// are given up, after `RestartAbandoned`).
    ///
    /// The same in both eras. A legacy server sends its list changes
    /// unasked (on the HTTP `GET` stream, or stdio); a modern (2026-07-28)
    /// one only on a `subscriptions/listen` stream, so on a modern
    /// connection this also asks the server for its tool, prompt and
    /// resource list changes: the client opens the listen (once it is
    /// initialized, if it is not yet), keeps it open for as long as the
    /// client lives, and opens it again when the server ends it (ADR 0023).
    /// To hear only what comes unasked (log messages, say) without opening
    /// one, use [`passive_notifications`](Client::passive_notifications).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) {
    /// use golem_mcp::ServerNotification;
    /// let mut notifications = client.notifications();
    /// while let Some(notification) = notifications.recv().await {
    ///     if notification == ServerNotification::ToolsListChanged {
    ///         let tools = client.list_tools().await;
    ///         // ... re-bridge them
    ///     }
    /// }
    /// # }
    /// ```
    pub fn notifications(&self) -> Notifications {
        let notifications = self.inner.hub.subscribe();
        self.inner.listening.want_list_changes();
        notifications
    }

    /// Subscribes to the server's notifications like
    /// [`notifications`](Client::notifications), without asking a modern
    /// server for anything: what comes without a `subscriptions/listen`
    /// (log messages and progress-free notifications on the streams of the
    /// client's own requests), and whatever a listen opened for someone
    /// else brings. In the legacy era it is the same as `notifications`.
    /// What the commands use to show a server's log messages.
    pub fn passive_notifications(&self) -> Notifications {
        self.inner.hub.subscribe()
    }

    /// Closes the connection: a stdio server is ended and reaped, an HTTP
    /// session is ended. Every request in flight, from any clone, fails at
    /// once with [`Error::Closed`], and so does every later operation;
    /// closing again does nothing.
    ///
    /// The `notifications/cancelled` of requests dropped before it are sent
    /// first (for at most a second). Not needed for cleanup (dropping the
    /// last clone releases the transport too, but sends no cancellation)
    /// but it waits for the server to be gone, within the
    /// transport's bound (see [`ShutdownTimeouts`](crate::ShutdownTimeouts)
    /// and `HttpConfig::close_timeout`), and reports a failure to close.
    ///
    /// Cancel safe: if dropped half-way, the client is closed for every
    /// other operation, and calling `close` again finishes the job.
    pub async fn close(&self) -> Result<(), Error> {
        let operation = Operation("close", None);
        // No session is made after this; a restart under way is given up
        // (the server it started, not yet in use, is ended with it).
        self.inner.closed.store(true, Ordering::Release);
        if let Some(restarts) = &self.inner.restarts {
            restarts.stop().await;
        }
        let session = self.session();
        session.end();
        self.inner.hub.end();
        // The cancellations of requests abandoned just before (a command
        // interrupted, a timeout) are still being sent: they go out before
        // the session ends, or the server runs those requests on.
        let inbound_running = lock(&session.inbound).is_some();
        if inbound_running {
            let _ = tokio::time::timeout(CLOSE_FLUSH_TIME, session.connection.flush()).await;
        }
        // Then the inbound task: nothing is read or answered any more.
        drop(lock(&session.inbound).take());
        drop(lock(&session.driver).take());
        // Not the handshake's lock: a handshake stuck on a send must not hold
        // up the close that makes that send give way.
        session
            .close_transport()
            .await
            .map_err(|source| Error::transport(&operation.to_string(), source))
    }

    /// Sends request `method` (about `target`, for error messages: a tool,
    /// a prompt, a URI) once the client is initialized, and reads its
    /// result: how the feature modules (`features/`) ask the server.
    /// Cancel safe (see [`Client`]).
    pub(crate) async fn request<R: serde::de::DeserializeOwned, P: serde::Serialize>(
        &self,
        method: &'static str,
        target: Option<&str>,
        params: P,
    ) -> Result<R, Error> {
        self.request_with_progress(method, target, &params, None)
            .await
    }

    /// Like [`request`](Client::request), with progress reports for it
    /// handed to `on_progress`, on the caller's task.
    pub(crate) async fn request_with_progress<R, P>(
        &self,
        method: &'static str,
        target: Option<&str>,
        params: &P,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let mut request = Request::new(method, params);
        request.name = target;
        self.send_request(request, on_progress).await
    }

    /// Sends `request` (its `name` is also what errors name) and reads
    /// its result. A legacy request is one exchange; a modern one may take
    /// several (`mrtr.rs`).
    pub(crate) async fn send_request<R, P>(
        &self,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let operation = Operation(request.method, request.name);
        let session = match self.live_now() {
            Some(session) => session,
            None => self.live(operation).await?,
        };
        if session.connection.modern().is_some() && cache::cacheable(request.method) {
            return self.send_cached(&session, request, on_progress).await;
        }
        self.run_request(&session.connection, operation, request, on_progress, None)
            .await
    }

    /// [`send_request`](Client::send_request) for a method whose modern
    /// results may be kept (ADR 0024): a fresh kept reply is read instead
    /// of sending anything; a reply that says it stays fresh is kept.
    async fn send_cached<R, P>(
        &self,
        session: &Session,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let operation = Operation(request.method, request.name);
        let key = serde_json::to_string(request.params)
            .map_err(|error| Error::encode(&operation.to_string(), error))?;
        let cache = &self.inner.cache;
        if let Some(reply) = cache.get(request.method, &key) {
            return crate::session::connection::decode(&operation, reply);
        }
        let ticket = cache.ticket(request.method);
        // A read is invalidated by its URI's updates.
        let uri = (request.method == "resources/read")
            .then_some(request.name)
            .flatten();
        let mut keep = |reply: &Bytes| {
            if let Some(ticket) = ticket {
                cache.store(ticket, &key, uri, reply);
            }
        };
        self.run_request(
            &session.connection,
            operation,
            request,
            on_progress,
            Some(&mut keep),
        )
        .await
    }

    /// [`send_request`](Client::send_request), never from the cache.
    async fn send_uncached<R, P>(
        &self,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let operation = Operation(request.method, request.name);
        let session = self.live(operation).await?;
        self.run_request(&session.connection, operation, request, on_progress, None)
            .await
    }

    /// Sends `request` and reads its result; `keep` is shown a modern
    /// complete reply that needed no multi-round-trip retry.
    async fn run_request<R, P>(
        &self,
        connection: &Connection,
        operation: Operation<'_>,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
        keep: Option<&mut (dyn FnMut(&Bytes) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        if connection.modern().is_none() {
            let reply = connection
                .exchange(&operation, &request, on_progress)
                .await?;
            return crate::session::connection::decode(&operation, reply);
        }
        // Made only for a retry in another revision: nothing is cloned on
        // the hot path.
        let remake = |version| {
            ModernMeta::new(
                version,
                &self.inner.settings.client_info,
                &self.inner.offer.modern_capabilities(),
            )
        };
        mrtr::run(
            connection,
            &*self.inner.offer,
            &operation,
            request,
            remake,
            on_progress,
            keep,
        )
        .await
    }

    /// Every item of list `method`, following its cursors (`paging.rs`).
    /// Cancel safe (see [`Client`]): dropping it abandons the page in
    /// flight (announced like any request) and the pages already read.
    pub(crate) async fn list_all<P: paging::Page>(
        &self,
        method: &'static str,
    ) -> Result<Vec<P::Item>, Error> {
        // Every page from the one server: a cursor means nothing to another.
        let client = &self.pinned(method).await?;
        paging::follow(method, paging::MAX_PAGES, |cursor| async move {
            let params = P::params(cursor.as_deref());
            let page: P = client
                .request_with_progress(method, None, &params, None)
                .await?;
            Ok(page.into_parts())
        })
        .await
    }

    /// The state of type `T` a feature keeps for this client, made with
    /// `T::default()` the first time it is asked for.
    pub(crate) fn extension<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        self.inner.extensions.get_or_default()
    }

    /// Until when every kept page of list `method` is fresh (ADR 0024):
    /// `None` when none is kept (no TTL, a change announced, legacy).
    pub(crate) fn fresh_until(&self, method: &str) -> Option<std::time::Instant> {
        self.inner.cache.fresh_until(method)
    }

    /// On a modern connection, asks the server (through the listen) for
    /// the updates of `uri` and waits for its acknowledgment; `Ok(false)` in
    /// the legacy era (nothing done: `resources/subscribe` is the way
    /// there). Fails when the server does not honour it, does not serve
    /// `subscriptions/listen`, or does not acknowledge within `within`.
    pub(crate) async fn listen_to_uri(
        &self,
        uri: &str,
        within: std::time::Duration,
    ) -> Result<bool, Error> {
        let operation = Operation("subscriptions/listen", Some(uri));
        let session = self.live(operation).await?;
        if session.connection.modern().is_none() {
            return Ok(false);
        }
        let listening = &self.inner.listening;
        let generation = listening.want_uri(uri);
        let refused = |problem: String| Error::NotSupported {
            operation: operation.to_string(),
            detail: problem,
        };
        let acknowledged = tokio::time::timeout(within, listening.acknowledged(generation)).await;
        let honoured = match acknowledged {
            Ok(Ok(filter)) => filter,
            Ok(Err(why)) => {
                listening.unwant_uri(uri);
                session.connection.check_open(&operation)?;
                return Err(refused(format!(
                    "the server does not serve subscriptions/listen ({why})"
                )));
            }
            Err(_) => {
                listening.unwant_uri(uri);
                return Err(Error::Timeout {
                    operation: operation.to_string(),
                    after: within,
                    stderr_tail: String::new(),
                });
            }
        };
        if !honoured.uris.contains(uri) {
            listening.unwant_uri(uri);
            return Err(refused(
                "the server's acknowledgment leaves this resource out: it does not offer its updates"
                    .into(),
            ));
        }
        Ok(true)
    }

    /// On a modern connection, stops asking for the updates of `uri` and
    /// returns `true`; `false` in the legacy era.
    pub(crate) fn stop_listening_to_uri(&self, uri: &str) -> Result<bool, Error> {
        let session = self.ready(Operation("subscriptions/listen", Some(uri)))?;
        if session.connection.modern().is_none() {
            return Ok(false);
        }
        self.inner.listening.unwant_uri(uri);
        Ok(true)
    }

    /// How many prompt list changes the server has announced so far.
    pub(crate) fn prompt_changes(&self) -> u64 {
        self.inner.hub.prompt_changes()
    }

    /// In the modern era, names `level` in every later request and returns
    /// `true`; `false` in the legacy era (nothing done). Fails before
    /// `initialize`, when the era is not known yet.
    pub(crate) fn set_modern_log_level(&self, level: &str) -> Result<bool, Error> {
        let session = self.ready(Operation("logging/setLevel", None))?;
        match session.connection.modern() {
            Some(_) => {
                // Remembered first: a restart installing a new session
                // meanwhile names it there (`install`).
                self.remember_log_level(level);
                session.connection.set_log_level(level);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Whether the transport mirrors modern requests into headers (HTTP,
    /// once the modern era was decided).
    pub(crate) fn mirrors_headers(&self) -> bool {
        // Asked on every call: a flag, not a look at the session (a
        // restarted server speaks the same revision, so it holds).
        self.inner.mirrors_headers.load(Ordering::Relaxed)
    }

    /// What the client offers the server, as the layer that made it sees it.
    pub(crate) fn offer(&self) -> &dyn Offer {
        &*self.inner.offer
    }

    /// Fails when the client is closed or its connection has ended.
    pub(crate) fn check_open(&self, operation: &str) -> Result<(), Error> {
        self.session().connection.check_open(&operation)
    }

    /// Sends notification `method` (without parameters) once the server's
    /// `initialize` answer was accepted; before that, nothing (the server
    /// learns what it would say from the handshake).
    pub(crate) async fn notify_when_negotiated(&self, method: &'static str) -> Result<(), Error> {
        // The modern era has no such notifications: the server learns what
        // it would say from the next request.
        let connection = &self.session().connection;
        if !connection.is_negotiated() || connection.modern().is_some() {
            return Ok(());
        }
        let message = encode_notification(method, None::<&()>)
            .map_err(|error| Error::encode(method, error))?;
        connection
            .send(message)
            .await
            .map_err(|source| Error::transport(method, source))
    }

    /// The session to send requests on, when the client may send them now.
    fn ready(&self, operation: Operation<'_>) -> Result<Current<'_>, Error> {
        let session = self.current();
        if session.is_ready() {
            return Ok(session);
        }
        // A connection that failed before the close says so otherwise.
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(Error::Closed {
                operation: operation.to_string(),
            });
        }
        session.connection.check_open(&operation)?;
        Err(Error::NotInitialized {
            operation: operation.to_string(),
        })
    }

    /// The session to send requests on, once there is one: while a lost
    /// server is being restarted, waits for the restart (ADR 0026). A
    /// connection that ended otherwise fails as it ended.
    async fn live(&self, operation: Operation<'_>) -> Result<Current<'_>, Error> {
        if let Some(session) = self.live_now() {
            return Ok(session);
        }
        let session = self.live_after_a_loss(operation).await?;
        match self.pinned {
            Some(generation) if generation != session.generation => Err(Error::transport(
                &operation.to_string(),
                TransportError::Other(
                    "the server was lost and started again since this began: what it handed \
                     out (a cursor, a task) is gone with it"
                        .into(),
                ),
            )),
            _ => Ok(session),
        }
    }

    /// A handle whose requests all go to the session in use now (waiting
    /// for a restart under way first), and fail once it is replaced: for
    /// a sequence of requests that only this server understands.
    pub(crate) async fn pinned(&self, method: &'static str) -> Result<Client, Error> {
        let session = self.live(Operation(method, None)).await?;
        Ok(Client {
            inner: self.inner.clone(),
            pinned: Some(self.pinned.unwrap_or(session.generation)),
        })
    }

    /// The session in use when it is ready and nothing about it needs a
    /// look: the hot path of [`live`](Client::live), without its future.
    fn live_now(&self) -> Option<Current<'_>> {
        let session = self.current();
        (session.is_ready() && !session.connection.has_ended() && self.pinned.is_none())
            .then_some(session)
    }

    /// [`live`](Client::live) when the session in use is not ready.
    async fn live_after_a_loss(&self, operation: Operation<'_>) -> Result<Current<'_>, Error> {
        loop {
            let session = self.ready(operation)?;
            if !session.connection.has_ended() {
                return Ok(session);
            }
            let restarted = match &self.inner.restarts {
                Some(restarts) if !self.inner.closed.load(Ordering::Acquire) => {
                    restarts.replaced(session.generation).await
                }
                _ => false,
            };
            if !restarted {
                // Fails as closed, or as the connection ended (the server's
                // exit status and last words).
                if self.inner.closed.load(Ordering::Acquire) {
                    return Err(Error::Closed {
                        operation: operation.to_string(),
                    });
                }
                session.connection.check_open(&operation)?;
                return Ok(session);
            }
        }
    }

    /// Puts `session` in the place of the lost one, unless the client was
    /// closed meanwhile: the last step of a restart. The results kept from
    /// the old server are dropped.
    pub(crate) fn install(&self, session: Arc<Session>) -> Result<(), Arc<Session>> {
        let mut current = self
            .inner
            .session
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(session);
        }
        // The level asked for last, also while this restart was under way.
        if let Some(restarts) = &self.inner.restarts
            && session.connection.modern().is_some()
            && let Some(level) = restarts.resume().log_level.clone()
        {
            session.connection.set_log_level(&level);
        }
        *current = session;
        drop(current);
        self.inner.cache.clear();
        Ok(())
    }

    /// Session `generation`, made like the one in use (its server started
    /// again): `None` when the client has no restart policy or the
    /// transport cannot start its server again.
    pub(crate) fn reopen(&self, generation: u64) -> Option<Result<Session, TransportError>> {
        (self.inner.reopen.as_ref()?)(&self.session(), generation)
    }

    /// The modern era's subscriptions: what the application wants to hear.
    pub(crate) fn listening(&self) -> &Listening {
        &self.inner.listening
    }

    /// The client's restarts, when it has a restart policy.
    pub(crate) fn restarts(&self) -> Option<&Restarts> {
        self.inner.restarts.as_ref()
    }

    /// The notification broadcast (what a restart reports on).
    pub(crate) fn hub(&self) -> &Hub {
        &self.inner.hub
    }
}

#[derive(serde::Serialize)]
struct EmptyParams {}

/// The error for a modern revision pinned on a transport that carries the
/// initialize era only.
fn modern_on_legacy(version: &str) -> Error {
    Error::InvalidConfig {
        operation: "initialize",
        field: "protocol".into(),
        problem: format!(
            "protocol {version} is of the modern era, which this transport cannot carry (the \
             HTTP+SSE transport of 2024-11-05 speaks the initialize era only); pin a revision \
             of 2025-11-25 or earlier, or leave the choice to the client"
        ),
    }
}

/// Starts a session's inbound task, once.
fn start_inbound(session: &Session) {
    let driver = lock(&session.driver).take();
    if let Some(driver) = driver {
        *lock(&session.inbound) = Some(AbortOnDrop(tokio::spawn(driver)));
    }
}

/// The error for a failed send: the connection's end when it has ended
/// (a close makes sends give way), else the send's own error.
fn failure(connection: &Connection, operation: Operation<'_>, source: TransportError) -> Error {
    match connection.check_open(&operation) {
        Err(ended) => ended,
        Ok(()) => Error::transport(&operation.to_string(), source),
    }
}

/// Locks a mutex that no code path can leave inconsistent.
fn lock<T>(mutex: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
