//! A server's stderr handed over line by line ([`StderrMode::Lines`]): the
//! drain cuts what it reads into lines and queues them, bounded, for the
//! one [`StderrLines`] the application takes. It knows nothing of the tail
//! kept beside it (`stderr.rs`) or of the process.
//!
//! [`StderrMode::Lines`]: super::StderrMode::Lines

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

/// A stdio server's stderr, line by line, in the order written: what
/// [`ServerStderr::lines`](super::ServerStderr::lines) hands over with
/// [`StderrMode::Lines`](super::StderrMode::Lines).
///
/// Bounded both ways, so that a server flooding its stderr costs a known
/// amount of memory, whether or not anybody reads:
/// - a line longer than [`MAX_LINE_BYTES`](Self::MAX_LINE_BYTES) is cut
///   there (the rest of it, up to its newline, is read and thrown away),
///   and says so ([`StderrEvent::Line`]'s `cut`);
/// - at most [`CAPACITY`](Self::CAPACITY) lines wait to be received; the
///   lines that come while that many wait are dropped, and counted where
///   they were ([`StderrEvent::Dropped`]).
///
/// The lines are queued from the server's start, before this is taken, so
/// the first ones are not lost. The stream ends ([`recv`](Self::recv)
/// gives `None`) once the server's stderr has reached its end (the server
/// and everything that shared its stderr are gone) and every line before
/// it has been received: the last lines, a last one without a newline
/// included, are never lost at exit. A restarted server
/// ([`Transport::reopen`](crate::Transport::reopen)) has a stderr of its
/// own.
///
/// ```no_run
/// use golem_mcp::{StderrEvent, StderrMode, StdioConfig, StdioTransport};
///
/// # async fn run() -> Result<(), golem_mcp::Error> {
/// let transport = StdioTransport::spawn(StdioConfig {
///     stderr: StderrMode::Lines { tail: StderrMode::DEFAULT_TAIL },
///     ..StdioConfig::new("my-server")
/// })?;
/// let mut lines = transport.stderr().lines().expect("the Lines mode, taken once");
/// tokio::spawn(async move {
///     while let Some(event) = lines.recv().await {
///         match event {
///             StderrEvent::Line { text, .. } => eprintln!("server: {text:?}"),
///             StderrEvent::Dropped { lines } => eprintln!("server: {lines} line(s) dropped"),
///             _ => {}
///         }
///     }
/// });
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct StderrLines {
    queue: Arc<LineQueue>,
}

/// One thing [`StderrLines::recv`] hands over.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StderrEvent {
    /// A line the server wrote, without its newline (nor a `\r` before
    /// it), lossily decoded as UTF-8, exactly as written otherwise: escape
    /// sequences and other control characters included, for the
    /// application to escape before showing it.
    Line {
        /// The line's text (its first
        /// [`MAX_LINE_BYTES`](StderrLines::MAX_LINE_BYTES) bytes, ending at
        /// a character boundary, when it was cut).
        text: String,
        /// Whether the line was longer and was cut.
        cut: bool,
    },
    /// This many lines came here while [`CAPACITY`](StderrLines::CAPACITY)
    /// lines waited to be received, and were dropped (the stderr tail may
    /// still hold them).
    Dropped {
        /// How many lines in a row were dropped.
        lines: u64,
    },
}

impl StderrLines {
    /// The longest line handed over, in bytes; a longer one is cut.
    pub const MAX_LINE_BYTES: usize = 4 * 1024;
    /// How many lines wait at most to be received (so at most 1 MiB of
    /// text); later ones are dropped until some are received.
    pub const CAPACITY: usize = 256;

    /// The next line, or how many were dropped here; `None` once the
    /// server's stderr has ended and everything before its end was
    /// received.
    ///
    /// Cancel safe: an event leaves the queue only when this returns it,
    /// so dropping the future loses nothing.
    pub async fn recv(&mut self) -> Option<StderrEvent> {
        loop {
            {
                let mut state = self.queue.state();
                if let Some(event) = state.events.pop_front() {
                    if matches!(event, StderrEvent::Line { .. }) {
                        state.lines_queued -= 1;
                    }
                    return Some(event);
                }
                if state.ended {
                    return None;
                }
            }
            // One receiver, so `notify_one`'s stored permit covers a line
            // queued between the check above and this wait.
            self.queue.ready.notified().await;
        }
    }
}

/// What the drain and the one [`StderrLines`] share.
#[derive(Debug, Default)]
pub(crate) struct LineQueue {
    state: Mutex<QueueState>,
    ready: Notify,
    /// Whether the [`StderrLines`] was handed out.
    taken: AtomicBool,
}

#[derive(Debug, Default)]
struct QueueState {
    events: VecDeque<StderrEvent>,
    /// How many of `events` are lines: the bound counts lines only; at
    /// most one `Dropped` follows each, so `events` stays under twice it.
    lines_queued: usize,
    /// Set when the drain is over (end of stderr, a read error, or the
    /// drain's task dropped with its runtime).
    ended: bool,
}

impl LineQueue {
    /// The receiving end, the first time only.
    pub(crate) fn take(self: &Arc<Self>) -> Option<StderrLines> {
        if self.taken.swap(true, Ordering::AcqRel) {
            return None;
        }
        Some(StderrLines {
            queue: Arc::clone(self),
        })
    }

    fn state(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push_line(&self, text: String, cut: bool) {
        {
            let mut state = self.state();
            if state.lines_queued < StderrLines::CAPACITY {
                state.events.push_back(StderrEvent::Line { text, cut });
                state.lines_queued += 1;
            } else if let Some(StderrEvent::Dropped { lines }) = state.events.back_mut() {
                *lines += 1;
            } else {
                state.events.push_back(StderrEvent::Dropped { lines: 1 });
            }
        }
        self.ready.notify_one();
    }

    fn end(&self) {
        self.state().ended = true;
        self.ready.notify_one();
    }
}

/// Cuts the drained bytes into lines for a [`LineQueue`]. Dropping it ends
/// the queue's stream, after the last line (one without a newline too):
/// at the end of stderr, or if the drain's task is dropped, so that a
/// receiver never waits for a drain that is gone.
#[derive(Debug)]
pub(crate) struct LineSplitter {
    queue: Arc<LineQueue>,
    /// The line so far, at most `MAX_LINE_BYTES`.
    partial: Vec<u8>,
    /// Whether bytes of the line so far were thrown away.
    cut: bool,
}

impl LineSplitter {
    pub(crate) fn new(queue: Arc<LineQueue>) -> Self {
        LineSplitter {
            queue,
            partial: Vec::new(),
            cut: false,
        }
    }

    /// Takes what was read, queuing each line it completes.
    pub(crate) fn feed(&mut self, mut bytes: &[u8]) {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            self.keep(&bytes[..end]);
            self.finish_line();
            bytes = &bytes[end + 1..];
        }
        self.keep(bytes);
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = StderrLines::MAX_LINE_BYTES - self.partial.len();
        if bytes.len() > room {
            self.partial.extend_from_slice(&bytes[..room]);
            self.cut = true;
        } else {
            self.partial.extend_from_slice(bytes);
        }
    }

    fn finish_line(&mut self) {
        let mut line = std::mem::take(&mut self.partial);
        let cut = std::mem::take(&mut self.cut);
        if cut {
            // Cut at a byte count: a character split there is left out
            // rather than shown as U+FFFD.
            if let Err(error) = std::str::from_utf8(&line)
                && error.error_len().is_none()
            {
                line.truncate(error.valid_up_to());
            }
        } else if line.last() == Some(&b'\r') {
            line.pop();
        }
        let text = match String::from_utf8(line) {
            Ok(text) => text,
            Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
        };
        self.queue.push_line(text, cut);
    }
}

impl Drop for LineSplitter {
    fn drop(&mut self) {
        if !self.partial.is_empty() || self.cut {
            self.finish_line();
        }
        self.queue.end();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn received(lines: &mut StderrLines) -> Vec<StderrEvent> {
        let mut events = Vec::new();
        let mut state = lines.queue.state();
        while let Some(event) = state.events.pop_front() {
            events.push(event);
        }
        state.lines_queued = 0;
        events
    }

    fn line(text: &str) -> StderrEvent {
        StderrEvent::Line {
            text: text.into(),
            cut: false,
        }
    }

    fn split(chunks: &[&[u8]]) -> Vec<StderrEvent> {
        let queue = Arc::new(LineQueue::default());
        let mut lines = queue.take().expect("first");
        let mut splitter = LineSplitter::new(Arc::clone(&queue));
        for chunk in chunks {
            splitter.feed(chunk);
        }
        drop(splitter);
        assert!(queue.state().ended);
        received(&mut lines)
    }

    #[test]
    fn lines_across_reads_and_the_last_without_a_newline() {
        assert_eq!(
            split(&[b"one\r\ntw", b"o\n\nthr", b"ee"]),
            [line("one"), line("two"), line(""), line("three")]
        );
    }

    #[test]
    fn a_long_line_is_cut_at_a_character_boundary() {
        let mut long = vec![b'a'; StderrLines::MAX_LINE_BYTES - 1];
        long.extend_from_slice("é and more".as_bytes());
        long.extend_from_slice(b"\nnext\n");
        let events = split(&[&long[..100], &long[100..]]);
        assert_eq!(
            events,
            [
                StderrEvent::Line {
                    text: "a".repeat(StderrLines::MAX_LINE_BYTES - 1),
                    cut: true,
                },
                line("next"),
            ]
        );
    }

    #[test]
    fn lines_past_the_capacity_are_dropped_and_counted_in_place() {
        let queue = Arc::new(LineQueue::default());
        let mut lines = queue.take().expect("first");
        assert!(queue.take().is_none(), "taken once");
        for n in 0..StderrLines::CAPACITY + 3 {
            queue.push_line(n.to_string(), false);
        }
        let first = received(&mut lines);
        assert_eq!(first.len(), StderrLines::CAPACITY + 1);
        assert_eq!(first.last(), Some(&StderrEvent::Dropped { lines: 3 }));
        // Room again: later lines are queued after the count.
        queue.push_line("later".into(), false);
        assert_eq!(received(&mut lines), [line("later")]);
    }

    #[tokio::test]
    async fn recv_waits_for_a_line_and_ends_after_the_last() {
        let queue = Arc::new(LineQueue::default());
        let mut lines = queue.take().expect("first");
        let mut splitter = LineSplitter::new(Arc::clone(&queue));
        let reader = tokio::spawn(async move {
            let mut events = Vec::new();
            while let Some(event) = lines.recv().await {
                events.push(event);
            }
            events
        });
        splitter.feed(b"first\nlast words");
        drop(splitter);
        let events = tokio::time::timeout(std::time::Duration::from_secs(20), reader)
            .await
            .expect("ends")
            .expect("no panic");
        assert_eq!(events, [line("first"), line("last words")]);
    }
}
