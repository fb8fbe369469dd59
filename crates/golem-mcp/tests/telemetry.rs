//! The client's `tracing` spans and metric events, by OpenTelemetry's MCP
//! conventions (ADR 0035), against a scripted server: how each request
//! ended (`error.type`: a JSON-RPC code, `tool_error`, `cancelled`), an
//! outer span that declares the MCP fields taking them instead of a span
//! of the client's own, a server request handled in a server span, and
//! the operation's duration as a metric event. The export and the trace
//! context reaching real servers are tested with the commands.

mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use golem_mcp::ClientConfig;
use golem_mcp::Root;
use serde_json::{Value, json};
use support::memory::{connected, connected_with, next_message};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// A span's or an event's fields as text, by name.
type Fields = BTreeMap<String, String>;

/// What the client emitted: spans (name, fields) in creation order, and
/// the metric events' fields.
#[derive(Clone, Default)]
struct Seen {
    spans: Arc<Mutex<Vec<(String, Fields)>>>,
    metrics: Arc<Mutex<Vec<Fields>>>,
}

struct Visitor<'a>(&'a mut Fields);

impl Visit for Visitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

struct Slot(usize);

impl<S: tracing::Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Seen {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut Visitor(&mut fields));
        let mut spans = self.spans.lock().expect("lock");
        spans.push((attrs.metadata().name().to_owned(), fields));
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Slot(spans.len() - 1));
        }
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let Some(slot) = span.extensions().get::<Slot>().map(|slot| slot.0) else {
            return;
        };
        values.record(&mut Visitor(&mut self.spans.lock().expect("lock")[slot].1));
    }

    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() == "golem_mcp::metrics" {
            let mut fields = Fields::new();
            event.record(&mut Visitor(&mut fields));
            self.metrics.lock().expect("lock").push(fields);
        }
    }
}

impl Seen {
    /// Installs this layer for the current thread (the tests' runtime has
    /// one) until the guard is dropped.
    fn install() -> (Seen, tracing::subscriber::DefaultGuard) {
        let seen = Seen::default();
        let guard =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(seen.clone()));
        (seen, guard)
    }

    /// The fields of the spans whose OpenTelemetry name is `name`.
    fn named(&self, name: &str) -> Vec<Fields> {
        self.spans
            .lock()
            .expect("lock")
            .iter()
            .filter(|(_, fields)| fields.get("otel.name").map(String::as_str) == Some(name))
            .map(|(_, fields)| fields.clone())
            .collect()
    }
}

/// Answers the next `tools/call` with `reply` (a `result` or an `error`).
async fn answer_call(peer: &mut golem_mcp::memory::MemoryPeer, reply: Value) -> Value {
    let call = next_message(peer).await;
    assert_eq!(call["method"], "tools/call", "{call}");
    let mut answer = json!({"jsonrpc": "2.0", "id": call["id"]});
    answer
        .as_object_mut()
        .expect("an object")
        .extend(reply.as_object().expect("an object").clone());
    peer.send(&answer);
    call
}

#[tokio::test]
async fn each_request_is_a_client_span_that_says_how_it_ended() {
    let (seen, _guard) = Seen::install();
    let (client, mut peer) = connected(json!({"tools": {}})).await;

    let secret = json!({"text": "secret-9f2"});
    let none = json!({});
    let (ok, call) = tokio::join!(
        client.call_tool("echo", &secret),
        answer_call(&mut peer, json!({"result": {"content": []}}))
    );
    ok.expect("answered");
    let (refused, _) = tokio::join!(
        client.call_tool("refuse", &none),
        answer_call(
            &mut peer,
            json!({"error": {"code": -32602, "message": "refused: never"}})
        )
    );
    refused.expect_err("a JSON-RPC error");
    let (failed, _) = tokio::join!(
        client.call_tool("fail", &none),
        answer_call(
            &mut peer,
            json!({"result": {"content": [], "isError": true}})
        )
    );
    assert!(failed.expect("a result").is_error);

    let echo = &seen.named("tools/call echo")[0];
    assert_eq!(echo["otel.kind"], "client");
    assert_eq!(echo["mcp.method.name"], "tools/call");
    assert_eq!(echo["gen_ai.tool.name"], "echo");
    assert_eq!(echo["gen_ai.operation.name"], "execute_tool");
    assert_eq!(echo["jsonrpc.request.id"], call["id"].to_string());
    assert_eq!(
        echo["mcp.protocol.version"],
        golem_mcp::LATEST_PROTOCOL_VERSION
    );
    assert!(!echo.contains_key("error.type"), "{echo:?}");
    assert!(
        echo.values().all(|value| !value.contains("secret-9f2")),
        "no argument text: {echo:?}"
    );
    let refuse = &seen.named("tools/call refuse")[0];
    assert_eq!(refuse["error.type"], "-32602");
    assert_eq!(refuse["rpc.response.status_code"], "-32602");
    assert_eq!(refuse["otel.status_code"], "ERROR");
    assert_eq!(refuse["otel.status_description"], "refused: never");
    let fail = &seen.named("tools/call fail")[0];
    assert_eq!(fail["error.type"], "tool_error");
    assert_eq!(fail["otel.status_code"], "ERROR");

    // The handshake's requests and notification have spans of their own.
    assert_eq!(
        seen.named("initialize").len() + seen.named("server/discover").len(),
        2
    );
    assert_eq!(seen.named("notifications/initialized").len(), 1);

    let metrics = seen.metrics.lock().expect("lock").clone();
    let durations: Vec<&Fields> = metrics
        .iter()
        .filter(|fields| fields.contains_key("histogram.mcp.client.operation.duration"))
        .collect();
    assert!(
        durations
            .iter()
            .any(
                |fields| fields.get("error.type").map(String::as_str) == Some("-32602")
                    && fields["gen_ai.tool.name"] == "refuse"
            ),
        "{durations:?}"
    );
}

#[tokio::test]
async fn a_call_given_up_on_is_recorded_as_cancelled() {
    let (seen, _guard) = Seen::install();
    let (client, mut peer) = connected(json!({"tools": {}})).await;
    let none = json!({});
    let call = client.call_tool("slow", &none);
    tokio::select! {
        _ = call => panic!("nobody answers"),
        sent = next_message(&mut peer) => assert_eq!(sent["method"], "tools/call"),
    }
    let slow = &seen.named("tools/call slow")[0];
    assert_eq!(slow["error.type"], "cancelled");
    assert_eq!(slow["otel.status_code"], "ERROR");
    drop(client);
}

#[tokio::test]
async fn an_outer_span_declaring_the_mcp_fields_takes_them() {
    let (seen, _guard) = Seen::install();
    let (client, mut peer) = connected(json!({"tools": {}})).await;

    let none = json!({});
    // A span declaring `mcp.method.name`, as the agent's `execute_tool`.
    let outer = tracing::info_span!(
        "execute_tool",
        otel.name = "execute_tool echo",
        gen_ai.tool.name = "echo_as_offered",
        mcp.method.name = tracing::field::Empty,
        mcp.protocol.version = tracing::field::Empty,
        jsonrpc.request.id = tracing::field::Empty,
        network.transport = tracing::field::Empty,
    );
    let (ok, _) = tokio::join!(
        tracing::Instrument::instrument(client.call_tool("echo", &none), outer.clone()),
        answer_call(&mut peer, json!({"result": {"content": []}}))
    );
    ok.expect("answered");
    assert!(
        seen.named("tools/call echo").is_empty(),
        "no span of its own"
    );
    let taken = &seen.named("execute_tool echo")[0];
    assert_eq!(taken["mcp.method.name"], "tools/call");
    assert_eq!(
        taken["mcp.protocol.version"],
        golem_mcp::LATEST_PROTOCOL_VERSION
    );
    assert!(taken.contains_key("jsonrpc.request.id"), "{taken:?}");
    assert_eq!(
        taken["gen_ai.tool.name"], "echo_as_offered",
        "the outer span keeps its own name for the tool"
    );

    // A span that declares nothing of MCP gets a child span.
    let plain = tracing::info_span!("work");
    let (ok, _) = tokio::join!(
        tracing::Instrument::instrument(client.call_tool("echo", &none), plain),
        answer_call(&mut peer, json!({"result": {"content": []}}))
    );
    ok.expect("answered");
    assert_eq!(seen.named("tools/call echo").len(), 1);
}

#[tokio::test]
async fn a_servers_request_is_handled_in_a_server_span() {
    let (seen, _guard) = Seen::install();
    let config = ClientConfig::default().with_roots(vec![Root::new("file:///a")]);
    let (_client, mut peer, _) = connected_with(config, json!({})).await;
    peer.send(&json!({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}));
    let answer = next_message(&mut peer).await;
    assert_eq!(answer["id"], "r1");
    peer.send(
        &json!({"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage", "params": {}}),
    );
    let refused = next_message(&mut peer).await;
    assert_eq!(refused["error"]["code"], -32601, "{refused}");

    let roots = &seen.named("roots/list")[0];
    assert_eq!(roots["otel.kind"], "server");
    assert_eq!(roots["mcp.method.name"], "roots/list");
    assert_eq!(roots["jsonrpc.request.id"], "r1");
    assert!(!roots.contains_key("error.type"), "{roots:?}");
    let sampling = &seen.named("sampling/createMessage")[0];
    assert_eq!(sampling["otel.kind"], "server");
    assert_eq!(sampling["error.type"], "-32601");
}
