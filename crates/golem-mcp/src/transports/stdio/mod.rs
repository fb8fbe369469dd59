//! The stdio transport: an MCP server as a child process speaking
//! newline-delimited JSON-RPC on its stdin and stdout.
//!
//! `config.rs` says how to start the server; `writer.rs` is the write side;
//! this module spawns the server and is the read side; `process.rs` owns the
//! process group; `stderr.rs` drains stderr into a tail, and
//! `stderr_lines.rs` cuts it into lines for the application.

mod config;
mod lines;
mod process;
mod stderr;
mod stderr_lines;
mod writer;

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::{Mutex as StdMutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::FutureExt as _;
use tokio::process::ChildStdout;
use tokio::sync::{Mutex, Notify, OnceCell, watch};
use tokio::task::JoinHandle;

use crate::error::Error;
use crate::wire::transport::{Inbound, Outgoing, Peer, Transport};
use crate::wire::transport_error::{ProcessExit, TransportError};
pub use config::{DEFAULT_MAX_MESSAGE_BYTES, StdioConfig};
pub(crate) use config::{check_command, check_env_entry};
use lines::LineBuffer;
pub use process::ShutdownTimeouts;
use process::{ServerProcess, Supervised};
pub use stderr::{ServerStderr, StderrMode};
pub use stderr_lines::{StderrEvent, StderrLines};
use writer::{WriteStop, Writer};

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

/// An MCP server running as a child process, spoken to over its stdin and
/// stdout.
///
/// The transport owns the process: [`close`](Transport::close) ends it
/// (closing stdin, then SIGTERM, then SIGKILL to its whole process group, see
/// [`ShutdownTimeouts`]), and so does dropping the transport: the same
/// sequence runs on a task, without blocking; if the runtime shuts down
/// first, the group gets SIGKILL at once. The server runs in a process group
/// of its own, so servers started through wrappers (`npx`, `uvx`, `sh -c`)
/// leave no grandchild behind, and the group is killed as soon as the
/// server itself exits.
///
/// Writing and reading are independent: each has its own lock, so a server
/// that stops reading its input while it writes (or the other way round)
/// never stalls the other direction. Stdout lines that are not JSON objects
/// (log lines printed by mistake, a common server bug) are skipped with a
/// warning; the last few are kept and shown when the server dies. A message
/// longer than [`StdioConfig::max_message_bytes`] fails the read and ends
/// the server, since the rest of that line cannot be skipped reliably.
#[derive(Debug)]
pub struct StdioTransport {
    /// How the server was started (its command names it in logs and
    /// errors): how [`Transport::reopen`] starts it again.
    config: StdioConfig,
    writer: Mutex<Writer>,
    reader: Mutex<Reader>,
    process: Supervised,
    stderr: ServerStderr,
    stderr_task: Mutex<Option<JoinHandle<()>>>,
    skipped: StdMutex<VecDeque<String>>,
    /// How the server ended, worked out once for both sides.
    exit: OnceCell<ProcessExit>,
    /// Set once the transport can no longer carry messages.
    ended: StdMutex<Option<ProcessEnd>>,
    /// Notified by `close`, so that a write stuck on a full pipe or a read
    /// waiting for output gives way.
    closing: Notify,
}

/// The read side: the server's stdout and what was read of it.
#[derive(Debug)]
struct Reader {
    stdout: ChildStdout,
    lines: LineBuffer,
    exited: watch::Receiver<Option<Option<ExitStatus>>>,
    exit: ExitSignal,
    stdout_closed: bool,
}

/// Resolves once the server has exited. It is kept across reads: polling
/// it again while it waits is cheap, where a new wait per read registered
/// and unregistered a waiter for every message (about 600 instructions of
/// a small call's 14,500; keeping one saves about 340, by callgrind).
/// Fused: once it has fired it stays pending (also when the supervisor is
/// gone without a status), so the reader never spins on it.
struct ExitSignal(Pin<Box<dyn Future<Output = ()> + Send>>);

impl ExitSignal {
    fn new(mut exited: watch::Receiver<Option<Option<ExitStatus>>>) -> Self {
        ExitSignal(Box::pin(
            async move {
                let _ = exited.wait_for(Option::is_some).await;
            }
            .fuse(),
        ))
    }
}

impl fmt::Debug for ExitSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExitSignal")
    }
}

#[derive(Debug, Clone)]
enum ProcessEnd {
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
        for name in &config.env_remove {
            command.env_remove(name);
        }
        command
            .args(&config.args)
            .envs(config.env.iter().map(|(name, value)| (name, value)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match config.stderr {
                StderrMode::Tail(_) | StderrMode::Lines { .. } => Stdio::piped(),
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
            (StderrMode::Lines { tail }, Some(pipe)) => {
                let (stderr, task) = ServerStderr::drain_lines(pipe, tail);
                (stderr, Some(task))
            }
            _ => (ServerStderr::default(), None),
        };
        tracing::debug!(
            command = %config.command,
            pid = child.id().unwrap_or_default(),
            "mcp: spawned stdio server"
        );
        let process = Supervised::start(ServerProcess::new(child), config.shutdown);
        let exited = process.exited();
        Ok(StdioTransport {
            config,
            writer: Mutex::new(Writer::new(stdin)),
            reader: Mutex::new(Reader {
                stdout,
                lines: LineBuffer::default(),
                exit: ExitSignal::new(exited.clone()),
                exited,
                stdout_closed: false,
            }),
            process,
            stderr,
            stderr_task: Mutex::new(stderr_task),
            skipped: StdMutex::new(VecDeque::new()),
            exit: OnceCell::new(),
            ended: StdMutex::new(None),
            closing: Notify::new(),
        })
    }

    /// The server's stderr tail, and its lines in [`StderrMode::Lines`]
    /// ([`ServerStderr::lines`]). The handle stays valid after the transport
    /// is moved into a client or dropped.
    pub fn stderr(&self) -> ServerStderr {
        self.stderr.clone()
    }

    /// The server's process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    fn ended(&self) -> MutexGuard<'_, Option<ProcessEnd>> {
        self.ended.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn check_open(&self) -> Result<(), TransportError> {
        match &*self.ended() {
            None => Ok(()),
            Some(ProcessEnd::Exited(exit)) => Err(TransportError::ProcessExited(exit.clone())),
            Some(ProcessEnd::TooLarge) => Err(TransportError::MessageTooLarge {
                limit: self.config.max_message_bytes,
            }),
            Some(ProcessEnd::Closed) => Err(TransportError::Closed),
        }
    }

    /// The server closed its end: collects its exit status and stderr tail
    /// (once, for both sides), and makes every later operation fail the
    /// same way.
    async fn server_gone(&self) -> TransportError {
        let exit = self
            .exit
            .get_or_init(|| async {
                let status = self.process.wait_for(EXIT_AFTER_EOF).await;
                let stderr_captured = {
                    let mut task = self.stderr_task.lock().await;
                    let captured = task.is_some();
                    // Let the drain reach the end of what the server wrote,
                    // so the error carries its last words. A finished task
                    // is forgotten: a join handle must not be awaited twice.
                    if let Some(drain) = task.as_mut()
                        && tokio::time::timeout(STDERR_CATCH_UP, drain).await.is_ok()
                    {
                        *task = None;
                    }
                    captured
                };
                let skipped = self.skipped.lock().unwrap_or_else(PoisonError::into_inner);
                ProcessExit {
                    status,
                    stderr_tail: self.stderr.tail(),
                    stderr_captured,
                    skipped_stdout: skipped.iter().cloned().collect(),
                }
            })
            .await
            .clone();
        tracing::debug!(command = %self.config.command, %exit, "mcp: stdio server gone");
        let mut ended = self.ended();
        if ended.is_none() {
            *ended = Some(ProcessEnd::Exited(exit.clone()));
        }
        TransportError::ProcessExited(exit)
    }

    /// The server sent more than the limit: stop it, since the rest of the
    /// oversized line cannot be skipped without reading it. Returns once
    /// the server is gone (within the shutdown timeouts).
    async fn refuse_oversized(&self) -> TransportError {
        tracing::warn!(
            command = %self.config.command,
            limit = self.config.max_message_bytes,
            "mcp: message too large; closing the stdio transport"
        );
        *self.ended() = Some(ProcessEnd::TooLarge);
        self.closing.notify_waiters();
        if let Ok(mut writer) = self.writer.try_lock() {
            writer.close();
        }
        self.process
            .shutdown(ShutdownTimeouts {
                after_eof: Duration::ZERO,
                ..self.config.shutdown
            })
            .await;
        TransportError::MessageTooLarge {
            limit: self.config.max_message_bytes,
        }
    }

    fn remember_skipped(&self, line: &[u8]) {
        let mut skipped = self.skipped.lock().unwrap_or_else(PoisonError::into_inner);
        remember_skipped(&mut skipped, &self.config.command, line);
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

/// Locks `mutex`, without the cost of a lock future when nobody holds it
/// (the usual case: one reader, and sends that seldom overlap). It cannot
/// jump the queue: Tokio hands a released mutex straight to the first task
/// waiting, so `try_lock` fails while any task waits, and this waits too.
async fn lock_soon<T>(mutex: &Mutex<T>) -> tokio::sync::MutexGuard<'_, T> {
    match mutex.try_lock() {
        Ok(guard) => guard,
        Err(_) => mutex.lock().await,
    }
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

impl Transport for StdioTransport {
    fn peer(&self) -> Peer {
        Peer::pipe()
    }

    /// Writes the message and a newline to the server's stdin, after what
    /// is left of earlier messages. Concurrent sends take turns, first come
    /// first served; none waits for a read.
    ///
    /// Cancel safe: once it has started writing, the message is delivered
    /// whole, in order, by this call or the next `send` (what a dropped call
    /// had not written yet stays queued).
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        self.check_open()?;
        // Only the body is kept across the awaits: the rest of the message
        // is for HTTP, and it would make every send's future larger.
        let body = message.into_body();
        let mut writer = lock_soon(&self.writer).await;
        // Watch for a close before checking for one, so none is missed (a
        // `Notified` sees `notify_waiters` from its creation on); a close that
        // came while this send waited for its turn wins.
        let closing = self.closing.notified();
        tokio::pin!(closing);
        self.check_open()?;
        match writer.write_line(body, closing).await {
            Ok(()) => Ok(()),
            Err(WriteStop::Gone) => {
                drop(writer);
                Err(Box::pin(self.server_gone()).await)
            }
            Err(WriteStop::Closed) => {
                Err(self.check_open().err().unwrap_or(TransportError::Closed))
            }
            Err(WriteStop::Failed(source)) => Err(TransportError::Io {
                context: "write to the server's stdin",
                source,
            }),
        }
    }

    /// Reads the next line that is a JSON object from the server's stdout.
    /// A `close` ends the server, and with it a pending `recv` (within the
    /// shutdown bound).
    ///
    /// Cancel safe: input stays in the transport's buffer, so a line half
    /// read when the future is dropped is completed by the next `recv`.
    async fn recv(&self) -> Result<Inbound, TransportError> {
        // A server found gone by a send may have written answers before it
        // went: they are read to the end of its output (where the loop
        // below meets its exit again), not thrown away.
        match self.check_open() {
            Err(error) if !matches!(error, TransportError::ProcessExited(_)) => return Err(error),
            _ => {}
        }
        let mut reader = lock_soon(&self.reader).await;
        let Reader {
            stdout,
            lines,
            exited,
            exit,
            stdout_closed,
        } = &mut *reader;
        loop {
            match lines.next_line(self.config.max_message_bytes) {
                Err(lines::TooLong) => return Err(Box::pin(self.refuse_oversized()).await),
                Ok(Some(line)) if looks_like_message(&line) => return Ok(Inbound::Message(line)),
                Ok(Some(line)) => {
                    self.remember_skipped(&line);
                    continue;
                }
                Ok(None) => {}
            }
            if *stdout_closed {
                return Err(Box::pin(self.server_gone()).await);
            }
            let filled = if exited.borrow().is_none() {
                tokio::select! {
                    biased;
                    filled = lines.fill(stdout) => filled,
                    // The server exited: keep reading what it left in the
                    // pipe; its status is now recorded.
                    () = exit.0.as_mut() => continue,
                }
            } else {
                // The server has exited, but a grandchild may still hold
                // stdout open: read what is there without waiting for it.
                Box::pin(tokio::time::timeout(DRAIN_AFTER_EXIT, lines.fill(stdout)))
                    .await
                    .unwrap_or(Ok(0))
            };
            match filled {
                Ok(0) => {
                    *stdout_closed = true;
                    if lines.partial_len() > 0 {
                        tracing::debug!("mcp: the server's stdout ended inside a line");
                    }
                    return Err(Box::pin(self.server_gone()).await);
                }
                Ok(_) => {}
                Err(source) => {
                    return Err(TransportError::Io {
                        context: "read from the server's stdout",
                        source,
                    });
                }
            }
        }
    }

    /// Spawns the same command again, with the same configuration (a
    /// restart, ADR 0026).
    fn reopen(&self) -> Option<Result<Self, TransportError>> {
        Some(
            StdioTransport::spawn(self.config.clone())
                .map_err(|error| TransportError::Other(Box::new(error))),
        )
    }

    /// Ends the server (see [`ShutdownTimeouts`] for the bound) and reaps it.
    /// A send under way gives way at once with [`TransportError::Closed`]; a
    /// receive ends with the server.
    ///
    /// Cancel safe in the sense that matters: if dropped half-way, calling
    /// it again finishes the job, and dropping the transport ends the
    /// server's process group anyway.
    async fn close(&self) -> Result<(), TransportError> {
        {
            let mut ended = self.ended();
            if ended.is_none() {
                *ended = Some(ProcessEnd::Closed);
            }
        }
        self.closing.notify_waiters();
        // End of input: the polite way to ask a stdio server to exit. The
        // writer gives way at once (it was notified), so this lock is short.
        let stdin = self.writer.lock().await.take_stdin();
        drop(stdin);
        let status = self.process.shutdown(self.config.shutdown).await;
        match status {
            Some(status) => {
                tracing::debug!(command = %self.config.command, %status, "mcp: stdio server closed")
            }
            None => tracing::debug!(
                command = %self.config.command,
                "mcp: stdio server closed its pipes; not waiting for its exit"
            ),
        }
        if let Some(task) = self.stderr_task.lock().await.take() {
            let _ = tokio::time::timeout(STDERR_CATCH_UP, task).await;
        }
        Ok(())
    }
}
