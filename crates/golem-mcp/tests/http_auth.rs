//! OAuth through the streamable-HTTP transport, against the fake HTTP
//! server (`support/fake_http.rs`) as an MCP endpoint that is also its own
//! authorization server, with knobs for the faults the conformance suite
//! does not cover: concurrent refusals, expiring tokens, insecure or
//! oversized or slow endpoints, redirects to another origin. The suite
//! itself (`scripts/conformance.sh`) is the real peer for the
//! specification's flows.
#![cfg(feature = "http")]

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use golem_mcp::auth::{
    AuthError, ClientAuth, MemoryTokenStore, OAuthConfig, OAuthProvider, RedirectFollower,
    TokenStore,
};
use golem_mcp::{Client, Error, HttpConfig, HttpTransport, ResumePolicy};
use support::fake_http::oauth::{CLIENT_SECRET, CODE};
use support::fake_http::{self, FakeHttp};
use support::{bounded, logs};

/// The fake, protected: everything but the handshake needs its current
/// access token.
async fn protected() -> FakeHttp {
    let fake = FakeHttp::start().await;
    fake.oauth().protects.store(true, Ordering::SeqCst);
    fake
}

/// What one `GET` carried, and whether it was refused.
#[derive(Debug, Clone, PartialEq)]
struct Get {
    authorization: String,
    last_event_id: String,
    refused: bool,
}

/// Each `GET` the fake has seen, in order.
fn gets_of(fake: &FakeHttp) -> Vec<Get> {
    let header = |seen: &fake_http::Seen, name| seen.header(name).unwrap_or("").to_owned();
    let gets = fake.gets().into_iter();
    gets.map(|seen| Get {
        authorization: header(&seen, "authorization"),
        last_event_id: header(&seen, "last-event-id"),
        refused: seen.status == Some(401),
    })
    .collect()
}

/// The standalone stream: one notification (event ids count the `GET`s
/// seen) and then silence, held open unless `end` (its refusals without
/// the current token are the fake's).
fn offer_stream(fake: &FakeHttp, end: bool) {
    fake.serve_standalone(move |get| {
        let event = vec![format!(
            "id: {}\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}}\n\n",
            get.number
        )];
        match end {
            true => fake_http::Get::Ended(event),
            false => fake_http::Get::Open(event),
        }
    });
}

fn oauth_config(store: Arc<dyn TokenStore>) -> OAuthConfig {
    let follower = RedirectFollower::new("http://localhost/callback", Duration::from_secs(5))
        .expect("follower");
    let mut config = OAuthConfig::new(Arc::new(follower));
    config.store = store;
    config
}

async fn connect(base: &str, provider: Arc<OAuthProvider>) -> Client {
    let transport = HttpTransport::new(HttpConfig {
        auth: Some(provider),
        ..HttpConfig::new(format!("{base}/mcp"))
    })
    .expect("transport");
    let client = Client::new(transport);
    bounded(client.initialize()).await.expect("initialize");
    client
}

/// The authorization error inside a failed call.
fn auth_error(error: &Error) -> &AuthError {
    error
        .auth_error()
        .unwrap_or_else(|| panic!("no AuthError in {error}"))
}

#[tokio::test]
async fn concurrent_refusals_share_one_authorization_and_are_replayed() {
    let fake = protected().await;
    let base = fake.base().to_owned();
    let provider = Arc::new(
        OAuthProvider::new(oauth_config(Arc::new(MemoryTokenStore::new()))).expect("provider"),
    );
    let client = connect(&base, provider).await;
    let calls = (0..8).map(|_| client.list_tools());
    for result in bounded(futures_util::future::join_all(calls)).await {
        result.expect("tools/list after authorization");
    }
    assert_eq!(fake.oauth().authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(fake.oauth().issued.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_expiring_token_is_refreshed_before_the_request_and_kept_in_the_store() {
    let fake = protected().await;
    *fake.oauth().expires_in.lock().expect("lock") = Some(0);
    let base = fake.base().to_owned();
    let store = Arc::new(MemoryTokenStore::new());
    let provider = Arc::new(OAuthProvider::new(oauth_config(store.clone())).expect("provider"));
    let client = connect(&base, provider).await;
    bounded(client.list_tools()).await.expect("first list");
    let refused = fake.oauth().refused.load(Ordering::SeqCst);
    let refreshes = fake.oauth().refreshes.load(Ordering::SeqCst);
    bounded(client.list_tools()).await.expect("second list");
    // Every token expires at once: the second list found it expired and
    // refreshed it before sending, so the server refused nothing.
    assert_eq!(fake.oauth().authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(fake.oauth().refreshes.load(Ordering::SeqCst), refreshes + 1);
    assert_eq!(fake.oauth().refused.load(Ordering::SeqCst), refused);
    let stored = store
        .load(&format!("{base}/mcp"))
        .expect("store")
        .expect("a stored grant");
    let issued = fake.oauth().issued.load(Ordering::SeqCst);
    assert_eq!(
        stored.tokens.access_token.expose(),
        format!("access-{issued}")
    );
    assert_eq!(stored.client_id, "registered-client");
}

/// A client of `fake` (not yet initialized) whose standalone stream gives
/// up at its first refusal, and reopens soon after a stream ends.
async fn client_whose_stream_gives_up_at_once(fake: &FakeHttp) -> Client {
    let base = fake.base();
    let provider = Arc::new(
        OAuthProvider::new(oauth_config(Arc::new(MemoryTokenStore::new()))).expect("provider"),
    );
    let transport = HttpTransport::new(HttpConfig {
        auth: Some(provider),
        resume: ResumePolicy {
            max_attempts: 0,
            default_retry: Duration::from_millis(1),
            ..ResumePolicy::default()
        },
        ..HttpConfig::new(format!("{base}/mcp"))
    })
    .expect("transport");
    Client::new(transport)
}

#[tokio::test]
async fn a_standalone_stream_refused_for_want_of_a_token_reopens_once_a_request_is_authorized() {
    let fake = protected().await;
    offer_stream(&fake, false);
    // Tokens expire at once: the reopening GET must renew its token first.
    *fake.oauth().expires_in.lock().expect("lock") = Some(0);
    let client = client_whose_stream_gives_up_at_once(&fake).await;
    let mut notifications = client.notifications();
    // The handshake is open; the stream is refused: no token yet.
    bounded(client.initialize()).await.expect("initialize");
    let gets = gets_of(&fake);
    assert_eq!(gets.len(), 1, "{gets:?}");
    assert!(
        gets[0].refused && gets[0].authorization.is_empty(),
        "{gets:?}"
    );
    // The list is refused too, authorized, and replayed; the stream that
    // gave up is opened again, with a token renewed just before.
    bounded(client.list_tools()).await.expect("tools/list");
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::ToolsListChanged)
    );
    let gets = gets_of(&fake);
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert_eq!(gets[1].authorization, fake.oauth().valid_token());
    assert!(!gets[1].refused);
    assert!(
        fake.oauth().refreshes.load(Ordering::SeqCst) >= 2,
        "the POST's token and then the GET's were renewed"
    );
}

#[tokio::test]
async fn a_standalone_stream_refused_after_its_token_was_revoked_resumes_from_its_last_event() {
    let fake = protected().await;
    offer_stream(&fake, true);
    let client = client_whose_stream_gives_up_at_once(&fake).await;
    let mut notifications = client.notifications();
    bounded(client.initialize()).await.expect("initialize");
    bounded(client.list_tools()).await.expect("tools/list");
    // The stream opens with the token, delivers event 1 and ends; the
    // token is revoked, so reopening it is refused and it gives up.
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::ToolsListChanged)
    );
    fake.oauth()
        .revoked
        .store(fake.oauth().issued.load(Ordering::SeqCst), Ordering::SeqCst);
    let refused_gets = |fake: &FakeHttp| gets_of(fake).iter().filter(|get| get.refused).count();
    // The reopening was refused.
    bounded(fake.wait_for(|fake| (refused_gets(fake) >= 2).then_some(()))).await;
    // The next request is refused too and authorized anew: the stream
    // comes back with the new token, resuming after event 1.
    bounded(client.list_tools()).await.expect("tools/list");
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::ToolsListChanged)
    );
    // The GET after the second refusal carried the new token and the id of
    // the last event delivered before the refusals (event ids count the
    // GETs, and the one before that refusal delivered its event).
    let gets = gets_of(&fake);
    let second_refusal = gets
        .iter()
        .enumerate()
        .filter(|(_, get)| get.refused)
        .nth(1)
        .map(|(index, _)| index)
        .expect("two refusals");
    let reopened = &gets[second_refusal + 1];
    assert_eq!(
        reopened.authorization,
        fake.oauth().valid_token(),
        "{gets:?}"
    );
    assert!(!reopened.refused, "{gets:?}");
    assert_eq!(
        reopened.last_event_id,
        second_refusal.to_string(),
        "{gets:?}"
    );
}

#[tokio::test]
async fn secrets_never_appear_in_errors_debug_output_or_traces() {
    let (logs, _guard) = logs::capture();

    let fake = protected().await;
    let base = fake.base().to_owned();
    let mut config = oauth_config(Arc::new(MemoryTokenStore::new()));
    config.client_auth = ClientAuth::Secret("configured-secret-89".into());
    let provider = Arc::new(OAuthProvider::new(config).expect("provider"));
    let client = connect(&base, provider.clone()).await;
    bounded(client.list_tools()).await.expect("authorized");
    // Now a failure: the token we hold goes stale, and the token endpoint
    // refuses both the refresh and the new code.
    fake.oauth().issued.store(1000, Ordering::SeqCst);
    fake.oauth().token_fails.store(true, Ordering::SeqCst);
    let error = bounded(client.list_tools())
        .await
        .expect_err("the token endpoint is gone");
    let verifier = fake.oauth().verifier.lock().expect("lock").clone();
    assert!(!verifier.is_empty());
    let shown = format!(
        "{error}\n{error:?}\n{provider:?}\n{client:?}\n{}",
        logs.text()
    );
    for secret in [
        CLIENT_SECRET,
        "configured-secret-89",
        CODE,
        verifier.as_str(),
        "access-1",
        "refresh-1",
    ] {
        assert!(!shown.contains(secret), "{secret:?} leaked in:\n{shown}");
    }
    assert!(
        matches!(auth_error(&error), AuthError::Token { status: 400, .. }),
        "{error}"
    );
}

#[tokio::test]
async fn tokens_are_only_sent_to_the_server_they_were_issued_for() {
    let fake = protected().await;
    let base = fake.base().to_owned();
    // Another origin, down (503), that records what it is sent.
    let other_origin = FakeHttp::start().await;
    other_origin
        .knobs()
        .unavailable
        .store(true, Ordering::SeqCst);
    let other = other_origin.url();
    let provider = Arc::new(
        OAuthProvider::new(oauth_config(Arc::new(MemoryTokenStore::new()))).expect("provider"),
    );
    let client = connect(&base, provider.clone()).await;
    bounded(client.list_tools()).await.expect("authorized");

    use golem_mcp::auth::AuthProvider;
    let url = |text: &str| reqwest::Url::parse(text).expect("url");
    assert!(
        provider
            .authorization(&url(&format!("{base}/mcp")))
            .is_some()
    );
    assert!(provider.authorization(&url(&other)).is_none());
    assert!(
        provider
            .authorization(&url(&format!("{base}/other")))
            .is_none()
    );

    // A server that redirects the request elsewhere does not get the token,
    // or anything else, carried there: the redirect is not followed (ADR
    // 0017), and the error says where it pointed.
    *fake.knobs().redirect_to.lock().expect("lock") = Some(other.clone());
    let error = bounded(client.list_tools())
        .await
        .expect_err("a redirect to another origin is not followed");
    let status = error.http_status().expect("the redirect is the answer");
    assert!((300..400).contains(&status.status), "{error}");
    assert!(status.location.is_some(), "{error}");
    assert!(
        other_origin.seen().is_empty(),
        "another origin was sent the request: {:?}",
        other_origin
            .seen()
            .iter()
            .map(|seen| seen.header("authorization").map(str::to_owned))
            .collect::<Vec<_>>()
    );
}

async fn failed_authorization(fake: &FakeHttp, timeout: Duration) -> Error {
    let base = fake.base();
    let mut config = oauth_config(Arc::new(MemoryTokenStore::new()));
    config.timeout = timeout;
    let provider = Arc::new(OAuthProvider::new(config).expect("provider"));
    let client = connect(base, provider).await;
    bounded(client.list_tools())
        .await
        .expect_err("authorization must fail")
}

#[tokio::test]
async fn an_authorization_server_without_s256_is_refused_before_the_user_is_asked() {
    let fake = protected().await;
    fake.oauth().no_pkce.store(true, Ordering::SeqCst);
    let error = failed_authorization(&fake, Duration::from_secs(5)).await;
    assert!(
        matches!(auth_error(&error), AuthError::PkceUnsupported { .. }),
        "{error}"
    );
    assert_eq!(fake.oauth().authorizations.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn plain_http_endpoints_off_loopback_are_refused() {
    let fake = protected().await;
    *fake.oauth().token_endpoint.lock().expect("lock") =
        Some("http://auth.example.com/token".into());
    let error = failed_authorization(&fake, Duration::from_secs(5)).await;
    assert!(
        matches!(auth_error(&error), AuthError::InsecureEndpoint { .. }),
        "{error}"
    );
    assert_eq!(fake.oauth().authorizations.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn oauth_answers_over_one_mebibyte_are_refused() {
    let fake = protected().await;
    fake.oauth()
        .metadata_padding
        .store(1 << 20, Ordering::SeqCst);
    let error = failed_authorization(&fake, Duration::from_secs(5)).await;
    let auth = auth_error(&error);
    assert!(
        auth.to_string().contains("larger than 1048576 bytes"),
        "{auth}"
    );
}

#[tokio::test]
async fn an_oauth_request_that_gets_no_answer_times_out() {
    let fake = protected().await;
    fake.oauth().token_hangs.store(true, Ordering::SeqCst);
    let error = failed_authorization(&fake, Duration::from_millis(300)).await;
    let auth = auth_error(&error);
    assert!(auth.to_string().contains("no answer within"), "{auth}");
}

#[tokio::test]
async fn stored_tokens_are_used_only_by_the_client_they_were_issued_to() {
    use golem_mcp::auth::{Secret, StoredGrant, Tokens};
    for (configured, stored, authorizations) in [("mine", "mine", 0), ("mine", "another", 1)] {
        let fake = protected().await;
        let base = fake.base().to_owned();
        fake.oauth().issued.store(1, Ordering::SeqCst); // "access-1" is valid
        let store = Arc::new(MemoryTokenStore::new());
        let grant = StoredGrant {
            tokens: Tokens {
                access_token: Secret::new("access-1"),
                refresh_token: None,
                expires_at: None,
                scope: None,
            },
            client_id: stored.to_owned(),
            client_secret: None,
            issuer: None,
        };
        store.save(&format!("{base}/mcp"), &grant).expect("saved");
        let mut config = oauth_config(store);
        config.client_id = Some(configured.to_owned());
        let provider = Arc::new(OAuthProvider::new(config).expect("provider"));
        let client = connect(&base, provider).await;
        bounded(client.list_tools()).await.expect("listed");
        assert_eq!(
            fake.oauth().authorizations.load(Ordering::SeqCst),
            authorizations,
            "client {configured}, tokens of {stored}"
        );
    }
}

#[tokio::test]
async fn a_static_bearer_token_is_sent_and_its_refusal_is_reported() {
    use golem_mcp::auth::BearerToken;
    let fake = protected().await;
    let base = fake.base().to_owned();
    fake.oauth().issued.store(1, Ordering::SeqCst); // "access-1" is valid
    for (token, accepted) in [("access-1", true), ("stale-token", false)] {
        let transport = HttpTransport::new(HttpConfig {
            auth: Some(Arc::new(BearerToken::new(token))),
            ..HttpConfig::new(format!("{base}/mcp"))
        })
        .expect("transport");
        let client = Client::new(transport);
        bounded(client.initialize())
            .await
            .expect("initialize is open");
        let listed = bounded(client.list_tools()).await;
        match accepted {
            true => {
                listed.expect("the token is accepted");
            }
            false => {
                let error = listed.expect_err("the token is refused");
                assert!(
                    matches!(auth_error(&error), AuthError::Refused { status: 401, .. }),
                    "{error}"
                );
                assert!(!format!("{error} {error:?}").contains("stale-token"));
            }
        }
    }
    assert_eq!(fake.oauth().authorizations.load(Ordering::SeqCst), 0);
}

#[test]
fn an_authorization_header_beside_a_provider_is_refused() {
    use golem_mcp::auth::BearerToken;
    let error = HttpTransport::new(HttpConfig {
        headers: vec![("Authorization".into(), "Bearer x".into())],
        auth: Some(Arc::new(BearerToken::new("y"))),
        ..HttpConfig::new("http://127.0.0.1:9/mcp")
    })
    .expect_err("two sources of Authorization");
    assert!(
        error
            .to_string()
            .contains("auth provider supplies Authorization"),
        "{error}"
    );
}
