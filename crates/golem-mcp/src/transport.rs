//! The boundary between the client and the wire.

use std::future::Future;
use std::pin::Pin;

use crate::error::TransportError;

/// A bidirectional channel carrying JSON-RPC messages to and from one MCP
/// server: send one message, read one message, close.
///
/// The [`Client`](crate::Client) drives a transport strictly one operation at
/// a time (it holds `&mut self`), so implementations need no locking.
///
/// # Contract
///
/// - [`send`](Transport::send) delivers exactly one JSON-RPC message: the
///   bytes given, which are one complete JSON text without a trailing
///   newline. Framing (newline, HTTP POST) is the transport's business.
/// - [`read`](Transport::read) returns exactly one incoming message, in the
///   order the server sent them. The slice borrows from the transport and is
///   valid until the next call. A transport may skip input that is clearly
///   not a message (a stdio server's stray log line), but must never split
///   or merge messages.
/// - Both must be **cancel safe**: the client's callers drop futures at any
///   await point (timeouts, `select!`). If `send` is dropped after it was
///   first polled, the message must still be delivered whole before the next
///   message is (or the transport must fail). If `read` is dropped, no byte of
///   input may be lost: a half-read message is completed by the next `read`.
/// - After a fatal error (the peer is gone), every later call should fail
///   promptly, preferably with the same cause.
/// - [`close`](Transport::close) releases the connection (for a process:
///   ends it). It is called at most once by the client; dropping a transport
///   without closing it must still release everything, without blocking.
pub trait Transport: Send + 'static {
    /// Sends one message. See the trait's contract for cancel-safety.
    fn send(&mut self, message: &[u8]) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Reads the next message. See the trait's contract for cancel-safety.
    fn read(&mut self) -> impl Future<Output = Result<&[u8], TransportError>> + Send;

    /// Closes the connection and releases its resources.
    fn close(&mut self) -> impl Future<Output = Result<(), TransportError>> + Send;

    /// Tells the transport which protocol version the handshake settled on,
    /// for transports that must announce it (HTTP sends it as a header on
    /// every later request). Called by the client once, right after a
    /// successful `initialize`. The default does nothing.
    fn protocol_version_negotiated(&mut self, version: &str) {
        let _ = version;
    }
}

/// A boxed future, as the object-safe form of [`Transport`] returns them.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// [`Transport`] in object-safe form, so that [`Client`](crate::Client) is
/// one type whatever the transport. One small allocation per operation is
/// nothing next to a system call.
pub(crate) trait DynTransport: Send {
    fn send<'a>(&'a mut self, message: &'a [u8]) -> BoxFuture<'a, Result<(), TransportError>>;
    fn read(&mut self) -> BoxFuture<'_, Result<&[u8], TransportError>>;
    fn close(&mut self) -> BoxFuture<'_, Result<(), TransportError>>;
    fn protocol_version_negotiated(&mut self, version: &str);
}

impl<T: Transport> DynTransport for T {
    fn send<'a>(&'a mut self, message: &'a [u8]) -> BoxFuture<'a, Result<(), TransportError>> {
        Box::pin(Transport::send(self, message))
    }

    fn read(&mut self) -> BoxFuture<'_, Result<&[u8], TransportError>> {
        Box::pin(Transport::read(self))
    }

    fn close(&mut self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(Transport::close(self))
    }

    fn protocol_version_negotiated(&mut self, version: &str) {
        Transport::protocol_version_negotiated(self, version);
    }
}
