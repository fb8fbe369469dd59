//! `call --arg key=value`: the pairs checked for their syntax before
//! anything starts ([`parse_pairs`]), then, once the tool's input schema is
//! known, each value typed by its parameter's schema and added to
//! `ARGS_JSON`'s object ([`typed_arguments`]). A value that does not fit,
//! or a name the schema does not know, is a usage error naming the
//! parameter. It knows nothing of the client: it is given the schema.

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::failure::Failure;

/// One `--arg key=value`, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    /// The parameter's name.
    pub key: String,
    /// The value as typed on the command line, typed later.
    pub value: String,
}

/// `--arg key=value` entries: each with a name before its `=`, no name
/// twice.
pub fn parse_pairs(entries: &[String]) -> Result<Vec<Pair>, Failure> {
    let mut pairs: Vec<Pair> = Vec::with_capacity(entries.len());
    for entry in entries {
        let Some((key, value)) = entry.split_once('=').filter(|(key, _)| !key.is_empty()) else {
            return Err(Failure::usage(format!(
                "--arg {entry:?}: expected NAME=VALUE, e.g. --arg message=hi (VALUE may be \
                 empty, or JSON for an array or object parameter)"
            )));
        };
        if pairs.iter().any(|pair| pair.key == key) {
            return Err(Failure::usage(format!(
                "--arg {key}: given twice; give an array parameter as one JSON value, e.g. \
                 --arg {key}='[1, 2]'"
            )));
        }
        pairs.push(Pair {
            key: key.to_owned(),
            value: value.to_owned(),
        });
    }
    Ok(pairs)
}

/// `base` (ARGS_JSON, an object) with each pair added, typed by its
/// parameter in `schema` (the tool's input schema; `None` when the tool
/// gave none); a pair wins over the same name in `base`.
pub fn typed_arguments(
    tool: &str,
    schema: Option<&RawValue>,
    base: &RawValue,
    pairs: &[Pair],
) -> Result<Box<RawValue>, Failure> {
    let schema: Value = match schema {
        Some(schema) => serde_json::from_str(schema.get()).unwrap_or(Value::Null),
        None => Value::Null,
    };
    let mut arguments: Map<String, Value> = serde_json::from_str(base.get())
        .map_err(|error| Failure::usage(format!("ARGS_JSON is not a JSON object: {error}")))?;
    let properties = schema.get("properties").and_then(Value::as_object);
    for pair in pairs {
        let parameter = match properties.and_then(|properties| properties.get(&pair.key)) {
            Some(parameter) => resolve(&schema, parameter),
            None => match schema.get("additionalProperties") {
                // Allowed by the schema: typed by it when it is one.
                Some(extra) if extra != &Value::Bool(false) => resolve(&schema, extra),
                _ => return Err(unknown_parameter(tool, &pair.key, properties)),
            },
        };
        let value = typed(parameter, &schema, &pair.value).map_err(|expected| {
            Failure::usage(format!(
                "--arg {}={}: {tool}'s parameter {:?} expects {expected}",
                pair.key, pair.value, pair.key
            ))
        })?;
        arguments.insert(pair.key.clone(), value);
    }
    let text = serde_json::to_string(&arguments).unwrap_or_else(|_| "{}".to_owned());
    RawValue::from_string(text)
        .map_err(|error| Failure::usage(format!("the arguments are not valid JSON: {error}")))
}

fn unknown_parameter(tool: &str, key: &str, properties: Option<&Map<String, Value>>) -> Failure {
    let known: Vec<&str> = properties
        .map(|properties| properties.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let takes = match known.is_empty() {
        true => "it takes no parameters".to_owned(),
        false => format!("it takes: {}", known.join(", ")),
    };
    Failure::usage(format!(
        "--arg {key}: {tool} has no parameter {key:?} ({takes}); `golem-mcp list --long` \
         describes them"
    ))
}

/// A parameter's schema, with a local `$ref` (`#/$defs/Name`,
/// `#/definitions/Name`) followed once.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let Some(pointer) = schema.get("$ref").and_then(Value::as_str) else {
        return schema;
    };
    pointer
        .strip_prefix('#')
        .and_then(|pointer| root.pointer(pointer))
        .unwrap_or(schema)
}

/// The JSON types a parameter's schema allows: its `type` (one or a list),
/// or those of its `anyOf`/`oneOf` branches; empty when it says none (any
/// value).
fn allowed_types<'a>(root: &'a Value, schema: &'a Value) -> Vec<&'a str> {
    let mut types = Vec::new();
    match schema.get("type") {
        Some(Value::String(one)) => types.push(one.as_str()),
        Some(Value::Array(many)) => types.extend(many.iter().filter_map(Value::as_str)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let branch = resolve(root, branch);
            let inner = allowed_types(root, branch);
            if inner.is_empty() {
                return Vec::new(); // a branch that allows anything
            }
            types.extend(inner);
        }
    }
    types
}

/// `text` as the value `schema` asks for, or what was expected instead.
fn typed(schema: &Value, root: &Value, text: &str) -> Result<Value, String> {
    let types = allowed_types(root, schema);
    let value = if types.is_empty() {
        // Any value: JSON when it reads as JSON, a string otherwise.
        serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
    } else {
        // The most specific reading first; a string last, since every
        // text is one.
        const ORDER: [&str; 7] = [
            "null", "boolean", "integer", "number", "array", "object", "string",
        ];
        ORDER
            .iter()
            .filter(|kind| types.contains(kind))
            .find_map(|kind| as_type(kind, text))
            .ok_or_else(|| expected(&types))?
    };
    if let Some(choices) = schema.get("enum").and_then(Value::as_array)
        && !choices.contains(&value)
    {
        let shown: Vec<String> = choices.iter().map(Value::to_string).collect();
        return Err(format!("one of {}", shown.join(", ")));
    }
    if let Some(constant) = schema.get("const")
        && constant != &value
    {
        return Err(format!("the value {constant}"));
    }
    Ok(value)
}

/// `text` read as JSON type `kind`, if it is one.
fn as_type(kind: &str, text: &str) -> Option<Value> {
    let trimmed = text.trim();
    match kind {
        "string" => Some(Value::String(text.to_owned())),
        "null" => (trimmed == "null").then_some(Value::Null),
        "boolean" => match trimmed {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "integer" => trimmed
            .parse::<i64>()
            .map(Value::from)
            .or_else(|_| trimmed.parse::<u64>().map(Value::from))
            .ok(),
        "number" => serde_json::from_str::<serde_json::Number>(trimmed)
            .ok()
            .map(Value::Number),
        "array" => serde_json::from_str(trimmed).ok().filter(Value::is_array),
        "object" => serde_json::from_str(trimmed).ok().filter(Value::is_object),
        _ => None,
    }
}

/// What a list of types asks for, in words: `an integer or null`.
fn expected(types: &[&str]) -> String {
    let words: Vec<&str> = types
        .iter()
        .map(|kind| match *kind {
            "integer" => "an integer",
            "number" => "a number",
            "boolean" => "true or false",
            "null" => "null",
            "array" => "a JSON array, e.g. '[1, 2]'",
            "object" => "a JSON object, e.g. '{\"key\": 1}'",
            "string" => "a string",
            _ => "a value of another type",
        })
        .collect();
    words.join(" or ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::usage_message;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("JSON")
    }

    fn pairs(entries: &[&str]) -> Vec<Pair> {
        let entries: Vec<String> = entries.iter().map(|entry| (*entry).to_owned()).collect();
        parse_pairs(&entries).expect("pairs")
    }

    const SCHEMA: &str = r##"{"type": "object", "properties": {
        "message": {"type": "string"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "loud": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "options": {"type": "object"},
        "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "colour": {"type": "string", "enum": ["red", "green"]},
        "shape": {"$ref": "#/$defs/Shape"},
        "anything": {}
    }, "$defs": {"Shape": {"type": "string", "enum": ["round", "square"]}},
    "additionalProperties": false}"##;

    fn typed_with(entries: &[&str]) -> Result<Value, Failure> {
        let schema = raw(SCHEMA);
        typed_arguments("demo", Some(&schema), &raw("{}"), &pairs(entries))
            .map(|raw| serde_json::from_str(raw.get()).expect("JSON"))
    }

    #[test]
    fn each_value_is_typed_by_its_parameter() {
        let value = typed_with(&[
            "message=42",
            "count=7",
            "ratio=0.5",
            "loud=true",
            "tags=[\"a\",\"b\"]",
            "options={\"deep\":1}",
            "limit=null",
            "colour=red",
            "shape=round",
            "anything=[1]",
        ])
        .expect("typed");
        assert_eq!(
            value,
            serde_json::json!({
                "message": "42", "count": 7, "ratio": 0.5, "loud": true, "tags": ["a", "b"],
                "options": {"deep": 1}, "limit": null, "colour": "red", "shape": "round",
                "anything": [1]
            })
        );
        assert_eq!(typed_with(&["limit=3"]).expect("typed")["limit"], 3);
        assert_eq!(
            typed_with(&["anything=plain"]).expect("typed")["anything"],
            "plain"
        );
        assert_eq!(typed_with(&["message="]).expect("typed")["message"], "");
    }

    #[test]
    fn a_value_that_does_not_fit_names_the_parameter_and_the_type() {
        let message = usage_message(typed_with(&["count=seven"]));
        assert_eq!(
            message,
            "--arg count=seven: demo's parameter \"count\" expects an integer"
        );
        assert!(usage_message(typed_with(&["loud=yes"])).ends_with("expects true or false"));
        assert!(usage_message(typed_with(&["limit=x"])).ends_with("expects an integer or null"));
        assert!(usage_message(typed_with(&["tags=a,b"])).contains("a JSON array"));
        assert!(
            usage_message(typed_with(&["colour=blue"]))
                .ends_with("expects one of \"red\", \"green\"")
        );
        assert!(usage_message(typed_with(&["shape=oval"])).contains("\"round\", \"square\""));
    }

    #[test]
    fn an_unknown_name_is_refused_unless_the_schema_allows_more() {
        let message = usage_message(typed_with(&["mesage=hi"]));
        assert!(message.starts_with("--arg mesage: demo has no parameter \"mesage\" (it takes: "));
        assert!(message.contains("message"), "{message}");
        let open = raw(r#"{"type": "object", "additionalProperties": {"type": "integer"}}"#);
        let typed =
            typed_arguments("demo", Some(&open), &raw("{}"), &pairs(&["n=2"])).expect("allowed");
        assert_eq!(typed.get(), r#"{"n":2}"#);
        let closed = typed_arguments("demo", None, &raw("{}"), &pairs(&["n=2"]));
        assert!(usage_message(closed).contains("it takes no parameters"));
    }

    #[test]
    fn pairs_are_added_to_args_json_and_win_over_it() {
        let schema = raw(SCHEMA);
        let merged = typed_arguments(
            "demo",
            Some(&schema),
            &raw(r#"{"message": "from json", "count": 1}"#),
            &pairs(&["count=2"]),
        )
        .expect("merged");
        let merged: Value = serde_json::from_str(merged.get()).expect("JSON");
        assert_eq!(
            merged,
            serde_json::json!({"message": "from json", "count": 2})
        );
    }

    #[test]
    fn malformed_or_repeated_pairs_are_usage_errors() {
        let entries = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(usage_message(parse_pairs(&entries(&["novalue"]))).contains("expected NAME=VALUE"));
        assert!(usage_message(parse_pairs(&entries(&["=x"]))).contains("expected NAME=VALUE"));
        assert!(usage_message(parse_pairs(&entries(&["a=1", "a=2"]))).contains("given twice"));
        assert_eq!(
            parse_pairs(&entries(&["url=http://x/?a=b"])).expect("ok"),
            vec![Pair {
                key: "url".into(),
                value: "http://x/?a=b".into()
            }]
        );
    }
}
