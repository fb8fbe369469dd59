//! Asking at the terminal whether a tool call may run: the server, the
//! tool and its arguments on one line (escaped, cut), then `Run it? [y]es /
//! [n]o / [a]lways for this tool`, answered by one key. Stdin leaves
//! canonical mode (and echo) only while the key is awaited, and gets its
//! mode back when the answer comes or the wait is dropped (Ctrl-C). It
//! knows nothing of the policy that decided to ask.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use golem_agent::Decision;

use crate::show::{self, Output};

/// Asks whether `tool` of `server` may run with `arguments`; the answer
/// `y` approves this call, `a` every call of the tool for the rest of the
/// run, anything else (or a closed stdin) denies it.
pub async fn approval(output: &Output, server: &str, tool: &str, arguments: &str) -> Decision {
    output.say(&show::call_started(server, tool, arguments));
    output.question("Run it? [y]es / [n]o / [a]lways for this tool: ");
    let (decision, word) = match read_key().await {
        Some(b'y' | b'Y') => (Decision::Approve, "yes"),
        Some(b'a' | b'A') => (Decision::ApproveTool, "always"),
        _ => (Decision::Deny("the user said no".into()), "no"),
    };
    output.answer(word);
    decision
}

/// One key from stdin, read as it is typed; `None` when stdin ends or
/// cannot be read.
async fn read_key() -> Option<u8> {
    let _mode = KeyMode::enter();
    let stop = Stop(Arc::new(AtomicBool::new(false)));
    let stopped = Arc::clone(&stop.0);
    tokio::task::spawn_blocking(move || key_unless(&stopped))
        .await
        .ok()
        .flatten()
}

/// Reads one byte from stdin, looking every 100 ms whether `stopped` says
/// the wait was dropped (a blocking read could not be told).
fn key_unless(stopped: &AtomicBool) -> Option<u8> {
    let mut poll = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    while !stopped.load(Ordering::SeqCst) {
        // SAFETY: one valid pollfd, its count, a timeout in milliseconds.
        let ready = unsafe { libc::poll(&mut poll, 1, 100) };
        if ready < 0 {
            return None;
        }
        if ready == 0 {
            continue;
        }
        let mut byte = 0u8;
        // SAFETY: reads at most one byte into a one-byte buffer.
        let read = unsafe { libc::read(libc::STDIN_FILENO, (&raw mut byte).cast(), 1) };
        return (read == 1).then_some(byte);
    }
    None
}

/// Tells the reading thread to give up when the wait is dropped.
struct Stop(Arc<AtomicBool>);

impl Drop for Stop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Stdin out of canonical mode and echo (a key is read as typed, and not
/// shown), with its former mode put back when dropped. Signals (Ctrl-C)
/// still come as signals.
struct KeyMode(Option<libc::termios>);

impl KeyMode {
    fn enter() -> KeyMode {
        // SAFETY: termios is plain data, filled in by tcgetattr before use.
        let mut mode: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: stdin's descriptor and a termios to fill.
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut mode) } != 0 {
            return KeyMode(None); // not a terminal: read as it comes
        }
        let former = mode;
        mode.c_lflag &= !(libc::ICANON | libc::ECHO);
        mode.c_cc[libc::VMIN] = 1;
        mode.c_cc[libc::VTIME] = 0;
        // SAFETY: stdin's descriptor and the mode to apply.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &mode) };
        KeyMode(Some(former))
    }
}

impl Drop for KeyMode {
    fn drop(&mut self) {
        if let Some(former) = &self.0 {
            // SAFETY: stdin's descriptor and the mode it had.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, former) };
        }
    }
}
