//! The outbound side: one POST per message, the session it belongs to, and
//! what a refused POST says (an expired session is reported; the session
//! layer starts a new one, `session/restart/renew.rs`).

use std::sync::Arc;

use bytes::Bytes;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Method, StatusCode};

use super::authorize::{MAX_AUTHORIZATIONS, refusal};
use super::client::{Request, Response};
use super::headers::{MCP_METHOD, MCP_NAME, SESSION};
use super::shared::{Shared, addressed_to};
use super::status::{body_error, http_error, status_error, status_error_with};
use super::stream;
use crate::wire::jsonrpc::{self, Route};
use crate::wire::mcp_headers::header_value;
use crate::wire::transport::{Outgoing, OutgoingKind, RequestId};
use crate::wire::transport_error::TransportError;
use golem_mcp_auth::Secret;

/// POSTs one message and handles the answer: a request's JSON answer is
/// read and returned (the caller delivers it), its event stream handed to a
/// stream task.
pub(super) async fn send(
    shared: &Arc<Shared>,
    message: Outgoing,
) -> Result<Option<Bytes>, TransportError> {
    let is_initialize = message.method() == Some("initialize");
    if is_initialize {
        shared.session().initialize = Some(message.clone());
    }
    // `initialize` starts a session: it carries none.
    let session = || match is_initialize {
        true => None,
        false => shared.session().id.clone(),
    };
    let mut authorizations = 0;
    let response = loop {
        shared.prepare_authorization().await;
        let sent = Sent {
            session: session(),
            authorization: shared.authorization(),
        };
        let response = post(shared, &message, &sent).await?;
        let may = May {
            authorize: authorizations < MAX_AUTHORIZATIONS,
        };
        // The refusals' handling is boxed: inlined, it would make every
        // send's future (moved a few times per call) kilobytes larger.
        let checked = match response.status().is_success() {
            true => Checked::Answer(response),
            false => Box::pin(check_status(shared, &message, response, sent, may)).await?,
        };
        match checked {
            Checked::Answer(response) => break response,
            Checked::Authorized => authorizations += 1,
            Checked::Answered(answer) => return Ok(Some(answer)),
            Checked::Dropped => return Ok(None),
        }
    };
    // The modern era has no sessions: an id a server sends anyway is not
    // sent back.
    if !message.is_modern()
        && let Some(session_id) = response.headers().get(&SESSION)
    {
        shared.session().id = Some(session_id.clone());
    }
    if authorizations > 0 {
        super::stream::reopen_standalone(shared);
    }
    match message.kind() {
        OutgoingKind::Request { id, .. } => {
            answer(shared, *id, response, !message.is_modern()).await
        }
        // The answer to a notification or a response carries nothing (202);
        // a body, if any, is dropped with the response.
        _ => Ok(None),
    }
}

/// What a POST carried that its answer may refuse.
struct Sent {
    session: Option<HeaderValue>,
    authorization: Option<Secret>,
}

/// What may still be done about a refusal.
struct May {
    authorize: bool,
}

/// Sends the POST with `sent`'s session and authorization.
async fn post(
    shared: &Shared,
    message: &Outgoing,
    sent: &Sent,
) -> Result<Response, TransportError> {
    let mut request = shared.request_with(
        Method::POST,
        sent.session.clone(),
        message.protocol_version(),
        sent.authorization.as_ref(),
    )?;
    if message.is_modern() {
        request = with_mirrored_headers(request, message);
    }
    request
        .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
        .header(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        )
        .body(message.body().clone())
        .send()
        .await
        .map_err(|error| http_error("POST", error))
}

/// A modern request's headers mirrored from its body: `Mcp-Method`,
/// `Mcp-Name` (encoded when it is not header-safe) and the tool's
/// `Mcp-Param-*` headers, which the session encoded already. (A value the
/// HTTP library still refuses fails the send, as any bad header does.)
fn with_mirrored_headers(mut request: Request, message: &Outgoing) -> Request {
    if let Some(method) = message.method() {
        request = request.header(MCP_METHOD, header_value(method).as_ref());
    }
    if let Some(name) = message.name() {
        request = request.header(MCP_NAME, header_value(name).as_ref());
    }
    for (name, value) in message.param_headers() {
        request = request.header(name.as_str(), value.as_str());
    }
    request
}

enum Checked {
    /// A 2xx answer.
    Answer(Response),
    /// A modern refusal whose body was the request's JSON-RPC error: the
    /// request's answer.
    Answered(Bytes),
    /// The server wanted authorization and the provider obtained it: send
    /// again.
    Authorized,
    /// The session had expired and the message is not worth resending
    /// (a notification or a reply; the session starts a new one when a
    /// request meets the expiry).
    Dropped,
}

/// Turns a non-2xx answer into an error, or has the auth provider
/// authorize after a `401` (or a `403` for want of scope); `may` says what
/// is still allowed for this message. With
/// `HttpConfig::reinitialize_expired_session`, a notification or reply to
/// an expired session is dropped (a request fails with the expiry, and the
/// session renews the session).
async fn check_status(
    shared: &Arc<Shared>,
    message: &Outgoing,
    response: Response,
    sent: Sent,
    may: May,
) -> Result<Checked, TransportError> {
    let status = response.status();
    if let Some(auth) = &shared.auth
        && may.authorize
        && let Some(refusal) = refusal(&shared.url, &response, sent.authorization)
    {
        drop(response);
        auth.authorize(&refusal)
            .await
            .map_err(|error| TransportError::Authorization(Box::new(error)))?;
        return Ok(Checked::Authorized);
    }
    // 401 and 403 are authorization's, whatever their body says.
    if message.is_modern()
        && status.is_client_error()
        && status != StatusCode::UNAUTHORIZED
        && status != StatusCode::FORBIDDEN
        && let OutgoingKind::Request { id, .. } = message.kind()
    {
        return modern_refusal(shared, *id, response).await;
    }
    let expired = status == StatusCode::NOT_FOUND && sent.session.is_some();
    let renewable = expired && shared.reinitialize_expired_session;
    if renewable && !matches!(message.kind(), OutgoingKind::Request { .. }) {
        // A notification or reply about the old session has nothing left
        // to say to a new one.
        tracing::debug!("mcp: dropped a notification for an expired session");
        return Ok(Checked::Dropped);
    }
    // A request that met an expired session fails with it; the session
    // layer renews the session when the configuration allows it.
    Err(status_error(response, expired).await)
}

/// A modern server's 4xx to request `id`: the status says what kind of
/// refusal (an unsupported revision, a header mismatch, an unknown method),
/// and the body, a JSON-RPC error, says which. That error is the
/// request's answer, so that the session can correct the request or
/// report the server's own words; a body that is no JSON-RPC error makes
/// the status the error.
async fn modern_refusal(
    shared: &Arc<Shared>,
    id: RequestId,
    response: Response,
) -> Result<Checked, TransportError> {
    let status = response.status();
    let url = response.url().clone();
    let headers = response.headers().clone();
    let body = read_json(response, shared.max_message_bytes)
        .await
        .unwrap_or_default();
    let answer = match jsonrpc::route(&body) {
        Route::Response { raw_id: None } => Some(addressed_to(&body, id)),
        Route::Response { raw_id: Some(raw) } if jsonrpc::our_id(raw) == Some(id) => {
            Some(body.clone())
        }
        _ => None,
    };
    match answer {
        Some(answer) if is_error_response(&answer) => Ok(Checked::Answered(answer)),
        _ => Err(status_error_with(status, &url, &headers, &body, false)),
    }
}

/// Whether `message` is a JSON-RPC error response: `"jsonrpc": "2.0"` and
/// an error object with a numeric code (an OAuth error body, whose `error`
/// is a string, is not one).
pub(super) fn is_error_response(message: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct ErrorResponse<'a> {
        #[serde(borrow)]
        jsonrpc: &'a str,
        #[allow(dead_code)]
        error: ErrorObject,
    }
    #[derive(serde::Deserialize)]
    struct ErrorObject {
        #[allow(dead_code)]
        code: serde_json::Number,
    }
    serde_json::from_slice::<ErrorResponse<'_>>(message)
        .is_ok_and(|response| response.jsonrpc == "2.0")
}

/// Reads the answer to request `id`: a JSON body here, returned; an event
/// stream on a task of its own (`None`).
async fn answer(
    shared: &Arc<Shared>,
    id: RequestId,
    response: Response,
    resumable: bool,
) -> Result<Option<Bytes>, TransportError> {
    if response.status() == StatusCode::ACCEPTED || response.content_length() == Some(0) {
        return Err(TransportError::StreamEnded {
            detail: "the server accepted the request without answering it".to_owned(),
        });
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("text/event-stream") {
        stream::spawn(shared, id, response, resumable);
        return Ok(None);
    }
    if !content_type.starts_with("application/json") {
        return Err(TransportError::UnexpectedResponse {
            detail: format!(
                "the server answered a request with content type {content_type:?}; \
                 expected application/json or text/event-stream"
            ),
        });
    }
    let body = read_json(response, shared.max_message_bytes).await?;
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(TransportError::StreamEnded {
            detail: "the server answered the request with an empty body".to_owned(),
        });
    }
    // An error without an id answers this request too (see `stream.rs`).
    let body = match jsonrpc::route(&body) {
        Route::Response { raw_id: None } => addressed_to(&body, id),
        Route::Response { raw_id: Some(raw) } if jsonrpc::our_id(raw) == Some(id) => body,
        // Nothing else can answer it: fail the request rather than let it
        // wait for an answer that will not come.
        _ => {
            return Err(TransportError::UnexpectedResponse {
                detail: format!("the server's JSON answer to request {id} is not its response"),
            });
        }
    };
    Ok(Some(body))
}

/// Reads a JSON body, refusing one over the limit before reading it all.
async fn read_json(mut response: Response, limit: usize) -> Result<Bytes, TransportError> {
    let too_large = TransportError::MessageTooLarge { limit };
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(too_large);
    }
    // The usual answer arrives in one chunk: no copy then.
    let Some(first) = response
        .chunk()
        .await
        .map_err(|error| body_error("read the JSON answer", error))?
    else {
        return Ok(Bytes::new());
    };
    let Some(second) = response
        .chunk()
        .await
        .map_err(|error| body_error("read the JSON answer", error))?
    else {
        return match first.len() > limit {
            true => Err(too_large),
            false => Ok(first),
        };
    };
    let mut body = Vec::with_capacity(first.len() + second.len());
    body.extend_from_slice(&first);
    body.extend_from_slice(&second);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| body_error("read the JSON answer", error))?
    {
        if body.len() + chunk.len() > limit {
            return Err(too_large);
        }
        body.extend_from_slice(&chunk);
    }
    if body.len() > limit {
        return Err(too_large);
    }
    Ok(Bytes::from(body))
}
