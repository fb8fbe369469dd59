//! Typed output: the final answer as a Rust type (feature `typed`), or as
//! JSON for a schema of one's own ([`json_schema`]). The
//! type's JSON Schema (derived with `schemars`) goes to the model as the
//! request's [`OutputSchema`], which each provider asks for its own way;
//! the answer's text is then parsed into the type, and an answer that does
//! not parse or fit goes back to the model with the error, within
//! [`AgentConfig::output_retries`](crate::AgentConfig::output_retries). A
//! type whose schema is not an object (a list, a number) is wrapped in an
//! object's `result` property, since the providers' mechanisms take
//! objects only, and unwrapped again. It knows nothing of the run loop.

use golem_model::{OutputSchema, Response};
#[cfg(feature = "typed")]
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::error::DecodeError;

/// The name the answer's shape goes by (OpenAI's `json_schema.name`,
/// Anthropic's output tool).
pub const OUTPUT_NAME: &str = "final_result";

/// The property that holds a non-object answer.
const WRAPPED: &str = "result";

/// The schema of `T` as the models get it, and the decoder of their
/// answers into `T`.
///
/// ```
/// use golem_agent::model::Response;
///
/// #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
/// struct Weather { city: String, celsius: f64 }
///
/// let (schema, decode) = golem_agent::decode::typed::<Weather>();
/// assert_eq!(schema.name, "final_result");
/// let answer = Response { text: r#"{"city": "Oslo", "celsius": -3.5}"#.into(), ..Response::default() };
/// let weather = decode(&answer)?;
/// assert_eq!((weather.city.as_str(), weather.celsius), ("Oslo", -3.5));
/// let wrong = Response { text: r#"{"city": "Oslo"}"#.into(), ..Response::default() };
/// assert!(decode(&wrong).unwrap_err().to_string().contains("missing field `celsius`"));
/// # Ok::<(), golem_agent::DecodeError>(())
/// ```
#[cfg(feature = "typed")]
pub fn typed<T: DeserializeOwned + JsonSchema + 'static>() -> (
    OutputSchema,
    impl Fn(&Response) -> Result<T, DecodeError> + Send + Sync + 'static,
) {
    let (output, wrapped) = output_schema(schemars::schema_for!(T).to_value());
    let decode = move |response: &Response| decode_answer::<T>(&response.text, wrapped);
    (output, decode)
}

/// [`typed`] for a JSON Schema of one's own (read from a file, say): the
/// schema as the models get it (wrapped in `result` when its top level is
/// not an object), and the decoder of their answers into JSON. The decoder
/// checks that the answer is JSON, not that it fits: check it with a
/// validator of your choice, returning [`DecodeError::retry`] with its
/// error so the model can correct it.
///
/// ```
/// use golem_agent::model::Response;
///
/// let (output, decode) = golem_agent::decode::json_schema(serde_json::json!({"type": "array"}));
/// assert!(output.schema.get().contains(r#""result""#));
/// let answer = Response { text: r#"{"result": [1, 2]}"#.into(), ..Response::default() };
/// assert_eq!(decode(&answer)?, serde_json::json!([1, 2]));
/// # Ok::<(), golem_agent::DecodeError>(())
/// ```
pub fn json_schema(
    schema: Value,
) -> (
    OutputSchema,
    impl Fn(&Response) -> Result<Value, DecodeError> + Send + Sync + 'static,
) {
    let (output, wrapped) = output_schema(schema);
    let decode = move |response: &Response| decode_answer::<Value>(&response.text, wrapped);
    (output, decode)
}

/// `schema` as an [`OutputSchema`], and whether it was wrapped.
fn output_schema(schema: Value) -> (OutputSchema, bool) {
    let (schema, wrapped) = object_schema(schema);
    let strict = strict_ready(&schema);
    let schema = serde_json::value::to_raw_value(&schema).expect("a schema serializes");
    let output = OutputSchema {
        name: OUTPUT_NAME.to_owned(),
        schema,
        strict,
    };
    (output, wrapped)
}

/// `schema` with an object at its top level (wrapped in `result` when it
/// is not one: whether it was), without `$schema`, which the APIs do not
/// need.
fn object_schema(mut schema: Value) -> (Value, bool) {
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
    }
    if schema["type"] == "object" {
        return (schema, false);
    }
    // `$defs` stay at the top, where the `$ref`s point.
    let defs = schema
        .as_object_mut()
        .and_then(|object| object.remove("$defs"));
    let mut wrapper = json!({
        "type": "object",
        "properties": {WRAPPED: schema},
        "required": [WRAPPED],
        "additionalProperties": false,
    });
    if let Some(defs) = defs {
        wrapper["$defs"] = defs;
    }
    (wrapper, true)
}

/// Whether `schema` fits OpenAI's strict mode: every object closed
/// (`"additionalProperties": false`) with every property required, all the
/// way down.
fn strict_ready(schema: &Value) -> bool {
    match schema {
        Value::Object(object) => {
            if object.get("type") == Some(&json!("object")) && !closed_and_required(object) {
                return false;
            }
            object.values().all(strict_ready)
        }
        Value::Array(items) => items.iter().all(strict_ready),
        _ => true,
    }
}

fn closed_and_required(object: &Map<String, Value>) -> bool {
    let closed = object.get("additionalProperties") == Some(&Value::Bool(false));
    let properties = object.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = object
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    closed
        && properties.is_none_or(|properties| {
            properties
                .keys()
                .all(|name| required.contains(&name.as_str()))
        })
}

/// The answer `text` as a `T` (unwrapped from `result` when `wrapped`).
fn decode_answer<T: DeserializeOwned>(text: &str, wrapped: bool) -> Result<T, DecodeError> {
    let retry = |why: String| {
        DecodeError::retry(format!(
            "{why}. Answer again with only the JSON of the answer, fitting the schema."
        ))
    };
    let json = without_fences(text);
    if json.is_empty() {
        return Err(retry("the answer is empty".into()));
    }
    let mut value: Value = serde_json::from_str(json)
        .map_err(|error| retry(format!("the answer is not JSON ({error})")))?;
    if wrapped {
        value = match value.get_mut(WRAPPED) {
            Some(inner) => inner.take(),
            None => return Err(retry(format!("the answer has no {WRAPPED:?} property"))),
        };
    }
    serde_json::from_value(value)
        .map_err(|error| retry(format!("the answer does not fit the schema: {error}")))
}

/// `text` without the Markdown code fence a model may put around JSON.
fn without_fences(text: &str) -> &str {
    let text = text.trim();
    let Some(inner) = text.strip_prefix("```") else {
        return text;
    };
    let inner = inner.strip_suffix("```").unwrap_or(inner);
    // The fence's language tag, if any, ends its first line.
    let inner = match inner.split_once('\n') {
        Some((tag, rest)) if !tag.trim_start().starts_with(['{', '[']) => rest,
        _ => inner,
    };
    inner.trim()
}

#[cfg(all(test, feature = "typed"))]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Closed {
        name: String,
        tags: Vec<String>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    struct Open {
        name: String,
        note: Option<String>,
    }

    fn answer(text: &str) -> Response {
        Response {
            text: text.into(),
            ..Response::default()
        }
    }

    #[test]
    fn a_closed_type_is_strict_and_an_open_one_is_not() {
        let (closed, _) = typed::<Closed>();
        assert!(closed.strict, "{}", closed.schema.get());
        assert!(!closed.schema.get().contains("$schema"));
        let (open, _) = typed::<Open>();
        assert!(!open.strict, "{}", open.schema.get());
    }

    #[test]
    fn a_list_is_wrapped_in_an_object_and_unwrapped() {
        let (schema, decode) = typed::<Vec<u8>>();
        let value: Value = serde_json::from_str(schema.schema.get()).expect("json");
        assert_eq!(value["type"], "object");
        assert_eq!(value["required"], json!(["result"]));
        assert!(schema.strict);
        assert_eq!(
            decode(&answer(r#"{"result": [1, 2]}"#)).expect("fits"),
            [1, 2]
        );
    }

    #[test]
    fn answers_that_do_not_fit_are_sent_back_with_the_error() {
        let (_, decode) = typed::<Closed>();
        assert_eq!(
            decode(&answer("```json\n{\"name\": \"a\", \"tags\": []}\n```")).expect("fenced"),
            Closed {
                name: "a".into(),
                tags: Vec::new()
            }
        );
        for (text, complaint) in [
            ("", "the answer is empty"),
            ("Sure! Here it is.", "the answer is not JSON"),
            (r#"{"name": "a"}"#, "missing field `tags`"),
            (r#"{"name": "a", "tags": [], "x": 1}"#, "unknown field `x`"),
        ] {
            match decode(&answer(text)) {
                Err(DecodeError::Retry(retry)) => {
                    assert!(retry.reason().contains(complaint), "{}", retry.reason());
                }
                other => panic!("{text:?}: {other:?}"),
            }
        }
    }
}
