//! The `golem` binary end to end, against `golem-fake-provider` (a fake
//! model provider in this process, speaking the documented wire formats,
//! streaming) and
//! the real `@modelcontextprotocol/server-filesystem` from `peers/`
//! (installed by `scripts/install-peers.sh`; a missing peer fails the
//! test): the model asks for a tool, the tool runs, the answer carries its
//! result. Also: chat commands on stdin, usage errors, provider errors,
//! server failures, and Ctrl-C leaving no server behind.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use golem_fake_provider::{
    FakeProvider, Reply, last_tool_result, messages, refused_address, tool_names,
};
use predicates::prelude::*;
use serde_json::{Value, json};

mod support;
use support::*;

/// The usage totals are the last line of stderr, also after a failure or a
/// signal (docs/golem.md says so).
#[track_caller]
fn assert_last_line_is_usage(stderr: &str, start: &str) {
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with(start), "last line {last:?} of:\n{stderr}");
}

/// A model that reads `file` with whichever offered tool ends in
/// `read_text_file`, then answers with what the tool returned.
fn reader(file: PathBuf, tool_suffix: &'static str) -> impl Fn(&Value) -> Reply {
    move |body| match last_tool_result(body) {
        Some(result) => Reply::Text(format!("The file says: {result}")),
        None => {
            let tool = tool_names(body)
                .into_iter()
                .find(|name| name.ends_with(tool_suffix))
                .unwrap_or_else(|| "no such tool offered".into());
            Reply::ToolCall {
                name: tool,
                arguments: json!({"path": file}).to_string(),
            }
        }
    }
}

#[test]
fn run_calls_a_filesystem_tool_and_streams_an_answer_with_its_result() {
    let dir = TempDir::new();
    let notes = dir.file("notes.txt", "the owl flies at midnight");
    let config = dir.config(&["fs"]);
    let provider = FakeProvider::start_with(reader(notes.clone(), "read_text_file"));

    let output = golem()
        .args([
            "run",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
            // With --base-url, a key is sent only when its variable is named.
            "--api-key-env",
            "OPENAI_API_KEY",
        ])
        .arg("--config")
        .arg(&config)
        .args(["--system", "Be brief.", "What is in notes.txt?"])
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));

    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The file says: the owl flies at midnight\n");
    let arguments = json!({"path": notes}).to_string();
    assert!(
        stderr.contains(&format!("golem: [fs] read_text_file {arguments}\n")),
        "{stderr}"
    );
    assert!(
        has_line(&stderr, "golem: [fs] read_text_file ok (", " ms)"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("golem: usage: 2 requests, 32 input tokens, 16 output tokens\n"),
        "{stderr}"
    );
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));

    let seen = provider.requests();
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(
            request.header("authorization"),
            Some(&*format!("Bearer {KEY}"))
        );
        assert_eq!(request.body["stream"], true);
        assert_eq!(request.body["model"], "gpt-fake");
    }
    let first = &seen[0].body;
    assert_eq!(
        messages(first)[0],
        json!({"role": "system", "content": "Be brief."})
    );
    assert_eq!(
        messages(first)[1],
        json!({"role": "user", "content": "What is in notes.txt?"})
    );
    let offered = tool_names(first);
    assert!(
        offered.contains(&"read_text_file".to_owned()),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"list_directory".to_owned()),
        "{offered:?}"
    );
    // The tool's result went back to the model as the answer to its call.
    let second = messages(&seen[1].body);
    let tool = second.last().expect("a tool message");
    assert_eq!(tool["role"], "tool");
    assert_eq!(tool["tool_call_id"], "call_1");
    assert_eq!(tool["content"], "the owl flies at midnight");
}

#[test]
fn anthropic_models_take_their_key_and_the_host_as_base_url() {
    let dir = TempDir::new();
    let notes = dir.file("notes.txt", "anthropic read this");
    let config = dir.config(&["fs"]);
    let provider = FakeProvider::start_with(reader(notes, "read_text_file"));

    let output = golem()
        .env_remove("OPENAI_API_KEY")
        .env("ANTHROPIC_API_KEY", KEY)
        .args([
            "run",
            "--model",
            "anthropic:claude-fake",
            "--base-url",
            provider.anthropic_base_url(),
            "--api-key-env",
            "ANTHROPIC_API_KEY",
        ])
        .arg("--config")
        .arg(&config)
        .args(["--system", "Be brief.", "Read notes.txt"])
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The file says: anthropic read this\n");
    assert!(
        has_line(&stderr, "golem: [fs] read_text_file ok (", " ms)"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("golem: usage: 2 requests, 30 input tokens, 10 output tokens\n"),
        "{stderr}"
    );
    let seen = provider.requests();
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(request.path, "/v1/messages");
        assert_eq!(request.header("x-api-key"), Some(KEY));
        assert_eq!(request.header("authorization"), None);
        assert_eq!(request.body["system"], "Be brief.");
        assert_eq!(request.body["stream"], true);
    }
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
}

#[test]
fn with_fail_on_tool_error_a_call_past_the_tool_timeout_ends_the_run_with_exit_5() {
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {"everything": {"command": everything_server(), "args": ["stdio"]}}})
            .to_string(),
    );
    let provider = FakeProvider::start_with(|_| Reply::ToolCall {
        name: "trigger-long-running-operation".into(),
        arguments: r#"{"duration": 60, "steps": 2}"#.into(),
    });
    let start = Instant::now();
    let output = run_on(&provider)
        .args([
            "--tool-timeout",
            "0.5",
            "--fail-on-tool-error",
            "Take your time",
        ])
        .arg("--config")
        .arg(&config)
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("golem: [everything] trigger-long-running-operation error (")
            && stderr.contains("no answer within 0.5 s; raise --tool-timeout"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "golem: the run ends on the failed call of \"trigger-long-running-operation\" above"
        ),
        "{stderr}"
    );
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_tool_error_goes_back_to_the_model_and_is_shown() {
    let dir = TempDir::new();
    let missing = dir.path().join("missing.txt");
    let config = dir.config(&["fs"]);
    let provider = FakeProvider::start_with(reader(missing, "read_text_file"));

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("Read missing.txt")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.lines().any(
            |line| line.starts_with("golem: [fs] read_text_file error (")
                && line.contains("ENOENT")
        ),
        "{stderr}"
    );
    assert!(stdout.starts_with("The file says: "), "{stdout}");
    assert!(
        stdout.contains("ENOENT"),
        "the model saw the error: {stdout}"
    );
}

#[test]
fn clashing_tool_names_are_prefixed_per_server_and_server_picks_some() {
    let dir = TempDir::new();
    let notes = dir.file("notes.txt", "prefixed contents");
    let config = dir.config(&["left", "right"]);
    let provider = FakeProvider::start_with(reader(notes.clone(), "right_read_text_file"));

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("Read it through the right server")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The file says: prefixed contents\n");
    assert!(
        stderr.contains("golem: [right] read_text_file {"),
        "{stderr}"
    );
    let offered = tool_names(&provider.requests()[0].body);
    assert!(
        offered.contains(&"left_read_text_file".to_owned()),
        "{offered:?}"
    );
    assert!(
        offered.contains(&"right_read_text_file".to_owned()),
        "{offered:?}"
    );
    assert!(
        !offered.contains(&"read_text_file".to_owned()),
        "{offered:?}"
    );

    // One server named: its tools as they are.
    let provider = FakeProvider::start_with(reader(notes, "read_text_file"));
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(["--server", "left", "Read it"])
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let offered = tool_names(&provider.requests()[0].body);
    assert!(
        offered.contains(&"read_text_file".to_owned()),
        "{offered:?}"
    );
    assert!(
        !offered.iter().any(|name| name.starts_with("left_")),
        "{offered:?}"
    );
}

/// A model that says what the user said so far.
fn parrot(body: &Value) -> Reply {
    let said: Vec<String> = messages(body)
        .iter()
        .filter(|message| message["role"] == "user")
        .map(|message| message["content"].as_str().unwrap_or_default().to_owned())
        .collect();
    Reply::Text(format!("you said: {}", said.join(" / ")))
}

#[test]
fn chat_keeps_a_history_and_answers_its_commands() {
    let dir = TempDir::new();
    let config = dir.config(&["fs"]);
    let provider = FakeProvider::start_with(parrot);

    let output = golem()
        .args([
            "chat",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
        ])
        .arg("--config")
        .arg(&config)
        .write_stdin("hello\n\nagain\n/tools\n/nope\n/clear\nfresh start\n/exit\nnever sent\n")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "you said: hello");
    assert_eq!(lines[1], "you said: hello / again");
    // `/tools`: server, tool and description in aligned columns.
    let listed: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|line| line.starts_with("fs  "))
        .collect();
    assert!(listed.len() > 5, "{stdout}");
    assert!(
        listed
            .iter()
            .any(|line| line.starts_with("fs  read_text_file  ")),
        "{stdout}"
    );
    let column = |line: &str| {
        let tool = &line[4..];
        4 + tool.find("  ").expect("a description")
            + tool[tool.find("  ").unwrap_or(0)..]
                .find(|c: char| c != ' ')
                .unwrap_or(0)
    };
    let first = column(listed[0]);
    assert!(
        listed.iter().all(|line| column(line) == first),
        "descriptions not aligned:\n{stdout}"
    );
    assert_eq!(lines.last().copied(), Some("you said: fresh start"));
    assert!(stderr.contains("golem: unknown command /nope"), "{stderr}");
    assert!(
        stderr.contains("golem: the conversation so far is forgotten"),
        "{stderr}"
    );
    assert!(
        stderr.ends_with("golem: usage: 3 requests, 36 input tokens, 21 output tokens\n"),
        "{stderr}"
    );
    assert_eq!(provider.request_count(), 3, "/exit ends the conversation");
}

#[test]
fn chat_ends_at_the_end_of_input_with_the_last_exchanges_status() {
    let provider = FakeProvider::start_with(|body| {
        if messages(body).len() > 1 {
            Reply::Error {
                status: 400,
                kind: "invalid_request_error".into(),
                message: "too long".into(),
            }
        } else {
            parrot(body)
        }
    });
    let output = golem()
        .args([
            "chat",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
        ])
        .write_stdin("one\ntwo\n")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "stderr: {stderr}");
    assert_eq!(text(&output.stdout), "you said: one\n");
    assert!(stderr.contains("too long"), "{stderr}");
}

#[test]
fn a_missing_key_is_a_usage_error_naming_the_variable() {
    for (model, variable) in [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    ] {
        golem()
            .env_remove("OPENAI_API_KEY")
            .args(["run", "--model", model, "hi"])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(format!(
                "the environment variable {variable} is not set"
            )));
    }
    golem()
        .args([
            "run",
            "--model",
            "openai:m",
            "--api-key-env",
            "GOLEM_TEST_UNSET_KEY",
            "hi",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("GOLEM_TEST_UNSET_KEY"));
}

#[test]
fn a_bad_model_or_option_is_a_usage_error() {
    for (arguments, says) in [
        (vec!["run", "--model", "gpt-4o", "hi"], "names no provider"),
        (
            vec!["run", "--model", "gemini:pro", "hi"],
            "unknown provider",
        ),
        (vec!["run", "--model", "openai:", "hi"], "names no model"),
        (
            vec!["run", "--model", "openai:m", "--base-url", "ftp://x", "hi"],
            "--base-url",
        ),
        (
            vec!["run", "--model", "openai:m", "--max-turns", "0", "hi"],
            "--max-turns",
        ),
        (
            vec!["run", "--model", "openai:m", "--tool-timeout", "soon", "hi"],
            "--tool-timeout",
        ),
        (
            vec!["run", "--model", "openai:m", "--server", "fs", "hi"],
            "--config",
        ),
        (vec!["run", "--model", "openai:m", ""], "prompt is empty"),
        (vec!["run", "hi"], "--model"),
    ] {
        golem()
            .args(&arguments)
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(says));
    }
}

#[test]
fn an_unknown_server_or_a_bad_config_is_a_usage_error() {
    let dir = TempDir::new();
    let config = dir.config(&["fs"]);
    golem()
        .args(["run", "--model", "openai:m", "--server", "github", "hi"])
        .arg("--config")
        .arg(&config)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no server named \"github\"")
                .and(predicate::str::contains("it defines: fs")),
        );
    let broken = dir.file("broken.json", "{\"mcpServers\": ");
    golem()
        .args(["run", "--model", "openai:m", "hi", "--config"])
        .arg(&broken)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not valid JSON"));
}

#[test]
fn a_server_that_cannot_start_is_a_transport_failure_naming_it() {
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        r#"{"mcpServers": {"ghost": {"command": "/no/such/mcp-server"}}}"#,
    );
    let provider = FakeProvider::start_with(parrot);
    golem()
        .args([
            "run",
            "--model",
            "openai:m",
            "--base-url",
            provider.openai_base_url(),
            "hi",
            "--config",
        ])
        .arg(&config)
        .assert()
        .code(4)
        .stderr(predicate::str::contains("MCP server \"ghost\""));
    assert!(
        provider.requests().is_empty(),
        "no model request without the tools"
    );
}

#[test]
fn a_provider_error_exits_3_without_showing_the_key() {
    let provider = FakeProvider::start_with(|_| Reply::Error {
        status: 401,
        kind: "invalid_api_key".into(),
        message: "Incorrect API key provided.".into(),
    });
    let output = golem()
        .args([
            "run",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
            "hi",
        ])
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("HTTP 401"), "{stderr}");
    assert!(stderr.contains("Incorrect API key provided."), "{stderr}");
    // Sent, and refused: it counts.
    assert_last_line_is_usage(&stderr, "golem: usage: 1 request, 0 input tokens");
    assert!(!stderr.contains(KEY), "{stderr}");
    assert_eq!(provider.request_count(), 1, "a 401 is not retried");
}

#[test]
fn the_turn_limit_exits_1_naming_the_option() {
    let dir = TempDir::new();
    let notes = dir.file("notes.txt", "again and again");
    let config = dir.config(&["fs"]);
    // A model that never stops calling the tool.
    let provider = FakeProvider::start_with(move |_| Reply::ToolCall {
        name: "read_text_file".into(),
        arguments: json!({"path": notes}).to_string(),
    });
    let output = run_on(&provider)
        .args(["--max-turns", "2", "Loop", "--config"])
        .arg(&config)
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("golem: no answer after 2 model request(s); raise --max-turns"),
        "{stderr}"
    );
    assert_last_line_is_usage(&stderr, "golem: usage: 2 requests");
    assert_eq!(provider.request_count(), 2);
}

#[test]
fn an_unreachable_provider_exits_4() {
    // A port that was free a moment ago: nothing listens there.
    let address = refused_address();
    let output = golem()
        .args(["run", "--model", "openai:gpt-fake", "--base-url"])
        .arg(format!("http://{address}/v1"))
        .arg("hi")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("openai:"), "{stderr}");
    assert!(!stderr.contains(KEY), "{stderr}");
}

#[test]
fn images_go_with_the_prompt() {
    let dir = TempDir::new();
    let png = dir.path().join("dot.png");
    std::fs::write(&png, [0x89, b'P', b'N', b'G']).expect("written");
    let provider = FakeProvider::start_with(|_| Reply::Text("a dot".into()));
    run_on(&provider)
        .arg("--image")
        .arg(&png)
        .args(["--image", "https://example.com/cat.jpg", "What are these?"])
        .assert()
        .code(0)
        .stdout("a dot\n");
    let content = &messages(&provider.requests()[0].body)[0]["content"];
    assert_eq!(
        content,
        &json!([
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}},
            {"type": "text", "text": "What are these?"}
        ])
    );
    golem()
        .args(["run", "--model", "openai:m", "--image", "notes.txt", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--image notes.txt: not a .png"));
}

#[test]
fn the_prompt_can_come_from_stdin() {
    let provider = FakeProvider::start_with(parrot);
    golem()
        .args([
            "run",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
            "-",
        ])
        .write_stdin("from a pipe\n")
        .assert()
        .code(0)
        .stdout("you said: from a pipe\n")
        // No tools at all: said before the run, not left to the model.
        .stderr(predicate::str::starts_with(
            "golem: no MCP servers (--config FILE names them): the model answers without tools\n",
        ));
}

#[test]
fn ctrl_c_ends_the_command_and_its_servers() {
    let dir = TempDir::new();
    let config = dir.config(&["fs"]);
    // The model never answers: the command is waiting for it when Ctrl-C
    // comes.
    let provider = FakeProvider::start_with(|_| Reply::Hang);
    let mut child = Process::new(env!("CARGO_BIN_EXE_golem"))
        .env("XDG_CACHE_HOME", fresh_cache())
        .args([
            "run",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
        ])
        .arg("--config")
        .arg(&config)
        .arg("hi")
        .env("OPENAI_API_KEY", KEY)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("golem starts");
    let golem = child.id();
    provider
        .wait_for_requests(1, PATIENCE)
        .expect("the model was asked");
    let servers = children(golem);
    assert_eq!(servers.len(), 1, "one filesystem server: {servers:?}");

    let start = Instant::now();
    let status = interrupt(&mut child);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read");
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("golem: interrupted (Ctrl-C)"), "{stderr}");
    // The request in flight counts, though it never answered.
    assert_last_line_is_usage(&stderr, "golem: usage: 1 request,");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "closing took {:?}",
        start.elapsed()
    );
    wait_until("the server has exited", || {
        !servers.iter().any(|pid| alive(*pid))
    });
}

#[test]
fn ctrl_c_at_the_chat_prompt_ends_it_and_its_servers() {
    let dir = TempDir::new();
    let config = dir.config(&["fs"]);
    let provider = FakeProvider::start_with(parrot);
    let mut child = Process::new(env!("CARGO_BIN_EXE_golem"))
        .env("XDG_CACHE_HOME", fresh_cache())
        .args([
            "chat",
            "--model",
            "openai:gpt-fake",
            "--base-url",
            provider.openai_base_url(),
        ])
        .arg("--config")
        .arg(&config)
        .env("OPENAI_API_KEY", KEY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("golem starts");
    let golem = child.id();
    type_line(&mut child, "hello");
    // Stdout, read as it comes: the answer printed means golem is back
    // at the prompt (stdin stays open).
    let stdout = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reading = {
        let stdout = std::sync::Arc::clone(&stdout);
        let mut pipe = child.stdout.take().expect("stdout");
        std::thread::spawn(move || {
            let mut buffer = [0u8; 256];
            while let Ok(read @ 1..) = pipe.read(&mut buffer) {
                stdout
                    .lock()
                    .expect("lock")
                    .push_str(&String::from_utf8_lossy(&buffer[..read]));
            }
        })
    };
    wait_until("the answer is printed", || {
        stdout.lock().expect("lock").as_str() == "you said: hello\n"
    });
    // `/tools` is answered at the prompt: once its listing is out, golem
    // is reading the next line (a signal before that would still be seen
    // there, as signals wait for the next look).
    type_line(&mut child, "/tools");
    wait_until("the tools are listed", || {
        stdout.lock().expect("lock").contains("fs  read_text_file ")
    });
    let servers = children(golem);
    assert_eq!(servers.len(), 1, "one filesystem server: {servers:?}");
    let status = interrupt(&mut child);
    reading.join().expect("the reader ends with golem");
    let stdout = stdout.lock().expect("lock").clone();
    assert_eq!(status.code(), Some(130));
    assert!(stdout.starts_with("you said: hello\n"), "{stdout}");
    wait_until("the server has exited", || {
        !servers.iter().any(|pid| alive(*pid))
    });
}

/// The `--options` a text names.
fn long_options(text: &str) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(offset) = text[at..].find("--") {
        let start = at + offset;
        let mut end = start + 2;
        while end < bytes.len() && (bytes[end].is_ascii_lowercase() || bytes[end] == b'-') {
            end += 1;
        }
        if end > start + 2 {
            found.insert(text[start..end].trim_end_matches('-').to_owned());
        }
        at = end.max(start + 2);
    }
    found
}

#[test]
fn the_reference_and_the_help_agree() {
    // The command's full reference (the README links to it).
    let reference = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/golem.md"),
    )
    .expect("docs/golem.md");
    let section = reference.as_str();
    // The options the section's list describes (its items and their
    // continuation lines).
    let mut listed = String::new();
    let mut in_item = false;
    for line in section.lines() {
        in_item = line.starts_with("- `--") || (in_item && line.starts_with("  "));
        if in_item {
            listed.push_str(line);
            listed.push('\n');
        }
    }
    let in_readme = long_options(&listed);
    assert!(in_readme.len() >= 8, "{in_readme:?}");
    for subcommand in ["run", "chat"] {
        let help = text(
            &golem()
                .args([subcommand, "--help"])
                .output()
                .expect("help")
                .stdout,
        );
        // The options clap lists, not the ones its prose mentions.
        let options: String = help
            .lines()
            .filter(|line| line.trim_start().starts_with('-'))
            .collect::<Vec<_>>()
            .join("\n");
        for option in long_options(&options) {
            if option != "--help" {
                assert!(
                    long_options(section).contains(&option),
                    "`golem {subcommand} --help` has {option}, docs/golem.md does not"
                );
            }
        }
        for option in &in_readme {
            assert!(
                options.contains(option.as_str()),
                "docs/golem.md names {option}, `golem {subcommand} --help` does not list it"
            );
        }
        for words in ["(default 50)", "(default 60)"] {
            assert!(section.contains(words), "docs/golem.md: {words}");
        }
        assert!(help.contains("[default: 50]") && help.contains("[default: 60]"));
        let (flat_help, flat_section) = (help.replace('\n', " "), section.replace('\n', " "));
        let statuses = "0 success; 1 the run ended without an answer";
        assert!(flat_help.contains(statuses), "{help}");
        assert!(flat_section.contains(statuses), "docs/golem.md");
        for status in [
            "2 usage error",
            "3 a server answered with an",
            "4 a server could not be reached",
            "5 a",
            "130 Ctrl-C",
        ] {
            assert!(flat_help.contains(status), "help: {status}");
            assert!(flat_section.contains(status), "docs/golem.md: {status}");
        }
    }
}

#[test]
fn a_server_that_never_answers_fails_at_the_start_timeout_with_its_stderr() {
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        r#"{"mcpServers": {
            "silent": {"command": "sh", "args": ["-c", "echo 'could not bind port 8080' >&2; exec sleep 100"]},
            "off": {"command": "/no/such/mcp-server", "disabled": true}
        }}"#,
    );
    let provider = FakeProvider::start_with(parrot);
    let started = std::time::Instant::now();
    golem()
        .args([
            "run",
            "--model",
            "openai:m",
            "--base-url",
            provider.openai_base_url(),
        ])
        .args(["--start-timeout", "2", "hi", "--config"])
        .arg(&config)
        .assert()
        .code(5)
        .stderr(
            predicate::str::contains(
                "MCP server \"silent\": initialize: no answer from the server within 2s; its \
                 stderr ended with:\n  could not bind port 8080",
            )
            // The disabled entry was not started (its command does not exist).
            .and(predicate::str::contains("off").not()),
        );
    assert!(started.elapsed() < Duration::from_secs(30));
}

#[test]
fn an_http_server_that_never_answers_the_probe_is_named_at_the_start_timeout() {
    // Takes connections and reads nothing back: the era probe's
    // server/discover is the request left unanswered.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("an address").port();
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().take(8).collect();
        drop(held);
    });
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {"mute": {"url": format!("http://127.0.0.1:{port}/mcp")}}})
            .to_string(),
    );
    let provider = FakeProvider::start_with(parrot);
    golem()
        .args([
            "run",
            "--model",
            "openai:m",
            "--base-url",
            provider.openai_base_url(),
        ])
        .args(["--start-timeout", "1", "hi", "--config"])
        .arg(&config)
        .assert()
        .code(5)
        .stderr(predicate::str::contains(
            "MCP server \"mute\": server/discover: no answer from the server within 1s",
        ));
}

#[test]
fn servers_start_together_not_one_after_another() {
    // Each server reads its `initialize` request, says so, and answers
    // only once the other one has received its own: spawned or
    // initialized one after another, the first would wait for ever (until
    // the start timeout).
    let dir = TempDir::new();
    let (fs, root) = (filesystem_server(), dir.path().to_owned());
    let gated = r#"IFS= read -r line; touch "$1"; while [ ! -e "$2" ]; do sleep 0.05; done; { printf '%s\n' "$line"; cat; } | "$3" "$4""#;
    let (a, b) = (dir.path().join("a-asked"), dir.path().join("b-asked"));
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {
            "a": {"command": "sh", "args": ["-c", gated, "sh", a, b, fs, root]},
            "b": {"command": "sh", "args": ["-c", gated, "sh", b, a, fs, root]},
        }})
        .to_string(),
    );
    let provider = FakeProvider::start_with(parrot);
    let output = run_on(&provider)
        .args(["--start-timeout", "30", "--config"])
        .arg(&config)
        .arg("hi")
        .output()
        .expect("golem runs");
    assert_eq!(
        output.status.code(),
        Some(0),
        "stderr: {}",
        text(&output.stderr)
    );
    assert_eq!(text(&output.stdout), "you said: hi\n");
}

#[test]
fn a_models_escape_sequences_are_shown_not_run() {
    // Colour, an OSC 52 clipboard write, a title change, a carriage return
    // and a bidi override, streamed in pieces: none reaches the terminal.
    let hostile =
        "\x1b[31mred\x1b[0m \x1b]52;c;aGk=\x07 \x1b]0;title\x07 \roverwritten \u{202e}fdp.exe";
    let provider = FakeProvider::start([Reply::Text(hostile.into())]);
    let mut command = run_on_std(&provider);
    command.arg("Say something");
    let output = support::pty::run_on_pty(command);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    for forbidden in ['\x1b', '\x07', '\r', '\u{202e}'] {
        assert!(
            !stdout.contains(forbidden),
            "{forbidden:?} reached the terminal: {stdout:?}"
        );
    }
    assert!(stdout.starts_with("\\u{1b}[31mred"), "{stdout:?}");
    assert!(
        stdout.contains("\\roverwritten \\u{202e}fdp.exe"),
        "{stdout:?}"
    );
}

#[test]
fn broken_entries_of_a_real_config_are_left_out_and_the_run_goes_on() {
    let dir = TempDir::new();
    let notes = dir.file("notes.txt", "still here");
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {
            "fs": {"command": filesystem_server(), "args": [dir.0]},
            "typo": {"command": 42},
            "missing": {"command": "/no/such/mcp-server"},
            "crashes": {"command": "sh", "args": ["-c", "echo 'cannot open the database' >&2; exit 3"]},
        }})
        .to_string(),
    );
    let provider = FakeProvider::start_with(reader(notes, "read_text_file"));
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("Read notes.txt")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The file says: still here\n");
    for (name, cause) in [
        ("typo", "command"),
        ("missing", "executable not found"),
        ("crashes", "cannot open the database"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|line| line.starts_with("golem: left out: ") && line.contains(name))
                && stderr.contains(cause),
            "{name}: {stderr}"
        );
    }

    // --strict: the first broken entry fails the command before any run.
    let strict = run_on(&provider)
        .args(["--strict", "--config"])
        .arg(&config)
        .arg("Read notes.txt")
        .output()
        .expect("golem runs");
    assert_ne!(strict.status.code(), Some(0), "{strict:?}");
    assert!(!text(&strict.stderr).contains("left out"), "{strict:?}");
}

#[test]
fn a_run_on_servers_that_offer_no_tools_says_so() {
    let peers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../peers");
    let python = peers.join(".venv/bin/python");
    assert!(
        python.exists(),
        "run scripts/install-peers.sh (the README's test command does)"
    );
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_no_tools_server.py");
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {"bare": {"command": python, "args": [script]}}}).to_string(),
    );
    let provider = FakeProvider::start([Reply::Text("Nothing to call.".into())]);
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("Do something")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert!(
        stderr.contains("golem: the MCP servers offer no tools"),
        "{stderr}"
    );
}

/// The FastMCP server of mcp 1.x over HTTP+SSE (`peers/.venv-sse`), killed
/// and reaped when dropped.
struct SsePeer {
    child: std::process::Child,
    url: String,
}

impl Drop for SsePeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts the HTTP+SSE peer and waits until its port accepts connections
/// (a process of someone else's says nothing when it listens).
fn sse_peer() -> SsePeer {
    let peers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../peers");
    let python = peers.join(".venv-sse/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-peers.sh (the README's test command does)",
        python.display()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let child = Process::new(python)
        .arg(peers.join("python/sse_fastmcp_server.py"))
        .args(["--port", &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the peer starts");
    let mut peer = SsePeer {
        child,
        url: format!("http://127.0.0.1:{port}/sse"),
    };
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    wait_until("the HTTP+SSE peer listens", || {
        if let Ok(Some(status)) = peer.child.try_wait() {
            panic!("the peer exited before listening: {status}");
        }
        std::net::TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok()
    });
    peer
}

#[test]
fn a_type_sse_entry_gives_the_model_the_tools_of_an_http_sse_server() {
    let peer = sse_peer();
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {"old": {"type": "sse", "url": peer.url}}}).to_string(),
    );
    let provider = FakeProvider::start_with(|body: &Value| match last_tool_result(body) {
        Some(result) => Reply::Text(format!("The server says: {result}")),
        None => Reply::ToolCall {
            name: "echo".into(),
            arguments: json!({"message": "over sse"}).to_string(),
        },
    });
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("Echo something")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The server says: Echo: over sse\n");
    let offered = tool_names(&provider.requests()[0].body);
    assert!(offered.contains(&"ask_name".to_owned()), "{offered:?}");
}

#[test]
fn a_call_that_reports_progress_outlives_the_idle_timeout_but_not_the_maximum() {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    // 8 steps of 0.4 s: 3.2 s in all, a progress report every 0.4 s.
    let slow = r#"{"steps": 8, "delay": 0.4}"#;
    let provider = FakeProvider::start_with(caller("slow", slow));
    let output = run_on(&provider)
        .args(["--tool-timeout", "1.5", "Take your time", "--config"])
        .arg(&config)
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(text(&output.stdout).contains("The tool said:"), "{stderr}");

    // The same call past a hard maximum shorter than it.
    let provider = FakeProvider::start_with(caller("slow", slow));
    let output = run_on(&provider)
        .args([
            "--tool-timeout",
            "1.5",
            "--tool-max-time",
            "2",
            "--fail-on-tool-error",
            "Take your time",
            "--config",
        ])
        .arg(&config)
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(5), "{stderr}");
    assert!(
        stderr.contains("golem: [py] slow error (2.0 s): no answer within 2.0 s"),
        "{stderr}"
    );
}
