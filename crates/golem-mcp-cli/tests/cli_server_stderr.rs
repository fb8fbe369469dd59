//! A stdio server's own stderr: with `-v`, each line printed as
//! `golem-mcp: server stderr: LINE`, escaped, the last lines of a server
//! that exits included; without `-v`, kept for error messages only. The
//! npm reference server, started through `sh -c` to write lines of its own
//! around it, and a "server" that only writes its last words and exits.

mod support;

use support::{everything, golem_mcp};

/// `-- sh -c SCRIPT`, where the script runs the reference server between
/// `before` and `after`.
fn everything_within(before: &str, after: &str) -> [String; 4] {
    let script = format!("{before}\n'{}' stdio\n{after}", everything());
    ["--".into(), "sh".into(), "-c".into(), script]
}

/// `golem-mcp ARGS list -- sh -c …`: its exit and stderr.
fn list(verbose: bool, server: &[String]) -> (std::process::ExitStatus, String) {
    let mut command = golem_mcp();
    if verbose {
        command.arg("-v");
    }
    let output = command.arg("list").args(server).output().expect("runs");
    let stderr = String::from_utf8(output.stderr).expect("UTF-8");
    (output.status, stderr)
}

#[test]
fn verbose_prints_each_server_stderr_line_prefixed_and_escaped() {
    let (status, stderr) = list(
        true,
        &everything_within(
            r"printf 'hello \033[31mred\033[0m\n' >&2",
            "printf 'last words' >&2",
        ),
    );
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains("\ngolem-mcp: server stderr: hello \\u{1b}[31mred\\u{1b}[0m\n"),
        "{stderr}"
    );
    // The reference server's own line, and the last one, written after the
    // session ended and without a newline.
    assert!(
        stderr.contains("\ngolem-mcp: server stderr: Starting default (STDIO) server...\n"),
        "{stderr}"
    );
    let last = stderr
        .lines()
        .rfind(|line| line.starts_with("golem-mcp: server stderr: "));
    assert_eq!(
        last,
        Some("golem-mcp: server stderr: last words"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "nothing drives the terminal");
    for line in stderr.lines() {
        assert!(line.starts_with("golem-mcp: "), "unprefixed {line:?}");
    }
}

#[test]
fn verbose_prints_the_last_words_of_a_server_that_exits_before_the_error() {
    let (status, stderr) = list(
        true,
        &[
            "--".into(),
            "sh".into(),
            "-c".into(),
            r"printf 'fatal: \033[2Jno config\n' >&2; exit 3".into(),
        ],
    );
    assert_eq!(status.code(), Some(4), "{stderr}");
    let printed = stderr
        .find("golem-mcp: server stderr: fatal: \\u{1b}[2Jno config\n")
        .unwrap_or_else(|| panic!("no stderr line in {stderr}"));
    // The error still quotes the tail, as without `-v`.
    let error = stderr
        .rfind("golem-mcp: server/discover: the server process exited")
        .unwrap_or_else(|| panic!("no error in {stderr}"));
    assert!(printed < error, "{stderr}");
    assert!(
        stderr[error..].contains("its stderr ended with:\n  fatal: \\u{1b}[2Jno config"),
        "{stderr}"
    );
    assert!(!stderr.contains('\u{1b}'), "{stderr}");
}

#[test]
fn without_verbose_server_stderr_is_not_printed() {
    let (status, stderr) = list(false, &everything_within("echo hello >&2", ""));
    assert!(status.success(), "{stderr}");
    assert!(!stderr.contains("hello"), "{stderr}");
    assert!(!stderr.contains("Starting default"), "{stderr}");
}
