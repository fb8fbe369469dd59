//! Test fixtures of `elicit/`: elicitation requests as a client's handler
//! receives them, since the library offers no other way to build a `Form`.

use golem_mcp::memory::memory_pair;
use golem_mcp::{
    Client, ClientConfig, ElicitationRequest, ElicitationResponse, Form, LATEST_PROTOCOL_VERSION,
    RequestContext,
};
use serde_json::json;

/// The request a client's handler receives for `params`: the library
/// offers no other way to build a `Form` (its types are non-exhaustive).
pub fn received(params: &str) -> ElicitationRequest {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
        let config = ClientConfig::default().with_elicitation(
            move |request: ElicitationRequest, _: RequestContext| {
                let _ = sender.send(request);
                async { Ok(ElicitationResponse::Decline) }
            },
        );
        let (transport, mut peer) = memory_pair();
        let client = Client::with_config(transport, config);
        let script = async {
            // A legacy server: it refuses the probe, then initializes.
            let probe = peer.recv().await.expect("server/discover");
            peer.send(&json!({"jsonrpc": "2.0", "id": probe["id"],
                "error": {"code": -32601, "message": "Method not found"}}));
            let initialize = peer.recv().await.expect("initialize");
            peer.send(
                &json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
                "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                "serverInfo": {"name": "scripted", "version": "1"}}}),
            );
            peer.recv().await.expect("initialized");
        };
        let (initialized, ()) = tokio::join!(client.initialize(), script);
        initialized.expect("initialized");
        peer.send_raw(format!(
            r#"{{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {params}}}"#
        ));
        receiver.recv().await.expect("the handler ran")
    })
}

/// The form of an elicitation request with this `requestedSchema`.
pub fn form(schema: &str) -> Form {
    match received(&format!(
        r#"{{"message": "m", "requestedSchema": {schema}}}"#
    )) {
        ElicitationRequest::Form { form, .. } => form,
        other => panic!("not a form: {other:?}"),
    }
}

/// A schema with a field of every kind, some required, some with defaults.
pub const EVERY_KIND: &str = r#"{"type": "object", "properties": {
    "name": {"type": "string", "title": "Name", "description": "Your full name", "minLength": 2},
    "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
    "agree": {"type": "boolean"},
    "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}], "default": "h1"},
    "tools": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 1, "default": ["a"]}
}, "required": ["name", "agree"]}"#;
