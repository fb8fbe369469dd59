//! How the session runs the server's requests: the contract a layer above
//! fulfils ([`Offer`]: what is offered, and the work that answers each
//! request), the running of that work (one task each, bounded, dropped when
//! the server cancels or the client goes away; panics caught), and the
//! answers sent back.
//!
//! It knows JSON-RPC and the request table, not what sampling, elicitation
//! or roots are: `server_requests/` decides that.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::FutureExt;
use serde_json::Value;
use tokio::task::{AbortHandle, JoinSet};
use tracing::{Instrument, Span};

use crate::session::connection::Connection;
use crate::session::telemetry;
use crate::wire::jsonrpc::{self, ProtocolError};
use crate::wire::root::Root;
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

/// What the client offers the server, as the session runs it; the
/// `server_requests` layer implements it (ADR 0007). The inbound driver
/// asks it about each server request other than `ping`: whether the
/// method is offered (else "method not found"); then, once the connection
/// is open and negotiated, whether it is answered at once; then, within
/// [`max_running`](Offer::max_running), the work that answers it
/// ([`Running::start`] makes those checks in that order).
pub(crate) trait Offer: Send + Sync + 'static {
    /// The capabilities `initialize` announces: exactly what is offered.
    fn capabilities(&self) -> Value;

    /// The capabilities every modern request names in its `_meta`: the
    /// same, plus the extensions of 2026-07-28 the application enabled
    /// (the tasks extension, ADR 0025), which the legacy era has no place
    /// for.
    fn modern_capabilities(&self) -> Value {
        self.capabilities()
    }

    /// Whether requests for `method` are offered; any other gets "method
    /// not found".
    fn offers(&self, method: &str) -> bool;

    /// The result (JSON text) of an offered request that needs no handler,
    /// sent at once.
    fn answer_at_once(&self, method: &str) -> Option<String>;

    /// The answer (JSON text) to a modern server's input request that is
    /// not offered, when there is a harmless one (an elicitation is
    /// declined); `None` fails the request that needed the input.
    fn unoffered_answer(&self, method: &str) -> Option<String>;

    /// How many requests may be handled at once; beyond that the server is
    /// told to try again later.
    fn max_running(&self) -> usize;

    /// The work answering an offered request (its result as JSON text), or
    /// why its `params` are refused.
    fn work(&self, method: &str, params: &str) -> Result<HandlerFuture<String>, HandlerError>;

    /// Replaces the roots answered to `roots/list`; `false` when no roots
    /// are offered (the capability was not announced, so they cannot
    /// change).
    fn set_roots(&self, roots: Vec<Root>) -> bool;
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
        offer: &dyn Offer,
        connection: &Arc<Connection>,
        raw_id: &str,
        method: &str,
        params: Option<&str>,
    ) -> Option<Outgoing> {
        // Every request the server sends is handled in a span of its own,
        // refused or answered at once too.
        let span = handling_span(method, raw_id, params, connection);
        let refuse = |code, message: String| {
            if let Some(span) = &span {
                telemetry::server_request_failed(span, code, &message);
            }
            Some(reply(
                raw_id,
                Err(&ProtocolError {
                    code,
                    message,
                    data: None,
                }),
            ))
        };
        if !offer.offers(method) {
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
        if !connection.is_negotiated() {
            return refuse(
                ProtocolError::INVALID_REQUEST,
                "the client has not completed initialization".into(),
            );
        }
        if let Some(result) = offer.answer_at_once(method) {
            return Some(reply(raw_id, Ok(&result)));
        }
        let max_running = offer.max_running();
        if self.tasks.len() >= max_running {
            return refuse(
                ProtocolError::INTERNAL_ERROR,
                format!(
                    "the client is already handling {max_running} requests from this server; try again later"
                ),
            );
        }
        let work = match offer.work(method, params.unwrap_or("{}")) {
            Ok(work) => work,
            Err(refused) => return refuse(refused.code, refused.message),
        };
        let key = serde_json::from_str::<Value>(raw_id)
            .map(|id| id.to_string())
            .unwrap_or_else(|_| raw_id.to_owned());
        let connection = connection.clone();
        let raw_id = raw_id.to_owned();
        let handled = async move {
            let outcome = AssertUnwindSafe(work).catch_unwind().await;
            let answer = match outcome {
                Ok(Ok(result)) => reply(&raw_id, Ok(&result)),
                Ok(Err(error)) => {
                    telemetry::server_request_failed(&Span::current(), error.code, &error.message);
                    reply(
                        &raw_id,
                        Err(&ProtocolError {
                            code: error.code,
                            message: error.message,
                            data: error.data,
                        }),
                    )
                }
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
        };
        let task = match span {
            Some(span) => self.tasks.spawn(handled.instrument(span)),
            None => self.tasks.spawn(handled),
        };
        self.by_task.insert(task.id(), key.clone());
        self.by_request.insert(key, task);
        None
    }
}

/// The span a server request is handled in (kind server), when anything
/// listens; a child of the trace context the request carries (feature
/// `otel`).
fn handling_span(
    method: &str,
    raw_id: &str,
    params: Option<&str>,
    connection: &Connection,
) -> Option<Span> {
    if !telemetry::listening() {
        return None;
    }
    let span = telemetry::server_request_span(method, raw_id, connection.protocol_version());
    #[cfg(feature = "otel")]
    crate::session::trace_context::adopt_parent(&span, params);
    #[cfg(not(feature = "otel"))]
    let _ = params;
    Some(span)
}

/// A response to a server request.
pub(crate) fn reply(raw_id: &str, outcome: Result<&str, &ProtocolError>) -> Outgoing {
    let mut body = Vec::with_capacity(128);
    jsonrpc::encode_reply(&mut body, raw_id, outcome);
    Outgoing::response(Bytes::from(body))
}
