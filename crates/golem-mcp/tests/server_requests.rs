//! The client answering the server: handlers for sampling and elicitation,
//! roots, notifications, against a scripted peer (the faults real servers
//! cannot be made to produce). `everything_handlers.rs` runs the same
//! handlers against the reference server.

mod support;

use golem_mcp::memory::{MemoryPeer, memory_pair};
use golem_mcp::{
    Client, ClientConfig, CreateMessageRequest, CreateMessageResult, ElicitationRequest,
    ElicitationResponse, HandlerError, LATEST_PROTOCOL_VERSION, LogLevel, RequestContext, Root,
    ServerNotification,
};
use serde_json::{Map, Value, json};
use support::memory::next_message;
use support::{Gate, PATIENCE};

/// The next message that is not a notification.
async fn next_answer(peer: &mut MemoryPeer) -> Value {
    loop {
        let message = next_message(peer).await;
        if message.get("id").is_some() {
            return message;
        }
    }
}

/// A client with `config`, initialized against the peer; returns the
/// `initialize` request it sent.
async fn connected(config: ClientConfig) -> (Client, MemoryPeer, Value) {
    support::memory::connected_with(config, json!({})).await
}

fn sampling_request(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "sampling/createMessage", "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hello"}}],
        "maxTokens": 10}})
}

fn echo_model() -> ClientConfig {
    ClientConfig::default().with_sampling(|request: CreateMessageRequest, _| async move {
        let golem_mcp::SamplingContent::Text { text } = &request.messages[0].content[0] else {
            return Err(HandlerError::invalid_params("text only"));
        };
        Ok(CreateMessageResult::text(
            "echo-model",
            format!("you said {text}"),
        ))
    })
}

#[tokio::test]
async fn initialize_announces_exactly_the_registered_capabilities() {
    let (_, _, plain) = connected(ClientConfig::default()).await;
    assert_eq!(plain["params"]["capabilities"], json!({}));
    let config = echo_model()
        .with_elicitation(|_, _| async { Ok(ElicitationResponse::Decline) })
        .with_roots(vec![]);
    let (_, _, full) = connected(config).await;
    assert_eq!(
        full["params"]["capabilities"],
        json!({"sampling": {}, "elicitation": {"form": {}}, "roots": {"listChanged": true}})
    );
}

#[tokio::test]
async fn sampling_is_answered_by_the_handler_and_unregistered_requests_are_refused() {
    let (_client, mut peer, _) = connected(echo_model()).await;
    peer.send(&sampling_request(json!("s-1")));
    let answer = next_answer(&mut peer).await;
    assert_eq!(answer["id"], "s-1");
    assert_eq!(
        answer["result"],
        json!({"role": "assistant", "content": {"type": "text", "text": "you said hello"},
            "model": "echo-model", "stopReason": "endTurn"})
    );
    peer.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "elicitation/create",
        "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}}),
    );
    assert_eq!(next_answer(&mut peer).await["error"]["code"], -32601);
    peer.send(&json!({"jsonrpc": "2.0", "id": 8, "method": "roots/list"}));
    assert_eq!(next_answer(&mut peer).await["error"]["code"], -32601);
}

#[tokio::test]
async fn malformed_params_get_invalid_params_and_the_client_carries_on() {
    let (client, mut peer, _) = connected(echo_model()).await;
    peer.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "sampling/createMessage",
        "params": {"messages": "not a list"}}),
    );
    let answer = next_answer(&mut peer).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    // The client still works.
    let (pinged, _) = tokio::join!(client.ping(), async {
        let ping = next_answer(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}}));
    });
    pinged.expect("still connected");
}

#[tokio::test]
async fn a_failing_or_panicking_handler_answers_with_an_error_and_the_client_lives_on() {
    let config =
        ClientConfig::default().with_sampling(|request: CreateMessageRequest, _| async move {
            if request.max_tokens == 1 {
                panic!("the handler panics");
            }
            Err(HandlerError::rejected("the user said no"))
        });
    let (client, mut peer, _) = connected(config).await;
    peer.send(&sampling_request(json!(1)));
    let refused = next_answer(&mut peer).await;
    assert_eq!(
        refused["error"],
        json!({"code": -1, "message": "the user said no"})
    );
    let mut panicking = sampling_request(json!(2));
    panicking["params"]["maxTokens"] = json!(1);
    peer.send(&panicking);
    let failed = next_answer(&mut peer).await;
    assert_eq!(failed["id"], 2);
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    let (pinged, _) = tokio::join!(client.ping(), async {
        let ping = next_answer(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}}));
    });
    pinged.expect("the client survived the panic");
}

/// Opens its gate when dropped: tells whether a handler's future was
/// dropped.
struct DropFlag(Gate);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.open();
    }
}

#[tokio::test]
async fn a_long_handler_can_call_back_into_the_client_and_the_server_can_cancel_it() {
    let dropped = Gate::default();
    let flag = dropped.clone();
    let config = ClientConfig::default().with_sampling(
        move |request: CreateMessageRequest, context: RequestContext| {
            let flag = flag.clone();
            async move {
                if request.max_tokens == 99 {
                    // Runs until cancelled.
                    let _flag = DropFlag(flag);
                    std::future::pending::<()>().await;
                }
                let client = context.client().expect("the client is alive");
                let tools = client
                    .list_tools()
                    .await
                    .map_err(|e| HandlerError::internal(e.to_string()))?;
                Ok(CreateMessageResult::text(
                    "m",
                    format!("{} tools", tools.len()),
                ))
            }
        },
    );
    let (client, mut peer, _) = connected(config).await;
    // A handler that calls back into the same client: no deadlock.
    peer.send(&sampling_request(json!("cb")));
    let list = next_answer(&mut peer).await;
    assert_eq!(list["method"], "tools/list");
    peer.send(&json!({"jsonrpc": "2.0", "id": list["id"], "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}}));
    let answer = next_answer(&mut peer).await;
    assert_eq!(answer["id"], "cb");
    assert_eq!(answer["result"]["content"]["text"], "1 tools");
    // A handler that never ends, cancelled by the server: it is dropped and
    // nothing is answered; meanwhile the client serves calls.
    let mut forever = sampling_request(json!(42));
    forever["params"]["maxTokens"] = json!(99);
    peer.send(&forever);
    let (pinged, _) = tokio::join!(client.ping(), async {
        let ping = next_answer(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}}));
    });
    pinged.expect("calls go on while a handler runs");
    assert!(!dropped.is_open(), "the handler still runs");
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 42}}));
    tokio::time::timeout(PATIENCE, dropped.opened())
        .await
        .expect("the cancelled handler was dropped");
    // No answer to the cancelled request: the next message is the ping's.
    let (pinged, next_message) = tokio::join!(client.ping(), async {
        let message = next_answer(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": {}}));
        message
    });
    pinged.expect("pinged");
    assert_eq!(next_message["method"], "ping", "{next_message}");
}

#[tokio::test]
async fn an_elicited_form_gets_its_defaults_and_a_bad_schema_or_url_is_refused() {
    let config =
        ClientConfig::default().with_elicitation(|request: ElicitationRequest, _| async move {
            let ElicitationRequest::Form { form, .. } = request else {
                return Ok(ElicitationResponse::Cancel);
            };
            assert_eq!(form.fields[0].name, "name");
            let mut content = Map::new();
            content.insert("name".into(), json!("Ada"));
            Ok(ElicitationResponse::Accept(content))
        });
    let (_client, mut peer, _) = connected(config).await;
    peer.send_raw(r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"who?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer","default":36}},"required":["name"]}}}"#);
    let answer = next_answer(&mut peer).await;
    assert_eq!(
        answer["result"],
        json!({"action": "accept", "content": {"name": "Ada", "age": 36}})
    );
    peer.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "elicitation/create", "params": {
        "message": "?", "requestedSchema": {"type": "object", "properties": {"nested": {"type": "object"}}}}}));
    let refused = next_answer(&mut peer).await;
    assert_eq!(refused["error"]["code"], -32602);
    let reason = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        reason.contains("nested") && reason.contains("restricted subset"),
        "{reason}"
    );
    peer.send(
        &json!({"jsonrpc": "2.0", "id": 3, "method": "elicitation/create", "params": {
        "mode": "url", "message": "go", "elicitationId": "e", "url": "javascript:alert(1)"}}),
    );
    assert_eq!(next_answer(&mut peer).await["error"]["code"], -32602);
}

#[tokio::test]
async fn roots_are_listed_and_a_change_is_announced() {
    let config = ClientConfig::default().with_roots(vec![Root::new("file:///a").with_name("a")]);
    let (client, mut peer, _) = connected(config).await;
    peer.send(&json!({"jsonrpc": "2.0", "id": "r", "method": "roots/list"}));
    assert_eq!(
        next_answer(&mut peer).await["result"],
        json!({"roots": [{"uri": "file:///a", "name": "a"}]})
    );
    client
        .set_roots(vec![Root::new("file:///b")])
        .await
        .expect("changed");
    assert_eq!(
        next_message(&mut peer).await["method"],
        "notifications/roots/list_changed"
    );
    peer.send(&json!({"jsonrpc": "2.0", "id": "r2", "method": "roots/list"}));
    assert_eq!(
        next_answer(&mut peer).await["result"],
        json!({"roots": [{"uri": "file:///b"}]})
    );
    let (unrooted, _, _) = connected(ClientConfig::default()).await;
    assert!(
        unrooted.set_roots(vec![]).await.is_err(),
        "no roots were offered"
    );
}

#[tokio::test]
async fn a_request_before_the_handshake_is_answered_with_an_error_not_a_hang() {
    let (transport, mut peer) = memory_pair();
    let client = Client::with_config(transport, ClientConfig::default().with_roots(vec![]));
    let initializing = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await.map(|_| ()) }
    });
    let initialize = support::memory::refuse_probe(&mut peer).await;
    peer.send(&json!({"jsonrpc": "2.0", "id": "early", "method": "roots/list"}));
    let early = next_answer(&mut peer).await;
    assert_eq!(early["id"], "early");
    assert_eq!(early["error"]["code"], -32600, "{early}");
    peer.send(
        &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
        "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}}}),
    );
    initializing.await.expect("joined").expect("initialized");
}

#[tokio::test]
async fn notifications_reach_subscribers_and_a_log_flood_stays_bounded() {
    let (client, mut peer, _) = connected(ClientConfig::default()).await;
    let mut notifications = client.notifications();
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "file:///x"}}));
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "logger": "db", "data": "slow"}}));
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(
            tokio::time::timeout(PATIENCE, notifications.recv())
                .await
                .expect("in time")
                .expect("a notification"),
        );
    }
    assert_eq!(seen[0], ServerNotification::ToolsListChanged);
    assert_eq!(
        seen[1],
        ServerNotification::ResourceUpdated {
            uri: "file:///x".into()
        }
    );
    let ServerNotification::Log(log) = &seen[2] else {
        panic!("expected a log message, got {:?}", seen[2]);
    };
    assert_eq!(
        (log.level, log.logger.as_deref(), log.text().as_str()),
        (LogLevel::Warning, Some("db"), "slow")
    );
    // 10,000 log messages while nobody reads: the subscriber keeps at most
    // its queue and then sees the newest; the client still answers.
    for n in 0..10_000 {
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "debug", "data": n}}));
    }
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}));
    let last = tokio::time::timeout(PATIENCE, async {
        loop {
            match notifications.recv().await {
                Some(ServerNotification::PromptsListChanged) => return true,
                Some(_) => {}
                None => return false,
            }
        }
    })
    .await
    .expect("the flood drains in time");
    assert!(last, "the last notification arrived after the flood");
    let (logged, _) = tokio::join!(client.set_log_level(LogLevel::Error), async {
        let request = next_answer(&mut peer).await;
        assert_eq!(request["method"], "logging/setLevel");
        assert_eq!(request["params"], json!({"level": "error"}));
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}));
    });
    logged.expect("level set");
}

/// A handler whose call panics before it returns a future.
struct PanicsAtOnce;

impl golem_mcp::SamplingHandler for PanicsAtOnce {
    fn create_message(
        &self,
        _request: CreateMessageRequest,
        _context: RequestContext,
    ) -> golem_mcp::HandlerFuture<CreateMessageResult> {
        panic!("the handler panics before it has a future");
    }
}

#[tokio::test]
async fn a_handler_that_panics_before_its_future_does_not_take_the_client_down() {
    let (client, mut peer, _) =
        connected(ClientConfig::default().with_sampling(PanicsAtOnce)).await;
    peer.send(&sampling_request(json!("p")));
    let failed = next_answer(&mut peer).await;
    assert_eq!(failed["id"], "p");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    let (pinged, _) = tokio::join!(client.ping(), async {
        let ping = next_answer(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": ping["id"], "result": {}}));
    });
    pinged.expect("the inbound task lives on");
}

#[tokio::test]
async fn subscriptions_end_when_the_client_closes_or_the_server_goes() {
    let (client, peer, _) = connected(ClientConfig::default()).await;
    let mut before = client.notifications();
    client.close().await.expect("closes");
    let ended = tokio::time::timeout(PATIENCE, before.recv())
        .await
        .expect("ends rather than waits");
    assert_eq!(ended, None);
    assert_eq!(
        client.notifications().recv().await,
        None,
        "a late subscription has ended too"
    );
    drop(peer);

    let (client, peer, _) = connected(ClientConfig::default()).await;
    let mut notifications = client.notifications();
    drop(peer); // the server goes away
    let ended = tokio::time::timeout(PATIENCE, notifications.recv())
        .await
        .expect("ends rather than waits");
    assert_eq!(ended, None);
}
