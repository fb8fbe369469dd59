//! The fake as its own OAuth authorization server, with knobs for the
//! faults the conformance suite does not cover: expiring or revoked
//! tokens, insecure or oversized or silent endpoints. Protected resource
//! metadata at `/.well-known/oauth-protected-resource/mcp`, authorization
//! server metadata, dynamic registration (`/register`: client
//! `registered-client` with secret [`CLIENT_SECRET`]), `/authorize`
//! (redirects at once with [`CODE`]) and `/token` (access tokens
//! `access-N`, refresh tokens `refresh-N`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use axum::Router;
use axum::extract::{Query, State as Shared};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::{State, header};

/// The secret the registration hands out.
pub const CLIENT_SECRET: &str = "client-secret-0123";
/// The authorization code `/authorize` redirects with.
pub const CODE: &str = "authorization-code-4567";

/// The authorization server's knobs and record.
#[derive(Default)]
pub struct OAuth {
    /// The MCP endpoint needs the current access token: for everything
    /// but the handshake (`initialize`, notifications), and for the
    /// standalone stream it offers. A refusal is a 401 whose challenge
    /// names the resource metadata.
    pub protects: AtomicBool,
    /// Access tokens issued so far; only the last one is accepted.
    pub issued: AtomicUsize,
    /// Tokens up to this number are refused (revoked).
    pub revoked: AtomicUsize,
    /// Authorizations (`/authorize` visits) so far.
    pub authorizations: AtomicUsize,
    /// Refreshes so far.
    pub refreshes: AtomicUsize,
    /// `POST`s refused for want of a valid token.
    pub refused: AtomicUsize,
    /// The PKCE verifier of the last code exchange, to look for it in logs.
    pub verifier: Mutex<String>,
    /// Seconds until each access token expires.
    pub expires_in: Mutex<Option<u64>>,
    /// The token endpoint the metadata names, instead of ours.
    pub token_endpoint: Mutex<Option<String>>,
    /// Pad the authorization server metadata to this many bytes.
    pub metadata_padding: AtomicUsize,
    /// Leave `code_challenge_methods_supported` out of the metadata.
    pub no_pkce: AtomicBool,
    /// Never answer the token endpoint.
    pub token_hangs: AtomicBool,
    /// Refuse every token request.
    pub token_fails: AtomicBool,
}

impl OAuth {
    /// The `Authorization` header the fake accepts now.
    pub fn valid_token(&self) -> String {
        format!("Bearer access-{}", self.issued.load(Ordering::SeqCst))
    }

    /// Whether a request with these headers is refused for want of a
    /// valid token: the current one, issued and not revoked.
    pub(super) fn refuses(&self, headers: &HeaderMap) -> bool {
        let issued = self.issued.load(Ordering::SeqCst);
        let accepted = issued > self.revoked.load(Ordering::SeqCst)
            && header(headers, "authorization") == Some(self.valid_token().as_str());
        self.protects.load(Ordering::SeqCst) && !accepted
    }

    /// The refusal of a `POST` without a valid token, if it is refused.
    pub(super) fn refusal(&self, headers: &HeaderMap, base: &str) -> Option<Response> {
        if !self.refuses(headers) {
            return None;
        }
        self.refused.fetch_add(1, Ordering::SeqCst);
        let challenge = format!(
            r#"Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp""#
        );
        Some(
            (
                StatusCode::UNAUTHORIZED,
                [("www-authenticate", challenge)],
                "",
            )
                .into_response(),
        )
    }
}

/// `router` with the authorization server's routes.
pub(super) fn routes(router: Router<Arc<State>>) -> Router<Arc<State>> {
    router
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
}

async fn on_resource_metadata(Shared(state): Shared<Arc<State>>) -> Response {
    let base = state.base();
    axum::Json(json!({"resource": format!("{base}/mcp"), "authorization_servers": [base]}))
        .into_response()
}

async fn on_server_metadata(Shared(state): Shared<Arc<State>>) -> Response {
    let base = state.base();
    let oauth = &state.oauth;
    let token_endpoint = oauth
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
        "padding": "x".repeat(oauth.metadata_padding.load(Ordering::SeqCst)),
    });
    if oauth.no_pkce.load(Ordering::SeqCst) {
        metadata
            .as_object_mut()
            .expect("an object")
            .remove("code_challenge_methods_supported");
    }
    axum::Json(metadata).into_response()
}

async fn on_register() -> Response {
    let registered = json!({
        "client_id": "registered-client",
        "client_secret": CLIENT_SECRET,
        "token_endpoint_auth_method": "client_secret_basic"
    });
    (StatusCode::CREATED, axum::Json(registered)).into_response()
}

async fn on_authorize(
    Shared(state): Shared<Arc<State>>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    state.oauth.authorizations.fetch_add(1, Ordering::SeqCst);
    let redirect = format!(
        "{}?code={CODE}&state={}",
        query["redirect_uri"],
        query.get("state").map_or("", String::as_str)
    );
    (StatusCode::FOUND, [("location", redirect)]).into_response()
}

fn token_error(error: &str) -> Response {
    (StatusCode::BAD_REQUEST, axum::Json(json!({"error": error}))).into_response()
}

async fn on_token(Shared(state): Shared<Arc<State>>, body: String) -> Response {
    let oauth = &state.oauth;
    if oauth.token_hangs.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes())
        .into_owned()
        .collect();
    if oauth.token_fails.load(Ordering::SeqCst) {
        return token_error("invalid_grant");
    }
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            if form.get("code").map(String::as_str) != Some(CODE) {
                return token_error("invalid_grant");
            }
            *oauth.verifier.lock().expect("lock") =
                form.get("code_verifier").cloned().unwrap_or_default();
        }
        Some("refresh_token") => {
            oauth.refreshes.fetch_add(1, Ordering::SeqCst);
        }
        _ => return token_error("unsupported_grant_type"),
    }
    let n = oauth.issued.fetch_add(1, Ordering::SeqCst) + 1;
    let mut answer: Value = json!({
        "access_token": format!("access-{n}"),
        "token_type": "Bearer",
        "refresh_token": format!("refresh-{n}"),
    });
    if let Some(seconds) = *oauth.expires_in.lock().expect("lock") {
        answer["expires_in"] = json!(seconds);
    }
    axum::Json(answer).into_response()
}
