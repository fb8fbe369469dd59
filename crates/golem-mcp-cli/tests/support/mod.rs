//! The test kit of `golem-mcp`'s integration tests, shared by every test
//! file of the crate (`mod support;`): the binary under a time bound, the
//! real peers installed by `scripts/install-peers.sh` (a missing peer fails
//! the test), temporary directories, and, in `process.rs`, waits on what a
//! running command shows (a line on its pipe, a process gone), and in
//! `pty.rs` a terminal for its stdout. It knows nothing of any one test.

#![allow(dead_code)] // each test binary uses a part

pub mod otlp;
pub mod process;
pub mod pty;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;

/// How long any one command may take before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(90);

/// `golem-mcp` with a bound on how long it may run, and a cache of its
/// own (the tool lists it keeps), so that no test sees another's or the
/// user's.
pub fn golem_mcp() -> Command {
    let mut command = Command::from_std(golem_mcp_std());
    command.timeout(PATIENCE);
    command
}

/// [`golem_mcp`] as a `std::process::Command`, for a test that gives it
/// its own stdio (a terminal: `pty.rs`) and bounds it itself.
pub fn golem_mcp_std() -> std::process::Command {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "golem-mcp-cache-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_golem-mcp"));
    command.env("XDG_CACHE_HOME", cache);
    command
}

/// Where `scripts/install-peers.sh` installs the peers.
pub fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../peers")
}

/// `path`, which must exist, as a command-line word.
pub fn installed(path: PathBuf) -> String {
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-peers.sh (the README's test command does)",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// `@modelcontextprotocol/server-everything`'s executable.
pub fn everything() -> String {
    installed(peers().join("node_modules/.bin/mcp-server-everything"))
}

/// The Python of the venv that holds the official MCP Python SDK.
pub fn python() -> String {
    installed(peers().join(".venv/bin/python"))
}

/// The Python SDK server of the peers (`peers/python/mcp_py_server.py`).
pub fn python_server_script() -> String {
    installed(peers().join("python/mcp_py_server.py"))
}

/// `-- python tasks_server.py`: FastMCP with fastmcp-tasks, a server of
/// the tasks extension of 2026-07-28 (`peers/python/tasks_server.py`, in
/// `peers/.venv-tasks`), to append to a command line.
pub fn tasks_stdio() -> [String; 3] {
    [
        "--".into(),
        installed(peers().join(".venv-tasks/bin/python")),
        installed(peers().join("python/tasks_server.py")),
    ]
}

/// `-- mcp-server-everything stdio`, to append to a command line.
pub fn everything_stdio() -> [String; 3] {
    ["--".into(), everything(), "stdio".into()]
}

/// `-- python mcp_py_server.py`, to append to a command line.
pub fn python_stdio() -> [String; 3] {
    ["--".into(), python(), python_server_script()]
}

/// `-- python tests/fixtures/py_story_server.py`: a Python SDK server whose
/// `story` tool elicits a form of defaulted fields and whose `query` tool
/// logs a warning as logger "db".
pub fn story_stdio() -> [String; 3] {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_story_server.py");
    ["--".into(), python(), installed(script)]
}

/// `-- python tests/fixtures/py_schema_server.py`: a Python SDK server
/// whose `book` tool takes a nested model, a default, literals and
/// optionals, and whose `wide` tool has 60 parameters.
pub fn schema_stdio() -> [String; 3] {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_schema_server.py");
    ["--".into(), python(), installed(script)]
}

/// The command's stdout, parsed as JSON.
pub fn stdout_json(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory under the system's temporary directory.
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "golem-mcp-cli-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    /// A file `name` in the directory holding `contents`.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).expect("written");
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// An HTTP server process, killed and reaped when dropped.
pub struct HttpPeer {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port free on 127.0.0.1, never the same one twice in a test binary.
pub fn free_port() -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let mut given = GIVEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("address").port();
        if !given.contains(&port) {
            given.push(port);
            return port;
        }
    }
}

/// The Python SDK server over streamable HTTP (event-stream answers), once
/// it accepts connections.
pub fn python_http() -> HttpPeer {
    let port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(python_server_script())
        .args(["--http", "--port", &port.to_string()])
        .stdout(Stdio::null());
    listening(command, port, "mcp")
}

/// A FastMCP server of the Python SDK's 1.x line over the HTTP+SSE
/// transport of 2024-11-05 (`peers/python/sse_fastmcp_server.py`, in
/// `peers/.venv-sse`); its URL is the event stream's, `/sse`.
pub fn python_sse() -> HttpPeer {
    let port = free_port();
    let mut command = std::process::Command::new(installed(peers().join(".venv-sse/bin/python")));
    command
        .arg(installed(peers().join("python/sse_fastmcp_server.py")))
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null());
    listening(command, port, "sse")
}

/// `@cyanheads/git-mcp-server` (npm) over streamable HTTP, once it accepts
/// connections: a real server that answers the session-less
/// `server/discover` probe with HTTP 500.
pub fn git_http() -> HttpPeer {
    let port = free_port();
    let mut command =
        std::process::Command::new(installed(peers().join("node_modules/.bin/git-mcp-server")));
    command
        .env("MCP_TRANSPORT_TYPE", "http")
        .env("MCP_HTTP_HOST", "127.0.0.1")
        .env("MCP_HTTP_PORT", port.to_string())
        .env("MCP_LOG_LEVEL", "error")
        .stdout(Stdio::null());
    listening(command, port, "mcp")
}

/// `peers/python/otel_mcp_server.py` (the Python SDK's server with its
/// OpenTelemetry middleware, exporting to `endpoint`) over streamable
/// HTTP, once it accepts connections.
pub fn otel_http(endpoint: &str) -> HttpPeer {
    let port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(installed(peers().join("python/otel_mcp_server.py")))
        .args(["--http", "--port", &port.to_string()])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .stdout(Stdio::null());
    listening(command, port, "mcp")
}

/// `tests/fixtures/py_recording_server.py` over streamable HTTP, once it
/// accepts connections, with the lines it records (one per HTTP request,
/// and its `wait` tool's `tool started` and `tool cancelled`).
pub fn recording_http() -> (HttpPeer, process::Lines) {
    let port = free_port();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_recording_server.py");
    let mut command = std::process::Command::new(python());
    command
        .arg(installed(script))
        .args(["--port", &port.to_string()])
        .stdout(Stdio::piped());
    let mut peer = listening(command, port, "mcp");
    let records = process::Lines::of(peer.child.stdout.take().expect("a pipe"));
    (peer, records)
}

/// `peers/python/mcp_py_auth_server.py` (the Python SDK's OAuth server in
/// front of an MCP server; every authorization approved at once) over
/// streamable HTTP, once it accepts connections.
pub fn python_protected() -> HttpPeer {
    let port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(installed(peers().join("python/mcp_py_auth_server.py")))
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null());
    listening(command, port, "mcp")
}

/// `peers/python/modern_fastmcp_server.py` (FastMCP 4, both eras; its
/// `greet` elicits in either) over streamable HTTP, once it accepts
/// connections.
pub fn modern_fastmcp_http() -> HttpPeer {
    let port = free_port();
    let mut command = std::process::Command::new(python());
    command
        .arg(installed(peers().join("python/modern_fastmcp_server.py")))
        .args(["--http", "--port", &port.to_string()])
        .stdout(Stdio::null());
    listening(command, port, "mcp")
}

/// `command`, started, once it accepts connections on `port`; its URL is
/// `http://127.0.0.1:PORT/PATH`. Its stdout goes where the caller chose.
fn listening(mut command: std::process::Command, port: u16, path: &str) -> HttpPeer {
    let child = command
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let mut peer = HttpPeer {
        child,
        url: format!("http://127.0.0.1:{port}/{path}"),
    };
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + PATIENCE;
    while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = peer.child.try_wait() {
            panic!("the server exited before listening: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "the server did not listen in time"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    peer
}
