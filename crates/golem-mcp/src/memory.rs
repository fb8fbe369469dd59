//! An in-memory transport, for tests and examples: the other end is a
//! [`MemoryPeer`] that a test scripts by hand.

use tokio::sync::mpsc;

use crate::error::TransportError;
use crate::transport::Transport;

/// The client's end of an in-memory connection. Made by [`memory_pair`].
#[derive(Debug)]
pub struct MemoryTransport {
    to_peer: mpsc::UnboundedSender<Vec<u8>>,
    from_peer: mpsc::UnboundedReceiver<Vec<u8>>,
    /// The message returned by the last `read`, which the slice borrows.
    current: Vec<u8>,
    closed: bool,
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
            from_peer,
            current: Vec::new(),
            closed: false,
        },
        MemoryPeer {
            to_client,
            from_client,
        },
    )
}

impl Transport for MemoryTransport {
    /// Cancel safe: an unbounded channel send completes without waiting.
    async fn send(&mut self, message: &[u8]) -> Result<(), TransportError> {
        if self.closed {
            return Err(TransportError::Closed);
        }
        self.to_peer
            .send(message.to_vec())
            .map_err(|_| TransportError::ConnectionClosed)
    }

    /// Cancel safe: a channel receive loses nothing when dropped.
    async fn read(&mut self) -> Result<&[u8], TransportError> {
        if self.closed {
            return Err(TransportError::Closed);
        }
        match self.from_peer.recv().await {
            Some(message) => {
                self.current = message;
                Ok(&self.current)
            }
            None => Err(TransportError::ConnectionClosed),
        }
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.closed = true;
        self.from_peer.close();
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
