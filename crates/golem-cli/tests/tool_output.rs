//! Capped tool output in `golem` (ADR 0029), on the real filesystem server
//! from npm: a result past `--max-tool-output` reaches the model as its
//! head and tail around a note naming the bytes left out, the file that
//! keeps them (mode 0600 under `$XDG_CACHE_HOME/golem/outputs/`) and the
//! `read_tool_output` call that reads them, which is offered from then on.

use std::os::unix::fs::PermissionsExt;

use golem_fake_provider::{FakeProvider, Reply, last_tool_result, tool_names};
use serde_json::{Value, json};

mod support;
use support::*;

/// 100,000 bytes: numbered lines, so any slice says where it is from.
fn big_text() -> String {
    (0..10_000).map(|n| format!("line {n:04}\n")).collect()
}

/// A model that reads `path`, then reads on with the call the note gives,
/// then answers with what it got.
fn reader(path: String) -> impl Fn(&Value) -> Reply {
    move |body| match last_tool_result(body) {
        None => Reply::ToolCall {
            name: "read_text_file".into(),
            arguments: json!({ "path": path }).to_string(),
        },
        Some(cut) if cut.contains("Read more with read_tool_output ") => {
            // The arguments run to the note's closing bracket.
            let call = cut
                .split("Read more with read_tool_output ")
                .nth(1)
                .and_then(|rest| rest.split(']').next())
                .expect("the note's arguments")
                .to_owned();
            Reply::ToolCall {
                name: "read_tool_output".into(),
                arguments: call,
            }
        }
        Some(read) => Reply::Text(format!("READ<{read}>")),
    }
}

#[test]
fn a_long_result_is_cut_kept_in_an_owner_only_file_and_read_back_exactly() {
    let dir = TempDir::new();
    let whole = big_text();
    let file = dir.file("big.txt", &whole);
    let config = dir.config(&["fs"]);
    let cache = fresh_cache();
    let provider = FakeProvider::start_with(reader(file.display().to_string()));

    let output = run_on(&provider)
        .env("XDG_CACHE_HOME", &cache)
        .args(["--max-tool-output", "4096", "--config"])
        .arg(&config)
        .arg("Read big.txt")
        .output()
        .expect("golem runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "stderr: {stderr}");

    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert!(!tool_names(&requests[0].body).contains(&"read_tool_output".to_owned()));
    assert!(tool_names(&requests[1].body).contains(&"read_tool_output".to_owned()));
    let cut = last_tool_result(&requests[1].body).expect("the cut result");
    assert!(cut.len() < 4096 + 400, "{} bytes", cut.len());
    assert!(cut.starts_with("line 0000\n"), "{cut}");
    assert!(cut.ends_with("line 9999\n"), "{cut}");
    let kept = cache.join("golem/outputs");
    let note = cut
        .lines()
        .find(|line| line.starts_with("[…"))
        .expect("a note");
    assert!(
        note.contains(" bytes left out here (bytes 3070 to 98980 of 100000)"),
        "{note}"
    );
    assert!(
        note.contains(&format!("kept in {}/", kept.display())),
        "{note}"
    );
    assert!(
        note.contains(r#", "offset": 3070, "length": 1024}"#),
        "{note}"
    );

    // The kept file is the whole result, readable by its owner only.
    let files: Vec<_> = std::fs::read_dir(&kept).expect("kept").flatten().collect();
    assert_eq!(files.len(), 1);
    assert_eq!(
        std::fs::read_to_string(files[0].path()).expect("read"),
        whole
    );
    let mode = files[0].metadata().expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);

    // The read gives the next 1024 bytes exactly, and says how to go on.
    let read = stdout
        .strip_prefix("READ<")
        .and_then(|rest| rest.strip_suffix(">\n"))
        .expect("the read");
    assert!(read.starts_with(&whole[3070..4094]), "{read}");
    assert!(
        read.contains(r#"more bytes: read_tool_output {"id": "#),
        "{read}"
    );
}

#[test]
fn no_limit_with_zero_and_a_short_result_is_never_cut() {
    let dir = TempDir::new();
    let whole = big_text();
    let file = dir.file("big.txt", &whole);
    let config = dir.config(&["fs"]);
    let provider = FakeProvider::start_with(reader(file.display().to_string()));
    let output = run_on(&provider)
        .args(["--max-tool-output", "0", "--config"])
        .arg(&config)
        .arg("Read big.txt")
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), format!("READ<{whole}>\n"));
    assert_eq!(provider.request_count(), 2);
}
