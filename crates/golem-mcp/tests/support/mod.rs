//! What several integration tests share: where the real peers are, the
//! process checks, scratch files, and a server process started for a test.
//! Each test file uses part of it (`mod support;`).
#![allow(dead_code)]

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use golem_mcp::StdioConfig;

/// The misbehaving stdio server of the fault tests.
pub const FAKE: &str = env!("CARGO_BIN_EXE_golem-mcp-fake-server");

/// How long starting a peer may take.
const PEER_PATIENCE: Duration = Duration::from_secs(60);

/// A file or program under `peers/`, which `scripts/install-peers.sh`
/// installs (the README's test command runs it); a missing one fails the
/// test rather than skipping it.
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

/// Polls until `pid` is gone, within `patience` (for ends that happen on a
/// background task, such as a drop).
pub async fn until_gone(pid: u32, patience: Duration) -> bool {
    let deadline = Instant::now() + patience;
    while process_alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    true
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

/// Starts `command` and waits until `port` accepts connections.
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

/// server-everything in its streamable-HTTP mode.
pub fn everything_http() -> Peer {
    let port = free_port();
    let mut command = Command::new(server_everything());
    command.arg("streamableHttp").env("PORT", port.to_string());
    start_peer(command, port)
}
