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
    // Definitions stay at the top, where the `$ref`s point; a reference to
    // the root now means the wrapped schema.
    let mut definitions = Vec::new();
    if let Some(object) = schema.as_object_mut() {
        for key in ["$defs", "definitions"] {
            if let Some(found) = object.remove(key) {
                definitions.push((key, found));
            }
        }
    }
    point_root_refs_into(&mut schema);
    for (_, found) in &mut definitions {
        point_root_refs_into(found);
    }
    let mut wrapper = json!({
        "type": "object",
        "properties": {WRAPPED: schema},
        "required": [WRAPPED],
        "additionalProperties": false,
    });
    for (key, found) in definitions {
        wrapper[key] = found;
    }
    (wrapper, true)
}

/// Rewrites every `"$ref"` to the root (`#`, or a path under it other than
/// the definitions) to point under the wrapper's `result` property.
fn point_root_refs_into(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::String(reference)) = object.get_mut("$ref") {
                let to_root = reference == "#"
                    || (reference.starts_with("#/")
                        && !reference.starts_with("#/$defs/")
                        && !reference.starts_with("#/definitions/"));
                if to_root {
                    *reference = format!("#/properties/{WRAPPED}{}", &reference[1..]);
                }
            }
            object.values_mut().for_each(point_root_refs_into);
        }
        Value::Array(items) => items.iter_mut().for_each(point_root_refs_into),
        _ => {}
    }
}

/// The keywords OpenAI's strict mode takes; a schema with any other
/// (`oneOf`, `allOf`, `not`, `if`, `patternProperties`, `default` ...) is
/// sent without `strict`.
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

/// Whether `schema` fits OpenAI's strict mode, all the way down: only
/// [`STRICT_KEYWORDS`], each schema saying what it is (a `type`, a `$ref`,
/// `anyOf`, `enum` or `const`), and every object closed
/// (`"additionalProperties": false`) with every property required.
fn strict_ready(schema: &Value) -> bool {
    let Value::Object(object) = schema else {
        return false;
    };
    let known = object
        .keys()
        .all(|key| STRICT_KEYWORDS.contains(&key.as_str()));
    let says_what = ["type", "$ref", "anyOf", "enum", "const"]
        .iter()
        .any(|key| object.contains_key(*key));
    if !known || !says_what {
        return false;
    }
    if object.get("type") == Some(&json!("object")) && !closed_and_required(object) {
        return false;
    }
    let maps = ["properties", "$defs", "definitions"]
        .iter()
        .filter_map(|key| object.get(*key).and_then(Value::as_object))
        .flat_map(|map| map.values());
    let items = object.get("items").into_iter();
    let any_of = object
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    maps.chain(items).chain(any_of).all(strict_ready)
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

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    enum Shape {
        Circle { radius: f64 },
        Square { side: f64 },
    }

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Drawing {
        shape: Shape,
    }

    #[derive(Debug, PartialEq, serde::Deserialize, schemars::JsonSchema)]
    enum Tree {
        Leaf(u8),
        Node(Vec<Tree>),
    }

    #[test]
    fn a_schema_with_keywords_strict_mode_refuses_is_not_strict() {
        let (drawing, _) = typed::<Drawing>();
        assert!(
            drawing.schema.get().contains("oneOf"),
            "{}",
            drawing.schema.get()
        );
        assert!(!drawing.strict, "{}", drawing.schema.get());
        let (tree, _) = typed::<Tree>();
        assert!(!tree.strict, "{}", tree.schema.get());
    }

    #[test]
    fn a_wrapped_recursive_schema_still_points_at_itself() {
        let (tree, decode) = typed::<Tree>();
        let schema: Value = serde_json::from_str(tree.schema.get()).expect("json");
        let text = schema.to_string();
        assert!(!text.contains(r##""$ref":"#""##), "{text}");
        assert!(text.contains(r##""$ref":"#/properties/result""##), "{text}");
        assert_eq!(
            decode(&answer(r#"{"result": {"Node": [{"Leaf": 1}]}}"#)).expect("fits"),
            Tree::Node(vec![Tree::Leaf(1)])
        );
        let (wrapper, wrapped) = object_schema(json!({
            "type": "array", "items": {"$ref": "#/definitions/x"},
            "definitions": {"x": {"type": "string"}}}));
        assert!(wrapped);
        assert_eq!(
            wrapper["definitions"]["x"]["type"], "string",
            "moved to the top"
        );
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
