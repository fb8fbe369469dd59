//! What the test files of the `golem` binary share: the binary under
//! [`PATIENCE`] with a test key, the npm peers `scripts/install-peers.sh`
//! installs (a missing one fails the test), [`TempDir`] with its
//! `mcpServers` files, the waits on processes (each bounded), and a
//! pseudo-terminal for stdout (`pty`, shared with golem-mcp's tests).
#![allow(dead_code)]

#[path = "../../../golem-mcp-cli/tests/support/pty.rs"]
pub mod pty;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use golem_fake_provider::FakeProvider;
use serde_json::{Value, json};

/// How long any one command may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(90);
/// The key the tests pass; it must never be printed.
pub const KEY: &str = "sk-test-secret-0123456789";

pub fn filesystem_server() -> String {
    peer_bin("mcp-server-filesystem")
}

pub fn everything_server() -> String {
    peer_bin("mcp-server-everything")
}

/// A server installed by `scripts/install-peers.sh` (from npm).
pub fn peer_bin(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/node_modules/.bin")
        .join(name);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-peers.sh (the README's test command does)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "golem-cli-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("temp dir");
        // The filesystem server compares resolved paths.
        TempDir(path.canonicalize().expect("canonical"))
    }

    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("written");
        path
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// An mcpServers file with a filesystem server per name, each serving
    /// this directory.
    pub fn config(&self, names: &[&str]) -> PathBuf {
        let servers: serde_json::Map<String, Value> = names
            .iter()
            .map(|name| {
                (
                    (*name).to_owned(),
                    json!({"command": filesystem_server(), "args": [self.0]}),
                )
            })
            .collect();
        self.file("mcp.json", &json!({ "mcpServers": servers }).to_string())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `golem` with a key in `OPENAI_API_KEY` and no other provider variables.
/// `golem run` with the fake OpenAI-compatible model of `provider`; every
/// tool runs without asking (`--approve all`: the approval tests give
/// `--approve` again, and the last one counts).
pub fn run_on(provider: &FakeProvider) -> Command {
    let mut command = golem();
    command.args([
        "run",
        "--model",
        "openai:gpt-fake",
        "--base-url",
        provider.openai_base_url(),
        "--approve",
        "all",
    ]);
    command
}

/// `golem run` with the fake Anthropic Messages API of `provider`, its key
/// in `ANTHROPIC_API_KEY` (and no OpenAI key).
pub fn run_on_anthropic(provider: &FakeProvider) -> Command {
    let mut command = golem();
    command
        .env_remove("OPENAI_API_KEY")
        .env("ANTHROPIC_API_KEY", KEY)
        .args(["run", "--model", "anthropic:claude-fake", "--base-url"])
        .arg(provider.anthropic_base_url())
        .args(["--api-key-env", "ANTHROPIC_API_KEY", "--approve", "all"]);
    command
}

/// `golem run` with the fake OpenAI-compatible model of `provider`, as a
/// std command (to run on a pseudo-terminal, `pty::run_on_pty`); tools
/// are approved by golem's default policy.
pub fn run_on_std(provider: &FakeProvider) -> std::process::Command {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_golem"));
    command
        .env("XDG_CACHE_HOME", fresh_cache())
        .env("OPENAI_API_KEY", KEY)
        .env_remove("ANTHROPIC_API_KEY")
        .args(["run", "--model", "openai:gpt-fake", "--base-url"])
        .arg(provider.openai_base_url());
    command
}

/// `golem` with the test key, and a cache directory of its own (cut tool
/// outputs, manifests), so that no test sees another's or the user's.
pub fn golem() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_golem"));
    command
        .timeout(PATIENCE)
        .env_remove("ANTHROPIC_API_KEY")
        .env("OPENAI_API_KEY", KEY)
        .env("XDG_CACHE_HOME", fresh_cache());
    command
}

/// A cache directory no other command of the tests uses.
pub fn fresh_cache() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "golem-cache-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Whether `text` has a line starting with `start` and ending with `end`.
pub fn has_line(text: &str, start: &str, end: &str) -> bool {
    text.lines()
        .any(|line| line.starts_with(start) && line.ends_with(end))
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The pids of `parent`'s children.
pub fn children(parent: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's name in parentheses: state, then the parent.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// Whether `pid` runs (a zombie does not count).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rfind(')')
            .and_then(|end| stat[end + 2..].chars().next())
            .is_some_and(|state| state != 'Z' && state != 'X'),
        Err(_) => false,
    }
}

/// Sends SIGINT (Ctrl-C) to `child` and waits, at most [`PATIENCE`], for
/// it to end.
pub fn interrupt(child: &mut std::process::Child) -> std::process::ExitStatus {
    send_signal(child, libc::SIGINT)
}

/// Sends `signal` to `child` and waits, at most [`PATIENCE`], for it to
/// end.
pub fn send_signal(child: &mut std::process::Child, signal: i32) -> std::process::ExitStatus {
    // SAFETY: kill(2) with a pid of our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, signal);
    }
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "golem did not end on signal {signal}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Types `line` on `child`'s stdin.
pub fn type_line(child: &mut std::process::Child, line: &str) {
    use std::io::Write;
    let stdin = child.stdin.as_mut().expect("stdin");
    writeln!(stdin, "{line}").expect("write");
    stdin.flush().expect("flush");
}

/// What a pipe of a child has printed so far, read as it comes (on a
/// thread of its own, until the pipe closes).
pub fn collect(
    pipe: impl std::io::Read + Send + 'static,
) -> std::sync::Arc<std::sync::Mutex<String>> {
    let text = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = std::sync::Arc::clone(&text);
    std::thread::spawn(move || {
        let mut pipe = pipe;
        let mut buffer = [0u8; 512];
        while let Ok(read @ 1..) = pipe.read(&mut buffer) {
            sink.lock()
                .expect("lock")
                .push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
    });
    text
}

pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The Python SDK's test server (`peers/python/mcp_py_server.py` on
/// `peers/.venv`) as the stdio entry `py` of an mcpServers file in `dir`.
pub fn python_server_config(dir: &TempDir) -> PathBuf {
    python_script_config(dir, "mcp_py_server.py", "py")
}

/// The Python of `peers/.venv`, with the official SDK installed; a test
/// fails when it is missing.
pub fn peer_python() -> PathBuf {
    let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../peers/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-peers.sh (the README's test command does)",
        python.display()
    );
    python
}

/// `peers/python/SCRIPT` on `peers/.venv` as the stdio entry `entry` of an
/// mcpServers file in `dir`.
pub fn python_script_config(dir: &TempDir, script: &str, entry: &str) -> PathBuf {
    let python = peer_python();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/python")
        .join(script);
    dir.file(
        &format!("{entry}.json"),
        &json!({"mcpServers": {entry: {"command": python, "args": [script]}}}).to_string(),
    )
}

/// A model that calls `tool` with `arguments` first, then answers with
/// what it returned: `The tool said: ...`.
pub fn caller(
    tool: &'static str,
    arguments: &'static str,
) -> impl Fn(&Value) -> golem_fake_provider::Reply {
    use golem_fake_provider::{Reply, last_tool_result};
    move |body| match last_tool_result(body) {
        Some(result) => Reply::Text(format!("The tool said: {result}")),
        None => Reply::ToolCall {
            name: tool.into(),
            arguments: arguments.into(),
        },
    }
}
