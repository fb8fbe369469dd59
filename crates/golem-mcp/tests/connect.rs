//! From an `mcpServers` file to initialized clients: `ServerConfig::connect`
//! and `Servers::connect_all` against the reference server, with a
//! disabled, a malformed and a hanging entry beside it; an HTTP server
//! that never answers is named by the request it left unanswered.

mod support;

use std::time::Duration;

use golem_mcp::config::{self, ConfigError};
use golem_mcp::{ClientConfig, Error};
use support::{read_pid, scratch_path, server_everything, until_gone};

fn file(hang_pid: &std::path::Path) -> String {
    serde_json::json!({"mcpServers": {
        "everything": {"command": server_everything(), "args": ["stdio"], "timeoutMs": 5000},
        "off": {"command": "/nonexistent/never-started", "disabled": true},
        "broken": {"command": "x", "env": {"TOKEN": "${GOLEM_TEST_UNSET_VARIABLE}"}},
        "hangs": {"command": "sh", "args": ["-c", format!(
            "echo $$ > {}; echo 'could not bind port 8080' >&2; exec sleep 100",
            hang_pid.display()
        )]},
    }})
    .to_string()
}

#[tokio::test]
async fn one_entry_connects_and_is_initialized() {
    let servers = config::parse(&file(&scratch_path("unused")), |_| None).expect("a valid file");
    let client = servers
        .get("everything")
        .expect("a valid entry")
        .connect()
        .await
        .expect("connected");
    assert!(client.server().is_some(), "initialize ran");
    assert!(!client.list_tools().await.expect("tools").is_empty());
    client.close().await.expect("closed");
}

#[tokio::test]
async fn connect_all_gives_one_result_per_enabled_entry() {
    let hang_pid = scratch_path("hang.pid");
    let servers = config::parse(&file(&hang_pid), |_| None).expect("a valid file");
    assert!(servers.is_disabled("off"));
    assert_eq!(
        servers.enabled().collect::<Vec<_>>(),
        ["broken", "everything", "hangs"]
    );
    assert_eq!(
        servers.extra("everything").expect("entry")["timeoutMs"],
        5000,
        "fields the format does not define are kept for the application"
    );

    let mut results = servers
        .connect_all(&ClientConfig::default(), Duration::from_secs(3))
        .await;
    assert_eq!(
        results.keys().map(String::as_str).collect::<Vec<_>>(),
        ["broken", "everything", "hangs"],
        "the disabled entry is not started"
    );

    let everything = results
        .remove("everything")
        .expect("result")
        .expect("connected");
    assert!(!everything.list_tools().await.expect("tools").is_empty());

    match results.remove("broken").expect("result") {
        Err(Error::Config(ConfigError::Invalid { field, .. })) => {
            assert_eq!(field, "mcpServers.broken.env.TOKEN");
        }
        other => panic!("expected the entry's config error, got {other:?}"),
    }

    match results.remove("hangs").expect("result") {
        Err(error @ Error::Timeout { .. }) => {
            let Error::Timeout { stderr_tail, .. } = &error else {
                unreachable!()
            };
            assert!(
                stderr_tail.contains("could not bind port 8080"),
                "{stderr_tail:?}"
            );
            let message = error.to_string();
            assert!(message.starts_with("mcp: initialize: no answer from the server within 3s"));
            assert!(message.contains("its stderr ended with:\ncould not bind port 8080"));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    let pid = read_pid(&hang_pid);
    assert!(
        until_gone(pid).await,
        "the server that timed out was stopped"
    );
    everything.close().await.expect("closed");
}

#[test]
fn disabled_must_be_a_boolean() {
    let servers = config::parse(
        r#"{"mcpServers": {"a": {"command": "x", "disabled": "yes"}}}"#,
        |_| None,
    )
    .expect("a valid file");
    match servers.get("a") {
        Err(ConfigError::Invalid { field, problem, .. }) => {
            assert_eq!(field, "mcpServers.a.disabled");
            assert_eq!(problem, "expected true or false, found a string");
        }
        other => panic!("expected an invalid entry, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stdio_server_slow_to_answer_the_probe_is_not_taken_for_a_legacy_one() {
    // A modern server that answers `server/discover` only after 1.5 s (an
    // `npx` download, two busy CPUs); the probe's own bound is shorter, but
    // it waits as long as the start may take.
    let file = serde_json::json!({"mcpServers": {"slow": {
        "command": support::FAKE, "env": {"FAKE_DISCOVER_AFTER_MS": "1500"},
    }}})
    .to_string();
    let servers = config::parse(&file, |_| None).expect("a valid file");
    let mut config = ClientConfig::default();
    config.probe_timeout = Duration::from_millis(300);
    let mut results = servers.connect_all(&config, Duration::from_secs(20)).await;
    let client = results
        .remove("slow")
        .expect("a result")
        .expect("connected");
    let server = client.server().expect("initialized");
    assert_eq!(
        server.chosen,
        golem_mcp::HowChosen::Discovered,
        "{server:?}"
    );
    assert_eq!(server.protocol_version, "2026-07-28");
    client.close().await.expect("closed");
}

#[tokio::test]
async fn a_legacy_stdio_server_that_ignores_the_probe_still_starts_within_the_bound() {
    // The probe may take half the bound (3 s of 6): the rest is left for
    // `initialize`.
    let file = serde_json::json!({"mcpServers": {"silent": {
        "command": support::FAKE, "env": {"FAKE_DISCOVER_AFTER_MS": "silent"},
    }}})
    .to_string();
    let servers = config::parse(&file, |_| None).expect("a valid file");
    let mut config = ClientConfig::default();
    config.probe_timeout = Duration::from_millis(200);
    let mut results = servers.connect_all(&config, Duration::from_secs(6)).await;
    let client = results
        .remove("silent")
        .expect("a result")
        .expect("connected as a legacy server");
    let server = client.server().expect("initialized");
    assert!(
        matches!(&server.chosen, golem_mcp::HowChosen::FellBack { probe } if probe.contains("3s")),
        "{server:?}"
    );
    client.close().await.expect("closed");
}

#[tokio::test]
async fn a_timeout_names_the_request_the_server_left_unanswered() {
    // Takes the connection and never answers: the era probe waits.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let port = listener.local_addr().expect("an address").port();
    let held = tokio::spawn(async move {
        let mut connections = Vec::new();
        while let Ok((connection, _)) = listener.accept().await {
            connections.push(connection);
        }
    });
    let text = serde_json::json!({"mcpServers": {
        "mute": {"url": format!("http://127.0.0.1:{port}/mcp")},
    }})
    .to_string();
    let servers = config::parse(&text, |_| None).expect("a valid file");

    let mut results = servers
        .connect_all(&ClientConfig::default(), Duration::from_millis(500))
        .await;

    match results.remove("mute").expect("result") {
        Err(Error::Timeout { operation, .. }) => assert_eq!(operation, "server/discover"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    held.abort();
}
