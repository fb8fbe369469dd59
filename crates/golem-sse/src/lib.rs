//! A bounded, incremental Server-Sent Events parser.
//!
//! Two kinds of client in this workspace read `text/event-stream` bodies: the
//! MCP streamable-HTTP transport (`golem-mcp`, where each JSON-RPC message is
//! the `data` of one event) and the model providers (`golem-openai`,
//! `golem-anthropic`, whose streamed answers are events). They share this one
//! parser. [`SseParser`] turns a body's byte chunks, split wherever the network
//! split them, into [`SseEvent`]s, following the "event stream interpretation"
//! rules of the WHATWG HTML standard, with two deliberate differences that suit
//! a protocol client better than a browser:
//!
//! - Invalid UTF-8 in a value we keep (`data`, `event`, `id`) is an error
//!   rather than being replaced by U+FFFD: a JSON message with replaced bytes
//!   would be silently corrupt. Comments, `retry` and unknown fields are not
//!   kept, so their bytes are not checked.
//! - Memory is bounded: a server that never ends a line or an event gets
//!   [`SseError::TooLarge`] instead of our whole heap.
//!
//! It does **not** do I/O, reconnection or JSON: callers feed it bytes and
//! decide what an event means.
//!
//! ```
//! use golem_sse::SseParser;
//!
//! let mut parser = SseParser::new(1 << 20);
//! parser.feed(b"event: ping\ndata: {\"a\"")?;
//! assert_eq!(parser.next_event(), None);
//! parser.feed(b":1}\n\n")?;
//! let event = parser.next_event().expect("one complete event");
//! assert_eq!(event.event.as_deref(), Some("ping"));
//! assert_eq!(event.data, r#"{"a":1}"#);
//! # Ok::<(), golem_sse::SseError>(())
//! ```
//!
//! The parser does no I/O, so it is trivially cancel safe: all state lives in
//! the struct, and a chunk is either consumed whole or the parser has failed.

use std::collections::VecDeque;
use std::time::Duration;

/// The UTF-8 byte order mark, skipped once at the start of a stream.
const UTF8_BOM: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// How far a single line may exceed `max_event_bytes` (together with the
/// event's data buffered so far). It leaves room for the field name, colon
/// and space of a `data:` line whose value is exactly at the limit, so that
/// the limit on a line is never tighter than the limit on the data it carries.
const LINE_SLACK: usize = 64;

/// Capacity of the partial-line buffer kept after a line is done with. One
/// huge line split across many chunks must not pin its buffer for the rest of
/// a long-lived stream.
const KEEP_LINE_CAPACITY: usize = 64 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field, or `None` when it was absent or empty, which the
    /// standard defines as the default type `"message"`.
    pub event: Option<String>,
    /// The `data` lines joined with `\n` (no trailing newline). May be empty:
    /// a lone `data:` line is an event with empty data, which MCP servers send
    /// to prime a resumable stream with an id.
    pub data: String,
    /// The last-event-id buffer when the event was dispatched: the most recent
    /// `id` field of this stream, not necessarily one in this event. `None` if
    /// never set or reset with an empty `id`.
    pub id: Option<String>,
}

/// Why a stream cannot be parsed. After either, the stream is beyond use:
/// [`SseParser::feed`] keeps returning the same error until
/// [`SseParser::finish`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    /// A line, or an event's data, is larger than the configured limit.
    #[error("server-sent event larger than the limit of {limit} bytes")]
    TooLarge {
        /// The `max_event_bytes` the parser was created with.
        limit: usize,
    },
    /// A `data`, `event` or `id` value is not valid UTF-8.
    #[error("server-sent event stream is not valid UTF-8")]
    InvalidUtf8,
}

/// Where the stream is with respect to its optional leading BOM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bom {
    /// At the start of the stream, this many bytes of a BOM seen so far
    /// (a chunk may end inside it).
    Matching(usize),
    /// Past the start: any later BOM is content.
    Done,
}

/// An incremental, bounded `text/event-stream` parser.
///
/// Feed it the body chunk by chunk, then take the complete events with
/// [`next_event`](Self::next_event). Events completed by one
/// [`feed`](Self::feed) are queued until taken; the caller should drain the
/// queue between chunks, which keeps it bounded by the size of one chunk.
#[derive(Debug)]
pub struct SseParser {
    /// Limit on the current event's data, and (plus [`LINE_SLACK`]) on a line
    /// plus the data buffered before it.
    max_event_bytes: usize,
    /// The start of a line whose end has not arrived yet. Complete lines
    /// inside a chunk are parsed in place and never copied here.
    line: Vec<u8>,
    /// The data buffer: every `data` value of the current event, each
    /// followed by `\n`. Its allocation becomes the event's `data`.
    data: String,
    /// The event type buffer.
    event_type: String,
    /// The last-event-id buffer: set by `id` fields, kept across events.
    id_buffer: String,
    /// The id committed by the last dispatch (the standard's "last event ID
    /// string"), which is what a reconnection must send as `Last-Event-ID`.
    last_event_id: String,
    /// The last valid `retry` field.
    retry: Option<Duration>,
    /// Complete events not yet taken.
    events: VecDeque<SseEvent>,
    /// Leading BOM detection.
    bom: Bom,
    /// The previous chunk ended with CR: an LF starting the next chunk
    /// belongs to the same line ending.
    after_cr: bool,
    /// Set by the first error, returned by every later feed.
    failed: Option<SseError>,
}

impl SseParser {
    /// A parser for one stream that refuses events whose data exceeds
    /// `max_event_bytes` bytes, and lines longer than that (plus a small
    /// constant for the field name).
    pub fn new(max_event_bytes: usize) -> Self {
        Self {
            max_event_bytes,
            line: Vec::new(),
            data: String::new(),
            event_type: String::new(),
            id_buffer: String::new(),
            last_event_id: String::new(),
            retry: None,
            events: VecDeque::new(),
            bom: Bom::Matching(0),
            after_cr: false,
            failed: None,
        }
    }

    /// Feeds the next chunk of the body (any split, even inside a UTF-8
    /// sequence or between CR and LF); complete events are queued.
    ///
    /// On error the buffered line and event are dropped (events completed
    /// before the bad line stay queued), and every later call fails the same
    /// way until [`finish`](Self::finish).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), SseError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let result = self.parse_chunk(chunk);
        if let Err(error) = &result {
            self.failed = Some(error.clone());
            self.line = Vec::new();
            self.data = String::new();
            self.event_type.clear();
        }
        result
    }

    /// Pops the oldest complete event, if any.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.events.pop_front()
    }

    /// The id to send as `Last-Event-ID` when resuming: the last-event-id
    /// buffer as of the last dispatch, `None` if empty.
    ///
    /// An `id` line of an event whose blank line has not arrived yet does not
    /// count: resuming after it would tell the server we have an event we
    /// never received.
    pub fn last_event_id(&self) -> Option<&str> {
        (!self.last_event_id.is_empty()).then_some(self.last_event_id.as_str())
    }

    /// After a failed [`feed`](Self::feed): the id of the event that could
    /// not be read, if its own `id` field arrived before the failure.
    /// Resuming from it skips that event, which a resumable server would
    /// otherwise send again, and fail again. `None` when no feed failed, or
    /// when the event carried no id of its own (it would have inherited the
    /// last one, so there is no way past it by id).
    pub fn failed_event_id(&self) -> Option<&str> {
        let own_id = !self.id_buffer.is_empty() && self.id_buffer != self.last_event_id;
        (self.failed.is_some() && own_id).then_some(self.id_buffer.as_str())
    }

    /// The reconnection delay last set by a valid `retry` field.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// Ends the stream: drops the incomplete event and partial line, as the
    /// standard requires. Queued events, [`last_event_id`](Self::last_event_id)
    /// and [`retry`](Self::retry) are kept, and the parser is ready for a
    /// resumed stream (which may start with a BOM again), even after an error.
    pub fn finish(&mut self) {
        self.line.clear();
        self.shrink_line();
        self.data = String::new();
        self.event_type.clear();
        self.id_buffer.clone_from(&self.last_event_id);
        self.bom = Bom::Matching(0);
        self.after_cr = false;
        self.failed = None;
    }

    /// Splits `chunk` into lines and interprets each complete one.
    fn parse_chunk(&mut self, chunk: &[u8]) -> Result<(), SseError> {
        let mut rest = chunk;
        if let Bom::Matching(matched) = self.bom {
            rest = self.skip_bom(matched, rest);
        }
        if rest.is_empty() {
            // Nothing else to do, and a pending CR must survive empty chunks.
            return Ok(());
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(after_lf) = rest.strip_prefix(b"\n") {
                rest = after_lf;
            }
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', rest) {
            let (content, terminator) = rest.split_at(end);
            let mut next = &terminator[1..];
            if terminator[0] == b'\r' {
                match next.first() {
                    Some(b'\n') => next = &next[1..],
                    Some(_) => {}
                    // The LF of a CRLF may start the next chunk.
                    None => self.after_cr = true,
                }
            }
            if self.line.is_empty() {
                // The common case: the whole line is in this chunk.
                self.check_line(content.len())?;
                self.interpret_line(content)?;
            } else {
                self.check_line(self.line.len() + content.len())?;
                self.line.extend_from_slice(content);
                let line = std::mem::take(&mut self.line);
                let result = self.interpret_line(&line);
                self.line = line;
                self.line.clear();
                self.shrink_line();
                result?;
            }
            rest = next;
        }
        if !rest.is_empty() {
            self.check_line(self.line.len() + rest.len())?;
            self.line.extend_from_slice(rest);
        }
        Ok(())
    }

    /// Consumes the part of a leading BOM at the start of `chunk`, given that
    /// `matched` bytes of it were seen before; returns the rest. If the stream
    /// turns out not to start with a BOM, the bytes taken for one are put back
    /// as the start of the first line.
    fn skip_bom<'a>(&mut self, mut matched: usize, chunk: &'a [u8]) -> &'a [u8] {
        let mut taken = 0;
        while let Some(&expected) = UTF8_BOM.get(matched) {
            match chunk.get(taken) {
                None => {
                    self.bom = Bom::Matching(matched);
                    return &[];
                }
                Some(&byte) if byte == expected => {
                    matched += 1;
                    taken += 1;
                }
                Some(_) => {
                    self.line.extend_from_slice(&UTF8_BOM[..matched]);
                    self.bom = Bom::Done;
                    return &chunk[taken..];
                }
            }
        }
        self.bom = Bom::Done;
        &chunk[taken..]
    }

    /// Fails if a line of `line_len` bytes, with the data already buffered,
    /// would exceed the memory bound. Checked before a line is parsed and
    /// whenever part of one is buffered; since a prefix is never longer than
    /// its line, where a chunk boundary falls cannot change the outcome.
    fn check_line(&self, line_len: usize) -> Result<(), SseError> {
        let limit = self.max_event_bytes.saturating_add(LINE_SLACK);
        if line_len.saturating_add(self.data.len()) > limit {
            return Err(self.too_large());
        }
        Ok(())
    }

    /// The error for exceeding the bound, naming the configured limit.
    fn too_large(&self) -> SseError {
        SseError::TooLarge {
            limit: self.max_event_bytes,
        }
    }

    /// Gives back the memory of an exceptionally long partial line.
    fn shrink_line(&mut self) {
        if self.line.capacity() > KEEP_LINE_CAPACITY {
            self.line = Vec::new();
        }
    }

    /// Interprets one complete line, without its line ending.
    fn interpret_line(&mut self, line: &[u8]) -> Result<(), SseError> {
        if line.is_empty() {
            self.dispatch();
            return Ok(());
        }
        let (name, value) = match memchr::memchr(b':', line) {
            // A comment, which servers send as keep-alives.
            Some(0) => return Ok(()),
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            // A line without a colon is a field name with an empty value.
            None => (line, &[][..]),
        };
        match name {
            b"data" => {
                let value = utf8(value)?;
                // The event's data would be the buffer plus this value (the
                // buffer's newlines separate lines; the last one is dropped).
                if self.data.len() + value.len() > self.max_event_bytes {
                    return Err(self.too_large());
                }
                if self.data.is_empty() {
                    // Most events have one data line: allocate it exactly,
                    // since this allocation is handed over as the event's data.
                    self.data.reserve_exact(value.len() + 1);
                }
                self.data.push_str(value);
                self.data.push('\n');
            }
            b"event" => {
                let value = utf8(value)?;
                self.event_type.clear();
                self.event_type.push_str(value);
            }
            // An id containing NUL is ignored (it could not be sent back
            // in a header), and falls through to the catch-all.
            b"id" if memchr::memchr(0, value).is_none() => {
                let value = utf8(value)?;
                self.id_buffer.clear();
                self.id_buffer.push_str(value);
            }
            // A retry that is not all digits is ignored, an empty one too.
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = Some(Duration::from_millis(parse_millis(value)));
            }
            // Unknown fields are ignored; field names are case-sensitive.
            _ => {}
        }
        Ok(())
    }

    /// Handles a blank line: commits the id, then emits the event if it has
    /// data.
    fn dispatch(&mut self) {
        // The standard commits the id even when no event is dispatched, so an
        // id-only block (`id: 7` then a blank line) moves the resume point.
        if self.last_event_id != self.id_buffer {
            self.last_event_id.clone_from(&self.id_buffer);
        }
        if self.data.is_empty() {
            self.event_type.clear();
            return;
        }
        self.data.pop();
        let data = std::mem::take(&mut self.data);
        let event = (!self.event_type.is_empty()).then(|| std::mem::take(&mut self.event_type));
        let id = (!self.id_buffer.is_empty()).then(|| self.id_buffer.clone());
        self.events.push_back(SseEvent { event, data, id });
    }
}

/// Checks that a kept value is UTF-8. Values never contain CR or LF, and a
/// multi-byte sequence never contains either, so checking line by line is the
/// same as checking the whole stream.
fn utf8(value: &[u8]) -> Result<&str, SseError> {
    std::str::from_utf8(value).map_err(|_| SseError::InvalidUtf8)
}

/// Reads a `retry` value already known to be ASCII digits, saturating rather
/// than failing on absurd values (a delay of half a billion years is as good
/// as never).
fn parse_millis(digits: &[u8]) -> u64 {
    digits.iter().fold(0u64, |millis, digit| {
        millis
            .saturating_mul(10)
            .saturating_add(u64::from(digit - b'0'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MAX: usize = 1 << 20;

    /// Feeds the chunks in order and returns every event queued, panicking on
    /// an error.
    fn parse_chunks(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut parser = SseParser::new(MAX);
        let mut events = Vec::new();
        for chunk in chunks {
            parser.feed(chunk).expect("a valid stream");
            events.extend(std::iter::from_fn(|| parser.next_event()));
        }
        parser.finish();
        events.extend(std::iter::from_fn(|| parser.next_event()));
        events
    }

    fn parse(input: &str) -> Vec<SseEvent> {
        parse_chunks(&[input.as_bytes()])
    }

    fn message(data: &str) -> SseEvent {
        SseEvent {
            event: None,
            data: data.to_owned(),
            id: None,
        }
    }

    fn with_id(data: &str, id: &str) -> SseEvent {
        SseEvent {
            id: Some(id.to_owned()),
            ..message(data)
        }
    }

    #[test]
    fn the_id_of_an_event_too_large_to_read_is_where_to_skip_it_from() {
        let mut parser = SseParser::new(8);
        parser.feed(b"id: 1\ndata: ok\n\n").expect("small");
        assert_eq!(parser.failed_event_id(), None, "nothing failed");
        // Its own id, then data over the limit.
        assert!(parser.feed(b"id: 2\ndata: far too long\n\n").is_err());
        assert_eq!(parser.failed_event_id(), Some("2"));
        assert_eq!(parser.last_event_id(), Some("1"), "not received whole");

        // An event with no id of its own inherits the last one: no way past it.
        let mut parser = SseParser::new(8);
        parser.feed(b"id: 1\ndata: ok\n\n").expect("small");
        assert!(parser.feed(b"data: far too long\n\n").is_err());
        assert_eq!(parser.failed_event_id(), None);
    }

    #[test]
    fn lf_line_endings() {
        assert_eq!(
            parse("data: one\n\ndata: two\n\n"),
            [message("one"), message("two")]
        );
    }

    #[test]
    fn crlf_line_endings() {
        assert_eq!(
            parse("data: one\r\n\r\ndata: two\r\n\r\n"),
            [message("one"), message("two")]
        );
    }

    #[test]
    fn cr_line_endings() {
        assert_eq!(
            parse("data: one\r\rdata: two\rdata: three\r\r"),
            [message("one"), message("two\nthree")]
        );
    }

    #[test]
    fn mixed_line_endings() {
        assert_eq!(
            parse("data: a\rdata: b\ndata: c\r\n\r\r\ndata: d\n\r"),
            [message("a\nb\nc"), message("d")]
        );
    }

    #[test]
    fn cr_at_chunk_end_then_lf_is_one_line_ending() {
        // Were the LF a second line ending, "a" would be dispatched alone.
        assert_eq!(
            parse_chunks(&[b"data: a\r", b"\ndata: b\n\n"]),
            [message("a\nb")]
        );
        // Empty chunks in between do not forget the CR.
        assert_eq!(
            parse_chunks(&[b"data: a\r", b"", b"", b"\ndata: b\r", b"\n\r", b"\n"]),
            [message("a\nb")]
        );
        // A CR then anything else is a line ending on its own.
        assert_eq!(parse_chunks(&[b"data: a\r", b"\r"]), [message("a")]);
        // Only the byte right after the CR is special.
        assert_eq!(
            parse_chunks(&[b"data: a\r", b"data: b\r", b"\n", b"\n"]),
            [message("a\nb")]
        );
    }

    #[test]
    fn comments_are_ignored() {
        assert_eq!(
            parse(": keep-alive\n:\ndata: x\n: in the middle: data: y\n\n:ping\n\n"),
            [message("x")]
        );
    }

    #[test]
    fn multi_line_data_is_joined_with_newline() {
        assert_eq!(
            parse("data: {\"a\":\ndata: 1}\ndata\ndata: end\n\n"),
            [message("{\"a\":\n1}\n\nend")]
        );
    }

    #[test]
    fn event_field_sets_the_type_for_one_event() {
        assert_eq!(
            parse(
                "event: notice\ndata: a\n\ndata: b\n\nevent: x\nevent: y\ndata: c\n\nevent:\ndata: d\n\n"
            ),
            [
                SseEvent {
                    event: Some("notice".to_owned()),
                    ..message("a")
                },
                message("b"),
                SseEvent {
                    event: Some("y".to_owned()),
                    ..message("c")
                },
                message("d"),
            ]
        );
    }

    #[test]
    fn id_persists_across_events_and_empty_id_resets() {
        let mut parser = SseParser::new(MAX);
        parser
            .feed(b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\nid: 2\ndata: d\n\nid:\ndata: e\n\n")
            .expect("valid");
        let events: Vec<_> = std::iter::from_fn(|| parser.next_event()).collect();
        assert_eq!(
            events,
            [
                with_id("a", "1"),
                with_id("b", "1"),
                message("c"),
                with_id("d", "2"),
                message("e"),
            ]
        );
        assert_eq!(parser.last_event_id(), None);
    }

    #[test]
    fn last_event_id_is_committed_at_dispatch() {
        let mut parser = SseParser::new(MAX);
        assert_eq!(parser.last_event_id(), None);
        parser.feed(b"id: 1\ndata: a\n\n").expect("valid");
        assert_eq!(parser.last_event_id(), Some("1"));
        // The id of an event still in flight is not the resume point yet.
        parser.feed(b"id: 2\ndata: b\n").expect("valid");
        assert_eq!(parser.last_event_id(), Some("1"));
        parser.feed(b"\n").expect("valid");
        assert_eq!(parser.last_event_id(), Some("2"));
        // An id-only block dispatches nothing but moves the resume point.
        parser.feed(b"id: 3\n\n").expect("valid");
        assert_eq!(parser.last_event_id(), Some("3"));
        // A stream cut mid-event falls back to the committed id.
        parser.feed(b"id: 4\ndata: lost\n").expect("valid");
        parser.finish();
        assert_eq!(parser.last_event_id(), Some("3"));
        parser.feed(b"data: resumed\n\n").expect("valid");
        let events: Vec<_> = std::iter::from_fn(|| parser.next_event()).collect();
        assert_eq!(
            events,
            [
                with_id("a", "1"),
                with_id("b", "2"),
                with_id("resumed", "3")
            ]
        );
    }

    #[test]
    fn id_containing_nul_is_ignored() {
        assert_eq!(
            parse("id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\nid: \0\ndata: c\n\n"),
            [with_id("a", "1"), with_id("b", "1"), with_id("c", "1")]
        );
    }

    #[test]
    fn retry_valid_and_invalid() {
        let mut parser = SseParser::new(MAX);
        assert_eq!(parser.retry(), None);
        parser.feed(b"retry: 1500\n").expect("valid");
        assert_eq!(parser.retry(), Some(Duration::from_millis(1500)));
        for invalid in [
            &b"retry: 15s\n"[..],
            b"retry: -1\n",
            b"retry: 1.5\n",
            b"retry:  20\n",
            b"retry: \n",
            b"retry\n",
            b"retry: \xff\n",
        ] {
            parser.feed(invalid).expect("ignored, not an error");
            assert_eq!(parser.retry(), Some(Duration::from_millis(1500)));
        }
        parser.feed(b"retry:0\n").expect("valid");
        assert_eq!(parser.retry(), Some(Duration::ZERO));
        parser
            .feed(b"retry: 99999999999999999999999999\n")
            .expect("valid");
        assert_eq!(parser.retry(), Some(Duration::from_millis(u64::MAX)));
        // retry alone is not an event.
        parser.feed(b"\n").expect("valid");
        assert_eq!(parser.next_event(), None);
    }

    #[test]
    fn bom_is_skipped_at_start_only() {
        assert_eq!(parse("\u{feff}data: a\n\n"), [message("a")]);
        // Split inside the BOM.
        assert_eq!(
            parse_chunks(&[b"\xef", b"\xbb", b"\xbfdata: a\n\n"]),
            [message("a")]
        );
        // A second BOM is content: here the name of an unknown field.
        assert_eq!(parse("\u{feff}\u{feff}data: a\n\n"), []);
        // Later BOMs are content.
        assert_eq!(
            parse("data: a\n\n\u{feff}data: b\n\ndata: \u{feff}c\n\n"),
            [message("a"), message("\u{feff}c")]
        );
        // A character sharing the BOM's first bytes is content, even split.
        assert_eq!(
            parse_chunks(&[b"\xef\xbb", b"\x80: x\ndata: a\n\n"]),
            [message("a")]
        );
        assert_eq!(
            parse_chunks(&[b"\xef", b"\xbb\x80", b"\ndata: a\n\n"]),
            [message("a")]
        );
        // The bytes taken as the start of a BOM are put back: these fields
        // are named with bytes EF BB (or EF) before "data", so are unknown.
        assert_eq!(parse_chunks(&[b"\xef\xbb", b"data: x\n\n"]), []);
        assert_eq!(parse_chunks(&[b"\xef", b"data: x\n\n"]), []);
        let mut parser = SseParser::new(MAX);
        parser.feed(b"data: \xef\xbb").expect("valid so far");
        parser.feed(b"\x80\n\n").expect("valid");
        assert_eq!(parser.next_event(), Some(message("\u{fec0}")));
    }

    #[test]
    fn field_without_colon_has_empty_value() {
        assert_eq!(
            parse("data\n\nevent\ndata\ndata\n\n"),
            [message(""), message("\n")]
        );
    }

    #[test]
    fn only_one_space_is_stripped() {
        assert_eq!(
            parse("data:a\ndata: b\ndata:  c\ndata:\td\nevent:  e\nid:  f\n\n"),
            [SseEvent {
                event: Some(" e".to_owned()),
                data: "a\nb\n c\n\td".to_owned(),
                id: Some(" f".to_owned()),
            }]
        );
    }

    #[test]
    fn value_may_contain_colons() {
        assert_eq!(parse("data: a: b:c\n\n"), [message("a: b:c")]);
    }

    #[test]
    fn unknown_fields_are_ignored() {
        assert_eq!(
            parse("foo: bar\nData: x\ndata : y\n data: z\ndata: a\nx\n\n"),
            [message("a")]
        );
        // Unknown fields alone are not an event.
        assert_eq!(parse("foo: bar\n\n"), []);
    }

    #[test]
    fn empty_data_lines_are_empty_lines() {
        assert_eq!(parse("data:\n\n"), [message("")]);
        assert_eq!(parse("data: \n\n"), [message("")]);
        assert_eq!(parse("data:\ndata:\n\n"), [message("\n")]);
        assert_eq!(parse("data: a\ndata:\n\n"), [message("a\n")]);
        assert_eq!(parse("data:\ndata: a\n\n"), [message("\na")]);
    }

    #[test]
    fn blank_line_without_data_dispatches_nothing_and_resets_type() {
        assert_eq!(parse("\n\n\n"), []);
        assert_eq!(parse("event: x\n\ndata: a\n\n"), [message("a")]);
    }

    #[test]
    fn incomplete_event_is_discarded_at_finish() {
        let mut parser = SseParser::new(MAX);
        parser
            .feed(b"data: a\n\nevent: x\ndata: b\ndata: c")
            .expect("valid");
        parser.finish();
        assert_eq!(parser.next_event(), Some(message("a")));
        assert_eq!(parser.next_event(), None);
        // Nothing of it leaks into what follows.
        parser.feed(b"\ndata: d\n\n").expect("valid");
        assert_eq!(parser.next_event(), Some(message("d")));
        // A final line without its blank line is not an event either.
        assert_eq!(parse("data: a\n\ndata: b\n"), [message("a")]);
        assert_eq!(parse("data: a\n\ndata: b\r"), [message("a")]);
    }

    #[test]
    fn utf8_split_across_chunks() {
        let text = "données ✓ 𝄞";
        let bytes = format!("data: {text}\n\n").into_bytes();
        for cut in 0..=bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(parse_chunks(&[a, b]), [message(text)], "cut at {cut}");
        }
    }

    #[test]
    fn invalid_utf8_in_kept_values_is_an_error() {
        for input in [
            &b"data: \xff\n"[..],
            b"event: \xc3\n",
            b"id: \xed\xa0\x80\n",
        ] {
            let mut parser = SseParser::new(MAX);
            assert_eq!(parser.feed(input), Err(SseError::InvalidUtf8));
        }
        // Bytes that are never kept are not checked.
        assert_eq!(
            parse_chunks(&[b": \xff\nx-\xfe: \xff\nretry: \xff\nid: \xff\0\ndata: a\n\n"]),
            [message("a")]
        );
    }

    #[test]
    fn too_large_for_a_long_line_without_newline() {
        let mut parser = SseParser::new(100);
        let chunk = [b'a'; 60];
        parser.feed(b": ").expect("small so far");
        parser.feed(&chunk).expect("small so far");
        parser.feed(&chunk).expect("within the slack");
        assert_eq!(parser.feed(&chunk), Err(SseError::TooLarge { limit: 100 }));
        // The parser stays failed, and has let go of the line.
        assert_eq!(parser.feed(b"\n"), Err(SseError::TooLarge { limit: 100 }));
        assert_eq!(parser.line.capacity(), 0);
        // One huge chunk fails the same way.
        let mut parser = SseParser::new(100);
        assert_eq!(
            parser.feed(&[b'x'; 1000]),
            Err(SseError::TooLarge { limit: 100 })
        );
        // finish makes it usable for a new stream.
        parser.finish();
        parser.feed(b"data: ok\n\n").expect("valid");
        assert_eq!(parser.next_event(), Some(message("ok")));
    }

    #[test]
    fn too_large_for_many_data_lines() {
        let mut parser = SseParser::new(100);
        let mut result = Ok(());
        let mut lines = 0;
        while result.is_ok() && lines < 1000 {
            result = parser.feed(b"data: 0123456789\n");
            lines += 1;
        }
        assert_eq!(result, Err(SseError::TooLarge { limit: 100 }));
        // 9 lines make 9 * 10 + 8 = 98 bytes of data; the 10th would be 109.
        assert_eq!(lines, 10);
        assert_eq!(parser.next_event(), None);
        // The bound counts the event's data, not the stream: the same lines
        // as separate events are fine.
        let mut parser = SseParser::new(100);
        for _ in 0..1000 {
            parser.feed(b"data: 0123456789\n\n").expect("small events");
            assert_eq!(parser.next_event(), Some(message("0123456789")));
        }
    }

    #[test]
    fn data_exactly_at_the_limit_is_accepted() {
        let data = "x".repeat(100);
        let mut parser = SseParser::new(100);
        let bytes = format!("data: {data}\n\n").into_bytes();
        for byte in bytes.chunks(1) {
            parser.feed(byte).expect("at the limit");
        }
        assert_eq!(parser.next_event(), Some(message(&data)));
        // 50 + 1 + 49 = 100 bytes over two lines.
        parser
            .feed(format!("data: {}\ndata: {}\n\n", &data[..50], &data[..49]).as_bytes())
            .expect("at the limit");
        assert_eq!(parser.next_event().map(|e| e.data.len()), Some(100));
        assert_eq!(
            parser.feed(format!("data: {data}x\n").as_bytes()),
            Err(SseError::TooLarge { limit: 100 })
        );
    }

    #[test]
    fn events_before_an_error_stay_queued() {
        let mut parser = SseParser::new(MAX);
        assert_eq!(
            parser.feed(b"data: a\n\ndata: \xff\n\n"),
            Err(SseError::InvalidUtf8)
        );
        assert_eq!(parser.next_event(), Some(message("a")));
        assert_eq!(parser.next_event(), None);
    }

    // ---- Property tests ----

    /// One event as a server would write it.
    #[derive(Debug, Clone)]
    struct Written {
        event: Option<String>,
        data: String,
        /// `Some("")` resets the id.
        id: Option<String>,
        comment: bool,
        retry: Option<u32>,
    }

    /// Text that can be a value: anything but CR and LF.
    fn value_text() -> impl Strategy<Value = String> {
        "[a-z0-9 :\u{0}\t\u{feff}é✓𝄞]{0,12}"
    }

    fn written_event() -> impl Strategy<Value = Written> {
        (
            proptest::option::of(value_text()),
            // Data may span lines.
            "[a-z0-9 :\n\t\u{feff}é✓𝄞]{0,24}",
            proptest::option::of("[a-z0-9 :\t\u{feff}é✓𝄞]{0,8}"),
            any::<bool>(),
            proptest::option::of(any::<u32>()),
        )
            .prop_map(|(event, data, id, comment, retry)| Written {
                event,
                data,
                id,
                comment,
                retry,
            })
    }

    /// Serializes the events with the line ending of each line chosen by
    /// `endings`, and returns the events a correct parser must produce.
    fn serialize(
        events: &[Written],
        bom: bool,
        endings: &[u8],
    ) -> (Vec<u8>, Vec<SseEvent>, Option<u32>) {
        let mut lines: Vec<String> = Vec::new();
        let mut expected = Vec::new();
        let mut id = String::new();
        let mut retry = None;
        for written in events {
            if written.comment {
                lines.push(": keep-alive".to_owned());
            }
            if let Some(event) = &written.event {
                lines.push(format!("event: {event}"));
            }
            for line in written.data.split('\n') {
                lines.push(format!("data: {line}"));
            }
            if let Some(new_id) = &written.id {
                lines.push(format!("id: {new_id}"));
                id.clone_from(new_id);
            }
            if let Some(millis) = written.retry {
                lines.push(format!("retry: {millis}"));
                retry = Some(millis);
            }
            lines.push(String::new());
            expected.push(SseEvent {
                event: written.event.clone().filter(|event| !event.is_empty()),
                data: written.data.clone(),
                id: (!id.is_empty()).then(|| id.clone()),
            });
        }
        let mut bytes = Vec::new();
        if bom {
            bytes.extend_from_slice(&UTF8_BOM);
        }
        let mut previous_cr = false;
        for (index, line) in lines.iter().enumerate() {
            bytes.extend_from_slice(line.as_bytes());
            let mut ending = endings
                .get(index % endings.len().max(1))
                .copied()
                .unwrap_or(0)
                % 3;
            // CR then an empty line ended by LF reads as one CRLF: a real
            // server cannot mean two line endings by it, so never write it.
            if previous_cr && line.is_empty() && ending == 0 {
                ending = 1;
            }
            bytes.extend_from_slice(match ending {
                0 => b"\n",
                1 => b"\r\n",
                _ => b"\r",
            });
            previous_cr = ending == 2;
        }
        (bytes, expected, retry)
    }

    /// What a parse produced: events, the error that stopped it, and the
    /// stream-level state.
    type Outcome = (
        Vec<SseEvent>,
        Option<SseError>,
        Option<String>,
        Option<Duration>,
    );

    /// Feeds `input` cut at `cuts` (sorted, possibly repeated: empty chunks).
    fn parse_cut(input: &[u8], cuts: &[usize], max: usize) -> Outcome {
        let mut parser = SseParser::new(max);
        let mut events = Vec::new();
        let mut error = None;
        let mut start = 0;
        for &end in cuts.iter().chain(std::iter::once(&input.len())) {
            let result = parser.feed(&input[start..end]);
            events.extend(std::iter::from_fn(|| parser.next_event()));
            if let Err(e) = result {
                error = Some(e);
                break;
            }
            start = end;
        }
        parser.finish();
        events.extend(std::iter::from_fn(|| parser.next_event()));
        let id = parser.last_event_id().map(str::to_owned);
        (events, error, id, parser.retry())
    }

    fn cut_points(len: usize, picks: &[prop::sample::Index]) -> Vec<usize> {
        let mut cuts: Vec<usize> = picks.iter().map(|pick| pick.index(len + 1)).collect();
        cuts.sort_unstable();
        cuts
    }

    /// Byte soup biased towards the syntax, so that the parser's paths are
    /// all exercised.
    fn soup() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"data".to_vec()),
            Just(b"id".to_vec()),
            Just(b"event".to_vec()),
            Just(b"retry".to_vec()),
            Just(b":".to_vec()),
            Just(b" ".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b"\0".to_vec()),
            Just(b"12".to_vec()),
            Just(UTF8_BOM.to_vec()),
            Just(UTF8_BOM[..1].to_vec()),
            Just(UTF8_BOM[..2].to_vec()),
            Just("é𝄞".as_bytes().to_vec()),
            proptest::collection::vec(any::<u8>(), 1..8),
        ];
        proptest::collection::vec(piece, 0..64).prop_map(|pieces| pieces.concat())
    }

    proptest! {
        #[test]
        fn any_split_yields_the_same_events(
            events in proptest::collection::vec(written_event(), 0..8),
            bom in any::<bool>(),
            endings in proptest::collection::vec(any::<u8>(), 1..16),
            picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..24),
        ) {
            let (bytes, expected, retry) = serialize(&events, bom, &endings);
            let whole = parse_cut(&bytes, &[], MAX);
            prop_assert_eq!(&whole.0, &expected);
            prop_assert_eq!(whole.1.clone(), None);
            prop_assert_eq!(whole.3, retry.map(|millis| Duration::from_millis(u64::from(millis))));

            let cut = parse_cut(&bytes, &cut_points(bytes.len(), &picks), MAX);
            prop_assert_eq!(&cut, &whole);

            let every_byte: Vec<usize> = (1..bytes.len()).collect();
            let bytewise = parse_cut(&bytes, &every_byte, MAX);
            prop_assert_eq!(&bytewise, &whole);
        }

        #[test]
        fn arbitrary_bytes_never_panic_and_split_does_not_matter(
            bytes in prop_oneof![soup(), proptest::collection::vec(any::<u8>(), 0..256)],
            picks in proptest::collection::vec(any::<prop::sample::Index>(), 0..24),
            max in prop_oneof![0usize..48, Just(MAX)],
        ) {
            let whole = parse_cut(&bytes, &[], max);
            let cut = parse_cut(&bytes, &cut_points(bytes.len(), &picks), max);
            prop_assert_eq!(&cut, &whole);
            for event in &whole.0 {
                prop_assert!(event.data.len() <= max);
            }
        }
    }
}
