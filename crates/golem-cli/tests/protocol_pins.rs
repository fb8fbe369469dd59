//! The protocol revision per server under `golem run`, against a real
//! streamable-HTTP server that answers the era probe with HTTP 500
//! (`@cyanheads/git-mcp-server`, npm): by default the probe falls back and
//! the model gets the server's tools; an entry's `"protocol"` pins that
//! server's revision (a pin the server cannot speak leaves it out, saying
//! why), and `--protocol` beats the file.

use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use golem_fake_provider::{FakeProvider, Reply, tool_names};
use serde_json::json;

mod support;
use support::*;

/// The git server over HTTP, killed when dropped.
struct GitServer {
    child: Child,
    url: String,
}

impl Drop for GitServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the git server on a free port; returns once it accepts
/// connections.
fn git_server() -> GitServer {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let child = Process::new(peer_bin("git-mcp-server"))
        .env("MCP_TRANSPORT_TYPE", "http")
        .env("MCP_HTTP_HOST", "127.0.0.1")
        .env("MCP_HTTP_PORT", port.to_string())
        .env("MCP_LOG_LEVEL", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the git server starts");
    let server = GitServer {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    let address = SocketAddr::from(([127, 0, 0, 1], port));
    let started = Instant::now();
    while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
        assert!(
            started.elapsed() < PATIENCE,
            "the git server did not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    server
}

/// `golem run` with the git server as entry `git` (with `protocol`, if
/// any) and `extra` flags: the exit status, stderr, and the tools the model
/// was offered (none when it was not asked).
fn run(
    server: &GitServer,
    protocol: Option<&str>,
    extra: &[&str],
) -> (Option<i32>, String, Vec<String>) {
    let dir = TempDir::new();
    let mut entry = json!({"url": server.url});
    if let Some(protocol) = protocol {
        entry["protocol"] = json!(protocol);
    }
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {"git": entry}}).to_string(),
    );
    let provider = FakeProvider::start_with(|_| Reply::Text("ok".into()));
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(["--tool-search", "never"])
        .args(extra)
        .arg("What can you do?")
        .output()
        .expect("runs");
    let offered = provider
        .requests()
        .first()
        .map(|request| tool_names(&request.body))
        .unwrap_or_default();
    (output.status.code(), text(&output.stderr), offered)
}

#[test]
fn a_server_that_fails_the_probe_with_a_500_gives_the_model_its_tools() {
    let server = git_server();

    let (status, stderr, offered) = run(&server, None, &[]);

    assert_eq!(status, Some(0), "{stderr}");
    assert!(offered.contains(&"git_status".to_owned()), "{offered:?}");
}

#[test]
fn an_entrys_protocol_pins_that_server_and_the_command_line_beats_it() {
    let server = git_server();

    // This server speaks no 2026-07-28: pinned to it, it fails to start
    // (the only server, so the command fails) and says why.
    let (status, stderr, offered) = run(&server, Some("2026-07-28"), &[]);
    assert_eq!(status, Some(4), "{stderr}");
    assert!(offered.is_empty(), "{offered:?}");
    assert!(
        stderr.contains(
            "golem: MCP server \"git\": server/discover: invalid answer from the server: the \
             server does not speak protocol 2026-07-28 (the client was pinned to it): HTTP 500"
        ),
        "{stderr}"
    );

    let (_, stderr, offered) = run(&server, Some("2025-11-25"), &[]);
    assert!(offered.contains(&"git_status".to_owned()), "{stderr}");

    let (_, stderr, offered) = run(&server, Some("2026-07-28"), &["--protocol", "2025-11-25"]);
    assert!(
        offered.contains(&"git_status".to_owned()),
        "--protocol beats the entry: {stderr}"
    );
}
