//! The write side of the stdio transport: messages to the server's stdin,
//! one whole line each, from any number of tasks.

use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Poll, ready};

use bytes::{Buf, Bytes};
use tokio::io::AsyncWrite;
use tokio::process::ChildStdin;
use tokio::sync::futures::Notified;

/// How many queued pieces one vectored write takes at most.
const MAX_SLICES: usize = 16;

/// The server's stdin and the bytes still to be written to it.
///
/// A message is queued whole (its body and a newline, no copy) before the
/// first byte is written, and written from the queue, which records every
/// partial write. A send dropped half-way therefore leaves the rest of its
/// line queued, and the next send writes it first: the server never sees
/// half a line followed by another message.
#[derive(Debug)]
pub(crate) struct Writer {
    /// `None` once closed: the server sees end of input.
    stdin: Option<ChildStdin>,
    queue: VecDeque<Bytes>,
}

/// Why a write stopped.
#[derive(Debug)]
pub(crate) enum WriteStop {
    /// The server closed its stdin (it exited): find out how it ended.
    Gone,
    /// The transport is closing.
    Closed,
    /// Any other failure.
    Failed(io::Error),
}

impl Writer {
    pub(crate) fn new(stdin: ChildStdin) -> Self {
        Writer {
            stdin: Some(stdin),
            queue: VecDeque::new(),
        }
    }

    /// Closes stdin (after which every write fails with
    /// [`WriteStop::Closed`]).
    pub(crate) fn close(&mut self) {
        self.stdin = None;
        self.queue.clear();
    }

    /// Queues `body` and a newline and writes everything queued. Gives way
    /// with [`WriteStop::Closed`] when `closing` fires (the caller enables
    /// it before checking that the transport is open, so no close is
    /// missed).
    ///
    /// Cancel safe: progress is recorded in the queue after every write.
    pub(crate) async fn write_line(
        &mut self,
        body: Bytes,
        closing: Pin<&mut Notified<'_>>,
    ) -> Result<(), WriteStop> {
        if self.stdin.is_none() {
            return Err(WriteStop::Closed);
        }
        let body_len = body.len();
        self.queue.push_back(body);
        self.queue.push_back(Bytes::from_static(b"\n"));
        let mut unstarted = Unstarted {
            writer: self,
            body_len,
            settled: false,
        };
        let result = unstarted.writer.flush(closing).await;
        unstarted.settled = true;
        result
    }

    async fn flush(&mut self, mut closing: Pin<&mut Notified<'_>>) -> Result<(), WriteStop> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(WriteStop::Closed);
        };
        let queue = &mut self.queue;
        poll_fn(|cx| {
            while !queue.is_empty() {
                // The slices live on the stack of the poll, not in the
                // future, which every send (and every call) carries.
                let mut slices = [IoSlice::new(&[]); MAX_SLICES];
                let mut used = 0;
                for (slice, piece) in slices.iter_mut().zip(queue.iter()) {
                    *slice = IoSlice::new(piece);
                    used += 1;
                }
                // A write that can proceed goes first; while it cannot, a
                // close makes the send give way.
                let written = match Pin::new(&mut *stdin).poll_write_vectored(cx, &slices[..used]) {
                    Poll::Ready(written) => written,
                    Poll::Pending => {
                        ready!(closing.as_mut().poll(cx));
                        return Poll::Ready(Err(WriteStop::Closed));
                    }
                };
                match written {
                    Ok(0) => return Poll::Ready(Err(WriteStop::Gone)),
                    Ok(count) => advance(queue, count),
                    Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {
                        return Poll::Ready(Err(WriteStop::Gone));
                    }
                    Err(error) => return Poll::Ready(Err(WriteStop::Failed(error))),
                }
            }
            Poll::Ready(Ok(()))
        })
        .await
    }

    /// Takes stdin out, so the server sees end of input when it is dropped.
    pub(crate) fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.queue.clear();
        self.stdin.take()
    }
}

/// A message queued by a send that may be dropped. Dropped before a byte of
/// the message was written (the server had stopped reading), it takes the
/// message back out of the queue: a caller that gave up does not leave its
/// request behind to be sent later, and abandoned calls cannot pile up
/// there. A message partly written stays, so the line is finished.
struct Unstarted<'w> {
    writer: &'w mut Writer,
    body_len: usize,
    settled: bool,
}

impl Drop for Unstarted<'_> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        // The send held the writer since it queued the message, so the
        // message is the last two pieces, untouched if their lengths are.
        let queue = &mut self.writer.queue;
        let count = queue.len();
        if count >= 2 && queue[count - 2].len() == self.body_len && queue[count - 1].len() == 1 {
            queue.truncate(count - 2);
        }
    }
}

/// Drops `count` written bytes from the front of the queue.
fn advance(queue: &mut VecDeque<Bytes>, mut count: usize) {
    while count > 0 {
        let Some(front) = queue.front_mut() else {
            return;
        };
        if count < front.len() {
            front.advance(count);
            return;
        }
        count -= front.len();
        queue.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_writes_advance_across_pieces() {
        let mut queue: VecDeque<Bytes> = [&b"abc"[..], b"\n", b"de"]
            .into_iter()
            .map(Bytes::from_static)
            .collect();
        advance(&mut queue, 2);
        assert_eq!(queue.front().map(|b| &b[..]), Some(&b"c"[..]));
        advance(&mut queue, 2);
        assert_eq!(queue.len(), 1);
        assert_eq!(&queue[0][..], b"de");
        advance(&mut queue, 2);
        assert!(queue.is_empty());
    }
}
