//! Nothing a server writes can drive the user's terminal: against a real
//! Python SDK server whose every string carries escape sequences, a
//! carriage return, a bidi override and a forged `golem-mcp:` line, the
//! command prints them escaped, while `--json` stays exact JSON.

mod support;

use std::path::PathBuf;

use support::{golem_mcp, installed, python, stdout_json};

/// `-- python tests/fixtures/py_hostile_server.py`.
fn hostile() -> [String; 3] {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_hostile_server.py");
    ["--".into(), python(), installed(script)]
}

/// Fails the test if `bytes` hold anything that drives a terminal: ESC,
/// BEL, a carriage return, an 8-bit CSI, a bidi override, or (unless
/// `content`) a line that passes for the command's own.
fn assert_inert(what: &str, bytes: &[u8], content: bool) {
    let text = String::from_utf8_lossy(bytes);
    for (forbidden, name) in [
        ('\x1b', "ESC"),
        ('\x07', "BEL"),
        ('\r', "CR"),
        ('\u{9b}', "CSI"),
        ('\u{202e}', "a bidi override"),
    ] {
        assert!(
            !text.contains(forbidden),
            "{what}: {name} reached the terminal: {text:?}"
        );
    }
    assert!(
        content
            || !text
                .lines()
                .any(|line| line.starts_with("golem-mcp: forged")),
        "{what}: a forged line: {text}"
    );
}

#[test]
fn info_list_and_call_show_a_servers_escapes_without_running_them() {
    for args in [
        vec!["info"],
        vec!["list", "--long"],
        vec!["call", "shout"],
        vec!["resources"],
    ] {
        let output = golem_mcp()
            .args(&args)
            .args(hostile())
            .output()
            .expect("runs");
        assert!(output.status.success(), "{args:?}: {output:?}");
        // A tool's result is content, printed line by line as the tool wrote
        // it (the command's own lines are on stderr); what the command lays
        // out around server text (info, listings) indents it.
        let content = args[0] == "call";
        assert_inert(&format!("{args:?} stdout"), &output.stdout, content);
        assert_inert(&format!("{args:?} stderr"), &output.stderr, false);
        assert!(
            args[0] == "resources" || String::from_utf8_lossy(&output.stdout).contains("\\u{1b}"),
            "{args:?}: the escapes are shown, not dropped"
        );
    }
}

#[test]
fn json_output_stays_exact() {
    let output = golem_mcp()
        .args(["call", "shout", "--json"])
        .args(hostile())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let result = stdout_json(&output);
    let text = result["content"][0]["text"].as_str().expect("a text item");
    assert!(text.starts_with("\x1b[31mred"), "{text:?}");
    assert!(text.ends_with("\ngolem-mcp: forged"), "{text:?}");
}
