//! The client's handlers against a real server nobody here wrote: the
//! reference `@modelcontextprotocol/server-everything` over stdio, which
//! offers its sampling, elicitation and roots tools only to clients that
//! declare those capabilities. Installed by `scripts/install-peers.sh`; a
//! missing peer fails the test.

mod support;

use support::{PEER_PATIENCE, args, everything_stdio, peer_bounded, python_stdio};

use std::sync::{Arc, Mutex};

use golem_mcp::{
    Client, ClientConfig, CreateMessageRequest, CreateMessageResult, ElicitationRequest,
    ElicitationResponse, LogLevel, Root, SamplingContent, ServerNotification, StdioTransport,
};
use serde_json::{Map, json};

async fn connect(config: ClientConfig) -> Client {
    let transport = StdioTransport::spawn(everything_stdio()).expect("spawns server-everything");
    let client = Client::with_config(transport, config);
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    client
}

async fn call(client: &Client, tool: &str, arguments: serde_json::Value) -> String {
    let result = peer_bounded(client.call_tool(tool, &args(arguments)))
        .await
        .expect("called");
    assert!(!result.is_error, "{tool}: {}", result.text());
    result.text()
}

async fn tool_names(client: &Client) -> Vec<String> {
    let tools = client.list_tools().await.expect("lists");
    tools.into_iter().map(|tool| tool.name).collect()
}

#[tokio::test]
async fn the_server_offers_its_client_feature_tools_only_to_a_client_that_declares_them() {
    let plain = connect(ClientConfig::default()).await;
    let names = tool_names(&plain).await;
    for tool in [
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    ] {
        assert!(
            !names.iter().any(|name| name == tool),
            "{tool} offered without the capability"
        );
    }
    plain.close().await.expect("closes");
}

#[tokio::test]
async fn a_sampling_request_from_inside_a_tool_is_answered_by_the_handler() {
    let seen = Arc::new(Mutex::new(None));
    let record = seen.clone();
    let config = ClientConfig::default().with_sampling(move |request: CreateMessageRequest, _| {
        let record = record.clone();
        async move {
            let prompt = match &request.messages[0].content[0] {
                SamplingContent::Text { text } => text.clone(),
                other => format!("{other:?}"),
            };
            *record.lock().expect("not poisoned") =
                Some((prompt, request.system_prompt.clone(), request.max_tokens));
            Ok(CreateMessageResult::text(
                "golem-test-model",
                "a sampled answer",
            ))
        }
    });
    let client = connect(config).await;
    assert!(
        tool_names(&client)
            .await
            .iter()
            .any(|name| name == "trigger-sampling-request")
    );
    let text = call(
        &client,
        "trigger-sampling-request",
        json!({"prompt": "say hi", "maxTokens": 42}),
    )
    .await;
    assert!(
        text.contains("a sampled answer") && text.contains("golem-test-model"),
        "{text}"
    );
    let (prompt, system, max_tokens) = seen
        .lock()
        .expect("not poisoned")
        .clone()
        .expect("the handler ran");
    assert!(prompt.contains("say hi"), "{prompt}");
    assert_eq!(system.as_deref(), Some("You are a helpful test server."));
    assert_eq!(max_tokens, 42);
    client.close().await.expect("closes");
}

#[tokio::test]
async fn an_elicitation_with_every_field_kind_is_answered_with_defaults_filled_in() {
    let config =
        ClientConfig::default().with_elicitation(|request: ElicitationRequest, _| async move {
            let ElicitationRequest::Form { form, .. } = request else {
                return Ok(ElicitationResponse::Cancel);
            };
            // The server's thirteen fields, in its order, all understood.
            assert_eq!(form.fields.len(), 13, "{form:?}");
            assert_eq!(form.fields[0].name, "name");
            assert!(form.fields[0].required);
            let mut content = Map::new();
            content.insert("name".into(), json!("Ada Lovelace"));
            content.insert("check".into(), json!(true));
            Ok(ElicitationResponse::Accept(content))
        });
    let client = connect(config).await;
    let text = call(&client, "trigger-elicitation-request", json!({})).await;
    assert!(
        text.contains("User provided the requested information"),
        "{text}"
    );
    assert!(text.contains("Ada Lovelace"), "{text}");
    // Defaults the user did not touch were filled in.
    assert!(text.contains("It was a dark and stormy night."), "{text}");
    assert!(text.contains("hero-1"), "{text}");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn a_declined_elicitation_reaches_the_server_as_declined() {
    let config =
        ClientConfig::default().with_elicitation(|_, _| async { Ok(ElicitationResponse::Decline) });
    let client = connect(config).await;
    let text = call(&client, "trigger-elicitation-request", json!({})).await;
    assert!(text.contains("declined"), "{text}");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn roots_are_listed_to_the_server_and_changes_reach_it() {
    let config =
        ClientConfig::default().with_roots(vec![Root::new("file:///srv/one").with_name("one")]);
    let client = connect(config).await;
    let mut notifications = client.notifications();
    let text = call(&client, "get-roots-list", json!({})).await;
    assert!(text.contains("file:///srv/one"), "{text}");
    client
        .set_roots(vec![
            Root::new("file:///srv/one"),
            Root::new("file:///srv/two"),
        ])
        .await
        .expect("announced");
    // The server asks again and logs what it got.
    let logged = tokio::time::timeout(PEER_PATIENCE, async {
        loop {
            match notifications.recv().await {
                Some(ServerNotification::Log(log)) if log.text().contains("2 root(s)") => {
                    return log;
                }
                Some(_) => {}
                None => panic!("the client went away"),
            }
        }
    })
    .await
    .expect("the server re-read the roots");
    assert_eq!(logged.level, LogLevel::Info);
    let text = call(&client, "get-roots-list", json!({})).await;
    assert!(text.contains("file:///srv/two"), "{text}");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn simulated_log_messages_arrive_between_calls() {
    let client = connect(ClientConfig::default()).await;
    let mut notifications = client.notifications();
    client
        .set_log_level(LogLevel::Debug)
        .await
        .expect("level set");
    call(&client, "toggle-simulated-logging", json!({})).await;
    // The server sends one at once and then every 5 s; no call is in flight.
    let log = tokio::time::timeout(PEER_PATIENCE, async {
        loop {
            if let Some(ServerNotification::Log(log)) = notifications.recv().await {
                return log;
            }
        }
    })
    .await
    .expect("a log message arrived");
    assert!(!log.text().is_empty(), "{log:?}");
    client.close().await.expect("closes");
}

/// The official Python SDK's server (peers/python/mcp_py_server.py) over
/// stdio: sampling, elicitation and logging from inside its tools.
#[tokio::test]
async fn the_python_sdk_server_samples_elicits_and_logs_through_the_handlers() {
    let config = ClientConfig::default()
        .with_sampling(|request: CreateMessageRequest, _| async move {
            assert_eq!(request.system_prompt.as_deref(), Some("answer briefly"));
            Ok(CreateMessageResult::text("py-test-model", "forty-two"))
        })
        .with_elicitation(|_, _| async {
            let mut content = Map::new();
            content.insert("name".into(), json!("Ada"));
            Ok(ElicitationResponse::Accept(content))
        });
    let transport = StdioTransport::spawn(python_stdio()).expect("spawns the Python server");
    // Its tools ask through server requests, which only the initialize era
    // has (the SDK's 2026-07-28 side is tests/modern_real_peers.rs's).
    let client = Client::with_config(transport, config.with_protocol("2025-11-25"));
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    let mut notifications = client.notifications();
    assert_eq!(
        call(&client, "ask_model", json!({"question": "the answer?"})).await,
        "py-test-model: forty-two"
    );
    // The age was left out: the form's default reached the server.
    assert_eq!(call(&client, "ask_user", json!({})).await, "hello Ada, 36");
    assert_eq!(call(&client, "chatty", json!({})).await, "logged");
    let mut logs = Vec::new();
    while logs.len() < 2 {
        match tokio::time::timeout(PEER_PATIENCE, notifications.recv()).await {
            Ok(Some(ServerNotification::Log(log))) => {
                logs.push((log.level, log.logger.clone(), log.text()))
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => panic!("the log messages did not arrive: {logs:?}"),
        }
    }
    assert_eq!(
        logs,
        [
            (
                LogLevel::Info,
                Some("py-peer".to_owned()),
                "starting".to_owned()
            ),
            (
                LogLevel::Warning,
                Some("py-peer".to_owned()),
                "careful".to_owned()
            )
        ]
    );
    client.close().await.expect("closes");
}
