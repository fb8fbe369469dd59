//! Subscriptions and caching against the official Python SDK (`mcp` 2.3,
//! `peers/python/modern_listen_server.py`), which serves
//! `subscriptions/listen` and `ttlMs` in the 2026-07-28 era, over stdio
//! and streamable HTTP: a tool added at run time reaches an `McpToolset`,
//! a resource subscription hears its updates, and a second listing or read
//! within the TTL sends nothing. A missing peer fails the test
//! (`scripts/install-peers.sh` installs it).
#![cfg(feature = "http")]

mod support;

use std::collections::HashMap;
use std::process::Command;
use std::sync::{Arc, Mutex};

use golem_mcp::{
    Client, Era, HttpConfig, HttpTransport, McpToolset, Observed, ServerNotification, StdioConfig,
    StdioTransport, ToolsetConfig, Transport, WireEvent,
};
use golem_tool::Toolset;
use support::{Peer, free_port, peer, peer_bounded, polled, raw, start_peer};

const SCRIPT: &str = "python/modern_listen_server.py";

fn python() -> String {
    peer(".venv/bin/python").to_string_lossy().into_owned()
}

/// How many requests of each method the client sent.
#[derive(Clone, Default)]
struct Sent(Arc<Mutex<HashMap<String, usize>>>);

impl Sent {
    fn of(&self, method: &str) -> usize {
        let sent = self.0.lock().expect("not poisoned");
        sent.get(method).copied().unwrap_or(0)
    }

    fn observing<T: Transport>(&self, transport: T) -> impl Transport {
        let sent = self.clone();
        Observed::new(transport, move |event: WireEvent<'_>| {
            if let WireEvent::Sent(message) = event
                && let Some(method) = message.method()
            {
                *sent
                    .0
                    .lock()
                    .expect("not poisoned")
                    .entry(method.to_owned())
                    .or_default() += 1;
            }
        })
    }
}

/// The two ways to reach the peer: over stdio, and over HTTP (the process
/// kept alive by the returned `Peer`).
fn clients(ttl_ms: u32) -> Vec<(&'static str, Client, Sent, Option<Peer>)> {
    let ttl = ttl_ms.to_string();
    let sent = Sent::default();
    let stdio = StdioTransport::spawn(StdioConfig {
        args: vec![
            peer(SCRIPT).to_string_lossy().into_owned(),
            "--ttl-ms".into(),
            ttl.clone(),
        ],
        ..StdioConfig::new(python())
    })
    .expect("spawns");
    let stdio = ("stdio", Client::new(sent.observing(stdio)), sent, None);
    let port = free_port();
    let mut command = Command::new(python());
    command
        .arg(peer(SCRIPT))
        .args(["--http", "--port", &port.to_string(), "--ttl-ms", &ttl]);
    let server = start_peer(command, port);
    let sent = Sent::default();
    let http = HttpTransport::new(HttpConfig::new(&server.url)).expect("valid config");
    let http = (
        "http",
        Client::new(sent.observing(http)),
        sent,
        Some(server),
    );
    vec![stdio, http]
}

async fn modern(client: &Client) {
    let server = peer_bounded(client.initialize()).await.expect("connects");
    assert_eq!(server.era(), Era::Modern);
}

async fn call(client: &Client, tool: &str, arguments: &str) -> String {
    let result = peer_bounded(client.call_tool(tool, &raw(arguments)))
        .await
        .unwrap_or_else(|error| panic!("{tool}: {error}"));
    assert!(!result.is_error, "{tool}: {}", result.text());
    result.text()
}

#[tokio::test]
async fn a_tool_added_at_run_time_reaches_the_toolset_of_a_modern_server() {
    for (transport, client, _, _server) in clients(0) {
        modern(&client).await;
        let toolset = peer_bounded(McpToolset::<()>::new(&client, ToolsetConfig::default()))
            .await
            .expect("lists");
        assert!(!toolset.tools().iter().any(|tool| tool.name() == "late"));
        let mut notifications = client.notifications();
        // A resource subscription returns once the listen (which now asks
        // for the list changes too) is acknowledged: a change announced
        // before the server has the stream open would not reach it.
        let _note = peer_bounded(client.subscribe_resource("memo://note"))
            .await
            .expect("acknowledged");
        assert_eq!(
            call(&client, "add_tool", r#"{"name":"late"}"#).await,
            "added late"
        );
        assert_eq!(
            peer_bounded(notifications.recv()).await,
            Some(ServerNotification::ToolsListChanged),
            "{transport}"
        );
        let listed = polled(async || {
            toolset
                .tools()
                .iter()
                .any(|tool| tool.name() == "late")
                .then_some(())
        })
        .await;
        assert!(
            listed.is_some(),
            "{transport}: the new tool reached the toolset"
        );
        assert_eq!(call(&client, "late", "{}").await, "late here");
        peer_bounded(client.close()).await.expect("closes");
    }
}

#[tokio::test]
async fn a_resource_subscription_hears_its_updates_from_a_modern_server() {
    for (transport, client, sent, _server) in clients(0) {
        modern(&client).await;
        let mut subscription = peer_bounded(client.subscribe_resource("memo://note"))
            .await
            .unwrap_or_else(|error| panic!("{transport}: {error}"));
        assert_eq!(sent.of("resources/subscribe"), 0, "{transport}");
        assert_eq!(sent.of("subscriptions/listen"), 1, "{transport}");
        call(&client, "touch", r#"{"uri":"memo://note"}"#).await;
        assert!(peer_bounded(subscription.updated()).await, "{transport}");
        peer_bounded(subscription.unsubscribe())
            .await
            .expect("unsubscribes");
        peer_bounded(client.close()).await.expect("closes");
    }
}

#[tokio::test]
async fn a_second_listing_or_read_within_the_ttl_sends_nothing() {
    for (transport, client, sent, _server) in clients(60_000) {
        modern(&client).await;
        let first = peer_bounded(client.list_tools()).await.expect("lists");
        let second = peer_bounded(client.list_tools()).await.expect("lists");
        assert_eq!(first.len(), second.len());
        assert_eq!(sent.of("tools/list"), 1, "{transport}");
        let read = peer_bounded(client.read_resource("memo://note"))
            .await
            .expect("reads");
        let again = peer_bounded(client.read_resource("memo://note"))
            .await
            .expect("reads");
        assert_eq!(read.text().as_deref(), Some("note 1"), "{transport}");
        assert_eq!(again.text().as_deref(), Some("note 1"), "{transport}: kept");
        assert_eq!(sent.of("resources/read"), 1, "{transport}");
        peer_bounded(client.close()).await.expect("closes");
    }
}

#[tokio::test]
async fn without_a_ttl_every_listing_is_sent() {
    for (transport, client, sent, _server) in clients(0) {
        modern(&client).await;
        peer_bounded(client.list_tools()).await.expect("lists");
        peer_bounded(client.list_tools()).await.expect("lists");
        assert_eq!(sent.of("tools/list"), 2, "{transport}");
        peer_bounded(client.close()).await.expect("closes");
    }
}
