//! A call cut short over HTTP (Ctrl-C, SIGTERM, SIGHUP, `--timeout`),
//! against a Python SDK server that records what it receives: the server
//! hears `notifications/cancelled` for the call and then the session's
//! `DELETE` (2025-11-25), or sees the call's stream closed (2026-07-28),
//! shortly after, and the command exits with the status the cut deserves.

mod support;

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use support::process::{Lines, signal};
use support::{PATIENCE, recording_http};

/// How long after the signal (or the timeout) the server must have heard
/// everything and the command must have exited.
const PROMPTLY: Duration = Duration::from_secs(3);

/// `golem-mcp call wait` against `url` with `extra` options, its stderr
/// piped.
fn call_wait(url: &str, extra: &[&str]) -> (Child, Lines) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_golem-mcp"))
        .args(["call", "wait", "--url", url])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let stderr = Lines::of(child.stderr.take().expect("a pipe"));
    (child, stderr)
}

/// Waits until the server has recorded each of `wanted` (whole lines, in
/// any order: the tool may end before or after the `DELETE` arrives).
#[track_caller]
fn heard_all(records: &mut Lines, wanted: &[&str], within: Duration) {
    let deadline = Instant::now() + within;
    let mut left: Vec<&str> = wanted.to_vec();
    while !left.is_empty() {
        let line = records.wait_for(
            |line| left.contains(&line.trim_end()),
            deadline.saturating_duration_since(Instant::now()),
        );
        left.retain(|wanted| *wanted != line.trim_end());
    }
}

/// Waits for `child` to exit, at most `within`.
#[track_caller]
fn exit_code_within(child: &mut Child, within: Duration) -> Option<i32> {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().expect("a status") {
            return status.code();
        }
        assert!(Instant::now() < deadline, "still running after {within:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn each_signal_cancels_the_call_ends_the_session_and_exits_with_its_status() {
    let (server, mut records) = recording_http();
    for (name, code, word) in [
        ("INT", 130, "interrupted while calling wait"),
        ("TERM", 143, "terminated (SIGTERM) while calling wait"),
        ("HUP", 129, "hung up (SIGHUP) while calling wait"),
    ] {
        let (mut child, stderr) = call_wait(&server.url, &["--protocol", "2025-11-25"]);
        let call = records.wait_for(|line| line.starts_with("POST tools/call"), PATIENCE);
        records.wait_for(|line| line == "tool started\n", PATIENCE);
        let id = call.trim().rsplit("id=").next().expect("an id").to_owned();
        signal(&child, name);
        let signalled = Instant::now();
        let cancelled = records.wait_for(
            |line| line.starts_with("POST notifications/cancelled"),
            PROMPTLY,
        );
        assert_eq!(
            cancelled.trim(),
            format!("POST notifications/cancelled requestId={id}")
        );
        heard_all(&mut records, &["DELETE", "tool cancelled"], PROMPTLY);
        assert_eq!(exit_code_within(&mut child, PROMPTLY), Some(code), "{name}");
        assert!(signalled.elapsed() < PROMPTLY, "{:?}", signalled.elapsed());
        let said = stderr.rest(PATIENCE);
        assert_eq!(said, format!("golem-mcp: {word}\n"), "{name}");
    }
}

#[test]
fn a_timeout_cancels_the_call_ends_the_session_and_exits_5() {
    let (server, mut records) = recording_http();
    let timeout = Duration::from_secs(2);
    let (mut child, stderr) =
        call_wait(&server.url, &["--protocol", "2025-11-25", "--timeout", "2"]);
    records.wait_for(|line| line == "tool started\n", PATIENCE);
    // Counted from the call's start, the bound is at most this long.
    let cancelled = records.wait_for(
        |line| line.starts_with("POST notifications/cancelled requestId="),
        timeout + PROMPTLY,
    );
    assert!(cancelled.ends_with("requestId=2\n"), "{cancelled}");
    heard_all(&mut records, &["DELETE", "tool cancelled"], PROMPTLY);
    assert_eq!(exit_code_within(&mut child, PROMPTLY), Some(5));
    let said = stderr.rest(PATIENCE);
    assert!(
        said.contains("golem-mcp: timed out after 2 s while calling wait"),
        "{said}"
    );
}

#[test]
fn in_the_stateless_era_a_signal_closes_the_calls_stream_and_the_tool_is_cancelled() {
    let (server, mut records) = recording_http();
    let (mut child, stderr) = call_wait(&server.url, &[]);
    records.wait_for(|line| line == "POST server/discover id=1\n", PATIENCE);
    records.wait_for(|line| line == "tool started\n", PATIENCE);
    signal(&child, "TERM");
    // No session to end: closing the call's stream is the cancellation.
    records.wait_for(|line| line == "tool cancelled\n", PROMPTLY);
    assert_eq!(exit_code_within(&mut child, PROMPTLY), Some(143));
    assert_eq!(
        stderr.rest(PATIENCE),
        "golem-mcp: terminated (SIGTERM) while calling wait\n"
    );
    drop(server);
    let heard = records.rest(PATIENCE);
    assert!(!heard.contains("DELETE"), "{heard}");
}
