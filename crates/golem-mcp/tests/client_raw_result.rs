//! `Client::call_tool_raw`: the result exactly as the server sent it, with
//! and without a progress observer, over the in-memory transport.

mod support;

use golem_mcp::memory::MemoryPeer;
use golem_mcp::{CallResult, Client, Error, Progress};
use serde_json::json;
use support::memory::next_message;
use support::raw;

async fn connected() -> (Client, MemoryPeer) {
    support::memory::connected(json!({"tools": {}})).await
}

/// Sends `text` as one message, byte for byte (`MemoryPeer::send` would
/// re-serialize a `Value`).
fn send_verbatim(peer: &MemoryPeer, text: &str) {
    assert!(
        peer.send_raw(text.as_bytes().to_vec()),
        "the client is connected"
    );
}

#[tokio::test]
async fn the_raw_result_keeps_the_servers_bytes() {
    let (client, mut peer) = connected().await;
    let arguments = raw(r#"{"message":"hi"}"#);
    let result =
        r#"{ "content" : [{"type":"text","text":"Echo: hi"}], "zeta": 1, "alpha": {"b":2,"a":1} }"#;
    let (raw, request) = tokio::join!(client.call_tool_raw("echo", &arguments, None), async {
        let request = next_message(&mut peer).await;
        send_verbatim(
            &peer,
            &format!(
                r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
                request["id"]
            ),
        );
        request
    });
    let raw = raw.expect("answered");
    assert_eq!(raw.get(), result, "untouched: spacing and key order kept");
    assert!(
        request["params"].get("_meta").is_none(),
        "no progress asked for: {request}"
    );
    let parsed: CallResult = serde_json::from_str(raw.get()).expect("a call result");
    assert_eq!(parsed.text(), "Echo: hi");
}

#[tokio::test]
async fn with_an_observer_the_raw_call_asks_for_progress_and_reports_it() {
    let (client, mut peer) = connected().await;
    let arguments = raw("{}");
    let mut reports: Vec<Progress> = Vec::new();
    let mut observe = |progress: Progress| reports.push(progress);
    let (raw, _) = tokio::join!(
        client.call_tool_raw("slow", &arguments, Some(&mut observe)),
        async {
            let request = next_message(&mut peer).await;
            let token = request["params"]["_meta"]["progressToken"].clone();
            assert!(token.is_number(), "{request}");
            for step in 1..=2 {
                peer.send(
                    &json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": step, "total": 2}}),
                );
            }
            send_verbatim(
                &peer,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{},"result":{{"content":[],"isError":true}}}}"#,
                    request["id"]
                ),
            );
        }
    );
    assert_eq!(
        raw.expect("answered").get(),
        r#"{"content":[],"isError":true}"#
    );
    let steps: Vec<f64> = reports.iter().map(|report| report.progress).collect();
    assert_eq!(steps, [1.0, 2.0]);
}

#[tokio::test]
async fn a_json_rpc_error_is_still_a_protocol_error() {
    let (client, mut peer) = connected().await;
    let arguments = raw("{}");
    let (raw, _) = tokio::join!(client.call_tool_raw("nope", &arguments, None), async {
        let request = next_message(&mut peer).await;
        peer.send(&json!({"jsonrpc": "2.0", "id": request["id"],
            "error": {"code": -32602, "message": "Unknown tool: nope"}}));
    });
    let error = raw.expect_err("an error answer");
    assert!(matches!(error, Error::Protocol { .. }), "{error:?}");
    assert_eq!(
        error.protocol_error().map(|e| e.message.as_str()),
        Some("Unknown tool: nope")
    );
}
