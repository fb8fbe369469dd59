//! A lost server started again (ClientConfig::restart, ADR 0026), over a
//! scripted transport whose `reopen` hands out the next scripted server:
//! what is failed, what waits, what the new server is told, when the
//! client gives up, and a close in the middle. The same with real servers
//! killed mid-call is in `restart_real.rs`.

mod support;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use golem_mcp::memory::{MemoryPeer, MemoryTransport, memory_pair};
use golem_mcp::{
    Client, ClientConfig, Error, Inbound, LogLevel, McpToolset, Outgoing, RestartPolicy,
    ServerNotification, ToolsetConfig, Transport, TransportError,
};
use golem_tool::Toolset;
use serde_json::{Value, json};
use support::memory::{answer, handshake, next_message, reply};
use support::{args, bounded};

/// The servers `reopen` hands out, in order: `None` is a start that fails.
type Script = Arc<Mutex<VecDeque<Option<MemoryTransport>>>>;

/// A memory transport that can be "started again": each `reopen` takes the
/// next scripted connection.
struct Reopening {
    inner: MemoryTransport,
    next: Script,
}

impl Transport for Reopening {
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        self.inner.send(message).await
    }

    async fn recv(&self) -> Result<Inbound, TransportError> {
        self.inner.recv().await
    }

    async fn close(&self) -> Result<(), TransportError> {
        self.inner.close().await
    }

    fn reopen(&self) -> Option<Result<Self, TransportError>> {
        let next = self.next.lock().expect("unpoisoned").pop_front();
        Some(match next {
            Some(Some(inner)) => Ok(Reopening {
                inner,
                next: self.next.clone(),
            }),
            Some(None) | None => Err(TransportError::Other("the server would not start".into())),
        })
    }
}

/// Fast restarts, so that the tests wait for messages, not backoffs.
fn quick(attempts: u32) -> ClientConfig {
    ClientConfig::default().with_restart(
        RestartPolicy::default()
            .with_max_attempts(attempts)
            .with_backoff(Duration::from_millis(1), Duration::from_millis(5)),
    )
}

/// A client over a reopening transport, its first server `first`; the
/// scripted servers after it are pushed onto the returned script.
fn reopening_client(config: ClientConfig) -> (Client, MemoryPeer, Script) {
    let (transport, first) = memory_pair();
    let script: Script = Arc::default();
    let transport = Reopening {
        inner: transport,
        next: script.clone(),
    };
    (Client::with_config(transport, config), first, script)
}

/// A scripted server the next `reopen` hands out.
fn next_server(script: &Script) -> MemoryPeer {
    let (transport, peer) = memory_pair();
    script
        .lock()
        .expect("unpoisoned")
        .push_back(Some(transport));
    peer
}

const CAPABILITIES: fn() -> Value =
    || json!({"tools": {}, "logging": {}, "resources": {"subscribe": true}});

#[tokio::test]
async fn a_lost_server_is_started_again_told_what_the_old_one_was_and_the_call_in_flight_fails_once()
 {
    let (client, mut first, script) = reopening_client(quick(3));
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut first, CAPABILITIES()));
    initialized.expect("the handshake succeeds");
    let mut notifications = client.passive_notifications();

    // Session state a legacy server keeps: the log level, a subscription.
    let (level, _) = tokio::join!(
        client.set_log_level(LogLevel::Warning),
        answer(&mut first, "logging/setLevel", json!({}))
    );
    level.expect("succeeds");
    let uri = "file:///notes.md";
    let (subscribed, _) = tokio::join!(
        client.subscribe_resource(uri),
        answer(&mut first, "resources/subscribe", json!({}))
    );
    let _subscription = subscribed.expect("succeeds");

    // A call in flight when the server goes.
    let in_flight = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("book", &args(json!({"seat": 1}))).await }
    });
    let call = next_message(&mut first).await;
    assert_eq!(call["method"], "tools/call");
    let mut second = next_server(&script);
    drop(first);
    let failed = bounded(in_flight).await.expect("the task");
    assert!(
        matches!(
            &failed,
            Err(Error::Transport {
                source: TransportError::ConnectionClosed,
                ..
            })
        ),
        "{failed:?}"
    );

    // A call made while the server is being started again waits for it.
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("book", &args(json!({"seat": 2}))).await }
    });
    handshake(&mut second, CAPABILITIES()).await;
    let told_level = answer(&mut second, "logging/setLevel", json!({})).await;
    assert_eq!(told_level["params"], json!({"level": "warning"}));
    let told_subscription = answer(&mut second, "resources/subscribe", json!({})).await;
    assert_eq!(told_subscription["params"], json!({"uri": uri}));

    // The lost call is not sent again: the next call is the waiting one.
    let sent = next_message(&mut second).await;
    assert_eq!(sent["method"], "tools/call");
    assert_eq!(sent["params"]["arguments"], json!({"seat": 2}), "{sent}");
    reply(
        &second,
        &sent["id"],
        json!({"content": [{"type": "text", "text": "seat 2"}]}),
    );
    assert_eq!(
        bounded(waiting)
            .await
            .expect("the task")
            .expect("succeeds")
            .text(),
        "seat 2"
    );

    let restarted = bounded(notifications.recv()).await;
    assert!(
        matches!(&restarted, Some(ServerNotification::Restarted { attempt: 1, cause }) if cause.contains("closed")),
        "{restarted:?}"
    );
}

#[tokio::test]
async fn failed_starts_are_retried_and_then_given_up_with_the_streams_ended() {
    let (client, mut first, script) = reopening_client(quick(2));
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut first, CAPABILITIES()));
    initialized.expect("the handshake succeeds");
    let mut notifications = client.passive_notifications();
    // The first attempt fails; the second starts a server that refuses the
    // handshake (its connection ends at once).
    script.lock().expect("unpoisoned").push_back(None);
    let refusing = next_server(&script);
    drop(refusing);
    drop(first);

    let abandoned = bounded(notifications.recv()).await;
    match &abandoned {
        Some(ServerNotification::RestartAbandoned {
            attempts,
            cause,
            error,
        }) => {
            assert_eq!(*attempts, 2);
            assert!(cause.contains("closed"), "{cause}");
            assert!(error.contains("closed the connection"), "{error}");
        }
        other => panic!("expected the restarts given up, got {other:?}"),
    }
    assert_eq!(
        bounded(notifications.recv()).await,
        None,
        "the stream ends after"
    );
    // Later calls fail as the first connection ended.
    let later = bounded(client.call_tool("book", &args(json!({})))).await;
    assert!(
        matches!(
            &later,
            Err(Error::Transport {
                source: TransportError::ConnectionClosed,
                ..
            })
        ),
        "{later:?}"
    );
}

#[tokio::test]
async fn closing_during_a_restart_ends_the_new_server_and_the_waiting_calls() {
    let (client, mut first, script) = reopening_client(quick(3));
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut first, CAPABILITIES()));
    initialized.expect("the handshake succeeds");
    let mut second = next_server(&script);
    drop(first);
    // The new server gets the probe and never answers.
    let probe = next_message(&mut second).await;
    assert_eq!(probe["method"], "server/discover");
    let waiting = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("book", &args(json!({}))).await }
    });
    bounded(client.close()).await.expect("the task");
    let outcome = bounded(waiting).await.expect("the task");
    assert!(matches!(&outcome, Err(Error::Closed { .. })), "{outcome:?}");
    // The half-started server is let go: its connection ends.
    assert_eq!(bounded(second.recv()).await, None);
}

#[tokio::test]
async fn a_toolset_lists_the_restarted_servers_tools() {
    let (client, mut first, script) = reopening_client(quick(3));
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut first, CAPABILITIES()));
    initialized.expect("the handshake succeeds");
    let tool = |name: &str| json!({"name": name, "inputSchema": {"type": "object"}});
    let (toolset, _) = tokio::join!(
        McpToolset::<()>::new(&client, ToolsetConfig::default()),
        answer(&mut first, "tools/list", json!({"tools": [tool("old")]}))
    );
    let toolset = toolset.expect("succeeds");
    let names = |toolset: &McpToolset<()>| -> Vec<String> {
        toolset
            .tools()
            .iter()
            .map(|tool| tool.name().to_owned())
            .collect()
    };
    assert_eq!(names(&toolset), ["old"]);

    let mut second = next_server(&script);
    drop(first);
    handshake(&mut second, CAPABILITIES()).await;
    answer(&mut second, "tools/list", json!({"tools": [tool("new")]})).await;
    let relisted = support::polled(async || (names(&toolset) == ["new"]).then_some(())).await;
    assert!(relisted.is_some(), "the toolset kept {:?}", names(&toolset));
}

#[tokio::test]
async fn a_transport_that_cannot_start_its_server_again_ends_as_without_a_policy() {
    let (transport, mut first) = memory_pair();
    // The default policy: giving up must not wait out its backoffs.
    let client = Client::with_config(
        transport,
        ClientConfig::default().with_restart(RestartPolicy::default()),
    );
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut first, CAPABILITIES()));
    initialized.expect("the handshake succeeds");
    let mut notifications = client.passive_notifications();
    drop(first);
    let abandoned = bounded(notifications.recv()).await;
    assert!(
        matches!(&abandoned, Some(ServerNotification::RestartAbandoned { attempts: 0, error, .. }) if error.contains("cannot start")),
        "{abandoned:?}"
    );
    let later = bounded(client.call_tool("book", &args(json!({})))).await;
    assert!(matches!(&later, Err(Error::Transport { .. })), "{later:?}");
}

#[tokio::test]
async fn a_restarted_server_that_refuses_a_subscription_is_used_all_the_same() {
    let (client, mut first, script) = reopening_client(quick(3));
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut first, CAPABILITIES()));
    initialized.expect("the handshake succeeds");
    let uri = "file:///gone.md";
    let (subscribed, _) = tokio::join!(
        client.subscribe_resource(uri),
        answer(&mut first, "resources/subscribe", json!({}))
    );
    let _subscription = subscribed.expect("subscribed");
    let mut second = next_server(&script);
    drop(first);
    handshake(&mut second, CAPABILITIES()).await;
    // The resource is gone on the new server: it refuses.
    let again = next_message(&mut second).await;
    assert_eq!(again["method"], "resources/subscribe");
    second.send(&json!({"jsonrpc": "2.0", "id": again["id"],
        "error": {"code": -32002, "message": "Resource not found"}}));
    let call = tokio::spawn({
        let client = client.clone();
        async move { client.call_tool("book", &args(json!({}))).await }
    });
    let sent = next_message(&mut second).await;
    assert_eq!(sent["method"], "tools/call", "{sent}");
    reply(
        &second,
        &sent["id"],
        json!({"content": [{"type": "text", "text": "ok"}]}),
    );
    let outcome = bounded(call).await.expect("the task");
    assert_eq!(
        outcome.expect("the restarted server is in use").text(),
        "ok"
    );
}

#[tokio::test]
async fn a_restarted_server_of_another_revision_is_refused() {
    let (client, mut first, script) = reopening_client(quick(1));
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut first, CAPABILITIES()));
    initialized.expect("the handshake succeeds");
    let mut notifications = client.passive_notifications();
    let mut second = next_server(&script);
    drop(first);
    let initialize = support::memory::refuse_probe(&mut second).await;
    assert_eq!(initialize["method"], "initialize");
    second.send(
        &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": "2025-06-18",
            "capabilities": CAPABILITIES(),
            "serverInfo": {"name": "scripted", "version": "2"}
        }}),
    );
    let abandoned = bounded(notifications.recv()).await;
    match &abandoned {
        Some(ServerNotification::RestartAbandoned {
            attempts: 1, error, ..
        }) => assert!(
            error.contains("speaks protocol 2025-06-18, the first spoke"),
            "{error}"
        ),
        other => panic!("expected the restart refused, got {other:?}"),
    }
    // The refused server is let go.
    loop {
        match bounded(second.recv()).await {
            None => break,
            Some(message) => assert_eq!(message["method"], "notifications/initialized"),
        }
    }
}

#[tokio::test]
async fn a_listing_is_not_continued_on_a_restarted_server() {
    let (client, mut first, script) = reopening_client(quick(3));
    let (initialized, _) = tokio::join!(client.initialize(), handshake(&mut first, CAPABILITIES()));
    initialized.expect("the handshake succeeds");
    let listing = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    let page = next_message(&mut first).await;
    assert_eq!(page["method"], "tools/list");
    let mut second = next_server(&script);
    // The first page's cursor, and the server gone right after it.
    reply(
        &first,
        &page["id"],
        json!({"tools": [{"name": "a", "inputSchema": {"type": "object"}}], "nextCursor": "page-2"}),
    );
    drop(first);
    handshake(&mut second, CAPABILITIES()).await;
    let listed = bounded(listing).await.expect("the task");
    assert!(
        matches!(&listed, Err(Error::Transport { .. })),
        "{listed:?}"
    );
    // The new server is never asked for the old server's page.
    let after = tokio::spawn({
        let client = client.clone();
        async move { client.list_tools().await }
    });
    let asked = next_message(&mut second).await;
    assert_eq!(asked["method"], "tools/list");
    assert_eq!(asked["params"].get("cursor"), None, "{asked}");
    reply(&second, &asked["id"], json!({"tools": []}));
    assert!(
        bounded(after)
            .await
            .expect("the task")
            .expect("lists")
            .is_empty()
    );
}

#[tokio::test]
async fn a_server_lost_before_its_first_handshake_ends_the_streams_as_without_a_policy() {
    let (client, mut first, _script) = reopening_client(quick(3));
    let mut notifications = client.passive_notifications();
    let initializing = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await.map(|_| ()) }
    });
    let probe = next_message(&mut first).await;
    assert_eq!(probe["method"], "server/discover");
    drop(first);
    let initialized = bounded(initializing).await.expect("the task");
    assert!(
        matches!(&initialized, Err(Error::Transport { .. })),
        "{initialized:?}"
    );
    // Nothing is restarted before a first handshake: the stream ends.
    assert_eq!(bounded(notifications.recv()).await, None);
}

#[tokio::test]
async fn the_prompts_kept_from_the_lost_server_are_listed_again() {
    let (client, mut first, script) = reopening_client(quick(3));
    let capabilities = json!({"prompts": {}});
    let (initialized, _) = tokio::join!(
        client.initialize(),
        handshake(&mut first, capabilities.clone())
    );
    initialized.expect("the handshake succeeds");
    let mut notifications = client.passive_notifications();
    let prompts = json!({"prompts": [{"name": "greet"}]});
    let (listed, _) = tokio::join!(
        client.list_prompts(),
        answer(&mut first, "prompts/list", prompts.clone())
    );
    assert_eq!(listed.expect("lists").len(), 1);
    let mut second = next_server(&script);
    drop(first);
    handshake(&mut second, capabilities).await;
    let restarted = bounded(notifications.recv()).await;
    assert!(
        matches!(restarted, Some(ServerNotification::Restarted { .. })),
        "{restarted:?}"
    );
    // The list kept from the lost server is not trusted: listed again first.
    let getting = tokio::spawn({
        let client = client.clone();
        async move { client.get_prompt("greet", &json!({})).await }
    });
    answer(&mut second, "prompts/list", prompts).await;
    answer(&mut second, "prompts/get", json!({"messages": []})).await;
    bounded(getting)
        .await
        .expect("the task")
        .expect("the prompt");
}
