//! Decoders: how the model's final response becomes a run's output.
//!
//! A decoder is any `Fn(&Response) -> Result<Output, DecodeError>` that is
//! `Send + Sync + 'static`. It runs once per final response (a response
//! without tool calls). It may reject the response as correctable with
//! [`DecodeError::Retry`]: the reason goes back to the model, which answers
//! again, within [`AgentConfig::output_retries`](crate::AgentConfig::output_retries).
//! [`text`] is the default; [`typed`] (feature `typed`) decodes a Rust type
//! whose JSON Schema the model is given, [`json_schema`] JSON for a schema
//! of your own.

use std::error::Error;

use golem_model::{ModelRetry, Response};

#[cfg(feature = "typed")]
pub use crate::typed::typed;
pub use crate::typed::{OUTPUT_NAME, json_schema};

/// Why a decoder did not produce an output.
///
/// Display shows the reason or the cause's message; `source()` returns the
/// inner error itself.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The model can fix this (e.g. the answer is not in the required form);
    /// the reason is shown to it.
    #[error("{0}")]
    Retry(#[source] ModelRetry),
    /// Anything else: the run fails with this cause, kept intact.
    #[error("{0}")]
    Fatal(#[source] Box<dyn Error + Send + Sync + 'static>),
}

impl DecodeError {
    /// A correctable rejection whose `reason` the model will see.
    pub fn retry(reason: impl Into<String>) -> Self {
        Self::Retry(ModelRetry::new(reason))
    }

    /// A fatal error keeping `cause` (any error, or a message string) as its
    /// source.
    pub fn fatal(cause: impl Into<Box<dyn Error + Send + Sync + 'static>>) -> Self {
        Self::Fatal(cause.into())
    }
}

impl From<ModelRetry> for DecodeError {
    fn from(retry: ModelRetry) -> Self {
        Self::Retry(retry)
    }
}

/// The plain-text decoder: the output is the final response's text, as the
/// model wrote it. Never fails.
///
/// ```
/// use golem_agent::model::Response;
///
/// let response = Response { text: "42".into(), ..Response::default() };
/// assert_eq!(golem_agent::decode::text(&response)?, "42");
/// # Ok::<(), golem_agent::DecodeError>(())
/// ```
pub fn text(response: &Response) -> Result<String, DecodeError> {
    Ok(response.text.clone())
}
