//! `golem run --max-tokens`, `--temperature`, `--seed`, `--tool-choice`:
//! each reaches the provider's request body as its API names it (checked
//! by the fake provider against the real APIs' rules), a forced tool
//! choice holds until the model has called a tool, and what a provider
//! cannot take is a usage error before any server starts. Against the
//! real filesystem server.

use golem_fake_provider::FakeProvider;
use serde_json::json;

mod support;
use support::*;

const TOOL: &str = "list_allowed_directories";

#[test]
fn the_settings_reach_an_openai_request_and_required_holds_until_a_call() {
    let dir = TempDir::new();
    let provider = FakeProvider::start_with(caller(TOOL, "{}"));
    let output = run_on(&provider)
        .arg("--config")
        .arg(dir.config(&["fs"]))
        .args([
            "--temperature",
            "0.25",
            "--seed",
            "5",
            "--max-tokens",
            "100",
        ])
        .args(["--tool-choice", "required", "Where may you read?"])
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let requests = provider.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        let body = &request.body;
        assert_eq!(body["temperature"], json!(0.25), "{body}");
        assert_eq!(body["seed"], json!(5), "{body}");
        assert_eq!(body["max_completion_tokens"], json!(100), "{body}");
    }
    assert_eq!(requests[0].body["tool_choice"], json!("required"));
    assert!(
        requests[1].body.get("tool_choice").is_none(),
        "after the call the model may answer: {}",
        requests[1].body
    );
}

#[test]
fn the_settings_reach_an_anthropic_request_and_a_seed_is_a_usage_error() {
    let dir = TempDir::new();
    let provider = FakeProvider::start_with(caller(TOOL, "{}"));
    let output = run_on_anthropic(&provider)
        .arg("--config")
        .arg(dir.config(&["fs"]))
        .args(["--max-tokens", "100", "--temperature", "0.5"])
        .args([
            "--tool-choice",
            &format!("tool:{TOOL}"),
            "Where may you read?",
        ])
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let requests = provider.requests();
    assert_eq!(
        requests[0].body["tool_choice"],
        json!({"type": "tool", "name": TOOL})
    );
    assert!(requests[1].body.get("tool_choice").is_none());
    for request in &requests {
        assert_eq!(request.body["max_tokens"], json!(100));
        assert_eq!(request.body["temperature"], json!(0.5));
    }

    for (flags, complaint) in [
        (
            ["--seed", "1"],
            "golem: --seed: Anthropic's Messages API has no seed",
        ),
        (
            ["--temperature", "1.5"],
            "golem: --temperature: Anthropic's Messages API takes 0 to 1",
        ),
    ] {
        let provider = FakeProvider::start_with(caller(TOOL, "{}"));
        let output = run_on_anthropic(&provider)
            .args(flags)
            .arg("Hi")
            .output()
            .expect("golem runs");
        assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
        assert!(
            text(&output.stderr).starts_with(complaint),
            "{}",
            text(&output.stderr)
        );
        assert!(provider.requests().is_empty(), "nothing was sent");
    }
}

#[test]
fn a_tool_choice_or_temperature_golem_cannot_read_is_a_usage_error() {
    let provider = FakeProvider::start_with(caller(TOOL, "{}"));
    for flags in [
        ["--tool-choice", "sometimes"],
        ["--tool-choice", "tool:"],
        ["--temperature", "3"],
        ["--max-tokens", "0"],
    ] {
        let output = run_on(&provider)
            .args(flags)
            .arg("Hi")
            .output()
            .expect("golem runs");
        assert_eq!(output.status.code(), Some(2), "{flags:?}");
    }
    assert!(provider.requests().is_empty());
}
