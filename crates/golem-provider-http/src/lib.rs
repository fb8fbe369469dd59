//! The HTTP plumbing Golem's model providers share (`golem-openai`,
//! `golem-anthropic`): reading an answer within a time and size bound,
//! turning a connection failure into a [`ProviderError`] (naming the URL it
//! could not reach, without credentials or query),
//! reading `Retry-After`, the default client ([`default_client`]: redirects
//! within the provider's origin only), and the loop that asks again per the
//! [`RetryPolicy`] ([`ask`]) around a streamed or whole answer. What
//! differs between providers (the wire format and its stream parser, how an
//! error body is read, which statuses a stream error maps to) stays in each
//! adapter; ADR 0008 has the conventions. `settings.rs` checks a
//! request's model settings against what an API takes.

use std::time::{Duration, Instant};

use golem_model::{
    ModelError, ProviderError, ProviderErrorKind, Response, RetryPolicy, StreamSink,
};
use golem_sse::{SseError, SseEvent, SseParser};
use reqwest::header::HeaderMap;

mod settings;
pub use settings::{SettingRules, check_settings};

/// How many redirects within one origin the default client follows
/// (reqwest's own default).
const MAX_REDIRECTS: usize = 10;

/// The HTTP client a provider uses when the application gives none:
/// reqwest's defaults, except that a redirect is followed only within the
/// origin of the request (ADR 0017). reqwest strips `Authorization` on a
/// redirect to another host, but not a provider's own key header
/// (`x-api-key`), nor the prompt in the body: a redirect elsewhere is the
/// answer instead, an error with its status.
pub fn default_client() -> reqwest::Client {
    let policy = reqwest::redirect::Policy::custom(|attempt| {
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if !same_origin {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        .build()
        // Only a TLS backend that fails to start makes `build` fail, and
        // `Client::default` panics then too.
        .unwrap_or_default()
}

/// One provider's two ways of asking once: the whole answer as JSON, or
/// the answer streamed to a sink. [`ask`] retries them.
pub trait Attempt: Sync {
    /// Asks once for the whole answer.
    fn json_once(
        &self,
        body: &[u8],
    ) -> impl Future<Output = Result<Response, ProviderError>> + Send;

    /// Asks once for a streamed answer, passing its events to `sink`. A
    /// failure after an event reached `sink` must not be retryable (the
    /// host has shown part of an answer): [`Reader::read_stream`] sees to
    /// that.
    fn stream_once(
        &self,
        body: &[u8],
        sink: StreamSink<'_>,
    ) -> impl Future<Output = Result<Response, ProviderError>> + Send;
}

/// Asks `provider` with `body` (streamed to `sink` when there is one) until
/// an answer comes or `policy` gives up: an error is retried after the
/// policy's delay when it is retryable (which it is not once part of the
/// answer reached `sink`). Dropping the future cancels the call.
pub async fn ask<P: Attempt>(
    provider: &P,
    policy: &RetryPolicy,
    body: &[u8],
    mut sink: Option<StreamSink<'_>>,
) -> Result<Response, ModelError> {
    let started = Instant::now();
    let mut retry = 0;
    loop {
        let result = match sink.as_deref_mut() {
            Some(sink) => provider.stream_once(body, sink).await,
            None => provider.json_once(body).await,
        };
        let error = match result {
            Ok(response) => return Ok(response),
            Err(error) => error,
        };
        retry += 1;
        match policy.delay(retry, &error, started.elapsed()) {
            Some(delay) => tokio::time::sleep(delay).await,
            None => return Err(ModelError::with_source(error.to_string(), error)),
        }
    }
}

/// The server-sent events of a streamed answer, with the answer bounded:
/// at most `max_bytes` of body in all, and so no event larger either. The
/// events are `golem-sse`'s [`SseEvent`]s.
#[derive(Debug)]
pub struct EventStream {
    provider: &'static str,
    parser: SseParser,
    max_bytes: usize,
    bytes: usize,
}

impl EventStream {
    /// An empty stream of `provider`'s answer of at most `max_bytes`.
    pub fn new(provider: &'static str, max_bytes: usize) -> Self {
        EventStream {
            provider,
            parser: SseParser::new(max_bytes),
            max_bytes,
            bytes: 0,
        }
    }

    /// Takes the next chunk of the body; [`next_event`](Self::next_event)
    /// then yields the events it completed. Past the bound, or on a body
    /// that is not an event stream, an error.
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), ProviderError> {
        self.bytes = self.bytes.saturating_add(chunk.len());
        if self.bytes > self.max_bytes {
            return Err(self.too_large(self.max_bytes));
        }
        self.parser.feed(chunk).map_err(|error| match error {
            SseError::TooLarge { limit } => self.too_large(limit),
            other => ProviderError::new(
                self.provider,
                ProviderErrorKind::InvalidResponse,
                format!("event stream: {other}"),
            ),
        })
    }

    /// The next complete event, if any.
    pub fn next_event(&mut self) -> Option<SseEvent> {
        self.parser.next_event()
    }

    /// Ends the body: an event the body ended inside is dropped.
    pub fn finish(&mut self) {
        self.parser.finish();
    }

    fn too_large(&self, limit: usize) -> ProviderError {
        ProviderError::new(
            self.provider,
            ProviderErrorKind::TooLarge,
            format!("the streamed answer is larger than the limit of {limit} bytes"),
        )
    }
}

/// A provider's stream parser: it turns the chunks of a streamed answer
/// into events for the sink, and at the end into the whole answer.
pub trait Assemble {
    /// Takes the next chunk of the body, passing complete events to `sink`;
    /// `Ok(true)` once the answer is complete (the body may still go on).
    fn feed(&mut self, chunk: &[u8], sink: StreamSink<'_>) -> Result<bool, ProviderError>;

    /// Whether an event has reached the sink.
    fn delivered(&self) -> bool;

    /// The whole answer, once the stream is complete or the body ended.
    fn finish(self) -> Result<Response, ProviderError>;
}

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
    /// [`ProviderErrorKind::Connection`] error (or `Timeout`) that names
    /// the request and its URL: `POST http://127.0.0.1:9/v1/chat/completions:
    /// Connection refused (os error 111)`.
    pub async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, ProviderError> {
        let (client, request) = request.build_split();
        let request = request.map_err(|error| connection_error(self.provider, error))?;
        // Kept for the error's message (a standard method is not allocated).
        let method = request.method().clone();
        tokio::time::timeout(self.timeout, client.execute(request))
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|error| request_error(self.provider, &method, error))
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

    /// Reads a streamed answer to its end through `assembler`. Any failure
    /// once an event has reached `sink` (a broken connection, an error
    /// event, an answer cut short) is not retryable: the host has shown
    /// part of the answer. Dropping the future abandons the answer (the
    /// connection is not reused).
    pub async fn read_stream<A: Assemble>(
        &self,
        response: &mut reqwest::Response,
        mut assembler: A,
        sink: StreamSink<'_>,
    ) -> Result<Response, ProviderError> {
        let after_delivery = |mut error: ProviderError, delivered: bool| {
            error.retryable &= !delivered;
            error
        };
        loop {
            let chunk = match self.next_chunk(response).await {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(error) => return Err(after_delivery(error, assembler.delivered())),
            };
            match assembler.feed(&chunk, sink) {
                Ok(true) => break,
                Ok(false) => {}
                Err(error) => return Err(after_delivery(error, assembler.delivered())),
            }
        }
        let delivered = assembler.delivered();
        assembler
            .finish()
            .map_err(|error| after_delivery(error, delivered))
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

/// A request that got no answer as a [`ProviderError`]: the request and
/// its URL (without credentials, query or fragment: a proxy's credentials
/// or a key may be there), then what went wrong, once. reqwest's and
/// hyper's own words ("error sending request", "client error (Connect)")
/// say nothing the innermost cause does not.
fn request_error(
    provider: &'static str,
    method: &reqwest::Method,
    error: reqwest::Error,
) -> ProviderError {
    let Some(url) = error.url().map(shown_url) else {
        return connection_error(provider, error);
    };
    let error = error.without_url();
    let kind = if error.is_timeout() {
        ProviderErrorKind::Timeout
    } else {
        ProviderErrorKind::Connection
    };
    let mut root: &(dyn std::error::Error + 'static) = &error;
    while let Some(cause) = root.source() {
        root = cause;
    }
    ProviderError::new(provider, kind, format!("{method} {url}: {root}"))
}

/// `url` as an error may show it: without credentials, query or fragment.
fn shown_url(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
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
