//! `ClientOffer`, the session's [`Offer`] made of a
//! [`ClientConfig`](crate::ClientConfig): the capabilities announced, and
//! which handler answers which request (ADR 0007).
//!
//! What is registered is exactly what `initialize` announces; a request for
//! anything else gets "method not found" from the session.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use crate::server_requests::elicitation::{
    ElicitResultWire, ElicitationRequest, ElicitationResponse,
};
use crate::server_requests::handlers::{ElicitationHandler, SamplingHandler};
use crate::server_requests::sampling::CreateMessageRequest;
use crate::session::context::RequestContext;
use crate::session::handle::WeakClient;
use crate::session::modern::era::TASKS_EXTENSION;
use crate::session::serving::{HandlerError, HandlerFuture, Offer};
use crate::wire::root::Root;

/// What the client offers the server, as the session asks it.
pub(crate) struct ClientOffer {
    sampling: Option<Arc<dyn SamplingHandler>>,
    elicitation: Option<Arc<dyn ElicitationHandler>>,
    roots: Mutex<Option<Vec<Root>>>,
    max_running: usize,
    /// Whether modern requests declare the tasks extension.
    tasks: bool,
    /// The way back to the client, for the handlers.
    context: RequestContext,
}

/// The handlers and roots a client offers, as its configuration gives them.
pub(crate) struct OfferParts {
    /// Answers `sampling/createMessage`.
    pub(crate) sampling: Option<Arc<dyn SamplingHandler>>,
    /// Answers `elicitation/create`.
    pub(crate) elicitation: Option<Arc<dyn ElicitationHandler>>,
    /// Answered to `roots/list`; `None` offers no roots.
    pub(crate) roots: Option<Vec<Root>>,
    /// How many server requests are handled at once.
    pub(crate) max_running: usize,
    /// Whether modern requests declare the tasks extension.
    pub(crate) tasks: bool,
}

impl ClientOffer {
    /// What `offers` makes, its handlers given `client` as their context.
    pub(crate) fn new(offers: OfferParts, client: WeakClient) -> Self {
        ClientOffer {
            sampling: offers.sampling,
            elicitation: offers.elicitation,
            roots: Mutex::new(offers.roots),
            max_running: offers.max_running.max(1),
            tasks: offers.tasks,
            context: RequestContext::new(client),
        }
    }

    fn roots(&self) -> Option<Vec<Root>> {
        self.roots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl Offer for ClientOffer {
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
