//! `golem run` exports one trace over OTLP/HTTP when the standard
//! variables say so (ADR 0035): `invoke_agent` → `chat {model}` and
//! `execute_tool {tool}` (carrying the MCP attributes) → the real Python
//! SDK server's `tools/call {tool}` span, exported by the server to the
//! same receiver, as its child; with the GenAI metrics, and no argument or
//! result text in any attribute.

use golem_fake_provider::FakeProvider;
use serde_json::json;

mod support;
use support::*;

#[path = "../../golem-mcp-cli/tests/support/otlp.rs"]
mod otlp;
use otlp::{Receiver, no_attribute_holds, only};

/// The argument the model sends: it must appear in no attribute.
const SECRET: &str = "argument-text-93e7";

#[test]
fn a_run_is_one_trace_down_to_the_servers_span() {
    let receiver = Receiver::start();
    let dir = TempDir::new();
    let script = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/python/otel_mcp_server.py");
    let config = dir.file(
        "otel.json",
        &json!({"mcpServers": {"py": {
            "command": peer_python(),
            "args": [script],
            "env": {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint()},
        }}})
        .to_string(),
    );
    let arguments: &'static str =
        Box::leak(format!(r#"{{"message":"{SECRET}"}}"#).into_boxed_str());
    let provider = FakeProvider::start_with(caller("echo", arguments));
    let output = run_on(&provider)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .arg("--config")
        .arg(&config)
        .arg("Echo it")
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains(&format!("Echo: {SECRET}")));

    let spans = receiver.spans(5, 10);
    let run = only(&spans, "golem", "invoke_agent");
    assert_eq!(run.kind(), "internal");
    assert_eq!(run.attribute("gen_ai.operation.name"), "invoke_agent");
    assert_eq!(run.attribute("gen_ai.provider.name"), "openai");
    assert_eq!(run.attribute("gen_ai.request.model"), "gpt-fake");
    assert!(
        run.attribute("gen_ai.usage.input_tokens").is_i64(),
        "{run:?}"
    );
    assert_eq!(run.parent(), "", "the run is the trace's root");

    let chats: Vec<_> = spans
        .iter()
        .filter(|span| span.name() == "chat gpt-fake")
        .collect();
    assert_eq!(chats.len(), 2, "two model requests");
    for chat in &chats {
        assert!(run.is_parent_of(chat));
        assert_eq!(chat.kind(), "client");
        assert_eq!(chat.attribute("gen_ai.operation.name"), "chat");
        assert_eq!(chat.attribute("gen_ai.provider.name"), "openai");
        assert_eq!(chat.attribute("gen_ai.request.model"), "gpt-fake");
        assert_eq!(chat.attribute("server.address"), "127.0.0.1");
        assert!(chat.attribute("server.port").is_i64());
        assert!(chat.attribute("gen_ai.usage.output_tokens").is_i64());
        assert!(
            chat.attribute("gen_ai.response.finish_reasons").is_array(),
            "{chat:?}"
        );
    }

    let tool = only(&spans, "golem", "execute_tool echo");
    assert!(run.is_parent_of(tool));
    assert_eq!(tool.kind(), "internal");
    assert_eq!(tool.attribute("gen_ai.operation.name"), "execute_tool");
    assert_eq!(tool.attribute("gen_ai.tool.name"), "echo");
    assert!(tool.attribute("gen_ai.tool.call.id").is_string());
    // The MCP attributes are on it: no span of the client's own.
    assert_eq!(tool.attribute("mcp.method.name"), "tools/call");
    assert_eq!(tool.attribute("mcp.protocol.version"), "2026-07-28");
    assert_eq!(tool.attribute("network.transport"), "pipe");
    assert!(tool.attribute("jsonrpc.request.id").is_string());
    assert!(
        !spans
            .iter()
            .any(|span| span.service() == "golem" && span.name() == "tools/call echo")
    );

    let server = only(&spans, "otel-py-peer", "tools/call echo");
    assert_eq!(server.kind(), "server");
    assert!(
        tool.is_parent_of(server),
        "the server's span is the tool's child: {tool:?} {server:?}"
    );
    no_attribute_holds(&spans, "golem", SECRET);

    let metrics = receiver.metrics(3, 10);
    let tokens: Vec<_> = metrics
        .iter()
        .filter(|point| point["name"] == "gen_ai.client.token.usage")
        .collect();
    assert!(
        tokens
            .iter()
            .any(|point| point["attributes"]["gen_ai.token.type"] == "input")
            && tokens
                .iter()
                .any(|point| point["attributes"]["gen_ai.token.type"] == "output"),
        "{metrics:#?}"
    );
    assert!(tokens.iter().all(|point| point["unit"] == "{token}"));
    let duration = metrics
        .iter()
        .find(|point| point["name"] == "gen_ai.client.operation.duration")
        .expect("the requests' duration");
    assert_eq!(duration["unit"], "s");
    assert_eq!(duration["attributes"]["gen_ai.operation.name"], "chat");
    assert_eq!(duration["count"], 2);
}
