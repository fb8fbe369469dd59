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
/// command, `n` or Enter (or a closed stdin) denies it.
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

/// The answer from stdin: `y`, `n` or `a` in either case, Enter or the
/// end of stdin for no. Other keys are ignored, and so is a whole escape
/// sequence (an arrow key's `ESC [ A` is not an `A`). Looks every 100 ms
/// whether `stopped` says the wait was dropped (a blocking read could not
/// be told).
fn key_unless(stopped: &AtomicBool) -> Option<u8> {
    loop {
        let Some(byte) = next_byte(stopped, 100)? else {
            continue; // nothing yet
        };
        match byte {
            b'y' | b'Y' | b'n' | b'N' | b'a' | b'A' => return Some(byte),
            b'\r' | b'\n' => return Some(b'n'),
            0x1b => skip_sequence(stopped)?,
            _ => {}
        }
    }
}

/// Reads the rest of an escape sequence begun by ESC: a CSI (`ESC [`, its
/// parameters, up to its final byte in `@`..`~`), an SS3 (`ESC O` and one
/// byte), or the one key an Alt press sends; what does not come within
/// 50 ms is not part of it.
fn skip_sequence(stopped: &AtomicBool) -> Option<()> {
    match next_byte(stopped, 50)? {
        Some(b'[') => {
            while let Some(byte) = next_byte(stopped, 50)? {
                if (0x40..=0x7e).contains(&byte) {
                    break;
                }
            }
        }
        Some(b'O') => {
            next_byte(stopped, 50)?;
        }
        _ => {}
    }
    Some(())
}

/// The next byte of stdin: `Some(None)` if none came within `wait_ms`,
/// `None` when stdin ended, failed, or the wait was dropped.
fn next_byte(stopped: &AtomicBool, wait_ms: i32) -> Option<Option<u8>> {
    if stopped.load(Ordering::SeqCst) {
        return None;
    }
    let mut poll = libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, its count, a timeout in milliseconds.
    let ready = unsafe { libc::poll(&mut poll, 1, wait_ms) };
    if ready < 0 {
        return None;
    }
    if ready == 0 {
        return Some(None);
    }
    let mut byte = 0u8;
    // SAFETY: reads at most one byte into a one-byte buffer.
    let read = unsafe { libc::read(libc::STDIN_FILENO, (&raw mut byte).cast(), 1) };
    (read == 1).then_some(Some(byte))
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
        // TCSAFLUSH drops what was typed before the question: a key
        // pressed while the model wrote is no answer.
        // SAFETY: stdin's descriptor and the mode to apply.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSAFLUSH, &mode) };
        KeyMode(Some(former))
    }
}

impl Drop for KeyMode {
    fn drop(&mut self) {
        if let Some(former) = &self.0 {
            // TCSAFLUSH again: what was typed after the answer (the rest
            // of a key sequence) goes neither to the next question nor to
            // a chat's next line.
            // SAFETY: stdin's descriptor and the mode it had.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSAFLUSH, former) };
        }
    }
}
