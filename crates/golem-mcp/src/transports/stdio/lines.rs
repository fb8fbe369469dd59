//! Newline framing over a byte stream, bounded and cancel safe.

use std::future::poll_fn;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, ReadBuf};

/// How much to read at a time into a buffer that holds part of a line.
const CHUNK: usize = 64 * 1024;

/// How much a read takes when nothing is buffered. It lands on the stack of
/// the poll, not in a buffer of the client's, so that an idle client holds
/// no read buffer at all (with a hundred servers, a buffer each was most of
/// what the idle clients cost). Large enough for a typical message, small
/// enough for any task's stack.
const FIRST_READ: usize = 8 * 1024;

/// Capacity above which the buffer is replaced by a small one once a large
/// message has been consumed, so one 20 MiB result does not pin 20 MiB for
/// the session.
const SHRINK_ABOVE: usize = 4 * 1024 * 1024;

/// A buffer that splits a byte stream into newline-terminated lines.
///
/// All state lives here, not in a future, which is what makes reading cancel
/// safe: a read dropped half-way leaves the bytes it got in the buffer, and
/// the next read continues the same line. A line is handed out as [`Bytes`]
/// split off the buffer, without a copy.
///
/// Between messages the buffer holds no allocation: the last line takes
/// the allocation with it, and the next read goes to the stack first and
/// is copied into an allocation of its own size (a line that is still
/// incomplete gets room for the rest there, so it is never moved).
#[derive(Debug, Default)]
pub(crate) struct LineBuffer {
    buf: BytesMut,
    /// Bytes before this offset are known to hold no newline.
    scanned: usize,
    /// The length of the last line taken, newline included, at most
    /// [`SHRINK_ABOVE`]: the room a read makes for the next line.
    last_line: usize,
}

/// The next line is longer than the limit.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TooLong;

impl LineBuffer {
    /// Takes the next complete line out of the buffer (without its `\n`, and
    /// without a `\r` before it), or `None` if more input is needed.
    pub(crate) fn next_line(&mut self, max_len: usize) -> Result<Option<Bytes>, TooLong> {
        match memchr::memchr(b'\n', &self.buf[self.scanned..]) {
            Some(offset) => {
                let newline = self.scanned + offset;
                // The last line buffered takes the allocation with it,
                // leaving none behind while the server is quiet.
                let mut line = if newline + 1 == self.buf.len() {
                    std::mem::take(&mut self.buf)
                } else {
                    self.buf.split_to(newline + 1)
                };
                self.scanned = 0;
                self.last_line = (newline + 1).min(SHRINK_ABOVE);
                line.truncate(newline);
                if line.last() == Some(&b'\r') {
                    line.truncate(newline - 1);
                }
                if line.len() > max_len {
                    return Err(TooLong);
                }
                Ok(Some(line.freeze()))
            }
            None => {
                self.scanned = self.buf.len();
                if self.buf.len() > max_len {
                    return Err(TooLong);
                }
                Ok(None)
            }
        }
    }

    /// How many bytes are buffered beyond the lines already taken.
    pub(crate) fn partial_len(&self) -> usize {
        self.buf.len()
    }

    /// Reads more input. Returns the number of bytes read, 0 at end of input.
    ///
    /// Cancel safe: the only await is the read itself, which either delivers
    /// bytes into the buffer or does nothing.
    pub(crate) async fn fill(
        &mut self,
        reader: &mut (impl AsyncRead + Unpin),
    ) -> std::io::Result<usize> {
        if self.buf.capacity() == 0 {
            return poll_fn(|cx| self.poll_first_read(cx, reader)).await;
        }
        if self.buf.capacity() > SHRINK_ABOVE && self.buf.len() < CHUNK {
            let mut small = BytesMut::with_capacity(CHUNK);
            small.extend_from_slice(&self.buf);
            self.buf = small;
        }
        let room = self.room(self.buf.len());
        if self.buf.capacity() - self.buf.len() < room {
            self.buf.reserve(CHUNK.max(self.buf.len()).max(room));
        }
        reader.read_buf(&mut self.buf).await
    }

    /// The room a read needs with `buffered` bytes of a line in hand: the
    /// rest of a line as long as the last one, plus a margin for the read.
    /// A run of 1 MiB results then costs one allocation each, made at the
    /// first read of each, instead of a buffer that fills up and moves its
    /// line. Beyond the last line's length, doubling: a longer line costs a
    /// few reallocations, not one copy per chunk.
    fn room(&self, buffered: usize) -> usize {
        self.last_line.saturating_sub(buffered) + CHUNK / 4
    }

    /// A read into a buffer without an allocation: onto the stack, then
    /// into an allocation made for what came. Whole lines get exactly their
    /// size; the start of a longer one gets the room [`fill`](Self::fill)
    /// would reserve, so the rest of it is read in place.
    fn poll_first_read(
        &mut self,
        cx: &mut Context<'_>,
        reader: &mut (impl AsyncRead + Unpin),
    ) -> Poll<std::io::Result<usize>> {
        let mut stack = [MaybeUninit::<u8>::uninit(); FIRST_READ];
        let mut read = ReadBuf::uninit(&mut stack);
        ready!(Pin::new(reader).poll_read(cx, &mut read))?;
        let got = read.filled();
        if !got.is_empty() {
            let capacity = if got.len() < FIRST_READ && got.last() == Some(&b'\n') {
                got.len()
            } else {
                got.len() + CHUNK.max(self.room(got.len()))
            };
            let mut buf = BytesMut::with_capacity(capacity);
            buf.extend_from_slice(got);
            self.buf = buf;
        }
        Poll::Ready(Ok(got.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(chunks: &[&[u8]], max_len: usize) -> Result<Vec<Vec<u8>>, TooLong> {
        let mut buffer = LineBuffer::default();
        let mut out = Vec::new();
        for chunk in chunks {
            let mut reader: &[u8] = chunk;
            while buffer.fill(&mut reader).await.expect("in-memory read") > 0 {}
            while let Some(line) = buffer.next_line(max_len)? {
                out.push(line.to_vec());
            }
        }
        Ok(out)
    }

    #[tokio::test]
    async fn splits_lines_across_chunk_boundaries() {
        let lines = lines_of(&[b"ab", b"c\nde", b"f\r\n", b"\n", b"g"], 100)
            .await
            .expect("within the limit");
        assert_eq!(lines, vec![b"abc".to_vec(), b"def".to_vec(), b"".to_vec()]);
    }

    #[tokio::test]
    async fn an_idle_buffer_holds_no_allocation() {
        // One line per read, two lines in one read, and a line completed
        // by a second read: whatever way the last line came, taking it
        // leaves the buffer without memory of its own.
        for chunks in [
            &[&b"{}\n"[..]][..],
            &[b"{\"a\":1}\n{\"b\":2}\r\n"],
            &[b"{\"a\":", b"1}\n"],
        ] {
            let mut buffer = LineBuffer::default();
            for chunk in chunks {
                let mut reader: &[u8] = chunk;
                buffer.fill(&mut reader).await.expect("in-memory read");
            }
            while buffer.next_line(100).expect("within the limit").is_some() {}
            assert_eq!(buffer.partial_len(), 0);
            assert_eq!(buffer.buf.capacity(), 0, "{chunks:?} left an allocation");
        }
        // The start of the next line is kept, of course.
        let mut buffer = LineBuffer::default();
        let mut reader: &[u8] = b"{}\n{";
        buffer.fill(&mut reader).await.expect("in-memory read");
        assert_eq!(buffer.next_line(100), Ok(Some(Bytes::from_static(b"{}"))));
        assert_eq!(buffer.next_line(100), Ok(None));
        assert_eq!(buffer.partial_len(), 1);
    }

    #[tokio::test]
    async fn a_line_longer_than_the_first_read_arrives_whole() {
        // Its start is read onto the stack and copied; the rest is read
        // in place, and later lines are split as usual.
        let long: Vec<u8> = (0..3 * FIRST_READ + 7)
            .map(|i| b'a' + (i % 26) as u8)
            .collect();
        let input = [&long[..], b"\nnext\n"].concat();
        let lines = lines_of(&[&input], usize::MAX).await.expect("no limit");
        assert_eq!(lines, vec![long, b"next".to_vec()]);
    }

    #[tokio::test]
    async fn refuses_a_line_over_the_limit_before_its_end_arrives() {
        assert!(lines_of(&[b"0123456789"], 5).await.is_err());
        assert!(lines_of(&[b"0123456789\n"], 5).await.is_err());
        assert!(lines_of(&[b"01234\n"], 5).await.is_ok());
    }

    #[tokio::test]
    async fn a_line_as_long_as_the_last_one_gets_its_room_in_one_allocation() {
        let big = [vec![b'x'; 1024 * 1024], b"\n".to_vec()].concat();
        // The first line arrives a pipe's worth at a time, as from a server,
        // and grows the buffer past its end.
        let mut buffer = LineBuffer::default();
        for mut reader in big.chunks(CHUNK) {
            while !reader.is_empty() {
                buffer.fill(&mut reader).await.expect("read");
            }
        }
        // Held, as a reply waiting for its caller is: the line takes the
        // allocation, and the buffer is left without one.
        let first = buffer.next_line(usize::MAX).ok().flatten().expect("a line");
        assert_eq!(first.len(), big.len() - 1);
        assert_eq!(buffer.buf.capacity(), 0, "the line took the allocation");
        let mut chunks = big.chunks(CHUNK);
        let mut reader = chunks.next().expect("a chunk");
        buffer.fill(&mut reader).await.expect("read");
        assert!(
            buffer.buf.capacity() >= big.len(),
            "room for {} bytes after the first read of the next line",
            buffer.buf.capacity()
        );
        // Every later read lands in that same allocation, the last one
        // included: the line is never moved.
        let allocation = buffer.buf.as_ptr();
        while !reader.is_empty() {
            buffer.fill(&mut reader).await.expect("read");
            assert_eq!(buffer.buf.as_ptr(), allocation, "the line was moved");
        }
        for mut reader in chunks {
            while !reader.is_empty() {
                buffer.fill(&mut reader).await.expect("read");
                assert_eq!(buffer.buf.as_ptr(), allocation, "the line was moved");
            }
        }
        let second = buffer.next_line(usize::MAX).ok().flatten().expect("a line");
        assert_eq!(second.len(), big.len() - 1);
    }

    #[tokio::test]
    async fn memory_returns_to_the_chunk_size_after_a_large_line() {
        let big = vec![b'x'; 8 * 1024 * 1024];
        let mut buffer = LineBuffer::default();
        let mut reader: &[u8] = &big;
        while buffer.fill(&mut reader).await.expect("read") > 0 {}
        let mut reader: &[u8] = b"\nsmall\n";
        buffer.fill(&mut reader).await.expect("read");
        let first = buffer.next_line(usize::MAX).ok().flatten().expect("a line");
        assert_eq!(first.len(), big.len());
        drop(first);
        let second = buffer.next_line(usize::MAX).ok().flatten().expect("a line");
        assert_eq!(&second[..], b"small");
        let mut reader: &[u8] = b"";
        buffer.fill(&mut reader).await.expect("read");
        assert!(buffer.buf.capacity() <= SHRINK_ABOVE);
    }
}
