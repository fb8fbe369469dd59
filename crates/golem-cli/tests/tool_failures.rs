//! A tool call that fails under `golem run` (ADR 0031): against the Python
//! SDK's server and the fake provider, the server's JSON-RPC error, a call
//! past `--tool-max-time` and a server killed mid-call each reach the
//! model as that call's result, in one line, while the other calls of the
//! turn run on and the run answers; stderr shows each failed call once.
//! `--fail-on-tool-error` ends the run instead, with the cause's status.

use std::process::{Command as Process, Stdio};

use golem_fake_provider::{FakeProvider, Reply, last_tool_result, messages};
use serde_json::{Value, json};

mod support;
use support::*;

/// What the server answers `refuse` with, a JSON-RPC error.
const REFUSAL: &str = "refused: this tool never runs";

/// The tool results of the request `body`, in order.
fn tool_results(body: &Value) -> Vec<String> {
    messages(body)
        .iter()
        .filter(|message| message["role"] == "tool")
        .filter_map(|message| message["content"].as_str().map(str::to_owned))
        .collect()
}

/// How many lines of `text` contain `part`.
fn lines_with(text: &str, part: &str) -> usize {
    text.lines().filter(|line| line.contains(part)).count()
}

/// `golem run` on the Python server, whose `refuse` the model calls, with
/// `extra` flags: the output, and the provider (for the requests it got).
fn refused(extra: &[&str]) -> (std::process::Output, FakeProvider) {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(caller("refuse", "{}"));
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(extra)
        .arg("Try refuse")
        .output()
        .expect("runs");
    (output, provider)
}

#[test]
fn a_servers_json_rpc_error_goes_to_the_model_and_the_run_answers() {
    let (output, provider) = refused(&[]);

    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let told = last_tool_result(&provider.requests().last().expect("two requests").body)
        .expect("a tool result");
    assert!(
        told.starts_with("Tool \"refuse\" failed") && told.contains(REFUSAL),
        "the model is told the server's error: {told}"
    );
    assert!(!told.contains('\n'), "one line: {told:?}");
    assert!(stdout.contains(REFUSAL), "the run answered: {stdout}");
    assert_eq!(
        lines_with(&stderr, REFUSAL),
        1,
        "one line on stderr for the failed call: {stderr}"
    );
    assert!(
        has_line(
            &stderr,
            "golem: [py] refuse error (",
            &format!(
                "tools/call refuse: the server answered with an error: {REFUSAL} (JSON-RPC error -32602)"
            )
        ),
        "{stderr}"
    );
}

#[test]
fn with_fail_on_tool_error_the_error_ends_the_run_with_its_status_said_once() {
    let (output, provider) = refused(&["--fail-on-tool-error"]);

    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(3), "a server's error: {stderr}");
    assert_eq!(provider.requests().len(), 1, "the model is not asked again");
    assert!(!stdout.contains("The tool said"), "{stdout}");
    assert_eq!(lines_with(&stderr, REFUSAL), 1, "said once: {stderr}");
    assert!(
        stderr.contains(
            "golem: the run ends on the failed call of \"refuse\" above (--fail-on-tool-error)"
        ),
        "{stderr}"
    );
}

#[test]
fn a_call_past_its_time_goes_to_the_model_with_the_seconds() {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(caller("slow", r#"{"steps": 600, "delay": 0.05}"#));

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(["--tool-max-time", "1"])
        .arg("Go slow")
        .output()
        .expect("runs");

    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    let told = last_tool_result(&provider.requests().last().expect("two requests").body)
        .expect("a tool result");
    assert!(
        told.starts_with("Tool \"slow\" did not finish within 1 s and was cancelled"),
        "{told}"
    );
    assert!(
        has_line(&stderr, "golem: [py] slow error (", "if it needs longer"),
        "{stderr}"
    );
}

/// The pid of the child of `golem` whose environment has `WHICH=which`.
fn server_named(golem: u32, which: &str) -> Option<u32> {
    let mark = format!("WHICH={which}");
    children(golem).into_iter().find(|pid| {
        std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
            environ
                .split(|&byte| byte == 0)
                .any(|v| v == mark.as_bytes())
        })
    })
}

#[test]
fn a_server_killed_mid_call_goes_to_the_model_while_the_other_servers_call_runs_on() {
    let dir = TempDir::new();
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../peers/.venv/bin/python");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/python/mcp_py_server.py");
    assert!(python.exists(), "run scripts/install-peers.sh");
    let entry = |which: &str| json!({"command": python, "args": [script], "env": {"WHICH": which}});
    let config = dir.file(
        "two.json",
        &json!({"mcpServers": {"a": entry("a"), "b": entry("b")}}).to_string(),
    );
    // Both servers have the same tools, so each name is prefixed.
    let provider = FakeProvider::start_with(|body| {
        let results = tool_results(body);
        if results.is_empty() {
            return Reply::ToolCalls(vec![
                ("a_slow".into(), r#"{"steps": 1200, "delay": 0.05}"#.into()),
                ("b_slow".into(), r#"{"steps": 40, "delay": 0.05}"#.into()),
            ]);
        }
        Reply::Text(format!("Results: {}\n", results.join(" | ")))
    });
    let mut golem = Process::new(env!("CARGO_BIN_EXE_golem"))
        .env("XDG_CACHE_HOME", fresh_cache())
        .env("OPENAI_API_KEY", KEY)
        .env_remove("ANTHROPIC_API_KEY")
        .args(["run", "--model", "openai:gpt-fake", "--base-url"])
        .arg(provider.openai_base_url())
        .args(["--approve", "all", "--config"])
        .arg(&config)
        .arg("Run both")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("golem starts");
    let stdout = collect(golem.stdout.take().expect("stdout"));
    let stderr = collect(golem.stderr.take().expect("stderr"));

    wait_until("both calls have started", || {
        let stderr = stderr.lock().expect("lock");
        stderr.contains("golem: [a] slow {") && stderr.contains("golem: [b] slow {")
    });
    let mut killed = None;
    wait_until("server a is found", || {
        killed = server_named(golem.id(), "a");
        killed.is_some()
    });
    // SAFETY: kill(2) on golem's server, which this test started.
    unsafe { libc::kill(killed.expect("found") as libc::pid_t, libc::SIGKILL) };
    let status = golem.wait().expect("golem ends");
    let (stdout, stderr) = (
        stdout.lock().expect("lock").clone(),
        stderr.lock().expect("lock").clone(),
    );

    assert_eq!(status.code(), Some(0), "{stderr}");
    let failed = stderr.find("golem: [a] slow error").expect(&stderr);
    let finished = stderr.find("golem: [b] slow ok").expect(&stderr);
    assert!(
        failed < finished,
        "b's call ran on after a's failed: {stderr}"
    );
    let last = provider
        .requests()
        .last()
        .expect("two requests")
        .body
        .clone();
    let results = tool_results(&last);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results[0].starts_with("Tool \"a_slow\" failed") && results[0].contains("SIGKILL"),
        "the model hears how a's server ended: {}",
        results[0]
    );
    assert_eq!(results[1], "done after 40 steps");
    assert!(stdout.contains("done after 40 steps"), "{stdout}");
}
