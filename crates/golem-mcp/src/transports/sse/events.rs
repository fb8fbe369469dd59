//! The reader: the rest of the event stream, on a task of its own, each
//! `message` event delivered as one message. Every message of the server
//! comes this way (answers, its requests, notifications), so the stream's
//! end is the connection's: it is reported once, as a fatal error.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::transports::http::client::Response;
use bytes::Bytes;
use golem_sse::SseParser;
use tokio::task::AbortHandle;

use super::open::{Opened, stream_error};
use super::shared::{InboundSender, LinkState};
use crate::transports::http::status::body_error;
use crate::wire::transport::Inbound;
use crate::wire::transport_error::TransportError;

/// Starts reading the stream `opened` carries, delivering to `inbound`.
pub(super) fn spawn(shared: Arc<LinkState>, opened: Opened, inbound: InboundSender) -> AbortHandle {
    let Opened {
        response, parser, ..
    } = opened;
    tokio::spawn(read(shared, response, parser, inbound)).abort_handle()
}

async fn read(
    shared: Arc<LinkState>,
    mut response: Response,
    mut parser: SseParser,
    inbound: InboundSender,
) {
    let error = loop {
        // Whatever the last chunk completed, before reading on (the first
        // time: what came after the endpoint event).
        if !deliver(&mut parser, &inbound).await {
            return; // nobody receives
        }
        match response.chunk().await {
            Ok(Some(chunk)) => {
                if let Err(error) = parser.feed(&chunk) {
                    // The events completed before the bad one still count.
                    if !deliver(&mut parser, &inbound).await {
                        return;
                    }
                    // The stream cannot be resumed (the transport of
                    // 2024-11-05 has no event ids), nor the rest of the
                    // event skipped: the connection ends, as stdio's does.
                    tracing::warn!(%error, "mcp: the server's event stream cannot be read on; closing the connection");
                    break stream_error(error);
                }
            }
            Ok(None) => {
                break TransportError::StreamEnded {
                    detail: "the server ended its event stream (HTTP+SSE): the connection is gone"
                        .to_owned(),
                };
            }
            Err(error) => break body_error("read the event stream", error),
        }
    };
    shared.ended.store(true, Ordering::Release);
    let _ = inbound.send(Err(error)).await;
}

/// Delivers every complete `message` event; `false` once nobody receives.
async fn deliver(parser: &mut SseParser, inbound: &InboundSender) -> bool {
    while let Some(event) = parser.next_event() {
        match event.event.as_deref() {
            None | Some("message") if !event.data.is_empty() => {
                let message = Bytes::from(event.data.into_bytes());
                if inbound.send(Ok(Inbound::Message(message))).await.is_err() {
                    return false;
                }
            }
            Some("endpoint") => {
                // The first one decided where messages go; a server that
                // names another later does not move them.
                tracing::debug!("mcp: ignored a second endpoint event");
            }
            _ => {} // an empty message, or an event type MCP does not use
        }
    }
    true
}
