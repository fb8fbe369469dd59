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
        if self.buf.capacity() - self.buf.len() < CHUNK / 4 {
            // Room at once for a line as long as the last one: the line just
            // handed out usually still shares the old allocation, so this is
            // a new one, and a run of 1 MiB results then costs one
            // allocation each instead of a series of doublings that copy the
            // growing line. Beyond that, doubling: a longer line costs a few
            // reallocations, not one copy per chunk.
            let like_the_last = self.last_line.saturating_sub(self.buf.len());
            self.buf
                .reserve(CHUNK.max(self.buf.len()).max(like_the_last));
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
        // The line fills the buffer to the last byte.
        let mut buffer = LineBuffer {
            buf: BytesMut::from(&big[..]),
            ..LineBuffer::default()
        };
        // Held, as a reply waiting for its caller is: the buffer cannot
        // reuse the allocation the line shares.
        let first = buffer.next_line(usize::MAX).ok().flatten().expect("a line");
        let mut reader: &[u8] = &big[..1000];
        buffer.fill(&mut reader).await.expect("read");
        assert!(
            buffer.buf.capacity() >= big.len(),
            "room for {} bytes after the first read of the next line",
            buffer.buf.capacity()
        );
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
