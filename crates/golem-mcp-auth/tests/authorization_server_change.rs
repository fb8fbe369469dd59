//! A server that moves to another authorization server (MCP 2026-07-28,
//! SEP-2352, "Authorization Server Binding"): the refusal of a token the
//! old one issued sends the provider back to discovery, which names the new
//! one; the client registers there again and authorizes there, and nothing
//! of the old one (client id, secret, tokens) reaches the new one. The old
//! grant is set aside, not deleted, and serves again if the server moves
//! back; a pre-registered client is not taken along to the new one.
//!
//! The servers are the fakes of `support`.

mod support;

use std::sync::{Arc, Mutex};

use golem_mcp_auth::{
    AuthError, AuthProvider, Challenge, FileTokenStore, MemoryTokenStore, OAuthConfig,
    OAuthProvider, Refusal, TokenStore,
};
use reqwest::Url;
use support::{Approver, Issuer, authorization_server, basic, bounded, resource};

/// The challenge of a refusal by the resource at `resource_base`, as the
/// conformance suite's migration scenario sends it.
fn challenge(resource_base: &str) -> Challenge {
    Challenge::parse(&format!(
        r#"Bearer error="invalid_token", scope="mcp:basic", resource_metadata="{resource_base}/.well-known/oauth-protected-resource/mcp""#
    ))
    .expect("a Bearer challenge")
}

fn provider_with(approver: &Arc<Approver>, store: Arc<dyn TokenStore>) -> OAuthProvider {
    let mut config = OAuthConfig::new(approver.clone());
    config.store = store;
    OAuthProvider::new(config).expect("a provider")
}

/// Asserts that nothing of `old`'s (its client id, secret or tokens, all
/// of which carry its name) was sent to `new`.
fn nothing_of(old: &Issuer, new: &Issuer, approver: &Approver) {
    let old_name = old.name();
    let old_client = format!("client-{old_name}");
    let old_basic = basic(&old_client, &format!("secret-{old_name}"));
    for (form, authorization) in new.token_requests.lock().expect("lock").iter() {
        assert_ne!(authorization.as_deref(), Some(old_basic.as_str()));
        assert!(
            form.values().all(|value| !value.contains(&old_name)),
            "something of the old authorization server's reached the new one: {form:?}"
        );
    }
    let new_base = new.base();
    for url in approver.1.lock().expect("lock").iter() {
        if url.as_str().starts_with(&new_base) {
            assert!(
                !url.as_str().contains(&old_client),
                "the old client id went to the new authorization endpoint: {url}"
            );
        }
    }
}

/// The refusal of the token `provider` sends to `url` now.
fn refusal_of(provider: &OAuthProvider, url: &Url, challenge: Option<Challenge>) -> Refusal {
    Refusal::new(url.clone(), 401, challenge, provider.authorization(url))
}

async fn moves_mid_session(with_challenge: bool) {
    let (first, second) = (authorization_server().await, authorization_server().await);
    let names = Arc::new(Mutex::new(first.base()));
    let resource_base = resource(names.clone()).await;
    let server = format!("{resource_base}/mcp");
    let url = Url::parse(&server).expect("valid");
    let challenge = with_challenge.then(|| challenge(&resource_base));
    let approver = Arc::new(Approver::default());
    let store = Arc::new(MemoryTokenStore::new());
    let provider = provider_with(&approver, store.clone());

    // First contact: refused without a token, authorized by the first.
    let refusal = Refusal::new(url.clone(), 401, challenge.clone(), None);
    bounded(provider.authorize(&refusal))
        .await
        .expect("authorized by the first");
    let first_client = format!("client-{}", first.name());
    assert_eq!(approver.client_ids(), [first_client.as_str()]);
    let first_requests = first.token_requests.lock().expect("lock").len();

    // The resource moves to the second: the same provider (what it
    // discovered and registered still in hand) sees its token refused.
    *names.lock().expect("lock") = second.base();
    let refusal = refusal_of(&provider, &url, challenge);
    bounded(provider.authorize(&refusal))
        .await
        .expect("authorized by the second");

    assert_eq!(
        second.registrations.lock().expect("lock").len(),
        1,
        "the client did not register with the new authorization server"
    );
    let second_client = format!("client-{}", second.name());
    assert_eq!(approver.client_ids(), [first_client, second_client.clone()]);
    nothing_of(&first, &second, &approver);
    assert_eq!(
        first.token_requests.lock().expect("lock").len(),
        first_requests,
        "the old authorization server was asked for tokens again"
    );
    let kept = store.load(&server).expect("readable").expect("kept");
    assert_eq!(kept.issuer, Some(second.base()));
    assert_eq!(kept.client_id, second_client);
    let sent = provider.authorization(&url).expect("a token");
    assert!(sent.expose().contains(&second.name()));
}

#[tokio::test]
async fn a_server_that_moves_mid_session_is_authorized_at_its_new_authorization_server() {
    // The challenge names the same metadata URL before and after the move,
    // as the conformance suite's does: what is at it changed.
    moves_mid_session(true).await;
}

#[tokio::test]
async fn a_server_that_moves_mid_session_without_a_challenge_is_discovered_again() {
    moves_mid_session(false).await;
}

#[tokio::test]
async fn the_grant_of_an_authorization_server_the_server_moves_back_to_serves_again() {
    let (first, second) = (authorization_server().await, authorization_server().await);
    let names = Arc::new(Mutex::new(first.base()));
    let resource_base = resource(names.clone()).await;
    let server = format!("{resource_base}/mcp");
    let url = Url::parse(&server).expect("valid");
    let dir =
        std::env::temp_dir().join(format!("golem-mcp-auth-moves-back-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let file = dir.join("tokens.json");
    let set_aside = format!("{server}#set-aside");

    // One run authorizes at the first, then follows the server to the second.
    let approver = Arc::new(Approver::default());
    let run = provider_with(&approver, Arc::new(FileTokenStore::new(&file)));
    bounded(run.login(&server))
        .await
        .expect("authorized by the first");
    *names.lock().expect("lock") = second.base();
    bounded(run.authorize(&refusal_of(&run, &url, None)))
        .await
        .expect("authorized by the second");
    let store = FileTokenStore::new(&file);
    let kept = store.load(&server).expect("readable").expect("kept");
    assert_eq!(kept.issuer, Some(second.base()));
    let aside = store
        .load(&set_aside)
        .expect("readable")
        .expect("set aside");
    assert_eq!(
        aside.issuer,
        Some(first.base()),
        "the first's grant is gone"
    );

    // The server moves back; the next run, on the same token file, takes
    // the first's grant up again: refreshed at the first, by the client
    // registered there, without a new registration or the user.
    *names.lock().expect("lock") = first.base();
    let next_approver = Arc::new(Approver::default());
    let next = provider_with(&next_approver, Arc::new(FileTokenStore::new(&file)));
    let second_requests = second.token_requests.lock().expect("lock").len();
    bounded(next.authorize(&refusal_of(&next, &url, None)))
        .await
        .expect("authorized by the first again");
    assert_eq!(first.refreshes(), 1);
    assert_eq!(first.registrations.lock().expect("lock").len(), 1);
    assert_eq!(
        next_approver.0.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "the user was asked for a grant the cache still had"
    );
    let first_name = first.name();
    let refresh = first
        .token_requests
        .lock()
        .expect("lock")
        .last()
        .cloned()
        .expect("a refresh");
    assert_eq!(
        refresh.0.get("refresh_token").map(String::as_str),
        Some(format!("refresh-{first_name}-1").as_str())
    );
    assert_eq!(
        refresh.1.as_deref(),
        Some(
            basic(
                &format!("client-{first_name}"),
                &format!("secret-{first_name}")
            )
            .as_str()
        )
    );
    nothing_of(&second, &first, &next_approver);
    assert_eq!(
        second.token_requests.lock().expect("lock").len(),
        second_requests
    );
    let kept = store.load(&server).expect("readable").expect("kept");
    assert_eq!(kept.issuer, Some(first.base()));
    assert!(kept.tokens.access_token.expose().contains(&first_name));
    let aside = store
        .load(&set_aside)
        .expect("readable")
        .expect("set aside");
    assert_eq!(aside.issuer, Some(second.base()));

    // Logging out forgets both.
    next.logout(&server).expect("logged out");
    let forgotten = (store.load(&server), store.load(&set_aside));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(matches!(forgotten, (Ok(None), Ok(None))), "{forgotten:?}");
}

#[tokio::test]
async fn a_preregistered_client_is_not_taken_to_another_authorization_server() {
    let (first, second) = (authorization_server().await, authorization_server().await);
    let names = Arc::new(Mutex::new(first.base()));
    let resource_base = resource(names.clone()).await;
    let server = format!("{resource_base}/mcp");
    let url = Url::parse(&server).expect("valid");
    let approver = Arc::new(Approver::default());
    let store = Arc::new(MemoryTokenStore::new());
    let mut config = OAuthConfig::new(approver.clone());
    config.client_id = Some("pre-registered".to_owned());
    config.store = store.clone();
    let provider = OAuthProvider::new(config).expect("a provider");

    bounded(provider.login(&server))
        .await
        .expect("authorized by the first");
    *names.lock().expect("lock") = second.base();
    let error = bounded(provider.authorize(&refusal_of(
        &provider,
        &url,
        Some(challenge(&resource_base)),
    )))
    .await
    .expect_err("a pre-registered client belongs to the first");
    assert!(matches!(error, AuthError::Registration { .. }), "{error}");
    assert!(error.to_string().contains("configure a client"), "{error}");
    assert!(second.token_requests.lock().expect("lock").is_empty());
    assert_eq!(approver.client_ids(), ["pre-registered"]);
    // Nothing was thrown away: the user decides.
    let kept = store.load(&server).expect("readable").expect("kept");
    assert_eq!(kept.issuer, Some(first.base()));
}
