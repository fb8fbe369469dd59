//! The inbound side: one task per client that reads the server for as long
//! as the client is open.
//!
//! It routes each response to the request waiting for it, answers the
//! server's `ping`, refuses its other requests with "method not found",
//! passes progress reports to their calls and drops other notifications. It
//! also sends what nobody else will: those answers, and the
//! `notifications/cancelled` of requests whose callers went away.
//!
//! It never waits for a send before reading on: sends run beside the reads
//! (at most [`MAX_BACKGROUND_SENDS`] at a time), so a server that only reads
//! once its output is read cannot deadlock against it.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde::de::IgnoredAny;
use tokio::sync::mpsc;

use crate::connection::{Command, Connection, encode_cancellation};
use crate::jsonrpc::{self, Incoming, ProtocolError, Route};
use crate::tools::ProgressParams;
use crate::transport::{Inbound, Outgoing, Transport};

/// How many of the inbound side's own sends may be under way before it
/// stops reading: a server flooding requests while it does not read its
/// input gets backpressure, not unbounded memory.
const MAX_BACKGROUND_SENDS: usize = 64;

/// How much of a dropped message a log line shows.
const SHOWN_BYTES: usize = 200;

/// Runs the inbound side until the transport fails for good. (Closing the
/// client, or dropping its last clone, aborts the task.)
pub(crate) async fn run<T: Transport>(
    transport: Arc<T>,
    connection: Arc<Connection>,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let mut sends = FuturesUnordered::new();
    loop {
        tokio::select! {
            biased;
            Some(command) = commands.recv() => match command {
                Command::Cancel(id) => {
                    sends.push(send(transport.clone(), connection.stamp(encode_cancellation(id))));
                }
            },
            Some(()) = sends.next(), if !sends.is_empty() => {}
            received = transport.recv(), if sends.len() < MAX_BACKGROUND_SENDS => match received {
                Ok(Inbound::Message(message)) => {
                    if let Some(answer) = dispatch(&connection, message) {
                        sends.push(send(transport.clone(), connection.stamp(answer)));
                    }
                }
                Ok(Inbound::RequestFailed { id, error }) => connection.fail(id, error),
                Err(error) => {
                    tracing::debug!(%error, "mcp: the transport failed; failing every request");
                    connection.fail_all(error);
                    return;
                }
            },
            // Unreachable (the connection keeps the command channel open),
            // but a select with every branch disabled must not panic.
            else => return,
        }
    }
}

/// One of the inbound side's own sends. Its failure concerns nobody in
/// particular: a broken transport shows in the reads too.
async fn send<T: Transport>(transport: Arc<T>, message: Outgoing) {
    if let Err(error) = transport.send(message).await {
        tracing::debug!(%error, "mcp: could not send an answer or a cancellation");
    }
}

/// Handles one message from the server; returns the answer to send, if the
/// message was a request.
fn dispatch(connection: &Connection, message: Bytes) -> Option<Outgoing> {
    let raw_id = match jsonrpc::route(&message) {
        Route::Response { raw_id } => raw_id,
        Route::Other => match Incoming::<IgnoredAny>::parse(&message) {
            Ok(Incoming::Request { raw_id, method }) => return Some(answer(raw_id, &method)),
            Ok(Incoming::Notification { method, params }) => {
                if method == "notifications/progress" {
                    route_progress(connection, params.map(|params| params.get()));
                } else {
                    tracing::trace!(%method, "mcp: dropped a notification");
                }
                return None;
            }
            // A response without a result or an error: it still answers
            // its request, which then fails rather than waits forever.
            Ok(Incoming::Response { raw_id, .. }) => raw_id,
            Err(problem) => {
                let shown = String::from_utf8_lossy(&message[..message.len().min(SHOWN_BYTES)])
                    .into_owned();
                tracing::warn!(%problem, message = %shown, "mcp: dropped a malformed message");
                return None;
            }
        },
    };
    let id = match raw_id {
        Some(raw_id) => jsonrpc::our_id(raw_id),
        // An error about a message the server could not read: when only
        // one request is in flight, it can only be about that one.
        None => connection.sole_request(),
    };
    if !id.is_some_and(|id| connection.deliver(id, message)) {
        tracing::debug!(?id, "mcp: dropped an answer nobody waits for");
    }
    None
}

/// The answer to a server request: `ping` gets an empty result, anything
/// else "method not found" (this client offers no other capability).
fn answer(raw_id: &str, method: &str) -> Outgoing {
    let mut body = Vec::with_capacity(128);
    if method == "ping" {
        jsonrpc::encode_reply(&mut body, raw_id, Ok("{}"));
    } else {
        tracing::debug!(%method, "mcp: refused a server request");
        let refusal = ProtocolError {
            code: ProtocolError::METHOD_NOT_FOUND,
            message: format!("Method not found: this client does not offer {method:?}"),
            data: None,
        };
        jsonrpc::encode_reply(&mut body, raw_id, Err(&refusal));
    }
    Outgoing::response(Bytes::from(body))
}

/// Passes a progress report to its call. The token is the call's request
/// id (see `Client::call_tool_with_progress`).
fn route_progress(connection: &Connection, params: Option<&str>) {
    let Some(params) = params else {
        return;
    };
    match serde_json::from_str::<ProgressParams>(params) {
        Ok(report) => match report.progress_token.as_u64() {
            Some(id) => connection.progress(id, report.progress),
            None => tracing::debug!("mcp: progress for a token this client never gave"),
        },
        Err(error) => tracing::debug!(%error, "mcp: malformed progress notification"),
    }
}
