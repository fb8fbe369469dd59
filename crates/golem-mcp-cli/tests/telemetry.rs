//! `golem-mcp` exports its spans and metrics over OTLP/HTTP when the
//! standard variables say so (ADR 0035): a `tools/call {tool}` client span
//! with the MCP conventions' attributes, whose W3C context reaches the real
//! Python SDK server in `_meta`, so that the server's own span (exported to
//! the same receiver) is its child; over stdio, and over streamable HTTP in
//! both eras (the session's id where there is one). No argument or result
//! text in any attribute; a collector that refuses connections costs the
//! command one warning per signal and well under a second.

use std::time::{Duration, Instant};

mod support;
use support::otlp::{Receiver, Span, no_attribute_holds};
use support::*;

/// The argument the tests send: it must appear in no attribute.
const SECRET: &str = "argument-text-5cb1";

/// The traced Python server over stdio, as `golem-mcp`'s target.
fn otel_stdio() -> [String; 3] {
    [
        "--".to_owned(),
        python(),
        installed(peers().join("python/otel_mcp_server.py")),
    ]
}

/// `golem-mcp call echo` on `target`, exporting to `receiver`.
fn call_echo(receiver: &Receiver, target: &[&str]) -> std::process::Output {
    let output = golem_mcp()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .args(["call", "echo", &format!(r#"{{"message":"{SECRET}"}}"#)])
        .args(target)
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout.contains(&format!("Echo: {SECRET}")), "{stdout}");
    output
}

/// The client's `tools/call echo` span in `protocol` and the server's,
/// checked against the conventions; the client span is returned.
fn joined(spans: &[Span], protocol: &str, transport: &str) -> Span {
    let named = |service: &str, kind: &str| -> Vec<&Span> {
        spans
            .iter()
            .filter(|span| {
                span.service() == service && span.name() == "tools/call echo" && span.kind() == kind
            })
            .collect()
    };
    let client = named("golem-mcp", "client")
        .into_iter()
        .find(|span| span.attribute("mcp.protocol.version") == protocol)
        .unwrap_or_else(|| panic!("a client span in {protocol}: {spans:#?}"))
        .clone();
    let server = named("otel-py-peer", "server")
        .into_iter()
        .find(|span| client.is_parent_of(span))
        .unwrap_or_else(|| panic!("the server's span is the client's child: {spans:#?}"));
    assert_eq!(client.attribute("mcp.method.name"), "tools/call");
    assert_eq!(client.attribute("gen_ai.tool.name"), "echo");
    assert_eq!(client.attribute("gen_ai.operation.name"), "execute_tool");
    assert_eq!(client.attribute("network.transport"), transport);
    assert_eq!(server.attribute("mcp.protocol.version"), protocol);
    // The request's id, as a string, the one the server saw.
    assert_eq!(
        client.attribute("jsonrpc.request.id"),
        server.attribute("jsonrpc.request.id")
    );
    assert!(client.attribute("error.type").is_null());
    no_attribute_holds(spans, "golem-mcp", SECRET);
    client
}

#[test]
fn a_stdio_call_is_the_parent_of_the_servers_span() {
    let receiver = Receiver::start();
    // The server inherits the endpoint from golem-mcp's environment.
    let output = golem_mcp()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_HEADERS", "x-golem-test=sent")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        .args(["call", "echo", &format!(r#"{{"message":"{SECRET}"}}"#)])
        .args(otel_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let spans = receiver.spans(2, 10);
    let client = joined(&spans, "2026-07-28", "pipe");
    assert!(
        client.attribute("mcp.session.id").is_null(),
        "no session over stdio"
    );
    assert_eq!(client.kind(), "client");
    assert_eq!(client.0["resource"]["service.name"], "golem-mcp");
    assert_eq!(client.0["resource"]["deployment.environment"], "test");
    // golem-mcp's exports carry OTEL_EXPORTER_OTLP_HEADERS (the server's,
    // made by Python, do not).
    let headers = receiver.headers();
    let ours: Vec<&serde_json::Value> = headers
        .iter()
        .filter(|headers| {
            headers["user-agent"]
                .as_str()
                .is_some_and(|agent| !agent.contains("Python"))
        })
        .collect();
    assert!(!ours.is_empty(), "{headers:?}");
    assert!(
        ours.iter().all(|headers| headers["x-golem-test"] == "sent"),
        "{headers:?}"
    );

    let metrics = receiver.metrics(1, 10);
    let call = metrics
        .iter()
        .find(|point| {
            point["name"] == "mcp.client.operation.duration"
                && point["attributes"]["mcp.method.name"] == "tools/call"
        })
        .expect("the call's duration");
    assert_eq!(call["unit"], "s");
    assert_eq!(call["type"], "histogram");
    assert_eq!(call["attributes"]["gen_ai.tool.name"], "echo");
    assert_eq!(call["bounds"][0], 0.01);
    let session = metrics
        .iter()
        .find(|point| point["name"] == "mcp.client.session.duration")
        .expect("the session's duration");
    assert_eq!(session["attributes"]["network.transport"], "pipe");
}

#[test]
fn an_http_call_joins_the_servers_trace_in_both_eras() {
    let receiver = Receiver::start();
    let server = otel_http(&receiver.endpoint());

    call_echo(&receiver, &["--url", &server.url]);
    let spans = receiver.spans(2, 10);
    let modern = joined(&spans, "2026-07-28", "tcp");
    assert_eq!(modern.attribute("network.protocol.name"), "http");
    assert_eq!(modern.attribute("server.address"), "127.0.0.1");
    assert!(modern.attribute("server.port").is_i64(), "{modern:?}");
    assert!(
        modern.attribute("mcp.session.id").is_null(),
        "no session in 2026-07-28"
    );

    call_echo(
        &receiver,
        &["--url", &server.url, "--protocol", "2025-11-25"],
    );
    let spans = receiver.spans(4, 10);
    let legacy = joined(&spans, "2025-11-25", "tcp");
    let session = legacy.attribute("mcp.session.id");
    assert!(
        session.as_str().is_some_and(|id| !id.is_empty()),
        "the session's id: {legacy:?}"
    );
    // The handshake's request and notification are spans of the client's
    // too, and the server's `initialize` span is the child of the first.
    let initialize = spans
        .iter()
        .find(|span| span.service() == "golem-mcp" && span.name() == "initialize")
        .expect("the client's initialize span");
    assert_eq!(initialize.kind(), "client");
    assert!(
        spans.iter().any(|span| span.service() == "otel-py-peer"
            && span.name() == "initialize"
            && initialize.is_parent_of(span)),
        "{spans:#?}"
    );
    assert!(spans.iter().any(
        |span| span.service() == "golem-mcp" && span.name() == "notifications/initialized"
    ));
}

#[test]
fn a_servers_request_is_a_server_span_under_the_servers_own() {
    let receiver = Receiver::start();
    // In the initialize era the server asks for the name with a request of
    // its own, carrying the context of the SDK's span for it.
    let output = golem_mcp()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .args(["call", "ask", "{}", "--protocol", "2025-11-25"])
        .args(otel_stdio())
        .output()
        .expect("runs");
    assert!(output.status.success(), "{output:?}");
    let spans = receiver.spans(4, 10);
    let asked = spans
        .iter()
        .find(|span| span.service() == "golem-mcp" && span.name() == "elicitation/create")
        .unwrap_or_else(|| panic!("a span for the server's request: {spans:#?}"));
    assert_eq!(asked.kind(), "server");
    assert_eq!(asked.attribute("mcp.method.name"), "elicitation/create");
    let parent = spans
        .iter()
        .find(|span| span.is_parent_of(asked))
        .unwrap_or_else(|| panic!("the server's span is the parent: {spans:#?}"));
    assert_eq!(parent.service(), "otel-py-peer");
    let call = spans
        .iter()
        .find(|span| span.service() == "golem-mcp" && span.name() == "tools/call ask")
        .expect("the call's span");
    assert_eq!(asked.trace_id(), call.trace_id(), "one trace, the call's");
}

#[test]
fn a_collector_that_refuses_costs_a_warning_and_no_time() {
    let target = ["--", &python(), &python_server_script()];
    let timed = |endpoint: Option<&str>| {
        let mut command = golem_mcp();
        if let Some(endpoint) = endpoint {
            command.env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
        }
        let started = Instant::now();
        let output = command
            .args(["call", "add", r#"{"a":1,"b":2}"#])
            .args(target)
            .output()
            .expect("runs");
        assert!(output.status.success(), "{output:?}");
        (
            started.elapsed(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    // A port nobody listens on.
    let refused = format!("http://127.0.0.1:{}", free_port());
    let (without, _) = timed(None);
    let (with, stderr) = timed(Some(&refused));
    assert!(
        with < without + Duration::from_secs(1),
        "exporting to a refusing collector took {with:?}, against {without:?} without"
    );
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains("OTLP"))
        .collect();
    assert!(
        (1..=2).contains(&warnings.len()),
        "one warning per signal at most: {stderr}"
    );
    assert!(
        warnings
            .iter()
            .all(|line| line.starts_with("golem-mcp: warning: could not export")),
        "{stderr}"
    );
}
