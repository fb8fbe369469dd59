//! The fakes of the OAuth integration tests, on 127.0.0.1: a protected
//! resource whose metadata names an authorization server the test can
//! change, authorization servers that record every registration and token
//! request, and a user who approves at once and keeps the authorization
//! URLs it was sent to.
//!
//! Each test crate uses a part of it.
#![allow(dead_code)]

use std::collections::HashMap;
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
