//! [`Client`], the handle applications hold: cheap to clone, shared by
//! every clone through [`Inner`], which owns the generation of the
//! connection in use, the notification hub, the modern era's cache and
//! subscriptions, what the features keep, and the restarts. The
//! handshake (`handshake.rs`), the request path (`requests.rs`), restarts
//! (`restart/`) and the modern era's asks (`modern/subscribe.rs`) are
//! `impl Client` blocks of their own.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock, PoisonError, RwLock, Weak};

use crate::error::Error;
use crate::session::connection::encode_notification;
use crate::session::feature_state::FeatureState;
use crate::session::generation::{Current, Generation, lock};
use crate::session::inbound::Sinks;
use crate::session::modern::cache::ResultCache;
use crate::session::modern::listen::Listening;
use crate::session::notifications::{Hub, Notifications};
use crate::session::operation::Operation;
use crate::session::protocol::{ClientInfo, Era, ProtocolChoice, ServerInfo};
use crate::session::restart::{RestartPolicy, Restarts, Resume};
use crate::session::serving::Offer;
use crate::wire::transport::Transport;

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
    pub(in crate::session) inner: Arc<Inner>,
    /// The session every request of this handle must go to, when it is
    /// one of a sequence that only that server understands (the pages of a
    /// list, a task's polls): after a restart, such a request fails rather
    /// than reach a server that never handed out the cursor or the task.
    pub(in crate::session) pinned: Option<u64>,
}

/// A reference to a client that does not keep it (or its server) alive:
/// what a handler's [`RequestContext`](crate::RequestContext) and a
/// [`ResourceSubscription`](crate::ResourceSubscription) hold.
#[derive(Clone, Default)]
pub(crate) struct WeakClient(pub(in crate::session) Weak<Inner>);

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

/// The state clones of a [`Client`] share. Its fields are the session
/// layer's: the features reach theirs through [`Client::features`].
pub(crate) struct Inner {
    /// The generation of the connection the client uses now. A restart
    /// (`restart/`) replaces it with one to the server started again.
    pub(in crate::session) generation: RwLock<Arc<Generation>>,
    /// The same generation, when no restart can replace it (no policy):
    /// what every call borrows, without the lock or a reference count.
    pub(in crate::session) fixed: Option<Arc<Generation>>,
    /// Set by `close`: no generation is made or used after it.
    pub(in crate::session) closed: AtomicBool,
    /// Whether the transport mirrors requests into headers in the era
    /// decided (set when the first generation is ready).
    pub(in crate::session) mirrors_headers: AtomicBool,
    /// What the client offers the server (its capabilities, its handlers).
    pub(in crate::session) offer: Arc<dyn Offer>,
    /// Where what the server says reaches the client's shared state (the
    /// hub, the cache, the listen): given to every generation's inbound
    /// task.
    pub(in crate::session) sinks: Sinks,
    /// Where the server's notifications are broadcast.
    pub(in crate::session) hub: Arc<Hub>,
    /// The modern era's results, kept while fresh (ADR 0024).
    pub(in crate::session) cache: Arc<ResultCache>,
    /// The modern era's subscriptions: what the application wants to hear
    /// (ADR 0023).
    pub(in crate::session) listening: Arc<Listening>,
    /// What the first handshake learnt of the server (a restarted server
    /// must speak the same revision).
    pub(in crate::session) server: OnceLock<ServerInfo>,
    pub(in crate::session) setup: SessionSetup,
    /// What the server was told that a new generation must be told again
    /// (the log level, the legacy resource subscriptions): kept whatever
    /// the policy, for a restart and for an HTTP session renewed.
    pub(in crate::session) resume: StdMutex<Resume>,
    /// What the features keep per client.
    features: FeatureState,
    /// Restarts a lost server, when the application asked for it (ADR
    /// 0026).
    pub(in crate::session) restarts: Option<Restarts>,
}

/// How a client introduces itself, chooses the protocol revision and
/// starts a lost server again: what [`Client::open`] is given.
pub(crate) struct SessionSetup {
    /// Its name and version.
    pub(crate) client_info: ClientInfo,
    /// Auto (probe) or a pinned revision.
    pub(crate) protocol: ProtocolChoice,
    /// How long the probe waits for an answer.
    pub(crate) probe_timeout: std::time::Duration,
    /// How a lost server is restarted, if it is (ADR 0026).
    pub(crate) restart: Option<RestartPolicy>,
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

impl Client {
    /// A client over `transport` that introduces itself as `setup` says,
    /// offers what `offer` makes (given the way back to this client, for
    /// the handlers' contexts) and keeps `features` for the features
    /// layer: how [`Client::with_config`] builds one.
    pub(crate) fn open<T: Transport>(
        transport: T,
        setup: SessionSetup,
        offer: impl FnOnce(WeakClient) -> Arc<dyn Offer>,
        features: FeatureState,
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
            let first = Arc::new(Generation::over(
                0,
                Arc::new(transport),
                offer.clone(),
                sinks.clone(),
            ));
            let restarts = setup
                .restart
                .clone()
                .map(|policy| Restarts::new(policy, supervised));
            Inner {
                fixed: restarts.is_none().then(|| first.clone()),
                generation: RwLock::new(first),
                closed: AtomicBool::new(false),
                mirrors_headers: AtomicBool::new(false),
                offer,
                sinks,
                hub,
                cache,
                listening,
                server: OnceLock::new(),
                setup,
                resume: StdMutex::new(Resume::default()),
                features,
                restarts,
            }
        });
        Client {
            inner,
            pinned: None,
        }
    }

    /// What the features layer keeps for this client.
    pub(crate) fn features(&self) -> &FeatureState {
        &self.inner.features
    }

    /// The generation of the connection the client uses now.
    pub(crate) fn generation(&self) -> Arc<Generation> {
        self.inner
            .generation
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The generation the client uses now, borrowed when it cannot
    /// change: the hot path's look at it.
    pub(in crate::session) fn current(&self) -> Current<'_> {
        match &self.inner.fixed {
            Some(fixed) => Current::Fixed(fixed),
            None => Current::Shared(self.generation()),
        }
    }

    /// A reference to this client that does not keep it alive.
    pub(crate) fn downgrade(&self) -> WeakClient {
        WeakClient(Arc::downgrade(&self.inner))
    }

    /// What the server said about itself (at `initialize`, or in its
    /// `server/discover` answer), and the revision chosen and how; `None`
    /// before a successful [`initialize`](Client::initialize).
    pub fn server(&self) -> Option<&ServerInfo> {
        self.inner.server.get()
    }

    /// The handshake message still unanswered: `server/discover` while
    /// the era probe waits for its answer, `initialize` while the legacy
    /// handshake waits for the server's, `notifications/initialized` while
    /// that is being sent; `None` before [`initialize`](Client::initialize)
    /// is first called and once it has succeeded or failed.
    ///
    /// For the message of a bound around `initialize` that ran out: it
    /// names the request the server never answered (`server/discover`, to a
    /// server that ignores it for longer than the bound), not `initialize`
    /// whatever was sent.
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) {
    /// use std::time::Duration;
    /// if tokio::time::timeout(Duration::from_secs(30), client.initialize()).await.is_err() {
    ///     let request = client.handshake_waiting_on().unwrap_or("initialize");
    ///     eprintln!("no answer to {request} within 30 s");
    /// }
    /// # }
    /// ```
    pub fn handshake_waiting_on(&self) -> Option<&'static str> {
        self.generation().waiting_on()
    }

    pub(in crate::session) fn server_or_invalid(&self) -> Result<&ServerInfo, Error> {
        self.inner.server.get().ok_or_else(|| {
            Error::invalid_response("initialize", "no server information was recorded")
        })
    }

    /// The era the client speaks, decided by its first handshake (a
    /// restarted server must speak the same revision): what a feature
    /// that differs per era matches on. Fails before
    /// [`initialize`](Client::initialize).
    pub(crate) fn era(&self, operation: &str) -> Result<Era, Error> {
        match self.inner.server.get() {
            Some(server) => Ok(server.era()),
            None if self.inner.closed.load(Ordering::Acquire) => Err(Error::Closed {
                operation: operation.to_owned(),
            }),
            None => Err(Error::NotInitialized {
                operation: operation.to_owned(),
            }),
        }
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
        let session = self.generation();
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

    /// How many prompt list changes the server has announced so far.
    pub(crate) fn prompt_changes(&self) -> u64 {
        self.inner.hub.prompt_changes()
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
        self.generation().connection.check_open(&operation)
    }

    /// Sends notification `method` (without parameters) once the server's
    /// `initialize` answer was accepted; before that, nothing (the server
    /// learns what it would say from the handshake).
    pub(crate) async fn notify_when_negotiated(&self, method: &'static str) -> Result<(), Error> {
        // The modern era has no such notifications: the server learns what
        // it would say from the next request.
        let connection = &self.generation().connection;
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
    pub(in crate::session) fn ready(&self, operation: Operation<'_>) -> Result<Current<'_>, Error> {
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

    /// The modern era's subscriptions: what the application wants to hear.
    pub(crate) fn listening(&self) -> &Listening {
        &self.inner.listening
    }

    /// The notification broadcast (what a restart reports on).
    pub(crate) fn hub(&self) -> &Hub {
        &self.inner.hub
    }
}
