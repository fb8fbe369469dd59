//! `golem run --output-schema FILE`: the answer as JSON that fits a JSON
//! Schema. The schema goes to the model with every request (each provider
//! asks for it its own way), and the answer is checked against it with the
//! `jsonschema` crate (draft 2020-12 unless `$schema` names another;
//! nothing fetched); one that does not fit goes back to the model with the
//! validator's first errors, within `--output-retries`. It knows nothing of
//! how the run is shown.

use std::path::Path;
use std::sync::Arc;

use golem_agent::DecodeError;
use golem_agent::model::{OutputSchema, Response};
use serde_json::Value;

use crate::exit::Failure;

/// The most validation errors told to the model at once.
const ERRORS_TOLD: usize = 5;

/// An answer's decoder: the JSON, compact, on one line.
pub type Decoder = Arc<dyn Fn(&Response) -> Result<String, DecodeError> + Send + Sync>;

/// The answer's shape: the schema as the models get it, and the decoder
/// that checks answers against it.
#[derive(Clone)]
pub struct Shape {
    /// The schema, for every request.
    pub output: OutputSchema,
    /// Checks an answer and gives its JSON.
    pub decoder: Decoder,
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shape")
            .field("output", &self.output)
            .finish_non_exhaustive()
    }
}

/// The schema in `path` as an answer's [`Shape`].
///
/// # Errors
///
/// A usage failure when the file cannot be read, is not JSON, or is not a
/// schema the validator can compile.
pub fn load(path: &Path) -> Result<Shape, Failure> {
    let shown = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|error| Failure::usage(format!("--output-schema {shown}: {error}")))?;
    let schema: Value = serde_json::from_str(&text)
        .map_err(|error| Failure::usage(format!("--output-schema {shown}: not JSON: {error}")))?;
    let validator = jsonschema::options()
        .offline()
        .build(&schema)
        .map_err(|error| {
            Failure::usage(format!(
                "--output-schema {shown}: not a JSON Schema: {error}"
            ))
        })?;
    let (output, json) = golem_agent::decode::json_schema(schema);
    let decode = move |response: &Response| {
        let value = json(response)?;
        let errors: Vec<String> = validator
            .iter_errors(&value)
            .take(ERRORS_TOLD)
            .map(|error| match error.instance_path().to_string().as_str() {
                "" => error.to_string(),
                at => format!("{at}: {error}"),
            })
            .collect();
        if !errors.is_empty() {
            return Err(DecodeError::retry(format!(
                "the answer does not fit the schema ({}). Answer again with only the JSON of \
                 the answer, fitting the schema.",
                errors.join("; ")
            )));
        }
        Ok(value.to_string())
    };
    Ok(Shape {
        output,
        decoder: Arc::new(decode),
    })
}
