//! Structured output: a tool's `outputSchema`, compiled once, and the check
//! of a result's `structuredContent` against it (ADR 0012). Without the
//! `output-validation` feature only the content's presence is checked.

use std::fmt;
use std::sync::{Arc, OnceLock};

#[cfg(feature = "output-validation")]
use serde_json::Value;
use serde_json::value::RawValue;

#[cfg(feature = "output-validation")]
use crate::error::Mismatch;
use crate::error::OutputError;

/// How many mismatches an [`OutputError::Mismatch`] names at most.
#[cfg(feature = "output-validation")]
const MAX_MISMATCHES: usize = 5;

/// How many characters of one mismatch's message are kept: a validator's
/// message may quote a whole (large) value.
#[cfg(feature = "output-validation")]
const MAX_MESSAGE_CHARS: usize = 300;

/// A tool's output schema, compiled on first use and shared by every clone
/// of its [`ToolInfo`](crate::ToolInfo): once per listed tool, never per
/// call.
#[derive(Clone, Default)]
pub(crate) struct OutputCheck(Arc<OnceLock<Result<Validator, String>>>);

#[cfg(feature = "output-validation")]
type Validator = jsonschema::Validator;

/// Without `output-validation`, no schema is compiled: every schema
/// "compiles" to this, and every present content passes.
#[cfg(not(feature = "output-validation"))]
struct Validator;

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
    /// Checks a result's `structured` content against `schema` (the tool's
    /// `outputSchema`), compiling it the first time.
    pub(crate) fn check(
        &self,
        schema: &RawValue,
        structured: Option<&RawValue>,
    ) -> Result<(), OutputError> {
        let validator = self
            .0
            .get_or_init(|| compile(schema))
            .as_ref()
            .map_err(|problem| OutputError::InvalidSchema {
                problem: problem.clone(),
            })?;
        let Some(structured) = structured else {
            return Err(OutputError::Missing);
        };
        validate(validator, structured)
    }
}

/// `structured` against the compiled schema.
#[cfg(feature = "output-validation")]
fn validate(validator: &Validator, structured: &RawValue) -> Result<(), OutputError> {
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

/// Without `output-validation`: present content passes unvalidated.
#[cfg(not(feature = "output-validation"))]
fn validate(_: &Validator, _: &RawValue) -> Result<(), OutputError> {
    Ok(())
}

/// Compiles a schema: JSON Schema 2020-12 unless its `$schema` names
/// another draft (draft-07 and the others the validator knows); references
/// to other documents are refused, never fetched.
#[cfg(feature = "output-validation")]
fn compile(schema: &RawValue) -> Result<Validator, String> {
    let schema: Value = serde_json::from_str(schema.get()).map_err(|error| error.to_string())?;
    jsonschema::options()
        .offline()
        .build(&schema)
        .map_err(|error| shorten(error.to_string()))
}

/// Without `output-validation`: a schema is only checked to be JSON.
#[cfg(not(feature = "output-validation"))]
fn compile(schema: &RawValue) -> Result<Validator, String> {
    serde_json::from_str::<serde::de::IgnoredAny>(schema.get())
        .map(|_| Validator)
        .map_err(|error| error.to_string())
}

#[cfg(feature = "output-validation")]
fn shorten(mut text: String) -> String {
    if let Some((cut, _)) = text.char_indices().nth(MAX_MESSAGE_CHARS) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// Without `output-validation`: presence is all that is checked.
#[cfg(all(test, not(feature = "output-validation")))]
mod unvalidated {
    use super::*;

    #[test]
    fn present_content_passes_unvalidated_and_absent_content_is_missing() {
        let check = OutputCheck::default();
        let schema = RawValue::from_string(r#"{"type":"object","required":["celsius"]}"#.into())
            .expect("JSON");
        let content = RawValue::from_string(r#"{"kelvin":300}"#.into()).expect("JSON");
        assert_eq!(check.check(&schema, Some(&content)), Ok(()));
        assert_eq!(check.check(&schema, None), Err(OutputError::Missing));
    }
}

#[cfg(all(test, feature = "output-validation"))]
mod tests {
    use super::*;

    fn raw(json: &str) -> Box<RawValue> {
        RawValue::from_string(json.to_owned()).expect("valid JSON")
    }

    /// A result's structured content, as `check` takes it.
    fn result(structured: Option<&str>) -> Option<Box<RawValue>> {
        structured.map(raw)
    }

    const WEATHER: &str = r#"{"type":"object","properties":{"temperature":{"type":"number"}},"required":["temperature"]}"#;

    #[test]
    fn a_matching_result_passes_and_a_mismatch_names_the_path() {
        let check = OutputCheck::default();
        let schema = raw(WEATHER);
        assert_eq!(
            check.check(&schema, result(Some(r#"{"temperature":21.5}"#)).as_deref()),
            Ok(())
        );
        let Err(OutputError::Mismatch { mismatches, more }) =
            check.check(&schema, result(Some(r#"{"temperature":"hot"}"#)).as_deref())
        else {
            panic!("a string temperature was accepted");
        };
        assert_eq!(more, 0);
        assert_eq!(mismatches[0].instance_path, "/temperature");
        assert!(mismatches[0].message.contains("number"), "{mismatches:?}");
    }

    #[test]
    fn missing_structured_content_is_its_own_error() {
        let check = OutputCheck::default();
        let schema = raw(WEATHER);
        assert_eq!(
            check.check(&schema, result(None).as_deref()),
            Err(OutputError::Missing)
        );
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
            OutputCheck::default().check(&raw(tuple), instance.as_deref()),
            Err(OutputError::Mismatch { .. })
        ));
        assert_eq!(
            OutputCheck::default().check(&raw(&draft07), instance.as_deref()),
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
                let outcome = check.check(&raw(schema), result(Some("{}")).as_deref());
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
            OutputCheck::default().check(&schema, result(Some("[1,2,3,4,5,6,7]")).as_deref())
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
