//! The fakes of the OAuth integration tests, on 127.0.0.1: a protected
//! resource whose metadata names an authorization server the test can
//! change, authorization servers that record every registration and token
//! request (one of them rotating refresh tokens), and a user who approves
//! at once and keeps the authorization URLs it was sent to.
//!
//! Each test crate uses a part of it.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use golem_mcp_auth::{
    AuthFuture, MemoryTokenStore, OAuthConfig, OAuthProvider, OwnedAuthFuture, PendingRedirect,
    UserAgent,
};
use reqwest::Url;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// How long any step may take before the test fails instead of hanging.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub async fn bounded<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(PATIENCE, future)
        .await
        .expect("finished within the test's patience")
}

/// A token request as the fake saw it: its form and its `Authorization`.
pub type TokenRequest = (HashMap<String, String>, Option<String>);

/// One fake authorization server: what it was sent, and what it claims.
#[derive(Default)]
pub struct Issuer {
    pub base: Mutex<String>,
    /// The `issuer` its metadata states; its own base URL when `None`.
    pub claims: Mutex<Option<String>>,
    pub registrations: Mutex<Vec<Value>>,
    pub token_requests: Mutex<Vec<TokenRequest>>,
}

impl Issuer {
    /// Its base URL, which is also its issuer identifier.
    pub fn base(&self) -> String {
        self.base.lock().expect("lock").clone()
    }

    /// Its port: a name no other fake has, which its client ids, secrets
    /// and tokens carry.
    pub fn name(&self) -> String {
        let base = self.base.lock().expect("lock").clone();
        base.rsplit(':').next().unwrap_or_default().to_owned()
    }

    pub fn refreshes(&self) -> usize {
        self.token_requests
            .lock()
            .expect("lock")
            .iter()
            .filter(|(form, _)| form.get("grant_type").map(String::as_str) == Some("refresh_token"))
            .count()
    }
}

pub async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port on 127.0.0.1");
    let base = format!("http://{}", listener.local_addr().expect("its address"));
    tokio::spawn(async move { axum::serve(listener, router).await });
    base
}

pub async fn authorization_server() -> Arc<Issuer> {
    let issuer = Arc::new(Issuer::default());
    let router = Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/token", post(token))
        .with_state(issuer.clone());
    *issuer.base.lock().expect("lock") = serve(router).await;
    issuer
}

pub async fn metadata(State(issuer): State<Arc<Issuer>>) -> Response {
    let base = issuer.base.lock().expect("lock").clone();
    let claimed = issuer.claims.lock().expect("lock").clone();
    axum::Json(json!({
        "issuer": claimed.unwrap_or_else(|| base.clone()),
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
    }))
    .into_response()
}

pub async fn register(State(issuer): State<Arc<Issuer>>, body: axum::Json<Value>) -> Response {
    issuer.registrations.lock().expect("lock").push(body.0);
    let name = issuer.name();
    let registered = json!({
        "client_id": format!("client-{name}"),
        "client_secret": format!("secret-{name}"),
        "token_endpoint_auth_method": "client_secret_basic",
    });
    (StatusCode::CREATED, axum::Json(registered)).into_response()
}

pub async fn token(
    State(issuer): State<Arc<Issuer>>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let authorization = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let n = {
        let mut requests = issuer.token_requests.lock().expect("lock");
        requests.push((form, authorization));
        requests.len()
    };
    let name = issuer.name();
    axum::Json(json!({
        "access_token": format!("access-{name}-{n}"),
        "refresh_token": format!("refresh-{name}-{n}"),
        "token_type": "Bearer",
        // Within the provider's refresh margin: every prepare refreshes.
        "expires_in": 10,
    }))
    .into_response()
}

/// An authorization server that rotates refresh tokens and refuses one
/// used before (RFC 9700 §4.14.2), for refreshes only. It holds the first
/// refresh it is sent, unanswered, until something shows that another
/// client is refreshing too: a refresh it refuses, or a `POST /contended`
/// (a client telling it that it found the token cache locked).
#[derive(Default)]
pub struct Rotating {
    pub base: Mutex<String>,
    /// The refresh tokens it accepts now: one, the last it issued.
    pub valid: Mutex<HashSet<String>>,
    /// The refresh tokens it was sent, in order.
    pub refreshes: Mutex<Vec<String>>,
    /// Those it refused, having seen them before.
    pub refused: Mutex<Vec<String>>,
    /// How many times it was told of a locked token cache.
    pub contended: AtomicUsize,
    /// Notified once the first refresh has arrived (and is held).
    pub holding: Notify,
    /// Lets the first refresh be answered.
    release: Notify,
}

impl Rotating {
    /// Its base URL, which is also its issuer identifier.
    pub fn base(&self) -> String {
        self.base.lock().expect("lock").clone()
    }
}

/// A [`Rotating`] authorization server whose only valid refresh token is
/// `refresh_token`.
pub async fn rotating_authorization_server(refresh_token: &str) -> Arc<Rotating> {
    let issuer = Arc::new(Rotating::default());
    issuer
        .valid
        .lock()
        .expect("lock")
        .insert(refresh_token.to_owned());
    let router = Router::new()
        .route(
            "/.well-known/oauth-authorization-server",
            get(|State(issuer): State<Arc<Rotating>>| async move {
                let base = issuer.base();
                axum::Json(json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": format!("{base}/token"),
                    "code_challenge_methods_supported": ["S256"],
                }))
            }),
        )
        .route("/token", post(rotating_token))
        .route(
            "/contended",
            post(|State(issuer): State<Arc<Rotating>>| async move {
                issuer.contended.fetch_add(1, Ordering::SeqCst);
                issuer.release.notify_one();
            }),
        )
        .with_state(issuer.clone());
    *issuer.base.lock().expect("lock") = serve(router).await;
    issuer
}

async fn rotating_token(State(issuer): State<Arc<Rotating>>, body: String) -> Response {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    let (Some("refresh_token"), Some(presented)) = (
        form.get("grant_type").map(String::as_str),
        form.get("refresh_token"),
    ) else {
        let error = json!({"error": "unsupported_grant_type"});
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    };
    let (accepted, n) = {
        let mut refreshes = issuer.refreshes.lock().expect("lock");
        refreshes.push(presented.clone());
        // Spent as it arrives: a second use, even while the first is
        // unanswered, is refused.
        let accepted = issuer.valid.lock().expect("lock").remove(presented);
        (accepted, refreshes.len())
    };
    if !accepted {
        issuer.refused.lock().expect("lock").push(presented.clone());
        issuer.release.notify_one();
        let error =
            json!({"error": "invalid_grant", "error_description": "refresh token already used"});
        return (StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
    }
    if n == 1 {
        issuer.holding.notify_one();
        issuer.release.notified().await;
    }
    let rotated = format!("refresh-{n}");
    issuer.valid.lock().expect("lock").insert(rotated.clone());
    axum::Json(json!({
        "access_token": format!("access-{n}"),
        "refresh_token": rotated,
        "token_type": "Bearer",
        "expires_in": 3600,
    }))
    .into_response()
}

/// A protected resource at `{base}/mcp` whose metadata names the
/// authorization server in `names`.
pub async fn resource(names: Arc<Mutex<String>>) -> String {
    let router = Router::new().route(
        "/.well-known/oauth-protected-resource/mcp",
        get(move |headers: HeaderMap| {
            let names = names.clone();
            async move {
                let host = headers["host"].to_str().expect("a host").to_owned();
                let authorization_server = names.lock().expect("lock").clone();
                axum::Json(json!({
                    "resource": format!("http://{host}/mcp"),
                    "authorization_servers": [authorization_server],
                }))
            }
        }),
    );
    serve(router).await
}

/// A user who approves at once: the redirect carries a code and the state.
/// Counts the authorizations it was asked for, and keeps their URLs.
#[derive(Default)]
pub struct Approver(pub std::sync::atomic::AtomicUsize, pub Arc<Mutex<Vec<Url>>>);

impl Approver {
    /// The `client_id` of each authorization URL it was sent to.
    pub fn client_ids(&self) -> Vec<String> {
        self.1
            .lock()
            .expect("lock")
            .iter()
            .filter_map(|url| {
                url.query_pairs()
                    .find(|(name, _)| name == "client_id")
                    .map(|(_, value)| value.into_owned())
            })
            .collect()
    }
}

pub struct Approval(Arc<Mutex<Vec<Url>>>);

impl UserAgent for Approver {
    fn prepare(&self) -> AuthFuture<'_, Box<dyn PendingRedirect>> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let urls = self.1.clone();
        Box::pin(async { Ok(Box::new(Approval(urls)) as Box<dyn PendingRedirect>) })
    }
}

impl PendingRedirect for Approval {
    fn redirect_uri(&self) -> &str {
        "http://127.0.0.1:9/callback"
    }

    fn wait(self: Box<Self>, authorization_url: Url, state: String) -> OwnedAuthFuture<Url> {
        self.0.lock().expect("lock").push(authorization_url);
        Box::pin(async move {
            let mut redirect = Url::parse("http://127.0.0.1:9/callback").expect("valid");
            redirect
                .query_pairs_mut()
                .append_pair("code", "the-code")
                .append_pair("state", &state);
            Ok(redirect)
        })
    }
}

pub fn provider(store: &Arc<MemoryTokenStore>) -> OAuthProvider {
    let mut config = OAuthConfig::new(Arc::new(Approver::default()));
    config.store = store.clone();
    OAuthProvider::new(config).expect("a provider")
}

pub fn basic(client: &str, secret: &str) -> String {
    let pair = base64::engine::general_purpose::STANDARD.encode(format!("{client}:{secret}"));
    format!("Basic {pair}")
}
