//! Approval before a tool acts (ADR 0032), under `golem run` with the real
//! filesystem server (`read_text_file` says it only reads, `write_file`
//! does not) and the fake provider: read-only tools run, the others are
//! asked about at the terminal (one key) or, with nobody to ask, denied and
//! the model told; `--approve`, `--allow-tool`, `--ask-tool`,
//! `--deny-tool` and an entry's lists change that.

use std::path::Path;

use golem_fake_provider::{FakeProvider, Reply, last_tool_result, tool_names};
use serde_json::{Value, json};

mod support;
use support::pty::Terminal;
use support::*;

/// A model that writes `note.txt` in `dir`, then says what the tool said.
fn writer(dir: &Path) -> impl Fn(&Value) -> Reply + Send + Sync + 'static {
    let arguments = json!({"path": dir.join("note.txt"), "content": "written"}).to_string();
    move |body| match last_tool_result(body) {
        Some(result) => Reply::Text(format!("The tool said: {result}\n")),
        None => Reply::ToolCall {
            name: "write_file".into(),
            arguments: arguments.clone(),
        },
    }
}

/// `golem run` with the filesystem server of `dir` as entry `fs` (with
/// `entry`'s extra fields) and `extra` flags, stdin not a terminal: exit
/// status, stdout, stderr, and the provider.
fn run(dir: &TempDir, entry: Value, extra: &[&str]) -> (Option<i32>, String, String, FakeProvider) {
    let mut server = json!({"command": filesystem_server(), "args": [dir.0]});
    if let (Some(server), Some(fields)) = (server.as_object_mut(), entry.as_object()) {
        server.extend(fields.clone());
    }
    let config = dir.file(
        "mcp.json",
        &json!({"mcpServers": {"fs": server}}).to_string(),
    );
    let provider = FakeProvider::start_with(writer(dir.path()));
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .args(["--approve", "read-only"]) // the default, after run_on's
        .args(extra)
        .arg("Write a note")
        .output()
        .expect("runs");
    (
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr),
        provider,
    )
}

#[test]
fn with_nobody_to_ask_a_tool_that_writes_is_denied_and_the_model_told() {
    let dir = TempDir::new();

    let (status, stdout, stderr, _) = run(&dir, json!({}), &[]);

    assert_eq!(status, Some(0), "{stderr}");
    assert!(!dir.0.join("note.txt").exists(), "the file was not written");
    assert!(
        stdout.starts_with("The tool said: This call of \"write_file\" was not run: it was not approved (it needs the user's approval and nobody could be asked"),
        "{stdout}"
    );
    assert!(
        stderr.contains("golem: [fs] write_file not run: it needs the user's approval"),
        "{stderr}"
    );
}

#[test]
fn approve_all_and_allow_tool_run_it_without_asking() {
    for extra in [&["--approve", "all"][..], &["--allow-tool", "write_*"]] {
        let dir = TempDir::new();
        let (status, stdout, stderr, _) = run(&dir, json!({}), extra);
        assert_eq!(status, Some(0), "{extra:?}: {stderr}");
        assert_eq!(
            std::fs::read_to_string(dir.0.join("note.txt"))
                .ok()
                .as_deref(),
            Some("written"),
            "{extra:?}: {stdout}{stderr}"
        );
    }
}

#[test]
fn ask_tool_and_approve_none_ask_even_about_read_only_tools() {
    for extra in [&["--approve", "none"][..], &["--ask-tool", "read_*"]] {
        let dir = TempDir::new();
        dir.file("todo.txt", "milk");
        let todo = dir.0.join("todo.txt");
        let provider = FakeProvider::start_with(move |body| match last_tool_result(body) {
            Some(result) => Reply::Text(format!("The tool said: {result}\n")),
            None => Reply::ToolCall {
                name: "read_text_file".into(),
                arguments: json!({"path": todo}).to_string(),
            },
        });
        let output = run_on(&provider)
            .arg("--config")
            .arg(dir.config(&["fs"]))
            .args(["--approve", "read-only"])
            .args(extra)
            .arg("Read my list")
            .output()
            .expect("runs");
        let stdout = text(&output.stdout);
        assert!(
            stdout.contains("\"read_text_file\" was not run"),
            "{extra:?}: {stdout}"
        );
    }
}

#[test]
fn a_denied_tool_is_not_offered_at_all() {
    for (entry, extra) in [
        (json!({}), &["--deny-tool", "write_file"][..]),
        (json!({"denyTools": ["write_*", "move_*"]}), &[]),
    ] {
        let dir = TempDir::new();
        let (_, _, stderr, provider) = run(&dir, entry.clone(), extra);
        let offered = tool_names(&provider.requests()[0].body);
        assert!(
            !offered.contains(&"write_file".to_owned()),
            "{entry} {extra:?}: {offered:?} {stderr}"
        );
        assert!(
            offered.contains(&"read_text_file".to_owned()),
            "{offered:?}"
        );
    }
}

/// `golem run` on a terminal of its own, writing a note with the
/// filesystem server of `dir`.
fn at_a_terminal(dir: &TempDir, provider: &FakeProvider) -> Terminal {
    let config = dir.config(&["fs"]);
    let mut command = run_on_std(provider);
    command.arg("--config").arg(config).arg("Write a note");
    Terminal::start(command)
}

#[test]
fn at_a_terminal_one_key_answers_yes_or_no() {
    for (key, written) in [("y", true), ("n", false)] {
        let dir = TempDir::new();
        let provider = FakeProvider::start_with(writer(dir.path()));
        let mut golem = at_a_terminal(&dir, &provider);

        golem.wait_for("Run it? [y]es / [n]o / [a]lways for this tool: ");
        let shown = golem.shown();
        assert!(
            shown.contains("golem: [fs] write_file {\"content\":\"written\",\"path\":"),
            "the question names the server, the tool and its arguments: {shown}"
        );
        golem.type_keys(key);
        let status = golem.wait();

        assert_eq!(status.code(), Some(0), "{}", golem.shown());
        assert_eq!(
            dir.0.join("note.txt").exists(),
            written,
            "{}",
            golem.shown()
        );
        // The question showed the call's line; its start does not again.
        assert_eq!(
            golem.shown().matches("golem: [fs] write_file {").count(),
            1,
            "{}",
            golem.shown()
        );
        let answer = if written { "yes" } else { "no" };
        assert!(
            golem.shown().contains(&format!("for this tool: {answer}")),
            "{}",
            golem.shown()
        );
    }
}

#[test]
fn keys_typed_before_the_question_and_escape_sequences_answer_nothing() {
    let dir = TempDir::new();
    let provider = FakeProvider::start_with(writer(dir.path()));
    let mut golem = at_a_terminal(&dir, &provider);

    // Typed while the model writes: dropped when the question comes.
    golem.type_keys("a");
    golem.wait_for("Run it? [y]es / [n]o / [a]lways for this tool: ");
    // An arrow key (ESC [ A) is not an "a".
    golem.type_keys("\u{1b}[A");
    golem.type_keys("n");
    let status = golem.wait();

    assert_eq!(status.code(), Some(0), "{}", golem.shown());
    assert!(!dir.0.join("note.txt").exists(), "{}", golem.shown());
    assert!(
        golem.shown().contains("for this tool: no"),
        "{}",
        golem.shown()
    );
}

#[test]
fn always_lasts_for_the_rest_of_a_chat() {
    let dir = TempDir::new();
    let arguments = json!({"path": dir.0.join("note.txt"), "content": "written"}).to_string();
    // Each user message asks for a write; a tool result is answered.
    let provider = FakeProvider::start_with(move |body| {
        let last = golem_fake_provider::messages(body)
            .last()
            .cloned()
            .unwrap_or_default();
        match last["role"].as_str() {
            Some("user") => Reply::ToolCall {
                name: "write_file".into(),
                arguments: arguments.clone(),
            },
            _ => Reply::Text("Done.\n".into()),
        }
    });
    let config = dir.config(&["fs"]);
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_golem"));
    command
        .env("XDG_CACHE_HOME", fresh_cache())
        .env("OPENAI_API_KEY", KEY)
        .env_remove("ANTHROPIC_API_KEY")
        .args(["chat", "--model", "openai:gpt-fake", "--base-url"])
        .arg(provider.openai_base_url())
        .arg("--config")
        .arg(config);
    let mut golem = Terminal::start(command);

    golem.wait_for("> ");
    golem.type_keys("write it\n");
    golem.wait_for("for this tool: ");
    golem.type_keys("a");
    golem.wait_for("Done.");
    golem.type_keys("write it again\n");
    let started = std::time::Instant::now();
    while golem.shown().matches("Done.").count() < 2 {
        assert!(started.elapsed() < PATIENCE, "{}", golem.shown());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    golem.type_keys("/exit\n");
    let status = golem.wait();

    assert_eq!(status.code(), Some(0), "{}", golem.shown());
    assert_eq!(
        golem.shown().matches("Run it?").count(),
        1,
        "asked once: {}",
        golem.shown()
    );
    assert_eq!(
        provider.requests().len(),
        4,
        "two exchanges of two requests each"
    );
}
