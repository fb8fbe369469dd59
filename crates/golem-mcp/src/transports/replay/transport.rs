//! A recorded session as a transport: the client talks to a [`Replayer`]
//! in-process, for tests of code that uses a client.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use tokio::sync::{Mutex as AsyncMutex, Notify, mpsc};

use crate::transports::replay::matcher::Replayer;
use crate::transports::replay::recording::{Recording, RecordingError};
use crate::wire::transport::{Inbound, Outgoing, Transport};
use crate::wire::transport_error::TransportError;

/// A transport whose server is a recording: what the client sends is
/// matched against the recorded requests ([`Replayer`]), and the recorded
/// answers come back through `recv`.
///
/// It says it carries only the initialize era
/// ([`Transport::legacy_only`]) unless the recorded server answered
/// `server/discover` ([`Recording::is_modern`]), so the client probes only
/// a recording that holds the probe's answer.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use golem_mcp::Client;
/// use std::path::Path;
/// use golem_mcp::replay::ReplayTransport;
///
/// let client = Client::connect(ReplayTransport::open(Path::new("session.jsonl"))?).await?;
/// let tools = client.list_tools().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct ReplayTransport {
    /// Locked across matching and queueing, so that concurrent sends queue
    /// their answers whole and in the order they were matched.
    replayer: Mutex<Replayer>,
    legacy_only: bool,
    /// Unbounded, as the memory transport's: what one message brings back
    /// is bounded by the recording, and the client always reads.
    answers: mpsc::UnboundedSender<Bytes>,
    queued: AsyncMutex<mpsc::UnboundedReceiver<Bytes>>,
    closed: AtomicBool,
    /// Wakes a pending `recv` when the transport is closed.
    closing: Notify,
}

impl ReplayTransport {
    /// A transport replaying `recording` from its start.
    pub fn new(recording: Recording) -> Self {
        let (answers, queued) = mpsc::unbounded_channel();
        ReplayTransport {
            replayer: Mutex::new(Replayer::new(&recording)),
            legacy_only: !recording.is_modern(),
            answers,
            queued: AsyncMutex::new(queued),
            closed: AtomicBool::new(false),
            closing: Notify::new(),
        }
    }

    /// A transport replaying the recording at `path` ([`Recording::read`]).
    pub fn open(path: &Path) -> Result<Self, RecordingError> {
        Ok(ReplayTransport::new(Recording::read(path)?))
    }

    fn check_open(&self) -> Result<(), TransportError> {
        match self.closed.load(Ordering::Acquire) {
            true => Err(TransportError::Closed),
            false => Ok(()),
        }
    }
}

impl Transport for ReplayTransport {
    /// Matches the message and queues the answers before returning, with
    /// no await: cancel safe.
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        self.check_open()?;
        let text = String::from_utf8_lossy(message.body());
        let mut replayer = self.replayer.lock().unwrap_or_else(PoisonError::into_inner);
        for answer in replayer.on_message(&text) {
            // The receiver lives in `self`: the channel cannot be closed.
            let _ = self.answers.send(Bytes::from(answer));
        }
        Ok(())
    }

    /// Cancel safe: a channel receive loses nothing when dropped. After
    /// [`close`](Transport::close) it fails with [`TransportError::Closed`].
    async fn recv(&self) -> Result<Inbound, TransportError> {
        let closing = self.closing.notified();
        self.check_open()?;
        let mut queued = self.queued.lock().await;
        tokio::select! {
            received = queued.recv() => match received {
                Some(message) => Ok(Inbound::Message(message)),
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

    fn legacy_only(&self) -> bool {
        self.legacy_only
    }
}
