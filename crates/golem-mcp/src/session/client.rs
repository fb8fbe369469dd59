//! The MCP client: the handshake, the requests every feature is built on,
//! notifications, close.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex, OnceLock, PoisonError, Weak};

use tokio::sync::{Mutex, oneshot};
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::features::prompts::PromptCache;
use crate::server_requests::handlers::{ElicitationHandler, Offered, SamplingHandler};
use crate::server_requests::roots::Root;
use crate::session::connection::{Connection, Reply, encode_notification, settle};
use crate::session::inbound;
use crate::session::notifications::{LogLevel, Notifications};
use crate::session::paging;
use crate::session::progress::Progress;
use crate::session::protocol::{ClientInfo, InitializeParams, InitializeResult, ServerInfo};
use crate::wire::transport::{Outgoing, RequestId, Transport};
use crate::wire::transport_error::TransportError;

/// How a [`Client`] is set up: how it introduces itself, and what it offers
/// the server (ADR 0007). The capabilities announced at `initialize` are
/// exactly the ones given here.
///
/// ```
/// use golem_mcp::{ClientConfig, CreateMessageResult, ElicitationResponse, Root};
///
/// let config = ClientConfig::default()
///     .with_sampling(|request: golem_mcp::CreateMessageRequest, _context| async move {
///         Ok(CreateMessageResult::text("my-model", format!("{} messages read", request.messages.len())))
///     })
///     .with_elicitation(|_request, _context| async { Ok(ElicitationResponse::Decline) })
///     .with_roots(vec![Root::new("file:///srv/project")]);
/// assert!(format!("{config:?}").contains("sampling: true"));
/// ```
#[derive(Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// How the client introduces itself at `initialize`.
    pub client_info: ClientInfo,
    /// Answers the server's `sampling/createMessage`; `None` (the default)
    /// declares no sampling capability.
    pub sampling: Option<Arc<dyn SamplingHandler>>,
    /// Answers the server's `elicitation/create`; `None` (the default)
    /// declares no elicitation capability.
    pub elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// The roots answered to `roots/list`; `None` (the default) declares no
    /// roots capability. Change them later with [`Client::set_roots`].
    pub roots: Option<Vec<Root>>,
    /// How many server requests may be handled at once (16 by default);
    /// beyond that the server is told to try again later.
    pub max_concurrent_handlers: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            client_info: ClientInfo::default(),
            sampling: None,
            elicitation: None,
            roots: None,
            max_concurrent_handlers: 16,
        }
    }
}

impl fmt::Debug for ClientConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientConfig")
            .field("client_info", &self.client_info)
            .field("sampling", &self.sampling.is_some())
            .field("elicitation", &self.elicitation.is_some())
            .field("roots", &self.roots)
            .field("max_concurrent_handlers", &self.max_concurrent_handlers)
            .finish()
    }
}

impl ClientConfig {
    /// Introduces the client with this name and version.
    pub fn with_client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info = ClientInfo {
            name: name.into(),
            version: version.into(),
        };
        self
    }

    /// Answers sampling requests with `handler` (a [`SamplingHandler`], or a
    /// closure returning a future).
    pub fn with_sampling(mut self, handler: impl SamplingHandler) -> Self {
        self.sampling = Some(Arc::new(handler));
        self
    }

    /// Answers elicitation requests with `handler` (an
    /// [`ElicitationHandler`], or a closure returning a future).
    pub fn with_elicitation(mut self, handler: impl ElicitationHandler) -> Self {
        self.elicitation = Some(Arc::new(handler));
        self
    }

    /// Offers these roots.
    pub fn with_roots(mut self, roots: Vec<Root>) -> Self {
        self.roots = Some(roots);
        self
    }
}

/// A client for one MCP server, over any [`Transport`].
///
/// Cheap to clone (clones share the connection) and `Send + Sync`. Any
/// number of requests may be in flight at once, from any number of tasks:
/// each is sent as soon as it is made and its reply is routed back to it by
/// id. From [`initialize`](Client::initialize) until the client is closed,
/// an inbound task reads the server, calls or no calls: a server `ping` is
/// answered at once, the requests the application registered handlers for
/// ([`ClientConfig`]) go to them and any other is refused with "method not
/// found", progress reports go to the call that asked for them, and other
/// notifications to [`notifications`](Client::notifications) subscribers.
/// (ADRs 0006 and 0007 say why.)
///
/// # Cancel safety
///
/// Every async method may be dropped at any await point (a timeout, a
/// `select!`), and every other request on the client goes on untouched.
/// A dropped request is announced to the server with
/// `notifications/cancelled` right away, and its late answer is dropped. A
/// dropped [`initialize`](Client::initialize) is not cancelled (the
/// protocol forbids it): the next call waits for the same answer. After a
/// dropped [`close`](Client::close), the client is closed.
///
/// # Lifetime
///
/// The inbound task runs on the Tokio runtime that `initialize` ran on.
/// Closing the client, or dropping its last clone, ends it and releases the
/// transport (a stdio server's whole process group is ended).
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
}

/// The state clones of a [`Client`] share (named for the handlers'
/// contexts, which hold it weakly).
pub(crate) type ClientInner = Inner;

pub(crate) struct Inner {
    connection: Arc<Connection>,
    offered: Arc<Offered>,
    /// Set once the handshake is complete: the hot path's only check.
    ready: AtomicBool,
    lifecycle: Mutex<Lifecycle>,
    /// Whether `close` has closed the transport (a `close` dropped half-way
    /// leaves it `false`, and the next one closes it again).
    transport_closed: Mutex<bool>,
    /// Starts the inbound task; taken by the first `initialize`.
    start_inbound: StdMutex<Option<StartInbound>>,
    /// The inbound task, aborted on close and on drop.
    inbound: StdMutex<Option<AbortOnDrop>>,
    server: OnceLock<ServerInfo>,
    config: ClientConfig,
    /// The prompt list `get_prompt` checks arguments against (`prompts.rs`).
    prompts: PromptCache,
}

type StartInbound = Box<dyn FnOnce() -> JoinHandle<()> + Send>;

/// Aborts a task when dropped, so nothing outlives the client.
struct AbortOnDrop(JoinHandle<()>);

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
    /// `initialize` (request `id`) is being sent (on a task of its own, so
    /// that dropping the caller cannot interrupt it) and its answer awaited.
    Initializing {
        id: RequestId,
        sent: Option<AbortOnDropResult>,
        reply: oneshot::Receiver<Reply>,
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
    /// A client over `transport`, introducing itself as `golem-mcp`.
    /// Call [`initialize`](Client::initialize) before anything else.
    pub fn new(transport: impl Transport) -> Self {
        Client::with_config(transport, ClientConfig::default())
    }

    /// A client over `transport` with the given configuration.
    pub fn with_config<T: Transport>(transport: T, config: ClientConfig) -> Self {
        let transport = Arc::new(transport);
        let (connection, commands) = Connection::new(transport.clone());
        let connection = Arc::new(connection);
        let offered = Arc::new(Offered::new(
            config.sampling.clone(),
            config.elicitation.clone(),
            config.roots.clone(),
            config.max_concurrent_handlers,
        ));
        let (for_inbound, offered_inbound) = (connection.clone(), offered.clone());
        let start_inbound: StartInbound = Box::new(move || {
            tokio::spawn(inbound::run(
                transport,
                for_inbound,
                offered_inbound,
                commands,
            ))
        });
        let client = Client {
            inner: Arc::new(Inner {
                connection,
                offered,
                ready: AtomicBool::new(false),
                lifecycle: Mutex::new(Lifecycle::New),
                transport_closed: Mutex::new(false),
                start_inbound: StdMutex::new(Some(start_inbound)),
                inbound: StdMutex::new(None),
                server: OnceLock::new(),
                config,
                prompts: PromptCache::default(),
            }),
        };
        client.inner.offered.set_client(client.downgrade());
        client
    }

    /// A client handle on shared state (for the handlers' contexts).
    pub(crate) fn from_inner(inner: Arc<Inner>) -> Self {
        Client { inner }
    }

    /// A reference to the shared state that does not keep the client alive.
    pub(crate) fn downgrade(&self) -> Weak<Inner> {
        Arc::downgrade(&self.inner)
    }

    /// Performs the MCP handshake: offers the newest protocol revision this
    /// client implements, accepts any revision it can speak (refusing others
    /// with [`Error::VersionMismatch`]), sends `notifications/initialized`,
    /// and records the server's identity, capabilities and instructions.
    /// Starts the inbound task on the current Tokio runtime.
    ///
    /// Must succeed before any other operation. Calling it again once it has
    /// succeeded does nothing and returns the same server information.
    ///
    /// Cancel safe: `initialize` is never cancelled (the protocol forbids
    /// it); if the future is dropped, the request still goes out whole and
    /// the next call waits for that same answer rather than sending a second
    /// `initialize` (which servers refuse).
    pub async fn initialize(&self) -> Result<&ServerInfo, Error> {
        let operation = Operation("initialize", None);
        let mut lifecycle = self.inner.lifecycle.lock().await;
        loop {
            if matches!(*lifecycle, Lifecycle::Ready) {
                return self.server_or_invalid();
            }
            // Closed, or the transport failed: say so at once.
            self.inner.connection.check_open(&operation)?;
            match &mut *lifecycle {
                Lifecycle::Ready => return self.server_or_invalid(),
                Lifecycle::New => {
                    self.start_inbound();
                    let connection = &self.inner.connection;
                    let params = InitializeParams::new(
                        &self.inner.config.client_info,
                        self.inner.offered.capabilities(),
                    );
                    let (in_flight, message) =
                        connection.start(&operation, "initialize", |_| params, false)?;
                    *lifecycle = Lifecycle::Initializing {
                        id: in_flight.id(),
                        sent: Some(AbortOnDropResult::spawn(connection, message)),
                        reply: in_flight.detach(),
                    };
                }
                Lifecycle::Initializing { id, sent, reply } => {
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
                                self.inner.connection.forget(*id);
                                *lifecycle = Lifecycle::New;
                                return Err(self.failure(operation, source));
                            }
                        }
                    };
                    let accepted =
                        settle::<InitializeResult>(&self.inner.connection, &operation, answer)
                            .and_then(InitializeResult::accept);
                    let server = match accepted {
                        Ok(server) => server,
                        Err(error) => {
                            // After an error a later call starts again from
                            // scratch (a dead transport then fails it at once).
                            *lifecycle = Lifecycle::New;
                            return Err(error);
                        }
                    };
                    self.inner
                        .connection
                        .set_protocol_version(server.protocol_version);
                    // A client is initialized once; should a resumed
                    // handshake race a value in, the first one stays.
                    let _ = self.inner.server.set(server.info);
                    let confirm = encode_notification("notifications/initialized", None::<&()>)
                        .map_err(|error| Error::encode("initialize", error))?;
                    *lifecycle = Lifecycle::Confirming {
                        sent: AbortOnDropResult::spawn(&self.inner.connection, confirm),
                    };
                }
                Lifecycle::Confirming { sent } => {
                    if let Err(source) = sent.wait().await {
                        *lifecycle = Lifecycle::New;
                        return Err(self.failure(operation, source));
                    }
                    *lifecycle = Lifecycle::Ready;
                    self.inner.ready.store(true, Ordering::Release);
                }
            }
        }
    }

    /// The error for a failed send: the connection's end when it has ended
    /// (a close makes sends give way), else the send's own error.
    fn failure(&self, operation: Operation<'_>, source: TransportError) -> Error {
        match self.inner.connection.check_open(&operation) {
            Err(ended) => ended,
            Ok(()) => Error::transport(&operation.to_string(), source),
        }
    }

    /// Starts the inbound task, once.
    fn start_inbound(&self) {
        let start = lock(&self.inner.start_inbound).take();
        if let Some(start) = start {
            *lock(&self.inner.inbound) = Some(AbortOnDrop(start()));
        }
    }

    /// What the server said about itself at `initialize`; `None` before a
    /// successful [`initialize`](Client::initialize).
    pub fn server(&self) -> Option<&ServerInfo> {
        self.inner.server.get()
    }

    fn server_or_invalid(&self) -> Result<&ServerInfo, Error> {
        self.inner.server.get().ok_or_else(|| {
            Error::invalid_response("initialize", "no server information was recorded")
        })
    }

    /// Sends a `ping` and waits for the answer: a liveness check.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn ping(&self) -> Result<(), Error> {
        let operation = Operation("ping", None);
        self.ready(operation)?;
        let _: serde::de::IgnoredAny = self
            .inner
            .connection
            .request(&operation, "ping", |_| EmptyParams {}, None)
            .await?;
        Ok(())
    }

    /// Subscribes to the server's notifications: list changes, resource
    /// updates, log messages, the end of URL elicitations (progress goes to
    /// the call that asked for it instead). Each subscription sees what
    /// arrives after it was made, in order; one that falls more than 256
    /// behind skips the oldest. Log messages also go to `tracing`, target
    /// `mcp::server`, at the matching level. A subscription ends (`recv`
    /// returns `None`) when the client is closed or the connection is lost.
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
        Notifications::new(self.inner.offered.subscribe())
    }

    /// Asks the server to send log messages of `level` and above
    /// (`logging/setLevel`).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn set_log_level(&self, level: LogLevel) -> Result<(), Error> {
        let operation = Operation("logging/setLevel", None);
        self.ready(operation)?;
        let _: serde::de::IgnoredAny = self
            .inner
            .connection
            .request(
                &operation,
                "logging/setLevel",
                |_| serde_json::json!({ "level": level }),
                None,
            )
            .await?;
        Ok(())
    }

    /// Replaces the roots the client offers and tells the server with
    /// `notifications/roots/list_changed` (when the client is initialized).
    /// Fails with [`Error::InvalidConfig`] when the client was not set up
    /// with roots ([`ClientConfig::roots`]): the capability was not
    /// announced, so servers would not ask.
    ///
    /// Cancel safe: the roots are replaced before anything is awaited; a
    /// call dropped while sending the notification leaves it sent whole or
    /// not at all (then the server learns of the change with the next one).
    pub async fn set_roots(&self, roots: Vec<Root>) -> Result<(), Error> {
        let operation = Operation("notifications/roots/list_changed", None);
        self.inner.connection.check_open(&operation)?;
        if !self.inner.offered.set_roots(roots) {
            return Err(Error::InvalidConfig {
                operation: "set_roots",
                field: "roots".into(),
                problem: "the client was set up without roots; give ClientConfig::roots (even an empty list) to offer them".into(),
            });
        }
        if !self.inner.connection.is_ready() {
            return Ok(()); // the server asks for them after initialize
        }
        let changed = encode_notification("notifications/roots/list_changed", None::<&()>)
            .map_err(|error| Error::encode(&operation.to_string(), error))?;
        self.inner
            .connection
            .send(changed)
            .await
            .map_err(|source| Error::transport(&operation.to_string(), source))
    }

    /// Closes the connection: a stdio server is ended and reaped, an HTTP
    /// session is ended. Every request in flight, from any clone, fails at
    /// once with [`Error::Closed`], and so does every later operation;
    /// closing again does nothing.
    ///
    /// Not needed for cleanup (dropping the last clone releases the
    /// transport too) but it waits for the server to be gone, within the
    /// transport's bound (see [`ShutdownTimeouts`](crate::ShutdownTimeouts)
    /// and `HttpConfig::close_timeout`), and reports a failure to close.
    ///
    /// Cancel safe: if dropped half-way, the client is closed for every
    /// other operation, and calling `close` again finishes the job.
    pub async fn close(&self) -> Result<(), Error> {
        let operation = Operation("close", None);
        self.inner.connection.close();
        self.inner.offered.end_notifications();
        self.inner.ready.store(false, Ordering::Release);
        // The inbound task goes first: nothing is read or answered any more.
        drop(lock(&self.inner.inbound).take());
        drop(lock(&self.inner.start_inbound).take());
        // Not the handshake's lock: a handshake stuck on a send must not hold
        // up the close that makes that send give way.
        let mut closed = self.inner.transport_closed.lock().await;
        if *closed {
            return Ok(());
        }
        let result = self.inner.connection.close_transport().await;
        *closed = true;
        result.map_err(|source| Error::transport(&operation.to_string(), source))
    }

    /// Sends request `method` (about `target`, for error messages: a tool,
    /// a prompt, a URI) once the client is initialized, and reads its
    /// result: how the feature modules (`resources.rs`, `prompts.rs`,
    /// `completion.rs`, `tasks.rs`) ask the server. Cancel safe (see
    /// [`Client`]).
    pub(crate) async fn request<R: serde::de::DeserializeOwned, P: serde::Serialize>(
        &self,
        method: &'static str,
        target: Option<&str>,
        params: P,
    ) -> Result<R, Error> {
        self.request_with_progress(method, target, |_| params, None)
            .await
    }

    /// Like [`request`](Client::request), with the parameters made from the
    /// request's id (which is its progress token) and progress reports for
    /// it handed to `on_progress`, on the caller's task.
    pub(crate) async fn request_with_progress<R, P>(
        &self,
        method: &'static str,
        target: Option<&str>,
        params: impl FnOnce(u64) -> P,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let operation = Operation(method, target);
        self.ready(operation)?;
        self.inner
            .connection
            .request(&operation, method, params, on_progress)
            .await
    }

    /// Every item of list `method`, following its cursors (`paging.rs`).
    /// Cancel safe (see [`Client`]).
    pub(crate) async fn list_all<P: paging::Page>(
        &self,
        method: &'static str,
    ) -> Result<Vec<P::Item>, Error> {
        self.ready(Operation(method, None))?;
        paging::list_all::<P>(&self.inner.connection, method).await
    }

    /// The prompt list kept for `get_prompt`.
    pub(crate) fn prompt_cache(&self) -> &PromptCache {
        &self.inner.prompts
    }

    /// How many prompt list changes the server has announced so far.
    pub(crate) fn prompt_changes(&self) -> u64 {
        self.inner.offered.prompt_changes()
    }

    /// Checks the client may send requests.
    fn ready(&self, operation: Operation<'_>) -> Result<(), Error> {
        if self.inner.ready.load(Ordering::Acquire) {
            return Ok(());
        }
        self.inner.connection.check_open(&operation)?;
        Err(Error::NotInitialized {
            operation: operation.to_string(),
        })
    }
}

#[derive(serde::Serialize)]
struct EmptyParams {}

/// Locks a mutex that no code path can leave inconsistent.
fn lock<T>(mutex: &StdMutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
