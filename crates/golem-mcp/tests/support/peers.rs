//! The real servers nobody here wrote, under `peers/`: the reference
//! `server-everything` (npm) and servers built on the official Python SDK
//! (PyPI; its 1.x line too, for the HTTP+SSE transport; FastMCP with
//! fastmcp-tasks, for the tasks extension), which
//! `scripts/install-peers.sh` installs (the README's test
//! command runs it). A missing peer fails the test rather than skipping it.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use golem_mcp::StdioConfig;

use super::PEER_PATIENCE;

/// A file or program under `peers/`.
pub fn peer(relative: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers")
        .join(relative);
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-peers.sh (the README's test command does)",
        path.display()
    );
    path
}

/// The reference server `@modelcontextprotocol/server-everything`.
pub fn server_everything() -> PathBuf {
    peer("node_modules/.bin/mcp-server-everything")
}

/// server-everything over stdio.
pub fn everything_stdio() -> StdioConfig {
    StdioConfig {
        args: vec!["stdio".into()],
        ..StdioConfig::new(server_everything().to_string_lossy())
    }
}

/// server-everything in its streamable-HTTP mode.
pub fn everything_http() -> Peer {
    let port = free_port();
    let mut command = Command::new(server_everything());
    command.arg("streamableHttp").env("PORT", port.to_string());
    start_peer(command, port)
}

/// The Python SDK's interpreter, with the `mcp` package.
fn python() -> PathBuf {
    peer(".venv/bin/python")
}

/// The Python SDK server `peers/python/mcp_py_server.py` over stdio.
pub fn python_stdio() -> StdioConfig {
    StdioConfig {
        args: vec![
            peer("python/mcp_py_server.py")
                .to_string_lossy()
                .into_owned(),
        ],
        ..StdioConfig::new(python().to_string_lossy())
    }
}

/// FastMCP with fastmcp-tasks (`peers/python/tasks_server.py`, run by
/// `peers/.venv-tasks`): a server of the tasks extension of 2026-07-28,
/// over stdio.
pub fn tasks_stdio() -> StdioConfig {
    StdioConfig {
        args: vec![
            peer("python/tasks_server.py")
                .to_string_lossy()
                .into_owned(),
        ],
        ..StdioConfig::new(peer(".venv-tasks/bin/python").to_string_lossy())
    }
}

/// The tasks extension's server over streamable HTTP.
pub fn tasks_http() -> Peer {
    let port = free_port();
    let mut command = Command::new(peer(".venv-tasks/bin/python"));
    command
        .arg(peer("python/tasks_server.py"))
        .args(["--http", "--port", &port.to_string()]);
    start_peer(command, port)
}

/// The Python SDK server over streamable HTTP, with these options of its
/// own (`--json`, `--stateless`).
pub fn python_http(options: &[&str]) -> Peer {
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(peer("python/mcp_py_server.py"))
        .args(["--http", "--port", &port.to_string()])
        .args(options);
    start_peer(command, port)
}

/// The Python SDK's server auth (`peers/python/mcp_py_auth_server.py`)
/// protecting an MCP server; its access tokens live `token_ttl` seconds.
pub fn python_protected(token_ttl: u32) -> Peer {
    let port = free_port();
    let mut command = Command::new(python());
    command.arg(peer("python/mcp_py_auth_server.py")).args([
        "--port",
        &port.to_string(),
        "--token-ttl",
        &token_ttl.to_string(),
    ]);
    start_peer(command, port)
}

/// A FastMCP server of the Python SDK's 1.x line
/// (`peers/python/sse_fastmcp_server.py`, in its own virtual environment,
/// `peers/.venv-sse`) over the HTTP+SSE transport of 2024-11-05; its URL is
/// the event stream's, `/sse`.
pub fn python_sse() -> Peer {
    let port = free_port();
    let mut command = Command::new(peer(".venv-sse/bin/python"));
    command
        .arg(peer("python/sse_fastmcp_server.py"))
        .args(["--port", &port.to_string()]);
    let mut started = start_peer(command, port);
    started.url = format!("http://127.0.0.1:{port}/sse");
    started
}

/// A server process listening on a port, killed and reaped when dropped.
pub struct Peer {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on, never the same twice in this process (the
/// kernel may hand a just-released port out again, and the tests run in
/// parallel).
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

/// Starts `command` and waits until `port` accepts connections. A process
/// of someone else's says nothing when it listens: this polls the port.
pub fn start_peer(mut command: Command, port: u16) -> Peer {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the peer starts");
    let mut peer = Peer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let deadline = Instant::now() + PEER_PATIENCE;
    while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
        if let Ok(Some(status)) = peer.child.try_wait() {
            panic!("the peer exited before listening: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "the peer did not listen on {address} in time"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    if let Ok(Some(status)) = peer.child.try_wait() {
        panic!("the peer exited (another process holds {address}?): {status}");
    }
    peer
}
