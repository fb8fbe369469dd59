//! Where a generation's handshake stands ([`Lifecycle`]), and the spawned
//! sends and probe it waits for: what `handshake/mod.rs` steps through and
//! the generation keeps, so that a dropped `initialize` resumes.

use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::session::connection::{Connection, Reply};
use crate::session::modern::probe::Verdict;
use crate::session::protocol::HowChosen;
use crate::session::telemetry::RequestSpan;
use crate::wire::transport::{Outgoing, RequestId};
use crate::wire::transport_error::TransportError;

/// The era probe, on a task of its own (so that a dropped `initialize`
/// does not interrupt it), aborted if the client goes away first.
pub(in crate::session) struct ProbeTask(pub(in crate::session) JoinHandle<Result<Verdict, Error>>);

impl Drop for ProbeTask {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Where the handshake stands. Every stage keeps what it waits for, so a
/// dropped `initialize` is resumed by the next one, never repeated. (A
/// handshake that failed starts again from `New`; closing is the
/// connection's state, not a stage.)
pub(in crate::session) enum Lifecycle {
    New,
    /// `server/discover` is out, on a task of its own: the era is being
    /// decided.
    Probing {
        task: ProbeTask,
        /// Whether this is the second probe, sent because the server
        /// refused `initialize` after the first one's fallback the way a
        /// modern server does (it answered the first probe too late).
        late: bool,
    },
    /// `initialize` (request `id`) is being sent (on a task of its own, so
    /// that dropping the caller cannot interrupt it) and its answer awaited.
    Initializing {
        id: RequestId,
        sent: Option<AbortOnDropResult>,
        reply: oneshot::Receiver<Reply>,
        /// How the legacy era was chosen.
        chosen: HowChosen,
        /// The revision pinned, if one was.
        pinned: Option<&'static str>,
        /// Its client span, while anything listens.
        traced: Option<RequestSpan>,
    },
    /// The answer was accepted; `notifications/initialized` is being sent.
    Confirming {
        sent: AbortOnDropResult,
    },
    Ready,
}

impl Lifecycle {
    /// The handshake message this stage waits on: the probe's answer, the
    /// answer to `initialize`, or the send of `notifications/initialized`.
    pub(in crate::session) fn waiting_on(&self) -> Option<&'static str> {
        match self {
            Lifecycle::New | Lifecycle::Ready => None,
            Lifecycle::Probing { .. } => Some("server/discover"),
            Lifecycle::Initializing { .. } => Some("initialize"),
            Lifecycle::Confirming { .. } => Some("notifications/initialized"),
        }
    }
}

/// A spawned send, aborted if the client goes away first.
pub(in crate::session) struct AbortOnDropResult(JoinHandle<Result<(), TransportError>>);

impl Drop for AbortOnDropResult {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl AbortOnDropResult {
    pub(in crate::session) fn spawn(connection: &Arc<Connection>, message: Outgoing) -> Self {
        let connection = connection.clone();
        AbortOnDropResult(tokio::spawn(async move { connection.send(message).await }))
    }

    /// Waits for the send; cancel safe (the handle stays in place).
    pub(in crate::session) async fn wait(&mut self) -> Result<(), TransportError> {
        match (&mut self.0).await {
            Ok(result) => result,
            Err(error) => Err(TransportError::Other(Box::new(error))),
        }
    }
}
