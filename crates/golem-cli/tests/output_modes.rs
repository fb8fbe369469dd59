//! What `golem run` writes, against the Python SDK's server and the fake
//! provider: the servers' log messages from `--log-level` up (default
//! `warning`), each after its server's name; `--quiet` leaves the answer
//! and golem's own errors only; the answer is the model's text exactly in
//! a pipe, escaped on a terminal.

use golem_fake_provider::{FakeProvider, Reply};

mod support;
use support::*;

/// `golem run` on `provider` with the Python server and `extra` flags:
/// the exit status, stdout and stderr.
fn run(provider: &FakeProvider, extra: &[&str]) -> (Option<i32>, String, String) {
    let dir = TempDir::new();
    let config = python_server_config(&dir);
    let output = run_on(provider)
        .arg("--config")
        .arg(&config)
        .args(extra)
        .arg("Go")
        .output()
        .expect("runs");
    (
        output.status.code(),
        text(&output.stdout),
        text(&output.stderr),
    )
}

#[test]
fn server_logs_are_shown_from_the_log_level_up_after_the_servers_name() {
    // `chatty` logs "starting" at info and "careful" at warning.
    let provider = FakeProvider::start_with(caller("chatty", "{}"));
    let warning = "golem: [py] log [warning] py-peer: careful";
    let info = "golem: [py] log [info] py-peer: starting";

    let (status, _, stderr) = run(&provider, &[]);
    assert_eq!(status, Some(0), "{stderr}");
    assert!(stderr.contains(warning), "{stderr}");
    assert!(
        !stderr.contains("starting"),
        "info is below the default: {stderr}"
    );

    let (_, _, stderr) = run(&provider, &["--log-level", "INFO"]);
    assert!(
        stderr.contains(info) && stderr.contains(warning),
        "{stderr}"
    );

    let (_, _, stderr) = run(&provider, &["--log-level", "error"]);
    assert!(!stderr.contains("[py] log"), "{stderr}");

    let (status, _, stderr) = run(&provider, &["--log-level", "loud"]);
    assert_eq!(status, Some(2), "{stderr}");
    assert!(
        stderr.contains("\"loud\" is not a log level: debug, info, notice"),
        "{stderr}"
    );
}

#[test]
fn quiet_leaves_only_the_answer() {
    let provider = FakeProvider::start_with(caller("chatty", "{}"));

    let (status, stdout, stderr) = run(&provider, &["--quiet", "--log-level", "debug"]);

    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stdout, "The tool said: logged\n");
    assert_eq!(stderr, "", "no calls, logs, notes or usage");
}

#[test]
fn quiet_still_says_why_a_run_failed_in_full() {
    let provider = FakeProvider::start_with(caller("refuse", "{}"));

    let (status, stdout, stderr) = run(&provider, &["-q", "--fail-on-tool-error"]);

    assert_eq!(status, Some(3), "{stderr}");
    assert_eq!(stdout, "");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("golem: the tool \"refuse\" failed: tools/call refuse")
            && stderr.contains("refused: this tool never runs"),
        "the call's line was not shown, so this one says it all: {stderr}"
    );
}

/// What a model may write that a terminal would act on: NUL, SOH, BEL, an
/// SGR reset, DEL, a carriage return before the line break.
const CONTROLS: &str = "raw:\u{0}\u{1}\u{7}\u{1b}[0m\u{7f}\r\n";

#[test]
fn the_answer_is_exact_in_a_pipe() {
    let provider = FakeProvider::start_with(|_| Reply::Text(CONTROLS.into()));

    let (status, stdout, stderr) = run(&provider, &[]);

    assert_eq!(status, Some(0), "{stderr}");
    assert_eq!(stdout, CONTROLS);
}

#[test]
fn the_answer_is_escaped_on_a_terminal() {
    let provider = FakeProvider::start_with(|_| Reply::Text(CONTROLS.into()));
    let mut command = run_on_std(&provider);
    command.arg("Go");

    let output = support::pty::run_on_pty(command);

    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        text(&output.stdout),
        "raw:\\u{0}\\u{1}\\u{7}\\u{1b}[0m\\u{7f}\\r\n"
    );
}
