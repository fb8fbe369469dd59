//! The standalone GET stream is open before `initialize` returns: a server
//! that sends a request outside any request of the client's (an
//! elicitation from inside a tool call that follows at once) drops it while
//! no stream is open, so the session is handed over only once the server
//! has answered the GET.
#![cfg(feature = "http")]

mod support;

use std::time::Duration;

use golem_mcp::{Client, HttpConfig, HttpTransport};
use support::Gate;
use support::bounded;
use support::fake_http::{FakeHttp, Get};

#[tokio::test]
async fn initialize_returns_once_the_server_answered_the_standalone_get() {
    let fake = FakeHttp::start().await;
    // A slow GET: the server takes its time to answer the stream's request
    // (here it offers none, 405), until the test opens the gate.
    let answer_get = Gate::default();
    let gate = answer_get.clone();
    fake.serve_standalone(move |_| Get::After(gate.clone(), Box::new(Get::Status(405))));

    let client = Client::new(HttpTransport::new(HttpConfig::new(fake.url())).expect("valid"));
    let initializing = client.clone();
    let mut initialize = tokio::spawn(async move { initializing.initialize().await.map(drop) });
    bounded(fake.wait_for(|fake| fake.gets().pop())).await;
    // The server holds the GET: initialize waits for it as long as it
    // takes, here 300 ms.
    let early = tokio::time::timeout(Duration::from_millis(300), &mut initialize).await;
    assert!(
        early.is_err(),
        "initialize returned before the standalone stream was answered"
    );
    answer_get.open();
    bounded(initialize)
        .await
        .expect("the task")
        .expect("initializes");
    assert_eq!(
        fake.gets()[0].status,
        Some(405),
        "initialize returned before the standalone stream was answered"
    );
    client.close().await.expect("closes");
}
