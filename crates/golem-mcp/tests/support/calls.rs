//! Calls in flight: each started on a task of its own (on a clone of the
//! client), awaited within the bound, or dropped before its answer.

use golem_mcp::{CallResult, Client, Error};
use serde_json::Value;
use tokio::task::JoinHandle;

use super::{args, bounded};

/// How many calls the in-flight tests keep going at once.
pub const CALLS: usize = 8;

/// A call started on a task of its own.
pub type Call = JoinHandle<Result<CallResult, Error>>;

/// The text a test's call `n` is answered with.
pub fn text_of(n: usize) -> String {
    format!("call {n}")
}

/// Calls `tool` within the bound; the text of its result.
pub async fn call_text(client: &Client, tool: &str, arguments: Value) -> Result<String, Error> {
    let arguments = args(arguments);
    bounded(client.call_tool(tool, &arguments))
        .await
        .map(|result| result.text())
}

/// Starts a call of `tool` on a clone of `client`, on a task of its own.
pub fn spawn_call(client: &Client, tool: &str, arguments: Value) -> Call {
    let client = client.clone();
    let tool = tool.to_owned();
    tokio::spawn(async move { client.call_tool(&tool, &args(arguments)).await })
}

/// The outcome of a call that was not dropped.
pub async fn outcome_of(call: Call) -> Result<CallResult, Error> {
    bounded(call).await.expect("the call's task")
}

/// The text of a call that was answered.
pub async fn text_from(call: Call) -> String {
    outcome_of(call).await.expect("answered").text()
}

/// Fails unless every call is still waiting for its answer.
#[track_caller]
pub fn assert_in_flight(calls: &[Call], why: &str) {
    for (index, call) in calls.iter().enumerate() {
        assert!(!call.is_finished(), "call #{index} finished early: {why}");
    }
}

/// Drops the calls' futures (by aborting their tasks) and waits until each
/// is gone, dropped before its answer.
pub async fn drop_calls(calls: Vec<Call>) {
    for call in &calls {
        call.abort();
    }
    for (n, call) in calls.into_iter().enumerate() {
        let outcome = bounded(call).await;
        assert!(
            outcome.as_ref().is_err_and(|error| error.is_cancelled()),
            "call {n} was dropped before its answer: {outcome:?}"
        );
    }
}
