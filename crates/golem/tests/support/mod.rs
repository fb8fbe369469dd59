//! What several of this crate's integration tests share: the bounds on waits
//! that must end (`bounded` for in-process ones, `patiently` for real peers
//! and processes) and the smallest fixtures (a tool call, a tool answering a
//! constant). Each test file uses part of it (`mod support;`).
#![allow(dead_code)]

pub mod spans;

use std::future::Future;
use std::time::Duration;

use golem_agent::model::ToolCall;
use golem_agent::tool::Tool;

/// A guard for in-process waits that must end: far longer than any of them
/// needs.
pub const GUARD: Duration = Duration::from_secs(10);

/// A bound on every run, connection and process that involves a real peer:
/// generous, since `npx`-installed Node servers start slowly on a busy
/// machine.
pub const PATIENCE: Duration = Duration::from_secs(60);

/// `future`'s output; fails the test, saying `what` did not finish, if it
/// takes longer than [`GUARD`].
pub async fn bounded<F: Future>(what: &str, future: F) -> F::Output {
    within(GUARD, what, future).await
}

/// `future`'s output; fails the test, saying `what` did not finish, if it
/// takes longer than [`PATIENCE`].
pub async fn patiently<F: Future>(what: &str, future: F) -> F::Output {
    within(PATIENCE, what, future).await
}

async fn within<F: Future>(limit: Duration, what: &str, future: F) -> F::Output {
    match tokio::time::timeout(limit, future).await {
        Ok(output) => output,
        Err(_elapsed) => panic!("{what}: not done within {limit:?}"),
    }
}

/// A tool call with `arguments` as the model's raw JSON.
pub fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments).expect("test arguments are JSON")
}

/// A tool answering a fixed text.
pub fn constant(name: &str, answer: &'static str) -> Tool<()> {
    Tool::new(
        name,
        "answers a constant",
        r#"{"type":"object"}"#,
        move |_, _| async move { Ok(answer.to_owned()) },
    )
    .expect("valid tool")
}
