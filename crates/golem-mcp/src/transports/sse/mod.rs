//! The HTTP+SSE transport of protocol 2024-11-05: deprecated since
//! 2025-03-26, still served by many hosted servers and by every Python
//! `mcp` 1.x server run with `transport="sse"`.
//!
//! The client opens an event stream with `GET`; its first event,
//! `endpoint`, names the URL to `POST` messages to; every message of the
//! server (answers, its requests, notifications) is a `message` event on
//! that one stream. `open.rs` opens the stream (authorization, the bound
//! on the `endpoint` event, its origin); `events.rs` reads the rest;
//! `post.rs` sends; `link.rs` is one connection, the state they share,
//! which this module's [`SseTransport`] drives and so does the streamable
//! transport when it falls back to this one. The HTTP plumbing (the
//! checked configuration and default client, the status errors, which
//! refusals authorization answers) is the streamable transport's:
//! nothing here is imported back by it but [`Link`].

mod events;
mod link;
mod open;
mod post;
mod shared;

use std::fmt;

use tokio::sync::{Mutex, mpsc};

use crate::error::Error;
use crate::transports::http::config::HttpConfig;
use crate::transports::http::headers::{peer_of, redact};
use crate::wire::transport::{Inbound, Outgoing, Peer, Transport};
use crate::wire::transport_error::TransportError;
pub(crate) use link::Link;
pub(crate) use open::OpenError;
pub(crate) use shared::LinkSettings;

/// How many received messages may wait for the client before the stream
/// stops being read.
const INBOUND_QUEUE: usize = 64;

/// An MCP server reached over the HTTP+SSE transport of protocol
/// 2024-11-05 (deprecated, but still served widely).
///
/// [`HttpConfig::url`] is the server's event stream (often `…/sse`). The
/// first send opens it with `GET` (`Accept: text/event-stream`) and waits
/// up to [`HttpConfig::sse_endpoint_timeout`] for its `endpoint` event,
/// which names where to post messages: relative or absolute, it must be on
/// the stream's origin, or the connection is refused with an error naming
/// it. Every message is then one `POST` of its JSON there, concurrently,
/// and every message of the server arrives on the stream, in order.
///
/// The configuration's headers go on the `GET` and every `POST`, and so
/// does the auth provider's `Authorization`; a `401` (or a `403` asking for
/// more scope) to either is authorized and sent again, at most twice, as
/// on the streamable transport. An event larger than
/// [`HttpConfig::max_message_bytes`] ends the connection
/// ([`TransportError::MessageTooLarge`]): this stream cannot be resumed
/// (no event ids) nor the rest of the event skipped. The stream's end is
/// fatal too ([`recv`](Transport::recv) fails, as stdio's does at the
/// server's exit). [`close`](Transport::close) drops the stream, which
/// ends the server's session: the transport has no `DELETE`.
///
/// The transport carries the initialize era only
/// ([`legacy_only`](Transport::legacy_only)): the client sends `initialize`
/// at once, without the `server/discover` probe. The streamable transport
/// ([`HttpTransport`](crate::HttpTransport)) falls back to this one by
/// itself when its `initialize` is refused the way the specification
/// describes; this type is for servers known to speak it.
///
/// ```no_run
/// use golem_mcp::{Client, HttpConfig, SseTransport};
///
/// # async fn run() -> Result<(), golem_mcp::Error> {
/// let client = Client::new(SseTransport::new(HttpConfig::new("http://127.0.0.1:8000/sse"))?);
/// client.initialize().await?;
/// println!("{} tools", client.list_tools().await?.len());
/// client.close().await?;
/// # Ok(())
/// # }
/// ```
pub struct SseTransport {
    link: Link,
    url: String,
    peer: Peer,
    inbound: Mutex<mpsc::Receiver<Result<Inbound, TransportError>>>,
}

impl fmt::Debug for SseTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SseTransport")
            .field("url", &self.url)
            .field("open", &self.link.is_open())
            .finish_non_exhaustive()
    }
}

impl SseTransport {
    /// Checks the configuration and prepares the transport; nothing is sent
    /// until the first message.
    ///
    /// Fails with [`Error::InvalidConfig`] naming the field, as
    /// [`HttpTransport::new`](crate::HttpTransport::new) does.
    pub fn new(config: HttpConfig) -> Result<Self, Error> {
        let endpoint = config.endpoint()?;
        let (sender, receiver) = mpsc::channel(INBOUND_QUEUE);
        let url = redact(&endpoint.url);
        let peer = peer_of(&endpoint.url);
        let settings = LinkSettings {
            url: endpoint.url,
            client: endpoint.client,
            headers: endpoint.headers,
            auth: config.auth.clone(),
            max_message_bytes: config.max_message_bytes,
            endpoint_timeout: config.sse_endpoint_timeout,
        };
        Ok(SseTransport {
            link: Link::new(settings, sender),
            url,
            peer,
            inbound: Mutex::new(receiver),
        })
    }
}

impl Transport for SseTransport {
    /// Opens the stream if it is not open yet, then `POST`s the message.
    /// Cancel safe: a dropped send abandons its `POST` (or the opening,
    /// which the next send starts again).
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        self.link.send(message).await
    }

    /// The next message of the stream. After the stream's end (reported
    /// once, as the error that ended it) it fails at once.
    ///
    /// Cancel safe: messages wait in a queue until taken.
    async fn recv(&self) -> Result<Inbound, TransportError> {
        let mut inbound = self.inbound.lock().await;
        match self.link.unless_closed(inbound.recv()).await? {
            Some(item) => item,
            None => Err(TransportError::StreamEnded {
                detail: "the server's event stream (HTTP+SSE) has ended: the connection is gone"
                    .to_owned(),
            }),
        }
    }

    /// Drops the stream and lets go of the HTTP client; pending sends and
    /// receives give way. Nothing is sent: the server ends the session when
    /// the stream goes.
    async fn close(&self) -> Result<(), TransportError> {
        self.link.close();
        Ok(())
    }

    /// Yes: no server of the modern era serves this transport.
    fn legacy_only(&self) -> bool {
        true
    }

    fn peer(&self) -> Peer {
        self.peer.clone()
    }
}
