//! The OAuth flow against fake servers: credentials are bound to the
//! authorization server that issued them (a refresh token and a client
//! secret go back to that issuer only, whatever discovery names later: RFC
//! 6749 §10.4, RFC 9700 §4.4); metadata that claims another issuer than the
//! one it was looked up for is refused (RFC 8414 §3.3); a registration says
//! what kind of application registers; a token cache that cannot be used
//! fails the authorization before the user is sent anywhere.
//!
//! The servers are the fakes of `support`.

mod support;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use axum::routing::{get, post};
use golem_mcp_auth::{
    AuthError, AuthProvider, MemoryTokenStore, OAuthConfig, OAuthProvider, Refusal, TokenStore,
};
use reqwest::Url;
use serde_json::json;
use support::{
    Approver, TokenRequest, authorization_server, basic, bounded, provider, resource, serve,
};

#[tokio::test]
async fn a_grant_is_never_refreshed_at_another_authorization_server() {
    let (first, second) = (authorization_server().await, authorization_server().await);
    let first_base = first.base.lock().expect("lock").clone();
    let names = Arc::new(Mutex::new(first_base.clone()));
    let server = format!("{}/mcp", resource(names.clone()).await);
    let url = Url::parse(&server).expect("valid");
    let store = Arc::new(MemoryTokenStore::new());

    bounded(provider(&store).login(&server))
        .await
        .expect("authorized by the first");
    let kept = store.load(&server).expect("readable").expect("kept");
    assert_eq!(kept.issuer.as_deref(), Some(first_base.as_str()));
    let first_name = first.name();
    assert_eq!(
        first.registrations.lock().expect("lock")[0]["application_type"],
        "native"
    );

    // The resource now names another authorization server; the next run
    // (a new provider on the same store) must take nothing of the first's
    // there, neither when a token expires nor when a request is refused.
    *names.lock().expect("lock") = second.base.lock().expect("lock").clone();
    let next = provider(&store);
    bounded(next.prepare(&url))
        .await
        .expect("prepare never fails");
    assert_eq!(
        second.refreshes(),
        0,
        "an expiring token was refreshed elsewhere"
    );
    let refusal = Refusal::new(url.clone(), 401, None, next.authorization(&url));
    bounded(next.authorize(&refusal))
        .await
        .expect("authorized by the second");

    let sent_to_second = second.token_requests.lock().expect("lock").clone();
    assert_eq!(
        second.refreshes(),
        0,
        "the first's refresh token went to the second"
    );
    let first_credentials = basic(
        &format!("client-{first_name}"),
        &format!("secret-{first_name}"),
    );
    for (form, authorization) in &sent_to_second {
        assert_ne!(authorization.as_deref(), Some(first_credentials.as_str()));
        assert!(
            form.values().all(|value| !value.contains(&first_name)),
            "something of the first's reached the second: {form:?}"
        );
    }
    assert_eq!(
        second.registrations.lock().expect("lock").len(),
        1,
        "registered anew"
    );
    let kept = store.load(&server).expect("readable").expect("kept");
    let second_base = second.base.lock().expect("lock").clone();
    assert_eq!(kept.issuer.as_deref(), Some(second_base.as_str()));
    assert!(kept.tokens.access_token.expose().contains(&second.name()));

    // With its own issuer named again, the grant is refreshed there.
    bounded(next.prepare(&url))
        .await
        .expect("prepare never fails");
    assert_eq!(second.refreshes(), 1);
}

#[tokio::test]
async fn metadata_that_claims_another_issuer_is_refused() {
    let impostor = authorization_server().await;
    *impostor.claims.lock().expect("lock") = Some("https://honest.example".to_owned());
    let names = Arc::new(Mutex::new(impostor.base.lock().expect("lock").clone()));
    let server = format!("{}/mcp", resource(names).await);
    let store = Arc::new(MemoryTokenStore::new());

    let error = bounded(provider(&store).login(&server))
        .await
        .expect_err("the metadata's issuer is not the one looked up");
    assert!(matches!(error, AuthError::Discovery { .. }), "{error}");
    assert!(error.to_string().contains("RFC 8414"), "{error}");
    assert!(impostor.registrations.lock().expect("lock").is_empty());
    assert!(impostor.token_requests.lock().expect("lock").is_empty());
    assert!(store.load(&server).expect("readable").is_none());
}

#[tokio::test]
async fn a_token_cache_that_cannot_be_used_fails_before_the_user_is_asked() {
    use std::os::unix::fs::PermissionsExt;
    let issuer = authorization_server().await;
    let names = Arc::new(Mutex::new(issuer.base.lock().expect("lock").clone()));
    let server = format!("{}/mcp", resource(names).await);
    let dir =
        std::env::temp_dir().join(format!("golem-mcp-auth-open-cache-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let approver = Arc::new(Approver::default());
    let mut config = OAuthConfig::new(approver.clone());
    config.store = Arc::new(golem_mcp_auth::FileTokenStore::new(dir.join("tokens.json")));
    let provider = OAuthProvider::new(config).expect("a provider");

    let error = bounded(provider.login(&server))
        .await
        .expect_err("the cache is refused");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        error.to_string().contains("write to its directory"),
        "{error}"
    );
    assert_eq!(
        approver.0.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the user was sent to authorize for tokens that could not be kept"
    );
    assert!(issuer.token_requests.lock().expect("lock").is_empty());
}

#[tokio::test]
async fn a_refresh_token_another_process_rotated_is_not_sent_again() {
    let issuer = authorization_server().await;
    let names = Arc::new(Mutex::new(issuer.base.lock().expect("lock").clone()));
    let server = format!("{}/mcp", resource(names).await);
    let url = Url::parse(&server).expect("valid");
    let store = Arc::new(MemoryTokenStore::new());

    // Two processes on one token cache: both read the same grant.
    let first = provider(&store);
    bounded(first.login(&server)).await.expect("authorized");
    let second = provider(&store);
    assert_eq!(second.authorization(&url), first.authorization(&url));

    // The first refreshes (the issuer rotates the refresh token); then the
    // second's token expires too. It must use the rotated refresh token,
    // never send the spent one again (which a rotating issuer answers by
    // revoking the whole grant).
    bounded(first.prepare(&url))
        .await
        .expect("prepare never fails");
    bounded(second.prepare(&url))
        .await
        .expect("prepare never fails");
    let spent: Vec<String> = issuer
        .token_requests
        .lock()
        .expect("lock")
        .iter()
        .filter_map(|(form, _)| form.get("refresh_token").cloned())
        .collect();
    // The second found the first's refreshed grant in the store and took
    // it: one refresh in all, and both send the same, current token.
    assert_eq!(
        spent.len(),
        1,
        "a spent refresh token was sent again: {spent:?}"
    );
    assert_eq!(second.authorization(&url), first.authorization(&url));
    let kept = store.load(&server).expect("readable").expect("kept");
    assert_eq!(
        second
            .authorization(&url)
            .map(|token| token.expose().to_owned()),
        Some(format!("Bearer {}", kept.tokens.access_token.expose()))
    );
}

#[tokio::test]
async fn an_expiring_token_kept_in_a_file_is_refreshed_on_the_first_prepare() {
    // The file keeps the expiry to the second; the grant in memory is more
    // precise: they are the same grant all the same.
    let issuer = authorization_server().await;
    let names = Arc::new(Mutex::new(issuer.base.lock().expect("lock").clone()));
    let server = format!("{}/mcp", resource(names).await);
    let url = Url::parse(&server).expect("valid");
    let dir = std::env::temp_dir().join(format!("golem-mcp-auth-file-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = OAuthConfig::new(Arc::new(Approver::default()));
    config.store = Arc::new(golem_mcp_auth::FileTokenStore::new(dir.join("tokens.json")));
    let provider = OAuthProvider::new(config).expect("a provider");
    bounded(provider.login(&server)).await.expect("authorized");
    bounded(provider.prepare(&url))
        .await
        .expect("prepare never fails");
    let refreshed = issuer.refreshes();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(
        refreshed, 1,
        "the first prepare of an expiring token did not refresh"
    );
}

#[tokio::test]
async fn a_2025_03_26_server_cannot_claim_the_issuer_of_a_stored_grant() {
    use std::sync::atomic::{AtomicBool, Ordering};
    // The resource names an honest issuer for the login, then serves no
    // protected-resource metadata (the 2025-03-26 way) but metadata of its
    // own that claims the honest issuer, with a token endpoint of its own.
    let honest = authorization_server().await;
    let honest_base = honest.base.lock().expect("lock").clone();
    let legacy = Arc::new(AtomicBool::new(false));
    let stolen: Arc<Mutex<Vec<TokenRequest>>> = Arc::default();
    let (as_resource, as_server, named) = (legacy.clone(), legacy.clone(), honest_base.clone());
    let thief = stolen.clone();
    let router = Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(move |headers: HeaderMap| {
                let (legacy, named) = (as_resource.clone(), named.clone());
                async move {
                    if legacy.load(Ordering::SeqCst) {
                        return StatusCode::NOT_FOUND.into_response();
                    }
                    let host = headers["host"].to_str().expect("a host").to_owned();
                    axum::Json(json!({
                        "resource": format!("http://{host}/mcp"),
                        "authorization_servers": [named],
                    }))
                    .into_response()
                }
            }),
        )
        .route(
            "/.well-known/oauth-protected-resource",
            get(|| async { StatusCode::NOT_FOUND }),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(move |headers: HeaderMap| {
                let (legacy, claimed) = (as_server.clone(), honest_base.clone());
                async move {
                    if !legacy.load(Ordering::SeqCst) {
                        return StatusCode::NOT_FOUND.into_response();
                    }
                    let host = headers["host"].to_str().expect("a host").to_owned();
                    axum::Json(json!({
                        "issuer": claimed,
                        "authorization_endpoint": format!("http://{host}/authorize"),
                        "token_endpoint": format!("http://{host}/steal"),
                        "code_challenge_methods_supported": ["S256"],
                    }))
                    .into_response()
                }
            }),
        )
        .route(
            "/steal",
            post(move |headers: HeaderMap, body: String| {
                let thief = thief.clone();
                async move {
                    let form = url::form_urlencoded::parse(body.as_bytes())
                        .into_owned()
                        .collect();
                    let authorization = headers
                        .get("authorization")
                        .and_then(|value| value.to_str().ok())
                        .map(str::to_owned);
                    thief.lock().expect("lock").push((form, authorization));
                    StatusCode::BAD_REQUEST
                }
            }),
        );
    let server = format!("{}/mcp", serve(router).await);
    let url = Url::parse(&server).expect("valid");
    let store = Arc::new(MemoryTokenStore::new());
    bounded(provider(&store).login(&server))
        .await
        .expect("authorized");
    legacy.store(true, Ordering::SeqCst);
    // The next run, on the same cache.
    bounded(provider(&store).prepare(&url))
        .await
        .expect("prepare never fails");
    let stolen = stolen.lock().expect("lock").clone();
    assert!(
        stolen
            .iter()
            .all(|(form, _)| form.get("grant_type").map(String::as_str) != Some("refresh_token")),
        "the honest issuer's refresh token went elsewhere: {stolen:?}"
    );
}
