//! A pseudo-terminal for a command's stdout, so that a test sees what the
//! user's terminal would be sent ([`run_on_pty`]), or for all three of its
//! streams, so that a test can type at it too ([`Terminal`]). Linux and the
//! BSDs (`posix_openpt`). It knows nothing of `golem-mcp`.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt as _;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Instant;

use super::PATIENCE;

/// Runs `command` with its stdout on a new pseudo-terminal (so that it
/// sees a terminal: `isatty(1)` holds) and its stderr on a pipe; returns
/// its status, the bytes the terminal received and its stderr. The
/// terminal is in raw mode, so the bytes are exactly those written (no
/// `\n` made `\r\n`). Fails the test if the command runs past
/// [`PATIENCE`].
#[track_caller]
pub fn run_on_pty(mut command: Command) -> Output {
    let (master, slave) = open_raw();
    command
        .stdin(Stdio::null())
        .stdout(Stdio::from(slave))
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("the command starts");
    // The command holds our copy of the terminal's side until it is
    // dropped; the master's reads end only once no copy is left open.
    drop(command);
    let stderr = child.stderr.take().expect("a pipe");
    let errors = std::thread::spawn(move || read_all(stderr));
    let (sender, shown) = mpsc::channel();
    std::thread::spawn(move || sender.send(read_all(master)));
    let Ok(stdout) = shown.recv_timeout(PATIENCE) else {
        let _ = child.kill();
        panic!("the command still runs after {PATIENCE:?}");
    };
    let status = child.wait().expect("the command is reaped");
    let stderr = errors.join().expect("stderr is read");
    Output {
        status,
        stdout,
        stderr,
    }
}

/// Everything `source` gives until it ends; a terminal's master side ends
/// with an error (EIO) once the other side is closed.
fn read_all(mut source: impl Read) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match source.read(&mut chunk) {
            Ok(0) | Err(_) => return bytes,
            Ok(read) => bytes.extend_from_slice(&chunk[..read]),
        }
    }
}

/// A new pseudo-terminal in raw mode: its master side, and the terminal
/// side a command gets as a file.
fn open_raw() -> (File, File) {
    // SAFETY: posix_openpt takes flags and returns a new descriptor or -1.
    let fd = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY) };
    assert!(fd >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
    // SAFETY: `fd` was just opened and is owned by nothing else.
    let master = unsafe { File::from_raw_fd(fd) };
    // SAFETY: both take an open master descriptor.
    let ready = unsafe { libc::grantpt(fd) == 0 && libc::unlockpt(fd) == 0 };
    assert!(
        ready,
        "grantpt/unlockpt: {}",
        std::io::Error::last_os_error()
    );
    let mut name = [0 as libc::c_char; 128];
    // SAFETY: the buffer and its length are given; the name is written
    // NUL-terminated within it.
    let named = unsafe { libc::ptsname_r(fd, name.as_mut_ptr(), name.len()) };
    assert_eq!(named, 0, "ptsname_r");
    // SAFETY: ptsname_r wrote a NUL-terminated string into `name`.
    let path = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let slave = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(path.to_str().expect("a UTF-8 path"))
        .expect("the terminal side opens");
    raw_mode(&slave);
    (master, slave)
}

/// Turns off the terminal's processing of what is written and read, so
/// the master side reads the bytes exactly.
fn raw_mode(terminal: &File) {
    // SAFETY: termios is plain data, filled in by tcgetattr before use.
    let mut mode: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: a valid terminal descriptor and a termios to fill and apply.
    let done = unsafe {
        libc::tcgetattr(terminal.as_raw_fd(), &mut mode) == 0 && {
            libc::cfmakeraw(&mut mode);
            libc::tcsetattr(terminal.as_raw_fd(), libc::TCSANOW, &mode) == 0
        }
    };
    assert!(done, "raw mode: {}", std::io::Error::last_os_error());
}

/// A command whose stdin, stdout and stderr are one pseudo-terminal, as a
/// user's shell would start it: what it shows is collected as it comes,
/// and [`type_keys`](Terminal::type_keys) types at it. Killed and reaped
/// when dropped.
pub struct Terminal {
    child: Child,
    keys: File,
    shown: Arc<Mutex<Vec<u8>>>,
}

impl Terminal {
    /// Starts `command` on a new terminal (in raw mode: what it writes is
    /// read exactly; it sets its own mode to read keys).
    pub fn start(mut command: Command) -> Terminal {
        let (master, slave) = open_raw();
        let keys = master.try_clone().expect("the master side twice");
        command
            .stdin(Stdio::from(slave.try_clone().expect("the terminal side")))
            .stdout(Stdio::from(slave.try_clone().expect("the terminal side")))
            .stderr(Stdio::from(slave));
        let child = command.spawn().expect("the command starts");
        drop(command); // its copies of the terminal side
        let shown = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&shown);
        std::thread::spawn(move || {
            let mut master = master;
            let mut chunk = [0u8; 4096];
            while let Ok(read @ 1..) = master.read(&mut chunk) {
                sink.lock().expect("lock").extend_from_slice(&chunk[..read]);
            }
        });
        Terminal { child, keys, shown }
    }

    /// What the command showed so far, lossily decoded.
    pub fn shown(&self) -> String {
        String::from_utf8_lossy(&self.shown.lock().expect("lock")).into_owned()
    }

    /// Waits, at most [`PATIENCE`], until the command has shown `text`.
    #[track_caller]
    pub fn wait_for(&self, text: &str) {
        let started = Instant::now();
        while !self.shown().contains(text) {
            assert!(
                started.elapsed() < PATIENCE,
                "{text:?} was not shown; the terminal shows:\n{}",
                self.shown()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Types `keys` at the command.
    pub fn type_keys(&mut self, keys: &str) {
        self.keys.write_all(keys.as_bytes()).expect("typed");
    }

    /// Waits, at most [`PATIENCE`], for the command to end; its status.
    #[track_caller]
    pub fn wait(&mut self) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                started.elapsed() < PATIENCE,
                "the command still runs; the terminal shows:\n{}",
                self.shown()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
