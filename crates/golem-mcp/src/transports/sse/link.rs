//! `Link`: one HTTP+SSE connection, opened by its first send and driven
//! by its sends and its close; the explicit transport and the streamable
//! transport's fallback both drive one.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::events;
use super::open::{self, OpenError};
use super::post;
use super::shared::{InboundSender, LinkSettings, LinkState, lock};
use crate::wire::transport::Outgoing;
use crate::wire::transport_error::TransportError;

/// One HTTP+SSE connection: opened by the first send (the `GET` and its
/// `endpoint` event), then one `POST` per message while a task reads the
/// stream. Dropping it stops the reader, which ends the server's session.
pub(crate) struct Link {
    shared: Arc<LinkState>,
}

impl Link {
    /// A link that will deliver what the server sends to `inbound`;
    /// nothing is sent until [`open`](Link::open) or the first
    /// [`send`](Link::send).
    pub(crate) fn new(settings: LinkSettings, inbound: InboundSender) -> Self {
        Link {
            shared: Arc::new(LinkState::new(settings, inbound)),
        }
    }

    /// Opens the event stream, unless it is open: the `GET` (authorized
    /// again after a refusal), the `endpoint` event within the bound, its
    /// origin checked; then a task reads the rest. Concurrent callers wait
    /// for one opening. Cancel safe: a dropped opening leaves the link as
    /// it was, and the next call starts again.
    pub(crate) async fn open(&self) -> Result<(), OpenError> {
        let shared = &self.shared;
        if shared.endpoint.get().is_some() {
            return Ok(());
        }
        let _opening = shared.opening.lock().await;
        shared.check_usable().map_err(OpenError::before_stream)?;
        if shared.endpoint.get().is_some() {
            return Ok(()); // opened meanwhile
        }
        let opened = open::open(shared).await?;
        let Some(inbound) = lock(&shared.inbound).take() else {
            return Err(OpenError::before_stream(TransportError::Closed));
        };
        let _ = shared.endpoint.set(opened.endpoint.clone());
        let task = events::spawn(shared.clone(), opened, inbound);
        let mut reader = lock(&shared.reader);
        if shared.closed.load(Ordering::Acquire) {
            task.abort(); // closed while opening
        }
        *reader = Some(task);
        Ok(())
    }

    /// Posts one message to the endpoint, opening the stream first if it
    /// is not open. A `2xx` takes it (its answer comes on the stream); a
    /// refusal is an `HttpStatusError`. Cancel safe: a dropped send
    /// abandons its `POST`, which the server receives whole or not at all.
    pub(crate) async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        let shared = &self.shared;
        shared
            .unless_closed(async {
                self.open().await.map_err(|failure| failure.error)?;
                shared.check_usable()?;
                let Some(endpoint) = shared.endpoint.get() else {
                    return Err(TransportError::Closed); // unreachable: just opened
                };
                post::post(shared, endpoint, &message).await
            })
            .await?
    }

    /// Runs `future` unless the link is closed first.
    pub(crate) async fn unless_closed<T>(
        &self,
        future: impl Future<Output = T>,
    ) -> Result<T, TransportError> {
        self.shared.unless_closed(future).await
    }

    /// Whether the stream is open (its `endpoint` event came).
    pub(crate) fn is_open(&self) -> bool {
        self.shared.endpoint.get().is_some()
    }

    /// Drops the stream (the server ends its session when the connection
    /// goes; the transport of 2024-11-05 has nothing else to say), makes
    /// pending sends give way and lets go of the HTTP client.
    pub(crate) fn close(&self) {
        let shared = &self.shared;
        shared.closed.store(true, Ordering::Release);
        shared.closing.notify_waiters();
        if let Some(reader) = lock(&shared.reader).take() {
            reader.abort();
        }
        drop(lock(&shared.client).take());
        drop(lock(&shared.inbound).take());
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Some(reader) = lock(&self.shared.reader).take() {
            reader.abort();
        }
    }
}
