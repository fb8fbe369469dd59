//! Draining a server's stderr into a bounded tail, and line by line for
//! [`StderrMode::Lines`] (`stderr_lines.rs` cuts and queues the lines).

use std::future::poll_fn;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::ChildStderr;
use tokio::task::JoinHandle;

use super::stderr_lines::{LineQueue, LineSplitter, StderrLines};

/// What happens to the server's stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StderrMode {
    /// Drain it and keep the last `n` bytes for error messages and
    /// [`ServerStderr::tail`]. The default, with
    /// [`DEFAULT_TAIL`](Self::DEFAULT_TAIL).
    Tail(usize),
    /// Drain it as [`Tail`](Self::Tail) does, keeping its last `tail` bytes,
    /// and also hand it to the application line by line: take them with
    /// [`ServerStderr::lines`] (bounded: see [`StderrLines`]). For an
    /// application that shows the server's log lines as they come, its own
    /// way (with a prefix, escaped), and still wants them in error messages.
    Lines {
        /// How many of the last bytes are kept, as in `Tail`.
        tail: usize,
    },
    /// Pass it through to this process's stderr (the server's log lines show
    /// up in the terminal). Errors then carry no stderr tail.
    Inherit,
    /// Send it to `/dev/null`.
    Discard,
}

impl StderrMode {
    /// The tail kept by default, 64 KiB: a stack trace or two.
    pub const DEFAULT_TAIL: usize = 64 * 1024;
}

impl Default for StderrMode {
    fn default() -> Self {
        StderrMode::Tail(Self::DEFAULT_TAIL)
    }
}

/// A handle on the captured end of a server's stderr. Cheap to clone; stays
/// readable after the transport is gone.
#[derive(Debug, Clone, Default)]
pub struct ServerStderr {
    tail: Arc<Mutex<Tail>>,
    /// The lines for the application, in [`StderrMode::Lines`].
    lines: Option<Arc<LineQueue>>,
}

#[derive(Debug, Default)]
struct Tail {
    bytes: Vec<u8>,
    limit: usize,
    /// Total bytes the server wrote, including those no longer kept.
    total: u64,
}

impl ServerStderr {
    /// The last bytes the server wrote to stderr (at most the configured
    /// tail size), lossily decoded as UTF-8. Empty when stderr is inherited
    /// or discarded.
    pub fn tail(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(PoisonError::into_inner);
        let keep = tail.bytes.len().min(tail.limit);
        let bytes = &tail.bytes[tail.bytes.len() - keep..];
        String::from_utf8_lossy(bytes).into_owned()
    }

    /// How many bytes the server has written to stderr in all.
    pub fn total_bytes(&self) -> u64 {
        self.tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .total
    }

    /// The server's stderr line by line, with [`StderrMode::Lines`]: given
    /// once, to the first caller among this handle and its clones; `None`
    /// after that, and in the other modes.
    ///
    /// The lines are queued from the server's start, so taking them late
    /// loses none but those dropped past [`StderrLines::CAPACITY`].
    pub fn lines(&self) -> Option<StderrLines> {
        self.lines.as_ref().and_then(LineQueue::take)
    }

    /// Starts draining `stderr` on a task, keeping the last `limit` bytes.
    ///
    /// Draining never stops before end of input, whatever the volume, so a
    /// chatty server cannot block on a full pipe.
    pub(crate) fn drain(stderr: ChildStderr, limit: usize) -> (Self, JoinHandle<()>) {
        Self::start(stderr, limit, None)
    }

    /// [`drain`](Self::drain), also cutting stderr into lines for
    /// [`lines`](Self::lines).
    pub(crate) fn drain_lines(stderr: ChildStderr, limit: usize) -> (Self, JoinHandle<()>) {
        Self::start(stderr, limit, Some(Arc::new(LineQueue::default())))
    }

    fn start(
        stderr: ChildStderr,
        limit: usize,
        lines: Option<Arc<LineQueue>>,
    ) -> (Self, JoinHandle<()>) {
        let handle = ServerStderr {
            tail: Arc::new(Mutex::new(Tail {
                bytes: Vec::new(),
                limit,
                total: 0,
            })),
            lines,
        };
        let tail = Arc::clone(&handle.tail);
        // Made here, not on the task: the splitter ends the lines' stream
        // when dropped, also if the task never runs.
        let splitter = handle.lines.clone().map(LineSplitter::new);
        let task = tokio::spawn(drain_into(stderr, tail, splitter));
        (handle, task)
    }
}

/// How much one read of stderr takes.
const STDERR_READ: usize = 4 * 1024;

/// Reads `stderr` to its end into `tail`, and into `lines` when given
/// (dropped at the end, which ends the lines' stream after the last one).
async fn drain_into(
    mut stderr: impl AsyncRead + Unpin,
    tail: Arc<Mutex<Tail>>,
    mut lines: Option<LineSplitter>,
) {
    poll_fn(|cx| {
        loop {
            // On the stack of the poll, not in the task: the task lives as
            // long as the server, and most servers write little or nothing
            // to stderr. The reads give way when the task's budget is
            // spent, so a chatty server cannot hog the thread.
            let mut chunk = [MaybeUninit::<u8>::uninit(); STDERR_READ];
            let mut read = ReadBuf::uninit(&mut chunk);
            match ready!(Pin::new(&mut stderr).poll_read(cx, &mut read)) {
                Ok(()) if !read.filled().is_empty() => {
                    tail.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .append(read.filled());
                    if let Some(lines) = lines.as_mut() {
                        lines.feed(read.filled());
                    }
                }
                Ok(()) | Err(_) => return Poll::Ready(()),
            }
        }
    })
    .await;
}

impl Tail {
    fn append(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.limit == 0 {
            return;
        }
        self.bytes.extend_from_slice(bytes);
        // Trim only once the buffer is twice the limit, so trimming costs
        // amortised O(1) per byte.
        if self.bytes.len() > 2 * self.limit {
            let excess = self.bytes.len() - self.limit;
            self.bytes.drain(..excess);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn drains_to_the_end_over_many_reads() {
        let written: Vec<u8> = (0..5 * STDERR_READ + 3)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        let stderr = ServerStderr::default();
        stderr.tail.lock().expect("not poisoned").limit = 10;
        drain_into(&written[..], Arc::clone(&stderr.tail), None).await;
        assert_eq!(stderr.total_bytes(), written.len() as u64);
        let last = String::from_utf8_lossy(&written[written.len() - 10..]).into_owned();
        assert_eq!(stderr.tail(), last);
    }

    #[test]
    fn keeps_only_the_last_bytes() {
        let stderr = ServerStderr::default();
        {
            let mut tail = stderr.tail.lock().expect("not poisoned");
            tail.limit = 4;
            for chunk in [&b"abc"[..], b"defgh", b"ij", b"k"] {
                tail.append(chunk);
            }
        }
        assert_eq!(stderr.tail(), "hijk");
        assert_eq!(stderr.total_bytes(), 11);
    }
}
