//! The limits of a whole `golem` command (issue 35): `--max-requests` and
//! kin end the command with exit status 6 before the request or call past
//! the limit, naming the option; a chat's exchanges share them.

use golem_fake_provider::{FakeProvider, Reply};

mod support;
use support::*;

#[test]
fn a_limit_reached_ends_the_run_with_status_6_naming_the_option() {
    for (flag, message) in [
        (
            "--max-requests",
            "golem: the limit of 1 model requests is reached (1 spent) in this command; raise \
             --max-requests to go on",
        ),
        (
            "--max-output-tokens",
            "golem: the limit of 1 output tokens is reached",
        ),
    ] {
        let dir = TempDir::new();
        let provider = FakeProvider::start_with(caller("list_allowed_directories", "{}"));
        let output = run_on(&provider)
            .arg("--config")
            .arg(dir.config(&["fs"]))
            .args([flag, "1", "Where may you look?"])
            .output()
            .expect("runs");

        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(6), "{flag}: {stderr}");
        assert!(stderr.contains(message), "{flag}: {stderr}");
        assert_eq!(provider.requests().len(), 1, "{flag}: none past the limit");
    }
}

#[test]
fn the_tool_call_limit_stops_the_call_before_it_runs() {
    let dir = TempDir::new();
    let provider = FakeProvider::start_with(|_| {
        Reply::ToolCalls(vec![
            ("list_allowed_directories".into(), "{}".into()),
            ("list_allowed_directories".into(), "{}".into()),
        ])
    });
    let output = run_on(&provider)
        .arg("--config")
        .arg(dir.config(&["fs"]))
        .args(["--max-tool-calls", "1", "Look twice"])
        .output()
        .expect("runs");

    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("this turn's 2 tool calls would pass the limit of 1 (0 spent before them)"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("list_allowed_directories ok"),
        "no call ran: {stderr}"
    );
}

#[test]
fn a_chats_exchanges_share_the_limits() {
    let provider = FakeProvider::start_with(|_| Reply::Text("ok\n".into()));
    let output = golem()
        .args(["chat", "--model", "openai:gpt-fake", "--base-url"])
        .arg(provider.openai_base_url())
        .args(["--max-requests", "2"])
        .write_stdin("one\ntwo\nthree\n")
        .output()
        .expect("runs");

    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(stdout, "ok\nok\n", "{stderr}");
    assert_eq!(output.status.code(), Some(6), "{stderr}");
    assert!(
        stderr.contains("the limit of 2 model requests is reached (2 spent) in this command"),
        "{stderr}"
    );
    assert_eq!(provider.requests().len(), 2);
}
