//! Tool search in `golem` (ADR 0028), on real servers from npm: two
//! filesystem servers and the everything server offer 42 tools, more than
//! `--tool-search auto` offers in full, so the model is offered the tools
//! the config file marks `"alwaysLoad"` and `search_tools`; what it finds is
//! offered from the next request on. The fake provider refuses what the
//! real APIs refuse (names, schemas).

use golem_fake_provider::{FakeProvider, Reply, last_tool_result, tool_names};
use serde_json::{Value, json};

mod support;
use support::*;

/// An mcpServers file: the filesystem server twice (`fs1`, `fs2`, serving
/// `dir`) and the everything server, whose `echo` is always loaded.
fn many_servers(dir: &TempDir) -> std::path::PathBuf {
    let config = json!({"mcpServers": {
        "fs1": {"command": filesystem_server(), "args": [dir.path()]},
        "fs2": {"command": filesystem_server(), "args": [dir.path()]},
        "everything": {"command": everything_server(), "alwaysLoad": ["echo"]},
    }});
    dir.file("many.json", &config.to_string())
}

/// A model that searches for a file reader, calls the first one found that
/// `fs1` serves, and answers with what it read.
fn searcher(path: String) -> impl Fn(&Value) -> Reply {
    move |body| match last_tool_result(body) {
        None => Reply::ToolCall {
            name: "search_tools".into(),
            arguments: json!({"query": "read a text file", "limit": 5}).to_string(),
        },
        Some(found) if found.contains("read_text_file") => Reply::ToolCall {
            name: found
                .lines()
                .map(|line| line.split(':').next().unwrap_or_default())
                .find(|name| name.starts_with("fs1_") && name.contains("read_text_file"))
                .unwrap_or("no fs1 reader found")
                .to_owned(),
            arguments: json!({ "path": path }).to_string(),
        },
        Some(read) => Reply::Text(format!("The file says: {read}")),
    }
}

#[test]
fn past_thirty_tools_the_model_searches_and_calls_what_it_found() {
    let dir = TempDir::new();
    let note = dir.file("note.txt", "the kettle is on");
    let config = many_servers(&dir);
    let provider = FakeProvider::start_with(searcher(note.display().to_string()));

    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("What does note.txt say?")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stdout, "The file says: the kettle is on\n");

    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    // The first request: the always-loaded tool and the search tool only.
    assert_eq!(tool_names(&requests[0].body), ["echo", "search_tools"]);
    // The second: those, and what the search found (at most 5).
    let second = tool_names(&requests[1].body);
    assert!(
        second.contains(&"fs1_read_text_file".to_owned()),
        "{second:?}"
    );
    assert!(second.len() > 2 && second.len() <= 7, "{second:?}");
}

#[test]
fn never_offers_every_tool_and_a_chat_lists_loaded_and_searchable_tools() {
    let dir = TempDir::new();
    let config = many_servers(&dir);
    let provider = FakeProvider::start_with(|_: &Value| Reply::Text("ok".into()));
    let output = run_on(&provider)
        .args(["--tool-search", "never", "--config"])
        .arg(&config)
        .arg("hi")
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let all = tool_names(&provider.requests()[0].body);
    assert!(
        all.len() >= 40 && !all.contains(&"search_tools".to_owned()),
        "{all:?}"
    );

    let note = dir.file("note.txt", "tea");
    let provider = FakeProvider::start_with(searcher(note.display().to_string()));
    let output = golem()
        .args(["chat", "--model", "openai:gpt-fake", "--base-url"])
        .arg(provider.openai_base_url())
        .arg("--config")
        .arg(&config)
        .write_stdin("/tools\nread note.txt\n/tools\n/exit\n")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    // Before the exchange: the always-loaded tool; after it, what was found too.
    assert_eq!(lines[0], "loaded (1):");
    assert!(lines[1].starts_with("  everything  echo  "), "{stdout}");
    assert!(
        lines[2].starts_with("searchable with search_tools ("),
        "{stdout}"
    );
    let second = lines
        .iter()
        .rposition(|line| line.starts_with("loaded ("))
        .expect("a second listing");
    assert!(second > 2, "{stdout}");
    let after: Vec<&str> = lines[second..]
        .iter()
        .take_while(|line| !line.starts_with("searchable"))
        .copied()
        .collect();
    assert!(
        after
            .iter()
            .any(|line| line.starts_with("  fs1         fs1_read_text_file")),
        "{stdout}"
    );
    assert!(stdout.contains("The file says: tea"), "{stdout}");
}

#[test]
fn a_bad_always_load_leaves_the_entry_out_or_with_strict_is_a_usage_error() {
    let dir = TempDir::new();
    let config = dir.file(
        "bad.json",
        &json!({"mcpServers": {"fs": {"command": filesystem_server(), "alwaysLoad": "yes"}}})
            .to_string(),
    );
    let output = golem()
        .args(["run", "--model", "openai:gpt-fake", "--strict", "--config"])
        .arg(&config)
        .arg("hi")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("server \"fs\": \"alwaysLoad\" must be true, false or a list"),
        "{stderr}"
    );

    let provider = FakeProvider::start_with(|_: &Value| Reply::Text("ok".into()));
    let output = run_on(&provider)
        .arg("--config")
        .arg(&config)
        .arg("hi")
        .output()
        .expect("golem runs");
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("golem: left out: server \"fs\": \"alwaysLoad\" must be"),
        "{stderr}"
    );
}
