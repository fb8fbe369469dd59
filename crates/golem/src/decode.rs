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

use golem_model::Response;

pub use crate::error::DecodeError;

#[cfg(feature = "typed")]
pub use crate::typed::typed;
pub use crate::typed::{OUTPUT_NAME, json_schema};

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
