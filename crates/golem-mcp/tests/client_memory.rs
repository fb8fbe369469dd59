//! The client's logic over the in-memory transport, with the server's side
//! scripted message by message.

mod support;

use std::time::Duration;

use golem_mcp::memory::{MemoryPeer, memory_pair};
use golem_mcp::{Client, Error, LATEST_PROTOCOL_VERSION, ProtocolError, TransportError};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use support::memory::{next_message, refuse_probe};
use support::raw;

/// `{}` as arguments, leaked so it can be borrowed by spawned calls.
fn no_args() -> &'static RawValue {
    Box::leak(raw("{}"))
}

/// Answers the handshake the way a legacy server speaking `version`
/// would: the probe refused, then `initialize`.
async fn handshake(peer: &mut MemoryPeer, version: &str) -> Value {
    let initialize = refuse_probe(peer).await;
    assert_eq!(initialize["method"], "initialize");
    peer.send(
        &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "scripted", "version": "9.9", "title": "Scripted"},
            "instructions": "be nice"
        }}),
    );
    initialize
}

async fn connected() -> (Client, MemoryPeer) {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let (init, _) = tokio::join!(client.initialize(), async {
        handshake(&mut peer, LATEST_PROTOCOL_VERSION).await;
        let initialized = next_message(&mut peer).await;
        assert_eq!(initialized["method"], "notifications/initialized");
        assert!(initialized.get("id").is_none());
    });
    init.expect("handshake succeeds");
    (client, peer)
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

#[tokio::test]
async fn initialize_announces_the_client_and_records_the_server() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    assert!(client.server().is_none());
    let (init, initialize) = tokio::join!(client.initialize(), async {
        let initialize = handshake(&mut peer, LATEST_PROTOCOL_VERSION).await;
        next_message(&mut peer).await;
        initialize
    });
    let server = init.expect("handshake succeeds");
    assert_eq!(
        initialize["params"]["protocolVersion"],
        LATEST_PROTOCOL_VERSION
    );
    assert_eq!(initialize["params"]["clientInfo"]["name"], "golem-mcp");
    assert_eq!(server.name, "scripted");
    assert_eq!(server.version, "9.9");
    assert_eq!(server.title.as_deref(), Some("Scripted"));
    assert_eq!(server.instructions.as_deref(), Some("be nice"));
    assert_eq!(server.capabilities, json!({"tools": {}}));
    assert_eq!(
        client.server().map(|s| s.protocol_version.as_str()),
        Some(LATEST_PROTOCOL_VERSION)
    );
}

#[tokio::test]
async fn a_second_initialize_sends_nothing() {
    let (client, mut peer) = connected().await;
    client.initialize().await.expect("no-op");
    let (listed, request) = tokio::join!(client.list_tools(), async {
        let request = next_message(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": []}}));
        request
    });
    listed.expect("listed");
    assert_eq!(
        request["method"], "tools/list",
        "the next message is the list, not a second initialize"
    );
}

#[tokio::test]
async fn an_older_supported_version_is_accepted() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let (init, _) = tokio::join!(client.initialize(), async {
        handshake(&mut peer, "2025-06-18").await;
        next_message(&mut peer).await
    });
    assert_eq!(init.expect("accepted").protocol_version, "2025-06-18");
}

#[tokio::test]
async fn an_unknown_version_is_refused_naming_both() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let (init, _) = tokio::join!(client.initialize(), handshake(&mut peer, "1999-01-01"));
    let error = init.expect_err("refused");
    assert!(matches!(error, Error::VersionMismatch { .. }), "{error:?}");
    let message = error.to_string();
    assert!(
        message.contains("1999-01-01") && message.contains(LATEST_PROTOCOL_VERSION),
        "{message}"
    );
    assert!(matches!(
        client.list_tools().await,
        Err(Error::NotInitialized { .. })
    ));
}

#[tokio::test]
async fn operations_before_initialize_and_after_close_are_refused() {
    let (transport, _peer) = memory_pair();
    let client = Client::new(transport);
    let error = client.list_tools().await.expect_err("not initialized");
    assert!(matches!(error, Error::NotInitialized { .. }), "{error:?}");
    assert!(error.to_string().starts_with("mcp: tools/list:"), "{error}");
    let error = client
        .call_tool("echo", no_args())
        .await
        .expect_err("not initialized");
    assert!(error.to_string().contains("tools/call echo"), "{error}");

    client.close().await.expect("closes");
    client.close().await.expect("closing twice is fine");
    let error = client.initialize().await.expect_err("closed");
    assert!(matches!(error, Error::Closed { .. }), "{error:?}");
    assert!(matches!(client.ping().await, Err(Error::Closed { .. })));
}

#[tokio::test]
async fn list_tools_follows_cursors_and_keeps_schemas_verbatim() {
    let (client, mut peer) = connected().await;
    let (listed, cursors) = tokio::join!(client.list_tools(), async {
        let mut cursors = Vec::new();
        for (page, next) in [(0, Some("p2")), (1, Some("p3")), (2, None)] {
            let request = next_message(&mut peer).await;
            cursors.push(request["params"].get("cursor").cloned());
            let schema = format!(r#"{{ "type":"object" , "title":"t{page}" }}"#);
            let mut message = format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[{{"name":"t{page}","inputSchema":{schema}}}]"#,
                request["id"]
            );
            if let Some(next) = next {
                message.push_str(&format!(r#","nextCursor":"{next}""#));
            }
            message.push_str("}}");
            peer.send_raw(message);
        }
        cursors
    });
    let tools = listed.expect("listed");
    assert_eq!(cursors, vec![None, Some(json!("p2")), Some(json!("p3"))]);
    let names: Vec<_> = tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["t0", "t1", "t2"]);
    assert_eq!(
        tools[1].input_schema.as_deref().map(RawValue::get),
        Some(r#"{ "type":"object" , "title":"t1" }"#)
    );
}

#[tokio::test]
async fn a_cursor_loop_is_an_error() {
    let (client, mut peer) = connected().await;
    let (listed, _) = tokio::join!(client.list_tools(), async {
        for _ in 0..2 {
            let request = next_message(&mut peer).await;
            peer.send(&json!({"jsonrpc": "2.0", "id": request["id"],
                "result": {"tools": [], "nextCursor": "same"}}));
        }
    });
    let error = listed.expect_err("loop detected");
    assert!(
        matches!(error, Error::CursorLoop { ref cursor, .. } if cursor == "same"),
        "{error:?}"
    );
}

#[tokio::test]
async fn call_tool_sends_arguments_verbatim_and_reads_the_result() {
    let (client, mut peer) = connected().await;
    // Numbers a decode and re-encode would change (`1.50` to `1.5`, `1e2`
    // to `100.0`, a big integer to a float).
    let arguments = raw(r#"{ "z" : 1.50, "a":[true ,null, 1e2, 123456789012345678901234567890] }"#);
    let (called, request) = tokio::join!(client.call_tool("echo", &arguments), async {
        let request = peer.recv_raw().await.expect("a request");
        let parsed: Value = serde_json::from_slice(&request).expect("JSON");
        peer.send(&json!({"jsonrpc": "2.0", "id": parsed["id"], "result": {
            "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            "structuredContent": {"ok": true}
        }}));
        String::from_utf8(request).expect("UTF-8")
    });
    let result = called.expect("called");
    assert!(
        request.contains(
            r#""arguments":{ "z" : 1.50, "a":[true ,null, 1e2, 123456789012345678901234567890] }"#
        ),
        "arguments must be sent byte for byte: {request}"
    );
    assert!(request.contains(r#""name":"echo""#));
    assert_eq!(result.text(), "a\nb");
    assert!(!result.is_error);
    assert_eq!(
        result.structured_content.as_deref().map(RawValue::get),
        Some(r#"{"ok":true}"#)
    );
}

#[tokio::test]
async fn while_waiting_pings_are_answered_requests_refused_and_noise_dropped() {
    let (client, mut peer) = connected().await;
    let (called, (pong, refusal)) = tokio::join!(client.call_tool("slow", no_args()), async {
        let request = next_message(&mut peer).await;
        let id = request["id"].as_u64().expect("numeric id");
        peer.send(&json!({"jsonrpc": "2.0", "id": "s1", "method": "ping"}));
        let pong = next_message(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": 77, "method": "roots/list"}));
        let refusal = next_message(&mut peer).await;
        peer.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x"}}),
        );
        peer.send_raw("not json at all");
        peer.send(&json!({"jsonrpc": "2.0", "id": id.to_string(), "result": text_result("string id: wrong")}));
        peer.send(
            &json!({"jsonrpc": "2.0", "id": id + 1, "result": text_result("other id: wrong")}),
        );
        peer.send_raw(format!(r#"{{"jsonrpc":"2.0","id":{id}.0,"result":{{"content":[{{"type":"text","text":"right"}}]}}}}"#));
        (pong, refusal)
    });
    assert_eq!(called.expect("answered").text(), "right");
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": "s1", "result": {}}));
    assert_eq!(refusal["id"], 77);
    assert_eq!(refusal["error"]["code"], ProtocolError::METHOD_NOT_FOUND);
}

#[tokio::test]
async fn a_json_rpc_error_is_a_typed_protocol_error() {
    let (client, mut peer) = connected().await;
    let (called, _) = tokio::join!(client.call_tool("nope", no_args()), async {
        let request = next_message(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"],
            "error": {"code": -32602, "message": "Unknown tool: nope", "data": {"hint": 1}}}));
    });
    let error = called.expect_err("protocol error");
    let protocol = error.protocol_error().expect("a protocol error");
    assert_eq!(protocol.code, -32602);
    assert_eq!(protocol.message, "Unknown tool: nope");
    assert_eq!(protocol.data, Some(json!({"hint": 1})));
    assert!(
        error.to_string().starts_with("mcp: tools/call nope:"),
        "{error}"
    );
    let source = std::error::Error::source(&error).expect("a source");
    assert_eq!(source.downcast_ref::<ProtocolError>(), Some(protocol));
}

#[tokio::test]
async fn an_error_answer_without_id_fails_the_waiting_request() {
    let (client, mut peer) = connected().await;
    let (called, _) = tokio::join!(client.call_tool("echo", no_args()), async {
        next_message(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}));
    });
    assert_eq!(
        called.expect_err("failed").protocol_error().map(|e| e.code),
        Some(-32700)
    );
}

#[tokio::test]
async fn an_abandoned_call_is_announced_at_once_and_its_late_answer_dropped() {
    let (client, mut peer) = connected().await;
    let abandoned = tokio::time::timeout(
        Duration::from_millis(50),
        client.call_tool("hang", no_args()),
    )
    .await;
    assert!(abandoned.is_err(), "the call must time out");
    let hung = next_message(&mut peer).await;
    // No further operation is needed for the server to hear of it.
    let cancelled = next_message(&mut peer).await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], hung["id"]);

    let (called, next) = tokio::join!(client.call_tool("echo", no_args()), async {
        let next = next_message(&mut peer).await;
        // The late answer to the abandoned call arrives first.
        peer.send(&json!({"jsonrpc": "2.0", "id": hung["id"], "result": text_result("late")}));
        peer.send(&json!({"jsonrpc": "2.0", "id": next["id"], "result": text_result("fresh")}));
        next
    });
    assert_eq!(called.expect("answered").text(), "fresh");
    assert_eq!(next["params"]["name"], "echo");
    assert_ne!(next["id"], hung["id"], "ids are never reused");
}

#[tokio::test]
async fn a_call_abandoned_just_before_close_is_announced_before_the_session_ends() {
    let (client, mut peer) = connected().await;
    let abandoned = tokio::time::timeout(
        Duration::from_millis(50),
        client.call_tool("hang", no_args()),
    )
    .await;
    assert!(abandoned.is_err(), "the call must time out");
    // At once, as a command interrupted by Ctrl-C does: the cancellation
    // is still queued when the session ends.
    client.close().await.expect("closed");
    let hung = next_message(&mut peer).await;
    assert_eq!(hung["method"], "tools/call");
    let cancelled = next_message(&mut peer).await;
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], hung["id"]);
}

#[tokio::test]
async fn an_interrupted_initialize_is_resumed_not_repeated() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    // Given up on while the probe is out: the probe is not sent again.
    let first = tokio::time::timeout(Duration::from_millis(50), client.initialize()).await;
    assert!(first.is_err(), "no answer yet");
    let probe = next_message(&mut peer).await;
    assert_eq!(probe["method"], "server/discover");
    peer.send(&json!({"jsonrpc": "2.0", "id": probe["id"],
        "error": {"code": -32601, "message": "Method not found"}}));
    // Given up on while `initialize` is out: it is not sent again either.
    let (second, initialize) = tokio::join!(
        tokio::time::timeout(Duration::from_millis(50), client.initialize()),
        next_message(&mut peer)
    );
    assert!(second.is_err(), "no answer yet");
    assert_eq!(initialize["method"], "initialize", "{initialize}");
    let (init, _) = tokio::join!(client.initialize(), async {
        // Answer the first (and only) initialize now.
        peer.send(
            &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
            "serverInfo": {"name": "late", "version": "1"}}}),
        );
        let initialized = next_message(&mut peer).await;
        assert_eq!(initialized["method"], "notifications/initialized");
    });
    assert_eq!(init.expect("resumed").name, "late");
}

#[tokio::test]
async fn concurrent_calls_are_in_flight_together_and_answered_by_id() {
    let (client, mut peer) = connected().await;
    let calls: Vec<_> = (0..8)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move {
                let arguments = RawValue::from_string(format!(r#"{{"n":{n}}}"#)).expect("JSON");
                client.call_tool("echo", &arguments).await
            })
        })
        .collect();
    // All eight requests reach the server before any is answered.
    let mut requests = Vec::new();
    for _ in 0..8 {
        requests.push(next_message(&mut peer).await);
    }
    // Answered in reverse order, each with its own argument.
    for request in requests.iter().rev() {
        let n = &request["params"]["arguments"]["n"];
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": text_result(&format!("n={n}"))}));
    }
    for (n, call) in calls.into_iter().enumerate() {
        let result = call.await.expect("joined").expect("answered");
        assert_eq!(result.text(), format!("n={n}"));
    }
}

#[tokio::test]
async fn a_vanished_peer_is_a_transport_error() {
    let (client, mut peer) = connected().await;
    let (called, _) = tokio::join!(client.call_tool("echo", no_args()), async {
        next_message(&mut peer).await;
        drop(peer);
    });
    let error = called.expect_err("connection closed");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::ConnectionClosed)
        ),
        "{error:?}"
    );
}

#[test]
fn the_client_is_send_sync_and_clone() {
    fn assert_traits<T: Send + Sync + Clone + 'static>() {}
    assert_traits::<Client>();
    fn assert_error<T: std::error::Error + Send + Sync + 'static>() {}
    assert_error::<Error>();
}

#[tokio::test]
async fn progress_reports_reach_the_observer_in_order_and_only_its_own() {
    let (client, mut peer) = connected().await;
    let mut reports = Vec::new();
    let (called, request) = tokio::join!(
        client.call_tool_with_progress("slow", no_args(), |progress| reports.push(progress)),
        async {
            let request = next_message(&mut peer).await;
            let token = request["params"]["_meta"]["progressToken"].clone();
            let progress = |token: &Value, n: u32| {
                json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": n, "total": 3, "message": format!("step {n}")}})
            };
            peer.send(&progress(&token, 1));
            peer.send(&progress(&json!("someone-else"), 7));
            peer.send(&progress(&token, 2));
            peer.send(&json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "log"}}));
            peer.send(&progress(&token, 3));
            peer.send(
                &json!({"jsonrpc": "2.0", "id": request["id"], "result": text_result("done")}),
            );
            request
        }
    );
    assert_eq!(called.expect("answered").text(), "done");
    assert!(
        request["params"]["_meta"]["progressToken"].is_number(),
        "{request}"
    );
    let steps: Vec<(f64, Option<String>)> = reports
        .iter()
        .map(|r| (r.progress, r.message.clone()))
        .collect();
    assert_eq!(
        steps,
        [
            (1.0, Some("step 1".into())),
            (2.0, Some("step 2".into())),
            (3.0, Some("step 3".into()))
        ]
    );
    assert!(reports.iter().all(|r| r.total == Some(3.0)));

    // A plain call asks for no progress; stray reports are dropped.
    let (called, request) = tokio::join!(client.call_tool("slow", no_args()), async {
        let request = next_message(&mut peer).await;
        peer.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 1}}),
        );
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": text_result("plain")}));
        request
    });
    assert_eq!(called.expect("answered").text(), "plain");
    assert!(request["params"].get("_meta").is_none(), "{request}");
}

#[tokio::test]
async fn close_does_not_wait_for_a_call_in_flight_on_another_clone() {
    let (client, mut peer) = connected().await;
    let caller = client.clone();
    let in_flight = tokio::spawn(async move { caller.call_tool("hang", no_args()).await });
    next_message(&mut peer).await; // the call is now waiting for its answer
    tokio::time::timeout(Duration::from_secs(5), client.close())
        .await
        .expect("close did not queue behind the call")
        .expect("closes");
    let error = in_flight
        .await
        .expect("joined")
        .expect_err("the call gave way");
    assert!(matches!(error, Error::Closed { .. }), "{error:?}");
    assert!(matches!(
        client.list_tools().await,
        Err(Error::Closed { .. })
    ));
}

#[tokio::test]
async fn a_malformed_answer_with_our_id_fails_the_call_instead_of_hanging() {
    for broken in [
        r#"{"jsonrpc":"2.0","id":ID,"error":{"code":"E_TOOL","message":"x"}}"#,
        r#"{"jsonrpc":"2.0","id":ID,"error":"plain string"}"#,
        r#"{"jsonrpc":"2.0","id":ID}"#,
        r#"{"jsonrpc":"2.0","id":ID,"result":{"content":"not a list"}}"#,
    ] {
        let (client, mut peer) = connected().await;
        let (called, _) = tokio::join!(
            tokio::time::timeout(Duration::from_secs(5), client.call_tool("echo", no_args())),
            async {
                let request = next_message(&mut peer).await;
                peer.send_raw(broken.replace("ID", &request["id"].to_string()));
            }
        );
        let error = called
            .expect("failed instead of hanging")
            .expect_err("invalid");
        assert!(
            matches!(error, Error::InvalidResponse { .. }),
            "{broken}: {error:?}"
        );
    }
}

/// A memory transport whose `recv` panics on a message saying "boom", and
/// whose `notifications/initialized` is never taken until it is closed.
struct Faulty {
    inner: golem_mcp::memory::MemoryTransport,
    closed: tokio::sync::Notify,
    hold_initialized: bool,
}

impl Faulty {
    fn new(inner: golem_mcp::memory::MemoryTransport, hold_initialized: bool) -> Self {
        Faulty {
            inner,
            closed: tokio::sync::Notify::new(),
            hold_initialized,
        }
    }
}

impl golem_mcp::Transport for Faulty {
    async fn send(&self, message: golem_mcp::Outgoing) -> Result<(), TransportError> {
        if self.hold_initialized && message.method() == Some("notifications/initialized") {
            self.closed.notified().await;
            return Err(TransportError::Closed);
        }
        self.inner.send(message).await
    }

    async fn recv(&self) -> Result<golem_mcp::Inbound, TransportError> {
        let received = self.inner.recv().await?;
        if let golem_mcp::Inbound::Message(message) = &received {
            assert!(!message.starts_with(b"boom"), "the transport panics");
        }
        Ok(received)
    }

    async fn close(&self) -> Result<(), TransportError> {
        self.closed.notify_waiters();
        self.inner.close().await
    }
}

#[tokio::test]
async fn calls_fail_instead_of_hanging_when_the_inbound_task_dies() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(Faulty::new(transport, false));
    let (init, _) = tokio::join!(
        client.initialize(),
        handshake(&mut peer, LATEST_PROTOCOL_VERSION)
    );
    init.expect("initialized");
    let (called, _) = tokio::join!(
        tokio::time::timeout(Duration::from_secs(5), client.call_tool("echo", no_args())),
        async {
            next_message(&mut peer).await;
            peer.send_raw("boom");
        }
    );
    let error = called
        .expect("failed rather than hung")
        .expect_err("no reader");
    assert!(
        error.to_string().contains("inbound task stopped"),
        "{error}"
    );
    let later = tokio::time::timeout(Duration::from_secs(5), client.ping())
        .await
        .expect("fails at once");
    assert!(later.is_err(), "later calls fail too");
}

#[tokio::test]
async fn close_does_not_wait_for_a_handshake_stuck_on_a_send() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(Faulty::new(transport, true));
    let initializing = tokio::spawn({
        let client = client.clone();
        async move { client.initialize().await.map(|_| ()) }
    });
    let initialize = next_message(&mut peer).await;
    peer.send(
        &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
        "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
        "serverInfo": {"name": "s", "version": "1"}}}),
    );
    // The handshake now waits on a send that only a close ends.
    tokio::time::timeout(Duration::from_secs(5), client.close())
        .await
        .expect("close did not wait for the handshake")
        .expect("closes");
    let initialized = tokio::time::timeout(Duration::from_secs(5), initializing)
        .await
        .expect("the handshake gave way")
        .expect("joined");
    assert!(
        matches!(initialized, Err(Error::Closed { .. })),
        "{initialized:?}"
    );
}

#[tokio::test]
async fn arguments_can_come_from_any_serializable_value() {
    #[derive(serde::Serialize)]
    struct Query<'a> {
        message: &'a str,
        times: u8,
    }
    let (client, mut peer) = connected().await;
    let (called, request) = tokio::join!(
        client.call_tool(
            "echo",
            &Query {
                message: "hi",
                times: 2
            }
        ),
        async {
            let request = next_message(&mut peer).await;
            peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": text_result("ok")}));
            request
        }
    );
    assert_eq!(called.expect("answered").text(), "ok");
    assert_eq!(
        request["params"]["arguments"],
        json!({"message": "hi", "times": 2})
    );
    // A value that is not valid JSON fails before anything is sent.
    let mut bad = std::collections::HashMap::new();
    bad.insert(vec![1u8], 1);
    let error = client
        .call_tool("echo", &bad)
        .await
        .expect_err("a map with non-string keys");
    assert!(matches!(error, Error::Encode { .. }), "{error:?}");
}
