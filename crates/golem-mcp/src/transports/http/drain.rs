//! The rest of an answered event stream, read to its end so that its
//! connection can carry the next request.
//!
//! HTTP/1.1 reuses a connection only once the response on it has been read
//! to its end: a response body dropped before its last chunk (the `0`
//! chunk that ends a chunked body) makes hyper close the connection, unless
//! that chunk had already arrived. A server writes the answer event and
//! then ends the stream, often in two writes, so the client that stopped
//! reading at the answer lost the connection on many calls: against rmcp's
//! stateless server (2026-07-28), `golem-bench` opened about 1,100 TCP
//! connections in 2,000 calls with client and server on one CPU.
//!
//! Reading on after the answer is not enough if the answer is handed over
//! first: the caller's next request then reaches hyper's pool while this
//! connection is still busy, and hyper starts a new connection at once
//! (its checkout races a connect, and a connect once started is finished
//! and pooled even when the checkout wins): with answers handed over at
//! once, the fake server of `tests/http_connection_reuse.rs` saw three
//! connections for twenty calls. So the answer waits for the end
//! of its response, as a JSON answer waits for the end of its body, but for
//! [`END_GRACE`] at most: a server that keeps an answered stream open costs
//! that wait once, after which the transport hands answers over at once
//! and reads the rest of each stream behind them ([`Drains::finish`]), for
//! [`DRAIN_TIME`] and [`DRAIN_BYTES`] at most, [`MAX_DRAINS`] streams at a
//! time. A stream that then ends within the grace turns the wait back on.
//! The stream's task does the reading: cancelling the request or closing
//! the transport aborts it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::client::Response;
use tokio::time::{Duration, Instant};

/// How long an answer waits for the end of its response before it is
/// handed over anyway. A server ends the stream right after the answer (the
/// specification says it should): the end comes within microseconds on one
/// machine, and with or right behind the answer's packets over a network.
/// (A server that leaves Nagle's algorithm on can hold a small last write
/// back until the client acknowledges the answer, tens of milliseconds
/// later: such a server is waited for once.)
const END_GRACE: Duration = Duration::from_millis(5);

/// How long the rest of an answered stream is read, from the answer on:
/// longer, and the connection is let go.
const DRAIN_TIME: Duration = Duration::from_secs(1);

/// How much of an answered stream is read after the answer: more, and the
/// connection is let go (what follows the answer is not delivered).
const DRAIN_BYTES: usize = 64 * 1024;

/// How many answered streams are read behind their answers at once;
/// beyond, a stream is let go at once. A server that never ends its
/// streams holds at most this many connections.
const MAX_DRAINS: usize = 4;

/// What the transport has learnt of the server's answered streams.
#[derive(Debug)]
pub(super) struct Drains {
    /// Whether answers wait for the end of their responses: until a
    /// server's stream was still open after [`END_GRACE`].
    wait: AtomicBool,
    /// Streams being read behind their answers.
    running: AtomicUsize,
}

impl Default for Drains {
    fn default() -> Self {
        Drains {
            wait: AtomicBool::new(true),
            running: AtomicUsize::new(0),
        }
    }
}

/// The rest of a response whose answer has been read.
pub(super) struct Rest {
    response: Response,
    /// When the answer was read.
    answered_at: Instant,
    /// How many more bytes may be read.
    budget: usize,
}

/// How reading the rest of a response ended.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum End {
    /// The response ended: its connection can carry another request.
    Ended,
    /// It broke, or went on past [`DRAIN_BYTES`]: the connection goes.
    Abandoned,
}

impl Rest {
    pub(super) fn new(response: Response) -> Rest {
        Rest {
            response,
            answered_at: Instant::now(),
            budget: DRAIN_BYTES,
        }
    }

    /// Reads and drops the rest of the body. Cancel safe: a chunk is
    /// taken whole or not at all.
    async fn read_to_end(&mut self) -> End {
        loop {
            match self.response.chunk().await {
                Ok(None) => return End::Ended,
                Ok(Some(chunk)) if chunk.len() <= self.budget => self.budget -= chunk.len(),
                Ok(Some(_)) | Err(_) => return End::Abandoned,
            }
        }
    }
}

impl Drains {
    /// Waits for the end of `rest`, for [`END_GRACE`] at most, unless a
    /// stream of this server's already kept it waiting. `None` when the
    /// response has not ended: the caller hands the answer over and calls
    /// [`finish`](Drains::finish).
    pub(super) async fn wait_for_end(&self, rest: &mut Rest) -> Option<End> {
        if !self.wait.load(Ordering::Relaxed) {
            return None;
        }
        match tokio::time::timeout(END_GRACE, rest.read_to_end()).await {
            Ok(end) => Some(end),
            Err(_) => {
                if self.wait.swap(false, Ordering::Relaxed) {
                    tracing::debug!(
                        "mcp: the server kept an answered event stream open; its answers are handed over at once from now on, and the rest of each stream is read behind them"
                    );
                }
                None
            }
        }
    }

    /// Reads the rest of `rest` after its answer was handed over, within
    /// the bounds, then lets it go; at once when [`MAX_DRAINS`] streams
    /// are being read. A response that ended within [`END_GRACE`] of its
    /// answer makes answers wait for their ends again.
    pub(super) async fn finish(&self, mut rest: Rest) {
        let Some(_slot) = self.slot() else {
            return;
        };
        let deadline = rest.answered_at + DRAIN_TIME;
        let end = tokio::time::timeout_at(deadline, rest.read_to_end()).await;
        if end == Ok(End::Ended) && rest.answered_at.elapsed() <= END_GRACE {
            self.wait.store(true, Ordering::Relaxed);
        }
    }

    /// One of the [`MAX_DRAINS`] places, given back when dropped (also when
    /// the task is aborted).
    fn slot(&self) -> Option<Slot<'_>> {
        self.running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |running| {
                (running < MAX_DRAINS).then_some(running + 1)
            })
            .ok()
            .map(|_| Slot(&self.running))
    }
}

/// A place among the streams read behind their answers.
struct Slot<'d>(&'d AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}
