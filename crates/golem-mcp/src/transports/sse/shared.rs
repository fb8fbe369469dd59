//! `LinkState`: what an HTTP+SSE connection's sends, reader and close share
//! (the client, the endpoint once named, the reader, whether the stream
//! ended), and the requests they all make (the configured headers, the
//! provider's `Authorization`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex as StdMutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use reqwest::header::HeaderMap;
use reqwest::{Method, Url};
use tokio::sync::{Mutex, Notify, mpsc};
use tokio::task::AbortHandle;

use crate::transports::http::authorize;
use crate::transports::http::client::{HttpClient, Request};
use crate::wire::transport::Inbound;
use crate::wire::transport_error::TransportError;
use golem_mcp_auth::{AuthProvider, Secret};

/// Where a link's received messages go, and, once, the error that ended it.
pub(crate) type InboundSender = mpsc::Sender<Result<Inbound, TransportError>>;

/// What a link needs to know, checked already (`HttpConfig::endpoint`).
pub(crate) struct LinkSettings {
    /// The event stream's URL: the server as the configuration names it.
    pub(crate) url: Url,
    pub(in crate::transports) client: HttpClient,
    /// The extra headers, sent on the `GET` and every `POST`.
    pub(crate) headers: HeaderMap,
    pub(crate) auth: Option<Arc<dyn AuthProvider>>,
    pub(crate) max_message_bytes: usize,
    /// How long each `GET` may take to bring the `endpoint` event.
    pub(crate) endpoint_timeout: Duration,
}

/// What a link's parts share.
pub(super) struct LinkState {
    pub(super) url: Url,
    /// Taken by `close`: the pool's connections go with the last handle.
    pub(super) client: StdMutex<Option<HttpClient>>,
    pub(super) headers: HeaderMap,
    pub(super) auth: Option<Arc<dyn AuthProvider>>,
    pub(super) max_message_bytes: usize,
    pub(super) endpoint_timeout: Duration,
    /// Until the reader starts, which takes it: once the reader is gone,
    /// nobody sends, and a receiver that only this link feeds hears the
    /// end.
    pub(super) inbound: StdMutex<Option<InboundSender>>,
    /// Where messages are posted, once the `endpoint` event named it.
    pub(super) endpoint: OnceLock<Url>,
    /// Held while the stream is being opened: concurrent sends open it
    /// once.
    pub(super) opening: Mutex<()>,
    pub(super) reader: StdMutex<Option<AbortHandle>>,
    /// Set when the stream ended: the connection is gone for good.
    pub(super) ended: AtomicBool,
    pub(super) closed: AtomicBool,
    pub(super) closing: Notify,
}

/// Locks a mutex that no code path can leave inconsistent.
pub(super) fn lock<T>(mutex: &StdMutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LinkState {
    /// The state of a link not opened yet.
    pub(super) fn new(settings: LinkSettings, inbound: InboundSender) -> Self {
        LinkState {
            url: settings.url,
            client: StdMutex::new(Some(settings.client)),
            headers: settings.headers,
            auth: settings.auth,
            max_message_bytes: settings.max_message_bytes,
            endpoint_timeout: settings.endpoint_timeout,
            inbound: StdMutex::new(Some(inbound)),
            endpoint: OnceLock::new(),
            opening: Mutex::new(()),
            reader: StdMutex::new(None),
            ended: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            closing: Notify::new(),
        }
    }

    /// Fails once the link is closed or its stream has ended.
    pub(super) fn check_usable(&self) -> Result<(), TransportError> {
        if self.closed.load(Ordering::Acquire) {
            return Err(TransportError::Closed);
        }
        if self.ended.load(Ordering::Acquire) {
            return Err(TransportError::StreamEnded {
                detail: "the server's event stream (HTTP+SSE) has ended: the connection is gone"
                    .to_owned(),
            });
        }
        Ok(())
    }

    /// A request to `url` with the extra headers and `authorization`.
    pub(super) fn request(
        &self,
        method: Method,
        url: &Url,
        authorization: Option<&Secret>,
    ) -> Result<Request, TransportError> {
        let client = lock(&self.client).clone().ok_or(TransportError::Closed)?;
        let request = client.request(method, url, self.headers.clone());
        Ok(authorize::with_authorization(request, authorization))
    }

    /// Lets the auth provider renew a credential about to expire before a
    /// request goes out (`authorize::prepare`).
    pub(super) async fn prepare_authorization(&self) {
        authorize::prepare(self.auth.as_ref(), &self.url).await;
    }

    /// The `Authorization` to send now; `None` without a provider or a
    /// credential. The provider knows the server by its event stream's
    /// URL, which is what the configuration names.
    pub(super) fn authorization(&self) -> Option<Secret> {
        authorize::current(self.auth.as_ref(), &self.url)
    }

    pub(super) async fn unless_closed<T>(
        &self,
        future: impl Future<Output = T>,
    ) -> Result<T, TransportError> {
        let closing = self.closing.notified();
        tokio::pin!(closing);
        closing.as_mut().enable();
        if self.closed.load(Ordering::Acquire) {
            return Err(TransportError::Closed);
        }
        tokio::select! {
            biased;
            value = future => Ok(value),
            () = closing => Err(TransportError::Closed),
        }
    }
}
