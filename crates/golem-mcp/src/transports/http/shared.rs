//! `Shared`: what the transport's sends, streams and close share (the
//! client, the session, the streams being read, the standalone stream's
//! state), and the small helpers every request uses.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue};
use reqwest::{Method, Url};
use tokio::sync::{Notify, mpsc};
use tokio::task::AbortHandle;

use super::authorize;
use super::client::{HttpClient, Request};
use super::config::ResumePolicy;
use super::drain::Drains;
use super::headers::{PROTOCOL_VERSION, SESSION, is_header_value};
use crate::wire::transport::{IdMap, Inbound, Outgoing, RequestId};
use crate::wire::transport_error::TransportError;
use golem_mcp_auth::{AuthProvider, Secret};

/// What the transport's sends, streams and close share.
pub(super) struct Shared {
    pub(super) url: Url,
    /// Taken by `close`, once the `DELETE` is under way: the pool's idle
    /// connections (and their tasks) go with the last handle on it.
    pub(super) client: StdMutex<Option<HttpClient>>,
    pub(super) headers: HeaderMap,
    pub(super) max_message_bytes: usize,
    pub(super) resume: ResumePolicy,
    pub(super) reinitialize_expired_session: bool,
    pub(super) close_timeout: Duration,
    /// The bound on the `endpoint` event, should the server turn out to
    /// speak HTTP+SSE.
    pub(super) sse_endpoint_timeout: Duration,
    /// Supplies `Authorization` and authorizes after a refusal.
    pub(super) auth: Option<Arc<dyn AuthProvider>>,
    pub(super) session: StdMutex<Session>,
    /// The revision the client negotiated, for the requests the transport
    /// makes on its own (resumption, `DELETE`).
    pub(super) protocol_version: OnceLock<&'static str>,
    /// Where received messages go; the client's inbound task reads them.
    /// (Only an HTTP+SSE stream, after the fallback, sends an error: its
    /// end.)
    pub(super) inbound: mpsc::Sender<Result<Inbound, TransportError>>,
    /// The event streams being read, by the request they answer (also
    /// while the rest of an answered one is read: `drain.rs`).
    pub(super) streams: StdMutex<IdMap<AbortHandle>>,
    /// How answered streams are read to their ends.
    pub(super) drains: Drains,
    /// The standalone `GET` stream: its task, once opened.
    pub(super) standalone: StdMutex<Standalone>,
    pub(super) closed: AtomicBool,
    /// Notified by `close`, so that waits give way.
    pub(super) closing: Notify,
}

#[derive(Default)]
pub(super) struct Session {
    pub(super) id: Option<HeaderValue>,
    /// The `initialize` request as sent, to start a new session with.
    pub(super) initialize: Option<Outgoing>,
}

impl Shared {
    pub(super) fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn streams(&self) -> MutexGuard<'_, IdMap<AbortHandle>> {
        self.streams.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn standalone(&self) -> MutexGuard<'_, Standalone> {
        self.standalone
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Stops every stream task.
    pub(super) fn stop_streams(&self) {
        for (_, stream) in self.streams().drain() {
            stream.abort();
        }
        if let Some(standalone) = self.standalone().task.take() {
            standalone.abort();
        }
    }

    pub(super) fn check_open(&self) -> Result<(), TransportError> {
        match self.closed.load(Ordering::Acquire) {
            true => Err(TransportError::Closed),
            false => Ok(()),
        }
    }

    pub(super) fn client(&self) -> MutexGuard<'_, Option<HttpClient>> {
        self.client.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A request to the endpoint with the extra headers, `session` as its
    /// session id, `protocol_version` as its `MCP-Protocol-Version` and
    /// the provider's current `Authorization`, when given. Fails once the
    /// transport is closed.
    pub(super) fn request(
        &self,
        method: Method,
        session: Option<HeaderValue>,
        protocol_version: Option<&'static str>,
    ) -> Result<Request, TransportError> {
        self.request_with(
            method,
            session,
            protocol_version,
            self.authorization().as_ref(),
        )
    }

    /// [`request`](Shared::request) with `authorization` as the
    /// `Authorization` value.
    pub(super) fn request_with(
        &self,
        method: Method,
        session: Option<HeaderValue>,
        protocol_version: Option<&'static str>,
        authorization: Option<&Secret>,
    ) -> Result<Request, TransportError> {
        let client = self.client().clone().ok_or(TransportError::Closed)?;
        let mut request = client.request(method, &self.url, self.headers.clone());
        if let Some(session_id) = session {
            request = request.header(SESSION, session_id);
        }
        if let Some(version) = protocol_version {
            request = match is_header_value(version) {
                true => request.header(PROTOCOL_VERSION, HeaderValue::from_static(version)),
                // Refused when the request is sent, as any bad value is.
                false => request.header(PROTOCOL_VERSION, version),
            };
        }
        Ok(authorize::with_authorization(request, authorization))
    }

    /// Lets the auth provider renew a credential about to expire before a
    /// request goes out: every POST, and every GET that opens or resumes an
    /// event stream (a stream reopened after an idle hour must not carry
    /// the token that expired meanwhile). A failure is logged, and the
    /// request goes out with what there is: the server's refusal then says
    /// what is wrong.
    pub(super) async fn prepare_authorization(&self) {
        authorize::prepare(self.auth.as_ref(), &self.url).await;
    }

    /// The `Authorization` to send now, from the provider; `None`
    /// without a provider or a credential.
    pub(super) fn authorization(&self) -> Option<Secret> {
        authorize::current(self.auth.as_ref(), &self.url)
    }

    /// A request the transport makes on its own (resumption, `DELETE`): in
    /// the current session, with the negotiated revision.
    pub(super) fn session_request(&self, method: Method) -> Result<Request, TransportError> {
        let session = self.session().id.clone();
        self.request(method, session, self.protocol_version.get().copied())
    }

    /// Hands a received item to the client, waiting for room (backpressure
    /// on the stream or answer it came from). `false` once nobody receives.
    pub(super) async fn deliver(&self, item: Inbound) -> bool {
        // Room at once is the usual case: no wait, and the waiting future
        // (a few hundred bytes at every place a stream delivers) is boxed.
        match self.inbound.try_send(Ok(item)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(item)) => {
                Box::pin(self.inbound.send(item)).await.is_ok()
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Runs `future` unless the transport closes first.
    pub(super) async fn unless_closed<T>(
        &self,
        future: impl Future<Output = T>,
    ) -> Result<T, TransportError> {
        let closing = self.closing.notified();
        tokio::pin!(closing);
        closing.as_mut().enable();
        self.check_open()?;
        tokio::select! {
            biased;
            value = future => Ok(value),
            () = closing => Err(TransportError::Closed),
        }
    }
}

/// The standalone stream's state in [`Shared`].
#[derive(Debug, Default)]
pub(super) struct Standalone {
    /// The task that keeps the stream open, once opened.
    pub(super) task: Option<AbortHandle>,
    /// Set when that task gave up after failed openings.
    pub(super) gave_up: Option<GaveUp>,
    /// How many times a request was authorized anew: a task about to give
    /// up that sees this change tries again at once instead.
    pub(super) authorizations: u64,
}

/// A standalone stream that gave up, and where it had got to.
#[derive(Debug)]
pub(super) struct GaveUp {
    /// The id of the last event it received, to resume from.
    pub(super) last_event_id: Option<String>,
}

/// `message`, a response without an id that came as the answer to request
/// `id`, with `id` as its id: the client routes responses by id alone, and
/// guesses the request of an id-less one only when it is the sole one in
/// flight.
pub(super) fn addressed_to(message: &Bytes, id: RequestId) -> Bytes {
    let Ok(mut object) =
        serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(message)
    else {
        return message.clone();
    };
    object.insert("id".to_owned(), id.into());
    serde_json::to_vec(&object).map_or_else(|_| message.clone(), Bytes::from)
}
