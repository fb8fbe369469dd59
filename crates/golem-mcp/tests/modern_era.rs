//! The 2026-07-28 era over the in-memory transport, the server scripted
//! message by message: the era decision (probe, fallback, pinning,
//! corrections), the per-request `_meta`, multi-round-trip requests, and
//! the bounds that hold against a misbehaving modern server.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use golem_mcp::memory::{MemoryPeer, memory_pair};
use golem_mcp::{
    Client, ClientConfig, ElicitationResponse, Era, Error, HowChosen, LATEST_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSION, Root,
};
use serde_json::{Value, json};
use support::memory::next_message;
use support::{bounded, raw};

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";

fn discovered(id: &Value, versions: &[&str]) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete",
        "supportedVersions": versions,
        "capabilities": {"tools": {}},
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "3.1"}},
        "instructions": "be brief",
        "ttlMs": 0, "cacheScope": "private",
    }})
}

fn error(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": error})
}

fn complete(id: &Value, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "complete",
        "content": [{"type": "text", "text": text}],
    }})
}

/// Answers the probe as a modern server; returns the probe.
async fn answer_probe(peer: &mut MemoryPeer) -> Value {
    let probe = next_message(peer).await;
    assert_eq!(probe["method"], "server/discover", "{probe}");
    peer.send(&discovered(&probe["id"], &[MODERN_PROTOCOL_VERSION]));
    probe
}

/// A client connected to a scripted modern server.
async fn modern(config: ClientConfig) -> (Client, MemoryPeer) {
    let (transport, mut peer) = memory_pair();
    let client = Client::with_config(transport, config);
    let (connected, _) = tokio::join!(client.initialize(), answer_probe(&mut peer));
    assert_eq!(connected.expect("connects").era(), Era::Modern);
    (client, peer)
}

/// Answers `initialize` as a legacy server; returns the request.
async fn answer_initialize(peer: &mut MemoryPeer) -> Value {
    let initialize = next_message(peer).await;
    assert_eq!(initialize["method"], "initialize", "{initialize}");
    peer.send(
        &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": LATEST_PROTOCOL_VERSION,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy", "version": "1"},
        }}),
    );
    let initialized = next_message(peer).await;
    assert_eq!(initialized["method"], "notifications/initialized");
    initialize
}

#[tokio::test]
async fn a_discovery_answer_makes_the_connection_modern_without_initialize() {
    let config = ClientConfig::default()
        .with_client_info("probe-test", "7")
        .with_roots(vec![Root::new("file:///srv")]);
    let (transport, mut peer) = memory_pair();
    let client = Client::with_config(transport, config);
    let (connected, probe) = tokio::join!(client.initialize(), answer_probe(&mut peer));
    let server = connected.expect("connects");
    assert_eq!(
        (server.name.as_str(), server.version.as_str()),
        ("modern", "3.1")
    );
    assert_eq!(server.protocol_version, MODERN_PROTOCOL_VERSION);
    assert_eq!(server.supported_versions, [MODERN_PROTOCOL_VERSION]);
    assert_eq!(server.chosen, HowChosen::Discovered);
    assert_eq!(server.instructions.as_deref(), Some("be brief"));
    assert_eq!(server.capabilities, json!({"tools": {}}));
    let meta = &probe["params"]["_meta"];
    assert_eq!(meta[META_VERSION], MODERN_PROTOCOL_VERSION);
    assert_eq!(
        meta[META_CLIENT],
        json!({"name": "probe-test", "version": "7"})
    );
    assert_eq!(
        meta[META_CAPABILITIES],
        json!({"roots": {"listChanged": true}})
    );

    // Every request carries the same _meta, the arguments untouched, and
    // nothing of the legacy era is sent.
    let arguments = raw(r#"{ "b" : 1,"a":[2, 3] }"#);
    let (called, request) = tokio::join!(client.call_tool("echo", &arguments), async {
        let bytes = bounded(peer.recv_raw()).await.expect("a request");
        let request: Value = serde_json::from_slice(&bytes).expect("JSON");
        peer.send(&complete(&request["id"], "ok"));
        (String::from_utf8(bytes).expect("UTF-8"), request)
    });
    assert_eq!(called.expect("called").text(), "ok");
    let (bytes, request) = request;
    assert!(
        bytes.contains(r#""arguments":{ "b" : 1,"a":[2, 3] }"#),
        "{bytes}"
    );
    assert_eq!(request["method"], "tools/call");
    assert_eq!(request["params"]["_meta"], *meta);
    assert_ne!(request["id"], probe["id"]);
}

#[tokio::test]
async fn progress_tokens_share_the_modern_meta() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let arguments = raw("{}");
    let mut reports = Vec::new();
    let mut on_progress = |progress: golem_mcp::Progress| reports.push(progress.progress);
    let (called, ()) = tokio::join!(
        client.call_tool_with_progress("slow", &arguments, &mut on_progress),
        async {
            let request = next_message(&mut peer).await;
            let meta = &request["params"]["_meta"];
            assert_eq!(meta["progressToken"], request["id"], "{request}");
            assert_eq!(meta[META_VERSION], MODERN_PROTOCOL_VERSION, "{request}");
            peer.send(
                &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                "params": {"progressToken": request["id"], "progress": 1}}),
            );
            peer.send(&complete(&request["id"], "done"));
        }
    );
    assert_eq!(called.expect("called").text(), "done");
    assert_eq!(reports, [1.0]);
}

#[tokio::test]
async fn a_legacy_answer_to_the_probe_falls_back_to_initialize_on_the_same_connection() {
    for (code, message) in [
        (-32601, "Method not found"),
        (-32602, "bad"),
        (-32000, "Server not initialized"),
    ] {
        let (transport, mut peer) = memory_pair();
        let client = Client::new(transport);
        let (connected, initialize) = tokio::join!(client.initialize(), async {
            let probe = next_message(&mut peer).await;
            assert_eq!(probe["method"], "server/discover");
            peer.send(&error(&probe["id"], code, message, None));
            answer_initialize(&mut peer).await
        });
        let server = connected.expect("falls back");
        assert_eq!(server.era(), Era::Legacy);
        assert_eq!(server.name, "legacy");
        let HowChosen::FellBack { probe } = &server.chosen else {
            panic!("not a fallback: {:?}", server.chosen);
        };
        assert!(probe.contains(&code.to_string()), "{probe}");
        assert_eq!(
            initialize["params"]["protocolVersion"],
            LATEST_PROTOCOL_VERSION
        );
        // Legacy requests carry no modern _meta.
        let (listed, ()) = tokio::join!(client.list_tools(), async {
            let request = next_message(&mut peer).await;
            assert!(request["params"].get("_meta").is_none(), "{request}");
            peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"tools": []}}));
        });
        listed.expect("lists");
    }
}

#[tokio::test]
async fn an_answer_that_is_no_discovery_result_falls_back_too() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let (connected, _) = tokio::join!(client.initialize(), async {
        let probe = next_message(&mut peer).await;
        // What the conformance suite's legacy mocks answer: an empty result.
        peer.send(&json!({"jsonrpc": "2.0", "id": probe["id"], "result": {}}));
        answer_initialize(&mut peer).await
    });
    assert_eq!(connected.expect("falls back").era(), Era::Legacy);
}

#[tokio::test(start_paused = true)]
async fn a_silent_server_is_taken_for_legacy_after_the_bound_and_hears_no_cancellation() {
    let (transport, mut peer) = memory_pair();
    let mut config = ClientConfig::default();
    config.probe_timeout = Duration::from_secs(3);
    let client = Client::with_config(transport, config);
    let started = tokio::time::Instant::now();
    let (connected, waited) = tokio::join!(client.initialize(), async {
        let probe = next_message(&mut peer).await;
        assert_eq!(probe["method"], "server/discover");
        // Silence; the next thing the server hears is `initialize`, not a
        // cancellation of the probe.
        answer_initialize(&mut peer).await;
        started.elapsed()
    });
    let server = connected.expect("falls back");
    assert!(waited >= Duration::from_secs(3), "{waited:?}");
    let HowChosen::FellBack { probe } = &server.chosen else {
        panic!("not a fallback");
    };
    assert!(probe.contains("no answer"), "{probe}");
}

#[tokio::test(start_paused = true)]
async fn a_modern_server_that_missed_the_probes_bound_is_probed_again_not_lost() {
    // What the Python SDK 2.x does on two busy CPUs: the probe gets no
    // answer in time, and the `initialize` of the fallback is refused
    // because the connection now serves 2026-07-28.
    let (transport, mut peer) = memory_pair();
    let mut config = ClientConfig::default();
    config.probe_timeout = Duration::from_secs(3);
    let client = Client::with_config(transport, config);
    let (connected, _) = tokio::join!(client.initialize(), async {
        let probe = next_message(&mut peer).await;
        assert_eq!(probe["method"], "server/discover");
        let initialize = next_message(&mut peer).await;
        assert_eq!(initialize["method"], "initialize", "{initialize}");
        peer.send(&error(
            &initialize["id"],
            -32022,
            "Unsupported protocol version: connection is serving the 2026-07-28 protocol",
            None,
        ));
        answer_probe(&mut peer).await
    });
    let server = connected.expect("connects as modern");
    assert_eq!(server.era(), Era::Modern);
    assert_eq!(server.chosen, HowChosen::Discovered);
    // Requests go out in the modern shape from then on.
    let (tools, _) = tokio::join!(client.list_tools(), async {
        let list = next_message(&mut peer).await;
        assert_eq!(
            list["params"]["_meta"][META_VERSION],
            MODERN_PROTOCOL_VERSION
        );
        peer.send(&json!({"jsonrpc": "2.0", "id": list["id"], "result": {
            "resultType": "complete", "tools": []}}));
    });
    assert!(tools.expect("listed").is_empty());
}

#[tokio::test]
async fn a_legacy_server_that_refuses_initialize_otherwise_is_still_an_error() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let (connected, _) = tokio::join!(client.initialize(), async {
        let probe = next_message(&mut peer).await;
        peer.send(&error(&probe["id"], -32601, "Method not found", None));
        let initialize = next_message(&mut peer).await;
        peer.send(&error(&initialize["id"], -32603, "internal error", None));
    });
    let error = connected.expect_err("refused");
    assert!(
        matches!(error, golem_mcp::Error::Protocol { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_unsupported_version_is_corrected_from_the_servers_list() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let (connected, ids) = tokio::join!(client.initialize(), async {
        let first = next_message(&mut peer).await;
        // The conformance suite's mock refuses the first request even when
        // it named a version it serves: the same version is asked again.
        peer.send(&error(
            &first["id"],
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": [MODERN_PROTOCOL_VERSION, "2025-11-25"], "requested": ""})),
        ));
        let second = answer_probe(&mut peer).await;
        assert_eq!(
            second["params"]["_meta"][META_VERSION],
            MODERN_PROTOCOL_VERSION
        );
        (first["id"].clone(), second["id"].clone())
    });
    assert_eq!(connected.expect("connects").era(), Era::Modern);
    assert_ne!(ids.0, ids.1, "a retry is a new request");
}

#[tokio::test]
async fn no_mutual_version_is_an_error_naming_both_lists() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let (connected, ()) = tokio::join!(client.initialize(), async {
        let probe = next_message(&mut peer).await;
        peer.send(&error(
            &probe["id"],
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": ["2099-01-01"]})),
        ));
    });
    let Err(error) = connected else {
        panic!("connected");
    };
    let message = error.to_string();
    assert!(matches!(error, Error::VersionMismatch { .. }), "{message}");
    assert!(
        message.contains("2099-01-01") && message.contains(MODERN_PROTOCOL_VERSION),
        "{message}"
    );
}

#[tokio::test]
async fn a_server_that_refuses_every_probe_is_an_error_after_two_corrections() {
    let (transport, mut peer) = memory_pair();
    let client = Client::new(transport);
    let probes = AtomicUsize::new(0);
    let refuse = async {
        loop {
            let Some(probe) = peer.recv().await else {
                break;
            };
            if probe["method"] != "server/discover" {
                panic!("sent {probe} after the refusals");
            }
            probes.fetch_add(1, Ordering::SeqCst);
            peer.send(&error(
                &probe["id"],
                -32022,
                "Unsupported protocol version",
                Some(json!({"supported": [MODERN_PROTOCOL_VERSION]})),
            ));
        }
    };
    let connected = tokio::select! {
        connected = bounded(client.initialize()) => connected.map(|_| ()),
        () = refuse => panic!("the client went away"),
    };
    let error = connected.expect_err("never connects");
    assert_eq!(
        error.protocol_error().map(|e| e.code),
        Some(-32022),
        "{error}"
    );
    assert_eq!(probes.load(Ordering::SeqCst), 3);
}

#[tokio::test]
async fn a_pinned_legacy_client_never_probes_and_a_pinned_modern_one_never_initializes() {
    let (transport, mut peer) = memory_pair();
    let client = Client::with_config(
        transport,
        ClientConfig::default().with_protocol("2025-06-18"),
    );
    let (connected, initialize) = tokio::join!(client.initialize(), async {
        let initialize = next_message(&mut peer).await;
        assert_eq!(initialize["method"], "initialize", "{initialize}");
        peer.send(&json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "l", "version": "1"}}}));
        next_message(&mut peer).await;
        initialize
    });
    assert_eq!(connected.expect("connects").chosen, HowChosen::Pinned);
    assert_eq!(initialize["params"]["protocolVersion"], "2025-06-18");

    let (transport, mut peer) = memory_pair();
    let client = Client::with_config(
        transport,
        ClientConfig::default().with_protocol(MODERN_PROTOCOL_VERSION),
    );
    let (connected, ()) = tokio::join!(client.initialize(), async {
        let probe = next_message(&mut peer).await;
        peer.send(&error(&probe["id"], -32601, "Method not found", None));
    });
    let message = connected.expect_err("no fallback when pinned").to_string();
    assert!(
        message.contains(MODERN_PROTOCOL_VERSION) && message.contains("-32601"),
        "{message}"
    );

    let (transport, _peer) = memory_pair();
    let client = Client::with_config(
        transport,
        ClientConfig::default().with_protocol("1999-01-01"),
    );
    let error = client.initialize().await.expect_err("unknown version");
    assert!(matches!(error, Error::InvalidConfig { .. }), "{error}");
}

/// A modern client that answers elicitations with `answer`, counting them.
fn eliciting(answer: ElicitationResponse, count: Arc<AtomicUsize>) -> ClientConfig {
    ClientConfig::default().with_elicitation(move |_request, _context| {
        let answer = answer.clone();
        let count = count.clone();
        async move {
            count.fetch_add(1, Ordering::SeqCst);
            Ok(answer)
        }
    })
}

fn input_required(id: &Value, state: Option<&str>) -> Value {
    let mut result = json!({
        "resultType": "input_required",
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Confirm?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}},
    });
    if let Some(state) = state {
        result["requestState"] = json!(state);
    }
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

#[tokio::test]
async fn input_is_answered_by_the_registered_handler_and_the_request_sent_again() {
    let count = Arc::new(AtomicUsize::new(0));
    let mut content = serde_json::Map::new();
    content.insert("ok".into(), json!(true));
    let (client, mut peer) = modern(eliciting(
        ElicitationResponse::Accept(content),
        count.clone(),
    ))
    .await;
    let arguments = raw(r#"{"x":1}"#);
    let (called, (first, retry)) = tokio::join!(client.call_tool("book", &arguments), async {
        let first = next_message(&mut peer).await;
        // Escapes and odd spacing must come back exactly as sent.
        peer.send_raw(
            input_required(&first["id"], Some("STATE"))
                .to_string()
                .replace(r#""STATE""#, r#""s\u0041 \"q\"""#),
        );
        let retry = bounded(peer.recv_raw()).await.expect("the retry");
        let text = String::from_utf8(retry).expect("UTF-8");
        let retry: Value = serde_json::from_str(&text).expect("JSON");
        assert!(text.contains(r#""requestState":"s\u0041 \"q\"""#), "{text}");
        peer.send(&complete(&retry["id"], "booked"));
        (first, retry)
    });
    assert_eq!(called.expect("called").text(), "booked");
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert_ne!(first["id"], retry["id"]);
    assert_eq!(retry["params"]["name"], "book");
    assert_eq!(retry["params"]["arguments"], json!({"x": 1}));
    assert_eq!(
        retry["params"]["inputResponses"],
        json!({"confirm": {"action": "accept", "content": {"ok": true}}})
    );
    assert_eq!(
        retry["params"]["_meta"][META_VERSION],
        MODERN_PROTOCOL_VERSION
    );
}

#[tokio::test]
async fn no_state_is_sent_back_when_none_came_and_nothing_leaks_into_other_requests() {
    let count = Arc::new(AtomicUsize::new(0));
    let (client, mut peer) = modern(eliciting(ElicitationResponse::Decline, count)).await;
    let arguments = raw("{}");
    let (asked, other, ()) = tokio::join!(
        client.call_tool("ask", &arguments),
        client.call_tool("other", &arguments),
        async {
            let mut pending = Vec::new();
            for _ in 0..2 {
                pending.push(next_message(&mut peer).await);
            }
            for request in &pending {
                match request["params"]["name"].as_str() {
                    Some("ask") => {
                        peer.send(&input_required(&request["id"], None));
                    }
                    _ => {
                        // The unrelated call, answered after the other's
                        // input request went out: it never carries input.
                        assert!(request["params"].get("inputResponses").is_none());
                        peer.send(&complete(&request["id"], "other"));
                    }
                }
            }
            let retry = next_message(&mut peer).await;
            assert_eq!(retry["params"]["name"], "ask");
            assert!(retry["params"].get("requestState").is_none(), "{retry}");
            assert_eq!(
                retry["params"]["inputResponses"]["confirm"]["action"],
                "decline"
            );
            peer.send(&complete(&retry["id"], "asked"));
        }
    );
    assert_eq!(asked.expect("asked").text(), "asked");
    assert_eq!(other.expect("other").text(), "other");
}

#[tokio::test]
async fn a_server_that_asks_for_ever_is_given_up_on() {
    let count = Arc::new(AtomicUsize::new(0));
    let (client, mut peer) = modern(eliciting(ElicitationResponse::Decline, count.clone())).await;
    let arguments = raw("{}");
    let ask = async {
        loop {
            let Some(request) = peer.recv().await else {
                break;
            };
            peer.send(&input_required(&request["id"], Some("again")));
        }
    };
    let called = tokio::select! {
        called = bounded(client.call_tool("greedy", &arguments)) => called,
        () = ask => panic!("the client went away"),
    };
    let message = called.expect_err("gives up").to_string();
    assert!(message.contains("16 rounds"), "{message}");
    assert_eq!(count.load(Ordering::SeqCst), 16);
}

#[tokio::test]
async fn an_oversized_state_is_refused_and_never_echoed() {
    let count = Arc::new(AtomicUsize::new(0));
    let (client, mut peer) = modern(eliciting(ElicitationResponse::Decline, count.clone())).await;
    let arguments = raw("{}");
    let huge = "x".repeat(300 * 1024);
    let (called, ()) = tokio::join!(client.call_tool("big", &arguments), async {
        let request = next_message(&mut peer).await;
        peer.send(&input_required(&request["id"], Some(&huge)));
    });
    let message = called.expect_err("refused").to_string();
    assert!(message.contains("requestState"), "{message}");
    assert_eq!(count.load(Ordering::SeqCst), 0, "no handler ran");
    // Nothing was sent after the refusal: the next request is the next one.
    let (listed, ()) = tokio::join!(client.list_tools(), async {
        let request = next_message(&mut peer).await;
        assert_eq!(request["method"], "tools/list", "{request}");
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "complete", "tools": []}}));
    });
    listed.expect("lists");
}

/// An `input_required` result asking for `count` elicitations at once,
/// each message `padding` bytes long.
fn many_inputs(id: &Value, count: usize, padding: usize) -> Value {
    let requests: serde_json::Map<String, Value> = (0..count)
        .map(|index| {
            (
                format!("ask{index}"),
                json!({"method": "elicitation/create", "params": {
                    "mode": "form", "message": "x".repeat(padding),
                    "requestedSchema": {"type": "object", "properties": {}}}}),
            )
        })
        .collect();
    json!({"jsonrpc": "2.0", "id": id, "result": {
        "resultType": "input_required", "inputRequests": requests, "requestState": "s"}})
}

#[tokio::test]
async fn a_round_is_bounded_in_count_and_size_before_any_input_is_asked() {
    let count = Arc::new(AtomicUsize::new(0));
    let (client, mut peer) = modern(eliciting(ElicitationResponse::Decline, count.clone())).await;
    let arguments = raw("{}");
    // Sixteen are answered.
    let (called, ()) = tokio::join!(client.call_tool("sixteen", &arguments), async {
        let request = next_message(&mut peer).await;
        peer.send(&many_inputs(&request["id"], 16, 1));
        let retry = next_message(&mut peer).await;
        assert_eq!(
            retry["params"]["inputResponses"]
                .as_object()
                .map(serde_json::Map::len),
            Some(16)
        );
        peer.send(&complete(&retry["id"], "done"));
    });
    assert_eq!(called.expect("answered").text(), "done");
    assert_eq!(count.swap(0, Ordering::SeqCst), 16);

    // Seventeen, or 4 MiB of them, are refused before any is asked, and
    // nothing is sent back.
    for (inputs, padding, complaint) in [
        (
            17,
            1,
            "asked for 17 inputs in one round, over this client's limit of 16",
        ),
        (
            2,
            2 * 1024 * 1024 + 1,
            "over this client's limit of 4194304 per round",
        ),
    ] {
        let (called, ()) = tokio::join!(client.call_tool("greedy", &arguments), async {
            let request = next_message(&mut peer).await;
            peer.send(&many_inputs(&request["id"], inputs, padding));
        });
        let message = called.expect_err("refused").to_string();
        assert!(message.contains(complaint), "{message}");
        assert!(message.contains("none was answered"), "{message}");
        assert_eq!(count.load(Ordering::SeqCst), 0, "no handler ran");
        let (listed, ()) = tokio::join!(client.list_tools(), async {
            let request = next_message(&mut peer).await;
            assert_eq!(request["method"], "tools/list", "{request}");
            peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "complete", "tools": []}}));
        });
        listed.expect("lists");
    }
}

#[tokio::test]
async fn an_unknown_result_type_and_input_on_a_list_are_errors() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let arguments = raw("{}");
    let (called, ()) = tokio::join!(client.call_tool("t", &arguments), async {
        let request = next_message(&mut peer).await;
        // ("task" is the tasks extension's, tests/modern_tasks.rs.)
        peer.send(
            &json!({"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "later"}}),
        );
    });
    let message = called.expect_err("unknown").to_string();
    assert!(
        message.contains("unknown resultType \"later\""),
        "{message}"
    );

    let (listed, ()) = tokio::join!(client.list_tools(), async {
        let request = next_message(&mut peer).await;
        peer.send(&input_required(&request["id"], Some("s")));
    });
    let message = listed.expect_err("not allowed").to_string();
    assert!(message.contains("cannot take any"), "{message}");
}

#[tokio::test]
async fn an_elicitation_nobody_registered_a_handler_for_is_declined() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let arguments = raw("{}");
    let (called, ()) = tokio::join!(client.call_tool("needs-input", &arguments), async {
        let request = next_message(&mut peer).await;
        peer.send(&input_required(&request["id"], Some("s")));
        let retry = next_message(&mut peer).await;
        assert_eq!(
            retry["params"]["inputResponses"],
            json!({"confirm": {"action": "decline"}})
        );
        peer.send(&complete(&retry["id"], "declined"));
    });
    assert_eq!(called.expect("answered").text(), "declined");
}

#[tokio::test]
async fn a_sampling_nobody_registered_a_handler_for_fails_the_call_at_once() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let arguments = raw("{}");
    let (called, ()) = tokio::join!(client.call_tool("needs-a-model", &arguments), async {
        let request = next_message(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {
            "resultType": "input_required",
            "inputRequests": {"llm": {"method": "sampling/createMessage", "params": {
                "messages": [], "maxTokens": 10}}},
        }}));
    });
    let error = called.expect_err("no handler");
    assert!(
        matches!(&error, Error::Input { method, .. } if method == "sampling/createMessage"),
        "{error}"
    );
}

#[tokio::test]
async fn a_request_from_a_modern_server_is_refused_at_once_and_calls_go_on() {
    let count = Arc::new(AtomicUsize::new(0));
    let (client, mut peer) = modern(eliciting(ElicitationResponse::Decline, count.clone())).await;
    let arguments = raw("{}");
    let (called, ()) = tokio::join!(client.call_tool("t", &arguments), async {
        let request = next_message(&mut peer).await;
        // Forbidden in this era: a request of the server's own, and a ping.
        peer.send(
            &json!({"jsonrpc": "2.0", "id": "s1", "method": "elicitation/create",
            "params": {"message": "?", "requestedSchema": {"type": "object"}}}),
        );
        peer.send(&json!({"jsonrpc": "2.0", "id": "s2", "method": "ping"}));
        for expected in ["s1", "s2"] {
            let refusal = next_message(&mut peer).await;
            assert_eq!(refusal["id"], expected, "{refusal}");
            assert_eq!(refusal["error"]["code"], -32601, "{refusal}");
        }
        peer.send(&complete(&request["id"], "fine"));
    });
    assert_eq!(called.expect("called").text(), "fine");
    assert_eq!(count.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_request_refused_for_its_version_is_sent_once_more_then_fails() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let arguments = raw("{}");
    let refuse = |request: &Value| {
        error(
            &request["id"],
            -32022,
            "Unsupported protocol version",
            Some(json!({"supported": [MODERN_PROTOCOL_VERSION]})),
        )
    };
    let (called, ()) = tokio::join!(client.call_tool("t", &arguments), async {
        let first = next_message(&mut peer).await;
        peer.send(&refuse(&first));
        let second = next_message(&mut peer).await;
        assert_ne!(first["id"], second["id"]);
        peer.send(&complete(&second["id"], "second time"));
    });
    assert_eq!(called.expect("retried").text(), "second time");

    let (called, ()) = tokio::join!(client.call_tool("t", &arguments), async {
        let first = next_message(&mut peer).await;
        peer.send(&refuse(&first));
        let second = next_message(&mut peer).await;
        peer.send(&refuse(&second));
    });
    let error = called.expect_err("one retry only");
    assert_eq!(
        error.protocol_error().map(|e| e.code),
        Some(-32022),
        "{error}"
    );
}

#[tokio::test]
async fn a_dropped_modern_call_is_cancelled_by_notification_on_a_stream_transport() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let arguments = raw("{}");
    let request = {
        let call = client.call_tool("slow", &arguments);
        tokio::pin!(call);
        tokio::select! {
            _ = &mut call => panic!("answered"),
            request = next_message(&mut peer) => request,
        }
    };
    let cancelled = next_message(&mut peer).await;
    assert_eq!(
        cancelled["method"], "notifications/cancelled",
        "{cancelled}"
    );
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
}

#[tokio::test]
async fn a_log_level_travels_with_every_later_modern_request_and_sends_nothing_itself() {
    let (client, mut peer) = modern(ClientConfig::default()).await;
    let (listed, before) = tokio::join!(client.list_tools(), async {
        let request = next_message(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "complete", "tools": []}}));
        request
    });
    listed.expect("lists");
    assert!(
        before["params"]["_meta"]
            .get("io.modelcontextprotocol/logLevel")
            .is_none(),
        "{before}"
    );

    bounded(client.set_log_level(golem_mcp::LogLevel::Warning))
        .await
        .expect("set");
    let arguments = raw("{}");
    let mut reports = Vec::new();
    let mut on_progress = |progress: golem_mcp::Progress| reports.push(progress.progress);
    let (called, request) = tokio::join!(
        client.call_tool_with_progress("t", &arguments, &mut on_progress),
        async {
            // The first message after set_log_level is the call: no
            // logging/setLevel was sent.
            let request = next_message(&mut peer).await;
            peer.send(&complete(&request["id"], "ok"));
            request
        }
    );
    called.expect("called");
    let meta = &request["params"]["_meta"];
    assert_eq!(request["method"], "tools/call", "{request}");
    assert_eq!(
        meta["io.modelcontextprotocol/logLevel"], "warning",
        "{request}"
    );
    assert_eq!(meta["progressToken"], request["id"], "{request}");
    assert_eq!(meta[META_VERSION], MODERN_PROTOCOL_VERSION, "{request}");
}

#[tokio::test]
async fn a_server_that_lists_only_legacy_revisions_is_initialized() {
    for refusal in [false, true] {
        let (transport, mut peer) = memory_pair();
        let client = Client::new(transport);
        let (connected, _) = tokio::join!(client.initialize(), async {
            let probe = next_message(&mut peer).await;
            match refusal {
                false => peer.send(&discovered(&probe["id"], &["2025-11-25", "2025-06-18"])),
                true => peer.send(&error(
                    &probe["id"],
                    -32022,
                    "Unsupported protocol version",
                    Some(json!({"supported": ["2025-11-25"]})),
                )),
            };
            answer_initialize(&mut peer).await
        });
        let server = connected.expect("initialized");
        assert_eq!(server.era(), Era::Legacy, "refusal: {refusal}");
        assert!(
            matches!(&server.chosen, HowChosen::FellBack { probe } if probe.contains("only legacy")),
            "{:?}",
            server.chosen
        );
    }
}

#[tokio::test]
async fn a_call_dropped_while_its_input_is_being_gathered_sends_nothing_more() {
    let (started_sender, started) = tokio::sync::oneshot::channel::<()>();
    let started_sender = std::sync::Mutex::new(Some(started_sender));
    let config = ClientConfig::default().with_elicitation(move |_request, _context| {
        if let Some(sender) = started_sender.lock().expect("not poisoned").take() {
            let _ = sender.send(());
        }
        // A user who never answers.
        std::future::pending::<Result<ElicitationResponse, golem_mcp::HandlerError>>()
    });
    let (client, mut peer) = modern(config).await;
    let arguments = raw("{}");
    {
        let call = client.call_tool("ask", &arguments);
        tokio::pin!(call);
        let request = tokio::select! {
            _ = &mut call => panic!("answered"),
            request = next_message(&mut peer) => request,
        };
        peer.send(&input_required(&request["id"], Some("s")));
        tokio::select! {
            _ = &mut call => panic!("answered"),
            _ = started => {}
        }
    }
    // The call is gone with its round: the next message is the next
    // request, not a retry.
    let (listed, ()) = tokio::join!(client.list_tools(), async {
        let request = next_message(&mut peer).await;
        assert_eq!(request["method"], "tools/list", "{request}");
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"resultType": "complete", "tools": []}}));
    });
    listed.expect("lists");
}
