//! `golem-mcp call --task` and `list --long` against the reference server
//! `@modelcontextprotocol/server-everything` (installed by
//! `scripts/install-peers.sh`; a missing peer fails the test), whose
//! `simulate-research-query` must run as a task and whose
//! `get-structured-content` declares an output schema and annotations;
//! and `call --task` in the 2026-07-28 era, against FastMCP with
//! fastmcp-tasks (`peers/python/tasks_server.py`), a server of the tasks
//! extension whose `slow_echo` and `sleepy` always run as tasks.

mod support;

use predicates::prelude::*;
use serde_json::Value;
use support::process::{Lines, interrupt};
use support::{PATIENCE, everything_stdio, golem_mcp, tasks_stdio};

/// A stderr with the line `golem-mcp: task ID: STATUS`.
fn status_line(status: &'static str) -> impl Predicate<str> {
    predicate::function(move |stderr: &str| {
        stderr.lines().any(|line| {
            line.strip_prefix("golem-mcp: task ")
                .and_then(|rest| rest.split_once(": "))
                .is_some_and(|(_, shown)| shown.starts_with(status))
        })
    })
}

#[test]
fn call_task_shows_each_status_and_prints_the_result() {
    golem_mcp()
        .args([
            "call",
            "--task",
            "simulate-research-query",
            r#"{"topic":"tides"}"#,
        ])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains("# Research Report: tides"))
        .stderr(status_line("working (Gathering sources...)"))
        .stderr(status_line("completed"));
}

#[test]
fn call_task_json_prints_the_result_as_the_server_sent_it() {
    let output = golem_mcp()
        .args([
            "call",
            "--task",
            "--json",
            "--quiet",
            "simulate-research-query",
        ])
        .arg(r#"{"topic":"owls"}"#)
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("Research Report: owls")),
        "{result}"
    );
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("golem-mcp: task "),
        "--quiet hides the status lines"
    );
}

#[test]
fn call_task_on_a_tool_without_tasks_is_a_usage_error() {
    golem_mcp()
        .args(["call", "--task", "echo", r#"{"message":"hi"}"#])
        .args(everything_stdio())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not supported"))
        .stderr(predicate::str::contains("taskSupport"));
    golem_mcp()
        .args(["call", "--task", "no-such-tool"])
        .args(everything_stdio())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no tool named \"no-such-tool\""));
}

#[test]
fn a_timeout_cancels_the_task_on_the_server() {
    golem_mcp()
        .args([
            "call",
            "--task",
            "simulate-research-query",
            r#"{"topic":"slow"}"#,
        ])
        .args(["--timeout", "2", "-v"])
        .args(everything_stdio())
        .assert()
        .code(5)
        .stderr(predicate::str::contains(r#""method":"tasks/cancel""#).count(1))
        .stderr(predicate::str::contains(r#""status":"cancelled""#))
        .stderr(predicate::function(|stderr: &str| {
            stderr.lines().any(|line| {
                line.starts_with("golem-mcp: cancelled task ") && line.ends_with(" on the server")
            })
        }));
}

#[test]
fn list_long_shows_title_hints_task_support_and_output_schema() {
    let output = golem_mcp()
        .args(["list", "--long"])
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    let structured = text
        .split("\n\n")
        .find(|block| block.starts_with("get-structured-content"))
        .expect("get-structured-content is listed");
    assert!(
        structured.starts_with("get-structured-content (Get Structured Content Tool)\n"),
        "{structured}"
    );
    assert!(
        structured.contains("\n  hints: read-only, idempotent, closed world\n"),
        "{structured}"
    );
    assert!(
        structured.contains("\n  output:\n")
            && structured
                .contains("\n    temperature: number, required — Temperature in celsius\n"),
        "{structured}"
    );
    let research = text
        .split("\n\n")
        .find(|block| block.starts_with("simulate-research-query"))
        .expect("simulate-research-query is listed");
    assert!(research.contains("\n  task: required\n"), "{research}");
}

#[test]
fn ctrl_c_cancels_the_task_on_the_server_and_exits_130() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_golem-mcp"))
        .args([
            "-v",
            "call",
            "--task",
            "simulate-research-query",
            r#"{"topic":"slow"}"#,
        ])
        .args(everything_stdio())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starts");
    let mut stderr = Lines::of(child.stderr.take().expect("piped"));
    // The task exists once the server has answered a poll about it.
    stderr.wait_for(
        |line| line.starts_with("golem-mcp: → ") && line.contains(r#""method":"tasks/get""#),
        PATIENCE,
    );
    interrupt(&child);
    let rest = stderr.rest(PATIENCE);
    let exit = child.wait().expect("exits");
    assert_eq!(exit.code(), Some(130), "{rest}");
    assert!(rest.contains("golem-mcp: interrupted while "), "{rest}");
    assert!(rest.contains(r#""method":"tasks/cancel""#), "{rest}");
    assert!(
        rest.lines()
            .any(|line| line.starts_with("golem-mcp: cancelled task ")),
        "{rest}"
    );
}

#[test]
fn call_task_works_the_same_on_a_server_of_the_tasks_extension() {
    golem_mcp()
        .args(["call", "--task", "slow_echo", r#"{"message":"tides"}"#])
        .args(tasks_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains("Echo: tides"))
        .stderr(status_line("working"))
        .stderr(status_line("completed"));
    // A tool the server never runs as a task: the call's result all the same.
    golem_mcp()
        .args(["call", "--task", "echo", r#"{"message":"now"}"#])
        .args(tasks_stdio())
        .assert()
        .success()
        .stdout(predicate::str::contains("Echo: now"));
    // Without --task nothing is declared, and the server refuses a tool it
    // runs only as a task.
    golem_mcp()
        .args(["call", "slow_echo", r#"{"message":"x"}"#])
        .args(tasks_stdio())
        .assert()
        .code(3)
        .stderr(predicate::str::contains("-32021"));
}

#[test]
fn a_timeout_cancels_the_modern_task_on_the_server() {
    golem_mcp()
        .args(["call", "--task", "sleepy", r#"{"seconds":60}"#])
        // Long enough for a Python server to start on a busy machine.
        .args(["--timeout", "8", "-v"])
        .args(tasks_stdio())
        .assert()
        .code(5)
        .stderr(predicate::str::contains(r#""method":"tasks/cancel""#).count(1))
        .stderr(predicate::function(|stderr: &str| {
            stderr.lines().any(|line| {
                line.starts_with("golem-mcp: cancelled task ") && line.ends_with(" on the server")
            })
        }));
}
