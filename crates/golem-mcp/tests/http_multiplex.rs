//! Many requests in flight on one client over streamable HTTP: each message
//! its own POST, JSON and event-stream answers read independently, one
//! stream broken and resumed while the others complete, a server going away
//! under eight calls, the server's own requests answered between calls,
//! dropped calls cancelled one by one, and what a refusing server says.
//!
//! The fake server is the one of `support/fake_http.rs`
//! (`tests/http_transport.rs` checks the wire format one request at a time;
//! this file checks concurrency). It says when it holds a call
//! (`FakeHttp::until_held`), and the test says when it answers
//! (`FakeHttp::answer`), so no test sleeps to let something happen and
//! every wait is bounded: a client that serializes its requests fails these
//! tests by timeout instead of hanging them. The last test does the same
//! against the real `server-everything` (`scripts/install-peers.sh`).
#![cfg(feature = "http")]

mod support;

use std::time::{Duration, Instant};

use golem_mcp::{Client, HttpConfig, HttpTransport, LATEST_PROTOCOL_VERSION, TransportError};
use serde_json::json;
use support::calls::{CALLS, Call, assert_in_flight, outcome_of, spawn_call, text_from, text_of};
use support::fake_http::FakeHttp;
use support::{args, bounded, everything_http};

/// The session the fake hands out first.
const SESSION: &str = "session-1";

/// The `retry` (ms) of the stream the fake breaks on purpose
/// (`break_once`): long enough that calls waiting for it would show.
const BROKEN_STREAM_RETRY_MS: u64 = 1500;

async fn setup() -> (FakeHttp, Client) {
    let fake = FakeHttp::start().await;
    let client = Client::new(HttpTransport::new(HttpConfig::new(fake.url())).expect("valid"));
    bounded(client.initialize()).await.expect("initializes");
    (fake, client)
}

/// Starts `hold` call `n`, answered the way `answer` says.
fn start_held(client: &Client, n: usize, answer: &str) -> Call {
    spawn_call(client, "hold", json!({"n": n, "answer": answer}))
}

// ---- many calls at once ----------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_calls_are_in_flight_at_once_with_json_and_event_stream_answers() {
    let (fake, client) = setup().await;
    // The fake answers none of them before all eight have arrived: a client
    // that waits for one answer (JSON headers, or the end of a stream)
    // before sending the next request deadlocks, and the bound fails it.
    let calls: Vec<_> = (0..CALLS)
        .map(|n| {
            let answer = if n % 2 == 0 { "json" } else { "sse" };
            spawn_call(
                &client,
                "gather",
                json!({"n": n, "count": CALLS, "answer": answer}),
            )
        })
        .collect();
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(text_from(call).await, text_of(n), "call {n}'s own answer");
    }
    assert_eq!(fake.gathered(), CALLS);
    let posts = fake.posts_of("tools/call");
    assert_eq!(posts.len(), CALLS, "one POST per call, none repeated");
    let mut ids: Vec<u64> = posts
        .iter()
        .map(|post| post.body["id"].as_u64().expect("a numeric id"))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), CALLS, "every call has an id of its own");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_in_reverse_order_over_open_event_streams_reach_their_own_calls() {
    let (fake, client) = setup().await;
    let mut calls: Vec<_> = (0..CALLS).map(|n| start_held(&client, n, "sse")).collect();
    fake.until_held(CALLS).await;
    // The last call is answered first; each answer must complete its own
    // call, and only it, while every earlier stream stays open.
    while let Some(call) = calls.pop() {
        let n = calls.len();
        fake.answer(n as u64, &text_of(n));
        assert_eq!(text_from(call).await, text_of(n));
        assert_in_flight(&calls, "their answers were not sent yet");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_broken_stream_is_resumed_while_the_others_complete_without_waiting_for_it() {
    let (fake, client) = setup().await;
    let a = spawn_call(&client, "break_once", json!({}));
    let broken_at = bounded(fake.wait_for(FakeHttp::ended_stream_at)).await;
    let ping_answer = fake.response_to(&json!("a-ping")).expect("answered");
    assert_eq!(
        ping_answer.body,
        json!({"jsonrpc": "2.0", "id": "a-ping", "result": {}})
    );

    // A now waits out the server's retry (1.5 s) before resuming; B..H are
    // sent, held and answered meanwhile.
    let others: Vec<_> = (1..CALLS).map(|n| start_held(&client, n, "sse")).collect();
    fake.until_held(CALLS - 1).await;
    for n in 1..CALLS {
        fake.answer(n as u64, &text_of(n));
    }
    for (n, call) in (1..CALLS).zip(others) {
        assert_eq!(text_from(call).await, text_of(n));
    }
    let others_done = Instant::now();
    assert!(!a.is_finished(), "A is still waiting for its resumption");

    assert_eq!(text_from(a).await, "resumed A");
    // The standalone stream's GET (refused with 405: this fake offers
    // none) carries no Last-Event-ID; the resumption does.
    let gets: Vec<_> = fake
        .gets()
        .into_iter()
        .filter(|get| get.header("last-event-id").is_some())
        .collect();
    assert_eq!(gets.len(), 1, "A was resumed once: {gets:?}");
    let get = &gets[0];
    assert_eq!(get.header("last-event-id"), Some("a-1"));
    assert_eq!(get.header("mcp-session-id"), Some(SESSION));
    assert!(
        get.header("accept")
            .is_some_and(|accept| accept.contains("text/event-stream")),
        "{:?}",
        get.headers
    );
    let waited = get.at.duration_since(broken_at);
    assert!(
        waited >= Duration::from_millis(BROKEN_STREAM_RETRY_MS),
        "A reconnected after {waited:?}, before the server's retry"
    );
    assert!(
        others_done < get.at,
        "B..H completed only {:?} after A reconnected: they waited for A",
        others_done.duration_since(get.at)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_json_body_does_not_hold_up_another_call() {
    let (fake, client) = setup().await;
    // The slow call's headers and the first half of its JSON body are out;
    // the rest waits for the test.
    let slow = start_held(&client, 0, "json_rest");
    fake.until_held(1).await;
    let fast = spawn_call(&client, "json_echo", json!({"text": "fast"}));
    assert_eq!(text_from(fast).await, "fast");
    let streamed = start_held(&client, 1, "sse");
    fake.until_held(2).await;
    fake.answer(1, "fast stream");
    assert_eq!(text_from(streamed).await, "fast stream");
    assert!(!slow.is_finished(), "the slow body is not complete yet");

    fake.answer(0, "slow");
    assert_eq!(text_from(slow).await, "slow");
}

// ---- the server going away -------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_going_away_fails_every_call_in_flight_and_later_calls_fast() {
    let (fake, client) = setup().await;
    // Streams without event ids, streams with (whose resumption then finds
    // nobody listening), and JSON answers whose headers never come. Each
    // stream carries a ping: once the client has answered it, the client is
    // reading that stream.
    let kinds = ["sse", "sse_with_id", "json"];
    let ping_id = |n: usize| json!(format!("ping-{n}"));
    let calls: Vec<_> = (0..CALLS)
        .map(|n| {
            let answer = kinds[n % kinds.len()];
            spawn_call(
                &client,
                "hold",
                json!({"n": n, "answer": answer,
                    "request": {"jsonrpc": "2.0", "id": ping_id(n), "method": "ping"}}),
            )
        })
        .collect();
    fake.until_held(CALLS).await;
    let streams = (0..CALLS).filter(|n| kinds[n % kinds.len()] != "json");
    for n in streams {
        bounded(fake.wait_for(|fake| fake.response_to(&ping_id(n)))).await;
    }

    let gone = Instant::now();
    fake.go_away().await;
    for (n, call) in calls.into_iter().enumerate() {
        let error = outcome_of(call).await.expect_err("the server is gone");
        let kind = kinds[n % kinds.len()];
        let transport = error
            .transport_error()
            .unwrap_or_else(|| panic!("call {n} ({kind}): not a transport error: {error:?}"));
        match (kind, transport) {
            ("sse", TransportError::StreamEnded { detail }) => assert!(
                detail.contains("broke before the response"),
                "call {n}: the cause is named: {detail}"
            ),
            (
                "sse_with_id",
                TransportError::Http {
                    context, source, ..
                },
            ) => {
                assert_eq!(*context, "GET (resume the event stream)", "call {n}");
                assert!(!source.to_string().is_empty());
            }
            (
                "json",
                TransportError::Http {
                    context, source, ..
                },
            ) => {
                assert_eq!(*context, "POST", "call {n}");
                assert!(!source.to_string().is_empty());
            }
            _ => panic!("call {n} ({kind}): unexpected error {error:?}"),
        }
    }
    let failed_within = gone.elapsed();
    assert!(
        failed_within < Duration::from_secs(5),
        "the calls failed only after {failed_within:?}"
    );

    let started = Instant::now();
    let error = bounded(client.call_tool("json_echo", &args(json!({"text": "anyone?"}))))
        .await
        .expect_err("nobody listens");
    assert!(
        matches!(
            error.transport_error(),
            Some(TransportError::Http {
                context: "POST",
                ..
            })
        ),
        "{error:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "failed after {:?}",
        started.elapsed()
    );
}

// ---- the server's own requests, cancellation --------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_requests_on_call_streams_are_answered_while_calls_are_in_flight() {
    let (fake, client) = setup().await;
    // Call 0's stream carries a ping whose id is call 0's own id (the client
    // must not take it for call 0's answer); call 1's a sampling request.
    let calls = vec![
        spawn_call(
            &client,
            "hold",
            json!({"n": 0, "answer": "sse", "same_id": true,
                "request": {"jsonrpc": "2.0", "method": "ping"}}),
        ),
        spawn_call(
            &client,
            "hold",
            json!({"n": 1, "answer": "sse", "request": {"jsonrpc": "2.0", "id": "sample-1",
                "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 1}}}),
        ),
        start_held(&client, 2, "sse"),
        start_held(&client, 3, "sse"),
    ];
    fake.until_held(4).await;
    let ping_id = fake.id_of(0);
    let (pong, refusal) = bounded(fake.wait_for(|fake| {
        Some((
            fake.response_to(&ping_id)?,
            fake.response_to(&json!("sample-1"))?,
        ))
    }))
    .await;
    assert_eq!(
        pong.body,
        json!({"jsonrpc": "2.0", "id": ping_id, "result": {}})
    );
    assert_eq!(refusal.body["id"], "sample-1");
    assert_eq!(refusal.body["error"]["code"], -32601, "{}", refusal.body);
    assert!(refusal.body.get("result").is_none());
    for answer in [&pong, &refusal] {
        assert_eq!(answer.header("mcp-session-id"), Some(SESSION));
        assert_eq!(
            answer.header("mcp-protocol-version"),
            Some(LATEST_PROTOCOL_VERSION)
        );
    }
    assert_in_flight(&calls, "the server's requests are not their answers");

    for n in 0..calls.len() {
        fake.answer(n as u64, &text_of(n));
    }
    for (n, call) in calls.into_iter().enumerate() {
        assert_eq!(text_from(call).await, text_of(n));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_one_call_cancels_it_at_once_and_the_others_complete() {
    let (fake, client) = setup().await;
    let mut calls: Vec<_> = (0..4).map(|n| start_held(&client, n, "sse")).collect();
    fake.until_held(4).await;
    let dropped_id = fake.id_of(2);

    let dropped = calls.remove(2);
    dropped.abort();
    let outcome = bounded(dropped).await;
    assert!(
        outcome.as_ref().is_err_and(|error| error.is_cancelled()),
        "the call was dropped before its answer: {outcome:?}"
    );
    let cancelled =
        bounded(fake.wait_for(|fake| fake.posts_of("notifications/cancelled").pop())).await;
    assert_eq!(cancelled.body["params"]["requestId"], dropped_id);
    assert_in_flight(&calls, "the cancellation comes while they are in flight");
    // The dropped call's event stream is released on the server too.
    bounded(fake.stream_closed(2)).await;
    assert_in_flight(&calls, "closing one stream leaves the others open");

    for n in [0, 1, 3] {
        fake.answer(n, &text_of(n as usize));
    }
    for (n, call) in [0, 1, 3].into_iter().zip(calls) {
        assert_eq!(text_from(call).await, text_of(n));
    }
    assert_eq!(
        fake.posts_of("notifications/cancelled").len(),
        1,
        "only the dropped call is cancelled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_without_an_id_fails_the_call_whose_answer_carried_it() {
    let (fake, client) = setup().await;
    // A server that cannot read a request answers with an error whose id is
    // null. Over HTTP the answer says which request that is (the one whose
    // POST it answers), with any number of other calls in flight.
    let mut calls = vec![
        start_held(&client, 0, "sse"),
        start_held(&client, 1, "json"),
        start_held(&client, 2, "sse"),
    ];
    fake.until_held(3).await;
    let unreadable = json!({"jsonrpc": "2.0", "id": null,
        "error": {"code": -32600, "message": "Invalid Request"}});
    fake.answer_with(0, &unreadable);
    fake.answer_with(1, &unreadable);
    let last = calls.pop().expect("call 2");
    for (n, call) in calls.into_iter().enumerate() {
        let error = outcome_of(call)
            .await
            .expect_err("the server could not read it");
        assert_eq!(
            error.protocol_error().map(|error| error.code),
            Some(-32600),
            "call {n}: {error:?}"
        );
    }
    assert!(!last.is_finished(), "call 2 is not answered yet");
    fake.answer(2, &text_of(2));
    assert_eq!(text_from(last).await, text_of(2));
}

// ---- refusals ---------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_and_a_429_keep_their_www_authenticate_and_retry_after() {
    let (fake, client) = setup().await;
    let challenge = format!(
        r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource""#,
        fake.base()
    );
    let unauthorized = spawn_call(
        &client,
        "status",
        json!({"status": 401, "content_type": "text/plain", "body": "log in first",
            "headers": {"www-authenticate": challenge}}),
    );
    let limited = spawn_call(
        &client,
        "status",
        json!({"status": 429, "content_type": "text/plain", "body": "slow down",
            "headers": {"retry-after": "3"}}),
    );
    let fine = spawn_call(&client, "json_echo", json!({"text": "fine"}));

    let error = outcome_of(unauthorized).await.expect_err("401");
    let status = error.http_status().expect("a status error");
    assert_eq!(status.status, 401);
    assert_eq!(status.www_authenticate.as_deref(), Some(challenge.as_str()));
    assert_eq!(status.retry_after, None);
    assert_eq!(status.body_excerpt, "log in first");

    let error = outcome_of(limited).await.expect_err("429");
    let status = error.http_status().expect("a status error");
    assert_eq!(status.status, 429);
    assert_eq!(status.retry_after.as_deref(), Some("3"));
    assert_eq!(status.www_authenticate, None);

    assert_eq!(
        text_from(fine).await,
        "fine",
        "a refusal fails its call only"
    );
}

// ---- a real server ------------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_concurrent_calls_to_server_everything_over_http_overlap() {
    let peer = everything_http();
    let client = Client::new(HttpTransport::new(HttpConfig::new(peer.url.clone())).expect("valid"));
    tokio::time::timeout(Duration::from_secs(60), client.initialize())
        .await
        .expect("initialized in time")
        .expect("initializes");
    // Each call takes 0.3 s on the server, in `steps` steps: eight in a row
    // take 2.4 s, eight at once about 0.3 s.
    let started = Instant::now();
    let calls: Vec<_> = (1..=CALLS)
        .map(|steps| {
            spawn_call(
                &client,
                "trigger-long-running-operation",
                json!({"duration": 0.3, "steps": steps}),
            )
        })
        .collect();
    for (steps, call) in (1..=CALLS).zip(calls) {
        assert_eq!(
            text_from(call).await,
            format!("Long running operation completed. Duration: 0.3 seconds, Steps: {steps}.")
        );
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_millis(1500),
        "eight 0.3 s calls took {elapsed:?}: they did not overlap"
    );
    bounded(client.close()).await.expect("closes");
}
