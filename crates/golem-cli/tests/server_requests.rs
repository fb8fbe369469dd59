//! What `golem` answers when an MCP server asks something of it during a
//! run, against the Python SDK's server (`peers/python/mcp_py_server.py`)
//! and the npm `server-everything`, with the fake provider as the model:
//! elicitation with the terminal forms `golem-mcp` uses (`--on-elicitation`),
//! sampling with golem's own model (`--allow-sampling` only, shown on
//! stderr) and roots (`--root`). The Python server's tools ask through
//! server requests, which it sends in the 2025 era only: those runs pin
//! `--protocol 2025-11-25`.

use golem_fake_provider::{FakeProvider, Reply, messages};

mod support;
use support::*;

/// The revision in which the Python server sends its requests.
const LEGACY: [&str; 2] = ["--protocol", "2025-11-25"];

#[test]
fn a_form_is_asked_on_stdin_and_the_answer_reaches_the_tool() {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(caller("ask_user", "{}"));

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(LEGACY)
        .args(["--on-elicitation", "ask", "Who am I?"])
        // Yes to the form, a name, Enter for the age's default.
        .write_stdin("y\nAda\n\n")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: hello Ada, 36\n");
    assert!(stderr.contains("The server asks: Who are you?"), "{stderr}");
    assert!(stderr.contains("[1/2] Name (name, required)"), "{stderr}");
}

#[test]
fn without_a_terminal_the_form_is_declined_and_the_run_goes_on() {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(caller("ask_user", "{}"));

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(LEGACY)
        .arg("Who am I?")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: decline\n");
    assert!(
        stderr.contains(
            "golem: declined the server's request for input (a form: \"Who are you?\"); \
             --on-elicitation ask or defaults answers it"
        ),
        "{stderr}"
    );

    // `defaults` cannot fill the required name: declined, saying why.
    let provider = FakeProvider::start_with(caller("ask_user", "{}"));
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(LEGACY)
        .args(["--on-elicitation", "defaults", "Who am I?"])
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.contains("cannot fill the required field \"name\""),
        "{stderr}"
    );
}

#[test]
fn ask_with_the_prompt_on_stdin_is_a_usage_error() {
    let provider = FakeProvider::start_with(caller("ask_user", "{}"));
    let output = run_on(&provider)
        .args(["--on-elicitation", "ask", "-"])
        .write_stdin("Who am I?\n")
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(
        text(&output.stderr).contains("PROMPT \"-\" already reads"),
        "{}",
        text(&output.stderr)
    );
    assert_eq!(provider.request_count(), 0);
}

/// The fake model: the server's sampling request (its system prompt is
/// "answer briefly") gets `sampled`, the agent calls `ask_model` and then
/// answers with its result.
fn agent_and_sampler(body: &serde_json::Value) -> Reply {
    let system = messages(body)
        .first()
        .and_then(|message| message["content"].as_str().map(str::to_owned));
    if system.as_deref() == Some("answer briefly") {
        return Reply::Text("sampled words".into());
    }
    caller("ask_model", r#"{"question":"what is MCP?"}"#)(body)
}

#[test]
fn with_allow_sampling_the_servers_request_is_answered_by_the_model_and_shown() {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(agent_and_sampler);

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(LEGACY)
        .args(["--allow-sampling", "Ask the model"])
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: openai:gpt-fake: sampled words\n");
    assert!(
        stderr.contains(
            "golem: [py] sampling request (1 message, at most 50 tokens): what is MCP?\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("golem: [py] sampling answer (openai:gpt-fake): sampled words\n"),
        "{stderr}"
    );
    // Three model requests: two of the run, one of the server's.
    assert_eq!(provider.request_count(), 3);
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("golem: usage: 3 requests"), "{stderr}");
}

#[test]
fn without_allow_sampling_the_servers_request_is_refused() {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(agent_and_sampler);

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(LEGACY)
        .arg("Ask the model")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);

    assert!(!stderr.contains("sampling request"), "{stderr}");
    let requests = provider.requests();
    assert!(
        requests.iter().all(|request| {
            messages(&request.body)
                .first()
                .and_then(|message| message["content"].as_str())
                != Some("answer briefly")
        }),
        "the model was never asked for the server"
    );
    // The server's tool failed for want of sampling, and said so.
    assert!(stderr.contains("golem: [py] ask_model error"), "{stderr}");
}

#[test]
fn roots_from_root_reach_the_server() {
    let dir = TempDir::new();
    let root = TempDir::new();
    let config = dir.file(
        "mcp.json",
        &serde_json::json!({"mcpServers": {"everything": {
            "command": everything_server(), "args": ["stdio"]}}})
        .to_string(),
    );
    // The server offers `get-roots-list` only to a client with roots.
    let provider = FakeProvider::start_with(caller("get-roots-list", "{}"));

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("--root")
        .arg(root.path())
        .arg("Where may you work?")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    let uri = format!("file://{}", root.path().display());
    assert!(stdout.contains(&uri), "{uri} not in {stdout}");
}
