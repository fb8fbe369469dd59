//! Request bookkeeping: request ids, the reply being awaited, abandoned
//! requests, and everything the server sends meanwhile.
//!
//! This is the one module that knows requests are serialized. It runs on the
//! caller's task: no background task, no channel hop, so a request costs one
//! write and the reads of its answer. Allowing several requests in flight
//! changes this module (a demultiplexer in place of [`Connection::await_reply`])
//! and nothing else.

use std::fmt;
use std::future::Future;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use tokio::sync::watch;

use crate::error::Error;
use crate::jsonrpc::{self, Incoming, Outcome, ProtocolError, RequestId};
use crate::protocol::CancelledParams;
use crate::transport::DynTransport;

/// A notification the server sent while a request was waiting, as handed to
/// an observer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Notification<'a> {
    pub(crate) method: &'a str,
    pub(crate) params: Option<&'a RawValue>,
}

/// Receives the notifications that arrive while a request waits.
pub(crate) type NotificationObserver<'o> = &'o mut (dyn FnMut(Notification<'_>) + Send);

/// One connection to a server, driven by one operation at a time.
pub(crate) struct Connection {
    transport: Box<dyn DynTransport>,
    next_id: RequestId,
    /// A request that was sent (or is being sent) and whose answer has not
    /// been read. If an operation starts while this is set, the previous
    /// caller dropped its future: the server is told with
    /// `notifications/cancelled` and the late answer is dropped on arrival.
    unanswered: Option<RequestId>,
    /// Reused for every outgoing message.
    out: Vec<u8>,
    /// Becomes `true` when the client starts closing: waits on the server
    /// give way at once.
    closing: watch::Receiver<bool>,
}

/// How long `close` spends announcing an abandoned request: the server is
/// about to go away, and a server that stopped reading must not hold up the
/// close.
const ANNOUNCE_ON_CLOSE: Duration = Duration::from_millis(500);

/// Runs `future` unless the client starts closing first (`None` then).
///
/// The future is polled first: an operation whose I/O is ready never pays
/// for watching the flag (this is the per-call hot path).
async fn unless_closing<T>(
    closing: &mut watch::Receiver<bool>,
    future: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        biased;
        value = future => Some(value),
        _ = closing.wait_for(|closing| *closing) => None,
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("next_id", &self.next_id)
            .field("unanswered", &self.unanswered)
            .finish_non_exhaustive()
    }
}

impl Connection {
    pub(crate) fn new(transport: Box<dyn DynTransport>, closing: watch::Receiver<bool>) -> Self {
        Connection {
            transport,
            next_id: 1,
            unanswered: None,
            out: Vec::with_capacity(1024),
            closing,
        }
    }

    /// Sends a request and returns its deserialized result.
    ///
    /// Cancel safe: if the future is dropped, the request is remembered as
    /// abandoned and the next operation announces it (see
    /// [`announce_abandoned`](Self::announce_abandoned)).
    pub(crate) async fn request<R: DeserializeOwned>(
        &mut self,
        operation: &(dyn fmt::Display + Sync),
        method: &str,
        params: &impl Serialize,
        observer: Option<NotificationObserver<'_>>,
    ) -> Result<R, Error> {
        if let Err(error) = self.announce_abandoned(operation).await {
            // Best effort: if the transport is broken, the request below
            // reports it.
            tracing::debug!(%error, "mcp: could not announce an abandoned request");
        }
        let id = self.allocate_id();
        // Marked before sending: once the send has started, the message
        // reaches the server even if this future is dropped.
        self.unanswered = Some(id);
        if let Err(error) = self.send_request(operation, id, method, params).await {
            self.unanswered = None;
            return Err(error);
        }
        let result = self.await_reply(operation, id, observer).await;
        self.unanswered = None;
        result
    }

    /// The id for the next request.
    pub(crate) fn allocate_id(&mut self) -> RequestId {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Sends request `id`, whose answer the caller awaits with
    /// [`await_reply`](Self::await_reply). Used directly, without
    /// [`request`](Self::request)'s bookkeeping, for the handshake:
    /// `initialize` is never announced as cancelled.
    pub(crate) async fn send_request(
        &mut self,
        operation: &(dyn fmt::Display + Sync),
        id: RequestId,
        method: &str,
        params: &impl Serialize,
    ) -> Result<(), Error> {
        self.out.clear();
        jsonrpc::encode_request(&mut self.out, id, method, params)
            .map_err(|error| Error::encode(&operation.to_string(), error))?;
        self.send_out(operation).await
    }

    /// Sends the message encoded in `out`, unless the client starts closing.
    async fn send_out(&mut self, operation: &(dyn fmt::Display + Sync)) -> Result<(), Error> {
        match unless_closing(&mut self.closing, self.transport.send(&self.out)).await {
            Some(sent) => sent.map_err(|source| Error::transport(&operation.to_string(), source)),
            None => Err(Error::Closed {
                operation: operation.to_string(),
            }),
        }
    }

    /// Sends a notification.
    pub(crate) async fn notify(
        &mut self,
        operation: &(dyn fmt::Display + Sync),
        method: &str,
        params: Option<&impl Serialize>,
    ) -> Result<(), Error> {
        self.out.clear();
        jsonrpc::encode_notification(&mut self.out, method, params)
            .map_err(|error| Error::encode(&operation.to_string(), error))?;
        self.send_out(operation).await
    }

    /// Tells the server about a request whose caller went away, if any.
    pub(crate) async fn announce_abandoned(
        &mut self,
        operation: &(dyn fmt::Display + Sync),
    ) -> Result<(), Error> {
        let Some(request_id) = self.unanswered.take() else {
            return Ok(());
        };
        tracing::debug!(request_id, "mcp: announcing an abandoned request");
        let params = CancelledParams::abandoned(request_id);
        self.notify(operation, "notifications/cancelled", Some(&params))
            .await
    }

    /// Reads messages until the answer to `id` arrives, meanwhile answering
    /// the server's pings, refusing its other requests with "method not
    /// found", passing notifications to `observer` (or dropping them), and
    /// dropping answers to other requests.
    ///
    /// Cancel safe: all state is in the transport's buffers and in `self`.
    pub(crate) async fn await_reply<R: DeserializeOwned>(
        &mut self,
        operation: &(dyn fmt::Display + Sync),
        id: RequestId,
        mut observer: Option<NotificationObserver<'_>>,
    ) -> Result<R, Error> {
        loop {
            let Some(read) = unless_closing(&mut self.closing, self.transport.read()).await else {
                return Err(Error::Closed {
                    operation: operation.to_string(),
                });
            };
            let message =
                read.map_err(|source| Error::transport(&operation.to_string(), source))?;
            let incoming = match Incoming::<R>::parse(message) {
                Ok(incoming) => incoming,
                Err(problem) => {
                    let shown =
                        String::from_utf8_lossy(&message[..message.len().min(200)]).into_owned();
                    tracing::warn!(%problem, message = %shown, "mcp: dropped a malformed message");
                    continue;
                }
            };
            match incoming {
                Incoming::Response {
                    raw_id: Some(raw_id),
                    ..
                } if !jsonrpc::id_matches(raw_id, id) => {
                    tracing::debug!(
                        raw_id,
                        awaited = id,
                        "mcp: dropped an answer to another request"
                    );
                }
                Incoming::Response { raw_id, outcome } => {
                    if raw_id.is_none() {
                        // The server could not read the id of something we
                        // sent; with one request in flight, it is this one.
                        tracing::debug!(awaited = id, "mcp: error answer without an id");
                    }
                    return match outcome {
                        Outcome::Result(result) => Ok(result),
                        Outcome::Error(source) => Err(Error::Protocol {
                            operation: operation.to_string(),
                            source,
                        }),
                        Outcome::Undecodable(error) => {
                            Err(Error::invalid_response(&operation.to_string(), error))
                        }
                    };
                }
                Incoming::Notification { method, params } => {
                    if let Some(observer) = observer.as_deref_mut() {
                        observer(Notification {
                            method: &method,
                            params,
                        });
                    }
                }
                Incoming::Request { raw_id, method } => {
                    self.out.clear();
                    if method == "ping" {
                        jsonrpc::encode_reply(&mut self.out, raw_id, Ok("{}"));
                    } else {
                        tracing::debug!(%method, "mcp: refused a server request");
                        let refusal = ProtocolError {
                            code: ProtocolError::METHOD_NOT_FOUND,
                            message: format!(
                                "Method not found: this client does not offer {method:?}"
                            ),
                            data: None,
                        };
                        jsonrpc::encode_reply(&mut self.out, raw_id, Err(&refusal));
                    }
                    self.send_out(operation).await?;
                }
            }
        }
    }

    /// Tells the transport the negotiated protocol version.
    pub(crate) fn protocol_version_negotiated(&mut self, version: &str) {
        self.transport.protocol_version_negotiated(version);
    }

    /// Closes the transport.
    pub(crate) async fn close(
        &mut self,
        operation: &(dyn fmt::Display + Sync),
    ) -> Result<(), Error> {
        if let Some(request_id) = self.unanswered.take() {
            // Best effort and bounded: the server is about to go away.
            self.out.clear();
            let params = CancelledParams::abandoned(request_id);
            if jsonrpc::encode_notification(&mut self.out, "notifications/cancelled", Some(&params))
                .is_ok()
            {
                let _ =
                    tokio::time::timeout(ANNOUNCE_ON_CLOSE, self.transport.send(&self.out)).await;
            }
        }
        self.transport
            .close()
            .await
            .map_err(|source| Error::transport(&operation.to_string(), source))
    }
}
