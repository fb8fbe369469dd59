//! Server processes over stdio: the misbehaving fake
//! (`testing/fake_server.rs`), pid files, and the process checks, which
//! read `/proc` and fail on a system without it rather than pass because
//! every process looks gone.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use golem_mcp::StdioConfig;

use super::polled;

/// The misbehaving stdio server of the fault tests.
pub const FAKE: &str = env!("CARGO_BIN_EXE_golem-mcp-fake-server");

/// The stdio fake in `FAKE_MODE` `mode` (its module doc lists the modes).
pub fn fake(mode: &str) -> StdioConfig {
    StdioConfig {
        env: vec![("FAKE_MODE".into(), mode.into())],
        ..StdioConfig::new(FAKE)
    }
}

/// A fresh path in the temp directory, for files a test and a server share.
pub fn scratch_path(name: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("golem-mcp-test-{}-{n}-{name}", std::process::id()))
}

/// Starts the fake server through `sh -c`, which first starts a grandchild
/// (`sleep`) and records its pid in `pid_file`.
pub fn wrapped_with_grandchild(pid_file: &Path) -> StdioConfig {
    StdioConfig {
        args: vec![
            "-c".into(),
            format!("sleep 600 & echo $! > {}; exec \"$0\"", pid_file.display()),
            FAKE.into(),
        ],
        ..StdioConfig::new("sh")
    }
}

/// The pid a pid file holds.
pub fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .expect("pid file")
        .trim()
        .parse()
        .expect("a pid")
}

/// Fails unless this system has a `/proc` to read: the process checks read
/// `/proc/<pid>/stat`, and without it every process would look gone and the
/// assertions would pass vacuously.
pub fn require_proc() {
    assert!(
        Path::new("/proc/self/stat").exists(),
        "/proc/self/stat is missing: the process checks of these tests read /proc (Linux)"
    );
}

/// Whether a process exists and is not a zombie.
pub fn process_alive(pid: u32) -> bool {
    require_proc();
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => !matches!(
            stat.rsplit(')').next().map(str::trim_start),
            Some(rest) if rest.starts_with('Z') || rest.starts_with('X')
        ),
        Err(_) => false,
    }
}

/// Whether our child `pid` has been reaped: no zombie left behind. (Only
/// meaningful for our own children, whose pids cannot be reused before we
/// reap them.) A single look: for right after an operation that promises
/// to have reaped the child before returning.
pub fn reaped(pid: u32) -> bool {
    require_proc();
    !Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether `pid` is gone within the bound (for ends that happen on a
/// background task, such as a drop). Nothing tells a process that is not
/// our child of another's end: this polls.
pub async fn until_gone(pid: u32) -> bool {
    polled(async || (!process_alive(pid)).then_some(()))
        .await
        .is_some()
}

/// The live processes whose environment holds `variable` (`NAME=value`):
/// how a test finds the servers it started (a zombie's environment reads
/// empty, so it is not counted).
pub fn processes_with(variable: &str) -> Vec<i32> {
    require_proc();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ
                    .split(|byte| *byte == 0)
                    .any(|entry| entry == variable.as_bytes())
            })
        })
        .collect()
}
