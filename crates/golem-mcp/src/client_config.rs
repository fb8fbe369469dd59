//! How a client is made: [`ClientConfig`] (how the application registers
//! handlers and roots, its identity, the protocol revision, restarts and
//! the tasks extension) and the `Client` constructors, `new`, `connect` and
//! their `_with` forms, with `set_roots`, which changes the configured
//! roots.
//!
//! Architecture invariant: this layer only puts the others together; the
//! session never sees a `ClientConfig`, only what is made of it.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::error::Error;
use crate::server_requests::handlers::{ElicitationHandler, SamplingHandler};
use crate::server_requests::offered::{ClientOffer, OfferParts};
use crate::session::feature_state::FeatureState;
use crate::session::handle::{Client, SessionSetup};
use crate::session::protocol::{ClientInfo, ProtocolChoice};
use crate::session::restart::RestartPolicy;
use crate::wire::root::Root;
use crate::wire::task::TaskOptions;
use crate::wire::transport::Transport;

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
    /// Which protocol revision to speak: found by probing (the default,
    /// [`ProtocolChoice::Auto`]) or pinned (ADR 0018).
    pub protocol: ProtocolChoice,
    /// How long the probe waits for the server's first answer before it
    /// takes the server for a legacy one that ignores unknown requests
    /// (10 s by default: a server started by `npx` or `uvx` may first be
    /// installed, and answers only then).
    pub probe_timeout: Duration,
    /// The tasks extension of 2026-07-28 (`io.modelcontextprotocol/tasks`,
    /// ADR 0025): `None` (the default) declares nothing, and a modern
    /// server may not answer with a task; `Some(options)` declares it on
    /// every modern request, and a `tools/call` the server answers with a
    /// task (from [`Client::call_tool`] and the bridge too) is polled to
    /// its result with these options. The legacy era's tasks (2025-11-25)
    /// need no declaration: see [`Client::call_tool_as_task`].
    pub tasks: Option<TaskOptions>,
    /// Restarts a server the client lost (a stdio server that exited),
    /// within the policy's bounds; `None` (the default) leaves the client
    /// ended, every later call failing as the connection ended (ADR 0026).
    pub restart: Option<RestartPolicy>,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            client_info: ClientInfo::default(),
            sampling: None,
            elicitation: None,
            roots: None,
            max_concurrent_handlers: 16,
            protocol: ProtocolChoice::Auto,
            probe_timeout: Duration::from_secs(10),
            tasks: None,
            restart: None,
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
            .field("protocol", &self.protocol)
            .field("probe_timeout", &self.probe_timeout)
            .field("tasks", &self.tasks)
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

    /// OfferParts these roots.
    pub fn with_roots(mut self, roots: Vec<Root>) -> Self {
        self.roots = Some(roots);
        self
    }

    /// Declares the tasks extension of 2026-07-28 and runs the tasks modern
    /// servers answer `tools/call` with to their results, with `options`
    /// ([`ClientConfig::tasks`]).
    ///
    /// ```
    /// use golem_mcp::{ClientConfig, TaskOptions};
    /// let config = ClientConfig::default().with_tasks(TaskOptions::default());
    /// assert!(config.tasks.is_some());
    /// ```
    pub fn with_tasks(mut self, options: TaskOptions) -> Self {
        self.tasks = Some(options);
        self
    }

    /// Restarts a lost server by `policy` (see [`RestartPolicy`]).
    pub fn with_restart(mut self, policy: RestartPolicy) -> Self {
        self.restart = Some(policy);
        self
    }

    /// Speaks exactly protocol revision `version` (e.g. `2026-07-28` or
    /// `2025-11-25`) instead of probing for the server's era; a revision
    /// this client does not speak fails [`Client::initialize`] with
    /// [`Error::InvalidConfig`].
    pub fn with_protocol(mut self, version: impl Into<String>) -> Self {
        self.protocol = ProtocolChoice::Pinned(version.into());
        self
    }
}

impl Client {
    /// Connects over `transport`: a client introducing itself as
    /// `golem-mcp`, with the handshake done ([`initialize`](Client::initialize)),
    /// ready for calls. On failure the client is closed (a stdio server's
    /// process ends) and the handshake's error returned.
    ///
    /// Use [`Client::new`] and `initialize` instead when something must be
    /// in place before the handshake: a
    /// [`notifications()`](Client::notifications) subscription that must not
    /// miss what a server sends right after it (a list change, a log line),
    /// or a shared client that other tasks hold while it connects.
    ///
    /// Cancel safe: dropping the future drops the client, which ends a stdio
    /// server's process group.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), golem_mcp::Error> {
    /// use golem_mcp::{Client, StdioConfig, StdioTransport};
    /// let transport = StdioTransport::spawn(StdioConfig::new("mcp-server-time"))?;
    /// let client = Client::connect(transport).await?;
    /// println!("{} tools", client.list_tools().await?.len());
    /// client.close().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn connect(transport: impl Transport) -> Result<Self, Error> {
        Client::connect_with(transport, ClientConfig::default()).await
    }

    /// [`connect`](Client::connect) with the given configuration (handlers,
    /// identity, protocol revision).
    ///
    /// Cancel safe, as `connect`.
    pub async fn connect_with<T: Transport>(
        transport: T,
        config: ClientConfig,
    ) -> Result<Self, Error> {
        let client = Client::with_config(transport, config);
        client.initialize_or_close().await?;
        Ok(client)
    }

    /// A client over `transport`, introducing itself as `golem-mcp`, not
    /// yet connected: call [`initialize`](Client::initialize) before
    /// anything else (or use [`Client::connect`], which does both).
    pub fn new(transport: impl Transport) -> Self {
        Client::with_config(transport, ClientConfig::default())
    }

    /// A client over `transport` with the given configuration, not yet
    /// connected (see [`Client::new`]).
    pub fn with_config<T: Transport>(transport: T, config: ClientConfig) -> Self {
        let setup = SessionSetup {
            client_info: config.client_info,
            protocol: config.protocol,
            probe_timeout: config.probe_timeout,
            restart: config.restart,
        };
        let offers = OfferParts {
            sampling: config.sampling,
            elicitation: config.elicitation,
            roots: config.roots,
            max_running: config.max_concurrent_handlers,
            tasks: config.tasks.is_some(),
        };
        let features = FeatureState {
            task_defaults: config.tasks,
            ..FeatureState::default()
        };
        Client::open(
            transport,
            setup,
            |client| Arc::new(ClientOffer::new(offers, client)),
            features,
        )
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
        const CHANGED: &str = "notifications/roots/list_changed";
        self.check_open(CHANGED)?;
        if !self.offer().set_roots(roots) {
            return Err(Error::InvalidConfig {
                operation: "set_roots",
                field: "roots".into(),
                problem: "the client was set up without roots; give ClientConfig::roots (even an empty list) to offer them".into(),
            });
        }
        // Before `initialize` is answered there is nothing to say: the
        // server asks for the roots after it.
        self.notify_when_negotiated(CHANGED).await
    }
}
