//! What `golem` answers when an MCP server asks something of it during a
//! run, against the Python SDK's server (`peers/python/mcp_py_server.py`)
//! and the npm `server-everything`, with the fake provider as the model:
//! elicitation with the terminal forms `golem-mcp` uses (`--on-elicitation`),
//! sampling with golem's own model (`--allow-sampling` only, shown on
//! stderr, the server's `maxTokens` passed on, at most `--max-samplings`
//! per server) and roots (`--root`); every prompt and notice names the
//! server that asks (`tests/fixtures/asking_server.py` asks as a malicious
//! server would). The Python servers' tools ask through server requests,
//! which they send in the 2025 era only: those runs pin `--protocol
//! 2025-11-25`.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

use golem_fake_provider::{FakeProvider, Reply, messages};
use serde_json::{Value, json};

mod support;
use support::*;

/// `golem` with the servers of `config`, pinned to the revision in which
/// the Python servers send their requests.
fn pinned(mut golem: Command, config: &Path) -> Command {
    golem
        .arg("--config")
        .arg(config)
        .args(["--protocol", "2025-11-25"]);
    golem
}

#[test]
fn a_form_is_asked_on_stdin_and_the_answer_reaches_the_tool() {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(caller("ask_user", "{}"));

    let output = pinned(run_on(&provider), &config)
        .args(["--on-elicitation", "ask", "Who am I?"])
        // Yes to the form, a name, Enter for the age's default.
        .write_stdin("y\nAda\n\n")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: hello Ada, 36\n");
    assert!(
        stderr.contains("\nThe server \"py\" (golem-py-peer 0.1.0) asks: Who are you?\n"),
        "{stderr}"
    );
    assert!(stderr.contains("[1/2] Name (name, required)"), "{stderr}");
}

#[test]
fn without_a_terminal_the_form_is_declined_and_the_run_goes_on() {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let provider = FakeProvider::start_with(caller("ask_user", "{}"));

    let output = pinned(run_on(&provider), &config)
        .arg("Who am I?")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: decline\n");
    assert!(
        stderr.contains(
            "golem: the server \"py\" (golem-py-peer 0.1.0) asked for input (a form: \
             \"Who are you?\"): declined; --on-elicitation ask or defaults answers it"
        ),
        "{stderr}"
    );

    // `defaults` cannot fill the required name: declined, saying why.
    let provider = FakeProvider::start_with(caller("ask_user", "{}"));
    let output = pinned(run_on(&provider), &config)
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

    let output = pinned(run_on(&provider), &config)
        .args(["--allow-sampling", "Ask the model"])
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: openai:gpt-fake: sampled words\n");
    assert!(
        stderr.contains(
            "golem: the server \"py\" (golem-py-peer 0.1.0) asks the model (1 message, at \
             most 50 tokens): what is MCP?\n"
        ),
        "{stderr}"
    );
    // The 50 tokens the server allowed, and only to its request.
    for request in provider.requests() {
        let sampled = messages(&request.body)
            .first()
            .is_some_and(|message| message["content"] == "answer briefly");
        let limit = request.body.get("max_completion_tokens");
        assert_eq!(limit, sampled.then_some(&json!(50)), "{}", request.body);
    }
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

    let output = pinned(run_on(&provider), &config)
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

/// `tests/fixtures/asking_server.py`, once per entry `(config name, the
/// name it gives itself)`, as an mcpServers file in `dir`.
fn asking_config(dir: &TempDir, entries: &[(&str, &str)]) -> PathBuf {
    let python = peer_python();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/asking_server.py");
    let servers: serde_json::Map<String, Value> = entries
        .iter()
        .map(|(name, own)| {
            (
                (*name).to_owned(),
                json!({"command": python, "args": [script, own]}),
            )
        })
        .collect();
    dir.file("asking.json", &json!({ "mcpServers": servers }).to_string())
}

/// Whether `body` is a sampling request of the asking server (its system
/// prompt is "sampled"), in either API's shape.
fn is_sampling(body: &Value) -> bool {
    body["system"] == "sampled"
        || messages(body)
            .first()
            .is_some_and(|message| message["content"] == "sampled")
}

/// The fake model: a sampling request gets "sampled words"; the agent
/// calls `tool` with `arguments`, then answers with its result.
fn sampler(
    tool: &'static str,
    arguments: &'static str,
) -> impl Fn(&Value) -> Reply + Send + Sync + 'static {
    let agent = caller(tool, arguments);
    move |body| match is_sampling(body) {
        true => Reply::Text("sampled words".into()),
        false => agent(body),
    }
}

#[test]
fn the_servers_max_tokens_reaches_either_provider() {
    let dir = TempDir::new();
    let config = asking_config(&dir, &[("asker", "asking-mcp")]);
    let arguments = r#"{"count": 1, "max_tokens": 7}"#;

    let provider = FakeProvider::start_with(sampler("sample_many", arguments));
    let output = pinned(run_on(&provider), &config)
        .args(["--allow-sampling", "Sample once"])
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: 1: sampled words\n");
    assert!(stderr.contains("at most 7 tokens): sample 1\n"), "{stderr}");
    let requests = provider.requests();
    let (sampled, run): (Vec<_>, Vec<_>) = requests.iter().partition(|r| is_sampling(&r.body));
    assert_eq!((sampled.len(), run.len()), (1, 2));
    // OpenAI: the current field, and only for the server's request.
    assert_eq!(sampled[0].body["max_completion_tokens"], 7);
    assert!(sampled[0].body.get("max_tokens").is_none());
    for request in run {
        assert!(request.body.get("max_completion_tokens").is_none());
    }

    let provider = FakeProvider::start_with(sampler("sample_many", arguments));
    let output = pinned(run_on_anthropic(&provider), &config)
        .args(["--allow-sampling", "Sample once"])
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    // Anthropic: `max_tokens`, the server's instead of the default 4096.
    for request in provider.requests() {
        let want = if is_sampling(&request.body) { 7 } else { 4096 };
        assert_eq!(request.body["max_tokens"], want, "{}", request.body);
    }
}

#[test]
fn a_server_that_keeps_sampling_is_answered_at_most_max_samplings_times() {
    let dir = TempDir::new();
    let config = asking_config(&dir, &[("evilsrv", "evil-mcp")]);
    let refusal = "refused (-1): sampling limit reached: golem answers at most 3 sampling \
                   requests per server (--max-samplings)";

    // The issue's server: twelve sampling requests from one tool call.
    let provider =
        FakeProvider::start_with(sampler("sample_many", r#"{"count": 12, "max_tokens": 5}"#));
    let output = pinned(run_on(&provider), &config)
        .args(["--allow-sampling", "--max-turns", "2", "Sample"])
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    let sampled = provider
        .requests()
        .iter()
        .filter(|request| is_sampling(&request.body))
        .count();
    assert_eq!(sampled, 3, "the default --max-samplings");
    assert!(
        stdout.starts_with(
            "The tool said: 1: sampled words\n2: sampled words\n3: sampled words\n4: "
        ),
        "{stdout}"
    );
    for index in 4..=12 {
        assert!(
            stdout.contains(&format!("\n{index}: {refusal}")),
            "{stdout}"
        );
    }
    assert!(
        stderr.contains(
            "golem: the server \"evilsrv\" (evil-mcp 1.0) asks the model again: declined, it \
             had its 3 sampling requests (--max-samplings 3)\n"
        ),
        "{stderr}"
    );

    // --max-samplings 1: one answered.
    let provider =
        FakeProvider::start_with(sampler("sample_many", r#"{"count": 2, "max_tokens": 5}"#));
    let output = pinned(run_on(&provider), &config)
        .args(["--allow-sampling", "--max-samplings", "1", "Sample"])
        .output()
        .expect("golem runs");
    let stdout = text(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(
        stdout,
        "The tool said: 1: sampled words\n2: refused (-1): sampling limit reached: golem \
         answers at most 1 sampling request per server (--max-samplings)\n"
    );

    // Without --allow-sampling it means nothing: a usage error.
    let output = run_on(&provider)
        .args(["--max-samplings", "5", "Sample"])
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(
        text(&output.stderr).contains("--allow-sampling"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_form_names_the_server_that_asks_as_configured_and_as_it_names_itself() {
    let dir = TempDir::new();
    // Two servers offer the same tools, so each is prefixed with its name.
    let config = asking_config(&dir, &[("github", "github-mcp"), ("evilsrv", "evil-mcp")]);

    let provider = FakeProvider::start_with(caller("evilsrv_ask_token", "{}"));
    let output = pinned(run_on(&provider), &config)
        .args(["--on-elicitation", "ask", "Go"])
        .write_stdin("n\n")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The tool said: decline\n");
    assert!(
        stderr.contains(
            "\nThe server \"evilsrv\" (evil-mcp 1.0) asks: the GitHub server needs your \
             personal access token\n"
        ),
        "{stderr}"
    );

    // Declined without a terminal: the note names it too.
    let provider = FakeProvider::start_with(caller("evilsrv_ask_token", "{}"));
    let output = pinned(run_on(&provider), &config)
        .arg("Go")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(
            "golem: the server \"evilsrv\" (evil-mcp 1.0) asked for input (a form: \"the \
             GitHub server needs your personal access token\"): declined"
        ),
        "{stderr}"
    );
}

#[test]
fn a_url_with_an_escape_is_never_handed_to_the_browser() {
    let dir = TempDir::new();
    let config = asking_config(&dir, &[("web", "web-mcp")]);
    // $BROWSER: a script that writes down the URLs it is given.
    let opened = dir.path().join("opened.txt");
    let browser = dir.file(
        "browser.sh",
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n",
            opened.display()
        ),
    );
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755))
            .expect("executable");
    }
    let open = |dirty: &'static str| {
        let provider = FakeProvider::start_with(caller("open_url", dirty));
        pinned(run_on(&provider), &config)
            .args(["--on-elicitation", "ask", "Sign me in"])
            .env("BROWSER", &browser)
            // Yes, open it; then Enter: done.
            .write_stdin("y\n\n")
            .output()
            .expect("golem runs")
    };

    let output = open(r#"{"dirty": true}"#);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.contains("\nThe server \"web\" (web-mcp 1.0) asks you to open a URL: Sign in\n"),
        "{stderr}"
    );
    assert!(stderr.contains("Open it? [y/N]"), "consent first: {stderr}");
    assert!(
        stderr.contains("  Not opened: the URL holds control characters"),
        "{stderr}"
    );
    assert!(!stderr.contains("opened with $BROWSER"), "{stderr}");
    assert_eq!(stdout, "The tool said: decline\n");
    assert!(!opened.exists(), "the browser was started");

    // The same URL without the escape is opened: the browser works.
    let output = open(r#"{"dirty": false}"#);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert!(stderr.contains("opened with $BROWSER"), "{stderr}");
    wait_until("the browser wrote the URL down", || {
        std::fs::read_to_string(&opened).is_ok_and(|urls| urls == "https://example.com/login\n")
    });
}

#[test]
fn sampling_spends_the_commands_budget_and_is_declined_past_it() {
    let dir = TempDir::new();
    let config = asking_config(&dir, &[("asker", "asking-mcp")]);
    // The agent's request, then the server's first sampling request: the
    // second is past --max-requests 2, and so is the agent's next one.
    let provider =
        FakeProvider::start_with(sampler("sample_many", r#"{"count": 2, "max_tokens": 5}"#));
    let output = pinned(run_on(&provider), &config)
        .args(["--allow-sampling", "--max-requests", "2", "Sample"])
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "stderr: {stderr}");
    let requests = provider.requests();
    assert_eq!(requests.len(), 2, "no request past the limit");
    assert!(is_sampling(&requests[1].body), "{}", requests[1].body);
    assert!(
        stderr.contains(
            "golem: the server \"asker\" (asking-mcp 1.0) asks the model: declined, the limit \
             of 2 model requests is reached (2 spent) in this command (--max-requests)\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("the limit of 2 model requests is reached (2 spent)"),
        "{stderr}"
    );
}

#[test]
fn a_servers_max_tokens_is_bounded_by_max_tokens_and_by_the_budget() {
    let dir = TempDir::new();
    let config = asking_config(&dir, &[("asker", "asking-mcp")]);
    for (flags, want) in [
        (["--max-tokens", "3"], 3u64),
        (["--max-output-tokens", "40"], 40),
    ] {
        let provider =
            FakeProvider::start_with(sampler("sample_many", r#"{"count": 1, "max_tokens": 500}"#));
        let output = pinned(run_on(&provider), &config)
            .args(["--allow-sampling"])
            .args(flags)
            .arg("Sample once")
            .output()
            .expect("golem runs");
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{flags:?}: {stderr}");
        let requests = provider.requests();
        let sampled = requests
            .iter()
            .find(|request| is_sampling(&request.body))
            .expect("a sampling request");
        // The agent's own request spent some of the budget already.
        let sent = sampled.body["max_completion_tokens"].as_u64().unwrap_or(0);
        assert!((1..=want).contains(&sent), "{flags:?}: {}", sampled.body);
    }
}
