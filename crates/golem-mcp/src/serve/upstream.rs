//! The bridge's client to the server: [`UpstreamSetup`] (what a bridge
//! asks of the client it opens for a host: the host's identity and
//! capabilities), [`Client::for_bridge`], and the offer that passes the
//! server's requests (roots, sampling, elicitation) on to the host and its
//! answers back.
//!
//! Upstream the bridge declares exactly the capabilities its host declared,
//! so that the server offers only what the host can answer.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use crate::serve::host::{Answer, Outbox};
use crate::serve::modern::{CURRENT_CALL, Event, Rounds};
use crate::session::feature_state::FeatureState;
use crate::session::handle::{Client, SessionSetup};
use crate::session::protocol::{ClientInfo, ProtocolChoice};
use crate::session::restart::RestartPolicy;
use crate::session::serving::{HandlerError, HandlerFuture, Offer};
use crate::wire::jsonrpc::ProtocolError;
use crate::wire::root::Root;
use crate::wire::transport::Transport;

/// How many of the server's requests the host is asked at once.
const MAX_RUNNING: usize = 16;

/// What a bridge gives the client it opens to the server for one host:
/// the host's name and capabilities, and the way to the host for the
/// server's requests. Opaque: hand it to [`Client::for_bridge`].
pub struct UpstreamSetup {
    pub(crate) client_info: ClientInfo,
    pub(crate) protocol: ProtocolChoice,
    pub(crate) restart: Option<RestartPolicy>,
    pub(crate) offer: Arc<ForwardOffer>,
}

impl fmt::Debug for UpstreamSetup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UpstreamSetup")
            .field("client_info", &self.client_info)
            .field("capabilities", &self.offer.capabilities)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client over `transport` for a bridge: it introduces itself as the
    /// host did, declares the host's capabilities and passes the server's
    /// requests on to the host. Not yet connected: the bridge initializes
    /// it. What the `connect` function given to
    /// [`Proxy::new`](crate::serve::Proxy::new) returns.
    pub fn for_bridge<T: Transport>(transport: T, setup: UpstreamSetup) -> Client {
        let session = SessionSetup {
            client_info: setup.client_info,
            protocol: setup.protocol,
            probe_timeout: Duration::from_secs(10),
            restart: setup.restart,
        };
        let offer = setup.offer;
        Client::open(transport, session, |_| offer, FeatureState::default())
    }
}

/// The server's requests that the host answers, by the host's capabilities.
pub(crate) struct ForwardOffer {
    capabilities: Value,
    host: HostRequests,
    /// A 2026-07-28 host's calls, when the host is one: it is asked through
    /// the call its question belongs to (`input_required`), never directly.
    modern: Option<Arc<Rounds>>,
}

impl ForwardOffer {
    /// An offer of what `capabilities` (the host's) declare, asking the host
    /// through `host`, or through its calls in `modern`.
    pub(crate) fn new(
        capabilities: Value,
        host: HostRequests,
        modern: Option<Arc<Rounds>>,
    ) -> Self {
        ForwardOffer {
            capabilities,
            host,
            modern,
        }
    }

    fn declares(&self, capability: &str) -> bool {
        self.capabilities
            .get(capability)
            .is_some_and(Value::is_object)
    }
}

impl Offer for ForwardOffer {
    fn capabilities(&self) -> Value {
        match &self.capabilities {
            Value::Object(_) => self.capabilities.clone(),
            _ => Value::Object(Default::default()),
        }
    }

    fn offers(&self, method: &str) -> bool {
        match method {
            "roots/list" => self.declares("roots"),
            "sampling/createMessage" => self.declares("sampling"),
            "elicitation/create" => self.declares("elicitation"),
            _ => false,
        }
    }

    fn answer_at_once(&self, _method: &str) -> Option<String> {
        None
    }

    fn unoffered_answer(&self, _method: &str) -> Option<String> {
        None
    }

    fn max_running(&self) -> usize {
        MAX_RUNNING
    }

    fn work(&self, method: &str, params: &str) -> Result<HandlerFuture<String>, HandlerError> {
        let method = method.to_owned();
        let params = params.to_owned();
        let Some(rounds) = &self.modern else {
            let host = self.host.clone();
            return Ok(Box::pin(async move { host.ask(&method, &params).await }));
        };
        // The call this question is asked for: the one running on this task
        // (a 2026-07-28 server's question comes back on its call), else the
        // newest (a legacy server's comes beside it).
        let call = CURRENT_CALL
            .try_with(Clone::clone)
            .ok()
            .or_else(|| rounds.newest())
            .ok_or_else(|| {
                HandlerError::internal("no call of the host's is waiting for this answer")
            })?;
        Ok(Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            call.send(Event::Ask {
                method,
                params,
                reply,
            })
            .await
            .map_err(|_| HandlerError::internal("the host's call has ended"))?;
            match answer.await {
                Ok(Ok(result)) => Ok(result.get().to_owned()),
                Ok(Err(error)) => Err(host_error(&error)),
                Err(_) => Err(HandlerError::internal("the host did not answer")),
            }
        }))
    }

    fn set_roots(&self, _roots: Vec<Root>) -> bool {
        false
    }
}

/// The server's requests waiting for the host's answers, by the id they
/// were given towards the host.
#[derive(Clone)]
pub(crate) struct HostRequests {
    outbox: Outbox,
    waiting: Arc<Mutex<HashMap<String, oneshot::Sender<Answer>>>>,
    next_id: Arc<AtomicU64>,
}

impl HostRequests {
    pub(crate) fn new(outbox: Outbox) -> Self {
        HostRequests {
            outbox,
            waiting: Arc::default(),
            next_id: Arc::new(AtomicU64::new(1)),
        }
    }

    /// Asks the host `method` and waits for its answer. Dropped before the
    /// answer (the server gave up on it), the host is told with
    /// `notifications/cancelled`.
    async fn ask(&self, method: &str, params: &str) -> Result<String, HandlerError> {
        let id = format!(
            r#""golem-{}""#,
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        let (sender, answer) = oneshot::channel();
        self.lock().insert(id.clone(), sender);
        let mut guard = Waiting {
            host: self,
            id: &id,
            answered: false,
        };
        let method_json = serde_json::to_string(method).expect("a string is JSON");
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method_json},"params":{params}}}"#);
        if !self.outbox.send(None, false, body.into()).await {
            return Err(HandlerError::internal("the host is gone"));
        }
        let answer = answer
            .await
            .map_err(|_| HandlerError::internal("the host is gone"));
        guard.answered = true;
        match answer? {
            Ok(result) => Ok(result.get().to_owned()),
            Err(error) => Err(host_error(&error)),
        }
    }

    /// Hands the host's answer to request `id` to whoever waits for it;
    /// `false` when nobody does.
    pub(crate) fn answer(&self, id: &str, answer: Answer) -> bool {
        match self.lock().remove(id) {
            Some(waiting) => waiting.send(answer).is_ok(),
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Answer>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A request to the host in flight: dropped unanswered, it is forgotten and
/// the host told.
struct Waiting<'a> {
    host: &'a HostRequests,
    id: &'a str,
    answered: bool,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.host.lock().remove(self.id);
        if !self.answered {
            let body = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"the server cancelled its request"}}}}"#,
                self.id
            );
            self.host.outbox.offer(None, body.into());
        }
    }
}

/// The host's error object as the server is to see it.
fn host_error(error: &RawValue) -> HandlerError {
    match serde_json::from_str::<ProtocolError>(error.get()) {
        Ok(error) => HandlerError {
            code: error.code,
            message: error.message,
            data: error.data,
        },
        Err(_) => {
            HandlerError::internal(format!("the host answered with an error: {}", error.get()))
        }
    }
}
