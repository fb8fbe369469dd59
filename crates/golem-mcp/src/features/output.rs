//! Structured output: a tool's `outputSchema`, compiled once, and the check
//! of a result's `structuredContent` against it (ADR 0012).

use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use serde_json::value::RawValue;

use crate::features::tools::CallResult;

/// How many mismatches an [`OutputError::Mismatch`] names at most.
const MAX_MISMATCHES: usize = 5;

/// How many characters of one mismatch's message are kept: a validator's
/// message may quote a whole (large) value.
const MAX_MESSAGE_CHARS: usize = 300;

/// Why a tool result's structured output was refused.
///
/// `isError` results are never checked: their content explains a failure
/// and need not match the schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The tool declares an `outputSchema` but the result has no
    /// `structuredContent`.
    #[error("the result has no structuredContent, but the tool declares an outputSchema")]
    Missing,
    /// `structuredContent` does not match the `outputSchema`.
    #[error(
        "the structuredContent does not match the tool's outputSchema: {}",
        Mismatch::list(.mismatches, *.more)
    )]
    Mismatch {
        /// The first mismatches, in the validator's order (at least one).
        mismatches: Vec<Mismatch>,
        /// How many more there were beyond those.
        more: usize,
    },
    /// The tool's `outputSchema` is not a JSON Schema this client can
    /// compile (malformed, an unknown `$schema`, or a `$ref` to another
    /// document, which is never fetched), so no result can be checked. The
    /// tool stays listed; every checked call says this.
    #[error(
        "the tool's outputSchema is not a valid JSON Schema, so its results cannot be validated: {problem}"
    )]
    InvalidSchema {
        /// What the validator said about the schema.
        problem: String,
    },
}

/// One place where `structuredContent` does not match the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mismatch {
    /// A JSON Pointer to the offending value (`""` for the whole value,
    /// `/temperature`, `/items/0`).
    pub instance_path: String,
    /// What is wrong there, e.g. `"hot" is not of type "number"`.
    pub message: String,
}

impl Mismatch {
    fn list(mismatches: &[Mismatch], more: usize) -> String {
        let mut text = mismatches
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        if more > 0 {
            text.push_str(&format!("; and {more} more"));
        }
        text
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = match self.instance_path.as_str() {
            "" => "the top level",
            path => path,
        };
        write!(f, "at {path}: {}", self.message)
    }
}

/// A tool's output schema, compiled on first use and shared by every clone
/// of its [`ToolInfo`](crate::ToolInfo): once per listed tool, never per
/// call.
#[derive(Clone, Default)]
pub(crate) struct OutputCheck(Arc<OnceLock<Result<jsonschema::Validator, String>>>);

impl fmt::Debug for OutputCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0.get() {
            None => "not compiled yet",
            Some(Ok(_)) => "compiled",
            Some(Err(_)) => "not a valid schema",
        })
    }
}

impl OutputCheck {
    /// Checks `result` against `schema` (the tool's `outputSchema`),
    /// compiling it the first time.
    pub(crate) fn check(&self, schema: &RawValue, result: &CallResult) -> Result<(), OutputError> {
        if result.is_error {
            return Ok(());
        }
        let validator = self
            .0
            .get_or_init(|| compile(schema))
            .as_ref()
            .map_err(|problem| OutputError::InvalidSchema {
                problem: problem.clone(),
            })?;
        let Some(structured) = result.structured_content.as_deref() else {
            return Err(OutputError::Missing);
        };
        // The bytes came from a JSON parser: they are valid JSON.
        let instance: Value =
            serde_json::from_str(structured.get()).map_err(|error| OutputError::Mismatch {
                mismatches: vec![Mismatch {
                    instance_path: String::new(),
                    message: format!("not readable as JSON: {error}"),
                }],
                more: 0,
            })?;
        let mut mismatches = Vec::new();
        let mut more = 0;
        for error in validator.iter_errors(&instance) {
            if mismatches.len() == MAX_MISMATCHES {
                more += 1;
                continue;
            }
            mismatches.push(Mismatch {
                instance_path: error.instance_path().as_str().to_owned(),
                message: shorten(error.to_string()),
            });
        }
        match mismatches.is_empty() {
            true => Ok(()),
            false => Err(OutputError::Mismatch { mismatches, more }),
        }
    }
}

/// Compiles a schema: JSON Schema 2020-12 unless its `$schema` names
/// another draft (draft-07 and the others the validator knows); references
/// to other documents are refused, never fetched.
fn compile(schema: &RawValue) -> Result<jsonschema::Validator, String> {
    let schema: Value = serde_json::from_str(schema.get()).map_err(|error| error.to_string())?;
    jsonschema::options()
        .offline()
        .build(&schema)
        .map_err(|error| shorten(error.to_string()))
}

fn shorten(mut text: String) -> String {
    if let Some((cut, _)) = text.char_indices().nth(MAX_MESSAGE_CHARS) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).expect("valid JSON")
    }

    fn result(structured: Option<&str>) -> CallResult {
        let mut result = CallResult::new(Vec::new());
        result.structured_content = structured.map(raw);
        result
    }

    const WEATHER: &str = r#"{"type":"object","properties":{"temperature":{"type":"number"}},"required":["temperature"]}"#;

    #[test]
    fn a_matching_result_passes_and_a_mismatch_names_the_path() {
        let check = OutputCheck::default();
        let schema = raw(WEATHER);
        assert_eq!(
            check.check(&schema, &result(Some(r#"{"temperature":21.5}"#))),
            Ok(())
        );
        let Err(OutputError::Mismatch { mismatches, more }) =
            check.check(&schema, &result(Some(r#"{"temperature":"hot"}"#)))
        else {
            panic!("a string temperature was accepted");
        };
        assert_eq!(more, 0);
        assert_eq!(mismatches[0].instance_path, "/temperature");
        assert!(mismatches[0].message.contains("number"), "{mismatches:?}");
    }

    #[test]
    fn missing_structured_content_is_its_own_error_and_is_error_is_not_checked() {
        let check = OutputCheck::default();
        let schema = raw(WEATHER);
        assert_eq!(
            check.check(&schema, &result(None)),
            Err(OutputError::Missing)
        );
        let mut failed = result(None);
        failed.is_error = true;
        assert_eq!(check.check(&schema, &failed), Ok(()));
    }

    #[test]
    fn the_draft_follows_dollar_schema() {
        // `prefixItems` is a 2020-12 keyword; draft-07 ignores it.
        let tuple =
            r#"{"type":"object","properties":{"pair":{"prefixItems":[{"type":"string"}]}}}"#;
        let draft07 = tuple.replacen(
            '{',
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","#,
            1,
        );
        let instance = result(Some(r#"{"pair":[1]}"#));
        assert!(matches!(
            OutputCheck::default().check(&raw(tuple), &instance),
            Err(OutputError::Mismatch { .. })
        ));
        assert_eq!(
            OutputCheck::default().check(&raw(&draft07), &instance),
            Ok(())
        );
    }

    #[test]
    fn an_invalid_schema_says_so_on_every_check_and_remote_refs_are_not_fetched() {
        for schema in [
            r#"{"type":"no-such-type"}"#,
            r#"{"$ref":"https://example.invalid/schema.json"}"#,
        ] {
            let check = OutputCheck::default();
            for _ in 0..2 {
                let outcome = check.check(&raw(schema), &result(Some("{}")));
                assert!(
                    matches!(outcome, Err(OutputError::InvalidSchema { .. })),
                    "{schema}: {outcome:?}"
                );
            }
        }
    }

    #[test]
    fn many_mismatches_are_counted_not_listed() {
        let schema = raw(r#"{"type":"array","items":{"type":"string"}}"#);
        let Err(OutputError::Mismatch { mismatches, more }) =
            OutputCheck::default().check(&schema, &result(Some("[1,2,3,4,5,6,7]")))
        else {
            panic!("numbers were accepted as strings");
        };
        assert_eq!((mismatches.len(), more), (MAX_MISMATCHES, 2));
        let text = OutputError::Mismatch { mismatches, more }.to_string();
        assert!(
            text.contains("at /0:") && text.ends_with("and 2 more"),
            "{text}"
        );
    }
}
