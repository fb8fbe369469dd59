//! `golem` on a real server (the Python SDK's, `peers/python/odd_names_server.py`)
//! whose tool names no model provider accepts as they are: a dotted name,
//! one with a space and non-ASCII letters, one of 90 characters. The fake
//! provider refuses what the real APIs refuse (their names and messages),
//! so a run only gets through when every offered name is safe; the call
//! still reaches the server under the server's own name.

use golem_fake_provider::{FakeProvider, Reply, last_tool_result, tool_names};
use serde_json::{Value, json};

mod support;
use support::*;

/// A model that calls the offered tool whose name starts with `start`,
/// then answers with its result.
fn calls(start: &'static str, arguments: Value) -> impl Fn(&Value) -> Reply {
    move |body| match last_tool_result(body) {
        Some(result) => Reply::Text(format!("The tool said: {result}")),
        None => Reply::ToolCall {
            name: tool_names(body)
                .into_iter()
                .find(|name| name.starts_with(start))
                .unwrap_or_else(|| format!("no tool starting with {start} offered")),
            arguments: arguments.to_string(),
        },
    }
}

#[track_caller]
fn assert_offered_names_are_safe(provider: &FakeProvider) {
    let offered = tool_names(&provider.requests()[0].body);
    assert_eq!(offered.len(), 3, "{offered:?}");
    for name in &offered {
        assert!(
            name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{name:?} of {offered:?}"
        );
    }
    assert!(
        offered
            .iter()
            .any(|name| name.len() == 64 && name.starts_with("summarize_the_quarterly_report")),
        "the long name is cut to 64: {offered:?}"
    );
}

#[test]
fn names_no_provider_accepts_are_offered_safe_and_call_the_servers_tool() {
    let dir = TempDir::new();
    let config = python_script_config(&dir, "odd_names_server.py", "odd");
    let provider = FakeProvider::start_with(calls("get_weather_", json!({"city": "Köln"})));

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("How is the weather in Köln?")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: get.weather: sunny in Köln\n");
    assert_offered_names_are_safe(&provider);
}

#[test]
fn anthropic_gets_the_same_safe_names() {
    let dir = TempDir::new();
    let config = python_script_config(&dir, "odd_names_server.py", "odd");
    let provider = FakeProvider::start_with(calls("wetter_f_r_k_ln_", json!({})));

    let output = run_on_anthropic(&provider)
        .arg("--config")
        .arg(&config)
        .arg("Wie ist das Wetter?")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: wetter für köln: sonnig\n");
    assert_offered_names_are_safe(&provider);
}
