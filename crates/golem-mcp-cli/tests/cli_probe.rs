//! How `info` says the protocol revision was chosen, against a real server
//! that answers the era probe badly (`@cyanheads/git-mcp-server`, npm: HTTP
//! 500 to the session-less `server/discover`): the probe falls back to the
//! initialize era and says why; a config entry's `"protocol"` pins the
//! revision and `info` says it was pinned there; `--protocol` beats it.
//! `info` also says what carried the session: an HTTP+SSE server reached
//! through its URL is named as such, with the status that refused
//! streamable HTTP.

mod support;

use support::{TempDir, git_http, golem_mcp, python_sse};

#[test]
fn a_server_that_fails_the_probe_with_a_500_is_reached_in_the_initialize_era() {
    let git = git_http();

    let output = golem_mcp()
        .args(["info", "--url", &git.url])
        .output()
        .expect("runs");

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.contains(
            "protocol:     2025-11-25 (initialize, after server/discover got HTTP 500)\n"
        ),
        "{stdout}"
    );
    let listed = golem_mcp()
        .args(["list", "--url", &git.url])
        .output()
        .expect("runs");
    assert!(listed.status.success(), "{listed:?}");
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("git_status\n"),
        "{listed:?}"
    );
}

#[test]
fn an_entrys_protocol_pins_the_revision_and_info_says_where() {
    let git = git_http();
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        &serde_json::json!({"mcpServers": {
            "git": {"url": git.url, "protocol": "2025-11-25"},
        }})
        .to_string(),
    );
    let info = |extra: &[&str]| {
        let output = golem_mcp()
            .arg("info")
            .arg("--config")
            .arg(&config)
            .args(["--server", "git"])
            .args(extra)
            .output()
            .expect("runs");
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };

    let stdout = info(&[]);
    assert!(
        stdout.contains("protocol:     2025-11-25 (pinned in the config)"),
        "{stdout}"
    );
    let stdout = info(&["--protocol", "2025-06-18"]);
    assert!(
        stdout.contains("protocol:     2025-06-18 (pinned with --protocol)"),
        "the command line beats the file: {stdout}"
    );
}

#[test]
fn a_bad_entry_protocol_is_a_usage_error_naming_the_field() {
    let dir = TempDir::new();
    let config = dir.file(
        "mcp.json",
        r#"{"mcpServers": {"git": {"url": "http://127.0.0.1:9/mcp", "protocol": "2099-01-01"}}}"#,
    );

    let output = golem_mcp()
        .arg("info")
        .arg("--config")
        .arg(&config)
        .args(["--server", "git"])
        .output()
        .expect("runs");

    assert_eq!(output.status.code(), Some(2), "{output:?}");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains(
            "mcpServers.git.protocol: \"2099-01-01\" is not a revision this client speaks"
        ),
        "{output:?}"
    );
}

#[test]
fn info_says_the_session_went_on_over_http_sse_and_why() {
    let sse = python_sse();

    let output = golem_mcp()
        .args(["info", "--url", &sse.url])
        .output()
        .expect("runs");

    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout
            .contains("transport:    HTTP+SSE (2024-11-05), after streamable HTTP got HTTP 405\n"),
        "{stdout}"
    );
    let git = git_http();
    let output = golem_mcp()
        .args(["info", "--url", &git.url])
        .output()
        .expect("runs");
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("transport:    streamable HTTP\n"),
        "{output:?}"
    );
}
