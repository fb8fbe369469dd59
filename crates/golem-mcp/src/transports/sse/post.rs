//! The outbound side: every message is one `POST` of its JSON to the
//! endpoint the stream named, taken with a `2xx` (`202 Accepted`, usually)
//! whose answer, if any, comes on the stream. A `401` (or a `403` for want
//! of scope) has the auth provider authorize, and the message goes again.

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use reqwest::{Method, StatusCode, Url};

use super::shared::LinkState;
use crate::transports::http::authorize::{MAX_AUTHORIZATIONS, refusal};
use crate::transports::http::client::Response;
use crate::transports::http::status::{http_error, status_error};
use crate::wire::transport::Outgoing;
use crate::wire::transport_error::TransportError;

/// The longest acknowledgement body read (so that its connection can be
/// used again); a longer one is dropped unread.
const ACKNOWLEDGEMENT_BYTES: u64 = 4096;

/// Posts `message` to `endpoint`.
pub(super) async fn post(
    shared: &LinkState,
    endpoint: &Url,
    message: &Outgoing,
) -> Result<(), TransportError> {
    let mut authorizations = 0;
    loop {
        shared.prepare_authorization().await;
        let sent = shared.authorization();
        let response = shared
            .request(Method::POST, endpoint, sent.as_ref())?
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(message.body().clone())
            .send()
            .await
            .map_err(|error| http_error("POST", error))?;
        let status = response.status();
        if status.is_success() {
            acknowledged(response).await;
            return Ok(());
        }
        if let Some(auth) = &shared.auth
            && authorizations < MAX_AUTHORIZATIONS
            && let Some(refusal) = refusal(&shared.url, &response, sent)
        {
            drop(response);
            auth.authorize(&refusal)
                .await
                .map_err(|error| TransportError::Authorization(Box::new(error)))?;
            authorizations += 1;
            continue;
        }
        // The endpoint's URL names the session: a 404 there means the
        // server has forgotten it.
        return Err(status_error(response, status == StatusCode::NOT_FOUND).await);
    }
}

/// Reads a short acknowledgement (`Accepted`) to its end, so that the
/// connection goes back to the pool; anything longer is not waited for.
async fn acknowledged(mut response: Response) {
    if response
        .content_length()
        .is_some_and(|length| length <= ACKNOWLEDGEMENT_BYTES)
    {
        while let Ok(Some(_)) = response.chunk().await {}
    }
}
