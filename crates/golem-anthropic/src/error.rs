//! How Anthropic's failures read as `ProviderError`s: an answer that is not
//! what the API promises, and an `error` event inside a stream, retryable or
//! not. Shared by the request (`lib.rs`) and the stream (`stream.rs`).

use golem_model::{ProviderError, ProviderErrorKind};

/// The provider name in errors and in [`Model::name`](golem_model::Model::name).
pub(crate) const PROVIDER: &str = "anthropic";

pub(crate) fn invalid(message: impl Into<String>) -> ProviderError {
    ProviderError::new(PROVIDER, ProviderErrorKind::InvalidResponse, message)
}

/// An `error` event inside a stream (it has no status of its own). Overload, rate
/// limits, API errors and timeouts are worth retrying, as their statuses would be.
pub(crate) fn stream_error(error_type: Option<String>, message: String) -> ProviderError {
    let retryable = matches!(
        error_type.as_deref(),
        Some("overloaded_error" | "rate_limit_error" | "api_error" | "timeout_error")
    );
    ProviderError {
        error_type,
        retryable,
        ..ProviderError::new(PROVIDER, ProviderErrorKind::Status, message)
    }
}
