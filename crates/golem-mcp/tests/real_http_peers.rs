//! The HTTP transport against real servers nobody here wrote, installed by
//! `scripts/install-peers.sh`: the reference `server-everything` (npm) in its
//! streamable-HTTP mode (event-stream answers), and a server built on the
//! official Python SDK (`mcp` on PyPI, `peers/python/mcp_py_server.py`) with
//! event-stream answers, JSON answers, and without sessions. A missing peer
//! fails the test.
#![cfg(feature = "http")]

mod support;

use support::{Peer, everything_http, peer_bounded, python_http, raw};

use golem_mcp::{
    Client, HttpConfig, HttpTransport, Inbound, LATEST_PROTOCOL_VERSION, Outgoing, Transport,
};

async fn connect(peer: &Peer) -> Client {
    let client = Client::new(HttpTransport::new(HttpConfig::new(peer.url.clone())).expect("valid"));
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    client
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let peer = everything_http();
    let client = connect(&peer).await;
    let tools = peer_bounded(client.list_tools()).await.expect("lists");
    assert!(tools.iter().any(|tool| tool.name == "echo"), "{tools:?}");
    let result = peer_bounded(client.call_tool("echo", &raw(r#"{"message":"over http"}"#)))
        .await
        .expect("echo");
    assert_eq!(result.text(), "Echo: over http");
    let result = peer_bounded(client.call_tool("get-tiny-image", &raw("{}")))
        .await
        .expect("image");
    assert!(
        result.text().contains("[image: image/png, "),
        "{}",
        result.text()
    );
    let mut steps = Vec::new();
    let result = peer_bounded(client.call_tool_with_progress(
        "trigger-long-running-operation",
        &raw(r#"{"duration":0.3,"steps":3}"#),
        |progress| steps.push(progress.progress),
    ))
    .await
    .expect("completes");
    assert!(result.text().contains("completed"), "{}", result.text());
    assert_eq!(
        steps,
        [1.0, 2.0, 3.0],
        "progress arrives on the POST's event stream"
    );
    peer_bounded(client.close())
        .await
        .expect("closes with DELETE");
}

async fn exercise_python_peer(client: &Client, progress_expected: bool) {
    let tools = peer_bounded(client.list_tools()).await.expect("lists");
    let mut names: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "add",
            "ask_model",
            "ask_user",
            "chatty",
            "echo",
            "fail",
            "refuse",
            "slow"
        ]
    );
    let result = peer_bounded(client.call_tool("echo", &raw(r#"{"message":"py"}"#)))
        .await
        .expect("echo");
    assert_eq!(result.text(), "Echo: py");
    assert!(result.structured_content.is_some());
    let result = peer_bounded(client.call_tool("add", &raw(r#"{"a":2,"b":40}"#)))
        .await
        .expect("add");
    assert_eq!(result.text(), "42");
    let result = peer_bounded(client.call_tool("fail", &raw(r#"{"reason":"nope"}"#)))
        .await
        .expect("answered");
    assert!(result.is_error);
    assert!(result.text().ends_with("nope"), "{}", result.text());
    let mut steps = Vec::new();
    let result = peer_bounded(client.call_tool_with_progress(
        "slow",
        &raw(r#"{"steps":2,"delay":0.01}"#),
        |p| steps.push(p.progress),
    ))
    .await
    .expect("slow");
    assert_eq!(result.text(), "done after 2 steps");
    if progress_expected {
        assert_eq!(steps, [1.0, 2.0]);
    } else {
        assert!(
            steps.is_empty(),
            "no progress can arrive with JSON answers: {steps:?}"
        );
    }
}

/// The session id the server hands out at `initialize`. Read from a bare
/// transport, since a client owns its transport and does not show it.
async fn session_id_after_initialize(peer: &Peer) -> Option<String> {
    let transport = HttpTransport::new(HttpConfig::new(peer.url.clone())).expect("valid");
    let initialize = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{LATEST_PROTOCOL_VERSION}","capabilities":{{}},"clientInfo":{{"name":"golem-mcp-test","version":"0"}}}}}}"#
    );
    let initialize = Outgoing::request(1, "initialize", initialize.into());
    peer_bounded(transport.send(initialize))
        .await
        .expect("initialize sent");
    let Inbound::Message(reply) = peer_bounded(transport.recv()).await.expect("answered") else {
        panic!("the answer was lost");
    };
    let reply: serde_json::Value = serde_json::from_slice(&reply).expect("a JSON answer");
    assert_eq!(reply["id"], 1, "{reply}");
    assert!(reply["result"]["protocolVersion"].is_string(), "{reply}");
    let session = transport.session_id();
    peer_bounded(transport.close()).await.expect("closes");
    session
}

#[tokio::test]
async fn python_sdk_server_with_event_stream_answers() {
    let peer = python_http(&[]);
    let session = session_id_after_initialize(&peer).await;
    assert!(
        session.is_some_and(|id| !id.is_empty()),
        "a stateful server hands out a session id"
    );
    let client = connect(&peer).await;
    exercise_python_peer(&client, true).await;
    peer_bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn python_sdk_server_with_json_answers() {
    let peer = python_http(&["--json"]);
    let client = connect(&peer).await;
    // JSON answers carry one message: progress reports have nowhere to go.
    exercise_python_peer(&client, false).await;
    peer_bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn python_sdk_server_without_sessions() {
    let peer = python_http(&["--stateless", "--json"]);
    let session = session_id_after_initialize(&peer).await;
    assert_eq!(session, None, "a stateless server hands out no session id");
    let client = connect(&peer).await;
    exercise_python_peer(&client, false).await;
    peer_bounded(client.close())
        .await
        .expect("closes without a session to delete");
}

#[tokio::test]
async fn server_everything_over_http_asks_the_clients_handlers_and_logs_on_the_standalone_stream() {
    use golem_mcp::{
        ClientConfig, CreateMessageResult, ElicitationResponse, LogLevel, Root, ServerNotification,
    };
    let peer = everything_http();
    let config = ClientConfig::default()
        .with_sampling(|_, _| async {
            Ok(CreateMessageResult::text("http-model", "sampled over http"))
        })
        .with_elicitation(|_, _| async {
            let mut content = serde_json::Map::new();
            content.insert("name".into(), serde_json::json!("Grace Hopper"));
            Ok(ElicitationResponse::Accept(content))
        })
        .with_roots(vec![Root::new("file:///srv/http-root")]);
    let client = Client::with_config(
        HttpTransport::new(HttpConfig::new(peer.url.clone())).expect("valid"),
        config,
    );
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    let mut notifications = client.notifications();
    let call = |tool: &'static str, arguments: &'static str| {
        let client = client.clone();
        async move {
            let result = peer_bounded(client.call_tool(tool, &raw(arguments)))
                .await
                .expect("called");
            assert!(!result.is_error, "{tool}: {}", result.text());
            result.text()
        }
    };
    let sampled = call("trigger-sampling-request", r#"{"prompt":"hi"}"#).await;
    assert!(sampled.contains("sampled over http"), "{sampled}");
    let elicited = call("trigger-elicitation-request", "{}").await;
    assert!(elicited.contains("Grace Hopper"), "{elicited}");
    let roots = call("get-roots-list", "{}").await;
    assert!(roots.contains("file:///srv/http-root"), "{roots}");
    // Log messages that belong to no request come on the standalone stream.
    peer_bounded(client.set_log_level(LogLevel::Debug))
        .await
        .expect("level set");
    call("toggle-simulated-logging", "{}").await;
    let log = peer_bounded(async {
        loop {
            if let Some(ServerNotification::Log(log)) = notifications.recv().await {
                return log;
            }
        }
    })
    .await;
    assert!(!log.text().is_empty(), "{log:?}");
    peer_bounded(client.close()).await.expect("closes");
}
