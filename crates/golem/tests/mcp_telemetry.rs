//! The spans of a run with a bridged MCP tool (ADR 0035): the MCP
//! request's attributes go on the agent's `execute_tool` span, with no span
//! of the client's own, unless `TelemetryConfig::separate_mcp_spans` asks
//! for both. A test binary of its own: every test here installs its
//! subscriber, so no thread without one caches a callsite as unwanted.

use std::collections::BTreeMap;
use std::sync::Arc;

use golem_agent::testmodel::{ScriptedModel, tool_calls_response};
use golem_agent::{Agent, AgentConfig, TelemetryConfig};
use tracing_subscriber::layer::SubscriberExt;

mod support;
use support::bounded;
use support::spans::{Seen, Spans};

#[path = "support/lookup_server.rs"]
mod lookup_server;
use lookup_server::{connected, lookup_call};

/// The spans of one run whose model calls `lookup` once, with `telemetry`.
async fn spans_of_lookup(telemetry: TelemetryConfig) -> Vec<Seen> {
    let spans = Spans::default();
    let _guard =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let client = connected().await;
    let tools = golem_agent::mcp::as_tools::<()>(&client)
        .await
        .expect("bridged");
    let model = ScriptedModel::new([tool_calls_response([lookup_call()])]);
    let agent = Agent::new(
        Arc::new(model),
        golem_agent::decode::text,
        AgentConfig {
            tools,
            telemetry,
            ..AgentConfig::default()
        },
    )
    .expect("valid agent");
    // The server answers the call with a JSON-RPC error: the run fails.
    let _ = bounded("the run", agent.run((), "Look it up.")).await;
    spans.0.lock().expect("lock").clone()
}

/// The fields, quotes dropped, of the spans whose OpenTelemetry name is
/// `name`.
fn named(spans: &[Seen], name: &str) -> Vec<BTreeMap<String, String>> {
    spans
        .iter()
        .map(|(_, fields)| {
            fields
                .iter()
                .map(|(key, value)| (key.clone(), value.trim_matches('"').to_owned()))
                .collect::<BTreeMap<_, _>>()
        })
        .filter(|fields| fields.get("otel.name").map(String::as_str) == Some(name))
        .collect()
}

#[tokio::test]
async fn a_bridged_call_puts_its_mcp_attributes_on_the_execute_tool_span() {
    let spans = spans_of_lookup(TelemetryConfig::default()).await;
    let tool = named(&spans, "execute_tool lookup");
    assert_eq!(tool.len(), 1, "{spans:?}");
    assert_eq!(
        tool[0].get("mcp.method.name").map(String::as_str),
        Some("tools/call"),
        "{spans:#?}"
    );
    assert_eq!(tool[0]["rpc.response.status_code"], "-32603");
    assert_eq!(tool[0]["gen_ai.tool.name"], "lookup");
    assert!(
        named(&spans, "tools/call lookup").is_empty(),
        "no span of the client's own"
    );

    let separate = TelemetryConfig::default().with_separate_mcp_spans(true);
    let spans = spans_of_lookup(separate).await;
    let tool = named(&spans, "execute_tool lookup");
    assert!(!tool[0].contains_key("mcp.method.name"), "{:?}", tool[0]);
    let own = named(&spans, "tools/call lookup");
    assert_eq!(own.len(), 1, "{spans:?}");
    assert_eq!(own[0]["error.type"], "-32603");
}
