//! `floor-bench`: the no-parse floor. It speaks just enough MCP to run the
//! benchmark, with no JSON parsing at all: requests are formatted by hand
//! into one reused buffer, replies are found by scanning for `"id":N`, and
//! the echoed text is measured by scanning for its quotes. Plain blocking
//! I/O on one thread, no async runtime. No real client can be faster
//! against the same server: it is the limit the others are compared with.
//!
//! ```text
//! floor-bench --calls N --bytes B (--url URL | -- SERVER_CMD [ARGS...])
//! ```
//!
//! Sequential `echo` calls only: one request in flight at a time is what
//! keeps it this simple, so it refuses `--concurrency` above 1,
//! `--sleep-ms` and `--clients` above 1.
//!
//! It knows only what this benchmark needs: the server's replies carry our
//! integer ids, and the echoed text has no escapes (it is all `x`). Over
//! HTTP it speaks HTTP/1.1 to `http://HOST:PORT/PATH` on one keep-alive
//! connection, reading `Content-Length` and chunked bodies (JSON or an
//! event stream: the scan does not care).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use golem_bench::{Args, Report, Stopwatch, Target};
use memchr::memmem;

const PROGRAM: &str = "floor-bench";
const PROTOCOL_VERSION: &str = "2025-11-25";
/// How long a read from the server may take before the run fails.
const READ_TIMEOUT: Duration = Duration::from_secs(60);
/// How long closing waits for a stdio server to exit before killing it.
const EXIT_WAIT: Duration = Duration::from_secs(2);
/// The most bytes one reply may have; a bound, not a tuning knob.
const MAX_REPLY: usize = 64 * 1024 * 1024;

fn main() -> ExitCode {
    let args = match Args::from_env() {
        Ok(args) => args,
        Err(problem) => return golem_bench::usage_error(PROGRAM, &problem),
    };
    if args.protocol.is_some() {
        return golem_bench::usage_error(
            PROGRAM,
            "--protocol is golem-bench's: the floor speaks the revision it chooses itself",
        );
    }
    if args.concurrency != 1 || args.sleep_ms.is_some() || args.clients != 1 {
        return golem_bench::usage_error(
            PROGRAM,
            "the floor makes sequential echo calls on one client only: \
             no --concurrency, no --sleep-ms, no --clients",
        );
    }
    let result = run(&args);
    golem_bench::finish(PROGRAM, &args, result)
}

/// One connection to the server, by hand.
trait Wire {
    /// Sends the request `message` and returns the reply carrying `id`.
    fn request(&mut self, id: u64, message: &[u8]) -> Result<&[u8], String>;
    /// Sends a notification.
    fn notify(&mut self, message: &[u8]) -> Result<(), String>;
    /// Ends the session (stdio: closes stdin and reaps the server).
    fn close(self: Box<Self>) -> Result<(), String>;
}

fn run(args: &Args) -> Result<Report, String> {
    let arguments = golem_bench::arguments_json(args.bytes);
    let mut watch = Stopwatch::start(args);
    let mut wire: Box<dyn Wire> = match &args.target {
        Target::Stdio { command, args } => Box::new(StdioWire::spawn(command, args)?),
        Target::Http { url } => Box::new(HttpWire::connect(url)?),
    };
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL_VERSION}","capabilities":{{}},"clientInfo":{{"name":"floor-bench","version":"{}"}}}}}}"#,
        env!("CARGO_PKG_VERSION")
    );
    let reply = wire.request(1, initialize.as_bytes())?;
    if memmem::find(reply, b"\"result\"").is_none() {
        return Err(format!("initialize failed: {}", excerpt(reply)));
    }
    wire.notify(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
    let reply = wire.request(
        2,
        br#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#,
    )?;
    if memmem::find(reply, br#""name":"echo""#).is_none() {
        return Err(format!(
            "the server offers no \"echo\" tool: {}",
            excerpt(reply)
        ));
    }
    watch.connected();

    // `{"jsonrpc":"2.0","id":` ID `,"method":"tools/call","params":{"name":"echo","arguments":` ARGS `}}`
    let suffix = format!(
        r#","method":"tools/call","params":{{"name":"{}","arguments":{arguments}}}}}"#,
        golem_bench::TOOL
    );
    let mut message = Vec::with_capacity(suffix.len() + 64);
    let text_marker = memmem::Finder::new(br#""text":""#);
    for call in 0..args.calls {
        let started = Instant::now();
        let id = call as u64 + 3;
        message.clear();
        message.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        push_decimal(&mut message, id);
        message.extend_from_slice(suffix.as_bytes());
        let reply = wire.request(id, &message)?;
        let length = text_marker.find(reply).and_then(|at| {
            let text = &reply[at + 8..];
            memchr::memchr(b'"', text)
        });
        watch.call(started);
        match length {
            Some(length) => golem_bench::check_length(call, length, args.bytes)?,
            None => {
                return Err(format!(
                    "call {call}: no text in the reply: {}",
                    excerpt(reply)
                ));
            }
        }
    }
    watch.calls_done();
    wire.close()?;
    Ok(watch.finish("floor", args))
}

fn push_decimal(out: &mut Vec<u8>, mut value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// Whether `message` carries the id `id`: `"id":ID` not followed by another
/// digit. A scan, not a parse: good enough for the replies of one server.
fn has_id(message: &[u8], id: u64) -> bool {
    let mut marker = Vec::with_capacity(26);
    marker.extend_from_slice(br#""id":"#);
    push_decimal(&mut marker, id);
    let mut from = 0;
    while let Some(at) = memmem::find(&message[from..], &marker) {
        let end = from + at + marker.len();
        if !message.get(end).is_some_and(u8::is_ascii_digit) {
            return true;
        }
        from = end;
    }
    false
}

fn excerpt(bytes: &[u8]) -> String {
    String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned()
}

/// A buffered reader that hands out borrowed lines and byte runs.
struct Input<R> {
    source: R,
    buffer: Vec<u8>,
    /// `buffer[start..end]` is read but not consumed.
    start: usize,
    end: usize,
}

impl<R: Read> Input<R> {
    fn new(source: R) -> Self {
        Input {
            source,
            buffer: vec![0; 64 * 1024],
            start: 0,
            end: 0,
        }
    }

    /// Reads more input, compacting or growing the buffer first.
    fn fill(&mut self) -> Result<(), String> {
        if self.start > 0 {
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buffer.len() {
            if self.buffer.len() >= MAX_REPLY {
                return Err(format!("a reply is larger than {MAX_REPLY} bytes"));
            }
            self.buffer.resize(self.buffer.len() * 2, 0);
        }
        match self.source.read(&mut self.buffer[self.end..]) {
            Ok(0) => Err("the server closed the connection".into()),
            Ok(read) => {
                self.end += read;
                Ok(())
            }
            Err(error) => Err(format!("read from the server: {error}")),
        }
    }

    /// The next run of bytes ending with `delimiter` (included), consumed.
    /// Returns the range in `buffer`, valid until the next call.
    fn until(&mut self, delimiter: &[u8]) -> Result<(usize, usize), String> {
        let mut scanned: usize = 0;
        loop {
            let unread = &self.buffer[self.start..self.end];
            // Only the new bytes, with room for a delimiter split across reads.
            let from = scanned.saturating_sub(delimiter.len() - 1);
            if let Some(at) = memmem::find(&unread[from..], delimiter) {
                let start = self.start;
                let end = start + from + at + delimiter.len();
                self.start = end;
                return Ok((start, end));
            }
            scanned = unread.len();
            self.fill()?;
        }
    }

    /// The next `length` bytes, appended to `out`.
    fn take_into(&mut self, mut length: usize, out: &mut Vec<u8>) -> Result<(), String> {
        while length > 0 {
            if self.start == self.end {
                self.fill()?;
            }
            let run = length.min(self.end - self.start);
            out.extend_from_slice(&self.buffer[self.start..self.start + run]);
            self.start += run;
            length -= run;
        }
        Ok(())
    }
}

/// Asks for a 1 MiB pipe buffer, as golem-mcp's stdio transport does; best
/// effort (`/proc/sys/fs/pipe-max-size` may forbid it).
fn widen_pipe(pipe: &impl std::os::fd::AsRawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl(F_SETPIPE_SZ) on a pipe descriptor we own changes only
    // the kernel's buffer size; on failure nothing changes.
    unsafe {
        libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, 1024 * 1024);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pipe;
}

/// A stdio server: newline-delimited messages on its stdin and stdout.
struct StdioWire {
    child: Child,
    stdin: Option<ChildStdin>,
    input: Input<ChildStdout>,
    out: Vec<u8>,
}

impl StdioWire {
    fn spawn(command: &str, args: &[String]) -> Result<Self, String> {
        let mut child = Command::new(command)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|error| format!("cannot spawn {command:?}: {error}"))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("no pipes to the server".into());
        };
        // As large as golem-mcp makes them: with the default 64 KiB, a 1 MiB
        // message crosses in sixteen writes and wake-ups, and this would
        // not be the floor at that size.
        widen_pipe(&stdin);
        widen_pipe(&stdout);
        Ok(StdioWire {
            child,
            stdin: Some(stdin),
            input: Input::new(stdout),
            out: Vec::new(),
        })
    }

    fn send(&mut self, message: &[u8]) -> Result<(), String> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("closed".into());
        };
        // One write per message: the message and its newline together.
        self.out.clear();
        self.out.extend_from_slice(message);
        self.out.push(b'\n');
        stdin
            .write_all(&self.out)
            .map_err(|error| format!("write to the server: {error}"))
    }
}

impl Wire for StdioWire {
    fn request(&mut self, id: u64, message: &[u8]) -> Result<&[u8], String> {
        self.send(message)?;
        loop {
            let (start, end) = self.input.until(b"\n")?;
            if has_id(&self.input.buffer[start..end], id) {
                return Ok(&self.input.buffer[start..end]);
            }
        }
    }

    fn notify(&mut self, message: &[u8]) -> Result<(), String> {
        self.send(message)
    }

    fn close(mut self: Box<Self>) -> Result<(), String> {
        drop(self.stdin.take());
        let deadline = Instant::now() + EXIT_WAIT;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) => return Ok(()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return Err("the server did not exit when its stdin closed".into());
                }
                Err(error) => return Err(format!("wait for the server: {error}")),
            }
        }
    }
}

/// A streamable-HTTP server over one HTTP/1.1 keep-alive connection.
struct HttpWire {
    input: Input<TcpStream>,
    stream: TcpStream,
    authority: String,
    path: String,
    session: Option<String>,
    out: Vec<u8>,
    body: Vec<u8>,
}

/// What the floor needs from a response head.
struct Head {
    status: u16,
    content_length: Option<usize>,
    chunked: bool,
    session: Option<String>,
}

impl HttpWire {
    fn connect(url: &str) -> Result<Self, String> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("{url:?}: only http:// URLs are supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(at) => (&rest[..at], &rest[at..]),
            None => (rest, "/"),
        };
        let stream = TcpStream::connect(authority)
            .map_err(|error| format!("cannot connect to {authority}: {error}"))?;
        stream
            .set_nodelay(true)
            .and_then(|()| stream.set_read_timeout(Some(READ_TIMEOUT)))
            .map_err(|error| format!("socket options: {error}"))?;
        let reader = stream
            .try_clone()
            .map_err(|error| format!("socket: {error}"))?;
        Ok(HttpWire {
            input: Input::new(reader),
            stream,
            authority: authority.to_owned(),
            path: path.to_owned(),
            session: None,
            out: Vec::new(),
            body: Vec::new(),
        })
    }

    /// Sends one request and reads the whole response into `self.body`.
    fn exchange(&mut self, method: &str, message: &[u8]) -> Result<u16, String> {
        self.out.clear();
        let head = format!(
            "{method} {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.path,
            self.authority,
            message.len()
        );
        self.out.extend_from_slice(head.as_bytes());
        if let Some(session) = &self.session {
            self.out.extend_from_slice(b"Mcp-Session-Id: ");
            self.out.extend_from_slice(session.as_bytes());
            self.out.extend_from_slice(b"\r\nMcp-Protocol-Version: ");
            self.out.extend_from_slice(PROTOCOL_VERSION.as_bytes());
            self.out.extend_from_slice(b"\r\n");
        }
        self.out.extend_from_slice(b"\r\n");
        self.out.extend_from_slice(message);
        self.stream
            .write_all(&self.out)
            .map_err(|error| format!("write to the server: {error}"))?;

        let head = self.read_head()?;
        if head.session.is_some() {
            self.session = head.session;
        }
        self.body.clear();
        if head.chunked {
            loop {
                let (start, end) = self.input.until(b"\r\n")?;
                let size = chunk_size(&self.input.buffer[start..end])?;
                if size == 0 {
                    // No trailers are expected: the empty line ends it.
                    self.input.until(b"\r\n")?;
                    break;
                }
                self.input.take_into(size, &mut self.body)?;
                self.input.until(b"\r\n")?;
            }
        } else if let Some(length) = head.content_length {
            self.input.take_into(length, &mut self.body)?;
        }
        Ok(head.status)
    }

    fn read_head(&mut self) -> Result<Head, String> {
        let (start, end) = self.input.until(b"\r\n\r\n")?;
        let text = std::str::from_utf8(&self.input.buffer[start..end])
            .map_err(|_| "a response head that is not UTF-8".to_owned())?;
        let mut lines = text.split("\r\n");
        let status = lines
            .next()
            .and_then(|line| line.split(' ').nth(1))
            .and_then(|code| code.parse().ok())
            .ok_or_else(|| format!("not an HTTP response: {text:?}"))?;
        let mut head = Head {
            status,
            content_length: None,
            chunked: false,
            session: None,
        };
        for line in lines {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                head.content_length = value.parse().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                head.chunked = value.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("mcp-session-id") {
                head.session = Some(value.to_owned());
            }
        }
        Ok(head)
    }
}

fn chunk_size(line: &[u8]) -> Result<usize, String> {
    let text = std::str::from_utf8(line).unwrap_or("");
    let digits = text.trim_end().split(';').next().unwrap_or("");
    usize::from_str_radix(digits.trim(), 16)
        .map_err(|_| format!("bad chunk size line {:?}", excerpt(line)))
}

impl Wire for HttpWire {
    fn request(&mut self, id: u64, message: &[u8]) -> Result<&[u8], String> {
        let status = self.exchange("POST", message)?;
        if status != 200 {
            return Err(format!("HTTP {status}: {}", excerpt(&self.body)));
        }
        if !has_id(&self.body, id) {
            return Err(format!("no reply with id {id} in {}", excerpt(&self.body)));
        }
        Ok(&self.body)
    }

    fn notify(&mut self, message: &[u8]) -> Result<(), String> {
        match self.exchange("POST", message)? {
            200..=299 => Ok(()),
            status => Err(format!("HTTP {status}: {}", excerpt(&self.body))),
        }
    }

    fn close(mut self: Box<Self>) -> Result<(), String> {
        if self.session.is_none() {
            return Ok(());
        }
        match self.exchange("DELETE", b"")? {
            200..=299 | 404 | 405 => Ok(()),
            status => Err(format!("DELETE: HTTP {status}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_found_whole() {
        assert!(has_id(br#"{"jsonrpc":"2.0","id":12,"result":{}}"#, 12));
        assert!(!has_id(br#"{"jsonrpc":"2.0","id":123,"result":{}}"#, 12));
        assert!(has_id(br#"{"id":123,"x":{"id":12}}"#, 12));
        assert!(!has_id(br#"{"id":"12"}"#, 12));
    }

    #[test]
    fn decimals_are_written() {
        let mut out = Vec::new();
        push_decimal(&mut out, 0);
        out.push(b' ');
        push_decimal(&mut out, 18_446_744_073_709_551_615);
        assert_eq!(out, b"0 18446744073709551615");
    }

    #[test]
    fn lines_split_across_reads_are_found() {
        let data: &[u8] = b"ab\r\ncd\r\n\r\ntail";
        // One byte per read: every delimiter is split.
        struct Trickle<'a>(&'a [u8]);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let Some((first, rest)) = self.0.split_first() else {
                    return Ok(0);
                };
                buf[0] = *first;
                self.0 = rest;
                Ok(1)
            }
        }
        let mut input = Input::new(Trickle(data));
        let (start, end) = input.until(b"\r\n").unwrap_or_default();
        assert_eq!(&input.buffer[start..end], b"ab\r\n");
        let (start, end) = input.until(b"\r\n\r\n").unwrap_or_default();
        assert_eq!(&input.buffer[start..end], b"cd\r\n\r\n");
        let mut out = Vec::new();
        assert!(input.take_into(4, &mut out).is_ok());
        assert_eq!(out, b"tail");
        assert!(input.until(b"\n").is_err());
    }

    #[test]
    fn chunk_sizes_are_hex() {
        assert_eq!(chunk_size(b"1a\r\n"), Ok(26));
        assert_eq!(chunk_size(b"0;ext=1\r\n"), Ok(0));
        assert!(chunk_size(b"zz\r\n").is_err());
    }
}
