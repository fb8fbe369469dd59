//! The checks and settings every provider test repeats.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::time::Duration;

use golem_model::{ModelError, ProviderError, RetryPolicy, StreamEvent};

/// The [`ProviderError`] a provider's [`ModelError`] comes from.
///
/// # Panics
///
/// If `error` has no such source.
#[track_caller]
pub fn provider_error(error: &ModelError) -> &ProviderError {
    match std::error::Error::source(error).and_then(|source| source.downcast_ref()) {
        Some(provider) => provider,
        None => panic!("a ProviderError source: {error:?}"),
    }
}

/// The default retry policy with delays short enough for a test: 10 ms,
/// doubling up to 40 ms (a `Retry-After` still counts).
pub fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        ..RetryPolicy::default()
    }
}

/// The text of a stream's [`StreamEvent::Text`] events, joined.
pub fn streamed_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// An address on 127.0.0.1 where nothing listens: a port that was free a
/// moment ago (a connection there is refused).
///
/// # Panics
///
/// If no port can be bound on 127.0.0.1.
pub fn refused_address() -> SocketAddr {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free port on 127.0.0.1")
}
