//! The standalone GET stream is open before `initialize` returns: a server
//! that sends a request outside any request of the client's (an
//! elicitation from inside a tool call that follows at once) drops it while
//! no stream is open, so the session is handed over only once the server
//! has answered the GET.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use golem_mcp::{Client, HttpConfig, HttpTransport, LATEST_PROTOCOL_VERSION};
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// Whether the server has answered the standalone GET.
#[derive(Default)]
struct Fake {
    get_answered: AtomicBool,
}

async fn on_post(body: Bytes) -> Response {
    let message: Value = serde_json::from_slice(&body).expect("JSON");
    if message["method"] != "initialize" {
        return StatusCode::ACCEPTED.into_response();
    }
    let answer = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
        "protocolVersion": LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "serverInfo": {"name": "slow-get", "version": "1"}
    }});
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::HeaderName::from_static("mcp-session-id"), "s-1"),
        ],
        answer.to_string(),
    )
        .into_response()
}

/// A slow GET: the server takes its time to answer the stream's request
/// (here it offers none, 405).
async fn on_get(State(fake): State<Arc<Fake>>, _headers: HeaderMap) -> StatusCode {
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.get_answered.store(true, Ordering::SeqCst);
    StatusCode::METHOD_NOT_ALLOWED
}

#[tokio::test]
async fn initialize_returns_once_the_server_answered_the_standalone_get() {
    let fake = Arc::new(Fake::default());
    let app = Router::new()
        .route("/mcp", post(on_post).get(on_get))
        .with_state(Arc::clone(&fake));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("address"));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    let client = Client::new(HttpTransport::new(HttpConfig::new(url)).expect("valid"));
    tokio::time::timeout(Duration::from_secs(10), client.initialize())
        .await
        .expect("in time")
        .expect("initializes");
    assert!(
        fake.get_answered.load(Ordering::SeqCst),
        "initialize returned before the standalone stream was answered"
    );
    client.close().await.expect("closes");
    server.abort();
}
