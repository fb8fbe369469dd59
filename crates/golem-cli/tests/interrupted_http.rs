//! A `golem run` ended while a tool call to a streamable-HTTP server is in
//! flight (Ctrl-C, SIGTERM, SIGHUP, `--tool-timeout`): the server hears
//! `notifications/cancelled` for the call and the session's `DELETE`
//! before the command exits with its status. The server is a small Python
//! one that records every message it receives
//! (`tests/fixtures/recording_http_server.py`); the real `golem` binary
//! gets the real signal.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command as Process, Stdio};
use std::sync::{Arc, Mutex};

use golem_fake_provider::{FakeProvider, Reply};
use serde_json::json;

mod support;
use support::*;

/// The recording server, killed when dropped; `lines` is what it printed.
struct Recorder {
    child: Child,
    port: u16,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn start() -> Self {
        let python = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../peers/.venv/bin/python");
        assert!(
            python.exists(),
            "{} is missing: run scripts/install-peers.sh (the README's test command does)",
            python.display()
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let mut child = Process::new(python)
            .arg(
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/fixtures/recording_http_server.py"),
            )
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the recording server starts");
        let stdout = child.stdout.take().expect("stdout");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                sink.lock().expect("lock").push(line);
            }
        });
        let recorder = Recorder { child, port, lines };
        recorder.wait_for("listening");
        recorder
    }

    fn wait_for(&self, start: &str) {
        wait_until(&format!("the server records {start:?}"), || {
            self.lines().iter().any(|line| line.starts_with(start))
        });
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("lock").clone()
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `golem run` on the recorder, its model calling the tool that hangs.
fn golem_on(recorder: &Recorder, provider: &FakeProvider, dir: &TempDir, extra: &[&str]) -> Child {
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {"rec": {
            "type": "http", "url": format!("http://127.0.0.1:{}/mcp", recorder.port)}}})
        .to_string(),
    );
    Process::new(env!("CARGO_BIN_EXE_golem"))
        .env("XDG_CACHE_HOME", fresh_cache())
        .env("OPENAI_API_KEY", KEY)
        .args([
            "run",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
            "--approve",
            "all",
            "--config",
        ])
        .arg(config)
        .args(extra)
        .arg("Call the tool")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("golem starts")
}

fn hanging_call() -> FakeProvider {
    FakeProvider::start_with(|_| Reply::ToolCall {
        name: "hang".into(),
        arguments: "{}".into(),
    })
}

/// What the server must have heard once `golem` has ended a run whose call
/// was in flight: the call cancelled by its id, then the session deleted.
#[track_caller]
fn assert_cancelled_then_deleted(recorder: &Recorder) {
    // The DELETE comes last: once it is recorded, so is what came before.
    recorder.wait_for("DELETE rec-session-1");
    let lines = recorder.lines();
    let call = lines
        .iter()
        .find_map(|line| line.strip_prefix("POST tools/call id="))
        .expect("the call was sent");
    let cancelled = lines
        .iter()
        .position(|line| line == &format!("POST notifications/cancelled cancels={call}"))
        .unwrap_or_else(|| panic!("no cancellation of call {call}: {lines:?}"));
    let deleted = lines
        .iter()
        .position(|line| line == "DELETE rec-session-1")
        .expect("deleted");
    assert!(cancelled < deleted, "cancelled, then deleted: {lines:?}");
}

fn stderr_of(child: &mut Child) -> String {
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().expect("stderr"), &mut stderr)
        .expect("read");
    stderr
}

#[test]
fn a_signal_cancels_the_call_and_ends_the_session_before_golem_exits() {
    for (signal, status, word) in [
        (libc::SIGINT, 130, "interrupted (Ctrl-C)"),
        (libc::SIGTERM, 143, "terminated (SIGTERM)"),
        (libc::SIGHUP, 129, "hung up (SIGHUP)"),
    ] {
        let recorder = Recorder::start();
        let provider = hanging_call();
        let dir = TempDir::new();
        let mut golem = golem_on(&recorder, &provider, &dir, &[]);
        recorder.wait_for("POST tools/call");

        let exit = send_signal(&mut golem, signal);

        let stderr = stderr_of(&mut golem);
        assert_eq!(exit.code(), Some(status), "{stderr}");
        assert!(stderr.contains(&format!("golem: {word}")), "{stderr}");
        assert_cancelled_then_deleted(&recorder);
    }
}

#[test]
fn a_tool_timeout_cancels_the_call_and_ends_the_session() {
    let recorder = Recorder::start();
    let provider = hanging_call();
    let dir = TempDir::new();
    // The timeout ends the run (told to the model, the model would call
    // again): the call is cancelled, then the session ended.
    let mut golem = golem_on(
        &recorder,
        &provider,
        &dir,
        &["--tool-timeout", "0.5", "--fail-on-tool-error"],
    );

    let exit = {
        let start = std::time::Instant::now();
        loop {
            if let Some(status) = golem.try_wait().expect("wait") {
                break status;
            }
            assert!(start.elapsed() < PATIENCE, "golem did not end");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    };

    let stderr = stderr_of(&mut golem);
    assert_eq!(exit.code(), Some(5), "{stderr}");
    assert_cancelled_then_deleted(&recorder);
}
