//! The era decision against real servers nobody here wrote: the official
//! Python SDK (`mcp` 2.3, its `MCPServer`) and FastMCP 4 are dual-era and
//! must be spoken to in 2026-07-28, over stdio and streamable HTTP;
//! `server-everything` speaks only the initialize era and must be reached
//! through the fallback on both transports. The Python SDK's
//! multi-round-trip tools (its `Resolve` parameters) are answered by the
//! handlers registered for elicitation, sampling and roots. A missing peer
//! fails the test (`scripts/install-peers.sh` installs them).
#![cfg(feature = "http")]

mod support;

use std::process::Command;

use golem_mcp::{
    Client, ClientConfig, CreateMessageResult, ElicitationResponse, Era, HowChosen, HttpConfig,
    HttpTransport, MODERN_PROTOCOL_VERSION, Root, StdioConfig, StdioTransport,
};
use serde_json::json;
use support::{
    Peer, everything_http, everything_stdio, free_port, peer, peer_bounded, raw, start_peer,
};

fn python() -> String {
    peer(".venv/bin/python").to_string_lossy().into_owned()
}

/// A Python peer script over stdio.
fn python_stdio(script: &str) -> StdioConfig {
    StdioConfig {
        args: vec![peer(script).to_string_lossy().into_owned()],
        ..StdioConfig::new(python())
    }
}

/// A Python peer script over streamable HTTP, with its own `options`.
fn python_http(script: &str, options: &[&str]) -> Peer {
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(peer(script))
        .args(["--http", "--port", &port.to_string()])
        .args(options);
    start_peer(command, port)
}

/// A client that answers the MRTR peer's three kinds of input.
fn answering() -> ClientConfig {
    ClientConfig::default()
        .with_elicitation(|_request, _context| async {
            let mut content = serde_json::Map::new();
            content.insert("name".into(), json!("Ada"));
            Ok(ElicitationResponse::Accept(content))
        })
        .with_sampling(|_request, _context| async {
            Ok(CreateMessageResult::text("golem-test-model", "Paris"))
        })
        .with_roots(vec![Root::new("file:///srv/golem")])
}

async fn connected(client: &Client) -> (Era, HowChosen) {
    let server = peer_bounded(client.initialize()).await.expect("connects");
    (server.era(), server.chosen.clone())
}

async fn text_of(client: &Client, tool: &str, arguments: &str) -> String {
    let result = peer_bounded(client.call_tool(tool, &raw(arguments)))
        .await
        .unwrap_or_else(|error| panic!("{tool}: {error}"));
    assert!(!result.is_error, "{tool}: {}", result.text());
    result.text()
}

/// The MRTR peer's tools, each asking for one kind of input.
async fn every_kind_of_input_is_answered(client: &Client) {
    assert_eq!(
        text_of(client, "echo", r#"{"message":"hi"}"#).await,
        "Echo: hi"
    );
    assert_eq!(text_of(client, "greet", "{}").await, "hello Ada");
    assert_eq!(
        text_of(client, "ask_model", r#"{"question":"Capital of France?"}"#).await,
        "golem-test-model: Paris"
    );
    assert_eq!(
        text_of(client, "show_roots", "{}").await,
        "roots: file:///srv/golem"
    );
}

#[tokio::test]
async fn the_python_sdk_over_stdio_is_spoken_to_in_the_modern_era_with_its_input_answered() {
    let transport =
        StdioTransport::spawn(python_stdio("python/modern_mrtr_server.py")).expect("spawns");
    let client = Client::with_config(transport, answering());
    assert_eq!(
        connected(&client).await,
        (Era::Modern, HowChosen::Discovered)
    );
    let server = client.server().expect("connected");
    assert_eq!(server.name, "golem-py-mrtr-peer");
    assert_eq!(server.protocol_version, MODERN_PROTOCOL_VERSION);
    every_kind_of_input_is_answered(&client).await;
    peer_bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn the_python_sdk_over_http_is_modern_with_sse_and_json_answers() {
    for options in [&[][..], &["--json"][..]] {
        let server = python_http("python/modern_mrtr_server.py", options);
        let transport = HttpTransport::new(HttpConfig::new(&server.url)).expect("valid config");
        let client = Client::with_config(transport, answering());
        assert_eq!(
            connected(&client).await,
            (Era::Modern, HowChosen::Discovered),
            "{options:?}"
        );
        every_kind_of_input_is_answered(&client).await;
        // Its x-mcp-header tool: the server checks Mcp-Param-Region.
        let tools = peer_bounded(client.list_tools()).await.expect("lists");
        assert!(tools.iter().any(|tool| tool.name == "region_echo"));
        assert_eq!(
            text_of(&client, "region_echo", r#"{"region":"eu-west 1"}"#).await,
            "region: eu-west 1"
        );
        peer_bounded(client.close()).await.expect("closes");
    }
}

#[tokio::test]
async fn a_declined_elicitation_reaches_the_python_tool_as_a_decline() {
    let transport =
        StdioTransport::spawn(python_stdio("python/modern_mrtr_server.py")).expect("spawns");
    let config = ClientConfig::default()
        .with_elicitation(|_request, _context| async { Ok(ElicitationResponse::Decline) });
    let client = Client::with_config(transport, config);
    connected(&client).await;
    let result = peer_bounded(client.call_tool("greet", &raw("{}")))
        .await
        .expect("answered");
    assert!(result.is_error, "{}", result.text());
    assert!(result.text().contains("decline"), "{}", result.text());
}

#[tokio::test]
async fn fastmcp_is_modern_over_stdio_and_http() {
    let transport =
        StdioTransport::spawn(python_stdio("python/modern_fastmcp_server.py")).expect("spawns");
    let client = Client::with_config(transport, answering());
    assert_eq!(
        connected(&client).await,
        (Era::Modern, HowChosen::Discovered)
    );
    assert_eq!(
        text_of(&client, "echo", r#"{"message":"hi"}"#).await,
        "Echo: hi"
    );
    assert!(text_of(&client, "greet", "{}").await.contains("Ada"));
    peer_bounded(client.close()).await.expect("closes");

    let server = python_http("python/modern_fastmcp_server.py", &[]);
    let transport = HttpTransport::new(HttpConfig::new(&server.url)).expect("valid config");
    let client = Client::with_config(transport, answering());
    assert_eq!(
        connected(&client).await,
        (Era::Modern, HowChosen::Discovered)
    );
    assert!(text_of(&client, "greet", "{}").await.contains("Ada"));
    peer_bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn server_everything_is_reached_through_the_fallback_on_both_transports() {
    let transport = StdioTransport::spawn(everything_stdio()).expect("spawns");
    let client = Client::new(transport);
    let (era, chosen) = connected(&client).await;
    assert_eq!(era, Era::Legacy);
    assert!(
        matches!(&chosen, HowChosen::FellBack { probe } if probe.contains("-32601")),
        "{chosen:?}"
    );
    assert_eq!(
        text_of(&client, "echo", r#"{"message":"hi"}"#).await,
        "Echo: hi"
    );
    peer_bounded(client.close()).await.expect("closes");

    let server = everything_http();
    let transport = HttpTransport::new(HttpConfig::new(&server.url)).expect("valid config");
    let client = Client::new(transport);
    let (era, chosen) = connected(&client).await;
    assert_eq!(era, Era::Legacy);
    assert!(
        matches!(&chosen, HowChosen::FellBack { probe } if probe.contains("-32000")),
        "{chosen:?}"
    );
    assert_eq!(
        text_of(&client, "echo", r#"{"message":"hi"}"#).await,
        "Echo: hi"
    );
    peer_bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn a_dual_era_server_pinned_to_legacy_is_initialized_and_stays_legacy() {
    let transport =
        StdioTransport::spawn(python_stdio("python/modern_mrtr_server.py")).expect("spawns");
    let client = Client::with_config(transport, answering().with_protocol("2025-11-25"));
    assert_eq!(connected(&client).await, (Era::Legacy, HowChosen::Pinned));
    // The same resolvers now ask with server requests, answered by the
    // same handlers.
    assert_eq!(text_of(&client, "greet", "{}").await, "hello Ada");
    peer_bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn a_modern_python_server_logs_only_for_requests_that_name_a_level() {
    let transport = StdioTransport::spawn(python_stdio("python/mcp_py_server.py")).expect("spawns");
    let client = Client::new(transport);
    assert_eq!(connected(&client).await.0, Era::Modern);
    let mut notifications = client.notifications();
    // No level named: the server sends no log message for this call.
    assert_eq!(text_of(&client, "chatty", "{}").await, "logged");
    peer_bounded(client.set_log_level(golem_mcp::LogLevel::Warning))
        .await
        .expect("set");
    assert_eq!(text_of(&client, "chatty", "{}").await, "logged");
    // The first log message is the second call's warning: the first call
    // sent none, and its info is below the level.
    let first = peer_bounded(notifications.recv())
        .await
        .expect("a notification");
    let golem_mcp::ServerNotification::Log(message) = first else {
        panic!("not a log message: {first:?}");
    };
    assert_eq!(message.level, golem_mcp::LogLevel::Warning);
    assert_eq!(message.data, json!("careful"));
    peer_bounded(client.close()).await.expect("closes");
}
