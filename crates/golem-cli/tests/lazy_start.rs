//! Servers started on their first call (ADR 0030), with the real
//! filesystem server from npm behind a shell line that counts its starts:
//! a first run starts it and keeps its manifest; the next runs offer the
//! same tools without starting it until the model calls one; a stale
//! manifest, `--eager` and `--refresh` start it with the command.

use std::path::{Path, PathBuf};

use golem_fake_provider::{FakeProvider, Reply, last_tool_result, tool_names};
use serde_json::{Value, json};

mod support;
use support::*;

/// An mcpServers file whose `fs` entry serves `dir` and appends a line to
/// `starts` each time it is started.
fn counted_server(dir: &TempDir, starts: &Path) -> PathBuf {
    slow_counted_server(dir, starts, 0.0)
}

/// [`counted_server`], the server started `delay` seconds late.
fn slow_counted_server(dir: &TempDir, starts: &Path, delay: f64) -> PathBuf {
    let line = format!(
        "echo started >> '{}'; sleep {delay}; exec '{}' '{}'",
        starts.display(),
        filesystem_server(),
        dir.path().display()
    );
    let config = json!({"mcpServers": {"fs": {"command": "sh", "args": ["-c", line]}}});
    dir.file("counted.json", &config.to_string())
}

fn starts(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|text| text.lines().count())
        .unwrap_or(0)
}

/// `golem run` on `provider` with `config`, the cache `cache`, and `extra`
/// arguments; returns stdout after checking the run succeeded.
fn run(provider: &FakeProvider, config: &Path, cache: &Path, extra: &[&str]) -> String {
    let output = run_on(provider)
        .env("XDG_CACHE_HOME", cache)
        .args(extra)
        .arg("--config")
        .arg(config)
        .arg("go")
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    text(&output.stdout)
}

fn answers() -> FakeProvider {
    FakeProvider::start_with(|_: &Value| Reply::Text("no tools needed".into()))
}

/// A model that reads `path` with `tool`, then answers with the result.
fn reads(tool: &'static str, path: String) -> impl Fn(&Value) -> Reply {
    move |body| match last_tool_result(body) {
        None => Reply::ToolCall {
            name: tool.into(),
            arguments: json!({ "path": path }).to_string(),
        },
        Some(result) => Reply::Text(format!("got: {result}")),
    }
}

#[test]
fn a_kept_manifest_offers_the_tools_and_the_server_starts_on_the_first_call() {
    let dir = TempDir::new();
    let log = dir.path().join("starts.log");
    let config = counted_server(&dir, &log);
    let cache = fresh_cache();

    let cold = answers();
    run(&cold, &config, &cache, &[]);
    assert_eq!(starts(&log), 1);
    let manifests: Vec<_> = std::fs::read_dir(cache.join("golem/manifests"))
        .expect("a manifest kept")
        .flatten()
        .collect();
    assert_eq!(manifests.len(), 1);
    let kept: Value =
        serde_json::from_str(&std::fs::read_to_string(manifests[0].path()).expect("read"))
            .expect("JSON");
    assert_eq!(kept["serverName"], "secure-filesystem-server");
    assert!(
        kept["tools"]
            .as_array()
            .is_some_and(|tools| tools.len() > 5)
    );
    let cold_tools = tool_names(&cold.requests()[0].body);

    // Warm: the same tools, and no process.
    let warm = answers();
    run(&warm, &config, &cache, &[]);
    assert_eq!(tool_names(&warm.requests()[0].body), cold_tools);
    assert_eq!(starts(&log), 1, "not started without a call");

    // A call starts it, and the call is answered.
    let note = dir.file("note.txt", "hello from disk");
    let calling = FakeProvider::start_with(reads("read_text_file", note.display().to_string()));
    let stdout = run(&calling, &config, &cache, &[]);
    assert_eq!(stdout, "got: hello from disk\n");
    assert_eq!(starts(&log), 2);

    // --eager and --refresh start it with the command.
    run(&answers(), &config, &cache, &["--eager"]);
    run(&answers(), &config, &cache, &["--refresh"]);
    assert_eq!(starts(&log), 4);
}

#[test]
fn a_stale_manifest_starts_the_server_and_a_tool_gone_is_a_correction() {
    let dir = TempDir::new();
    let log = dir.path().join("starts.log");
    let config = counted_server(&dir, &log);
    let cache = fresh_cache();
    run(&answers(), &config, &cache, &[]);
    let manifest = std::fs::read_dir(cache.join("golem/manifests"))
        .expect("kept")
        .flatten()
        .next()
        .expect("a manifest")
        .path();
    let mut kept: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("read")).expect("JSON");

    // Listed two days ago: stale, so the server starts with the command.
    let listed_at = kept["listedAt"].as_u64().expect("a time");
    kept["listedAt"] = json!(listed_at - 2 * 24 * 60 * 60 * 1000);
    std::fs::write(&manifest, kept.to_string()).expect("written");
    run(&answers(), &config, &cache, &[]);
    assert_eq!(starts(&log), 2);

    // A manifest naming a tool the server does not have: offered, and its
    // call is a correction once the server is up; the next request offers
    // the live list.
    let mut kept: Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).expect("read")).expect("JSON");
    kept["tools"]
        .as_array_mut()
        .expect("tools")
        .push(json!({"name": "ghost", "description": "Gone.", "inputSchema": {"type": "object"}}));
    std::fs::write(&manifest, kept.to_string()).expect("written");
    let provider = FakeProvider::start_with(reads("ghost", "x".into()));
    let stdout = run(&provider, &config, &cache, &[]);
    assert!(tool_names(&provider.requests()[0].body).contains(&"ghost".to_owned()));
    assert!(
        stdout.contains("MCP server \"fs\" no longer offers \"ghost\""),
        "{stdout}"
    );
    assert!(!tool_names(&provider.requests()[1].body).contains(&"ghost".to_owned()));
    assert_eq!(starts(&log), 3);
}

#[test]
fn a_start_longer_than_the_tool_timeout_is_not_cut_short() {
    // The idle timeout is 1 s; the server takes 2.5 s to start on the
    // first call: the call waits for it (reported alive), and is answered.
    let dir = TempDir::new();
    let log = dir.path().join("starts.log");
    let config = slow_counted_server(&dir, &log, 2.5);
    let cache = fresh_cache();
    run(&answers(), &config, &cache, &[]);
    let note = dir.file("note.txt", "slow but sure");
    let calling = FakeProvider::start_with(reads("read_text_file", note.display().to_string()));
    let stdout = run(&calling, &config, &cache, &["--tool-timeout", "1"]);
    assert_eq!(stdout, "got: slow but sure\n");
    assert_eq!(starts(&log), 2);
}
