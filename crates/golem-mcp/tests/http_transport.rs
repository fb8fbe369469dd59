//! The streamable-HTTP transport against the fake HTTP server
//! (`support/fake_http.rs`), which checks what a spec-true client must send
//! and answers in every way a real server may: JSON, event streams framed
//! every legal way, 202, expired sessions, errors, streams that end early
//! with and without event ids.
#![cfg(feature = "http")]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use golem_mcp::{
    Client, Error, HttpConfig, HttpTransport, Inbound, LATEST_PROTOCOL_VERSION, Observed, Outgoing,
    ResumePolicy, Transport, TransportError, WireEvent,
};
use serde_json::{Value, json};
use support::calls::call_text;
use support::fake_http::{FakeHttp, Get, Seen};
use support::{args, bounded, logs};
use tokio::sync::mpsc;

async fn connect_with(config: HttpConfig) -> Client {
    let client = Client::new(HttpTransport::new(config).expect("valid config"));
    bounded(client.initialize()).await.expect("initializes");
    client
}

async fn setup() -> (FakeHttp, Client) {
    let fake = FakeHttp::start().await;
    let client = connect_with(HttpConfig::new(fake.url())).await;
    (fake, client)
}

/// The resumptions the fake has seen: `GET`s with a `Last-Event-ID`.
fn resumptions(fake: &FakeHttp) -> Vec<Seen> {
    fake.gets()
        .into_iter()
        .filter(Seen::is_resumption)
        .collect()
}

// ---- configuration ------------------------------------------------------------

#[test]
fn invalid_configuration_names_the_field() {
    let cases = [
        (HttpConfig::new(""), "url"),
        (HttpConfig::new("not a url"), "url"),
        (HttpConfig::new("ftp://example.com/mcp"), "url"),
        (
            HttpConfig {
                headers: vec![("Bad Name".into(), "x".into())],
                ..HttpConfig::new("http://127.0.0.1/mcp")
            },
            "headers[0] (\"Bad Name\")",
        ),
        (
            HttpConfig {
                headers: vec![
                    ("X-Ok".into(), "1".into()),
                    ("X-Bad".into(), "line\nbreak".into()),
                ],
                ..HttpConfig::new("http://127.0.0.1/mcp")
            },
            "headers[1] (\"X-Bad\")",
        ),
    ];
    for (config, field) in cases {
        match HttpTransport::new(config) {
            Err(Error::InvalidConfig { field: named, .. }) => assert_eq!(named, field),
            other => panic!("expected InvalidConfig for {field}, got {other:?}"),
        }
    }
}

#[test]
fn header_values_never_appear_in_debug_output() {
    let config = HttpConfig {
        headers: vec![("Authorization".into(), "Bearer hunter2".into())],
        ..HttpConfig::new("http://127.0.0.1/mcp")
    };
    assert!(!format!("{config:?}").contains("hunter2"));
    let transport = HttpTransport::new(config).expect("valid");
    assert!(!format!("{transport:?}").contains("hunter2"));
}

// ---- answers ---------------------------------------------------------------------

#[tokio::test]
async fn json_and_event_stream_answers_with_session_and_version_headers() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let client = connect_with(HttpConfig {
        headers: vec![("X-Api-Key".into(), "k-123".into())],
        ..HttpConfig::new(url)
    })
    .await;
    // The fake answers 400 without the session id or the negotiated version.
    let tools = bounded(client.list_tools()).await.expect("lists");
    assert_eq!(tools.len(), 1);
    assert_eq!(
        call_text(&client, "json_echo", json!({"text": "as json"}))
            .await
            .expect("JSON"),
        "as json"
    );
    assert_eq!(
        call_text(&client, "echo", json!({"text": "as events"}))
            .await
            .expect("SSE"),
        "as events"
    );
    bounded(client.close()).await.expect("closes");

    let seen = fake.seen();
    assert!(
        seen.iter()
            .all(|seen| seen.header("x-api-key") == Some("k-123")),
        "extra headers ride on every request"
    );
    let initialized = fake.posts_of("notifications/initialized");
    assert_eq!(initialized.len(), 1);
    assert_eq!(initialized[0].header("mcp-session-id"), Some("session-1"));
    assert_eq!(
        initialized[0].header("mcp-protocol-version"),
        Some(LATEST_PROTOCOL_VERSION)
    );
    let initialize = &fake.posts_of("initialize")[0];
    assert_eq!(
        initialize.header("mcp-protocol-version"),
        None,
        "no version before it is negotiated"
    );
}

/// An HTTP transport whose received messages stop reaching the client once
/// `deaf` is set: what it receives then is counted and dropped, as if the
/// client's reader had stopped. Requests' sends are forwarded as they are.
struct Deaf {
    inner: HttpTransport,
    deaf: Arc<AtomicBool>,
    dropped: Arc<AtomicUsize>,
}

impl Transport for Deaf {
    async fn send(&self, message: Outgoing) -> Result<(), TransportError> {
        self.inner.send(message).await
    }

    async fn send_request(&self, message: Outgoing) -> Result<Option<Bytes>, TransportError> {
        self.inner.send_request(message).await
    }

    async fn recv(&self) -> Result<Inbound, TransportError> {
        loop {
            let received = self.inner.recv().await?;
            if !self.deaf.load(Ordering::SeqCst) {
                return Ok(received);
            }
            self.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }

    async fn close(&self) -> Result<(), TransportError> {
        self.inner.close().await
    }

    fn returns_answers(&self) -> bool {
        self.inner.returns_answers()
    }
}

#[tokio::test]
async fn a_json_answer_goes_to_its_caller_not_through_the_reader() {
    let fake = FakeHttp::start().await;
    let deaf = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicUsize::new(0));
    let client = Client::new(Deaf {
        inner: HttpTransport::new(HttpConfig::new(fake.url())).expect("valid config"),
        deaf: Arc::clone(&deaf),
        dropped: Arc::clone(&dropped),
    });
    bounded(client.initialize()).await.expect("initializes");
    deaf.store(true, Ordering::SeqCst);
    // Through the reader, each answer would be dropped and its call would
    // wait for ever.
    let tools = bounded(client.list_tools()).await.expect("lists");
    assert_eq!(tools.len(), 1);
    assert_eq!(
        call_text(&client, "json_echo", json!({"text": "direct"}))
            .await
            .expect("JSON"),
        "direct"
    );
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        0,
        "nothing came through the reader"
    );
    bounded(client.close()).await.expect("closes");
}

#[tokio::test]
async fn an_observer_sees_a_json_answer_once() {
    let fake = FakeHttp::start().await;
    let received = Arc::new(std::sync::Mutex::new(Vec::<Value>::new()));
    let seen = Arc::clone(&received);
    let transport = HttpTransport::new(HttpConfig::new(fake.url())).expect("valid config");
    let client = Client::new(Observed::new(transport, move |event: WireEvent<'_>| {
        if let WireEvent::Received(message) = event {
            let message = serde_json::from_slice(message).expect("JSON");
            seen.lock().expect("lock").push(message);
        }
    }));
    bounded(client.initialize()).await.expect("initializes");
    assert_eq!(
        call_text(&client, "json_echo", json!({"text": "seen"}))
            .await
            .expect("JSON"),
        "seen"
    );
    bounded(client.close()).await.expect("closes");
    let received = received.lock().expect("lock");
    let answers: Vec<_> = received
        .iter()
        .filter(|message| message["result"]["content"][0]["text"] == "seen")
        .collect();
    assert_eq!(answers.len(), 1, "{received:#?}");
}

#[tokio::test]
async fn every_sse_framing_rule_is_understood() {
    let (_fake, client) = setup().await;
    assert_eq!(
        call_text(&client, "framing", json!({}))
            .await
            .expect("framed"),
        "framed"
    );
}

#[tokio::test]
async fn events_are_delivered_as_they_arrive() {
    let (fake, client) = setup().await;
    // A progress report, then the answer only once the test says so: a
    // transport that buffered the stream until its end would never show
    // the report.
    let arguments = args(json!({"n": 0, "answer": "sse", "progress": true}));
    let (first_report, mut reported) = mpsc::unbounded_channel();
    let releaser = {
        let fake = fake.clone();
        tokio::spawn(async move {
            reported.recv().await;
            fake.answer(0, "released");
        })
    };
    let result = bounded(
        client.call_tool_with_progress("hold", &arguments, move |_| {
            let _ = first_report.send(());
        }),
    )
    .await
    .expect("answered after the release");
    assert_eq!(result.text(), "released");
    releaser.await.expect("released");
}

#[tokio::test]
async fn a_server_request_on_the_stream_is_answered_with_a_post() {
    let (fake, client) = setup().await;
    // The server's ping first; the answer once the client's pong arrived.
    let ping = json!({"jsonrpc": "2.0", "id": "srv-ping", "method": "ping"});
    let (answered, ()) = tokio::join!(
        call_text(
            &client,
            "hold",
            json!({"n": 0, "answer": "sse", "request": ping})
        ),
        async {
            bounded(fake.wait_for(|fake| fake.response_to(&json!("srv-ping")))).await;
            fake.answer(0, "pong received");
        }
    );
    assert_eq!(answered.expect("answered"), "pong received");
}

#[tokio::test]
async fn a_request_answered_with_202_is_an_error() {
    let (_fake, client) = setup().await;
    let error = call_text(&client, "status", json!({"status": 202}))
        .await
        .expect_err("no answer");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::StreamEnded { .. })
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_500_with_html_is_a_status_error_with_a_bounded_excerpt() {
    let (fake, client) = setup().await;
    let error = call_text(&client, "status", html500())
        .await
        .expect_err("500");
    let status = error.http_status().expect("a status error");
    assert_eq!(status.status, 500);
    assert_eq!(status.url, fake.url());
    assert!(
        status.body_excerpt.starts_with("<html>"),
        "{}",
        status.body_excerpt
    );
    assert!(status.body_excerpt.len() <= 1024);
    let shown = status.to_string();
    let (_, body) = shown.split_once(": ").expect("the body follows");
    assert!(
        body.starts_with("Internal Server Error xxx") && body.ends_with('…'),
        "the page's text, not its markup: {shown}"
    );
    assert!(
        !shown.contains('\n') && body.chars().count() <= 201,
        "{shown}"
    );
    assert!(!error.is_session_expired());
    // The session is intact: the next call works.
    assert_eq!(
        call_text(&client, "json_echo", json!({"text": "ok"}))
            .await
            .expect("works"),
        "ok"
    );
}

/// A 500 whose body is a web page of some 5 kB.
fn html500() -> Value {
    let page = format!(
        "<html><body><h1>Internal Server Error</h1>{}</body></html>",
        "x".repeat(5000)
    );
    json!({"status": 500, "content_type": "text/html", "body": page})
}

#[tokio::test]
async fn oversized_messages_are_refused() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let client = connect_with(HttpConfig {
        max_message_bytes: 4096,
        ..HttpConfig::new(url)
    })
    .await;
    // The same 10 kB answer as JSON and as an event.
    for tool in ["json_echo", "echo"] {
        let big = json!({"text": "y", "repeat": 10_000});
        let error = call_text(&client, tool, big).await.expect_err("too large");
        assert!(
            matches!(
                error.transport_error(),
                Some(TransportError::MessageTooLarge { limit: 4096 })
            ),
            "{tool}: {error:?}"
        );
    }
}

// ---- sessions ----------------------------------------------------------------------

#[tokio::test]
async fn an_expired_session_is_recognisable_by_default() {
    let (_fake, client) = setup().await;
    let error = call_text(&client, "expire", json!({}))
        .await
        .expect_err("404");
    assert!(error.is_session_expired(), "{error:?}");
    assert!(
        error.to_string().contains("initialize a new client"),
        "{error}"
    );
}

#[tokio::test]
async fn an_expired_session_can_be_renewed_and_the_request_resent_once() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let client = connect_with(HttpConfig {
        reinitialize_expired_session: true,
        ..HttpConfig::new(url)
    })
    .await;
    let mut notifications = client.passive_notifications();
    // What the session keeps on the server, told again to a new one.
    client
        .set_log_level(golem_mcp::LogLevel::Warning)
        .await
        .expect("log level");
    let _subscription = client
        .subscribe_resource("file:///watched")
        .await
        .expect("subscribed");
    // The first call expires the session; the fake then answers 404 to the
    // old id. The client re-initializes and resends: the resent "expire"
    // expires the new session too, so the error surfaces after one resend.
    let error = call_text(&client, "expire", json!({}))
        .await
        .expect_err("expired twice");
    assert!(error.is_session_expired(), "{error:?}");
    assert_eq!(
        fake.posts_of("initialize").len(),
        2,
        "one re-initialization"
    );
    assert_eq!(fake.posts_of("tools/call").len(), 2, "one resend");
    // The new session was told the log level and the subscription, in it.
    for method in ["logging/setLevel", "resources/subscribe"] {
        let told = fake.posts_of(method);
        assert_eq!(told.len(), 2, "{method} once per session");
        assert_eq!(
            told[1].header("mcp-session-id"),
            Some("session-2"),
            "{method}"
        );
    }
    assert_eq!(
        fake.posts_of("logging/setLevel")[1].body["params"]["level"],
        "warning"
    );
    // The application hears of the new session.
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::SessionRenewed)
    );

    // A session that expired between calls is renewed transparently.
    fake.knobs().expired.store(true, Ordering::SeqCst);
    assert_eq!(
        call_text(&client, "json_echo", json!({"text": "renewed"}))
            .await
            .expect("renewed"),
        "renewed"
    );
    assert_eq!(fake.posts_of("initialize").len(), 3);
    let last = fake.posts_of("tools/call").pop().expect("a call");
    assert_eq!(last.header("mcp-session-id"), Some("session-3"));
    assert_eq!(fake.posts_of("notifications/initialized").len(), 3);
    assert_eq!(fake.posts_of("resources/subscribe").len(), 3);
}

#[tokio::test]
async fn requests_that_meet_an_expired_session_together_renew_it_once() {
    let fake = FakeHttp::start().await;
    let client = connect_with(HttpConfig {
        reinitialize_expired_session: true,
        ..HttpConfig::new(fake.url())
    })
    .await;
    fake.knobs().expired.store(true, Ordering::SeqCst);
    let calls =
        (0..4).map(|n| call_text(&client, "json_echo", json!({"text": format!("call {n}")})));
    for (n, answer) in futures_util::future::join_all(calls)
        .await
        .into_iter()
        .enumerate()
    {
        assert_eq!(answer.expect("renewed"), format!("call {n}"));
    }
    assert_eq!(fake.posts_of("initialize").len(), 2, "one renewal for all");
    assert_eq!(fake.posts_of("notifications/initialized").len(), 2);
}

#[tokio::test]
async fn close_deletes_the_session_and_a_405_is_fine() {
    for delete_status in [200, 405] {
        let fake = FakeHttp::start().await;
        fake.knobs()
            .delete_status
            .store(delete_status, Ordering::SeqCst);
        let client = connect_with(HttpConfig::new(fake.url())).await;
        bounded(client.close()).await.expect("closes");
        let deletes = fake.deletes();
        assert_eq!(deletes.len(), 1);
        assert_eq!(deletes[0].header("mcp-session-id"), Some("session-1"));
    }
}

/// An auth provider whose token is renewed by every `prepare`: what an
/// OAuth provider does with a token that expired while the client idled.
struct RenewedEachTime(AtomicUsize);

impl golem_mcp::auth::AuthProvider for RenewedEachTime {
    fn authorization(&self, _url: &reqwest::Url) -> Option<golem_mcp::auth::Secret> {
        let renewals = self.0.load(Ordering::SeqCst);
        Some(golem_mcp::auth::Secret::new(format!("Bearer t-{renewals}")))
    }

    fn prepare<'a>(&'a self, _url: &'a reqwest::Url) -> golem_mcp::auth::AuthFuture<'a, ()> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(()) })
    }

    fn authorize<'a>(
        &'a self,
        refusal: &'a golem_mcp::auth::Refusal,
    ) -> golem_mcp::auth::AuthFuture<'a, ()> {
        let status = refusal.status;
        Box::pin(async move {
            Err(golem_mcp::auth::AuthError::Refused {
                status,
                detail: "not in this test".into(),
            })
        })
    }
}

#[tokio::test]
async fn the_delete_that_ends_the_session_carries_a_renewed_credential() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let provider = Arc::new(RenewedEachTime(AtomicUsize::new(0)));
    let client = connect_with(HttpConfig {
        auth: Some(provider.clone()),
        ..HttpConfig::new(url)
    })
    .await;
    let before_close = provider.0.load(Ordering::SeqCst);
    bounded(client.close()).await.expect("closes");
    let delete = fake.deletes().pop().expect("a DELETE");
    let renewed = format!("Bearer t-{}", before_close + 1);
    assert_eq!(delete.header("authorization"), Some(renewed.as_str()));
}

#[tokio::test]
async fn a_request_that_names_no_media_type_accepts_any() {
    let (fake, client) = setup().await;
    bounded(client.close()).await.expect("closes");
    // The DELETE says nothing of what it wants back: `*/*`, as reqwest's
    // default client sent.
    let delete = fake.deletes().pop().expect("a DELETE");
    assert_eq!(delete.header("accept"), Some("*/*"));
    let post = fake.seen().into_iter().find(|seen| seen.method == "POST");
    assert_eq!(
        post.expect("a POST").header("accept"),
        Some("application/json, text/event-stream")
    );
}

// ---- resumption ----------------------------------------------------------------------

#[tokio::test]
async fn a_stream_ending_early_is_resumed_after_the_servers_retry_delay() {
    let (fake, client) = setup().await;
    let text = call_text(&client, "end_early_with_id", json!({"retry": 300}))
        .await
        .expect("resumed");
    assert_eq!(text, "resumed");
    let get = resumptions(&fake).remove(0);
    assert_eq!(get.header("last-event-id"), Some("stream-1-0"));
    assert_eq!(get.header("mcp-session-id"), Some("session-1"));
    let ended = fake.ended_stream_at().expect("the stream ended");
    let waited = get.at.duration_since(ended);
    assert!(
        waited >= Duration::from_millis(300),
        "reconnected after {waited:?}, before the retry delay"
    );
}

#[tokio::test]
async fn without_a_retry_field_the_default_delay_applies() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let client = connect_with(HttpConfig {
        resume: ResumePolicy {
            max_attempts: 3,
            default_retry: Duration::from_millis(150),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(url)
    })
    .await;
    assert_eq!(
        call_text(&client, "end_early_with_id", json!({}))
            .await
            .expect("resumed"),
        "resumed"
    );
    let get = resumptions(&fake).remove(0);
    let ended = fake.ended_stream_at().expect("ended");
    assert!(get.at.duration_since(ended) >= Duration::from_millis(150));
}

#[tokio::test]
async fn a_resumption_refused_for_now_is_tried_again() {
    let (fake, client) = setup().await;
    fake.knobs().unavailable_resumes.store(2, Ordering::SeqCst);
    // Two 503s, then the replay: within the three attempts allowed.
    assert_eq!(
        call_text(&client, "end_early_with_id", json!({"retry": 10}))
            .await
            .expect("resumed"),
        "resumed"
    );
    let gets = resumptions(&fake);
    assert_eq!(gets.len(), 3);
    // After a refusal, its `Retry-After` (a second) is waited, not the
    // stream's `retry` (10 ms).
    for pair in gets.windows(2) {
        assert!(pair[1].at.duration_since(pair[0].at) >= Duration::from_millis(900));
    }
}

#[tokio::test]
async fn resumption_attempts_are_bounded() {
    let fake = FakeHttp::start().await;
    fake.knobs().failing_resumes.store(10, Ordering::SeqCst);
    let url = fake.url();
    let client = connect_with(HttpConfig {
        resume: ResumePolicy {
            max_attempts: 2,
            default_retry: Duration::from_millis(10),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(url)
    })
    .await;
    let error = call_text(&client, "end_early_with_id", json!({}))
        .await
        .expect_err("gave up");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::StreamEnded { .. })
        ),
        "{error:?}"
    );
    let gets = resumptions(&fake).len();
    assert_eq!(gets, 2);
}

#[tokio::test]
async fn a_polling_server_is_waited_for_while_each_poll_moves_the_stream_on() {
    let (fake, client) = setup().await;
    // Five polls, each closed after a new priming event: more than the
    // three resumption attempts allowed in a row without progress.
    assert_eq!(
        call_text(&client, "poll", json!({}))
            .await
            .expect("answered"),
        "polled"
    );
    let polls: Vec<_> = resumptions(&fake)
        .into_iter()
        .filter_map(|seen| seen.header("last-event-id").map(str::to_owned))
        .collect();
    assert_eq!(
        polls,
        ["poll-0", "poll-1", "poll-2", "poll-3", "poll-4", "poll-5"]
    );
}

#[tokio::test]
async fn a_stream_ending_early_without_ids_is_a_clear_error() {
    let (fake, client) = setup().await;
    let error = call_text(&client, "end_early_without_id", json!({}))
        .await
        .expect_err("ended");
    assert!(
        error.to_string().contains("ended before the response"),
        "{error}"
    );
    assert!(resumptions(&fake).is_empty(), "nothing to resume from");
}

// ---- cancellation -----------------------------------------------------------------------

#[tokio::test]
async fn a_call_cancelled_mid_stream_leaves_the_client_usable() {
    let (fake, client) = setup().await;
    let arguments = args(json!({"n": 0, "answer": "sse"}));
    let abandoned = tokio::time::timeout(
        Duration::from_millis(200),
        client.call_tool("hold", &arguments),
    )
    .await;
    assert!(abandoned.is_err(), "the stream never answers");
    assert_eq!(
        call_text(&client, "echo", json!({"text": "next"}))
            .await
            .expect("reused"),
        "next"
    );
    let hung_id = fake.posts_of("tools/call")[0].body["id"].clone();
    let cancelled = fake.posts_of("notifications/cancelled");
    assert_eq!(cancelled.len(), 1);
    assert_eq!(cancelled[0].body["params"]["requestId"], hung_id);
}

// ---- clients and connections ---------------------------------------------------------------

#[tokio::test]
async fn a_caller_supplied_client_is_used() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let custom = reqwest_client_with_agent("golem-test-agent");
    let client = connect_with(HttpConfig {
        client: Some(custom),
        ..HttpConfig::new(url)
    })
    .await;
    bounded(client.list_tools()).await.expect("lists");
    assert!(
        fake.seen()
            .iter()
            .all(|seen| seen.header("user-agent") == Some("golem-test-agent"))
    );
}

#[tokio::test]
async fn a_user_and_password_in_the_url_are_sent_as_basic_authorization() {
    let fake = FakeHttp::start().await;
    let url = fake.url().replacen("http://", "http://user:pa%20ss@", 1);
    let client = connect_with(HttpConfig::new(url)).await;
    bounded(client.list_tools()).await.expect("lists");
    let seen = fake.seen();
    assert!(!seen.is_empty());
    // base64("user:pa ss"): percent-decoded, as reqwest sends it.
    assert!(
        seen.iter()
            .all(|seen| seen.header("authorization") == Some("Basic dXNlcjpwYSBzcw==")),
        "every request carries the URL's credentials"
    );
}

#[tokio::test]
async fn requests_name_the_endpoints_host_unless_the_configuration_names_another() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let address = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .expect("host and port")
        .to_owned();
    let client = connect_with(HttpConfig::new(url.clone())).await;
    bounded(client.list_tools()).await.expect("lists");
    bounded(client.close()).await.expect("closes");
    assert!(
        fake.seen()
            .iter()
            .all(|seen| seen.header("host") == Some(address.as_str()))
    );

    let fake = FakeHttp::start().await;
    let client = connect_with(HttpConfig {
        headers: vec![("Host".into(), "mcp.internal".into())],
        ..HttpConfig::new(fake.url())
    })
    .await;
    bounded(client.list_tools()).await.expect("lists");
    assert!(
        fake.seen()
            .iter()
            .all(|seen| seen.header("host") == Some("mcp.internal")),
        "a virtual host the configuration names is kept"
    );
}

fn reqwest_client_with_agent(agent: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .user_agent(agent)
        .build()
        .expect("client")
}

#[tokio::test]
async fn a_server_that_is_not_there_fails_fast() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener); // nothing listens there now
    let client = Client::new(
        HttpTransport::new(HttpConfig::new(format!("http://{address}/mcp"))).expect("valid"),
    );
    let started = Instant::now();
    let error = bounded(client.initialize()).await.expect_err("refused");
    assert!(
        matches!(error.transport_error(), Some(TransportError::Http { .. })),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    let message = error.to_string();
    assert!(
        // The first request is the era probe (ADR 0018).
        message.starts_with(&format!(
            "mcp: server/discover: POST http://{address}/mcp: "
        )) && message.ends_with("Connection refused (os error 111)"),
        "the message names the URL and ends with the root cause: {message}"
    );
}

#[tokio::test]
async fn a_call_abandoned_before_its_json_answer_does_not_hold_up_the_next() {
    let (fake, client) = setup().await;
    // JSON answers send their headers only once the tool is done: held
    // call 0 is answered late with JSON, held call 1 with a 500.
    for n in [0, 1] {
        let arguments = args(json!({"n": n, "answer": "json"}));
        let abandoned = tokio::time::timeout(
            Duration::from_millis(200),
            client.call_tool("hold", &arguments),
        )
        .await;
        assert!(abandoned.is_err(), "call {n}: no answer yet");
        // The abandoned call is still running on the server; the next call
        // must not wait for it, nor inherit its outcome.
        let started = Instant::now();
        assert_eq!(
            call_text(&client, "json_echo", json!({"text": "next"}))
                .await
                .expect("next call"),
            "next"
        );
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "call {n}: waited {:?}",
            started.elapsed()
        );
        let abandoned_id = fake
            .posts_of("tools/call")
            .iter()
            .rev()
            .find(|seen| seen.body["params"]["arguments"]["n"] == n)
            .expect("sent")
            .body["id"]
            .clone();
        let cancelled = fake.posts_of("notifications/cancelled");
        assert_eq!(
            cancelled.last().expect("a cancellation").body["params"]["requestId"],
            abandoned_id
        );
        // Answers the abandoned call if the server still runs it (its
        // connection was dropped with the call).
        match n {
            0 => fake.answer(0, "late"),
            _ => fake.answer_status(1, 500, "boom from the abandoned call"),
        }
    }
    assert_eq!(
        call_text(&client, "json_echo", json!({"text": "still fine"}))
            .await
            .expect("works"),
        "still fine"
    );
}

#[tokio::test]
async fn a_failed_initialize_can_be_retried() {
    let fake = FakeHttp::start().await;
    fake.knobs().failing_initializes.store(1, Ordering::SeqCst);
    let url = fake.url();
    let client = Client::new(HttpTransport::new(HttpConfig::new(url)).expect("valid"));
    let error = bounded(client.initialize())
        .await
        .expect_err("the first answer never comes");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::StreamEnded { .. })
        ),
        "{error:?}"
    );
    bounded(client.initialize())
        .await
        .expect("the second initialize succeeds");
    assert_eq!(fake.posts_of("initialize").len(), 2);
}

#[tokio::test]
async fn a_huge_retry_is_capped_by_the_policy() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let client = connect_with(HttpConfig {
        resume: ResumePolicy {
            max_retry: Duration::from_millis(100),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(url)
    })
    .await;
    let started = Instant::now();
    let text = call_text(&client, "end_early_with_id", json!({"retry": 3_600_000}))
        .await
        .expect("resumed");
    assert_eq!(text, "resumed");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "waited {:?}",
        started.elapsed()
    );
}

#[test]
fn headers_the_transport_manages_are_refused() {
    for name in [
        "Accept",
        "content-type",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
        "Last-Event-ID",
    ] {
        let config = HttpConfig {
            headers: vec![(name.into(), "x".into())],
            ..HttpConfig::new("http://127.0.0.1/mcp")
        };
        match HttpTransport::new(config) {
            Err(Error::InvalidConfig { field, problem, .. }) => {
                assert!(field.contains(name), "{field}");
                assert!(problem.contains("sets this header itself"), "{problem}");
            }
            other => panic!("{name}: expected InvalidConfig, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn secrets_in_the_url_stay_out_of_errors() {
    let fake = FakeHttp::start().await;
    let url = fake.url();
    let client = connect_with(HttpConfig::new(format!("{url}?api_key=hunter2"))).await;
    let error = call_text(&client, "status", html500())
        .await
        .expect_err("500");
    assert!(!error.to_string().contains("hunter2"), "{error}");
    assert!(!format!("{error:?}").contains("hunter2"), "{error:?}");
}

#[tokio::test]
async fn the_standalone_stream_is_asked_for_once_and_a_405_is_respected() {
    let (fake, client) = setup().await;
    let standalone = |fake: &FakeHttp| {
        let gets = fake.gets().into_iter();
        gets.filter(|seen| !seen.is_resumption())
            .collect::<Vec<_>>()
    };
    // Opened right after notifications/initialized, on a task: wait for it.
    let get = bounded(fake.wait_for(|fake| standalone(fake).pop())).await;
    assert!(get.header("mcp-session-id").is_some(), "in the session");
    assert_eq!(
        get.header("mcp-protocol-version"),
        Some(LATEST_PROTOCOL_VERSION)
    );
    // Calls go on; the refused stream is not asked for again.
    call_text(&client, "json_echo", json!({"text": "after"}))
        .await
        .expect("works");
    assert_eq!(standalone(&fake).len(), 1, "a 405 is final");
}

#[tokio::test]
async fn a_standalone_stream_that_broke_on_an_oversized_event_resumes_after_the_last_whole_one() {
    let fake = FakeHttp::start().await;
    // Event s-1, then an event larger than any client limit; reopened
    // after s-1, event s-1 again; the stream is kept open.
    fake.serve_standalone(|get| {
        let mut events = vec![format!("id: s-1\ndata: {}\n\n", list_changed("tools"))];
        if get.last_event_id.is_none() {
            events.push(oversized_event());
        }
        Get::Open(events)
    });
    let (_client, mut notifications) = with_16_kib_messages(&fake).await;
    // Event s-1 arrives whole; the next is over the limit, so the stream is
    // started afresh, asking for what came after s-1.
    for _ in 0..2 {
        assert_eq!(
            bounded(notifications.recv()).await,
            Some(golem_mcp::ServerNotification::ToolsListChanged)
        );
    }
    assert_eq!(
        standalone_resumed_from(&fake)[..2],
        [None, Some("s-1".to_owned())]
    );
}

fn list_changed(kind: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": format!("notifications/{kind}/list_changed")})
}

/// An event of 64 KiB, without an id.
fn oversized_event() -> String {
    format!("data: {}\n\n", "x".repeat(64 * 1024))
}

/// A client with a 16 KiB message limit, subscribed to notifications and
/// initialized.
async fn with_16_kib_messages(fake: &FakeHttp) -> (Client, golem_mcp::Notifications) {
    let client = Client::new(
        HttpTransport::new(HttpConfig {
            max_message_bytes: 16 * 1024,
            ..HttpConfig::new(fake.url())
        })
        .expect("valid"),
    );
    let notifications = client.notifications();
    bounded(client.initialize()).await.expect("initializes");
    (client, notifications)
}

/// The `Last-Event-ID` of each `GET` the fake has seen, in order.
fn standalone_resumed_from(fake: &FakeHttp) -> Vec<Option<String>> {
    let gets = fake.gets().into_iter();
    gets.map(|seen| seen.header("last-event-id").map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn an_unreadable_event_a_resumable_server_replays_is_skipped_by_its_id() {
    let fake = FakeHttp::start().await;
    // A resumable server: every GET replays the stored events after its
    // `Last-Event-ID` (s-1, an oversized s-2, s-3) and stays open.
    fake.serve_standalone(|get| {
        let stored = [
            ("s-1", list_changed("tools").to_string()),
            ("s-2", "x".repeat(64 * 1024)),
            ("s-3", list_changed("prompts").to_string()),
        ];
        let start = stored
            .iter()
            .position(|(id, _)| Some(*id) == get.last_event_id)
            .map_or(0, |at| at + 1);
        let replayed = stored[start..].iter();
        Get::Open(
            replayed
                .map(|(id, data)| format!("id: {id}\ndata: {data}\n\n"))
                .collect(),
        )
    });
    let (_client, mut notifications) = with_16_kib_messages(&fake).await;
    // s-1 arrives; s-2 is over the limit and would be replayed after s-1
    // for ever: the stream resumes after s-2 instead, and s-3 arrives.
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::ToolsListChanged)
    );
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::PromptsListChanged)
    );
    assert_eq!(
        standalone_resumed_from(&fake),
        [None, Some("s-2".to_owned())]
    );
}

#[tokio::test]
async fn a_standalone_stream_that_fails_the_same_way_each_time_is_given_up() {
    let fake = FakeHttp::start().await;
    // Every stream starts with an event over any client limit that has no
    // id of its own, and stays open.
    fake.serve_standalone(|_| Get::Open(vec![oversized_event()]));
    // Giving up is a decision of a task of the transport's: its trace is
    // the only sign of it.
    let (logs, _guard) = logs::capture();
    let client = connect_with(HttpConfig {
        max_message_bytes: 16 * 1024,
        resume: ResumePolicy {
            max_attempts: 1,
            default_retry: Duration::from_millis(10),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(fake.url())
    })
    .await;
    // The first failure reopens after the last whole event (none); the
    // same failure there starts a new stream, once (max_attempts); the
    // next gives up, and the task ends with the word: no fourth GET.
    bounded(logs.contain("gave up opening the standalone event stream")).await;
    assert_eq!(fake.gets().len(), 3, "given up");
    assert_eq!(
        call_text(&client, "json_echo", json!({"text": "still"}))
            .await
            .expect("requests go on"),
        "still"
    );
}

#[tokio::test]
async fn a_standalone_stream_the_server_keeps_ending_is_reopened() {
    let fake = FakeHttp::start().await;
    // Five streams that end at once (with a short `retry`), then one that
    // carries a notification and stays open.
    fake.serve_standalone(|get| match get.number {
        ..=5 => Get::Ended(vec!["retry: 10\n\n".to_owned()]),
        _ => Get::Open(vec![format!("data: {}\n\n", list_changed("tools"))]),
    });
    let client = Client::new(HttpTransport::new(HttpConfig::new(fake.url())).expect("valid"));
    let mut notifications = client.notifications();
    bounded(client.initialize()).await.expect("initializes");
    // Five streams that end at once (more than the resume attempts), then
    // one that carries a notification: servers may close it at will.
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::ToolsListChanged)
    );
    assert_eq!(fake.gets().len(), 6, "reopened after each end");
}
