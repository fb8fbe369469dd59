//! The default HTTP client follows redirects within the server's origin
//! only (ADR 0017): nothing configured for a server (its headers, its
//! `Authorization`, the message itself) reaches another origin, and the
//! refused redirect is an error that says where it pointed.
#![cfg(feature = "http")]

mod support;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use golem_mcp::auth::BearerToken;
use golem_mcp::{Client, HttpConfig, HttpTransport};
use serde_json::{Value, json};
use support::bounded;

/// What one server saw: each request's method, path and headers.
type Seen = Arc<Mutex<Vec<(Method, String, HeaderMap)>>>;

/// A server on 127.0.0.1 (its own port: its own origin) whose router is
/// `routes`, recording every request; its base URL.
async fn serve(routes: impl Fn(&str) -> Router<Seen>, seen: &Seen) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port on 127.0.0.1");
    let base = format!("http://{}", listener.local_addr().expect("its address"));
    let app = routes(&base)
        .layer(axum::middleware::from_fn_with_state(seen.clone(), record))
        .with_state(seen.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

async fn record(
    State(seen): State<Seen>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let entry = (
        request.method().clone(),
        request.uri().path().to_owned(),
        request.headers().clone(),
    );
    seen.lock().expect("not poisoned").push(entry);
    next.run(request).await
}

/// A minimal MCP endpoint: answers `initialize` and `tools/list` with JSON,
/// takes notifications, and has no standalone stream.
async fn mcp(method: Method, body: Bytes) -> Response {
    if method == Method::GET {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let message: Value = serde_json::from_slice(&body).expect("JSON-RPC");
    let Some(id) = message.get("id") else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match message["method"].as_str() {
        Some("initialize") => json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "redirected", "version": "1"}
        }),
        _ => json!({"tools": []}),
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
    )
        .into_response()
}

fn redirect_to(location: String) -> Response {
    (
        StatusCode::TEMPORARY_REDIRECT,
        [(header::LOCATION, location)],
    )
        .into_response()
}

/// A route that answers every request with `status` pointing at
/// `location`.
fn redirecting(status: StatusCode, location: String) -> axum::routing::MethodRouter<Seen> {
    axum::routing::any(move || {
        let location = location.clone();
        async move { (status, [(header::LOCATION, location)]).into_response() }
    })
}

fn config(url: String) -> HttpConfig {
    HttpConfig {
        headers: vec![("X-Api-Key".into(), "header-secret".into())],
        auth: Some(Arc::new(BearerToken::new("token-secret"))),
        ..HttpConfig::new(url)
    }
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_and_says_where_it_pointed() {
    let elsewhere_seen = Seen::default();
    let elsewhere = serve(|_| Router::new().fallback(mcp), &elsewhere_seen).await;
    let origin_seen = Seen::default();
    let target = format!("{elsewhere}/mcp?key=in-the-query");
    let origin = serve(
        move |_| {
            let target = target.clone();
            Router::new().fallback(move || async move { redirect_to(target) })
        },
        &origin_seen,
    )
    .await;

    let client = Client::new(HttpTransport::new(config(format!("{origin}/mcp"))).expect("valid"));
    let error = bounded(client.initialize())
        .await
        .expect_err("the redirect is not followed");

    let status = error.http_status().expect("an HTTP status error");
    assert_eq!(status.status, 307);
    assert_eq!(
        status.location.as_deref(),
        Some(&*format!("{elsewhere}/mcp"))
    );
    let text = error.to_string();
    assert!(text.contains("another origin: not followed"), "{text}");
    assert!(!text.contains("in-the-query"), "{text}");
    assert_eq!(origin_seen.lock().expect("not poisoned").len(), 1);
    assert!(
        elsewhere_seen.lock().expect("not poisoned").is_empty(),
        "another origin was sent the request"
    );
}

#[tokio::test]
async fn a_redirect_within_the_origin_is_followed_with_the_servers_headers() {
    let seen = Seen::default();
    let base = serve(
        |base| {
            Router::new()
                .route(
                    "/old",
                    redirecting(StatusCode::TEMPORARY_REDIRECT, format!("{base}/mcp")),
                )
                .route("/mcp", axum::routing::any(mcp))
        },
        &seen,
    )
    .await;

    let client = Client::new(HttpTransport::new(config(format!("{base}/old"))).expect("valid"));
    let server = bounded(client.initialize()).await.expect("initialized");
    assert_eq!(server.name, "redirected");
    assert!(
        bounded(client.list_tools())
            .await
            .expect("listed")
            .is_empty()
    );

    let seen = seen.lock().expect("not poisoned");
    let moved: Vec<_> = seen
        .iter()
        .filter(|(method, path, _)| method == Method::POST && path == "/mcp")
        .collect();
    assert!(
        moved.len() >= 2,
        "initialize and tools/list reach /mcp: {seen:?}"
    );
    for (_, _, headers) in moved {
        assert_eq!(headers["x-api-key"], "header-secret");
        assert_eq!(headers["authorization"], "Bearer token-secret");
    }
}

#[tokio::test]
async fn redirects_within_the_origin_stop_after_ten() {
    let seen = Seen::default();
    // Every path sends the client one step further: /hop/0, /hop/1, ...
    let base = serve(
        |base| {
            let base = base.to_owned();
            Router::new().route(
                "/hop/{step}",
                axum::routing::any(move |axum::extract::Path(step): axum::extract::Path<u32>| {
                    let base = base.clone();
                    async move { redirect_to(format!("{base}/hop/{}", step + 1)) }
                }),
            )
        },
        &seen,
    )
    .await;

    let client = Client::new(HttpTransport::new(config(format!("{base}/hop/0"))).expect("valid"));
    let error = bounded(client.initialize())
        .await
        .expect_err("the redirects never end");
    let text = error.to_string();
    assert!(text.contains("more than 10 redirects"), "{text}");
    // The first request and ten redirects followed; the eleventh is not.
    assert_eq!(seen.lock().expect("not poisoned").len(), 11);
}

#[tokio::test]
async fn a_see_other_turns_the_post_into_a_get_without_its_body() {
    let seen = Seen::default();
    let base = serve(
        |base| {
            Router::new()
                .route(
                    "/mcp",
                    redirecting(StatusCode::SEE_OTHER, format!("{base}/answer")),
                )
                .route(
                    "/answer",
                    axum::routing::any(|| async { StatusCode::IM_A_TEAPOT }),
                )
        },
        &seen,
    )
    .await;

    let client = Client::new(HttpTransport::new(config(format!("{base}/mcp"))).expect("valid"));
    let error = bounded(client.initialize())
        .await
        .expect_err("the teapot refuses");
    assert_eq!(error.http_status().expect("a status error").status, 418);
    let seen = seen.lock().expect("not poisoned");
    let (method, path, headers) = seen.get(1).expect("the redirect was followed");
    assert_eq!((method, path.as_str()), (&Method::GET, "/answer"));
    assert!(headers.get(header::CONTENT_TYPE).is_none(), "{headers:?}");
    assert_eq!(headers["x-api-key"], "header-secret");
}
