//! The HTTP+SSE transport of 2024-11-05 against a real server nobody here
//! wrote: a FastMCP server of the official Python SDK's 1.x line run with
//! `transport="sse"` (`peers/python/sse_fastmcp_server.py`, in
//! `peers/.venv-sse`, installed by `scripts/install-peers.sh`), reached
//! explicitly (`SseTransport`, no probe) and through the streamable
//! transport's fallback (`HttpTransport` on the `/sse` URL). Tools are
//! listed and called, the server's requests (an elicitation, a sampling)
//! answered by the registered handlers, progress reported, and closing
//! leaves no task of the client behind. A missing peer fails the test.
#![cfg(feature = "http")]

mod support;

use support::{PATIENCE, Peer, peer_bounded, polled, python_sse, raw};

use golem_mcp::{
    Client, ClientConfig, CreateMessageRequest, CreateMessageResult, ElicitationRequest,
    ElicitationResponse, Era, HandlerError, HowChosen, HttpConfig, HttpTransport, SamplingContent,
    SseTransport,
};
use serde_json::{Map, json};
use tokio::runtime::Handle;

/// A client that answers the peer's elicitation with the name "Ada" and
/// its sampling with a model that echoes the first text.
fn answering() -> ClientConfig {
    ClientConfig::default()
        .with_elicitation(|request: ElicitationRequest, _| async move {
            let ElicitationRequest::Form { form, .. } = request else {
                return Ok(ElicitationResponse::Cancel);
            };
            assert_eq!(form.fields[0].name, "name");
            let mut content = Map::new();
            content.insert("name".into(), json!("Ada"));
            Ok(ElicitationResponse::Accept(content))
        })
        .with_sampling(|request: CreateMessageRequest, _| async move {
            let SamplingContent::Text { text } = &request.messages[0].content[0] else {
                return Err(HandlerError::invalid_params("text only"));
            };
            Ok(CreateMessageResult::text(
                "echo-model",
                format!("short: {text}"),
            ))
        })
}

/// Lists and calls the peer's tools, with its requests answered.
async fn exercise(client: &Client) {
    let names: Vec<String> = peer_bounded(client.list_tools())
        .await
        .expect("lists")
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    for expected in ["echo", "add", "slow", "ask_name", "summarize"] {
        assert!(names.iter().any(|name| name == expected), "{names:?}");
    }
    let echo = peer_bounded(client.call_tool("echo", &raw(r#"{"message":"over sse"}"#)))
        .await
        .expect("echo");
    assert_eq!(echo.text(), "Echo: over sse");
    let sum = peer_bounded(client.call_tool("add", &raw(r#"{"a":2,"b":40}"#)))
        .await
        .expect("add");
    assert_eq!(sum.text(), "42");
    let failed = peer_bounded(client.call_tool("fail", &raw(r#"{"reason":"no"}"#)))
        .await
        .expect("an isError result, not an error");
    assert!(failed.is_error, "{failed:?}");
    let greeted = peer_bounded(client.call_tool("ask_name", &raw("{}")))
        .await
        .expect("the elicitation was answered");
    assert_eq!(greeted.text(), "Hello, Ada!");
    let summary = peer_bounded(client.call_tool("summarize", &raw(r#"{"text":"a long text"}"#)))
        .await
        .expect("the sampling was answered");
    assert_eq!(summary.text(), "summary: short: a long text");
    let mut steps = Vec::new();
    let slow = peer_bounded(client.call_tool_with_progress(
        "slow",
        &raw(r#"{"steps":3,"delay":0.01}"#),
        |progress| steps.push(progress.progress),
    ))
    .await
    .expect("completes");
    assert_eq!(slow.text(), "done after 3 steps");
    assert_eq!(
        steps,
        [1.0, 2.0, 3.0],
        "progress arrives on the event stream"
    );
}

async fn initialized(client: &Client) -> (Era, HowChosen) {
    let server = peer_bounded(client.initialize())
        .await
        .expect("initializes");
    assert_eq!(server.name, "golem-sse-peer");
    (server.era(), server.chosen.clone())
}

#[tokio::test]
async fn a_python_fastmcp_server_over_http_sse_explicitly() {
    let peer = python_sse();
    let transport = SseTransport::new(HttpConfig::new(peer.url.clone())).expect("valid");
    let client = Client::with_config(transport, answering());
    let (era, chosen) = initialized(&client).await;
    assert_eq!(
        (era, chosen),
        (Era::Legacy, HowChosen::LegacyTransport),
        "nothing is probed on a transport only legacy servers serve"
    );
    exercise(&client).await;
    peer_bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn a_python_fastmcp_server_over_http_sse_through_the_streamable_fallback() {
    let peer = python_sse();
    let transport = HttpTransport::new(HttpConfig::new(peer.url.clone())).expect("valid");
    let fallback = transport.fallback();
    assert_eq!(fallback.refused_with(), None, "nothing sent yet");
    let client = Client::with_config(transport, answering());
    let (era, chosen) = initialized(&client).await;
    assert_eq!(era, Era::Legacy);
    assert_eq!(
        fallback.refused_with(),
        Some(405),
        "the handle says the connection went on over HTTP+SSE, and why"
    );
    // The probe's POST to the event stream's URL: 405 (a GET-only route).
    assert!(
        matches!(&chosen, HowChosen::FellBack { probe } if probe.contains("405")),
        "{chosen:?}"
    );
    exercise(&client).await;
    peer_bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn a_pinned_legacy_revision_goes_straight_to_initialize_and_a_modern_one_is_refused() {
    let peer = python_sse();
    let pinned = |version: &str| {
        let transport = SseTransport::new(HttpConfig::new(peer.url.clone())).expect("valid");
        Client::with_config(transport, ClientConfig::default().with_protocol(version))
    };
    let legacy = pinned("2025-06-18");
    let server = peer_bounded(legacy.initialize())
        .await
        .expect("initializes");
    assert_eq!(
        (server.protocol_version.as_str(), &server.chosen),
        ("2025-06-18", &HowChosen::Pinned)
    );
    peer_bounded(legacy.close()).await.expect("closes");
    let modern = pinned(golem_mcp::MODERN_PROTOCOL_VERSION);
    let error = peer_bounded(modern.initialize())
        .await
        .expect_err("a modern revision cannot go over HTTP+SSE");
    assert!(error.to_string().contains("initialize era only"), "{error}");
}

/// How many tasks the current runtime has that have not finished.
fn alive_tasks() -> usize {
    Handle::current().metrics().num_alive_tasks()
}

/// Closing an HTTP+SSE client (of either kind) ends every task it started:
/// the inbound task, the stream's reader, the HTTP client's connections.
#[test]
fn closing_leaves_no_task_behind_over_either_transport() {
    let peer = python_sse();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        for explicit in [true, false] {
            let baseline = alive_tasks();
            let client = connect(&peer, explicit).await;
            let echo = peer_bounded(client.call_tool("echo", &raw(r#"{"message":"x"}"#)))
                .await
                .expect("echo");
            assert_eq!(echo.text(), "Echo: x");
            assert!(alive_tasks() > baseline, "the client runs tasks");
            peer_bounded(client.close()).await.expect("closes");
            drop(client);
            let back = polled(async || (alive_tasks() == baseline).then_some(())).await;
            assert!(
                back.is_some(),
                "explicit {explicit}: {} tasks alive {PATIENCE:?} after close, {baseline} before",
                alive_tasks()
            );
        }
    });
}

async fn connect(peer: &Peer, explicit: bool) -> Client {
    let config = HttpConfig::new(peer.url.clone());
    let client = match explicit {
        true => Client::new(SseTransport::new(config).expect("valid")),
        false => Client::new(HttpTransport::new(config).expect("valid")),
    };
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    client
}
