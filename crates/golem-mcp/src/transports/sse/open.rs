//! Opening the event stream: the `GET` (authorized again after a refusal,
//! a bounded number of times), then its first event, `endpoint`, within
//! the bound, naming where to post messages, which must be on the
//! server's own origin.

use golem_sse::{SseError, SseParser};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Method, Url};

use super::shared::LinkState;
use crate::transports::http::authorize::{MAX_AUTHORIZATIONS, refusal};
use crate::transports::http::client::{Request, Response};
use crate::transports::http::headers::redact;
use crate::transports::http::status::{body_error, http_error, status_error};
use crate::wire::transport_error::TransportError;

/// Why the stream could not be opened, and whether the server answered
/// with an event stream at all: the streamable transport falls back only
/// to a server that does, and otherwise reports its own refusal.
#[derive(Debug)]
pub(crate) struct OpenError {
    pub(crate) error: TransportError,
    /// The `GET` was answered `2xx` with `text/event-stream`: an HTTP+SSE
    /// server, which then failed (no `endpoint` event in time, one on
    /// another origin, a stream that ended or was too large).
    pub(crate) event_stream: bool,
}

impl OpenError {
    /// A failure before any event stream.
    pub(crate) fn before_stream(error: TransportError) -> Self {
        OpenError {
            error,
            event_stream: false,
        }
    }
}

/// An open stream: where to post, and the rest of the stream to read.
pub(super) struct Opened {
    pub(super) endpoint: Url,
    pub(super) response: Response,
    /// The parser that read the `endpoint` event, with whatever followed
    /// it in the same chunk.
    pub(super) parser: SseParser,
}

/// One `GET`'s outcome, within the bound.
enum Attempt {
    /// Boxed: the parser is large, and this is made once per connection.
    Opened(Box<Opened>),
    /// A non-2xx answer: maybe one that authorization answers.
    Refused(Response),
}

/// Sends the `GET` and waits for the `endpoint` event; a `401` (or a
/// `403` for want of scope) has the auth provider authorize, outside the
/// bound, and the `GET` goes again.
pub(super) async fn open(shared: &LinkState) -> Result<Opened, OpenError> {
    let mut authorizations = 0;
    loop {
        shared.prepare_authorization().await;
        let sent = shared.authorization();
        let request = shared
            .request(Method::GET, &shared.url, sent.as_ref())
            .map_err(OpenError::before_stream)?
            .header(ACCEPT, HeaderValue::from_static("text/event-stream"));
        let mut event_stream = false;
        let attempt = tokio::time::timeout(
            shared.endpoint_timeout,
            attempt(shared, request, &mut event_stream),
        )
        .await;
        let response = match attempt {
            Ok(Ok(Attempt::Opened(opened))) => return Ok(*opened),
            Ok(Ok(Attempt::Refused(response))) => response,
            Ok(Err(error)) => {
                return Err(OpenError {
                    error,
                    event_stream,
                });
            }
            Err(_) => {
                let waited = shared.endpoint_timeout;
                let error = match event_stream {
                    true => TransportError::UnexpectedResponse {
                        detail: format!(
                            "the event stream sent no endpoint event within {waited:?} (an \
                             HTTP+SSE server names the URL to post messages to first)"
                        ),
                    },
                    false => TransportError::Io {
                        context: "GET (open the event stream)",
                        source: std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            format!("no answer within {waited:?}"),
                        ),
                    },
                };
                return Err(OpenError {
                    error,
                    event_stream,
                });
            }
        };
        if let Some(auth) = &shared.auth
            && authorizations < MAX_AUTHORIZATIONS
            && let Some(refusal) = refusal(&shared.url, &response, sent)
        {
            drop(response);
            auth.authorize(&refusal).await.map_err(|error| {
                OpenError::before_stream(TransportError::Authorization(Box::new(error)))
            })?;
            authorizations += 1;
            continue;
        }
        return Err(OpenError::before_stream(
            status_error(response, false).await,
        ));
    }
}

/// One `GET`, to its `endpoint` event; `event_stream` is set once the
/// answer says it is one.
async fn attempt(
    shared: &LinkState,
    request: Request,
    event_stream: &mut bool,
) -> Result<Attempt, TransportError> {
    let response = request
        .send()
        .await
        .map_err(|error| http_error("GET (open the event stream)", error))?;
    if !response.status().is_success() {
        return Ok(Attempt::Refused(response));
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !content_type.starts_with("text/event-stream") {
        return Err(TransportError::UnexpectedResponse {
            detail: format!(
                "the server answered the event stream's GET with content type {content_type:?}; \
                 expected text/event-stream"
            ),
        });
    }
    *event_stream = true;
    let opened = read_endpoint(shared, response).await?;
    Ok(Attempt::Opened(Box::new(opened)))
}

/// Reads the stream up to its `endpoint` event. Events before it are
/// skipped: the server must send it first, and nothing was sent that
/// another event could answer.
async fn read_endpoint(
    shared: &LinkState,
    mut response: Response,
) -> Result<Opened, TransportError> {
    let mut parser = SseParser::new(shared.max_message_bytes);
    loop {
        while let Some(event) = parser.next_event() {
            if event.event.as_deref() == Some("endpoint") {
                let endpoint = endpoint_url(&shared.url, response.url(), &event.data)?;
                return Ok(Opened {
                    endpoint,
                    response,
                    parser,
                });
            }
            tracing::debug!(
                event = event.event.as_deref().unwrap_or("message"),
                "mcp: skipped an event that came before the endpoint event"
            );
        }
        match response.chunk().await {
            Ok(Some(chunk)) => parser.feed(&chunk).map_err(stream_error)?,
            Ok(None) => {
                return Err(TransportError::StreamEnded {
                    detail: "the server's event stream ended before its endpoint event".to_owned(),
                });
            }
            Err(error) => return Err(body_error("read the event stream", error)),
        }
    }
}

/// The URL an `endpoint` event names, resolved against the stream's URL
/// (`base`, after any redirect within the origin): it must be on the
/// origin of the server as configured (`server`), so that nothing meant
/// for the server is posted elsewhere.
fn endpoint_url(server: &Url, base: &Url, data: &str) -> Result<Url, TransportError> {
    let endpoint = base
        .join(data.trim())
        .map_err(|error| TransportError::UnexpectedResponse {
            detail: format!("the server's endpoint event is not a URL ({error})"),
        })?;
    if endpoint.origin() != server.origin() {
        return Err(TransportError::UnexpectedResponse {
            detail: format!(
                "the server's endpoint event names {}, on another origin than the server ({}); \
                 refused, so that nothing sent to this server goes elsewhere",
                redact(&endpoint),
                server.origin().ascii_serialization()
            ),
        });
    }
    Ok(endpoint)
}

/// What a stream the parser refuses reports: an event over the size limit,
/// or one that is not UTF-8.
pub(super) fn stream_error(error: SseError) -> TransportError {
    match error {
        SseError::TooLarge { limit } => TransportError::MessageTooLarge { limit },
        other => TransportError::UnexpectedResponse {
            detail: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).expect("a URL")
    }

    #[test]
    fn a_relative_or_same_origin_endpoint_is_resolved_against_the_stream() {
        let server = url("http://127.0.0.1:8000/sse");
        let base = url("http://127.0.0.1:8000/sse/");
        for (data, expected) in [
            (
                "/messages/?session_id=ab12",
                "http://127.0.0.1:8000/messages/?session_id=ab12",
            ),
            ("messages?id=1", "http://127.0.0.1:8000/sse/messages?id=1"),
            (
                " http://127.0.0.1:8000/post \n",
                "http://127.0.0.1:8000/post",
            ),
        ] {
            let endpoint = endpoint_url(&server, &base, data).expect("accepted");
            assert_eq!(endpoint.as_str(), expected, "for {data:?}");
        }
    }

    #[test]
    fn an_endpoint_on_another_origin_is_refused_and_named_without_its_query() {
        let server = url("http://127.0.0.1:8000/sse");
        for data in [
            "http://127.0.0.1:9000/messages?session_id=secret",
            "https://127.0.0.1:8000/messages?session_id=secret",
            "http://evil.example/messages?session_id=secret",
            "//evil.example/messages?session_id=secret",
            "data:text/plain,hi",
        ] {
            let error = endpoint_url(&server, &server, data).expect_err("refused");
            let text = error.to_string();
            assert!(text.contains("another origin"), "{data}: {text}");
            assert!(text.contains("http://127.0.0.1:8000"), "{data}: {text}");
            assert!(!text.contains("secret"), "{data}: {text}");
        }
    }
}
