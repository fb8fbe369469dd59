//! The stdio transport: an MCP server as a child process speaking
//! newline-delimited JSON-RPC on its stdin and stdout.

mod lines;
mod process;
mod stderr;

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::task::JoinHandle;

use crate::error::{Error, ProcessExit, TransportError};
use crate::transport::Transport;
use process::ServerProcess;
pub use process::ShutdownTimeouts;
pub use stderr::{ServerStderr, StderrMode};

use lines::LineBuffer;

/// The default maximum size of one message, 32 MiB.
///
/// Large enough for real servers that return base64 images or files inline
/// (a 20 MiB screenshot is about 27 MiB in base64), small enough that a
/// server streaming garbage without newlines is stopped long before it hurts.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// How long to keep reading stdout after the server process exited, for a
/// grandchild that still holds the pipe open.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(100);
/// How long to wait for the exit status once stdout has closed.
const EXIT_AFTER_EOF: Duration = Duration::from_secs(1);
/// How long to wait for the stderr drain to catch up before an error is built.
const STDERR_CATCH_UP: Duration = Duration::from_millis(200);
/// How many skipped non-JSON stdout lines are kept, and how long each may be.
const SKIPPED_KEPT: usize = 8;
const SKIPPED_CHARS: usize = 200;

/// How to start a stdio server.
///
/// ```
/// use golem_mcp::StdioConfig;
///
/// let config = StdioConfig {
///     args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
///     env: vec![("LOG_LEVEL".into(), "debug".into())],
///     ..StdioConfig::new("npx")
/// };
/// assert_eq!(config.command, "npx");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioConfig {
    /// The program to run, looked up in `PATH` when it has no slash.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its working directory; `None` inherits this process's.
    pub dir: Option<PathBuf>,
    /// Environment entries added after this process's environment, which the
    /// server inherits whole; for a name given twice, the later entry wins.
    /// Passing secrets to a server is the application's decision.
    pub env: Vec<(String, String)>,
    /// What to do with the server's stderr; by default its last 64 KiB are
    /// kept for error messages.
    pub stderr: StderrMode,
    /// The longest message accepted from the server, in bytes
    /// ([`DEFAULT_MAX_MESSAGE_BYTES`] by default).
    pub max_message_bytes: usize,
    /// How long closing waits at each step before escalating.
    pub shutdown: ShutdownTimeouts,
}

impl StdioConfig {
    /// A configuration that runs `command` with no arguments and every other
    /// field at its default.
    pub fn new(command: impl Into<String>) -> Self {
        StdioConfig {
            command: command.into(),
            ..StdioConfig::default()
        }
    }

    fn validate(&self) -> Result<(), Error> {
        let invalid = |field: String, problem: &str| Error::InvalidConfig {
            operation: "spawn",
            field,
            problem: problem.to_owned(),
        };
        if self.command.trim().is_empty() {
            return Err(invalid(
                "command".into(),
                "it is empty; name the server program to run",
            ));
        }
        if self.command.contains('\0') {
            return Err(invalid("command".into(), "it contains a NUL byte"));
        }
        if let Some(index) = self.args.iter().position(|arg| arg.contains('\0')) {
            return Err(invalid(format!("args[{index}]"), "it contains a NUL byte"));
        }
        for (index, (name, value)) in self.env.iter().enumerate() {
            let field = format!("env[{index}] ({name:?})");
            if name.is_empty() {
                return Err(invalid(field, "the variable name is empty"));
            }
            if name.contains('=') {
                return Err(invalid(
                    field,
                    "the variable name contains '='; give the name and the value separately",
                ));
            }
            if name.contains('\0') || value.contains('\0') {
                return Err(invalid(field, "it contains a NUL byte"));
            }
        }
        if let Some(dir) = &self.dir
            && !dir.is_dir()
        {
            return Err(invalid(
                "dir".into(),
                &format!("{} does not exist or is not a directory", dir.display()),
            ));
        }
        if self.max_message_bytes == 0 {
            return Err(invalid("max_message_bytes".into(), "it must be at least 1"));
        }
        Ok(())
    }
}

impl Default for StdioConfig {
    fn default() -> Self {
        StdioConfig {
            command: String::new(),
            args: Vec::new(),
            dir: None,
            env: Vec::new(),
            stderr: StderrMode::default(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            shutdown: ShutdownTimeouts::default(),
        }
    }
}

/// An MCP server running as a child process, spoken to over its stdin and
/// stdout.
///
/// The transport owns the process: [`close`](Transport::close) ends it
/// (closing stdin, then SIGTERM, then SIGKILL to its whole process group, see
/// [`ShutdownTimeouts`]), and so does dropping the transport: a drop inside a
/// Tokio runtime runs the same sequence on a task, without blocking; outside
/// a runtime, or if the runtime shuts down first, the group gets SIGKILL at
/// once. The server runs in a process group of its own, so servers started
/// through wrappers (`npx`, `uvx`, `sh -c`) leave no grandchild behind.
///
/// Stdout lines that are not JSON objects (log lines printed by mistake, a
/// common server bug) are skipped with a warning; the last few are kept and
/// shown when the server dies. A message longer than
/// [`StdioConfig::max_message_bytes`] fails the read and closes the
/// transport.
#[derive(Debug)]
pub struct StdioTransport {
    command: String,
    stdin: Option<ChildStdin>,
    /// The message being written, kept here so that a cancelled send is
    /// completed by the next one instead of leaving half a line on the pipe.
    unsent: Vec<u8>,
    unsent_from: usize,
    stdout: ChildStdout,
    lines: LineBuffer,
    /// `None` only after the drop handed it to a shutdown task.
    process: Option<ServerProcess>,
    stderr: ServerStderr,
    stderr_task: Option<JoinHandle<()>>,
    skipped: VecDeque<String>,
    max_message_bytes: usize,
    shutdown: ShutdownTimeouts,
    /// Set once stdout reached its end (seen by a read done while writing).
    stdout_closed: bool,
    /// Set once the transport can no longer carry messages.
    ended: Option<Ended>,
}

#[derive(Debug, Clone)]
enum Ended {
    Exited(ProcessExit),
    TooLarge,
    Closed,
}

impl StdioTransport {
    /// Starts the server. Must be called within a Tokio runtime (with I/O
    /// and time enabled).
    ///
    /// Fails with [`Error::InvalidConfig`] naming the field for a malformed
    /// configuration (empty command, an `env` name that is empty or contains
    /// `=`, a missing `dir`), and with [`Error::Spawn`] naming the command
    /// when it cannot be started (not found, not executable).
    pub fn spawn(config: StdioConfig) -> Result<Self, Error> {
        config.validate()?;
        let spawn_error = |source: io::Error| Error::Spawn {
            command: config.command.clone(),
            source,
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(spawn_error(io::Error::other(
                "StdioTransport::spawn must be called within a Tokio runtime",
            )));
        }
        let mut command = tokio::process::Command::new(&config.command);
        command
            .args(&config.args)
            .envs(config.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match config.stderr {
                StderrMode::Tail(_) => Stdio::piped(),
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Discard => Stdio::null(),
            })
            .process_group(0);
        if let Some(dir) = &config.dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().map_err(spawn_error)?;
        let missing = |stream: &str| {
            spawn_error(io::Error::other(format!(
                "no pipe for the server's {stream}"
            )))
        };
        let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
        widen_pipe(&stdin);
        widen_pipe(&stdout);
        let (stderr, stderr_task) = match (config.stderr, child.stderr.take()) {
            (StderrMode::Tail(limit), Some(pipe)) => {
                let (stderr, task) = ServerStderr::drain(pipe, limit);
                (stderr, Some(task))
            }
            _ => (ServerStderr::default(), None),
        };
        tracing::debug!(command = %config.command, pid = ?child.id(), "mcp: spawned stdio server");
        Ok(StdioTransport {
            command: config.command,
            stdin: Some(stdin),
            unsent: Vec::new(),
            unsent_from: 0,
            stdout,
            lines: LineBuffer::default(),
            process: Some(ServerProcess::new(child)),
            stderr,
            stderr_task,
            skipped: VecDeque::new(),
            max_message_bytes: config.max_message_bytes,
            shutdown: config.shutdown,
            stdout_closed: false,
            ended: None,
        })
    }

    /// The server's stderr tail. The handle stays valid after the transport
    /// is moved into a client or dropped.
    pub fn stderr(&self) -> ServerStderr {
        self.stderr.clone()
    }

    /// The server's process id (also its process group id), while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(ServerProcess::pid)
    }

    fn check_open(&self) -> Result<(), TransportError> {
        match &self.ended {
            None => Ok(()),
            Some(Ended::Exited(exit)) => Err(TransportError::ProcessExited(exit.clone())),
            Some(Ended::TooLarge) => Err(TransportError::MessageTooLarge {
                limit: self.max_message_bytes,
            }),
            Some(Ended::Closed) => Err(TransportError::Closed),
        }
    }

    /// Writes the queued bytes. Cancel safe: progress is recorded after
    /// every partial write.
    async fn flush_unsent(&mut self) -> Result<(), TransportError> {
        if self.unsent_from >= self.unsent.len() {
            return Ok(());
        }
        let Some((mut pipes, unsent, unsent_from)) = self.split_for_writing() else {
            return Err(TransportError::Closed);
        };
        let result = pipes.write(unsent, &[], unsent_from).await;
        self.after_write(result).await
    }

    /// The pipes for a write, and the queue of unsent bytes with its
    /// progress, borrowed side by side; `None` once stdin is closed.
    fn split_for_writing(&mut self) -> Option<(Pipes<'_>, &mut Vec<u8>, &mut usize)> {
        let stdin = self.stdin.as_mut()?;
        let pipes = Pipes {
            stdin,
            lines: &mut self.lines,
            stdout: &mut self.stdout,
            stdout_closed: &mut self.stdout_closed,
            max_message_bytes: self.max_message_bytes,
        };
        Some((pipes, &mut self.unsent, &mut self.unsent_from))
    }

    /// Turns a write's failure into the transport's error.
    async fn after_write(&mut self, result: Result<(), WriteStop>) -> Result<(), TransportError> {
        match result {
            Ok(()) => Ok(()),
            Err(WriteStop::Gone) => Err(self.server_gone().await),
            Err(WriteStop::Failed(error)) => Err(error),
        }
    }

    /// The server closed its end: collects its exit status and stderr tail,
    /// and makes every later operation fail the same way.
    async fn server_gone(&mut self) -> TransportError {
        let status = match self.process.as_mut() {
            Some(process) => process.wait_for(EXIT_AFTER_EOF).await,
            None => None,
        };
        let stderr_captured = self.stderr_task.is_some();
        if let Some(task) = self.stderr_task.as_mut() {
            // Let the drain reach the end of what the server wrote, so the
            // error carries its last words. A finished task is forgotten: a
            // join handle must not be awaited twice.
            if tokio::time::timeout(STDERR_CATCH_UP, task).await.is_ok() {
                self.stderr_task = None;
            }
        }
        let exit = ProcessExit {
            status,
            stderr_tail: self.stderr.tail(),
            stderr_captured,
            skipped_stdout: self.skipped.iter().cloned().collect(),
        };
        tracing::debug!(command = %self.command, %exit, "mcp: stdio server gone");
        self.ended = Some(Ended::Exited(exit.clone()));
        TransportError::ProcessExited(exit)
    }

    /// The server sent more than the limit: stop it, since the rest of the
    /// oversized line cannot be skipped without reading it.
    async fn refuse_oversized(&mut self) -> TransportError {
        tracing::warn!(command = %self.command, limit = self.max_message_bytes, "mcp: message too large; closing the stdio transport");
        self.ended = Some(Ended::TooLarge);
        self.stdin = None;
        if let Some(process) = self.process.as_mut() {
            process.terminate(self.shutdown).await;
        }
        TransportError::MessageTooLarge {
            limit: self.max_message_bytes,
        }
    }
}

/// The pipe size asked for on Linux (the default is 64 KiB): a large message
/// then crosses in a few writes and wake-ups instead of dozens. The kernel
/// allocates pipe pages as they fill, so small messages cost nothing more.
#[cfg(target_os = "linux")]
const PIPE_BYTES: libc::c_int = 1024 * 1024;

/// Asks for a larger pipe buffer; best effort (an unprivileged process may be
/// limited by `/proc/sys/fs/pipe-max-size`, and other systems lack the call).
fn widen_pipe(pipe: &impl std::os::fd::AsRawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: fcntl(F_SETPIPE_SZ) on a pipe descriptor we own changes only
    // the kernel's buffer size; on failure nothing changes.
    unsafe {
        libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, PIPE_BYTES);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pipe;
}

/// Whether a stdout line can be a JSON-RPC message: a JSON object. Anything
/// else is a stray log line.
fn looks_like_message(line: &[u8]) -> bool {
    line.iter().find(|byte| !byte.is_ascii_whitespace()) == Some(&b'{')
}

fn remember_skipped(skipped: &mut VecDeque<String>, command: &str, line: &[u8]) {
    if line.iter().all(u8::is_ascii_whitespace) {
        return; // blank lines are harmless framing noise
    }
    let text = String::from_utf8_lossy(line);
    let shown: String = text.chars().take(SKIPPED_CHARS).collect();
    tracing::warn!(command = %command, line = %shown, "mcp: skipped a non-JSON line on the server's stdout");
    if skipped.len() == SKIPPED_KEPT {
        skipped.pop_front();
    }
    skipped.push_back(shown);
}

/// Why a write stopped before its end.
enum WriteStop {
    /// The server closed its stdin: it is gone.
    Gone,
    /// Any other failure.
    Failed(TransportError),
}

/// The pipes a write needs, borrowed from the transport field by field.
struct Pipes<'t> {
    stdin: &'t mut ChildStdin,
    lines: &'t mut LineBuffer,
    stdout: &'t mut ChildStdout,
    stdout_closed: &'t mut bool,
    max_message_bytes: usize,
}

impl Pipes<'_> {
    /// Writes `first` then `second`, from `*written` bytes into the two
    /// (progress is recorded after every partial write: cancel safe).
    ///
    /// While the pipe to the server is full, the server's output is read
    /// into the line buffer (up to the message limit), so a server that
    /// answers before it reads on, say a large answer to an abandoned
    /// request, cannot deadlock against us.
    async fn write(
        &mut self,
        first: &[u8],
        second: &[u8],
        written: &mut usize,
    ) -> Result<(), WriteStop> {
        let total = first.len() + second.len();
        while *written < total {
            let slices = if *written < first.len() {
                [IoSlice::new(&first[*written..]), IoSlice::new(second)]
            } else {
                [
                    IoSlice::new(&second[*written - first.len()..]),
                    IoSlice::new(&[]),
                ]
            };
            let may_read =
                !*self.stdout_closed && self.lines.partial_len() <= self.max_message_bytes;
            let result = tokio::select! {
                biased;
                result = self.stdin.write_vectored(&slices) => result,
                filled = self.lines.fill(&mut *self.stdout), if may_read => {
                    match filled {
                        Ok(0) => *self.stdout_closed = true,
                        Ok(_) => {}
                        Err(source) => {
                            return Err(WriteStop::Failed(TransportError::Io {
                                context: "read from the server's stdout",
                                source,
                            }));
                        }
                    }
                    continue;
                }
            };
            match result {
                Ok(0) => return Err(WriteStop::Gone),
                Ok(count) => *written += count,
                Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {
                    return Err(WriteStop::Gone);
                }
                Err(source) => {
                    return Err(WriteStop::Failed(TransportError::Io {
                        context: "write to the server's stdin",
                        source,
                    }));
                }
            }
        }
        Ok(())
    }
}

/// A message being written from the caller's buffer. Dropped before it is
/// settled (its `send` was cancelled), it queues the part not yet written,
/// newline included, so the message still reaches the server whole.
struct UnsentTail<'m, 'q> {
    message: &'m [u8],
    written: usize,
    queue: &'q mut Vec<u8>,
    settled: bool,
}

impl Drop for UnsentTail<'_, '_> {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        if self.written < self.message.len() {
            self.queue.extend_from_slice(&self.message[self.written..]);
            self.queue.push(b'\n');
        } else if self.written == self.message.len() {
            self.queue.push(b'\n');
        }
    }
}

impl Transport for StdioTransport {
    /// Writes the message and a newline to the server's stdin, after what
    /// is left of earlier messages.
    ///
    /// Cancel safe: once polled, the message is delivered whole, in order,
    /// by this call or the next `send` or `read` (what a dropped call had not
    /// written yet is queued when it is dropped).
    async fn send(&mut self, message: &[u8]) -> Result<(), TransportError> {
        self.check_open()?;
        if self.unsent_from < self.unsent.len() {
            // Earlier bytes are still on their way: queue behind them.
            self.unsent.extend_from_slice(message);
            self.unsent.push(b'\n');
            return self.flush_unsent().await;
        }
        self.unsent.clear();
        self.unsent_from = 0;
        let Some((mut pipes, queue, _)) = self.split_for_writing() else {
            return Err(TransportError::Closed);
        };
        // Written straight from the caller's buffer, with no copy; if this
        // future is dropped part-way, the guard queues the rest.
        let mut unsent = UnsentTail {
            message,
            written: 0,
            queue,
            settled: false,
        };
        let result = pipes
            .write(unsent.message, b"\n", &mut unsent.written)
            .await;
        // Written, or the server is gone: nothing is left to deliver.
        unsent.settled = true;
        drop(unsent);
        self.after_write(result).await
    }

    /// Reads the next line that is a JSON object from the server's stdout.
    ///
    /// Cancel safe: input stays in the transport's buffer, so a line half
    /// read when the future is dropped is completed by the next `read`.
    async fn read(&mut self) -> Result<&[u8], TransportError> {
        self.check_open()?;
        // A message whose send was dropped half-way is finished first: the
        // answer awaited may be the answer to it.
        self.flush_unsent().await?;
        let line = loop {
            match self.lines.next_line(self.max_message_bytes) {
                Err(lines::TooLong) => return Err(self.refuse_oversized().await),
                Ok(Some(range)) => {
                    let line = self.lines.line(range.clone());
                    if looks_like_message(line) {
                        break range;
                    }
                    remember_skipped(&mut self.skipped, &self.command, line);
                    continue;
                }
                Ok(None) => {}
            }
            if self.stdout_closed {
                return Err(self.server_gone().await);
            }
            let filled = match self.process.as_mut() {
                Some(process) if process.status().is_none() => {
                    tokio::select! {
                        biased;
                        filled = self.lines.fill(&mut self.stdout) => filled,
                        // The server exited: keep reading what it left in
                        // the pipe; its status is now recorded.
                        _ = process.wait() => continue,
                    }
                }
                // The server has exited, but a grandchild may still hold
                // stdout open: read what is there without waiting for it.
                _ => tokio::time::timeout(DRAIN_AFTER_EXIT, self.lines.fill(&mut self.stdout))
                    .await
                    .unwrap_or(Ok(0)),
            };
            match filled {
                Ok(0) => {
                    self.stdout_closed = true;
                    if self.lines.partial_len() > 0 {
                        tracing::debug!("mcp: the server's stdout ended inside a line");
                    }
                    return Err(self.server_gone().await);
                }
                Ok(_) => {}
                Err(source) => {
                    return Err(TransportError::Io {
                        context: "read from the server's stdout",
                        source,
                    });
                }
            }
        };
        Ok(self.lines.line(line))
    }

    /// Ends the server (see [`ShutdownTimeouts`] for the bound) and reaps it.
    ///
    /// Cancel safe in the sense that matters: if dropped half-way, the
    /// process group is still killed when the transport is dropped.
    async fn close(&mut self) -> Result<(), TransportError> {
        if self.ended.is_none() {
            self.ended = Some(Ended::Closed);
        }
        let stdin = self.stdin.take();
        if let Some(process) = self.process.as_mut() {
            let status = process.shutdown(stdin, self.shutdown).await;
            tracing::debug!(command = %self.command, ?status, "mcp: stdio server closed");
        }
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout(STDERR_CATCH_UP, task).await;
        }
        Ok(())
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        let Some(process) = self.process.take() else {
            return;
        };
        if process.is_finished() {
            return;
        }
        let stdin = self.stdin.take();
        let timeouts = self.shutdown;
        // The polite sequence takes up to seconds: run it on a task rather
        // than block whoever dropped us. Without a runtime, the process's own
        // drop sends SIGKILL to the group.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let mut process = process;
                process.shutdown(stdin, timeouts).await;
            });
        }
    }
}
