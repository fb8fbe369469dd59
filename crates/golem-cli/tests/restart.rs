//! `golem chat` when an MCP server is killed in the middle of a call (ADR
//! 0026): against the Python SDK's server and the fake provider, the
//! model is told that the killed call failed, stderr says the server was started
//! again, and the next question's call runs on a new process; with
//! `--no-restart` the next call fails too.

use std::process::{Child, Command as Process, Stdio};

use golem_fake_provider::{FakeProvider, Reply, last_tool_result, messages};
use serde_json::Value;

mod support;
use support::*;

/// The model: the last user message names the tool (`slow` runs for half a
/// minute, `echo` answers at once); after a tool result, it repeats it.
fn model(body: &Value) -> Reply {
    if let Some(result) = last_tool_result(body) {
        return Reply::Text(format!("The tool said: {result}\n"));
    }
    let asked = messages(body)
        .iter()
        .rev()
        .find(|message| message["role"] == "user")
        .and_then(|message| message["content"].as_str().map(str::to_owned))
        .unwrap_or_default();
    match asked.as_str() {
        "run slow" => Reply::ToolCall {
            name: "slow".into(),
            arguments: r#"{"steps": 600, "delay": 0.05}"#.into(),
        },
        _ => Reply::ToolCall {
            name: "echo".into(),
            arguments: r#"{"message": "after the crash"}"#.into(),
        },
    }
}

/// `golem chat` on `provider` with the Python server, and `extra` flags.
fn chat(provider: &FakeProvider, config: &std::path::Path, extra: &[&str]) -> Child {
    Process::new(env!("CARGO_BIN_EXE_golem"))
        .env("XDG_CACHE_HOME", fresh_cache())
        .args([
            "chat",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
            "--approve",
            "all",
        ])
        .arg("--config")
        .arg(config)
        .args(extra)
        .env("OPENAI_API_KEY", KEY)
        .env_remove("ANTHROPIC_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("golem starts")
}

/// The Python server under `golem` (its one child).
fn server_of(golem: u32) -> u32 {
    let mut servers = Vec::new();
    wait_until("the server runs", || {
        servers = children(golem);
        servers.len() == 1
    });
    servers[0]
}

/// Asks for the slow call, kills the server while it runs, then asks for
/// `echo`; returns golem's stdout and stderr once it has ended, and the
/// pids of the killed server and of the server left at the end (if any).
fn kill_mid_call(extra: &[&str]) -> (String, String, u32, Option<u32>) {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(model);
    let mut child = chat(&provider, &config, extra);
    let stdout = collect(child.stdout.take().expect("stdout"));
    let stderr = collect(child.stderr.take().expect("stderr"));
    let golem = child.id();
    let killed = server_of(golem);

    type_line(&mut child, "run slow");
    wait_until("the slow call has started", || {
        stderr.lock().expect("lock").contains("[py] slow")
    });
    // SAFETY: kill(2) on golem's server, which this test started.
    unsafe { libc::kill(killed as libc::pid_t, libc::SIGKILL) };
    wait_until("the killed call is reported", || {
        stderr.lock().expect("lock").contains("SIGKILL")
    });
    if extra.is_empty() {
        wait_until("the server is back", || {
            stderr.lock().expect("lock").contains("started it again")
        });
    }
    type_line(&mut child, "run echo");
    // Both answers tell what the tool said: the killed call's failure,
    // then the echo or its failure.
    wait_until("the second answer has ended", || {
        stdout
            .lock()
            .expect("lock")
            .matches("The tool said")
            .count()
            == 2
    });
    let left = children(golem).first().copied();
    drop(child.stdin.take());
    let status = child.wait().expect("golem ends");
    assert!(
        status.code().is_some(),
        "golem ended by a signal: {status:?}"
    );
    let stdout = stdout.lock().expect("lock").clone();
    let stderr = stderr.lock().expect("lock").clone();
    wait_until("no server is left", || {
        children(golem).is_empty() || !alive(golem)
    });
    (stdout, stderr, killed, left)
}

#[test]
fn a_server_killed_under_chat_costs_one_call_and_comes_back() {
    let (stdout, stderr, killed, left) = kill_mid_call(&[]);
    assert!(
        stdout.contains("The tool said: Echo: after the crash"),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        has_line(&stdout, "The tool said: Tool \"slow\" failed", "")
            && stdout.contains("(signal: 9 (SIGKILL))"),
        "the model was told how the call ended: {stdout}"
    );
    assert!(
        stderr.contains(
            "golem: MCP server \"py\" was lost (the server process exited (signal: 9 (SIGKILL))"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("started it again (attempt 1)"), "{stderr}");
    let restarted = left.expect("a server runs after the restart");
    assert_ne!(restarted, killed, "a new process");
}

#[test]
fn without_restarts_the_next_call_fails_as_the_server_ended() {
    let (stdout, stderr, _, left) = kill_mid_call(&["--no-restart"]);
    assert!(!stdout.contains("Echo: after the crash"), "{stdout}");
    assert!(
        has_line(&stdout, "The tool said: Tool \"echo\" failed", ""),
        "the model was told the next call failed too: {stdout}"
    );
    assert!(
        has_line(
            &stderr,
            "golem: [py] echo error",
            "(signal: 9 (SIGKILL)); it wrote nothing to stderr"
        ),
        "the next call fails with the exit too: {stderr}"
    );
    assert!(!stderr.contains("started it again"), "{stderr}");
    assert_eq!(left, None, "no server was started again");
}
