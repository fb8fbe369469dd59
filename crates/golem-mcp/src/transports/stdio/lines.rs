//! Newline framing over a byte stream, bounded and cancel safe.

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

/// How much to read at a time, and the capacity kept between messages.
const CHUNK: usize = 64 * 1024;

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
                let mut line = self.buf.split_to(newline + 1);
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
        if self.buf.capacity() > SHRINK_ABOVE && self.buf.len() < CHUNK {
            let mut small = BytesMut::with_capacity(CHUNK);
            small.extend_from_slice(&self.buf);
            self.buf = small;
        }
        // Room for the rest of a line as long as the last one, plus a
        // margin for the read. The line just handed out usually still
        // shares the old allocation, whose tail is too short for a large
        // line: a run of 1 MiB results then costs one new allocation each,
        // made before the first read, instead of filling that tail and
        // moving the line once it is full. Beyond the last line's length,
        // doubling: a longer line costs a few reallocations, not one copy
        // per chunk.
        let room = self.last_line.saturating_sub(self.buf.len()) + CHUNK / 4;
        if self.buf.capacity() - self.buf.len() < room {
            self.buf.reserve(CHUNK.max(self.buf.len()).max(room));
        }
        reader.read_buf(&mut self.buf).await
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
            buffer.fill(&mut reader).await.expect("read");
        }
        // Held, as a reply waiting for its caller is: the buffer cannot
        // reuse the allocation the line shares.
        let first = buffer.next_line(usize::MAX).ok().flatten().expect("a line");
        assert!(buffer.buf.capacity() > 0, "the old allocation has a tail");
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
        for mut reader in chunks {
            buffer.fill(&mut reader).await.expect("read");
            assert_eq!(buffer.buf.as_ptr(), allocation, "the line was moved");
        }
        let second = buffer.next_line(usize::MAX).ok().flatten().expect("a line");
        assert_eq!(second.len(), big.len() - 1);
        assert_eq!(first.len(), big.len() - 1);
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
