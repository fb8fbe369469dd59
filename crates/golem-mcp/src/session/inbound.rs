//! The inbound side: one task per client that reads the server for as long
//! as the client is open.
//!
//! It routes each response to the request waiting for it, answers the
//! server's `ping`, starts the application's handlers for the requests it
//! registered (through `serving.rs`; anything else gets "method not
//! found"),
//! passes progress reports to their calls, cancellations to the handlers
//! they stop, and every other notification to the subscribers. It also
//! sends what nobody else will: immediate answers, and the
//! `notifications/cancelled` of requests whose callers went away.
//!
//! `close` asks it (`Command::Flush`) to say when its sends are over, so
//! that a cancellation sent just before the session ends reaches the
//! server first.
//!
//! It never waits for a send before reading on: sends run beside the reads,
//! so a server that only reads once its output is read cannot deadlock
//! against it. They are bounded: at most [`MAX_BACKGROUND_SENDS`] at a time
//! (beyond that the task stops reading, which is backpressure on a server
//! that floods requests while not taking answers, and cancellations are
//! dropped), each for at most [`BACKGROUND_SEND_TIME`].

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use crate::session::connection::{Command, Connection, TransportTraits, encode_cancellation};
use crate::session::modern::cache::ResultCache;
use crate::session::modern::listen::Listening;
use crate::session::notifications::{Hub, ServerNotification};
use crate::session::progress::ProgressParams;
use crate::session::serving::{Offer, Running, reply};
use crate::wire::jsonrpc::{self, Incoming, ProtocolError, Route};
use crate::wire::transport::{Inbound, Outgoing, Transport};
use crate::wire::transport_error::TransportError;

/// How many of the inbound side's own sends may be under way before it
/// stops reading: a server flooding requests while it does not read its
/// input gets backpressure, not unbounded memory.
const MAX_BACKGROUND_SENDS: usize = 64;

/// How long one of the inbound task's own sends may take: a server that
/// takes no input for this long does not get it, rather than holding a slot
/// for ever.
const BACKGROUND_SEND_TIME: Duration = Duration::from_secs(30);

/// How much of a dropped message a log line shows.
const SHOWN_BYTES: usize = 200;

/// Where the inbound side hands what it reads beyond responses and server
/// requests: the notification broadcast, the result cache that change
/// notifications invalidate, and the modern era's subscriptions.
#[derive(Clone)]
pub(crate) struct Sinks {
    pub(crate) hub: Arc<Hub>,
    pub(crate) cache: Arc<ResultCache>,
    pub(crate) listening: Arc<Listening>,
    /// Set while a lost server is restarted (ADR 0026): the broadcast then
    /// outlives this connection, and the restart ends it when it gives up.
    pub(crate) supervised: Arc<std::sync::atomic::AtomicBool>,
}

/// Makes a client's connection: the request table its callers share, and
/// the inbound driver that will read `transport` for it, made together
/// because each needs the other's end of the command channel.
pub(crate) fn open<T: Transport>(
    transport: Arc<T>,
    offer: Arc<dyn Offer>,
    sinks: Sinks,
) -> (Arc<Connection>, Driver<T>) {
    let traits = TransportTraits {
        mirrors_headers: transport.mirrors_headers(),
        legacy_only: transport.legacy_only(),
        renews_sessions: transport.renews_sessions(),
        returns_answers: transport.returns_answers(),
    };
    let (connection, commands) = Connection::new(transport.clone(), traits);
    let connection = Arc::new(connection);
    let driver = Driver {
        transport,
        connection: connection.clone(),
        offer,
        sinks,
        commands,
    };
    (connection, driver)
}

/// The inbound side of one connection, not yet running: [`run`](Driver::run)
/// it on a task of its own.
pub(crate) struct Driver<T> {
    transport: Arc<T>,
    connection: Arc<Connection>,
    offer: Arc<dyn Offer>,
    sinks: Sinks,
    commands: mpsc::UnboundedReceiver<Command>,
}

impl<T: Transport> Driver<T> {
    /// Runs the inbound side until the transport fails for good. (Closing
    /// the client, or dropping its last clone, aborts the task.)
    pub(crate) async fn run(self) {
        let Driver {
            transport,
            connection,
            offer,
            sinks,
            commands,
        } = self;
        run(transport, connection, offer, sinks, commands).await;
    }
}

async fn run<T: Transport>(
    transport: Arc<T>,
    connection: Arc<Connection>,
    offer: Arc<dyn Offer>,
    sinks: Sinks,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    let _end = EndOnExit(&connection, &sinks.hub, &sinks.supervised);
    // Boxed: the set allocates room for one future up front, for as long
    // as the client lives, and these sends are rare (answers to the
    // server's requests, cancellations).
    let mut sends: FuturesUnordered<Pin<Box<dyn Future<Output = ()> + Send>>> =
        FuturesUnordered::new();
    // Dropped (aborting every handler) when this task ends.
    let mut running = Running::new();
    // Who waits for the sends under way to be over (`Command::Flush`).
    let mut flushing: Vec<oneshot::Sender<()>> = Vec::new();
    loop {
        if sends.is_empty() {
            for done in flushing.drain(..) {
                let _ = done.send(());
            }
        }
        tokio::select! {
            biased;
            Some(command) = commands.recv() => match command {
                // A cancellation is advisory: when the server is not taking
                // what was sent already, one more is dropped rather than
                // queued without bound.
                Command::Cancel(id) if sends.len() >= MAX_BACKGROUND_SENDS => {
                    tracing::debug!(request_id = id, "mcp: the server is not taking messages; dropped a cancellation");
                }
                Command::Cancel(id) => {
                    let cancellation = connection.stamp(encode_cancellation(id));
                    sends.push(Box::pin(send(transport.clone(), cancellation)));
                }
                Command::Flush(done) => flushing.push(done),
            },
            Some(()) = sends.next(), if !sends.is_empty() => {}
            () = running.reap(), if !running.is_empty() => {}
            received = transport.recv(), if sends.len() < MAX_BACKGROUND_SENDS => match received {
                Ok(Inbound::Message(message)) => {
                    let mut inbound = Dispatch {
                        connection: &connection,
                        offer: &*offer,
                        sinks: &sinks,
                        running: &mut running,
                    };
                    if let Some(answer) = inbound.dispatch(message) {
                        sends.push(Box::pin(send(transport.clone(), connection.stamp(answer))));
                    }
                }
                Ok(Inbound::RequestFailed { id, error }) => connection.fail(id, error),
                Ok(Inbound::SessionRenewed) => {
                    tracing::warn!("mcp: the server dropped the session; a new one was started");
                    // What was kept from the old session may be stale.
                    sinks.cache.clear();
                    sinks.hub.publish(ServerNotification::SessionRenewed);
                }
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

/// Ends the connection when the inbound task stops, however it stops (a
/// transport that panicked, a runtime shut down under it): without a
/// reader, every request in flight and every later one would wait for ever.
/// After `close` or a transport error the connection has ended already and
/// this does nothing.
struct EndOnExit<'c>(&'c Connection, &'c Hub, &'c std::sync::atomic::AtomicBool);

impl Drop for EndOnExit<'_> {
    fn drop(&mut self) {
        // Subscriptions end with the reader, unless a restart takes over.
        if !self.2.load(std::sync::atomic::Ordering::Acquire) {
            self.1.end();
        }
        self.0.fail_all(TransportError::Other(
            "the client's inbound task stopped (its runtime shut down, or the transport panicked)"
                .into(),
        ));
    }
}

/// One of the inbound side's own sends. Its failure concerns nobody in
/// particular: a broken transport shows in the reads too.
async fn send<T: Transport>(transport: Arc<T>, message: Outgoing) {
    match tokio::time::timeout(BACKGROUND_SEND_TIME, transport.send(message)).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => {
            tracing::debug!(%error, "mcp: could not send an answer or a cancellation");
        }
        Err(_) => tracing::debug!("mcp: gave up sending an answer or a cancellation"),
    }
}

/// What handling one message needs.
struct Dispatch<'a> {
    connection: &'a Arc<Connection>,
    offer: &'a dyn Offer,
    sinks: &'a Sinks,
    running: &'a mut Running,
}

impl Dispatch<'_> {
    /// Handles one message from the server; returns the answer to send now,
    /// if the message was a request answered at once.
    fn dispatch(&mut self, message: Bytes) -> Option<Outgoing> {
        let connection = self.connection;
        let raw_id = match jsonrpc::route(&message) {
            Route::Response { raw_id } => raw_id,
            Route::Other => match Incoming::<IgnoredAny>::parse(&message) {
                Ok(Incoming::Request {
                    raw_id,
                    method,
                    params,
                }) => {
                    if let Some(modern) = connection.modern() {
                        // The modern era has no server requests (input comes
                        // through `input_required`) and no `ping`: refuse at
                        // once, so that the server never waits on us.
                        tracing::debug!(%method, "mcp: refused a request from a modern server");
                        let refusal = ProtocolError {
                            code: ProtocolError::METHOD_NOT_FOUND,
                            message: format!(
                                "Method not found: in protocol {} servers send no requests",
                                modern.version()
                            ),
                            data: None,
                        };
                        return Some(reply(raw_id, Err(&refusal)));
                    }
                    if method == "ping" {
                        return Some(reply(raw_id, Ok("{}")));
                    }
                    return self.running.start(
                        self.offer,
                        connection,
                        raw_id,
                        &method,
                        params.map(RawValue::get),
                    );
                }
                Ok(Incoming::Notification { method, params }) => {
                    self.notification(&method, params.map(RawValue::get));
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
        match id {
            Some(id) => {
                if !connection.deliver(id, message) {
                    tracing::debug!(id, "mcp: dropped an answer nobody waits for");
                }
            }
            None => {
                let shown = String::from_utf8_lossy(&message[..message.len().min(SHOWN_BYTES)])
                    .into_owned();
                tracing::warn!(message = %shown, "mcp: dropped an answer that names no request of ours (an error without an id while several requests are in flight cannot be matched)");
            }
        }
        None
    }

    /// Routes a notification: progress to its call, a cancellation to the
    /// handler it stops (a modern server's, to the listen it ends), a
    /// subscription's acknowledgment to its listen, anything else to the
    /// result cache (which drops what a change makes stale) and the
    /// subscribers (and log messages to `tracing` too).
    fn notification(&mut self, method: &str, params: Option<&str>) {
        match method {
            "notifications/progress" => route_progress(self.connection, params),
            "notifications/cancelled" => {
                let request = params
                    .and_then(|params| serde_json::from_str::<CancelledWire>(params).ok())
                    .map(|cancelled| cancelled.request_id);
                match request {
                    Some(request) if self.connection.modern().is_some() => {
                        self.end_listen(&request);
                    }
                    Some(request) => self.running.cancel(&request),
                    None => tracing::debug!("mcp: a cancellation without a request id"),
                }
            }
            "notifications/subscriptions/acknowledged" => {
                self.sinks.listening.acknowledge(self.connection, params);
            }
            _ => {
                if let Some(notification) = ServerNotification::parse(method, params) {
                    if let ServerNotification::Log(message) = &notification {
                        message.trace();
                    }
                    self.sinks.cache.invalidate(&notification);
                    self.sinks.hub.publish(notification);
                }
            }
        }
    }

    /// A modern server ends a listen of ours on stdio by cancelling it (it
    /// has no requests of its own to cancel, and may cancel nothing else).
    fn end_listen(&self, request: &serde_json::Value) {
        match request.as_u64() {
            Some(id) if self.sinks.listening.is_listen(self.connection, id) => {
                self.connection.fail(
                    id,
                    TransportError::StreamEnded {
                        detail: "the server ended the subscription".into(),
                    },
                )
            }
            _ => {
                tracing::debug!(%request, "mcp: a modern server cancelled a request that is no listen of ours")
            }
        }
    }
}

#[derive(serde::Deserialize)]
struct CancelledWire {
    #[serde(rename = "requestId")]
    request_id: serde_json::Value,
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
