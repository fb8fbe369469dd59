//! `--json` errors (one JSON object on stdout, the line on stderr as
//! always) and `call --arg key=value` typed by the tool's input schema,
//! against the real peers: the Python SDK server (stdio and HTTP) and
//! server-everything.

mod support;

use predicates::prelude::*;
use serde_json::{Value, json};
use support::{everything_stdio, golem_mcp, python_http, python_stdio, stdout_json};

/// The `"error"` object of a `--json` failure, after checking the exit
/// status it names is the command's.
#[track_caller]
fn json_error(output: &std::process::Output) -> Value {
    let value = stdout_json(output);
    let error = value["error"].clone();
    assert_eq!(
        error["exit"].as_i64(),
        output.status.code().map(i64::from),
        "{value}"
    );
    assert!(!output.stderr.is_empty(), "the line on stderr stays");
    error
}

#[test]
fn a_usage_error_is_a_json_object_on_stdout() {
    let output = golem_mcp().args(["info", "--json"]).output().expect("runs");
    assert_eq!(output.status.code(), Some(2));
    let error = json_error(&output);
    assert_eq!(error["kind"], "usage");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|message| message.starts_with("no server given")),
        "{error}"
    );
    // One clap refuses too.
    let output = golem_mcp()
        .args(["info", "--json", "--bogus"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        json_error(&output),
        json!({"kind": "usage", "exit": 2, "message": "unexpected argument '--bogus' found"})
    );
}

#[test]
fn a_json_rpc_error_carries_its_code_message_and_data() {
    let output = golem_mcp()
        .args(["call", "refuse", "--json"])
        .args(python_stdio())
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(3));
    let error = json_error(&output);
    assert_eq!(error["kind"], "protocol");
    assert_eq!(
        error["jsonrpc"],
        json!({"code": -32602, "message": "refused: this tool never runs", "data": null})
    );
}

#[test]
fn an_http_404_carries_its_status_and_hints_at_the_endpoints_path() {
    let server = python_http();
    let wrong = server.url.replace("/mcp", "/nope");
    let output = golem_mcp()
        .args(["info", "--json", "--url", &wrong])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(4));
    let error = json_error(&output);
    assert_eq!(error["kind"], "transport");
    assert_eq!(error["http"], json!({"status": 404, "url": wrong}));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "check its path: servers usually serve it at /mcp, or at /sse for the older \
             HTTP+SSE transport"
        ),
        "{stderr}"
    );
}

#[test]
fn arg_values_are_typed_by_the_tools_schema() {
    // `add` takes two integers: "2" and "40" are sent as numbers.
    golem_mcp()
        .args(["call", "add", "--arg", "a=2", "--arg", "b=40"])
        .args(python_stdio())
        .assert()
        .success()
        .stdout("42\n");
    // server-everything's `echo` takes a string: "42" stays one.
    golem_mcp()
        .args(["call", "echo", "--arg", "message=42"])
        .args(everything_stdio())
        .assert()
        .success()
        .stdout("Echo: 42\n");
}

#[test]
fn arg_values_are_added_to_args_json_and_win_over_it() {
    golem_mcp()
        .args(["call", "add", r#"{"a": 1, "b": 1}"#, "--arg", "b=2"])
        .args(python_stdio())
        .assert()
        .success()
        .stdout("3\n");
}

#[test]
fn an_arg_that_does_not_fit_or_is_unknown_is_a_usage_error_naming_it() {
    golem_mcp()
        .args(["call", "add", "--arg", "a=two", "--arg", "b=1"])
        .args(python_stdio())
        .assert()
        .code(2)
        .stdout("")
        .stderr("golem-mcp: --arg a=two: add's parameter \"a\" expects an integer\n");
    golem_mcp()
        .args(["call", "echo", "--arg", "mesage=hi"])
        .args(everything_stdio())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--arg mesage: echo has no parameter \"mesage\" (it takes: message)",
        ));
    // Malformed: found before any server starts.
    golem_mcp()
        .args([
            "call",
            "echo",
            "--arg",
            "message",
            "--",
            "/nonexistent/server",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--arg \"message\": expected NAME=VALUE",
        ));
}
