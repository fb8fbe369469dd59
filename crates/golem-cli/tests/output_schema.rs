//! `golem run --output-schema FILE`: the schema reaches the provider (a
//! strict `response_format` for OpenAI, the `final_result` tool for
//! Anthropic), an answer that does not fit goes back to the model with the
//! validator's error, and only the checked JSON reaches stdout; one that
//! never fits fails the run with nothing on stdout. Against the real
//! filesystem server and the stand-in providers.

use golem_fake_provider::{FakeProvider, Reply, messages};
use serde_json::{Value, json};

mod support;
use support::*;

/// A closed schema: OpenAI's strict mode takes it.
const SCHEMA: &str = r#"{"type": "object", "properties": {"dirs": {"type": "array", "items": {"type": "string"}}}, "required": ["dirs"], "additionalProperties": false}"#;

fn list_dirs() -> Reply {
    Reply::ToolCall {
        name: "list_allowed_directories".into(),
        arguments: "{}".into(),
    }
}

#[test]
fn only_the_checked_json_reaches_stdout_after_the_model_corrects_itself() {
    let dir = TempDir::new();
    let schema = dir.file("answer.schema.json", SCHEMA);
    let provider = FakeProvider::start([
        list_dirs(),
        Reply::Text(r#"{"dirs": "/tmp"}"#.into()),
        Reply::Text(r#"{"dirs": ["/tmp"]}"#.into()),
    ]);
    let output = run_on(&provider)
        .arg("--config")
        .arg(dir.config(&["fs"]))
        .arg("--output-schema")
        .arg(&schema)
        .arg("Which directories may you read?")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "{\"dirs\":[\"/tmp\"]}\n", "the JSON alone");
    let parsed: Value = serde_json::from_str(&stdout).expect("stdout is JSON");
    assert_eq!(parsed, json!({"dirs": ["/tmp"]}));
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    let format = &requests[0].body["response_format"];
    assert_eq!(format["json_schema"]["strict"], true, "{format}");
    assert_eq!(format["json_schema"]["schema"]["required"], json!(["dirs"]));
    let correction = messages(&requests[2].body)
        .last()
        .map(|message| message["content"].to_string())
        .unwrap_or_default();
    assert!(
        correction.contains("the answer does not fit the schema (/dirs: "),
        "{correction}"
    );
}

#[test]
fn an_answer_that_never_fits_fails_with_nothing_on_stdout() {
    let dir = TempDir::new();
    let schema = dir.file("answer.schema.json", SCHEMA);
    let provider = FakeProvider::start_with(|_| Reply::Text(r#"{"dirs": 5}"#.into()));
    let output = run_on(&provider)
        .arg("--output-schema")
        .arg(&schema)
        .args(["--output-retries", "1", "Which?"])
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stdout, "", "nothing on stdout");
    assert!(
        stderr.contains(
            "the answer did not fit --output-schema after 2 attempts; raise --output-retries"
        ),
        "{stderr}"
    );
    assert_eq!(provider.requests().len(), 2);
}

#[test]
fn anthropic_answers_through_the_output_tool() {
    let dir = TempDir::new();
    let schema = dir.file("answer.schema.json", SCHEMA);
    let provider = FakeProvider::start([
        list_dirs(),
        Reply::ToolCall {
            name: "final_result".into(),
            arguments: r#"{"dirs": ["/tmp"]}"#.into(),
        },
    ]);
    let output = run_on_anthropic(&provider)
        .arg("--config")
        .arg(dir.config(&["fs"]))
        .arg("--output-schema")
        .arg(&schema)
        .arg("Which directories may you read?")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout, "{\"dirs\":[\"/tmp\"]}\n");
    for request in provider.requests() {
        assert_eq!(
            request.body["tool_choice"]["type"], "any",
            "{}",
            request.body
        );
        let tools = request.body["tools"].as_array().expect("tools");
        assert_eq!(tools.last().expect("a tool")["name"], "final_result");
    }
}

#[test]
fn a_schema_golem_cannot_use_is_a_usage_error_before_anything_starts() {
    let dir = TempDir::new();
    let not_json = dir.file("bad.json", "{type: object");
    let not_schema = dir.file("odd.json", r#"{"type": 12}"#);
    let provider = FakeProvider::start_with(|_| Reply::Text("{}".into()));
    let cases: [(Vec<String>, &str); 4] = [
        (
            vec!["--output-schema".into(), "/nonexistent/schema.json".into()],
            "--output-schema /nonexistent/schema.json: ",
        ),
        (
            vec!["--output-schema".into(), not_json.display().to_string()],
            "not JSON",
        ),
        (
            vec!["--output-schema".into(), not_schema.display().to_string()],
            "not a JSON Schema",
        ),
        (
            vec!["--output-retries".into(), "3".into()],
            "--output-schema",
        ),
    ];
    for (flags, complaint) in cases {
        let output = run_on(&provider)
            .args(&flags)
            .arg("Hi")
            .output()
            .expect("golem runs");
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(complaint), "{flags:?}: {stderr}");
    }
    let chat = golem()
        .args(["chat", "--model", "openai:gpt-fake", "--base-url"])
        .arg(provider.openai_base_url())
        .arg("--output-schema")
        .arg(dir.file("ok.json", SCHEMA))
        .write_stdin("Hi\n")
        .output()
        .expect("golem runs");
    assert_eq!(chat.status.code(), Some(2), "{}", text(&chat.stderr));
    assert!(text(&chat.stderr).contains("--output-schema is for golem run"));
    assert!(provider.requests().is_empty(), "nothing was sent");
}
