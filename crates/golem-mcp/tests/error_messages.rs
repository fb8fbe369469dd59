//! What an error says about what failed (issue 38, point 6): a refused
//! connection names the URL it could not reach, on either HTTP client and
//! either HTTP transport, with its cause once; a refused answer its status's
//! reason, and that its body was empty when it was; and a handshake cut
//! short by the caller's bound names the request the server never answered
//! (the era probe, `server/discover`, before any `initialize`).
#![cfg(feature = "http")]

mod support;

use golem_mcp::{Client, HttpConfig, HttpTransport, SseTransport, TransportError};
use serde_json::json;
use support::fake_http::FakeHttp;
use support::{args, bounded};

/// A URL on 127.0.0.1 where nothing listens: a port bound, then let go.
fn refused_url(path: &str) -> (String, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener);
    (
        format!("http://{address}"),
        format!("http://{address}{path}"),
    )
}

/// Checks that `message` is `head` followed by the refusal's cause, said
/// once and nothing else after it.
#[track_caller]
fn assert_refused(message: &str, head: &str) {
    let cause = message
        .strip_prefix(head)
        .unwrap_or_else(|| panic!("{message:?} does not start with {head:?}"));
    assert!(
        cause.starts_with("Connection refused"),
        "the cause follows at once: {message}"
    );
    assert_eq!(
        message.matches("onnection refused").count(),
        1,
        "the cause once: {message}"
    );
    assert!(!message.contains('\n'), "one line: {message}");
}

#[tokio::test]
async fn a_refused_connection_names_the_url_it_could_not_reach() {
    let (_, url) = refused_url("/mcp");
    let client = Client::new(HttpTransport::new(HttpConfig::new(&url)).expect("valid"));
    let error = bounded(client.initialize()).await.expect_err("refused");
    match error.transport_error() {
        Some(TransportError::Http {
            context: "POST",
            url: Some(named),
            ..
        }) => assert_eq!(*named, url),
        other => panic!("not an HTTP failure naming its URL: {other:?}"),
    }
    // The first request is the era probe (ADR 0018).
    assert_refused(
        &error.to_string(),
        &format!("mcp: server/discover: POST {url}: "),
    );
    // A failed handshake waits on nothing.
    assert_eq!(client.handshake_waiting_on(), None);
}

#[tokio::test]
async fn a_refused_connection_through_a_clients_own_reqwest_names_the_url_too() {
    let (_, url) = refused_url("/mcp");
    let config = HttpConfig {
        client: Some(reqwest::Client::new()),
        ..HttpConfig::new(&url)
    };
    let client = Client::new(HttpTransport::new(config).expect("valid"));
    let error = bounded(client.initialize()).await.expect_err("refused");
    assert_refused(
        &error.to_string(),
        &format!("mcp: server/discover: POST {url}: "),
    );
}

#[tokio::test]
async fn a_refused_http_sse_stream_names_the_url_after_the_method() {
    let (_, url) = refused_url("/sse");
    let client = Client::new(SseTransport::new(HttpConfig::new(&url)).expect("valid"));
    let error = bounded(client.initialize()).await.expect_err("refused");
    assert_refused(
        &error.to_string(),
        &format!("mcp: initialize: GET {url} (open the event stream): "),
    );
}

#[tokio::test]
async fn the_url_named_keeps_no_credential() {
    let (base, _) = refused_url("/mcp");
    let url = format!(
        "{}/mcp?api_key=hunter2",
        base.replacen("http://", "http://user:s3cret@", 1)
    );
    let client = Client::new(HttpTransport::new(HttpConfig::new(&url)).expect("valid"));
    let error = bounded(client.initialize()).await.expect_err("refused");
    let message = error.to_string();
    assert_refused(
        &message,
        &format!("mcp: server/discover: POST {base}/mcp: "),
    );
    for secret in ["hunter2", "s3cret", "user"] {
        assert!(
            !format!("{message} {error:?}").contains(secret),
            "{message}"
        );
    }
}

/// A client connected to the legacy fake.
async fn connected(fake: &FakeHttp) -> Client {
    let transport = HttpTransport::new(HttpConfig::new(fake.url())).expect("valid");
    let client = Client::new(transport);
    bounded(client.initialize()).await.expect("connects");
    client
}

#[tokio::test]
async fn an_empty_500_says_its_reason_and_that_its_body_was_empty() {
    let fake = FakeHttp::start().await;
    let client = connected(&fake).await;
    let error = bounded(client.call_tool("status", &args(json!({"status": 500}))))
        .await
        .expect_err("500");
    assert_eq!(
        error.to_string(),
        format!(
            "mcp: tools/call status: HTTP 500 Internal Server Error from {} (empty body)",
            fake.url()
        )
    );
    // A body is shown as before, and the reason with it.
    let error = bounded(client.call_tool(
        "status",
        &args(json!({"status": 502, "content_type": "text/plain", "body": "upstream down"})),
    ))
    .await
    .expect_err("502");
    assert_eq!(
        error.to_string(),
        format!(
            "mcp: tools/call status: HTTP 502 Bad Gateway from {}: upstream down",
            fake.url()
        )
    );
}

/// Runs `initialize` until the fake has seen a POST of `method`, then drops
/// it, as a caller's bound that ran out does.
async fn initialize_until_seen(client: &Client, fake: &FakeHttp, method: &str) {
    let seen = fake.wait_for(|fake| fake.posts_of(method).into_iter().next());
    tokio::select! {
        result = client.initialize() => panic!("the server was to stay silent: {result:?}"),
        _ = bounded(seen) => {}
    }
}

#[tokio::test]
async fn a_handshake_cut_short_names_the_probe_the_server_never_answered() {
    let fake = FakeHttp::start().await;
    *fake.knobs().silent_to.lock().expect("lock") = Some("server/discover");
    let client = Client::new(HttpTransport::new(HttpConfig::new(fake.url())).expect("valid"));
    assert_eq!(client.handshake_waiting_on(), None, "not started");
    initialize_until_seen(&client, &fake, "server/discover").await;
    assert_eq!(client.handshake_waiting_on(), Some("server/discover"));
    assert!(
        fake.posts_of("initialize").is_empty(),
        "no initialize was sent"
    );
}

#[tokio::test]
async fn a_handshake_cut_short_after_the_fallback_names_initialize() {
    let fake = FakeHttp::start().await;
    *fake.knobs().silent_to.lock().expect("lock") = Some("initialize");
    let client = Client::new(HttpTransport::new(HttpConfig::new(fake.url())).expect("valid"));
    initialize_until_seen(&client, &fake, "initialize").await;
    assert_eq!(client.handshake_waiting_on(), Some("initialize"));

    // Once the handshake is done, nothing is waited on.
    *fake.knobs().silent_to.lock().expect("lock") = None;
    let fresh = connected(&fake).await;
    assert_eq!(fresh.handshake_waiting_on(), None);
}
