//! What a client offers the server, put together: [`ClientConfig`] (how the
//! application registers handlers and roots), `Offered` (the session's
//! [`Offer`] made of it: the capabilities announced, and which handler
//! answers which request), and the `Client` constructors that take a
//! configuration.
//!
//! What is registered is exactly what `initialize` announces; a request for
//! anything else gets "method not found" from the session.

use std::any::Any;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

use crate::error::Error;
use crate::features::modern_tasks::TaskDefaults;
use crate::features::task_options::TaskOptions;
use crate::server_requests::elicitation::{
    ElicitResultWire, ElicitationRequest, ElicitationResponse,
};
use crate::server_requests::handlers::{ElicitationHandler, SamplingHandler};
use crate::server_requests::roots::Root;
use crate::server_requests::sampling::CreateMessageRequest;
use crate::session::client::{Client, Settings, WeakClient};
use crate::session::context::RequestContext;
use crate::session::era::TASKS_EXTENSION;
use crate::session::protocol::{ClientInfo, ProtocolChoice};
use crate::session::restart::RestartPolicy;
use crate::session::serving::{HandlerError, HandlerFuture, Offer};
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

    /// Offers these roots.
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

/// What the client offers the server, as the session asks it.
pub(crate) struct Offered {
    sampling: Option<Arc<dyn SamplingHandler>>,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    roots: Mutex<Option<Vec<Root>>>,
    max_running: usize,
    /// Whether modern requests declare the tasks extension.
    tasks: bool,
    /// The way back to the client, for the handlers.
    context: RequestContext,
}

impl Offered {
    fn new(config: &ClientConfig, client: WeakClient) -> Self {
        Offered {
            sampling: config.sampling.clone(),
            elicitation: config.elicitation.clone(),
            roots: Mutex::new(config.roots.clone()),
            max_running: config.max_concurrent_handlers.max(1),
            tasks: config.tasks.is_some(),
            context: RequestContext::new(client),
        }
    }

    fn roots(&self) -> Option<Vec<Root>> {
        self.roots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the roots; `false` when no roots were offered (the
    /// capability was not announced, so they cannot change).
    fn set_roots(&self, roots: Vec<Root>) -> bool {
        let mut current = self.roots.lock().unwrap_or_else(PoisonError::into_inner);
        match current.as_mut() {
            Some(current) => {
                *current = roots;
                true
            }
            None => false,
        }
    }
}

impl Offer for Offered {
    fn capabilities(&self) -> Value {
        let mut capabilities = serde_json::Map::new();
        if self.roots().is_some() {
            capabilities.insert("roots".into(), json!({"listChanged": true}));
        }
        if let Some(sampling) = &self.sampling {
            let value = match sampling.supports_tools() {
                true => json!({"tools": {}}),
                false => json!({}),
            };
            capabilities.insert("sampling".into(), value);
        }
        if let Some(elicitation) = &self.elicitation {
            let value = match elicitation.supports_url() {
                true => json!({"form": {}, "url": {}}),
                false => json!({"form": {}}),
            };
            capabilities.insert("elicitation".into(), value);
        }
        Value::Object(capabilities)
    }

    fn modern_capabilities(&self) -> Value {
        let mut capabilities = self.capabilities();
        if self.tasks {
            capabilities["extensions"] = json!({ TASKS_EXTENSION: {} });
        }
        capabilities
    }

    fn offers(&self, method: &str) -> bool {
        match method {
            "roots/list" => self.roots().is_some(),
            "sampling/createMessage" => self.sampling.is_some(),
            "elicitation/create" => self.elicitation.is_some(),
            _ => false,
        }
    }

    fn answer_at_once(&self, method: &str) -> Option<String> {
        (method == "roots/list")
            .then(|| json!({ "roots": self.roots().unwrap_or_default() }).to_string())
    }

    fn unoffered_answer(&self, method: &str) -> Option<String> {
        // What a user who was never asked would answer: no.
        (method == "elicitation/create").then(|| json!({"action": "decline"}).to_string())
    }

    fn max_running(&self) -> usize {
        self.max_running
    }

    fn work(&self, method: &str, params: &str) -> Result<HandlerFuture<String>, HandlerError> {
        let context = self.context.clone();
        match (method, &self.sampling, &self.elicitation) {
            ("sampling/createMessage", Some(handler), _) => {
                let request =
                    serde_json::from_str::<CreateMessageRequest>(params).map_err(|error| {
                        HandlerError::invalid_params(format!("invalid sampling request: {error}"))
                    })?;
                let handler = handler.clone();
                // The handler is called on its task too: a handler that
                // blocks or panics before its future starts must not stop
                // the inbound task.
                Ok(Box::pin(async move {
                    encode(&handler.create_message(request, context).await?)
                }))
            }
            ("elicitation/create", _, Some(handler)) => {
                let request = ElicitationRequest::parse(params)
                    .map_err(|problem| HandlerError::invalid_params(problem.0))?;
                if matches!(request, ElicitationRequest::Url { .. }) && !handler.supports_url() {
                    return Err(HandlerError::invalid_params(
                        "this client does not support URL-mode elicitation",
                    ));
                }
                let handler = handler.clone();
                Ok(Box::pin(async move {
                    let response = handler.elicit(request.clone(), context).await?;
                    settle_elicitation(&request, response)
                }))
            }
            // `offers` said no to anything else, so the session never asks.
            _ => Err(HandlerError {
                code: crate::wire::jsonrpc::ProtocolError::METHOD_NOT_FOUND,
                message: format!("Method not found: this client does not offer {method:?}"),
                data: None,
            }),
        }
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Applies an elicitation answer to the request: defaults filled in and the
/// form checked for an accepted form; the result's JSON.
fn settle_elicitation(
    request: &ElicitationRequest,
    mut response: ElicitationResponse,
) -> Result<String, HandlerError> {
    let url_mode = matches!(request, ElicitationRequest::Url { .. });
    if let (ElicitationRequest::Form { form, .. }, ElicitationResponse::Accept(content)) =
        (request, &mut response)
    {
        form.complete(content).map_err(|problem| {
            HandlerError::internal(format!(
                "the application's answer does not fit the form: {problem}"
            ))
        })?;
    }
    encode(&ElicitResultWire::from_response(&response, url_mode))
}

fn encode(value: &impl serde::Serialize) -> Result<String, HandlerError> {
    serde_json::to_string(value)
        .map_err(|error| HandlerError::internal(format!("cannot encode the answer: {error}")))
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
        let settings = Settings {
            client_info: config.client_info.clone(),
            protocol: config.protocol.clone(),
            probe_timeout: config.probe_timeout,
            restart: config.restart.clone(),
        };
        let client = Client::open(transport, settings, |client| {
            Arc::new(Offered::new(&config, client))
        });
        if let Some(options) = config.tasks {
            client.extension::<TaskDefaults>().set(options);
        }
        client
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
        let offered = self.offer().as_any().downcast_ref::<Offered>();
        if !offered.is_some_and(|offered| offered.set_roots(roots)) {
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
