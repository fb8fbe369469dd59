//! Exact data, safe terminal. Against a real Python SDK server whose every
//! string carries escape sequences, a carriage return, a bidi override and
//! a forged `golem-mcp:` line, and the npm reference server echoing
//! control characters: what the command lays out (info, listings) and
//! every stderr line show them escaped wherever they go; a tool's result,
//! a resource's text and a prompt's messages are data, exact in a pipe and
//! escaped on a terminal (a pseudo-terminal here); `--json` stays exact.

mod support;

use std::path::PathBuf;

use support::pty::run_on_pty;
use support::{everything_stdio, golem_mcp, golem_mcp_std, installed, python, stdout_json};

/// What the hostile server's strings hold (`HOSTILE` in its script).
const HOSTILE: &str = "\x1b[31mred\x1b[0m \x1b]52;c;aGk=\x07 \x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\ \x1b]0;title\x07 \u{9b}2J \roverwritten \u{202e}txt.exe\u{202c}\ngolem-mcp: forged";

/// Control characters the reference server's `echo` tool sends back: NUL,
/// SOH, BEL, an escape sequence, DEL and a `\r\n`, as ARGS_JSON (a NUL
/// cannot be a command-line word).
const CONTROLS_JSON: &str = r#"{"message":"\u0000\u0001\u0007\u001b[0m\u007f\r\n"}"#;

/// `-- python tests/fixtures/py_hostile_server.py`.
fn hostile() -> [String; 3] {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_hostile_server.py");
    ["--".into(), python(), installed(script)]
}

/// Fails the test if `bytes` hold anything that drives a terminal: ESC,
/// BEL, a carriage return, an 8-bit CSI, a bidi override, or (unless
/// `content`) a line that passes for the command's own.
#[track_caller]
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
fn info_and_listings_show_a_servers_escapes_even_in_a_pipe() {
    for args in [vec!["info"], vec!["list", "--long"], vec!["resources"]] {
        let output = golem_mcp()
            .args(&args)
            .args(hostile())
            .output()
            .expect("runs");
        assert!(output.status.success(), "{args:?}: {output:?}");
        // The layout is the command's: what it lays out around server
        // text (info, listings) indents it, wherever stdout goes.
        assert_inert(&format!("{args:?} stdout"), &output.stdout, false);
        assert_inert(&format!("{args:?} stderr"), &output.stderr, false);
        assert!(
            args[0] == "resources" || String::from_utf8_lossy(&output.stdout).contains("\\u{1b}"),
            "{args:?}: the escapes are shown, not dropped"
        );
    }
}

#[test]
fn data_in_a_pipe_is_exactly_what_the_server_sent() {
    let output = golem_mcp()
        .args(["call", "echo", CONTROLS_JSON])
        .args(everything_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(output.stdout, b"Echo: \x00\x01\x07\x1b[0m\x7f\r\n");
    for (args, expected) in [
        (vec!["call", "shout"], format!("{HOSTILE}\n")),
        (vec!["read", "hostile://text"], format!("{HOSTILE}\n")),
        (vec!["prompt", "hostile"], format!("[user]\n{HOSTILE}\n")),
    ] {
        let output = golem_mcp()
            .args(&args)
            .args(hostile())
            .output()
            .expect("runs");
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            expected,
            "{args:?}"
        );
        assert_inert(&format!("{args:?} stderr"), &output.stderr, false);
    }
}

#[test]
fn data_on_a_terminal_shows_its_controls_escaped() {
    let mut echo = golem_mcp_std();
    echo.args(["call", "echo", CONTROLS_JSON])
        .args(everything_stdio());
    let output = run_on_pty(echo);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "Echo: \\u{0}\\u{1}\\u{7}\\u{1b}[0m\\u{7f}\\r\n"
    );
    for args in [
        vec!["call", "shout"],
        vec!["read", "hostile://text"],
        vec!["prompt", "hostile"],
    ] {
        let mut command = golem_mcp_std();
        command.args(&args).args(hostile());
        let output = run_on_pty(command);
        assert!(output.status.success(), "{args:?}: {output:?}");
        // Content, printed line by line as the server wrote it.
        assert_inert(&format!("{args:?} terminal"), &output.stdout, true);
        assert!(
            String::from_utf8_lossy(&output.stdout).contains("\\u{1b}[31mred"),
            "{args:?}: the escapes are shown, not dropped: {output:?}"
        );
    }
}

#[test]
fn messages_quoting_a_server_are_escaped_even_in_a_pipe() {
    for args in [vec!["call", "fail"], vec!["read", "hostile://boom"]] {
        let output = golem_mcp()
            .args(&args)
            .args(hostile())
            .output()
            .expect("runs");
        assert!(!output.status.success(), "{args:?}: {output:?}");
        assert_inert(&format!("{args:?} stderr"), &output.stderr, false);
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
    assert_eq!(text, HOSTILE);
}
