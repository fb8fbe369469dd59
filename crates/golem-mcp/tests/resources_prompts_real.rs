//! Resources, prompts and completion against real servers nobody here
//! wrote, installed by `scripts/install-peers.sh`: the reference
//! `@modelcontextprotocol/server-everything` over stdio and streamable
//! HTTP, and the official Python SDK's server
//! (`peers/python/mcp_py_server.py`) over stdio and HTTP. A missing peer
//! fails the test.
#![cfg(feature = "http")]

mod support;

use std::collections::BTreeMap;

use golem_mcp::{
    Client, CompletionRef, Content, Error, HttpConfig, HttpTransport, ResourceContents, Role,
    StdioConfig, StdioTransport,
};
use support::{
    arguments, everything_http, everything_stdio, peer_bounded, python_http, python_stdio,
};

async fn initialized(client: Client) -> Client {
    peer_bounded(client.initialize())
        .await
        .expect("initializes");
    client
}

/// Everything server-everything offers beyond tools, the same over either
/// transport.
async fn exercise_everything(client: &Client) {
    peer_bounded(client.ping()).await.expect("ping");

    // Resources: seven static documents, read as text.
    let resources = peer_bounded(client.list_resources()).await.expect("lists");
    let documents: Vec<_> = resources
        .iter()
        .filter(|r| r.uri.starts_with("demo://resource/static/document/"))
        .collect();
    assert_eq!(documents.len(), 7, "{resources:?}");
    let document = documents[0];
    let read = peer_bounded(client.read_resource(&document.uri))
        .await
        .expect("reads");
    assert_eq!(read.contents.len(), 1);
    assert_eq!(read.contents[0].uri(), document.uri);
    let text = read.text().expect("a text document");
    assert!(!text.is_empty());

    // Two templates, expanded by the caller; the blob one decodes.
    let templates = peer_bounded(client.list_resource_templates())
        .await
        .expect("lists templates");
    assert_eq!(templates.len(), 2, "{templates:?}");
    let blob = templates
        .iter()
        .find(|t| t.uri_template.contains("/blob/"))
        .expect("the blob template");
    let template = blob.template().expect("parses");
    assert_eq!(template.variables().collect::<Vec<_>>(), ["resourceId"]);
    let uri = template.expand(&BTreeMap::from([("resourceId", "3")]));
    assert_eq!(uri, "demo://resource/dynamic/blob/3");
    let read = peer_bounded(client.read_resource(&uri))
        .await
        .expect("reads");
    assert!(matches!(read.contents[0], ResourceContents::Blob { .. }));
    let bytes = read.contents[0].decode().expect("base64");
    let decoded = String::from_utf8(bytes).expect("UTF-8 inside");
    assert!(
        decoded.starts_with("Resource 3: This is a base64 blob"),
        "{decoded}"
    );

    // Completion of a template variable.
    let completion = peer_bounded(client.complete(
        CompletionRef::ResourceTemplate(&blob.uri_template),
        "resourceId",
        "12",
        &serde_json::json!({}),
    ))
    .await
    .expect("completes");
    assert_eq!(completion.values, ["12"]);

    // Prompts: four, one with completable arguments.
    let prompts = peer_bounded(client.list_prompts())
        .await
        .expect("lists prompts");
    let names: Vec<&str> = prompts.iter().map(|p| p.name.as_str()).collect();
    for expected in [
        "simple-prompt",
        "args-prompt",
        "completable-prompt",
        "resource-prompt",
    ] {
        assert!(names.contains(&expected), "{expected} missing: {names:?}");
    }
    let got = peer_bounded(client.get_prompt("args-prompt", &arguments(&[("city", "Paris")])))
        .await
        .expect("gets");
    assert_eq!(got.messages[0].role, Role::User);
    assert_eq!(
        got.messages[0].content,
        Content::Text {
            text: "What's weather in Paris?".into()
        }
    );
    let refused = peer_bounded(client.get_prompt("args-prompt", &arguments(&[("state", "CA")])))
        .await
        .expect_err("city is required");
    assert!(
        matches!(refused, Error::InvalidRequest { .. }),
        "{refused:?}"
    );
    assert!(refused.to_string().contains("\"city\""), "{refused}");

    // An embedded resource is kept whole.
    let got = peer_bounded(client.get_prompt(
        "resource-prompt",
        &arguments(&[("resourceType", "Text"), ("resourceId", "2")]),
    ))
    .await
    .expect("gets");
    assert!(
        got.messages.iter().any(|m| matches!(
            &m.content,
            Content::Resource { uri, text: Some(text), .. }
                if uri == "demo://resource/dynamic/text/2" && text.starts_with("Resource 2:")
        )),
        "{got:?}"
    );

    // Completion with the arguments already chosen as context.
    let completion = peer_bounded(client.complete(
        CompletionRef::Prompt("completable-prompt"),
        "name",
        "",
        &arguments(&[("department", "Engineering")]),
    ))
    .await
    .expect("completes");
    assert_eq!(completion.values, ["Alice", "Bob", "Charlie"]);
    let completion = peer_bounded(client.complete(
        CompletionRef::Prompt("completable-prompt"),
        "department",
        "S",
        &serde_json::json!({}),
    ))
    .await
    .expect("completes");
    assert_eq!(completion.values, ["Sales", "Support"]);

    // Subscriptions: the server's simulated updates reach the subscriber.
    let mut subscription = peer_bounded(client.subscribe_resource(&document.uri))
        .await
        .expect("subscribes");
    peer_bounded(client.call_tool("toggle-subscriber-updates", &serde_json::json!({})))
        .await
        .expect("updates on");
    assert!(
        peer_bounded(subscription.updated()).await,
        "an update arrives"
    );
    peer_bounded(subscription.unsubscribe())
        .await
        .expect("unsubscribes");
    peer_bounded(client.call_tool("toggle-subscriber-updates", &serde_json::json!({})))
        .await
        .expect("updates off");
}

#[tokio::test]
async fn server_everything_over_stdio() {
    let client = initialized(Client::new(
        StdioTransport::spawn(everything_stdio()).expect("spawns"),
    ))
    .await;
    exercise_everything(&client).await;
    client.close().await.expect("closes");
}

#[tokio::test]
async fn server_everything_over_streamable_http() {
    let peer = everything_http();
    let client = initialized(Client::new(
        HttpTransport::new(HttpConfig::new(peer.url.clone())).expect("valid"),
    ))
    .await;
    exercise_everything(&client).await;
    client.close().await.expect("closes");
}

/// What the Python SDK's server offers: a text and a blob resource, a
/// template, a prompt with a required and an optional argument, completion
/// that reads the context.
async fn exercise_python(client: &Client) {
    let resources = peer_bounded(client.list_resources()).await.expect("lists");
    let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(uris, ["note://readme", "note://logo"]);
    let read = peer_bounded(client.read_resource("note://readme"))
        .await
        .expect("reads");
    assert_eq!(read.text().as_deref(), Some("Hello from the Python peer."));
    let read = peer_bounded(client.read_resource("note://logo"))
        .await
        .expect("reads");
    assert_eq!(read.contents[0].decode().expect("base64"), [0, 1, 2, 255]);

    let templates = peer_bounded(client.list_resource_templates())
        .await
        .expect("lists");
    assert_eq!(templates[0].uri_template, "colour://{name}");
    let uri = templates[0]
        .template()
        .expect("parses")
        .expand(&BTreeMap::from([("name", "red")]));
    let read = peer_bounded(client.read_resource(&uri))
        .await
        .expect("reads");
    assert_eq!(read.text().as_deref(), Some("the colour red"));

    let prompts = peer_bounded(client.list_prompts()).await.expect("lists");
    assert_eq!(prompts[0].name, "paint");
    assert!(prompts[0].arguments[0].required);
    assert!(!prompts[0].arguments[1].required);
    let got = peer_bounded(client.get_prompt(
        "paint",
        &arguments(&[("colour", "blue"), ("shade", "navy")]),
    ))
    .await
    .expect("gets");
    assert_eq!(
        got.messages[0].content,
        Content::Text {
            text: "Paint something blue (navy).".into()
        }
    );
    let refused =
        peer_bounded(client.get_prompt("paint", &arguments(&[("colour", "red"), ("size", "L")])))
            .await
            .expect_err("size is unknown");
    assert!(
        refused.to_string().contains("unknown argument \"size\""),
        "{refused}"
    );

    let completion = peer_bounded(client.complete(
        CompletionRef::Prompt("paint"),
        "shade",
        "",
        &arguments(&[("colour", "blue")]),
    ))
    .await
    .expect("completes");
    assert_eq!(completion.values, ["navy", "teal"]);
    assert_eq!(completion.total, Some(2));
    assert!(!completion.has_more);
    let completion = peer_bounded(client.complete(
        CompletionRef::ResourceTemplate("colour://{name}"),
        "name",
        "g",
        &serde_json::json!({}),
    ))
    .await
    .expect("completes");
    assert_eq!(completion.values, ["green"]);
}

#[tokio::test]
async fn the_python_sdk_server_over_stdio() {
    let client = initialized(Client::new(
        StdioTransport::spawn(python_stdio()).expect("spawns"),
    ))
    .await;
    exercise_python(&client).await;
    client.close().await.expect("closes");
}

#[tokio::test]
async fn the_python_sdk_server_over_http() {
    let server = python_http(&[]);
    let client = initialized(Client::new(
        HttpTransport::new(HttpConfig::new(server.url.clone())).expect("valid"),
    ))
    .await;
    exercise_python(&client).await;
    client.close().await.expect("closes");
}

#[tokio::test]
async fn a_read_larger_than_the_message_limit_is_an_error_not_unbounded_memory() {
    let client = initialized(Client::new(
        StdioTransport::spawn(StdioConfig {
            // Room for the handshake, not for the 10 kB document.
            max_message_bytes: 6_000,
            ..everything_stdio()
        })
        .expect("spawns"),
    ))
    .await;
    let error = peer_bounded(client.read_resource("demo://resource/static/document/features.md"))
        .await
        .expect_err("too large");
    assert!(
        matches!(
            error.transport_error(),
            Some(golem_mcp::TransportError::MessageTooLarge { limit: 6_000 })
        ),
        "{error:?}"
    );
}
