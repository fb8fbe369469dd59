//! The test kit of `golem-mcp`'s integration tests. Each test file takes
//! what it needs (`mod support;`):
//!
//! - here: the bound every wait is given ([`bounded`]), the one poll for
//!   state nothing signals ([`polled`]), a signal ([`Gate`]), arguments;
//! - [`calls`]: calls in flight on tasks of their own;
//! - [`memory`]: a scripted server over the in-memory transport;
//! - [`fake_http`]: the one scripted fake streamable-HTTP server;
//! - [`logs`]: the library's traces, captured and waited for;
//! - [`peers`]: the real servers nobody here wrote;
//! - [`processes`]: the stdio fake, pid files and `/proc` checks.
//!
//! No test sleeps to let something happen: a fake says when it has got
//! somewhere (`FakeHttp::wait_for`, the stdio fake's `held`), and a test
//! says when a fake may go on (`FakeHttp::answer`, [`Gate`]).
#![allow(dead_code)]

pub mod calls;
#[cfg(feature = "http")]
pub mod fake_http;
pub mod logs;
pub mod memory;
pub mod peers;
pub mod processes;

// Not every test file uses them.
#[allow(unused_imports)]
pub use peers::*;
#[allow(unused_imports)]
pub use processes::*;

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::Location;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::watch;

/// How long anything that should take milliseconds may take: generous, so
/// a busy machine does not fail a test, and finite, so a bug (a client
/// that serializes its requests, a leak, a lost answer) fails the test
/// rather than hangs it.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// How long a real peer may take: a Node or Python process can take
/// seconds to start on a busy machine.
pub const PEER_PATIENCE: Duration = Duration::from_secs(60);

/// `future`'s output, failing the test (naming the caller's line) if it
/// takes longer than [`PATIENCE`].
#[track_caller]
pub fn bounded<F: Future>(future: F) -> impl Future<Output = F::Output> {
    within(PATIENCE, future)
}

/// `future`'s output, within [`PEER_PATIENCE`]: for a real peer.
#[track_caller]
pub fn peer_bounded<F: Future>(future: F) -> impl Future<Output = F::Output> {
    within(PEER_PATIENCE, future)
}

#[track_caller]
fn within<F: Future>(patience: Duration, future: F) -> impl Future<Output = F::Output> {
    let caller = Location::caller();
    async move {
        match tokio::time::timeout(patience, future).await {
            Ok(output) => output,
            Err(_) => panic!("the wait at {caller} did not finish within {patience:?}"),
        }
    }
}

/// Asks `check` every 5 ms until it gives a value, for at most
/// [`PATIENCE`]; `None` if it never did. Only for state that nothing
/// signals (a process's end, a runtime's task count, a stdio server's
/// stderr or record): whatever a fake of ours can say, it says.
pub async fn polled<T>(mut check: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = check().await {
            return Some(value);
        }
        if Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// A signal that opens once and stays open: what a test or a fake waits
/// for instead of sleeping.
#[derive(Clone, Debug)]
pub struct Gate(Arc<watch::Sender<bool>>);

impl Default for Gate {
    fn default() -> Self {
        Gate(Arc::new(watch::Sender::new(false)))
    }
}

impl Gate {
    pub fn open(&self) {
        self.0.send_replace(true);
    }

    pub fn is_open(&self) -> bool {
        *self.0.borrow()
    }

    /// Returns once the gate is open (at once if it is); unbounded.
    pub async fn opened(&self) {
        let mut open = self.0.subscribe();
        // The sender lives in `self`: the wait cannot fail.
        let _ = open.wait_for(|open| *open).await;
    }
}

/// `json` as the arguments of a call.
pub fn args(json: Value) -> Box<RawValue> {
    RawValue::from_string(json.to_string()).expect("valid JSON")
}

/// `text` as the arguments of a call, byte for byte.
pub fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_owned()).expect("valid JSON")
}

/// The arguments of a prompt or a completion, from pairs.
pub fn arguments(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}
