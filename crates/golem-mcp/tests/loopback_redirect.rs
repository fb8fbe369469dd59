//! The loopback redirect receiver, driven by a stand-in browser: it binds
//! 127.0.0.1 only, takes one redirect with the right `state`, answers
//! strays and refuses a wrong `state` while it goes on waiting (serving
//! connections at once, so an idle one holds nothing up), is gone after
//! one use, and times out.
#![cfg(feature = "http")]

mod support;

use std::sync::Arc;
use std::time::Duration;

use golem_mcp::auth::{LoopbackConfig, LoopbackRedirect, UserAgent};
use reqwest::Url;
use support::PATIENCE;
use tokio::sync::mpsc;

/// A receiver whose "browser" sends the URL it was asked to open to the
/// test.
fn receiver(timeout: Duration) -> (LoopbackRedirect, mpsc::UnboundedReceiver<Url>) {
    let (opened, urls) = mpsc::unbounded_channel();
    let mut config = LoopbackConfig::default();
    config.timeout = timeout;
    config.open = Arc::new(move |url: &Url| {
        let _ = opened.send(url.clone());
        Ok(())
    });
    (LoopbackRedirect::new(config), urls)
}

async fn visit(url: &str) -> (u16, String) {
    let response = reqwest::get(url).await.expect("the receiver answers");
    let status = response.status().as_u16();
    (status, response.text().await.expect("a body"))
}

#[tokio::test]
async fn one_redirect_with_the_right_state_is_taken_then_the_receiver_is_gone() {
    let (agent, mut urls) = receiver(PATIENCE);
    let pending = agent.prepare().await.expect("bound");
    let redirect_uri = pending.redirect_uri().to_owned();
    assert!(
        redirect_uri.starts_with("http://127.0.0.1:"),
        "{redirect_uri}"
    );
    assert!(redirect_uri.ends_with("/callback"), "{redirect_uri}");
    let authorization_url = Url::parse("https://auth.example.com/authorize?x=1").expect("url");
    let wait = tokio::spawn(pending.wait(authorization_url.clone(), "the-state".into()));
    assert_eq!(urls.recv().await.expect("opened"), authorization_url);

    let port = Url::parse(&redirect_uri)
        .expect("url")
        .port()
        .expect("a port");
    let (status, _) = visit(&format!("http://127.0.0.1:{port}/favicon.ico")).await;
    assert_eq!(status, 404);
    let (status, page) = visit(&format!("{redirect_uri}?code=the-code&state=the-state")).await;
    assert_eq!(status, 200);
    assert!(page.contains("You can close this tab"), "{page}");
    let redirect = tokio::time::timeout(PATIENCE, wait)
        .await
        .expect("in time")
        .expect("no panic")
        .expect("the redirect");
    assert!(
        redirect
            .query()
            .is_some_and(|query| query.contains("code=the-code"))
    );
    // One use: nobody listens any more.
    let again = reqwest::get(format!("{redirect_uri}?code=other&state=the-state")).await;
    assert!(again.is_err(), "a second redirect was answered");
}

#[tokio::test]
async fn forged_redirects_strays_and_idle_connections_do_not_end_the_wait() {
    let (agent, mut urls) = receiver(PATIENCE);
    let pending = agent.prepare().await.expect("bound");
    let redirect_uri = pending.redirect_uri().to_owned();
    let port = Url::parse(&redirect_uri)
        .expect("url")
        .port()
        .expect("a port");
    let wait = tokio::spawn(pending.wait(
        Url::parse("https://auth.example.com/authorize").expect("url"),
        "expected".into(),
    ));
    urls.recv().await.expect("opened");

    // A connection that sends nothing, held open throughout: the redirect
    // must not wait behind it.
    let idle = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connected");
    let (status, _) = visit(&format!("{redirect_uri}?code=c&state=attacker-state-42")).await;
    assert_eq!(status, 400);
    // More strays than a browser ever sends.
    for n in 0..40 {
        let (status, _) = visit(&format!("http://127.0.0.1:{port}/probe-{n}")).await;
        assert_eq!(status, 404);
    }
    // The real redirect is taken at once (well within the idle
    // connection's 10 s allowance).
    let (status, _) = tokio::time::timeout(
        Duration::from_secs(5),
        visit(&format!("{redirect_uri}?code=the-code&state=expected")),
    )
    .await
    .expect("answered while another connection is idle");
    assert_eq!(status, 200);
    let redirect = tokio::time::timeout(PATIENCE, wait)
        .await
        .expect("in time")
        .expect("no panic")
        .expect("the real redirect");
    assert!(
        redirect
            .query()
            .is_some_and(|query| query.contains("code=the-code"))
    );
    drop(idle);
}

#[tokio::test]
async fn no_redirect_within_the_timeout_is_an_error() {
    let (agent, _urls) = receiver(Duration::from_millis(200));
    let pending = agent.prepare().await.expect("bound");
    let error = tokio::time::timeout(
        PATIENCE,
        pending.wait(
            Url::parse("https://auth.example.com/authorize").expect("url"),
            "s".into(),
        ),
    )
    .await
    .expect("the receiver's own timeout fires first")
    .expect_err("nobody came back");
    assert!(
        error.to_string().contains("no redirect came back"),
        "{error}"
    );
}

#[test]
fn the_default_opener_refuses_urls_that_are_not_web_pages() {
    let error = golem_mcp::auth::open_in_browser(&Url::parse("file:///etc/passwd").expect("url"))
        .expect_err("not http(s)");
    assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
}
