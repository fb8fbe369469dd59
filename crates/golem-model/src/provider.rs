//! What every provider adapter reports and how it retries: [`ProviderError`] and
//! [`RetryPolicy`].
//!
//! They live here, beside [`ModelError`](crate::ModelError), so that a caller can handle
//! the failures of any provider in one way: a provider's `ModelError` has a
//! `ProviderError` as its `source()`, found with `downcast_ref`. The retry loop itself
//! runs in each provider (this crate has no runtime); the policy and its delays are
//! decided here, once.

use std::fmt;
use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

/// A provider's API key: its `Debug` never shows it, it has no `Display`, and the only
/// way to read it is [`expose`](Self::expose), at the one place a request header is built.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the request header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// What went wrong talking to a provider.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ProviderErrorKind {
    /// The provider answered with a non-success HTTP status (see
    /// [`ProviderError::status`]), or reported an error inside a stream.
    Status,
    /// The provider could not be reached, or the connection failed mid-answer.
    Connection,
    /// No answer (or no next part of a streamed answer) within the request timeout.
    Timeout,
    /// The answer is larger than the configured bound.
    TooLarge,
    /// The answer could not be understood (not the documented wire format).
    InvalidResponse,
    /// A streamed answer ended before it was complete.
    StreamCut,
}

/// A typed provider failure: what happened, the HTTP status and the provider's own error
/// type and message when it sent them, whether trying again may succeed, and how long the
/// provider asked to wait first.
///
/// It never holds the API key or request headers, so printing it is safe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderError {
    /// The provider's name, e.g. `"openai"`.
    pub provider: String,
    /// What kind of failure it is.
    pub kind: ProviderErrorKind,
    /// The HTTP status, for [`ProviderErrorKind::Status`] answers.
    pub status: Option<u16>,
    /// The provider's error type or code (`"rate_limit_exceeded"`, `"overloaded_error"` ...).
    pub error_type: Option<String>,
    /// The provider's message, or ours when it sent none.
    pub message: String,
    /// Whether the same request may succeed if sent again.
    pub retryable: bool,
    /// The delay the provider asked for (`Retry-After`), if any.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    /// An error of `kind` with our own message and no status.
    pub fn new(
        provider: impl Into<String>,
        kind: ProviderErrorKind,
        message: impl Into<String>,
    ) -> Self {
        let retryable = matches!(
            kind,
            ProviderErrorKind::Connection | ProviderErrorKind::Timeout
        );
        Self {
            provider: provider.into(),
            kind,
            status: None,
            error_type: None,
            message: message.into(),
            retryable,
            retry_after: None,
        }
    }

    /// Whether an HTTP status is worth retrying: 408 (request timeout), 409 (conflict, as
    /// OpenAI documents for lock contention), 429 (rate limited) and every 5xx.
    pub fn retryable_status(status: u16) -> bool {
        matches!(status, 408 | 409 | 429) || (500..=599).contains(&status)
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.provider)?;
        if let Some(status) = self.status {
            write!(f, "HTTP {status}: ")?;
        }
        if let Some(error_type) = &self.error_type {
            write!(f, "{error_type}: ")?;
        }
        f.write_str(&self.message)?;
        if let Some(after) = self.retry_after {
            write!(f, " (retry after {}s)", after.as_secs_f64())?;
        }
        Ok(())
    }
}

impl std::error::Error for ProviderError {}

/// How a provider retries a failed request: only [`ProviderError::retryable`] failures,
/// with exponential backoff and jitter, bounded in attempts and in total time, and
/// honouring the provider's `Retry-After`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included; 1 disables retries.
    pub max_attempts: u32,
    /// The delay before the first retry; each next one doubles it.
    pub initial_backoff: Duration,
    /// The largest computed delay (a `Retry-After` may ask for more, up to `max_total`).
    pub max_backoff: Duration,
    /// No retry starts once waiting for it would pass this time since the first attempt.
    pub max_total: Duration,
}

impl Default for RetryPolicy {
    /// 4 attempts, 500 ms doubling up to 8 s, at most 60 s in all.
    fn default() -> Self {
        Self {
            max_attempts: 4,
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(8),
            max_total: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries at all.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// How long to wait before retry number `retry` (1 for the first retry) after
    /// `error`, given `elapsed` since the first attempt; `None` when the policy says stop
    /// (not retryable, out of attempts, or out of time).
    ///
    /// The delay is the provider's `Retry-After` when it sent one, else
    /// `initial_backoff * 2^(retry-1)` capped at `max_backoff`, with "equal jitter": a
    /// random point in its upper half, so that many clients rate-limited together do not
    /// retry together.
    ///
    /// ```
    /// use std::time::Duration;
    /// use golem_model::{ProviderError, ProviderErrorKind, RetryPolicy};
    ///
    /// let policy = RetryPolicy::default();
    /// let mut error = ProviderError::new("openai", ProviderErrorKind::Connection, "refused");
    /// let delay = policy.delay(1, &error, Duration::ZERO).expect("connection errors retry");
    /// assert!(delay >= Duration::from_millis(250) && delay <= Duration::from_millis(500));
    ///
    /// error.retry_after = Some(Duration::from_secs(3));
    /// assert_eq!(policy.delay(1, &error, Duration::ZERO), Some(Duration::from_secs(3)));
    /// assert_eq!(policy.delay(policy.max_attempts, &error, Duration::ZERO), None);
    /// ```
    pub fn delay(&self, retry: u32, error: &ProviderError, elapsed: Duration) -> Option<Duration> {
        if !error.retryable || retry >= self.max_attempts {
            return None;
        }
        let delay = match error.retry_after {
            Some(after) => after,
            None => {
                let doublings = retry.saturating_sub(1).min(31);
                let base = self
                    .initial_backoff
                    .saturating_mul(1 << doublings)
                    .min(self.max_backoff);
                let half = base / 2;
                half + half.mul_f64(random_unit())
            }
        };
        (elapsed.saturating_add(delay) <= self.max_total).then_some(delay)
    }
}

/// A random number in `[0, 1)`, from the standard library's per-process random keys
/// (jitter needs spread, not cryptographic quality).
fn random_unit() -> f64 {
    let bits = RandomState::new().hash_one(std::time::Instant::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16) -> ProviderError {
        ProviderError {
            status: Some(code),
            retryable: ProviderError::retryable_status(code),
            ..ProviderError::new("p", ProviderErrorKind::Status, "m")
        }
    }

    #[test]
    fn api_key_debug_is_redacted() {
        let key = ApiKey::new("sk-secret");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(key.expose(), "sk-secret");
    }

    #[test]
    fn statuses_are_classified() {
        for code in [408, 409, 429, 500, 502, 503, 529] {
            assert!(ProviderError::retryable_status(code), "{code}");
        }
        for code in [400, 401, 403, 404, 422] {
            assert!(!ProviderError::retryable_status(code), "{code}");
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let policy = RetryPolicy {
            max_attempts: 10,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(500),
            max_total: Duration::from_secs(100),
        };
        let error = status(503);
        for (retry, base) in [(1, 100), (2, 200), (3, 400), (4, 500), (9, 500)] {
            let delay = policy.delay(retry, &error, Duration::ZERO).expect("retry");
            let base = Duration::from_millis(base);
            assert!(delay >= base / 2 && delay <= base, "{retry}: {delay:?}");
        }
    }

    #[test]
    fn stops_when_not_retryable_out_of_attempts_or_out_of_time() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay(1, &status(400), Duration::ZERO), None);
        assert_eq!(policy.delay(4, &status(500), Duration::ZERO), None);
        assert_eq!(policy.delay(1, &status(500), Duration::from_secs(60)), None);
        let mut late = status(429);
        late.retry_after = Some(Duration::from_secs(61));
        assert_eq!(policy.delay(1, &late, Duration::ZERO), None);
        assert_eq!(
            RetryPolicy::none().delay(1, &status(500), Duration::ZERO),
            None
        );
    }

    #[test]
    fn display_names_everything_but_secrets() {
        let mut error = status(429);
        error.error_type = Some("rate_limit_exceeded".into());
        error.retry_after = Some(Duration::from_secs(2));
        assert_eq!(
            error.to_string(),
            "p: HTTP 429: rate_limit_exceeded: m (retry after 2s)"
        );
    }
}
