//! Resources, prompts and completion against a scripted server
//! (in-memory transport): the faults a real server will not show on
//! demand, and the exact messages sent.

mod support;

use std::time::Duration;

use golem_mcp::memory::MemoryPeer;
use golem_mcp::{Client, CompletionRef, Error};
use serde_json::{Value, json};
use support::arguments;
use support::memory::{answer, next_message};

/// What the client sent that the script has not read, without waiting:
/// every send of the client has completed by the time its call returned
/// (the in-memory transport sends at once).
async fn nothing_more_sent(peer: &mut MemoryPeer) {
    if let Ok(Some(message)) = tokio::time::timeout(Duration::ZERO, peer.recv()).await {
        panic!("the client sent {message}");
    }
}

async fn connected() -> (Client, MemoryPeer) {
    support::memory::connected(json!({"resources": {"subscribe": true},
        "prompts": {"listChanged": true}, "completions": {}}))
    .await
}

#[tokio::test]
async fn a_cursor_loop_in_every_list_is_an_error_naming_the_list() {
    let (client, mut peer) = connected().await;
    for (method, field) in [
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
        ("prompts/list", "prompts"),
        ("tools/list", "tools"),
    ] {
        let listing = async {
            match method {
                "resources/list" => client.list_resources().await.map(drop),
                "resources/templates/list" => client.list_resource_templates().await.map(drop),
                "prompts/list" => client.list_prompts().await.map(drop),
                _ => client.list_tools().await.map(drop),
            }
        };
        let (listed, cursors) = tokio::join!(listing, async {
            let mut cursors = Vec::new();
            for next in ["a", "b", "a"] {
                let request =
                    answer(&mut peer, method, json!({field: [], "nextCursor": next})).await;
                cursors.push(request["params"]["cursor"].clone());
            }
            cursors
        });
        let error = listed.expect_err("a loop");
        assert!(
            matches!(&error, Error::CursorLoop { operation, cursor } if operation == method && cursor == "a"),
            "{method}: {error:?}"
        );
        assert_eq!(cursors, [Value::Null, json!("a"), json!("b")], "{method}");
        nothing_more_sent(&mut peer).await;
    }
}

#[tokio::test]
async fn lists_follow_cursors_and_keep_every_field() {
    let (client, mut peer) = connected().await;
    let (listed, _) = tokio::join!(client.list_resources(), async {
        answer(&mut peer, "resources/list", json!({
            "resources": [{"uri": "x:a", "name": "a", "title": "A", "mimeType": "text/plain", "size": 5,
                "annotations": {"priority": 0.5}, "_meta": {"k": 1}}],
            "nextCursor": "2"}))
        .await;
        answer(
            &mut peer,
            "resources/list",
            json!({"resources": [{"uri": "x:b", "name": "b"}]}),
        )
        .await;
    });
    let resources = listed.expect("lists");
    assert_eq!(resources.len(), 2);
    assert_eq!(resources[0].title.as_deref(), Some("A"));
    assert_eq!(resources[0].size, Some(5));
    assert_eq!(
        resources[0].annotations.as_deref().map(|raw| raw.get()),
        Some(r#"{"priority":0.5}"#)
    );
    assert_eq!(resources[1].uri, "x:b");
}

#[tokio::test]
async fn a_read_returns_items_of_other_uris_as_the_server_gave_them() {
    let (client, mut peer) = connected().await;
    let (read, _) = tokio::join!(client.read_resource("x:dir/a b"), async {
        let request = answer(
            &mut peer,
            "resources/read",
            json!({"contents": [
                {"uri": "x:dir/a%20b", "text": "normalized by the server"},
                {"uri": "x:dir/a%20b/child", "text": "an entry"}
            ]}),
        )
        .await;
        assert_eq!(request["params"], json!({"uri": "x:dir/a b"}));
    });
    let read = read.expect("the read succeeds");
    let uris: Vec<&str> = read.contents.iter().map(|item| item.uri()).collect();
    assert_eq!(uris, ["x:dir/a%20b", "x:dir/a%20b/child"]);
    assert_eq!(read.contents[1].text(), Some("an entry"));
}

#[tokio::test]
async fn a_blob_that_is_not_base64_fails_when_decoded() {
    let (client, mut peer) = connected().await;
    let (read, _) = tokio::join!(client.read_resource("x:bin"), async {
        answer(
            &mut peer,
            "resources/read",
            json!({"contents": [
                {"uri": "x:bin", "mimeType": "image/png", "blob": "%%% not base64 %%%"}
            ]}),
        )
        .await;
    });
    let read = read.expect("the read itself succeeds; the blob stays base64 until asked");
    let error = read.contents[0].decode().expect_err("not base64");
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
    assert!(error.to_string().contains("x:bin"), "{error}");
}

#[tokio::test]
async fn a_content_item_with_neither_text_nor_blob_is_an_invalid_answer() {
    let (client, mut peer) = connected().await;
    let (read, _) = tokio::join!(client.read_resource("x:a"), async {
        answer(
            &mut peer,
            "resources/read",
            json!({"contents": [{"uri": "x:a"}]}),
        )
        .await;
    });
    let error = read.expect_err("neither");
    assert!(matches!(error, Error::InvalidResponse { .. }), "{error:?}");
}

fn prompt_list() -> Value {
    json!({"prompts": [{"name": "greet", "arguments": [
        {"name": "who", "required": true}, {"name": "tone"}]}]})
}

#[tokio::test]
async fn a_missing_or_unknown_prompt_argument_is_refused_before_sending() {
    let (client, mut peer) = connected().await;
    // No list kept yet: get_prompt fetches it, then refuses.
    let given = arguments(&[("tone", "warm"), ("colour", "red")]);
    let (got, _) = tokio::join!(
        client.get_prompt("greet", &given),
        answer(&mut peer, "prompts/list", prompt_list())
    );
    let error = got.expect_err("refused");
    assert!(matches!(error, Error::InvalidRequest { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "mcp: prompts/get greet: not sent: missing required argument \"who\"; unknown \
         argument \"colour\"; the prompt takes who (required), tone"
    );
    nothing_more_sent(&mut peer).await;

    // A refusal against the kept list is confirmed with a fresh one: the
    // server may have changed its prompts without saying so.
    let given = arguments(&[]);
    let (got, _) = tokio::join!(
        client.get_prompt("greet", &given),
        answer(&mut peer, "prompts/list", prompt_list())
    );
    assert!(got.expect_err("refused").to_string().contains("\"who\""));
    nothing_more_sent(&mut peer).await;

    let given = arguments(&[]);
    let (got, _) = tokio::join!(
        client.get_prompt("farewell", &given),
        answer(&mut peer, "prompts/list", prompt_list())
    );
    let error = got.expect_err("unknown prompt");
    assert!(
        error
            .to_string()
            .contains("no prompt named \"farewell\"; it offers: greet"),
        "{error}"
    );
}

#[tokio::test]
async fn get_prompt_uses_the_kept_list_until_the_server_says_it_changed() {
    let (client, mut peer) = connected().await;
    let (listed, _) = tokio::join!(
        client.list_prompts(),
        answer(&mut peer, "prompts/list", prompt_list())
    );
    listed.expect("lists");
    // The kept list is fresh: only prompts/get is sent, arguments as given.
    let given = arguments(&[("who", "Ada")]);
    let (got, request) = tokio::join!(
        client.get_prompt("greet", &given),
        answer(
            &mut peer,
            "prompts/get",
            json!({"messages": [
                {"role": "assistant", "content": {"type": "image", "data": "aGk=", "mimeType": "image/png"}},
                {"role": "user", "content": {"type": "resource_link", "uri": "x:doc", "name": "doc"}},
                {"role": "user", "content": {"type": "audio", "data": "aGk=", "mimeType": "audio/wav"}}
            ]})
        )
    );
    assert_eq!(
        request["params"],
        json!({"name": "greet", "arguments": {"who": "Ada"}})
    );
    let got = got.expect("gets");
    assert_eq!(got.messages.len(), 3);
    assert!(matches!(
        got.messages[0].content,
        golem_mcp::Content::Image { .. }
    ));
    assert!(matches!(
        got.messages[1].content,
        golem_mcp::Content::ResourceLink { .. }
    ));
    assert!(matches!(
        got.messages[2].content,
        golem_mcp::Content::Audio { .. }
    ));

    // The server changes its prompts: the next get lists them again first,
    // and the new required argument is enforced.
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}));
    // Wait until the client has read the notification (a request answered
    // after it was sent proves it).
    let (pinged, _) = tokio::join!(client.ping(), answer(&mut peer, "ping", json!({})));
    pinged.expect("pings");
    let given = arguments(&[("who", "Ada")]);
    let (got, _) = tokio::join!(
        client.get_prompt("greet", &given),
        answer(
            &mut peer,
            "prompts/list",
            json!({"prompts": [{"name": "greet", "arguments": [
            {"name": "who", "required": true}, {"name": "when", "required": true}]}]})
        )
    );
    assert!(
        got.expect_err("now needs when")
            .to_string()
            .contains("missing required argument \"when\"")
    );
    nothing_more_sent(&mut peer).await;
}

#[tokio::test]
async fn a_subscription_gets_the_updates_of_its_uri_only() {
    let (client, mut peer) = connected().await;
    let (subscribed, request) = tokio::join!(
        client.subscribe_resource("x:watched"),
        answer(&mut peer, "resources/subscribe", json!({}))
    );
    assert_eq!(request["params"], json!({"uri": "x:watched"}));
    let mut subscription = subscribed.expect("subscribes");
    let mut everything = client.notifications();
    for uri in ["x:other", "x:watched"] {
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": uri}}));
    }
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}));
    assert!(
        tokio::time::timeout(Duration::from_secs(5), subscription.updated())
            .await
            .expect("in time")
    );
    // The stream still carries every notification, typed.
    let mut seen = Vec::new();
    for _ in 0..3 {
        seen.push(everything.recv().await.expect("a notification"));
    }
    assert_eq!(
        seen,
        [
            golem_mcp::ServerNotification::ResourceUpdated {
                uri: "x:other".into()
            },
            golem_mcp::ServerNotification::ResourceUpdated {
                uri: "x:watched".into()
            },
            golem_mcp::ServerNotification::ResourcesListChanged,
        ]
    );
    let (unsubscribed, request) = tokio::join!(
        subscription.unsubscribe(),
        answer(&mut peer, "resources/unsubscribe", json!({}))
    );
    unsubscribed.expect("unsubscribes");
    assert_eq!(request["params"], json!({"uri": "x:watched"}));
}

#[tokio::test]
async fn a_subscription_that_fell_behind_reports_a_possible_update() {
    let (client, mut peer) = connected().await;
    let (subscribed, _) = tokio::join!(
        client.subscribe_resource("x:watched"),
        answer(&mut peer, "resources/subscribe", json!({}))
    );
    let mut subscription = subscribed.expect("subscribes");
    // More notifications than a subscriber's queue holds, none about it.
    for _ in 0..300 {
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/resources/list_changed"}));
    }
    let (pinged, _) = tokio::join!(client.ping(), answer(&mut peer, "ping", json!({})));
    pinged.expect("pings");
    assert!(
        tokio::time::timeout(Duration::from_secs(5), subscription.updated())
            .await
            .expect("a possible update is reported at once")
    );
}

#[tokio::test]
async fn a_subscription_ends_when_the_client_closes() {
    let (client, mut peer) = connected().await;
    let (subscribed, _) = tokio::join!(
        client.subscribe_resource("x:watched"),
        answer(&mut peer, "resources/subscribe", json!({}))
    );
    let mut subscription = subscribed.expect("subscribes");
    client.close().await.expect("closes");
    assert!(!subscription.updated().await);
}

#[tokio::test]
async fn a_subscription_does_not_keep_the_client_alive() {
    let (client, mut peer) = connected().await;
    let (subscribed, _) = tokio::join!(
        client.subscribe_resource("x:watched"),
        answer(&mut peer, "resources/subscribe", json!({}))
    );
    let mut subscription = subscribed.expect("subscribes");
    drop(client);
    // The last clone is gone: the connection ends, and the subscription
    // with it, instead of holding the server open.
    assert!(
        !tokio::time::timeout(Duration::from_secs(5), subscription.updated())
            .await
            .expect("ends at once")
    );
    let error = subscription
        .unsubscribe()
        .await
        .expect_err("nothing to unsubscribe through");
    assert!(
        matches!(&error, golem_mcp::Error::Closed { operation } if operation == "resources/unsubscribe x:watched"),
        "{error}"
    );
}

#[tokio::test]
async fn completion_sends_the_reference_and_the_context() {
    let (client, mut peer) = connected().await;
    let given = arguments(&[("who", "Ada")]);
    let (completed, request) = tokio::join!(
        client.complete(CompletionRef::Prompt("greet"), "tone", "w", &given),
        answer(
            &mut peer,
            "completion/complete",
            json!({"completion": {
            "values": ["warm", "wry"], "total": 10, "hasMore": true}})
        )
    );
    assert_eq!(
        request["params"],
        json!({"ref": {"type": "ref/prompt", "name": "greet"},
               "argument": {"name": "tone", "value": "w"},
               "context": {"arguments": {"who": "Ada"}}})
    );
    let completion = completed.expect("completes");
    assert_eq!(completion.values, ["warm", "wry"]);
    assert_eq!(completion.total, Some(10));
    assert!(completion.has_more);

    // No context: none is sent. A server error keeps its operation.
    let given = json!({});
    let (completed, request) = tokio::join!(
        client.complete(CompletionRef::ResourceTemplate("x:{id}"), "id", "", &given),
        async {
            let request = next_message(&mut peer).await;
            peer.send(&json!({"jsonrpc": "2.0", "id": request["id"],
                "error": {"code": -32601, "message": "Method not found"}}));
            request
        }
    );
    assert_eq!(
        request["params"],
        json!({"ref": {"type": "ref/resource", "uri": "x:{id}"},
               "argument": {"name": "id", "value": ""}})
    );
    let error = completed.expect_err("refused");
    assert_eq!(error.protocol_error().map(|e| e.code), Some(-32601));
    assert!(
        error
            .to_string()
            .starts_with("mcp: completion/complete x:{id} id: "),
        "{error}"
    );
}

/// This process's resident set in KiB (`VmRSS`). Fails without `/proc`
/// rather than letting a check pass vacuously.
fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmRSS:"))
        .expect("a VmRSS line");
    line.trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("a number")
}

#[tokio::test]
async fn the_kept_prompt_list_holds_on_to_no_notifications() {
    let (client, mut peer) = connected().await;
    let (listed, _) = tokio::join!(
        client.list_prompts(),
        answer(&mut peer, "prompts/list", json!({"prompts": []}))
    );
    listed.expect("lists");
    // Nobody subscribed to notifications: each is dropped once handled,
    // whatever the client keeps for its prompt checks. A subscription kept
    // for them would hold the last 256 here, 128 MiB.
    let before = resident_kib();
    let big = "x".repeat(512 * 1024);
    for _ in 0..256 {
        peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "debug", "data": big}}));
    }
    // Answered after them: the client has handled them all.
    let (pinged, _) = tokio::join!(client.ping(), answer(&mut peer, "ping", json!({})));
    pinged.expect("pings");
    let grown = resident_kib().saturating_sub(before);
    assert!(grown < 48 * 1024, "grew by {grown} KiB");
    // The kept list still works, and still goes stale on a change.
    peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"}));
    let (pinged, _) = tokio::join!(client.ping(), answer(&mut peer, "ping", json!({})));
    pinged.expect("pings");
    let none = json!({});
    let (got, listed) = tokio::join!(
        client.get_prompt("greet", &none),
        answer(&mut peer, "prompts/list", json!({"prompts": []}))
    );
    assert_eq!(listed["method"], "prompts/list", "listed again first");
    assert!(got.is_err(), "greet is not listed");
}
