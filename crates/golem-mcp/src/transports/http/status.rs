//! What a failed request reports: the error for a non-2xx answer (its
//! status, the start of its body and the headers that say what to do next:
//! `WWW-Authenticate`, `Retry-After`) and for a request that got no answer.
//! Shared by the POSTs and the stream GETs of both HTTP transports.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue, LOCATION, RETRY_AFTER, WWW_AUTHENTICATE};
use reqwest::{StatusCode, Url};

use super::client::{HttpError, Response, Unanswered};

use super::headers::redact;
use crate::wire::transport_error::{HttpStatusError, TransportError};

/// How much of an error response's body is kept for the error message.
const BODY_EXCERPT_BYTES: usize = 1024;
/// How long reading that excerpt may take.
const BODY_EXCERPT_TIME: Duration = Duration::from_secs(2);

/// Builds the error for a non-2xx answer, with the start of its body and
/// the headers that say what to do next.
pub(in crate::transports) async fn status_error(
    response: Response,
    session_expired: bool,
) -> TransportError {
    let status = response.status();
    let url = response.url().clone();
    let headers = response.headers().clone();
    let body = tokio::time::timeout(BODY_EXCERPT_TIME, read_excerpt(response))
        .await
        .unwrap_or_default();
    status_error_with(status, &url, &headers, body.as_bytes(), session_expired)
}

/// [`status_error`] for an answer whose body was read already.
pub(in crate::transports) fn status_error_with(
    status: StatusCode,
    url: &Url,
    headers: &HeaderMap,
    body: &[u8],
    session_expired: bool,
) -> TransportError {
    let header = |name| {
        headers
            .get(name)
            .and_then(|value: &HeaderValue| value.to_str().ok())
            .map(str::to_owned)
    };
    let www_authenticate = header(WWW_AUTHENTICATE);
    let retry_after = header(RETRY_AFTER);
    // A redirect still here is one the client did not follow (to another
    // origin): say where it pointed, as errors show URLs.
    let location = header(LOCATION)
        .filter(|_| status.is_redirection())
        .and_then(|location| url.join(&location).ok())
        .map(|location| redact(&location));
    let excerpt = &body[..body.len().min(BODY_EXCERPT_BYTES)];
    let body_excerpt = String::from_utf8_lossy(excerpt).trim().to_owned();
    let url = redact(url);
    TransportError::HttpStatus(Box::new(HttpStatusError {
        status: status.as_u16(),
        reason: status.canonical_reason(),
        url,
        body_excerpt,
        session_expired,
        www_authenticate,
        retry_after,
        location,
    }))
}

async fn read_excerpt(mut response: Response) -> String {
    let mut body = Vec::new();
    while body.len() < BODY_EXCERPT_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            _ => break,
        }
    }
    body.truncate(BODY_EXCERPT_BYTES);
    String::from_utf8_lossy(&body).trim().to_owned()
}

/// A request that got no answer: the error names its URL (already without
/// credentials, query or fragment), so that a refused connection says
/// where.
pub(in crate::transports) fn http_error(
    context: &'static str,
    unanswered: Unanswered,
) -> TransportError {
    TransportError::Http {
        context,
        url: unanswered.url,
        source: Box::new(unanswered.error),
    }
}

/// An answer whose body broke: the URL answered, so the error does not
/// name it again.
pub(in crate::transports) fn body_error(context: &'static str, error: HttpError) -> TransportError {
    TransportError::Http {
        context,
        url: None,
        source: Box::new(error),
    }
}
