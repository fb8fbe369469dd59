//! How OpenAI's failures read as `ProviderError`s: an answer that is not
//! what the API promises, and an error answer or stream event, retryable
//! or not. Shared by the request (`lib.rs`) and the stream (`stream.rs`).

use std::time::Duration;

use golem_model::{ProviderError, ProviderErrorKind};

/// The provider name in errors and in [`Model::name`](golem_model::Model::name).
pub(crate) const PROVIDER: &str = "openai";

pub(crate) fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::new(PROVIDER, ProviderErrorKind::InvalidResponse, message)
}

/// An error answer (or an error event inside a stream, with no status).
pub(crate) fn status_error(
    status: Option<u16>,
    retry_after: Option<Duration>,
    error_type: Option<String>,
    message: String,
) -> ProviderError {
    // A 429 for an exhausted quota will not clear by waiting.
    let quota = error_type.as_deref() == Some("insufficient_quota");
    let retryable = match status {
        Some(status) => ProviderError::retryable_status(status) && !quota,
        // An error inside a stream: OpenAI sends these for server-side failures.
        None => matches!(error_type.as_deref(), Some("server_error")),
    };
    ProviderError {
        status,
        error_type,
        retryable,
        retry_after,
        ..ProviderError::new(PROVIDER, ProviderErrorKind::Status, message)
    }
}
