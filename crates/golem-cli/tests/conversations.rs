//! `--save`, `--resume` and `--context-tokens`: a chat saved after each
//! answer survives the process being killed, and goes on with another
//! provider with its tool results intact; a long chat is kept under its
//! token budget by leaving out whole exchanges, never a tool call without
//! its result. Against the real filesystem server and the stand-in
//! providers.

use std::process::Stdio;

use golem_fake_provider::{FakeProvider, Reply, messages};
use serde_json::Value;

mod support;
use support::*;

const TOOL: &str = "list_allowed_directories";

/// `golem chat` on `provider` with `args`, its stdin a pipe kept open.
fn chat(provider: &FakeProvider, args: &[&std::ffi::OsStr]) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_golem"))
        .env("XDG_CACHE_HOME", fresh_cache())
        .env("OPENAI_API_KEY", KEY)
        .env_remove("ANTHROPIC_API_KEY")
        .args([
            "chat",
            "--model",
            "openai:gpt-fake",
            "--approve",
            "all",
            "--base-url",
        ])
        .arg(provider.openai_base_url())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("golem starts")
}

/// Every tool message of `body` answers a call of the assistant message
/// before it (either API's shape: OpenAI tool messages, Anthropic
/// tool_result blocks).
fn no_result_without_its_call(body: &Value) {
    let mut called: Vec<String> = Vec::new();
    for message in messages(body) {
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            called.push(call["id"].as_str().unwrap_or_default().to_owned());
        }
        for block in message["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_use" {
                called.push(block["id"].as_str().unwrap_or_default().to_owned());
            }
            if block["type"] == "tool_result" {
                let id = block["tool_use_id"].as_str().unwrap_or_default();
                assert!(
                    called.iter().any(|c| c == id),
                    "{id} without its call: {body}"
                );
            }
        }
        if message["role"] == "tool" {
            let id = message["tool_call_id"].as_str().unwrap_or_default();
            assert!(
                called.iter().any(|c| c == id),
                "{id} without its call: {body}"
            );
        }
    }
}

#[test]
fn a_saved_chat_survives_a_kill_and_goes_on_with_another_provider() {
    let dir = TempDir::new();
    let saved = dir.path().join("chat.json");
    let config = dir.config(&["fs"]);
    let provider = FakeProvider::start_with(caller(TOOL, "{}"));
    let mut golem = chat(
        &provider,
        &[
            "--config".as_ref(),
            config.as_os_str(),
            "--save".as_ref(),
            saved.as_os_str(),
        ],
    );
    type_line(&mut golem, "Where may you read?");
    wait_until("the conversation is saved", || saved.exists());
    // Killed while it waits for the next line: nothing more is written.
    golem.kill().expect("killed");
    golem.wait().expect("reaped");

    let file = std::fs::read_to_string(&saved).expect("saved");
    let conversation: Value = serde_json::from_str(&file).expect("JSON");
    assert_eq!(conversation["version"], 1);
    assert_eq!(conversation["model"], "openai:gpt-fake");
    assert_eq!(
        conversation["messages"].as_array().map(Vec::len),
        Some(4),
        "{file}"
    );
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&saved)
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Resumed with Anthropic: the earlier exchange, tool result included.
    let anthropic = FakeProvider::start([Reply::Text("Still there.".into())]);
    let output = run_on_anthropic(&anthropic)
        .arg("--resume")
        .arg(&saved)
        .arg("And now?")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(text(&output.stdout), "Still there.\n");
    let body = &anthropic.requests()[0].body;
    let sent = messages(body);
    assert_eq!(sent.len(), 5, "{body}");
    assert_eq!(sent[0]["content"][0]["text"], "Where may you read?");
    let result = &sent[2]["content"][0];
    assert_eq!(result["type"], "tool_result", "{body}");
    assert!(
        result["content"]
            .to_string()
            .contains(&dir.path().display().to_string()),
        "the directory listing: {body}"
    );
    no_result_without_its_call(body);
}

#[test]
fn a_long_chat_leaves_out_whole_exchanges_to_stay_under_its_tokens() {
    let dir = TempDir::new();
    let config = dir.config(&["fs"]);
    let saved = dir.path().join("chat.json");
    let provider = FakeProvider::start_with(caller(TOOL, "{}"));
    let output = golem()
        .args([
            "chat",
            "--model",
            "openai:gpt-fake",
            "--approve",
            "all",
            "--base-url",
        ])
        .arg(provider.openai_base_url())
        .arg("--config")
        .arg(&config)
        .arg("--save")
        .arg(&saved)
        .args(["--context-tokens", "20"])
        .write_stdin("first\nsecond\nthird\n")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("the conversation would pass --context-tokens 20: its "),
        "{stderr}"
    );
    let requests = provider.requests();
    // Two requests per line: the call, then the answer.
    assert_eq!(requests.len(), 6);
    for request in &requests {
        no_result_without_its_call(&request.body);
        let first = messages(&request.body)
            .into_iter()
            .find(|message| message["role"] != "system")
            .expect("a message");
        assert_eq!(first["role"], "user", "{}", request.body);
    }
    let last = messages(&requests[5].body);
    assert!(
        !last.iter().any(|message| message["content"] == "first"),
        "the first exchange was left out: {last:?}"
    );
    // What is saved keeps every exchange: four messages each.
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(&saved).expect("saved")).expect("JSON");
    assert_eq!(
        file["messages"].as_array().map(Vec::len),
        Some(12),
        "{file}"
    );
}

#[test]
fn calls_a_resumed_conversation_ends_with_are_answered_as_not_run() {
    let dir = TempDir::new();
    let open = dir.file(
        "open.json",
        &serde_json::json!({"version": 1, "messages": [
            {"role": "user", "content": "Write it"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "c1", "name": "write_file", "arguments": {"path": "a"}}]}
        ]})
        .to_string(),
    );
    let provider = FakeProvider::start([Reply::Text("Understood.".into())]);
    let output = run_on(&provider)
        .arg("--resume")
        .arg(&open)
        .arg("Go on")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("ends with 1 tool call that never ran"),
        "{stderr}"
    );
    let body = &provider.requests()[0].body;
    no_result_without_its_call(body);
    let sent = messages(body);
    assert_eq!(sent[2]["role"], "tool", "{body}");
    assert!(sent[2]["content"].to_string().contains("not run"), "{body}");
}

#[test]
fn a_conversation_golem_cannot_read_is_a_usage_error() {
    let dir = TempDir::new();
    let newer = dir.file("newer.json", r#"{"version": 2, "messages": []}"#);
    let provider = FakeProvider::start_with(|_| Reply::Text("hi".into()));
    for (file, complaint) in [
        (newer, "--resume: the conversation is in format version 2"),
        (dir.path().join("missing.json"), "--resume: "),
    ] {
        let output = run_on(&provider)
            .arg("--resume")
            .arg(&file)
            .arg("Hi")
            .output()
            .expect("golem runs");
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(complaint), "{stderr}");
    }
    assert!(provider.requests().is_empty());
}
