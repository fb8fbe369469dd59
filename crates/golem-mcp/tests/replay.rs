//! Recorded sessions and their replay: a real session with a real server
//! written by `RecordWriter` through `Observed`, then read back and
//! answered by `ReplayTransport`, the client unable to tell the
//! difference. `server-everything` for the initialize era, the Python SDK's
//! server for 2026-07-28. A missing peer fails the test.

mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use golem_mcp::replay::{Direction, RecordWriter, ReplayTransport};
use golem_mcp::{
    Client, ClientConfig, Error, HowChosen, Inbound, MODERN_PROTOCOL_VERSION, Observed, Outgoing,
    Progress, StdioConfig, StdioTransport, Transport, TransportError, WireEvent,
};
use serde_json::{Value, json};
use support::{
    arguments, bounded, everything_stdio, peer_bounded, python_stdio, raw, scratch_path,
};

/// `inner`, every message it carries written to `writer`.
fn recorded<T: Transport>(
    inner: T,
    writer: Arc<RecordWriter>,
) -> Observed<T, impl Fn(WireEvent<'_>) + Send + Sync + 'static> {
    Observed::new(inner, move |event: WireEvent<'_>| match event {
        WireEvent::Sent(message) => {
            writer.record(Direction::Client, &String::from_utf8_lossy(message.body()))
        }
        WireEvent::Received(message) => {
            writer.record(Direction::Server, &String::from_utf8_lossy(message))
        }
        _ => {}
    })
}

/// `inner`, the progress tokens of the `tools/call`s it sends kept in
/// `tokens`.
fn watching_tokens<T: Transport>(
    inner: T,
    tokens: Arc<Mutex<Vec<Value>>>,
) -> Observed<T, impl Fn(WireEvent<'_>) + Send + Sync + 'static> {
    Observed::new(inner, move |event: WireEvent<'_>| {
        if let WireEvent::Sent(message) = event
            && message.method() == Some("tools/call")
        {
            let body: Value = serde_json::from_slice(message.body()).expect("JSON");
            if let Some(token) = body.pointer("/params/_meta/progressToken") {
                tokens.lock().expect("lock").push(token.clone());
            }
        }
    })
}

/// Spawns `config`'s server, recording its session to `path`.
fn recording_transport(
    config: StdioConfig,
    path: &Path,
) -> Observed<StdioTransport, impl Fn(WireEvent<'_>) + Send + Sync + 'static> {
    let writer = RecordWriter::create(path, "stdio: test peer").expect("creates the recording");
    recorded(
        StdioTransport::spawn(config).expect("spawns"),
        Arc::new(writer),
    )
}

/// Everything the test does with a server, as text to compare.
#[derive(Debug, PartialEq)]
struct Seen {
    tools: String,
    echo: String,
    resources: String,
    read: String,
    prompts: String,
    prompt: String,
    long_run: String,
    progress: Vec<Progress>,
}

async fn exercise_everything(client: &Client) -> Seen {
    let tools = peer_bounded(client.list_tools())
        .await
        .expect("lists tools");
    let echo = peer_bounded(client.call_tool("echo", &raw(r#"{"message":"hi"}"#)))
        .await
        .expect("echo");
    assert_eq!(echo.text(), "Echo: hi");
    let resources = peer_bounded(client.list_resources())
        .await
        .expect("lists resources");
    let document = resources
        .iter()
        .find(|resource| resource.uri.starts_with("demo://resource/static/document/"))
        .expect("a static document");
    let read = peer_bounded(client.read_resource(&document.uri))
        .await
        .expect("reads");
    let prompts = peer_bounded(client.list_prompts())
        .await
        .expect("lists prompts");
    let prompt = peer_bounded(client.get_prompt("args-prompt", &arguments(&[("city", "Paris")])))
        .await
        .expect("gets the prompt");
    let mut progress = Vec::new();
    let long_run = peer_bounded(client.call_tool_with_progress(
        "trigger-long-running-operation",
        &raw(r#"{"duration":0.2,"steps":2}"#),
        |report| progress.push(report),
    ))
    .await
    .expect("runs long");
    Seen {
        tools: format!("{tools:?}"),
        echo: format!("{echo:?}"),
        resources: format!("{resources:?}"),
        read: format!("{read:?}"),
        prompts: format!("{prompts:?}"),
        prompt: format!("{prompt:?}"),
        long_run: format!("{long_run:?}"),
        progress,
    }
}

/// `replayed` as `live` was, the first difference shown.
#[track_caller]
fn assert_same(replayed: &Seen, live: &Seen) {
    let fields = [
        ("tools", &replayed.tools, &live.tools),
        ("echo", &replayed.echo, &live.echo),
        ("resources", &replayed.resources, &live.resources),
        ("read", &replayed.read, &live.read),
        ("prompts", &replayed.prompts, &live.prompts),
        ("prompt", &replayed.prompt, &live.prompt),
        ("long_run", &replayed.long_run, &live.long_run),
    ];
    for (name, replayed, live) in fields {
        if replayed != live {
            let at = replayed
                .chars()
                .zip(live.chars())
                .take_while(|(a, b)| a == b)
                .count();
            let around = |text: &str| {
                text.chars()
                    .skip(at.saturating_sub(80))
                    .take(200)
                    .collect::<String>()
            };
            panic!(
                "{name} differs at character {at}:\n replayed: …{}\n live:     …{}",
                around(replayed),
                around(live)
            );
        }
    }
    assert_eq!(replayed.progress, live.progress);
}

/// The JSON-RPC error `result` failed with.
#[track_caller]
fn protocol_error<T: std::fmt::Debug>(result: Result<T, Error>) -> golem_mcp::ProtocolError {
    let error = result.expect_err("refused");
    error
        .protocol_error()
        .unwrap_or_else(|| panic!("not a JSON-RPC error: {error}"))
        .clone()
}

/// The progress token the recorded `tools/call` of `tool` carried.
fn recorded_token(path: &Path, tool: &str) -> Value {
    let recording = golem_mcp::replay::Recording::read(path).expect("reads");
    recording
        .messages()
        .iter()
        .filter(|recorded| recorded.from == Direction::Client)
        .find(|recorded| recorded.message.pointer("/params/name") == Some(&json!(tool)))
        .and_then(|recorded| recorded.message.pointer("/params/_meta/progressToken"))
        .cloned()
        .expect("the recorded call asked for progress")
}

#[tokio::test]
async fn a_recorded_session_of_server_everything_replays_identically() {
    let path = scratch_path("everything.jsonl");
    let client = peer_bounded(Client::connect(recording_transport(
        everything_stdio(),
        &path,
    )))
    .await
    .expect("connects");
    let live_server = client.server().expect("initialized").clone();
    let live = exercise_everything(&client).await;
    client.close().await.expect("closes");
    assert_eq!(live.progress.len(), 2, "{:?}", live.progress);

    let tokens = Arc::new(Mutex::new(Vec::new()));
    let transport = ReplayTransport::open(&path).expect("reads the recording");
    assert!(
        transport.legacy_only(),
        "server-everything refused the probe"
    );
    let client = bounded(Client::connect(watching_tokens(transport, tokens.clone())))
        .await
        .expect("connects to the replay");
    let server = client.server().expect("initialized");
    assert_eq!(server.name, live_server.name);
    assert_eq!(server.protocol_version, live_server.protocol_version);
    assert_eq!(server.capabilities, live_server.capabilities);
    assert_eq!(server.chosen, HowChosen::LegacyTransport);
    // Listed twice more than recorded (the last listing is used again),
    // so that, unprobed, every later request's id (its progress token)
    // still differs from the recorded one.
    bounded(client.list_tools()).await.expect("lists again");
    bounded(client.list_tools()).await.expect("lists again");
    let replayed = bounded(exercise_everything(&client)).await;
    assert_same(&replayed, &live);
    let tokens = tokens.lock().expect("lock").clone();
    let recorded = recorded_token(&path, "trigger-long-running-operation");
    assert_eq!(tokens.len(), 1, "{tokens:?}");
    assert_ne!(
        tokens[0], recorded,
        "the live token is not the recorded one"
    );

    // Other arguments: the closest recorded call is named.
    let error =
        protocol_error(bounded(client.call_tool("echo", &raw(r#"{"message":"bye"}"#))).await);
    assert_eq!(error.code, -32602);
    assert_eq!(
        error.message,
        r#"golem-mcp replay: no recorded request matches tools/call {"arguments":{"message":"bye"},"name":"echo"}; the closest recorded one is tools/call {"arguments":{"message":"hi"},"name":"echo"}"#
    );
    let data = error.data.expect("data");
    assert_eq!(data["closest"]["method"], "tools/call");
    assert_eq!(data["closest"]["params"]["name"], "echo");

    // Another tool: still a recorded method, so invalid params.
    let error =
        protocol_error(bounded(client.call_tool("get-sum", &raw(r#"{"a":1,"b":2}"#))).await);
    assert_eq!(error.code, -32602);
    assert!(
        error.message.starts_with(r#"golem-mcp replay: no recorded request matches tools/call {"arguments":{"a":1,"b":2},"name":"get-sum"}; the closest recorded one is tools/call "#),
        "{}",
        error.message
    );

    // A method never recorded: the recorded method nearest in name.
    let error = protocol_error(bounded(client.list_resource_templates()).await);
    assert_eq!(error.code, -32601);
    assert_eq!(
        error.data.expect("data")["closest"]["method"],
        "resources/list"
    );

    client.close().await.expect("closes");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn a_recorded_modern_session_replays_in_the_modern_era() {
    let path = scratch_path("modern.jsonl");
    let client = peer_bounded(Client::connect(recording_transport(python_stdio(), &path)))
        .await
        .expect("connects");
    let live_server = client.server().expect("initialized").clone();
    assert_eq!(live_server.protocol_version, MODERN_PROTOCOL_VERSION);
    let tools = peer_bounded(client.list_tools()).await.expect("lists");
    let echo = peer_bounded(client.call_tool("echo", &raw(r#"{"message":"now"}"#)))
        .await
        .expect("echo");
    let mut live_progress = Vec::new();
    let slow = peer_bounded(client.call_tool_with_progress(
        "slow",
        &raw(r#"{"steps":2,"delay":0.01}"#),
        |report| live_progress.push(report),
    ))
    .await
    .expect("slow");
    assert_eq!(live_progress.len(), 2, "{live_progress:?}");
    client.close().await.expect("closes");

    let transport = ReplayTransport::open(&path).expect("reads the recording");
    assert!(!transport.legacy_only(), "the server answered the probe");
    let client = bounded(Client::connect(transport))
        .await
        .expect("connects to the replay");
    let server = client.server().expect("discovered");
    assert_eq!(server.chosen, HowChosen::Discovered);
    assert_eq!(server.protocol_version, MODERN_PROTOCOL_VERSION);
    assert_eq!(server.name, live_server.name);
    let replayed_tools = bounded(client.list_tools()).await.expect("lists");
    assert_eq!(format!("{replayed_tools:?}"), format!("{tools:?}"));
    let replayed_echo = bounded(client.call_tool("echo", &raw(r#"{"message":"now"}"#)))
        .await
        .expect("echo");
    assert_eq!(format!("{replayed_echo:?}"), format!("{echo:?}"));
    let mut progress = Vec::new();
    let replayed_slow = bounded(client.call_tool_with_progress(
        "slow",
        &raw(r#"{"steps":2,"delay":0.01}"#),
        |report| progress.push(report),
    ))
    .await
    .expect("slow");
    assert_eq!(format!("{replayed_slow:?}"), format!("{slow:?}"));
    assert_eq!(progress, live_progress);
    client.close().await.expect("closes");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn a_client_pinned_to_the_modern_era_is_refused_by_a_legacy_recording() {
    let path = scratch_path("legacy.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"golem_mcp_recording":1,"started":"2026-01-02T03:04:05Z","target":"x"}"#, "\n",
            r#"{"t_ms":0,"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}"#, "\n",
            r#"{"t_ms":1,"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}}"#, "\n",
        ),
    )
    .expect("writes");
    let config = ClientConfig::default().with_protocol(MODERN_PROTOCOL_VERSION);
    let transport = ReplayTransport::open(&path).expect("reads");
    let refused = bounded(Client::connect_with(transport, config)).await;
    assert!(refused.is_err(), "a modern client on a legacy recording");

    let client = bounded(Client::connect(
        ReplayTransport::open(&path).expect("reads"),
    ))
    .await
    .expect("a legacy client connects");
    assert_eq!(client.server().expect("initialized").name, "s");
    client.close().await.expect("closes");
    let _ = std::fs::remove_file(&path);
}

#[tokio::test]
async fn the_transport_answers_through_recv_until_closed() {
    let recording = golem_mcp::replay::Recording::parse(r#"{"golem_mcp_recording":1}"#)
        .expect("an empty recording");
    let transport = Arc::new(ReplayTransport::new(recording));
    // A receive dropped before anything came (polled once, then timed
    // out) loses nothing.
    let early = tokio::time::timeout(Duration::ZERO, transport.recv()).await;
    assert!(early.is_err(), "nothing to receive yet: {early:?}");
    transport
        .send(Outgoing::request(
            4,
            "ping",
            Bytes::from_static(br#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#),
        ))
        .await
        .expect("sends");
    match bounded(transport.recv()).await.expect("received") {
        Inbound::Message(message) => {
            let message: Value = serde_json::from_slice(&message).expect("JSON");
            assert_eq!(message, json!({"jsonrpc": "2.0", "id": 4, "result": {}}));
        }
        other => panic!("not a message: {other:?}"),
    }

    // A receive waiting when the transport closes gives way; later ones
    // fail at once, and so does a send.
    let waiting = {
        let transport = transport.clone();
        tokio::spawn(async move { transport.recv().await })
    };
    tokio::task::yield_now().await;
    transport.close().await.expect("closes");
    let waiting = bounded(waiting).await.expect("joined");
    assert!(
        matches!(waiting, Err(TransportError::Closed)),
        "{waiting:?}"
    );
    let after = transport.recv().await;
    assert!(matches!(after, Err(TransportError::Closed)), "{after:?}");
    let body = Bytes::from_static(br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    let sent = transport.send(Outgoing::request(5, "ping", body)).await;
    assert!(matches!(sent, Err(TransportError::Closed)), "{sent:?}");
}
