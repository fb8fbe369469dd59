//! The application's side of server requests: the handlers it registers for
//! sampling and elicitation, the roots it offers, and the running of those
//! handlers (ADR 0007).
//!
//! What is registered is exactly what `initialize` announces. A request
//! for something not registered gets "method not found". Each handler runs
//! on a task of its own, so it may take minutes and may call back into the
//! same client; a failing handler answers with a JSON-RPC error, a panicking
//! one with an internal error, and a request the server cancels has its
//! handler dropped.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures_util::FutureExt;
use serde_json::{Value, json};
use tokio::sync::broadcast;
use tokio::task::{AbortHandle, JoinSet};

use crate::server_requests::elicitation::{
    ElicitResultWire, ElicitationRequest, ElicitationResponse,
};
use crate::server_requests::roots::Root;
use crate::server_requests::sampling::{CreateMessageRequest, CreateMessageResult};
use crate::session::client::{Client, ClientInner};
use crate::session::connection::Connection;
use crate::session::notifications::{SUBSCRIBER_QUEUE, ServerNotification};
use crate::wire::jsonrpc::{self, ProtocolError};
use crate::wire::transport::Outgoing;

/// How long sending a handler's answer may take.
const ANSWER_SEND_TIME: Duration = Duration::from_secs(30);

/// A boxed handler future.
pub type HandlerFuture<T> = Pin<Box<dyn Future<Output = Result<T, HandlerError>> + Send>>;

/// A handler's refusal or failure, sent to the server as a JSON-RPC error.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// What went wrong, for the server.
    pub message: String,
    /// Additional data, when any.
    pub data: Option<Value>,
}

impl HandlerError {
    /// An internal error (`-32603`) with this message.
    pub fn internal(message: impl Into<String>) -> Self {
        HandlerError {
            code: ProtocolError::INTERNAL_ERROR,
            message: message.into(),
            data: None,
        }
    }

    /// The user refused the request (code `-1`, as the spec's examples
    /// use for a rejected sampling request).
    pub fn rejected(message: impl Into<String>) -> Self {
        HandlerError {
            code: -1,
            message: message.into(),
            data: None,
        }
    }

    /// Invalid parameters (`-32602`).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        HandlerError {
            code: ProtocolError::INVALID_PARAMS,
            message: message.into(),
            data: None,
        }
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (JSON-RPC error {})", self.message, self.code)
    }
}

impl std::error::Error for HandlerError {}

/// What a handler knows about the request it answers.
#[derive(Clone)]
pub struct RequestContext {
    client: Weak<ClientInner>,
}

impl fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestContext").finish_non_exhaustive()
    }
}

impl RequestContext {
    /// The client the request came through, to call the server back (list
    /// its tools while answering, say); `None` once every other clone of the
    /// client is gone. Do not keep it beyond the handler: it keeps the
    /// connection open.
    pub fn client(&self) -> Option<Client> {
        self.client.upgrade().map(Client::from_inner)
    }
}

/// Answers `sampling/createMessage`: a server asks the application's model
/// for a completion. Any `Fn(CreateMessageRequest, RequestContext) -> impl
/// Future<Output = Result<CreateMessageResult, HandlerError>>` is one.
pub trait SamplingHandler: Send + Sync + 'static {
    /// Produces the completion. Dropped if the server cancels the request.
    fn create_message(
        &self,
        request: CreateMessageRequest,
        context: RequestContext,
    ) -> HandlerFuture<CreateMessageResult>;

    /// Whether the handler's model can use the tools a request offers (the
    /// capability `sampling.tools`). Off by default.
    fn supports_tools(&self) -> bool {
        false
    }
}

impl<F, Fut> SamplingHandler for F
where
    F: Fn(CreateMessageRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<CreateMessageResult, HandlerError>> + Send + 'static,
{
    fn create_message(
        &self,
        request: CreateMessageRequest,
        context: RequestContext,
    ) -> HandlerFuture<CreateMessageResult> {
        Box::pin(self(request, context))
    }
}

/// Answers `elicitation/create`: a server asks the user for input. Any
/// `Fn(ElicitationRequest, RequestContext) -> impl Future<Output =
/// Result<ElicitationResponse, HandlerError>>` is one (form mode only).
pub trait ElicitationHandler: Send + Sync + 'static {
    /// Asks the user. Dropped if the server cancels the request.
    fn elicit(
        &self,
        request: ElicitationRequest,
        context: RequestContext,
    ) -> HandlerFuture<ElicitationResponse>;

    /// Whether the handler can send the user to a URL (URL mode). Off by
    /// default: only form requests reach it.
    fn supports_url(&self) -> bool {
        false
    }
}

impl<F, Fut> ElicitationHandler for F
where
    F: Fn(ElicitationRequest, RequestContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ElicitationResponse, HandlerError>> + Send + 'static,
{
    fn elicit(
        &self,
        request: ElicitationRequest,
        context: RequestContext,
    ) -> HandlerFuture<ElicitationResponse> {
        Box::pin(self(request, context))
    }
}

/// What the client offers the server, shared by the client and its inbound
/// task.
pub(crate) struct Offered {
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    roots: Mutex<Option<Vec<Root>>>,
    pub(crate) max_running: usize,
    /// Where notifications are broadcast; `None` once the connection has
    /// ended, which ends every subscription.
    events: Mutex<Option<broadcast::Sender<ServerNotification>>>,
    /// How many times the server said its prompts changed: what tells the
    /// kept prompt list it went stale, without holding a subscription
    /// (which would keep up to a queue's worth of every notification,
    /// whatever their size, until the next prompt request).
    prompt_changes: AtomicU64,
    client: OnceLock<Weak<ClientInner>>,
}

impl Offered {
    pub(crate) fn new(
        sampling: Option<Arc<dyn SamplingHandler>>,
        elicitation: Option<Arc<dyn ElicitationHandler>>,
        roots: Option<Vec<Root>>,
        max_running: usize,
    ) -> Self {
        Offered {
            sampling,
            elicitation,
            roots: Mutex::new(roots),
            max_running: max_running.max(1),
            events: Mutex::new(Some(broadcast::channel(SUBSCRIBER_QUEUE).0)),
            prompt_changes: AtomicU64::new(0),
            client: OnceLock::new(),
        }
    }

    /// A subscription to the notifications; one that has ended already
    /// when the connection has.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerNotification> {
        match &*self.events.lock().unwrap_or_else(PoisonError::into_inner) {
            Some(sender) => sender.subscribe(),
            None => broadcast::channel(1).1,
        }
    }

    /// Broadcasts a notification (dropped when nobody subscribes).
    pub(crate) fn publish(&self, notification: ServerNotification) {
        if notification == ServerNotification::PromptsListChanged {
            self.prompt_changes.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(sender) = &*self.events.lock().unwrap_or_else(PoisonError::into_inner) {
            let _ = sender.send(notification);
        }
    }

    /// How many prompt list changes the server has announced so far.
    pub(crate) fn prompt_changes(&self) -> u64 {
        self.prompt_changes.load(Ordering::Relaxed)
    }

    /// Ends every subscription: the connection is over.
    pub(crate) fn end_notifications(&self) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
    }

    /// Remembers the client, for the handlers' contexts.
    pub(crate) fn set_client(&self, client: Weak<ClientInner>) {
        let _ = self.client.set(client);
    }

    fn context(&self) -> RequestContext {
        RequestContext {
            client: self.client.get().cloned().unwrap_or_default(),
        }
    }

    /// The capabilities `initialize` announces: exactly what is offered.
    pub(crate) fn capabilities(&self) -> Value {
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

    pub(crate) fn roots(&self) -> Option<Vec<Root>> {
        self.roots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Replaces the roots; `false` when no roots were offered (the
    /// capability was not announced, so they cannot change).
    pub(crate) fn set_roots(&self, roots: Vec<Root>) -> bool {
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

/// The server requests being handled, by the inbound task.
pub(crate) struct Running {
    tasks: JoinSet<()>,
    /// By the request's id, as canonical JSON text.
    by_request: HashMap<String, AbortHandle>,
    by_task: HashMap<tokio::task::Id, String>,
}

impl Running {
    pub(crate) fn new() -> Self {
        Running {
            tasks: JoinSet::new(),
            by_request: HashMap::new(),
            by_task: HashMap::new(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Waits for a handler task to end and forgets it. Cancel safe.
    pub(crate) async fn reap(&mut self) {
        let task = match self.tasks.join_next_with_id().await {
            Some(Ok((task, ()))) => task,
            Some(Err(error)) => error.id(),
            None => return,
        };
        if let Some(request) = self.by_task.remove(&task)
            && self
                .by_request
                .get(&request)
                .is_some_and(|handle| handle.id() == task)
        {
            self.by_request.remove(&request);
        }
    }

    /// The server cancelled request `request_id`: drop its handler (and
    /// send no answer, as the protocol asks).
    pub(crate) fn cancel(&mut self, request_id: &Value) {
        if let Some(handle) = self.by_request.remove(&request_id.to_string()) {
            tracing::debug!(%request_id, "mcp: the server cancelled its request; dropping the handler");
            handle.abort();
        }
    }

    /// Handles a server request other than `ping`: an answer to send now,
    /// or `None` when a handler task was started.
    pub(crate) fn start(
        &mut self,
        offered: &Offered,
        connection: &Arc<Connection>,
        raw_id: &str,
        method: &str,
        params: Option<&str>,
    ) -> Option<Outgoing> {
        let refuse = |code, message: String| {
            Some(reply(
                raw_id,
                Err(&ProtocolError {
                    code,
                    message,
                    data: None,
                }),
            ))
        };
        let known = match method {
            "roots/list" => offered.roots().is_some(),
            "sampling/createMessage" => offered.sampling.is_some(),
            "elicitation/create" => offered.elicitation.is_some(),
            _ => false,
        };
        if !known {
            tracing::debug!(%method, "mcp: refused a server request");
            return refuse(
                ProtocolError::METHOD_NOT_FOUND,
                format!("Method not found: this client does not offer {method:?}"),
            );
        }
        if connection.check_open(&"server request").is_err() {
            return refuse(
                ProtocolError::INVALID_REQUEST,
                "the client is closing".into(),
            );
        }
        if !connection.is_ready() {
            return refuse(
                ProtocolError::INVALID_REQUEST,
                "the client has not completed initialization".into(),
            );
        }
        if method == "roots/list" {
            let roots = offered.roots().unwrap_or_default();
            let result = json!({ "roots": roots }).to_string();
            return Some(reply(raw_id, Ok(&result)));
        }
        if self.tasks.len() >= offered.max_running {
            return refuse(
                ProtocolError::INTERNAL_ERROR,
                format!(
                    "the client is already handling {} requests from this server; try again later",
                    offered.max_running
                ),
            );
        }
        let params = params.unwrap_or("{}");
        let work: HandlerFuture<String> = match method {
            "sampling/createMessage" => {
                let request = match serde_json::from_str::<CreateMessageRequest>(params) {
                    Ok(request) => request,
                    Err(error) => {
                        return refuse(
                            ProtocolError::INVALID_PARAMS,
                            format!("invalid sampling request: {error}"),
                        );
                    }
                };
                // Checked above; `?` only restates it.
                let handler = offered.sampling.clone()?;
                let context = offered.context();
                // The handler is called on its task too: a handler that
                // blocks or panics before its future starts must not stop
                // the inbound task.
                Box::pin(async move { encode(&handler.create_message(request, context).await?) })
            }
            _ => {
                let request = match ElicitationRequest::parse(params) {
                    Ok(request) => request,
                    Err(problem) => return refuse(ProtocolError::INVALID_PARAMS, problem.0),
                };
                let handler = offered.elicitation.clone()?;
                if matches!(request, ElicitationRequest::Url { .. }) && !handler.supports_url() {
                    return refuse(
                        ProtocolError::INVALID_PARAMS,
                        "this client does not support URL-mode elicitation".into(),
                    );
                }
                let context = offered.context();
                Box::pin(async move {
                    let response = handler.elicit(request.clone(), context).await?;
                    settle_elicitation(&request, response)
                })
            }
        };
        let key = serde_json::from_str::<Value>(raw_id)
            .map(|id| id.to_string())
            .unwrap_or_else(|_| raw_id.to_owned());
        let connection = connection.clone();
        let raw_id = raw_id.to_owned();
        let task = self.tasks.spawn(async move {
            let outcome = AssertUnwindSafe(work).catch_unwind().await;
            let answer = match outcome {
                Ok(Ok(result)) => reply(&raw_id, Ok(&result)),
                Ok(Err(error)) => reply(
                    &raw_id,
                    Err(&ProtocolError {
                        code: error.code,
                        message: error.message,
                        data: error.data,
                    }),
                ),
                Err(_) => {
                    tracing::warn!("mcp: a handler of a server request panicked");
                    reply(
                        &raw_id,
                        Err(&ProtocolError {
                            code: ProtocolError::INTERNAL_ERROR,
                            message: "the client failed to handle the request".into(),
                            data: None,
                        }),
                    )
                }
            };
            match tokio::time::timeout(ANSWER_SEND_TIME, connection.send(answer)).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::debug!(%error, "mcp: could not send a handler's answer"),
                Err(_) => tracing::debug!("mcp: gave up sending a handler's answer"),
            }
        });
        self.by_task.insert(task.id(), key.clone());
        self.by_request.insert(key, task);
        None
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

/// A response to a server request.
pub(crate) fn reply(raw_id: &str, outcome: Result<&str, &ProtocolError>) -> Outgoing {
    let mut body = Vec::with_capacity(128);
    jsonrpc::encode_reply(&mut body, raw_id, outcome);
    Outgoing::response(Bytes::from(body))
}
