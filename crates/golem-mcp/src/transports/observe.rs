//! Watching the wire: every message a client sends and receives, handed to
//! an observer as it passes, for traces, logs and debugging.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;

use crate::wire::transport::{Inbound, Outgoing, Peer, RequestId, Transport};
use crate::wire::transport_error::TransportError;

/// One thing an [`Observed`] transport saw.
#[derive(Debug)]
#[non_exhaustive]
pub enum WireEvent<'a> {
    /// A message on its way to the server (seen before it is sent).
    Sent(&'a Outgoing),
    /// A message from the server, as received (one JSON text).
    Received(&'a [u8]),
    /// The transport lost the answer to request `id` (HTTP: its POST or
    /// its event stream failed); the request fails with `error`.
    Lost {
        /// The request whose answer was lost.
        id: RequestId,
        /// Why.
        error: &'a TransportError,
    },
}

/// A transport that shows `observer` every message it carries, then passes
/// it on unchanged: wrap any transport before giving it to the client.
///
/// The observer runs on the sending or receiving task, in the order of the
/// wire on each direction (an answer that came with its request's send,
/// HTTP's JSON answer, is shown by the sending task when the send returns
/// it); keep it quick (format and write a line, count,
/// push to a bounded channel). Every message of the session passes through
/// it, the handshake and the client's own answers to the server included.
/// [`Observed::tracing`] gives an observer that emits `tracing` events.
///
/// Wrapping cannot lose anything the client tells the transport: the
/// negotiated protocol revision travels inside each [`Outgoing`].
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use golem_mcp::memory::MemoryTransport;
/// use golem_mcp::{Client, Observed, WireEvent};
///
/// # fn run(transport: MemoryTransport) {
/// let log = Arc::new(Mutex::new(Vec::new()));
/// let seen = Arc::clone(&log);
/// let client = Client::new(Observed::new(transport, move |event: WireEvent<'_>| {
///     let line = match event {
///         WireEvent::Sent(message) => format!("→ {}", String::from_utf8_lossy(message.body())),
///         WireEvent::Received(message) => format!("← {}", String::from_utf8_lossy(message)),
///         other => format!("{other:?}"),
///     };
///     seen.lock().unwrap().push(line);
/// }));
/// # }
/// ```
pub struct Observed<T, F> {
    inner: T,
    /// Shared with the transport [`reopen`](Transport::reopen) makes.
    observer: Arc<F>,
}

impl<T: fmt::Debug, F> fmt::Debug for Observed<T, F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Observed")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<T, F> Observed<T, F>
where
    F: Fn(WireEvent<'_>) + Send + Sync + 'static,
{
    /// Shows `observer` every message `inner` carries.
    pub fn new(inner: T, observer: F) -> Self {
        Observed {
            inner,
            observer: Arc::new(observer),
        }
    }
}

impl<T> Observed<T, fn(WireEvent<'_>)> {
    /// Emits a `tracing` event at `TRACE` level, target `golem_mcp::wire`,
    /// for each message: `direction` (`sent`, `received`, `lost`), `bytes`,
    /// and the message itself (up to 4 KiB of it). Messages carry tool
    /// arguments and results, so enable the target only where those may be
    /// logged.
    pub fn tracing(inner: T) -> Self {
        Observed {
            inner,
            observer: Arc::new(trace_event),
        }
    }
}

fn trace_event(event: WireEvent<'_>) {
    match event {
        WireEvent::Sent(message) => tracing::trace!(
            target: "golem_mcp::wire",
            direction = "sent",
            bytes = message.body().len(),
            message = %excerpt(message.body(), TRACED_BYTES),
        ),
        WireEvent::Received(message) => tracing::trace!(
            target: "golem_mcp::wire",
            direction = "received",
            bytes = message.len(),
            message = %excerpt(message, TRACED_BYTES),
        ),
        WireEvent::Lost { id, error } => tracing::trace!(
            target: "golem_mcp::wire",
            direction = "lost",
            id,
            %error,
        ),
    }
}

/// How much of a message [`Observed::tracing`] shows.
const TRACED_BYTES: usize = 4096;

/// `message` as text, cut after `limit` bytes (at a character boundary)
/// with the full length noted.
pub(crate) fn excerpt(message: &[u8], limit: usize) -> String {
    let text = String::from_utf8_lossy(message);
    if text.len() <= limit {
        return text.into_owned();
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], message.len())
}

impl<T, F> Transport for Observed<T, F>
where
    T: Transport,
    F: Fn(WireEvent<'_>) + Send + Sync + 'static,
{
    fn send(&self, message: Outgoing) -> impl Future<Output = Result<(), TransportError>> + Send {
        (self.observer)(WireEvent::Sent(&message));
        self.inner.send(message)
    }

    /// Forwarded, so that the inner transport's direct answers stay
    /// direct; such an answer is shown as received when the send returns it.
    async fn send_request(&self, message: Outgoing) -> Result<Option<Bytes>, TransportError> {
        (self.observer)(WireEvent::Sent(&message));
        let answer = self.inner.send_request(message).await?;
        if let Some(answer) = &answer {
            (self.observer)(WireEvent::Received(answer));
        }
        Ok(answer)
    }

    async fn recv(&self) -> Result<Inbound, TransportError> {
        let received = self.inner.recv().await?;
        match &received {
            Inbound::Message(message) => (self.observer)(WireEvent::Received(message)),
            Inbound::RequestFailed { id, error } => {
                (self.observer)(WireEvent::Lost { id: *id, error })
            }
            Inbound::SessionRenewed => {}
        }
        Ok(received)
    }

    fn close(&self) -> impl Future<Output = Result<(), TransportError>> + Send {
        self.inner.close()
    }

    fn mirrors_headers(&self) -> bool {
        self.inner.mirrors_headers()
    }

    fn returns_answers(&self) -> bool {
        self.inner.returns_answers()
    }

    fn legacy_only(&self) -> bool {
        self.inner.legacy_only()
    }

    fn peer(&self) -> Peer {
        self.inner.peer()
    }

    fn session_id(&self) -> Option<String> {
        self.inner.session_id()
    }

    fn renews_sessions(&self) -> bool {
        self.inner.renews_sessions()
    }

    fn reopen(&self) -> Option<Result<Self, TransportError>> {
        let reopened = self.inner.reopen()?;
        Some(reopened.map(|inner| Observed {
            inner,
            observer: self.observer.clone(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_messages_are_cut_at_a_character_boundary() {
        assert_eq!(excerpt(b"{\"id\":1}", 10), "{\"id\":1}");
        let long = "é".repeat(10);
        let cut = excerpt(long.as_bytes(), 5);
        assert_eq!(cut, "éé… (20 bytes in all)");
    }
}
