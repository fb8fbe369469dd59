//! The HTTP plumbing Golem's model providers share (`golem-openai`,
//! `golem-anthropic`): reading an answer within a time and size bound,
//! turning a connection failure into a [`ProviderError`] that shows no URL,
//! and reading `Retry-After`. What differs between providers (the wire
//! format, how an error body is read, which statuses a stream error maps
//! to) stays in each adapter; ADR 0008 has the conventions.

use std::time::Duration;

use golem_model::{ProviderError, ProviderErrorKind};
use reqwest::header::HeaderMap;

/// How one provider reads its answers: its name (for errors) and how long
/// each step may wait.
#[derive(Debug, Clone, Copy)]
pub struct Reader {
    /// The provider's name, e.g. `openai`.
    pub provider: &'static str,
    /// How long the answer's start, and each next chunk, may take.
    pub timeout: Duration,
}

impl Reader {
    /// Sends `request`, within the timeout; a failure to connect is a
    /// [`ProviderErrorKind::Connection`] error (or `Timeout`).
    pub async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ProviderError> {
        tokio::time::timeout(self.timeout, request.send())
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|error| connection_error(self.provider, error))
    }

    /// The next chunk of a body, within the timeout; `None` at its end.
    pub async fn next_chunk(
        &self,
        response: &mut reqwest::Response,
    ) -> Result<Option<bytes::Bytes>, ProviderError> {
        tokio::time::timeout(self.timeout, response.chunk())
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|error| connection_error(self.provider, error))
    }

    /// Reads a whole body of at most `limit` bytes: a longer one is a
    /// [`ProviderErrorKind::TooLarge`] error, or, with `truncate` (for error
    /// bodies, only shown), its first `limit` bytes.
    pub async fn read(
        &self,
        response: &mut reqwest::Response,
        limit: usize,
        truncate: bool,
    ) -> Result<Vec<u8>, ProviderError> {
        let mut body = Vec::new();
        while let Some(chunk) = self.next_chunk(response).await? {
            if body.len() + chunk.len() > limit {
                if truncate {
                    body.extend_from_slice(&chunk[..limit - body.len()]);
                    break;
                }
                return Err(ProviderError::new(
                    self.provider,
                    ProviderErrorKind::TooLarge,
                    format!("the answer is larger than the limit of {limit} bytes"),
                ));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }

    /// The error for a step that outlived the timeout.
    pub fn timed_out(&self) -> ProviderError {
        ProviderError::new(
            self.provider,
            ProviderErrorKind::Timeout,
            format!("no answer within the request timeout of {:?}", self.timeout),
        )
    }
}

/// A connection failure as a [`ProviderError`], with its whole cause chain
/// in words and without the URL (the base URL is not secret, but a proxy's
/// credentials in it may be).
pub fn connection_error(provider: &'static str, error: reqwest::Error) -> ProviderError {
    let error = error.without_url();
    let kind = if error.is_timeout() {
        ProviderErrorKind::Timeout
    } else {
        ProviderErrorKind::Connection
    };
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    ProviderError::new(provider, kind, message)
}

/// How long an answer asks to wait before trying again: `retry-after-ms`
/// (milliseconds, which OpenAI sends) or `retry-after` (seconds; an HTTP
/// date is not honoured and falls back to the backoff). At most a day.
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|value| value.is_finite() && *value >= 0.0)
    };
    // A day is as good as forever, and keeps the conversion in range.
    const DAY_SECS: f64 = 86_400.0;
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64((ms / 1000.0).min(DAY_SECS)))
        .or_else(|| number("retry-after").map(|secs| Duration::from_secs_f64(secs.min(DAY_SECS))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_reads_milliseconds_first_then_seconds_and_is_bounded() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        headers.remove("retry-after-ms");
        headers.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("1e12"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(86_400)));
        headers.insert("retry-after", HeaderValue::from_static("-3"));
        assert_eq!(retry_after(&headers), None);
    }
}
