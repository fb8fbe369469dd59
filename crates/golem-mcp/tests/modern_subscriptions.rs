//! Subscriptions and caching of the 2026-07-28 era over the in-memory
//! transport, the server scripted message by message, for what real
//! servers do not produce on demand: a listen that ends, an
//! acknowledgment that honours less than was asked, a server that does
//! not serve `subscriptions/listen`, TTLs of every kind, a list change
//! while a result is fresh, a multi-round-trip answer (ADRs 0023, 0024).

mod support;

use golem_mcp::memory::{MemoryPeer, memory_pair};
use golem_mcp::{
    Client, ClientConfig, ElicitationResponse, Era, Error, MODERN_PROTOCOL_VERSION, McpToolset,
    ServerNotification, ToolsetConfig,
};
use golem_tool::Toolset;
use serde_json::{Value, json};
use support::bounded;
use support::memory::{connected, next_message};

/// A client connected to a scripted modern server.
async fn modern(config: ClientConfig) -> (Client, MemoryPeer) {
    let (transport, mut peer) = memory_pair();
    let client = Client::with_config(transport, config);
    let answer = async {
        let probe = next_message(&mut peer).await;
        assert_eq!(probe["method"], "server/discover", "{probe}");
        peer.send(&json!({"jsonrpc": "2.0", "id": probe["id"], "result": {
            "resultType": "complete",
            "supportedVersions": [MODERN_PROTOCOL_VERSION],
            "capabilities": {"tools": {"listChanged": true}, "resources": {"subscribe": true}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}},
            "ttlMs": 0, "cacheScope": "private",
        }}));
    };
    let (connected, ()) = tokio::join!(client.initialize(), answer);
    assert_eq!(connected.expect("connects").era(), Era::Modern);
    (client, peer)
}

/// The next message, which must be a `subscriptions/listen`.
async fn listen_request(peer: &mut MemoryPeer) -> Value {
    let listen = next_message(peer).await;
    assert_eq!(listen["method"], "subscriptions/listen", "{listen}");
    listen
}

/// Acknowledges listen `listen` with `honoured`.
fn acknowledge(peer: &MemoryPeer, listen: &Value, honoured: Value) {
    peer.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": listen["id"]},
                   "notifications": honoured}}),
    );
}

/// A notification of `method` on listen `listen`.
fn on_listen(peer: &MemoryPeer, listen: &Value, method: &str, params: Value) {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/subscriptionId": listen["id"]});
    peer.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
}

fn tools_page(id: &Value, names: &[&str], ttl: Value) -> Value {
    let tools: Vec<Value> = names
        .iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete", "tools": tools, "ttlMs": ttl, "cacheScope": "private"}})
}

/// Lists the tools, answering the request with `names` and `ttl`; returns
/// the names listed.
async fn list_answered(
    client: &Client,
    peer: &mut MemoryPeer,
    names: &[&str],
    ttl: Value,
) -> Vec<String> {
    let answer = async {
        let request = next_message(peer).await;
        assert_eq!(request["method"], "tools/list", "{request}");
        peer.send(&tools_page(&request["id"], names, ttl));
    };
    let (listed, ()) = tokio::join!(bounded(client.list_tools()), answer);
    listed
        .expect("lists")
        .into_iter()
        .map(|tool| tool.name)
        .collect()
}

/// Lists the tools with nothing sent: from the cache. A ping follows, so
/// the next message the server sees proves no `tools/list` went before it.
async fn list_from_cache(client: &Client, peer: &mut MemoryPeer) -> Vec<String> {
    let listed = bounded(client.list_tools()).await.expect("lists");
    let answer = async {
        let ping = next_message(peer).await;
        assert_eq!(
            ping["method"], "server/discover",
            "nothing else was sent: {ping}"
        );
        peer.send(&json!({"jsonrpc": "2.0", "id": ping["id"], "result": {
            "resultType": "complete", "supportedVersions": [MODERN_PROTOCOL_VERSION],
            "capabilities": {}, "ttlMs": 60000, "cacheScope": "public"}}));
    };
    let (pinged, ()) = tokio::join!(bounded(client.ping()), answer);
    pinged.expect("pings");
    listed.into_iter().map(|tool| tool.name).collect()
}

#[tokio::test]
async fn nothing_is_listened_for_until_asked_and_notifications_ask_for_every_list_change() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    // Unasked notifications open nothing: the next message is the ping.
    let _quiet = client.passive_notifications();
    let answer = async {
        let ping = next_message(&mut peer).await;
        assert_eq!(ping["method"], "server/discover", "{ping}");
        peer.send(&json!({"jsonrpc": "2.0", "id": ping["id"], "result": {
            "resultType": "complete", "supportedVersions": [MODERN_PROTOCOL_VERSION],
            "capabilities": {}, "ttlMs": 0, "cacheScope": "public"}}));
    };
    let (pinged, ()) = tokio::join!(bounded(client.ping()), answer);
    pinged.expect("pings");

    let mut notifications = client.notifications();
    let listen = listen_request(&mut peer).await;
    assert_eq!(
        listen["params"]["notifications"],
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
    );
    assert_eq!(
        listen["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        MODERN_PROTOCOL_VERSION
    );
    acknowledge(&peer, &listen, json!({"toolsListChanged": true}));
    on_listen(
        &peer,
        &listen,
        "notifications/tools/list_changed",
        json!({}),
    );
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(ServerNotification::ToolsListChanged)
    );
}

#[tokio::test]
async fn a_listen_the_server_ends_is_opened_again_and_so_is_one_it_cancels() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let mut notifications = client.notifications();
    let first = listen_request(&mut peer).await;
    acknowledge(&peer, &first, json!({"toolsListChanged": true}));
    // A graceful end: the listen's own result.
    peer.send(&json!({"jsonrpc": "2.0", "id": first["id"], "result": {
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/subscriptionId": first["id"]}}}));
    let second = listen_request(&mut peer).await;
    assert_ne!(second["id"], first["id"]);
    assert_eq!(
        second["params"]["notifications"],
        first["params"]["notifications"]
    );
    acknowledge(&peer, &second, json!({"toolsListChanged": true}));
    // On stdio a server ends a listen by cancelling it.
    peer.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": second["id"]}}),
    );
    let third = listen_request(&mut peer).await;
    acknowledge(&peer, &third, json!({"toolsListChanged": true}));
    on_listen(&peer, &third, "notifications/tools/list_changed", json!({}));
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(ServerNotification::ToolsListChanged)
    );
}

#[tokio::test]
async fn a_new_uri_opens_a_new_listen_and_the_old_one_ends_only_once_it_is_acknowledged() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let mut notifications = client.notifications();
    let first = listen_request(&mut peer).await;
    acknowledge(&peer, &first, json!({"toolsListChanged": true}));
    let subscribing = client.subscribe_resource("file:///a");
    let server = async {
        let second = listen_request(&mut peer).await;
        assert_eq!(
            second["params"]["notifications"]["resourceSubscriptions"],
            json!(["file:///a"])
        );
        assert_eq!(second["params"]["notifications"]["toolsListChanged"], true);
        // Until the new one is acknowledged, the old one carries the news.
        on_listen(&peer, &first, "notifications/tools/list_changed", json!({}));
        acknowledge(
            &peer,
            &second,
            json!({"toolsListChanged": true, "resourceSubscriptions": ["file:///a"]}),
        );
        second
    };
    let (subscription, second) = tokio::join!(bounded(subscribing), server);
    let mut subscription = subscription.expect("acknowledged");
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(ServerNotification::ToolsListChanged)
    );
    let cancelled = next_message(&mut peer).await;
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );
    assert_eq!(cancelled["params"]["requestId"], first["id"]);
    on_listen(
        &peer,
        &second,
        "notifications/resources/updated",
        json!({"uri": "file:///a"}),
    );
    assert!(bounded(subscription.updated()).await);

    // Unsubscribing opens a listen without the URI.
    bounded(client.unsubscribe_resource("file:///a"))
        .await
        .expect("unsubscribes");
    let third = listen_request(&mut peer).await;
    assert!(
        third["params"]["notifications"]
            .get("resourceSubscriptions")
            .is_none(),
        "{third}"
    );
}

#[tokio::test]
async fn a_uri_the_acknowledgment_leaves_out_or_a_server_without_listen_is_not_supported() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let subscribing = client.subscribe_resource("file:///secret");
    let server = async {
        let listen = listen_request(&mut peer).await;
        assert_eq!(
            listen["params"]["notifications"],
            json!({"resourceSubscriptions": ["file:///secret"]})
        );
        acknowledge(&peer, &listen, json!({"resourceSubscriptions": []}));
    };
    let (refused, ()) = tokio::join!(bounded(subscribing), server);
    let error = refused.expect_err("left out");
    assert!(matches!(error, Error::NotSupported { .. }), "{error:?}");
    assert!(
        error.to_string().contains("leaves this resource out"),
        "{error}"
    );

    // The listen without the URI has nothing left to ask: it ends.
    let cancelled = next_message(&mut peer).await;
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );

    let subscribing = client.subscribe_resource("file:///b");
    let server = async {
        let listen = listen_request(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": listen["id"],
            "error": {"code": -32601, "message": "Method not found"}}));
    };
    let (refused, ()) = tokio::join!(bounded(subscribing), server);
    let error = refused.expect_err("no listen");
    assert!(matches!(error, Error::NotSupported { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .contains("does not serve subscriptions/listen"),
        "{error}"
    );
}

#[tokio::test]
async fn a_legacy_server_hears_no_listen_and_gets_resources_subscribe() {
    let (client, mut peer) = connected(json!({"resources": {"subscribe": true}})).await;
    let _notifications = client.notifications();
    let subscribing = client.subscribe_resource("file:///a");
    let server = async {
        let request = next_message(&mut peer).await;
        assert_eq!(request["method"], "resources/subscribe", "{request}");
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {}}));
    };
    let (subscribed, ()) = tokio::join!(bounded(subscribing), server);
    subscribed.expect("subscribes");
}

#[tokio::test]
async fn a_result_is_kept_for_its_ttl_and_never_without_one() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    assert_eq!(
        list_answered(&client, &mut peer, &["a"], json!(60000)).await,
        ["a"]
    );
    assert_eq!(list_from_cache(&client, &mut peer).await, ["a"]);

    // A missing, zero or negative TTL keeps nothing (the pages are keyed by
    // method and parameters: resources/list is a list of its own).
    for ttl in [json!(null), json!(0), json!(-1000)] {
        let answer = async {
            let request = next_message(&mut peer).await;
            assert_eq!(request["method"], "resources/list", "{request}");
            peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                "resultType": "complete", "resources": [], "ttlMs": ttl}}));
        };
        let (first, ()) = tokio::join!(bounded(client.list_resources()), answer);
        first.expect("lists");
        let answer = async {
            let request = next_message(&mut peer).await;
            assert_eq!(request["method"], "resources/list", "sent again: {request}");
            peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {
                "resultType": "complete", "resources": []}}));
        };
        let (second, ()) = tokio::join!(bounded(client.list_resources()), answer);
        second.expect("lists");
    }
}

#[tokio::test]
async fn a_list_change_drops_a_fresh_list_at_once() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let mut notifications = client.notifications();
    let listen = listen_request(&mut peer).await;
    acknowledge(&peer, &listen, json!({"toolsListChanged": true}));
    list_answered(&client, &mut peer, &["a"], json!(300000)).await;
    assert_eq!(list_from_cache(&client, &mut peer).await, ["a"]);
    on_listen(
        &peer,
        &listen,
        "notifications/tools/list_changed",
        json!({}),
    );
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(ServerNotification::ToolsListChanged)
    );
    assert_eq!(
        list_answered(&client, &mut peer, &["a", "b"], json!(300000)).await,
        ["a", "b"]
    );
}

#[tokio::test]
async fn an_answer_after_input_is_never_kept() {
    let config = ClientConfig::default()
        .with_elicitation(|_request, _context| async { Ok(ElicitationResponse::Decline) });
    let (client, mut peer) = modern(config).await;
    let read_with_input = async {
        let first = next_message(&mut peer).await;
        assert_eq!(first["method"], "resources/read", "{first}");
        peer.send(&json!({"jsonrpc": "2.0", "id": first["id"], "result": {
            "resultType": "input_required",
            "inputRequests": {"ask": {"method": "elicitation/create", "params": {
                "mode": "form", "message": "Who?",
                "requestedSchema": {"type": "object", "properties": {}}}}},
            "requestState": "s1"}}));
        let retry = next_message(&mut peer).await;
        assert_eq!(retry["params"]["requestState"], "s1", "{retry}");
        peer.send(&json!({"jsonrpc": "2.0", "id": retry["id"], "result": {
            "resultType": "complete", "ttlMs": 60000, "cacheScope": "private",
            "contents": [{"uri": "x:a", "text": "for you"}]}}));
    };
    let (read, ()) = tokio::join!(bounded(client.read_resource("x:a")), read_with_input);
    assert_eq!(read.expect("reads").text().as_deref(), Some("for you"));
    let sent_again = async {
        let request = next_message(&mut peer).await;
        assert_eq!(request["method"], "resources/read", "{request}");
        assert!(request["params"].get("requestState").is_none(), "{request}");
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "resultType": "complete", "ttlMs": 60000, "cacheScope": "private",
            "contents": [{"uri": "x:a", "text": "again"}]}}));
    };
    let (read, ()) = tokio::join!(bounded(client.read_resource("x:a")), sent_again);
    assert_eq!(read.expect("reads").text().as_deref(), Some("again"));
    // That one asked for nothing: it is kept.
    let kept = bounded(client.read_resource("x:a")).await.expect("reads");
    assert_eq!(kept.text().as_deref(), Some("again"));
}

#[tokio::test]
async fn a_toolset_lists_again_only_when_told_or_stale() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let making = McpToolset::<()>::new(&client, ToolsetConfig::default());
    let server = async {
        // The listen and the first listing, in either order.
        let mut listen = Value::Null;
        for _ in 0..2 {
            let request = next_message(&mut peer).await;
            match request["method"].as_str() {
                Some("subscriptions/listen") => {
                    acknowledge(&peer, &request, json!({"toolsListChanged": true}));
                    listen = request;
                }
                Some("tools/list") => {
                    peer.send(&tools_page(&request["id"], &["a"], json!(300000)));
                }
                _ => panic!("unexpected: {request}"),
            }
        }
        listen
    };
    let (toolset, listen) = tokio::join!(bounded(making), server);
    let toolset = toolset.expect("lists");
    // Fresh: asking for the tools sends nothing.
    assert_eq!(toolset.tools().len(), 1);
    assert_eq!(list_from_cache(&client, &mut peer).await, ["a"]);
    // Told: listed again.
    on_listen(
        &peer,
        &listen,
        "notifications/tools/list_changed",
        json!({}),
    );
    let request = next_message(&mut peer).await;
    assert_eq!(request["method"], "tools/list", "{request}");
    // A TTL of 1 ms: stale by the time the toolset is asked again.
    peer.send(&tools_page(&request["id"], &["a", "b"], json!(1)));
    let listed = support::polled(async || (toolset.tools().len() == 2).then_some(())).await;
    assert!(listed.is_some(), "the told listing arrives");
    let stale = async {
        loop {
            toolset.tools();
            if let Ok(message) =
                tokio::time::timeout(std::time::Duration::from_millis(5), peer.recv()).await
            {
                return message.expect("connected");
            }
        }
    };
    let request = bounded(stale).await;
    assert_eq!(request["method"], "tools/list", "{request}");
    peer.send(&tools_page(&request["id"], &["a", "b", "c"], json!(300000)));
    let listed = support::polled(async || (toolset.tools().len() == 3).then_some(())).await;
    assert!(listed.is_some(), "the stale list was replaced");
}
