//! OAuth through the streamable-HTTP transport, against an in-process axum
//! server that is both an MCP endpoint and its authorization server, with
//! knobs for the faults the conformance suite does not cover: concurrent
//! refusals, expiring tokens, insecure or oversized or slow endpoints,
//! redirects to another origin. The suite itself (`scripts/conformance.sh`)
//! is the real peer for the specification's flows.
#![cfg(feature = "http")]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::StreamExt;
use golem_mcp::auth::{
    AuthError, ClientAuth, MemoryTokenStore, OAuthConfig, OAuthProvider, RedirectFollower,
    TokenStore,
};
use golem_mcp::{Client, Error, HttpConfig, HttpTransport, ResumePolicy};
use serde_json::{Value, json};

const PATIENCE: Duration = Duration::from_secs(20);
const CLIENT_SECRET: &str = "client-secret-0123";
const CODE: &str = "authorization-code-4567";

/// The server's state and knobs.
#[derive(Default)]
struct Fake {
    base: Mutex<String>,
    /// Access tokens issued so far; only the last one is accepted.
    issued: AtomicUsize,
    authorizations: AtomicUsize,
    refreshes: AtomicUsize,
    /// The PKCE verifier of the last code exchange, to look for it in logs.
    verifier: Mutex<String>,
    /// Seconds until each access token expires.
    expires_in: Mutex<Option<u64>>,
    /// The token endpoint the metadata names, instead of ours.
    token_endpoint: Mutex<Option<String>>,
    /// Pad the authorization server metadata to this many bytes.
    metadata_padding: AtomicUsize,
    /// Never answer the token endpoint.
    token_hangs: AtomicBool,
    /// Refuse every token request.
    token_fails: AtomicBool,
    /// Requests refused for want of a valid token.
    refused: AtomicUsize,
    /// Leave `code_challenge_methods_supported` out of the metadata.
    no_pkce: AtomicBool,
    /// Answer `tools/list` with a redirect to this URL.
    redirect_to: Mutex<Option<String>>,
    /// Offer the standalone event stream (`GET`; otherwise `405`).
    offers_stream: AtomicBool,
    /// Each `GET`, in order.
    gets: Mutex<Vec<Get>>,
    /// How many `GET`s were refused.
    refused_gets: tokio::sync::watch::Sender<usize>,
    /// End each stream after its event (otherwise it is held open).
    end_streams: AtomicBool,
    /// Tokens up to this number are refused (revoked).
    revoked: AtomicUsize,
}

/// What one `GET` carried, and whether it was refused.
#[derive(Debug, Clone, PartialEq)]
struct Get {
    authorization: String,
    last_event_id: String,
    refused: bool,
}

impl Fake {
    fn base(&self) -> String {
        self.base.lock().expect("lock").clone()
    }

    fn valid_token(&self) -> String {
        format!("Bearer access-{}", self.issued.load(Ordering::SeqCst))
    }

    /// Whether `sent` is the current token, issued and not revoked.
    fn accepts(&self, sent: Option<&str>) -> bool {
        let issued = self.issued.load(Ordering::SeqCst);
        issued > self.revoked.load(Ordering::SeqCst) && sent == Some(self.valid_token().as_str())
    }
}

async fn on_mcp(State(fake): State<Arc<Fake>>, headers: HeaderMap, body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or("");
    // Like the conformance suite's step-up server: the handshake is open,
    // everything else needs the current token.
    let open = method == "initialize" || method.starts_with("notifications/");
    let authorized = fake.accepts(
        headers
            .get("authorization")
            .and_then(|value| value.to_str().ok()),
    );
    if !open && !authorized {
        fake.refused.fetch_add(1, Ordering::SeqCst);
        let challenge = format!(
            r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
            fake.base()
        );
        return (
            StatusCode::UNAUTHORIZED,
            [("www-authenticate", challenge)],
            "",
        )
            .into_response();
    }
    if method == "tools/list"
        && let Some(target) = fake.redirect_to.lock().expect("lock").clone()
    {
        return (StatusCode::TEMPORARY_REDIRECT, [("location", target)], "").into_response();
    }
    let id = message["id"].clone();
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake-protected", "version": "1"}
        }),
        "tools/list" => json!({"tools": []}),
        _ => return StatusCode::ACCEPTED.into_response(),
    };
    axum::Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response()
}

/// The standalone stream: refused without the current token; with it, one
/// notification (event ids count the streams served) and then silence,
/// held open unless `end_streams`.
async fn on_mcp_get(State(fake): State<Arc<Fake>>, headers: HeaderMap) -> Response {
    if !fake.offers_stream.load(Ordering::SeqCst) {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let sent = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let refused = !fake.accepts(Some(&sent));
    let served = {
        let mut gets = fake.gets.lock().expect("lock");
        gets.push(Get {
            authorization: sent,
            last_event_id,
            refused,
        });
        gets.len()
    };
    if refused {
        fake.refused_gets.send_modify(|refused| *refused += 1);
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let event = Bytes::from(format!(
        "id: {served}\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}}\n\n"
    ));
    let first = futures_util::stream::once(async move { Ok::<_, std::io::Error>(event) });
    let events: futures_util::stream::BoxStream<'static, Result<Bytes, std::io::Error>> =
        match fake.end_streams.load(Ordering::SeqCst) {
            true => first.boxed(),
            false => first.chain(futures_util::stream::pending()).boxed(),
        };
    (
        [("content-type", "text/event-stream")],
        axum::body::Body::from_stream(events),
    )
        .into_response()
}

async fn on_resource_metadata(State(fake): State<Arc<Fake>>) -> Response {
    let base = fake.base();
    axum::Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
        .into_response()
}

async fn on_server_metadata(State(fake): State<Arc<Fake>>) -> Response {
    let base = fake.base();
    let token_endpoint = fake
        .token_endpoint
        .lock()
        .expect("lock")
        .clone()
        .unwrap_or_else(|| format!("{base}/token"));
    let mut metadata = json!({
        "issuer": base,
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": token_endpoint,
        "registration_endpoint": format!("{base}/register"),
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        "padding": "x".repeat(fake.metadata_padding.load(Ordering::SeqCst)),
    });
    if fake.no_pkce.load(Ordering::SeqCst) {
        metadata
            .as_object_mut()
            .expect("an object")
            .remove("code_challenge_methods_supported");
    }
    axum::Json(metadata).into_response()
}

async fn on_register() -> Response {
    (
        StatusCode::CREATED,
        axum::Json(json!({
            "client_id": "registered-client",
            "client_secret": CLIENT_SECRET,
            "token_endpoint_auth_method": "client_secret_basic"
        })),
    )
        .into_response()
}

async fn on_authorize(
    State(fake): State<Arc<Fake>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    fake.authorizations.fetch_add(1, Ordering::SeqCst);
    let redirect = format!(
        "{}?code={CODE}&state={}",
        query["redirect_uri"],
        query.get("state").map_or("", String::as_str)
    );
    (StatusCode::FOUND, [("location", redirect)]).into_response()
}

async fn on_token(State(fake): State<Arc<Fake>>, body: String) -> Response {
    if fake.token_hangs.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    let form: HashMap<String, String> = url_decode(&body);
    if fake.token_fails.load(Ordering::SeqCst) {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "invalid_grant"})),
        )
            .into_response();
    }
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            if form.get("code").map(String::as_str) != Some(CODE) {
                return (
                    StatusCode::BAD_REQUEST,
                    axum::Json(json!({"error": "invalid_grant"})),
                )
                    .into_response();
            }
            *fake.verifier.lock().expect("lock") =
                form.get("code_verifier").cloned().unwrap_or_default();
        }
        Some("refresh_token") => {
            fake.refreshes.fetch_add(1, Ordering::SeqCst);
        }
        _ => {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": "unsupported_grant_type"})),
            )
                .into_response();
        }
    }
    let n = fake.issued.fetch_add(1, Ordering::SeqCst) + 1;
    let mut answer = json!({
        "access_token": format!("access-{n}"),
        "token_type": "Bearer",
        "refresh_token": format!("refresh-{n}"),
    });
    if let Some(seconds) = *fake.expires_in.lock().expect("lock") {
        answer["expires_in"] = json!(seconds);
    }
    axum::Json(answer).into_response()
}

fn url_decode(body: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect()
}

async fn serve(fake: Arc<Fake>) -> String {
    let app = Router::new()
        .route("/mcp", post(on_mcp).get(on_mcp_get))
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(on_resource_metadata),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(on_server_metadata),
        )
        .route("/register", post(on_register))
        .route("/authorize", get(on_authorize))
        .route("/token", post(on_token))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!(
        "http://127.0.0.1:{}",
        listener.local_addr().expect("addr").port()
    );
    *fake.base.lock().expect("lock") = base.clone();
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
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

async fn bounded<F: std::future::Future>(future: F) -> F::Output {
    tokio::time::timeout(PATIENCE, future)
        .await
        .expect("the test took too long")
}

/// The authorization error inside a failed call.
fn auth_error(error: &Error) -> &AuthError {
    error
        .auth_error()
        .unwrap_or_else(|| panic!("no AuthError in {error}"))
}

#[tokio::test]
async fn concurrent_refusals_share_one_authorization_and_are_replayed() {
    let fake = Arc::new(Fake::default());
    let base = serve(fake.clone()).await;
    let provider = Arc::new(
        OAuthProvider::new(oauth_config(Arc::new(MemoryTokenStore::new()))).expect("provider"),
    );
    let client = connect(&base, provider).await;
    let calls = (0..8).map(|_| client.list_tools());
    for result in bounded(futures_util::future::join_all(calls)).await {
        result.expect("tools/list after authorization");
    }
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(fake.issued.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_expiring_token_is_refreshed_before_the_request_and_kept_in_the_store() {
    let fake = Arc::new(Fake::default());
    *fake.expires_in.lock().expect("lock") = Some(0);
    let base = serve(fake.clone()).await;
    let store = Arc::new(MemoryTokenStore::new());
    let provider = Arc::new(OAuthProvider::new(oauth_config(store.clone())).expect("provider"));
    let client = connect(&base, provider).await;
    bounded(client.list_tools()).await.expect("first list");
    let refused = fake.refused.load(Ordering::SeqCst);
    let refreshes = fake.refreshes.load(Ordering::SeqCst);
    bounded(client.list_tools()).await.expect("second list");
    // Every token expires at once: the second list found it expired and
    // refreshed it before sending, so the server refused nothing.
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 1);
    assert_eq!(fake.refreshes.load(Ordering::SeqCst), refreshes + 1);
    assert_eq!(fake.refused.load(Ordering::SeqCst), refused);
    let stored = store
        .load(&format!("{base}/mcp"))
        .expect("store")
        .expect("a stored grant");
    let issued = fake.issued.load(Ordering::SeqCst);
    assert_eq!(
        stored.tokens.access_token.expose(),
        format!("access-{issued}")
    );
    assert_eq!(stored.client_id, "registered-client");
}

/// A client of `fake` (not yet initialized) whose standalone stream gives
/// up at its first refusal, and reopens soon after a stream ends.
async fn client_whose_stream_gives_up_at_once(fake: &Arc<Fake>) -> Client {
    let base = serve(fake.clone()).await;
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
    let fake = Arc::new(Fake::default());
    fake.offers_stream.store(true, Ordering::SeqCst);
    // Tokens expire at once: the reopening GET must renew its token first.
    *fake.expires_in.lock().expect("lock") = Some(0);
    let client = client_whose_stream_gives_up_at_once(&fake).await;
    let mut notifications = client.notifications();
    // The handshake is open; the stream is refused: no token yet.
    bounded(client.initialize()).await.expect("initialize");
    let gets = fake.gets.lock().expect("lock").clone();
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
    let gets = fake.gets.lock().expect("lock").clone();
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert_eq!(gets[1].authorization, fake.valid_token());
    assert!(!gets[1].refused);
    assert!(
        fake.refreshes.load(Ordering::SeqCst) >= 2,
        "the POST's token and then the GET's were renewed"
    );
}

#[tokio::test]
async fn a_standalone_stream_refused_after_its_token_was_revoked_resumes_from_its_last_event() {
    let fake = Arc::new(Fake::default());
    fake.offers_stream.store(true, Ordering::SeqCst);
    fake.end_streams.store(true, Ordering::SeqCst);
    let client = client_whose_stream_gives_up_at_once(&fake).await;
    let mut notifications = client.notifications();
    let mut refused_gets = fake.refused_gets.subscribe();
    bounded(client.initialize()).await.expect("initialize");
    bounded(client.list_tools()).await.expect("tools/list");
    // The stream opens with the token, delivers event 1 and ends; the
    // token is revoked, so reopening it is refused and it gives up.
    assert_eq!(
        bounded(notifications.recv()).await,
        Some(golem_mcp::ServerNotification::ToolsListChanged)
    );
    fake.revoked
        .store(fake.issued.load(Ordering::SeqCst), Ordering::SeqCst);
    bounded(refused_gets.wait_for(|refused| *refused >= 2))
        .await
        .expect("the reopening was refused");
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
    let gets = fake.gets.lock().expect("lock").clone();
    let second_refusal = gets
        .iter()
        .enumerate()
        .filter(|(_, get)| get.refused)
        .nth(1)
        .map(|(index, _)| index)
        .expect("two refusals");
    let reopened = &gets[second_refusal + 1];
    assert_eq!(reopened.authorization, fake.valid_token(), "{gets:?}");
    assert!(!reopened.refused, "{gets:?}");
    assert_eq!(
        reopened.last_event_id,
        second_refusal.to_string(),
        "{gets:?}"
    );
}

#[tokio::test]
async fn secrets_never_appear_in_errors_debug_output_or_traces() {
    let logs = Arc::new(Mutex::new(Vec::<u8>::new()));
    let writer = {
        let logs = logs.clone();
        move || LogWriter(logs.clone())
    };
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(writer)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let fake = Arc::new(Fake::default());
    let base = serve(fake.clone()).await;
    let mut config = oauth_config(Arc::new(MemoryTokenStore::new()));
    config.client_auth = ClientAuth::Secret("configured-secret-89".into());
    let provider = Arc::new(OAuthProvider::new(config).expect("provider"));
    let client = connect(&base, provider.clone()).await;
    bounded(client.list_tools()).await.expect("authorized");
    // Now a failure: the token we hold goes stale, and the token endpoint
    // refuses both the refresh and the new code.
    fake.issued.store(1000, Ordering::SeqCst);
    fake.token_fails.store(true, Ordering::SeqCst);
    let error = bounded(client.list_tools())
        .await
        .expect_err("the token endpoint is gone");
    let verifier = fake.verifier.lock().expect("lock").clone();
    assert!(!verifier.is_empty());
    let shown = format!(
        "{error}\n{error:?}\n{provider:?}\n{client:?}\n{}",
        String::from_utf8_lossy(&logs.lock().expect("lock"))
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

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn tokens_are_only_sent_to_the_server_they_were_issued_for() {
    let fake = Arc::new(Fake::default());
    let base = serve(fake.clone()).await;
    // Another origin that records what it is sent.
    let seen = Arc::new(Mutex::new(Vec::<Option<String>>::new()));
    let other = {
        let seen = seen.clone();
        let app = Router::new().route(
            "/mcp",
            post(move |headers: HeaderMap| {
                let seen = seen.clone();
                async move {
                    seen.lock().expect("lock").push(
                        headers
                            .get("authorization")
                            .and_then(|value| value.to_str().ok())
                            .map(str::to_owned),
                    );
                    StatusCode::SERVICE_UNAVAILABLE
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://127.0.0.1:{port}/mcp")
    };
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

    // A server that redirects the request elsewhere does not get the token
    // carried there.
    *fake.redirect_to.lock().expect("lock") = Some(other.clone());
    let _ = bounded(client.list_tools()).await;
    let seen = seen.lock().expect("lock");
    assert!(!seen.is_empty(), "the redirect was not followed at all");
    assert!(
        seen.iter().all(Option::is_none),
        "a token reached another origin: {seen:?}"
    );
}

async fn failed_authorization(fake: Arc<Fake>, timeout: Duration) -> Error {
    let base = serve(fake).await;
    let mut config = oauth_config(Arc::new(MemoryTokenStore::new()));
    config.timeout = timeout;
    let provider = Arc::new(OAuthProvider::new(config).expect("provider"));
    let client = connect(&base, provider).await;
    bounded(client.list_tools())
        .await
        .expect_err("authorization must fail")
}

#[tokio::test]
async fn an_authorization_server_without_s256_is_refused_before_the_user_is_asked() {
    let fake = Arc::new(Fake::default());
    fake.no_pkce.store(true, Ordering::SeqCst);
    let error = failed_authorization(fake.clone(), Duration::from_secs(5)).await;
    assert!(
        matches!(auth_error(&error), AuthError::PkceUnsupported { .. }),
        "{error}"
    );
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn plain_http_endpoints_off_loopback_are_refused() {
    let fake = Arc::new(Fake::default());
    *fake.token_endpoint.lock().expect("lock") = Some("http://auth.example.com/token".into());
    let error = failed_authorization(fake.clone(), Duration::from_secs(5)).await;
    assert!(
        matches!(auth_error(&error), AuthError::InsecureEndpoint { .. }),
        "{error}"
    );
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn oauth_answers_over_one_mebibyte_are_refused() {
    let fake = Arc::new(Fake::default());
    fake.metadata_padding.store(1 << 20, Ordering::SeqCst);
    let error = failed_authorization(fake, Duration::from_secs(5)).await;
    let auth = auth_error(&error);
    assert!(
        auth.to_string().contains("larger than 1048576 bytes"),
        "{auth}"
    );
}

#[tokio::test]
async fn an_oauth_request_that_gets_no_answer_times_out() {
    let fake = Arc::new(Fake::default());
    fake.token_hangs.store(true, Ordering::SeqCst);
    let error = failed_authorization(fake, Duration::from_millis(300)).await;
    let auth = auth_error(&error);
    assert!(auth.to_string().contains("no answer within"), "{auth}");
}

#[tokio::test]
async fn stored_tokens_are_used_only_by_the_client_they_were_issued_to() {
    use golem_mcp::auth::{Secret, StoredGrant, Tokens};
    for (configured, stored, authorizations) in [("mine", "mine", 0), ("mine", "another", 1)] {
        let fake = Arc::new(Fake::default());
        let base = serve(fake.clone()).await;
        fake.issued.store(1, Ordering::SeqCst); // "access-1" is valid
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
        };
        store.save(&format!("{base}/mcp"), &grant).expect("saved");
        let mut config = oauth_config(store);
        config.client_id = Some(configured.to_owned());
        let provider = Arc::new(OAuthProvider::new(config).expect("provider"));
        let client = connect(&base, provider).await;
        bounded(client.list_tools()).await.expect("listed");
        assert_eq!(
            fake.authorizations.load(Ordering::SeqCst),
            authorizations,
            "client {configured}, tokens of {stored}"
        );
    }
}

#[tokio::test]
async fn a_static_bearer_token_is_sent_and_its_refusal_is_reported() {
    use golem_mcp::auth::BearerToken;
    let fake = Arc::new(Fake::default());
    let base = serve(fake.clone()).await;
    fake.issued.store(1, Ordering::SeqCst); // "access-1" is valid
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
    assert_eq!(fake.authorizations.load(Ordering::SeqCst), 0);
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
