//! An in-memory transport, for tests and examples: the other end is a
//! [`MemoryPeer`] that a test scripts by hand.

use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use tokio::sync::{Mutex, Notify, mpsc};

use crate::wire::transport::{Inbound, Outgoing, Transport};
use crate::wire::transport_error::TransportError;

/// The client's end of an in-memory connection. Made by [`memory_pair`].
///
/// Unbounded in both directions: it is for tests and examples, where the
/// peer is a script.
#[derive(Debug)]
pub struct MemoryTransport {
    to_peer: mpsc::UnboundedSender<Vec<u8>>,
    from_peer: Mutex<mpsc::UnboundedReceiver<Vec<u8>>>,
    closed: AtomicBool,
    /// Wakes a pending `recv` when the transport is closed.
    closing: Notify,
}

/// The server's end of an in-memory connection: a test reads what the
/// client sent and writes what the server answers.
#[derive(Debug)]
pub struct MemoryPeer {
    to_client: mpsc::UnboundedSender<Vec<u8>>,
    from_client: mpsc::UnboundedReceiver<Vec<u8>>,
}

/// A connected transport and peer. Dropping the peer ends the connection:
/// the client's next read fails with [`TransportError::ConnectionClosed`].
pub fn memory_pair() -> (MemoryTransport, MemoryPeer) {
    let (to_peer, from_client) = mpsc::unbounded_channel();
    let (to_client, from_peer) = mpsc::unbounded_channel();
    (
        MemoryTransport {
            to_peer,
            from_peer: Mutex::new(from_peer),
            closed: AtomicBool::new(false),
            closing: Notify::new(),
        },
        MemoryPeer {
            to_client,
            from_client,
        },
    )
}

impl MemoryTransport {
    fn check_open(&self) -> Result<(), TransportError> {
        match self.closed.load(Ordering::Acquire) {
            true => Err(TransportError::Closed),
            false => Ok(()),
        }
    }
}

impl Transport for MemoryTransport {
    /// Cancel safe: an unbounded channel send completes without waiting.
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        self.check_open()?;
        self.to_peer
            .send(message.body().to_vec())
            .map_err(|_| TransportError::ConnectionClosed)
    }

    /// Cancel safe: a channel receive loses nothing when dropped.
    async fn recv(&self) -> Result<Inbound, TransportError> {
        let closing = self.closing.notified();
        self.check_open()?;
        let mut from_peer = self.from_peer.lock().await;
        tokio::select! {
            received = from_peer.recv() => match received {
                Some(message) => Ok(Inbound::Message(Bytes::from(message))),
                None => Err(TransportError::ConnectionClosed),
            },
            () = closing => Err(TransportError::Closed),
        }
    }

    async fn close(&self) -> Result<(), TransportError> {
        self.closed.store(true, Ordering::Release);
        self.closing.notify_waiters();
        Ok(())
    }
}

impl MemoryPeer {
    /// The next message the client sent, parsed; `None` once the client's
    /// transport is gone.
    pub async fn recv(&mut self) -> Option<serde_json::Value> {
        let bytes = self.from_client.recv().await?;
        // A client always sends valid JSON; a test wants to see it if not.
        Some(serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(&bytes).into_owned())
        }))
    }

    /// The next message the client sent, as the exact bytes.
    pub async fn recv_raw(&mut self) -> Option<Vec<u8>> {
        self.from_client.recv().await
    }

    /// Sends a message to the client. Returns `false` once the client's
    /// transport is gone.
    pub fn send(&self, message: &serde_json::Value) -> bool {
        self.send_raw(message.to_string().into_bytes())
    }

    /// Sends bytes to the client as one message, verbatim.
    pub fn send_raw(&self, message: impl Into<Vec<u8>>) -> bool {
        self.to_client.send(message.into()).is_ok()
    }
}
