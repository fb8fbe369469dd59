//! `golem` when the model gets a tool's name wrong (ADR 0020), against the
//! fake provider and real filesystem servers from npm: the call goes back
//! to the model as a correction naming the tools, with the prefixed name it
//! dropped, and stderr says so; past `--max-turns` the run fails with exit 1.

use golem_fake_provider::{FakeProvider, Reply, last_tool_result};
use serde_json::json;

mod support;
use support::*;

#[test]
fn a_call_without_the_servers_prefix_is_corrected_and_the_run_goes_on() {
    let dir = TempDir::new();
    let notes = dir.file("notes.txt", "found through the right name");
    // Two servers with the same tools: both are prefixed with their names.
    let config = dir.config(&["left", "right"]);
    let path = notes.clone();
    let provider = FakeProvider::start_with(move |body| match last_tool_result(body) {
        // The model follows the correction: the first name it suggests.
        Some(result) if result.starts_with("There is no tool") => Reply::ToolCall {
            name: result.split('"').nth(3).unwrap_or("none").to_owned(),
            arguments: json!({"path": path}).to_string(),
        },
        Some(result) => Reply::Text(format!("The file says: {result}")),
        // It drops the prefix.
        None => Reply::ToolCall {
            name: "read_text_file".into(),
            arguments: json!({"path": path}).to_string(),
        },
    });

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("Read notes.txt")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The file says: found through the right name\n");
    assert!(
        stderr.contains(
            "golem: the model called \"read_text_file\", which no server offers; it is told \
             the tools there are (and that it may mean \"left_read_text_file\")"
        ),
        "{stderr}"
    );
    let correction = last_tool_result(&provider.requests()[1].body).expect("a tool message");
    assert!(
        correction.starts_with(
            "There is no tool named \"read_text_file\". Did you mean one of \
             \"left_read_text_file\", \"right_read_text_file\"? The tools are: "
        ),
        "{correction}"
    );
    assert!(
        correction.contains("\"right_list_directory\""),
        "{correction}"
    );
}

#[test]
fn a_model_that_keeps_calling_tools_there_are_not_fails_at_the_turn_limit() {
    let dir = TempDir::new();
    let config = dir.config(&["fs"]);
    let provider = FakeProvider::start_with(|_| Reply::ToolCall {
        name: "weather".into(),
        arguments: "{}".into(),
    });

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(["--max-turns", "2", "What is the weather?"])
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);

    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains(
            "golem: the model called \"weather\", which no server offers; it is told the tools \
             there are\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("golem: no answer after 2 model request(s); raise --max-turns"),
        "{stderr}"
    );
}
