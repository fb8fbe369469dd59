//! OAuth end to end against an authorization server nobody here wrote: the
//! official Python SDK's server auth (`mcp` on PyPI) protecting an MCP
//! server (`peers/python/mcp_py_auth_server.py`, whose only parts of its
//! own are in-memory storage and an approval that comes at once). The
//! client discovers, registers, authorizes through a user agent that
//! follows the redirect, calls tools, and refreshes its expiring tokens.
#![cfg(feature = "http")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use golem_mcp::auth::{MemoryTokenStore, OAuthConfig, OAuthProvider, RedirectFollower, TokenStore};
use golem_mcp::{Client, HttpConfig, HttpTransport};
use support::{peer_bounded, python_protected, raw};

async fn call(client: &Client, tool: &str, arguments: &str) -> String {
    peer_bounded(client.call_tool(tool, &raw(arguments)))
        .await
        .expect("the call succeeds")
        .text()
}

#[tokio::test]
async fn python_sdk_authorization_server_discovery_registration_code_and_refresh() {
    // Tokens that expire in 3 s are refreshed before every request (the
    // client refreshes within 30 s of expiry): each call after the first
    // authorization goes out with a refreshed token.
    let server = python_protected(3);
    let store = Arc::new(MemoryTokenStore::new());
    let follower = RedirectFollower::new("http://127.0.0.1:9/callback", Duration::from_secs(10))
        .expect("follower");
    let mut config = OAuthConfig::new(Arc::new(follower));
    config.store = store.clone();
    let provider = Arc::new(OAuthProvider::new(config).expect("provider"));
    let client = Client::new(
        HttpTransport::new(HttpConfig {
            auth: Some(provider),
            ..HttpConfig::new(server.url.clone())
        })
        .expect("transport"),
    );
    let info = peer_bounded(client.initialize())
        .await
        .expect("initialize, once authorized");
    assert_eq!(info.name, "golem-py-auth-peer");
    assert_eq!(
        call(&client, "echo", r#"{"message":"hi"}"#).await,
        "Echo: hi"
    );
    let issued = call(&client, "issued", "{}").await;
    let count = |grant: &str| -> u32 {
        issued
            .split_whitespace()
            .find_map(|entry| entry.strip_prefix(&format!("{grant}=")))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {grant} count in {issued:?}"))
    };
    assert_eq!(count("authorization_code"), 1, "{issued}");
    assert!(count("refresh_token") >= 2, "{issued}");
    let grant = store
        .load(&server.url)
        .expect("the store")
        .expect("the tokens are kept");
    assert_eq!(grant.tokens.scope.as_deref(), Some("mcp"));
    assert!(grant.tokens.refresh_token.is_some());
    client.close().await.expect("closed");
}
