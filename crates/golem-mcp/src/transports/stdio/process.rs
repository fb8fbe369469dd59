//! The server process: its process group, its exit, and how it is ended.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use tokio::process::{Child, ChildStdin};
use tokio::sync::{Mutex, oneshot, watch};

/// How long closing a stdio server waits at each step before escalating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShutdownTimeouts {
    /// After closing the server's stdin (the polite way to ask an MCP stdio
    /// server to exit), how long to wait before sending SIGTERM.
    pub after_eof: Duration,
    /// After SIGTERM, how long to wait before SIGKILL.
    pub after_sigterm: Duration,
}

impl Default for ShutdownTimeouts {
    /// One second each: servers that honour EOF exit in milliseconds, and a
    /// stuck one is dead within two seconds.
    fn default() -> Self {
        ShutdownTimeouts {
            after_eof: Duration::from_secs(1),
            after_sigterm: Duration::from_secs(1),
        }
    }
}

/// A spawned server, leader of its own process group.
///
/// Dropping it without a completed [`shutdown`](Self::shutdown) SIGKILLs the
/// whole group at once: that is the last line of defence against orphans
/// (for example when the runtime is torn down mid-shutdown).
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Child,
    /// The process group id, which is the leader's pid.
    group: Option<libc::pid_t>,
    status: Option<ExitStatus>,
    /// Set once the whole group has been dealt with.
    pub(super) finished: bool,
}

impl ServerProcess {
    /// Takes ownership of a child spawned with `process_group(0)`.
    pub(crate) fn new(child: Child) -> Self {
        let group = child.id().and_then(|pid| libc::pid_t::try_from(pid).ok());
        ServerProcess {
            child,
            group,
            status: None,
            finished: false,
        }
    }

    /// The leader's pid, which is also the group id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.group.and_then(|group| u32::try_from(group).ok())
    }

    /// Waits for the leader to exit, then kills what is left of its group.
    /// Cancel safe.
    pub(crate) async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = self.child.wait().await?;
        self.status = Some(status);
        // The server is gone; its helpers go with it, right away: the group
        // id is only guaranteed to be ours while a member lives, so the
        // group is signalled now and never again (see `signal_group`).
        self.signal_group(libc::SIGKILL);
        self.group = None;
        Ok(status)
    }

    /// Waits at most `limit` for the leader to exit.
    pub(crate) async fn wait_for(&mut self, limit: Duration) -> Option<ExitStatus> {
        match tokio::time::timeout(limit, self.wait()).await {
            Ok(Ok(status)) => Some(status),
            Ok(Err(_)) | Err(_) => None,
        }
    }

    /// Ends the server: close stdin and wait `after_eof`, then SIGTERM to the
    /// group and wait `after_sigterm`, then SIGKILL; reaps the leader and
    /// finally SIGKILLs whatever is left of the group (grandchildren started
    /// by wrappers such as `npx` or `sh -c`).
    ///
    /// Bounded by `after_eof + after_sigterm` plus the time the kernel takes
    /// to deliver SIGKILL.
    pub(crate) async fn shutdown(
        &mut self,
        stdin: Option<ChildStdin>,
        timeouts: ShutdownTimeouts,
    ) -> Option<ExitStatus> {
        drop(stdin);
        let mut status = self.wait_for(timeouts.after_eof).await;
        if status.is_none() {
            self.signal_group(libc::SIGTERM);
            status = self.wait_for(timeouts.after_sigterm).await;
        }
        if status.is_none() {
            self.signal_group(libc::SIGKILL);
            // Bounded even for a process stuck in uninterruptible sleep: the
            // runtime reaps it later if it ever dies.
            status = self.wait_for(AFTER_SIGKILL).await;
        }
        self.signal_group(libc::SIGKILL);
        self.finished = true;
        status
    }

    /// Sends `signal` to every process of the group. Errors are ignored: the
    /// only expected one is ESRCH, "the group is already gone".
    ///
    /// The group id is the leader's pid. Until the leader is reaped, its
    /// zombie keeps that id reserved, so the signal can only reach our group.
    /// Once `wait` has reaped it, the group is signalled one last time at
    /// once and `group` is cleared: the id could otherwise, much later, name
    /// an unrelated group.
    fn signal_group(&self, signal: libc::c_int) {
        if let Some(group) = self.group {
            // SAFETY: kill(2) takes plain integers and touches no memory of
            // ours.
            unsafe {
                libc::kill(-group, signal);
            }
        }
    }
}

/// A server process watched by a task of its own, which reaps it the moment
/// it exits (killing what is left of its group) and runs the shutdown
/// sequence when asked or when this handle is dropped.
///
/// The task is what lets the reading side, the writing side and `close` all
/// learn of the exit without sharing the child: they watch
/// [`exited`](Self::exited).
#[derive(Debug)]
pub(crate) struct Supervised {
    pid: Option<u32>,
    /// Asks the task to end the server with these timeouts. Dropping it
    /// (the transport was dropped) asks for the default sequence.
    shutdown: Mutex<Option<oneshot::Sender<ShutdownTimeouts>>>,
    /// `None` while the server runs; then its exit status (`None` inside if
    /// it could not be reaped in time).
    exited: watch::Receiver<Option<Option<ExitStatus>>>,
}

impl Supervised {
    /// Starts watching `process` on a task. Must be called within a Tokio
    /// runtime. If the runtime shuts down first, the task's end drops the
    /// process, which SIGKILLs the group.
    pub(crate) fn start(process: ServerProcess, on_drop: ShutdownTimeouts) -> Self {
        let pid = process.pid();
        let (shutdown, requested) = oneshot::channel();
        let (report, exited) = watch::channel(None);
        tokio::spawn(supervise(process, requested, on_drop, report));
        Supervised {
            pid,
            shutdown: Mutex::new(Some(shutdown)),
            exited,
        }
    }

    /// The leader's pid, which is also the group id.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// A receiver that sees the exit.
    pub(crate) fn exited(&self) -> watch::Receiver<Option<Option<ExitStatus>>> {
        self.exited.clone()
    }

    /// Waits at most `limit` for the exit; the status, if it came.
    pub(crate) async fn wait_for(&self, limit: Duration) -> Option<ExitStatus> {
        let mut exited = self.exited();
        match tokio::time::timeout(limit, exited.wait_for(Option::is_some)).await {
            Ok(Ok(status)) => status.flatten(),
            _ => None,
        }
    }

    /// Ends the server (see [`ServerProcess::shutdown`]; the caller has
    /// closed stdin already) and waits until it is done. Cancel safe and
    /// restartable: a second call waits for the same end.
    pub(crate) async fn shutdown(&self, timeouts: ShutdownTimeouts) -> Option<ExitStatus> {
        if let Some(shutdown) = self.shutdown.lock().await.take() {
            let _ = shutdown.send(timeouts);
        }
        let mut exited = self.exited();
        match exited.wait_for(Option::is_some).await {
            Ok(status) => status.flatten(),
            // The task is gone (the runtime is shutting down): the process
            // was dropped with it, which killed the group.
            Err(_) => None,
        }
    }
}

async fn supervise(
    mut process: ServerProcess,
    requested: oneshot::Receiver<ShutdownTimeouts>,
    on_drop: ShutdownTimeouts,
    report: watch::Sender<Option<Option<ExitStatus>>>,
) {
    let ended = tokio::select! {
        exited = process.wait() => Ok(exited),
        timeouts = requested => Err(timeouts.unwrap_or(on_drop)),
    };
    let status = match ended {
        Ok(exited) => {
            process.finished = true;
            exited.ok()
        }
        // Boxed: the shutdown sequence's timers would otherwise be part of
        // the task for the whole life of every server, which seldom needs
        // them.
        Err(timeouts) => Box::pin(process.shutdown(None, timeouts)).await,
    };
    report.send_replace(Some(status));
}

/// How long to wait for the leader after SIGKILL before leaving it to the
/// runtime's reaper.
const AFTER_SIGKILL: Duration = Duration::from_secs(5);

/// How long a drop waits to reap the killed leader, so it
/// does not stay a zombie.
const REAP_ON_DROP: Duration = Duration::from_millis(200);

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.signal_group(libc::SIGKILL);
        if self.status.is_some() {
            return; // reaped already
        }
        // Reap it now: this drop happens when the supervising task is
        // dropped, which is when its runtime shuts down, and then no reaper
        // runs later. SIGKILL takes effect in microseconds, so this wait is
        // short and bounded.
        let deadline = std::time::Instant::now() + REAP_ON_DROP;
        while std::time::Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(None) => std::thread::sleep(Duration::from_millis(1)),
                Ok(Some(_)) | Err(_) => return,
            }
        }
    }
}
