//! Waiting on what a running command shows, each wait bounded: a line on
//! one of its pipes ([`Lines`]), a process that is gone ([`wait_until_gone`]).
//! And signals ([`interrupt`], [`signal`]). It knows nothing of `golem-mcp` or its peers.

use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The lines of a pipe, read on a thread of their own so that waiting for
/// one can give up at a deadline. Keeps what it has seen for the failure
/// messages.
pub struct Lines {
    lines: Receiver<String>,
    seen: String,
}

impl Lines {
    /// Starts reading `pipe` (a child's stdout or stderr).
    pub fn of(pipe: impl Read + Send + 'static) -> Self {
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) if sender.send(line).is_err() => break,
                    Ok(_) => {}
                }
            }
        });
        Lines {
            lines,
            seen: String::new(),
        }
    }

    /// The first line (with its newline) that `wanted` accepts; fails the
    /// test with what came before when the pipe ends first or `within`
    /// passes.
    #[track_caller]
    pub fn wait_for(&mut self, wanted: impl Fn(&str) -> bool, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push_str(&line);
                    if wanted(&line) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no such line within {within:?}; seen: {}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => panic!("ended early: {}", self.seen),
            }
        }
    }

    /// The lines after those waited for, until the pipe ends; fails the test
    /// if it is still open after `within`.
    #[track_caller]
    pub fn rest(self, within: Duration) -> String {
        let deadline = Instant::now() + within;
        let mut rest = String::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => rest.push_str(&line),
                Err(RecvTimeoutError::Disconnected) => return rest,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("the pipe is still open after {within:?}; after the wait: {rest}")
                }
            }
        }
    }
}

/// Sends SIGINT to `child`, as Ctrl-C at a terminal does.
pub fn interrupt(child: &Child) {
    signal(child, "INT");
}

/// Sends the signal `name` (`INT`, `TERM`, `HUP`) to `child`.
pub fn signal(child: &Child, name: &str) {
    let status = std::process::Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Whether process `pid` is gone (a zombie waiting for init counts as gone).
/// Reads /proc, so first checks there is one: without it every process would
/// look gone and the check would pass vacuously.
fn is_gone(pid: &str) -> bool {
    assert!(
        std::path::Path::new("/proc/self/stat").exists(),
        "/proc/self/stat is missing: this check reads /proc (Linux)"
    );
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// Waits until process `pid` is gone; fails the test if it still runs
/// after `within` (the kernel delivers a SIGKILL asynchronously).
#[track_caller]
pub fn wait_until_gone(pid: &str, within: Duration) {
    let deadline = Instant::now() + within;
    while !is_gone(pid) {
        assert!(Instant::now() < deadline, "server {pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
}
