//! Many requests in flight on one client (its clones share it), against the
//! fake server (`testing/fake_server.rs`, whose module doc lists the tools
//! used here): answers in any order reach their own calls, the server's own
//! requests and notifications are handled between them, dropped calls are
//! cancelled one by one, a crash fails every call at once, and an idle
//! client still answers a server's ping.
//!
//! Every wait is bounded, so a client that serializes its requests fails
//! these tests (by timeout or assertion) instead of hanging them. The fake
//! says when it holds the calls (`held`, or `release`/`crash_after_held` with
//! `after`), so no test sleeps to let something happen.

mod support;

use std::time::{Duration, Instant};

use golem_mcp::{Client, Error, ServerStderr, StdioConfig, StdioTransport};
use serde_json::{Value, json};
use support::calls::{CALLS, Call, call_text, drop_calls, outcome_of, spawn_call, text_of};
use support::{FAKE, PATIENCE, args, bounded, polled};

/// A spawned, initialized client with the server's stderr.
struct Connected {
    client: Client,
    stderr: ServerStderr,
}

async fn connect() -> Connected {
    let transport = StdioTransport::spawn(StdioConfig::new(FAKE)).expect("spawns");
    let stderr = transport.stderr();
    let client = Client::new(transport);
    bounded(client.initialize()).await.expect("initializes");
    Connected { client, stderr }
}

/// Starts `hold` call `n`, which the fake answers with `text_of(n)` on
/// release.
fn hold(client: &Client, n: usize) -> Call {
    spawn_call(client, "hold", json!({"text": text_of(n)}))
}

/// Starts `CALLS` held calls and waits until the fake holds them all.
async fn hold_all(client: &Client) -> Vec<Call> {
    let calls: Vec<_> = (0..CALLS).map(|n| hold(client, n)).collect();
    let held = call_text(client, "held", json!({"count": CALLS}))
        .await
        .expect("held answered");
    assert_eq!(held, CALLS.to_string(), "the fake holds every call");
    calls
}

/// Polls the fake's stderr (nothing signals a line) until it contains
/// `count` lines starting with `prefix`, within the bound; returns those
/// lines.
async fn stderr_lines(stderr: &ServerStderr, prefix: &str, count: usize) -> Vec<String> {
    let lines = || -> Vec<String> {
        let tail = stderr.tail();
        let lines = tail.lines().filter(|line| line.starts_with(prefix));
        lines.map(str::to_owned).collect()
    };
    polled(async || Some(lines()).filter(|lines| lines.len() >= count))
        .await
        .unwrap_or_else(|| {
            panic!(
                "{count} stderr lines starting with {prefix:?} expected within {PATIENCE:?}, got \
                 {:?}",
                lines()
            )
        })
}

/// The fake's record of cancellations (`cancelled` tool).
async fn cancellations(client: &Client) -> Value {
    let text = call_text(client, "cancelled", json!({}))
        .await
        .expect("cancelled answered");
    serde_json::from_str(&text).expect("the fake's record is JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_in_reverse_order_reach_their_own_calls() {
    let connected = connect().await;
    let client = &connected.client;
    let calls: Vec<_> = (0..CALLS).map(|n| hold(client, n)).collect();
    // Released only once all eight are held: a client with one request in
    // flight never gets there.
    let released = call_text(client, "release", json!({"after": CALLS}))
        .await
        .expect("release answered");
    assert_eq!(released, format!("released {CALLS}"));
    for (n, call) in calls.into_iter().enumerate() {
        let result = outcome_of(call).await.expect("answered");
        assert_eq!(result.text(), text_of(n), "call {n} got its own answer");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_ping_and_sampling_request_between_answers_are_answered() {
    let connected = connect().await;
    let client = &connected.client;
    let calls: Vec<_> = (0..CALLS).map(|n| hold(client, n)).collect();
    let released = call_text(
        client,
        "release",
        json!({"after": CALLS, "interleave": true}),
    )
    .await
    .expect("release answered");
    assert_eq!(released, format!("released {CALLS}"));
    for (n, call) in calls.into_iter().enumerate() {
        let result = outcome_of(call).await.expect("answered");
        assert_eq!(result.text(), text_of(n));
    }
    // The answers were written before the release's answer was read, but
    // may reach the fake after the next request, and the fake says nothing
    // when they do: poll, within the bound.
    let answered = async || -> Vec<Value> {
        let text = call_text(client, "server_requests_answered", json!({}))
            .await
            .expect("answered");
        serde_json::from_str(&text).expect("a JSON array")
    };
    let Some(answers) =
        polled(async || Some(answered().await).filter(|answers| answers.len() >= 2)).await
    else {
        panic!(
            "the server's two requests were not both answered: {:?}",
            answered().await
        );
    };
    assert_eq!(answers.len(), 2, "{answers:?}");
    let ping = answers
        .iter()
        .find(|answer| answer["id"] == "srv-ping-1")
        .unwrap_or_else(|| panic!("no answer to the ping (id \"srv-ping-1\"): {answers:?}"));
    assert_eq!(ping["jsonrpc"], "2.0");
    assert_eq!(ping["result"], json!({}), "{ping}");
    assert!(ping.get("error").is_none(), "{ping}");
    let sampling = answers
        .iter()
        .find(|answer| answer["id"] == 9001)
        .unwrap_or_else(|| panic!("no answer to the sampling request (id 9001): {answers:?}"));
    assert_eq!(sampling["jsonrpc"], "2.0");
    assert_eq!(sampling["error"]["code"], -32601, "{sampling}");
    assert!(sampling.get("result").is_none(), "{sampling}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_to_a_call_dropped_a_moment_before_is_discarded() {
    let connected = connect().await;
    let client = &connected.client;
    let mut calls: Vec<_> = hold_all(client).await.into_iter().map(Some).collect();
    let dropped = 3;
    drop_calls(vec![calls[dropped].take().expect("a call")]).await;
    // The fake answers every held call, the dropped one too.
    let released = call_text(client, "release", json!({}))
        .await
        .expect("release answered");
    assert_eq!(released, format!("released {CALLS}"));
    for (n, call) in calls.into_iter().enumerate() {
        let Some(call) = call else { continue };
        let result = outcome_of(call).await.expect("answered");
        assert_eq!(result.text(), text_of(n), "call {n} got its own answer");
    }
    assert_eq!(
        call_text(client, "echo", json!({"text": "after"}))
            .await
            .expect("a later call works"),
        "after"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_with_eight_calls_in_flight_fails_all_of_them_at_once() {
    let connected = connect().await;
    let client = &connected.client;
    let calls = hold_all(client).await;
    // The crash call and the eight held calls all fail within two seconds
    // in all.
    let started = Instant::now();
    let arguments = args(json!({"after": CALLS}));
    let (crash, outcomes) = tokio::time::timeout(Duration::from_secs(2), async {
        let crash = client.call_tool("crash_after_held", &arguments).await;
        let mut outcomes = Vec::new();
        for call in calls {
            outcomes.push(call.await.expect("the call's task"));
        }
        (crash, outcomes)
    })
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the calls did not all fail within 2 s of the crash ({:?})",
            started.elapsed()
        )
    });
    let crash = crash.expect_err("the server crashed");
    let expected_stderr = format!("fake: fatal: crashed with {CALLS} calls held");
    let mut errors: Vec<Error> = outcomes
        .into_iter()
        .enumerate()
        .map(|(n, outcome)| match outcome {
            Ok(result) => panic!("call {n} succeeded after the crash: {result:?}"),
            Err(error) => error,
        })
        .collect();
    errors.push(crash);
    for (n, error) in errors.iter().enumerate() {
        let exit = error
            .process_exit()
            .unwrap_or_else(|| panic!("outcome {n}: no process exit in {error:?}"));
        assert_eq!(
            exit.status.and_then(|status| status.code()),
            Some(9),
            "outcome {n}: {exit:?}"
        );
        assert!(
            exit.stderr_tail.contains(&expected_stderr),
            "outcome {n}: {exit:?}"
        );
        assert!(
            error.to_string().contains("exit status: 9"),
            "outcome {n}: {error}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_dropped_calls_are_cancelled_and_the_other_four_answered() {
    let connected = connect().await;
    let client = &connected.client;
    let mut calls: Vec<_> = hold_all(client).await.into_iter().map(Some).collect();
    let dropped = [0, 2, 5, 7];
    for n in dropped {
        drop_calls(vec![calls[n].take().expect("a call")]).await;
    }
    // Announced when dropped, not at the client's next request: the fake
    // logs each cancellation as it arrives, and no request is made until
    // all four are there.
    let lines = stderr_lines(&connected.stderr, "fake: cancelled request ", dropped.len()).await;
    assert_eq!(lines.len(), dropped.len(), "{lines:?}");
    let record = cancellations(client).await;
    let ids = record["cancelled"].as_array().expect("a list of ids");
    assert_eq!(ids.len(), dropped.len(), "{record}");
    assert!(
        ids.iter().all(Value::is_u64),
        "the cancellations name numeric request ids: {record}"
    );
    let mut named: Vec<String> = record["cancelled_held"]
        .as_array()
        .expect("a list of texts")
        .iter()
        .map(|text| text.as_str().expect("a text").to_owned())
        .collect();
    named.sort();
    let expected: Vec<String> = dropped.iter().map(|&n| text_of(n)).collect();
    assert_eq!(named, expected, "the cancellations name the dropped calls");

    let released = call_text(client, "release", json!({}))
        .await
        .expect("release answered");
    assert_eq!(released, format!("released {CALLS}"));
    for (n, call) in calls.into_iter().enumerate() {
        let Some(call) = call else { continue };
        let result = outcome_of(call).await.expect("answered");
        assert_eq!(result.text(), text_of(n), "call {n} got its own answer");
    }
    // Answered calls are never announced as cancelled.
    let record = cancellations(client).await;
    assert_eq!(
        record["cancelled"].as_array().map(Vec::len),
        Some(dropped.len()),
        "{record}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_notifications_while_eight_calls_wait() {
    let connected = connect().await;
    let client = &connected.client;
    let calls = hold_all(client).await;
    let started = Instant::now();
    let released = call_text(client, "release", json!({"flood": 10_000}))
        .await
        .expect("release answered");
    assert_eq!(released, format!("released {CALLS}"));
    for (n, call) in calls.into_iter().enumerate() {
        let result = outcome_of(call).await.expect("answered");
        assert_eq!(result.text(), text_of(n), "call {n} got its own answer");
    }
    // 10,000 small messages take milliseconds even in a debug build.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(
        call_text(client, "echo", json!({"text": "after the flood"}))
            .await
            .expect("a later call works"),
        "after the flood"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_observer_of_its_own_call() {
    let connected = connect().await;
    let client = &connected.client;
    // Even calls ask for progress, odd ones do not.
    let calls: Vec<_> = (0..CALLS)
        .map(|n| {
            let client = client.clone();
            tokio::spawn(async move {
                let arguments = args(json!({"text": text_of(n)}));
                let mut reports = Vec::new();
                let result = if n % 2 == 0 {
                    client
                        .call_tool_with_progress("hold", &arguments, |report| reports.push(report))
                        .await
                } else {
                    client.call_tool("hold", &arguments).await
                };
                (result, reports)
            })
        })
        .collect();
    // Progress for tokens nobody holds comes first (the flood), then one
    // report per call that asked, then the answers.
    let released = call_text(client, "release", json!({"after": CALLS, "flood": 100}))
        .await
        .expect("release answered");
    assert_eq!(released, format!("released {CALLS}"));
    for (n, call) in calls.into_iter().enumerate() {
        let (result, reports) = bounded(call).await.expect("the task");
        assert_eq!(result.expect("answered").text(), text_of(n));
        let messages: Vec<Option<&str>> = reports
            .iter()
            .map(|report| report.message.as_deref())
            .collect();
        if n % 2 == 0 {
            assert_eq!(
                messages,
                [Some(text_of(n).as_str())],
                "call {n} saw its own progress only"
            );
            assert_eq!(reports[0].progress, 1.0);
            assert_eq!(reports[0].total, Some(1.0));
        } else {
            assert!(messages.is_empty(), "call {n} asked for no progress");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_client_answers_a_server_ping_within_100_ms() {
    let connected = connect().await;
    let client = &connected.client;
    assert_eq!(
        call_text(client, "ping_later", json!({"ms": 50}))
            .await
            .expect("scheduled"),
        "scheduled"
    );
    // No request is in flight from here on until the fake says it got the
    // answer: only a client that always reads can answer.
    let lines = stderr_lines(&connected.stderr, "fake: idle ping answered after ", 1).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    let record: Value = serde_json::from_str(
        &call_text(client, "last_ping_latency", json!({}))
            .await
            .expect("answered"),
    )
    .expect("the fake's record is JSON");
    assert_eq!(record["answer"]["id"], "idle-ping-1", "{record}");
    assert_eq!(record["answer"]["result"], json!({}), "{record}");
    let latency = record["latency_ms"].as_f64().expect("a latency");
    assert!(latency < 100.0, "the ping was answered after {latency} ms");
}
