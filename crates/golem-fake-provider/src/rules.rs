//! The request rules the real APIs enforce, checked before the script is
//! asked, and refused with the APIs' own error messages (400,
//! `invalid_request_error`): on the tools offered, a tool name of letters,
//! digits, `_` and `-`, at most 64 characters, and an input schema whose
//! top level is `"type": "object"`; on the output token limit, OpenAI's
//! `max_tokens` or `max_completion_tokens` at least 1 (and never
//! `max_tokens` for its reasoning models, `o1`, `o3`, `o4` and `gpt-5`),
//! Anthropic's `max_tokens` required and at least 1; on the other settings,
//! OpenAI's `tool_choice` and `parallel_tool_calls` only with tools, its
//! temperature from 0 to 2 and at most 4 `stop` sequences, Anthropic's
//! temperature from 0 to 1 and no field it does not have (`seed`); on
//! OpenAI's `json_schema` response format, a name of the tools' alphabet
//! and, when `strict`, every object closed and every property required. A test that sends what
//! the real API would refuse fails here as it would in production.

use serde_json::Value;

/// The longest tool name both APIs accept.
const MAX_NAME: usize = 64;

/// Why the OpenAI Chat Completions API would refuse `body`.
pub(crate) fn openai(body: &Value) -> Option<String> {
    openai_limits(body)
        .or_else(|| openai_settings(body))
        .or_else(|| openai_response_format(&body["response_format"]))
        .or_else(|| openai_tools(body))
}

/// Why the API would refuse a `json_schema` response format: a name that
/// is not letters, digits, `_` and `-` (at most 64), or, with `strict`, an
/// object that is not closed or does not require every property.
fn openai_response_format(format: &Value) -> Option<String> {
    if format["type"] != "json_schema" {
        return None;
    }
    let spec = &format["json_schema"];
    let name = spec["name"].as_str().unwrap_or_default();
    if !name_characters_allowed(name) || name.len() > MAX_NAME {
        return Some(
            "Invalid 'response_format.json_schema.name': string does not match pattern. \
             Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
                .into(),
        );
    }
    if spec["strict"] != true {
        return None;
    }
    strict_refusal(&spec["schema"])
        .map(|why| format!("Invalid schema for response_format '{name}': In context=(), {why}"))
}

/// What strict mode refuses in `schema`: the first object that is not
/// closed, or that leaves a property out of `required`.
fn strict_refusal(schema: &Value) -> Option<String> {
    match schema {
        Value::Object(object) => {
            if let Some(keyword) = ["oneOf", "allOf", "not", "if", "patternProperties"]
                .into_iter()
                .find(|keyword| object.contains_key(*keyword))
            {
                return Some(format!("'{keyword}' is not permitted."));
            }
            if object.get("type") == Some(&Value::from("object")) {
                if object.get("additionalProperties") != Some(&Value::Bool(false)) {
                    return Some(
                        "'additionalProperties' is required to be supplied and to be false.".into(),
                    );
                }
                let required: Vec<&Value> = object
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|names| names.iter().collect())
                    .unwrap_or_default();
                if let Some(properties) = object.get("properties").and_then(Value::as_object)
                    && let Some(missing) = properties
                        .keys()
                        .find(|key| !required.contains(&&Value::from(key.as_str())))
                {
                    return Some(format!(
                        "'required' is required to be supplied and to be an array including \
                         every key in properties. Missing '{missing}'."
                    ));
                }
            }
            object.values().find_map(strict_refusal)
        }
        Value::Array(items) => items.iter().find_map(strict_refusal),
        _ => None,
    }
}

/// Why the OpenAI Chat Completions API would refuse `body`'s sampling and
/// tool-choice settings.
fn openai_settings(body: &Value) -> Option<String> {
    let no_tools = body["tools"].as_array().is_none_or(Vec::is_empty);
    for field in ["tool_choice", "parallel_tool_calls"] {
        if no_tools && !body[field].is_null() {
            return Some(format!(
                "Invalid value for '{field}': '{field}' is only allowed when 'tools' are \
                 specified."
            ));
        }
    }
    if let Some(temperature) = body["temperature"].as_f64()
        && !(0.0..=2.0).contains(&temperature)
    {
        let (side, bound) = if temperature < 0.0 {
            ("below minimum", ">= 0")
        } else {
            ("above maximum", "<= 2")
        };
        return Some(format!(
            "Invalid 'temperature': decimal {side} value. Expected a value {bound}, but got \
             {temperature} instead."
        ));
    }
    if let Some(stop) = body["stop"].as_array()
        && stop.len() > 4
    {
        return Some(format!(
            "Invalid 'stop': array too long. Expected an array with maximum length 4, but got \
             an array with length {} instead.",
            stop.len()
        ));
    }
    None
}

/// Why the OpenAI Chat Completions API would refuse `body`'s token limits.
fn openai_limits(body: &Value) -> Option<String> {
    let model = body["model"].as_str().unwrap_or_default();
    let reasoning = ["o1", "o3", "o4", "gpt-5"]
        .iter()
        .any(|family| model.starts_with(family));
    if reasoning && !body["max_tokens"].is_null() {
        return Some(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use \
             'max_completion_tokens' instead."
                .into(),
        );
    }
    for field in ["max_tokens", "max_completion_tokens"] {
        match &body[field] {
            Value::Null => {}
            Value::Number(number) if number.as_u64().is_some_and(|n| n >= 1) => {}
            Value::Number(number) if number.is_i64() || number.is_u64() => {
                return Some(format!(
                    "Invalid '{field}': integer below minimum value. Expected a value >= 1, \
                     but got {number} instead."
                ));
            }
            other => {
                return Some(format!(
                    "Invalid type for '{field}': expected an integer, but got {} instead.",
                    json_type(other)
                ));
            }
        }
    }
    None
}

/// Why the OpenAI Chat Completions API would refuse `body`'s tools.
fn openai_tools(body: &Value) -> Option<String> {
    let tools = body["tools"].as_array()?;
    for (index, tool) in tools.iter().enumerate() {
        let function = &tool["function"];
        let name = function["name"].as_str().unwrap_or_default();
        if !name_characters_allowed(name) {
            return Some(format!(
                "Invalid 'tools[{index}].function.name': string does not match pattern. \
                 Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'."
            ));
        }
        if name.chars().count() > MAX_NAME {
            return Some(format!(
                "Invalid 'tools[{index}].function.name': string too long. Expected a string \
                 with maximum length {MAX_NAME}, but got a string with length {} instead.",
                name.chars().count()
            ));
        }
        if let Some(parameters) = function.get("parameters")
            && parameters["type"] != "object"
        {
            let got = parameters["type"].as_str().unwrap_or("None");
            return Some(format!(
                "Invalid schema for function '{name}': schema must be a JSON Schema of \
                 'type: \"object\"', got 'type: \"{got}\"'."
            ));
        }
    }
    None
}

/// Why the Anthropic Messages API would refuse `body`.
pub(crate) fn anthropic(body: &Value) -> Option<String> {
    anthropic_limit(body)
        .or_else(|| anthropic_settings(body))
        .or_else(|| anthropic_tools(body))
}

/// Why the Anthropic Messages API would refuse `body`'s sampling settings:
/// it has no `seed` (nor OpenAI's other names), and its temperature goes
/// from 0 to 1.
fn anthropic_settings(body: &Value) -> Option<String> {
    for field in [
        "seed",
        "stop",
        "parallel_tool_calls",
        "max_completion_tokens",
    ] {
        if body.get(field).is_some() {
            return Some(format!("{field}: Extra inputs are not permitted"));
        }
    }
    if !body["temperature"].is_null() && !body["top_p"].is_null() {
        return Some(
            "`temperature` and `top_p` cannot both be specified for this model. Please use only \
             one."
                .into(),
        );
    }
    match body["temperature"].as_f64() {
        Some(temperature) if temperature > 1.0 => {
            Some("temperature: Input should be less than or equal to 1".into())
        }
        Some(temperature) if temperature < 0.0 => {
            Some("temperature: Input should be greater than or equal to 0".into())
        }
        _ => None,
    }
}

/// Why the Anthropic Messages API would refuse `body`'s `max_tokens`,
/// which it requires.
fn anthropic_limit(body: &Value) -> Option<String> {
    match &body["max_tokens"] {
        Value::Null => Some("max_tokens: Field required".into()),
        Value::Number(number) if number.as_u64().is_some_and(|n| n >= 1) => None,
        Value::Number(number) if number.is_i64() || number.is_u64() => {
            Some("max_tokens: Input should be greater than or equal to 1".into())
        }
        _ => Some("max_tokens: Input should be a valid integer".into()),
    }
}

/// Why the Anthropic Messages API would refuse `body`'s tools.
fn anthropic_tools(body: &Value) -> Option<String> {
    let tools = body["tools"].as_array()?;
    for (index, tool) in tools.iter().enumerate() {
        let name = tool["name"].as_str().unwrap_or_default();
        if !name_characters_allowed(name) || name.chars().count() > MAX_NAME {
            return Some(format!(
                "tools.{index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
            ));
        }
        match &tool["input_schema"]["type"] {
            Value::Null => {
                return Some(format!(
                    "tools.{index}.custom.input_schema.type: Field required"
                ));
            }
            kind if kind != "object" => {
                return Some(format!(
                    "tools.{index}.custom.input_schema.type: Input should be 'object'"
                ));
            }
            _ => {}
        }
    }
    None
}

/// A JSON value's type as OpenAI's messages name it.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a decimal",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether `name` is not empty and made of ASCII letters, digits, `_` and
/// `-` only.
fn name_characters_allowed(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_and_schemas_the_apis_refuse_are_refused_with_their_messages() {
        let openai_tool = |name: &str, schema: Value| json!({"tools": [{"type": "function", "function": {"name": name, "parameters": schema}}]});
        let object = json!({"type": "object"});
        assert_eq!(openai(&openai_tool("get_weather-2", object.clone())), None);
        assert!(
            openai(&openai_tool("get.weather", object.clone()))
                .is_some_and(|refusal| refusal.contains("does not match pattern"))
        );
        assert!(
            openai(&openai_tool(&"a".repeat(65), object.clone()))
                .is_some_and(|refusal| refusal.contains("length 65"))
        );
        assert!(
            openai(&openai_tool("t", json!({"properties": {}})))
                .is_some_and(|refusal| refusal.contains("got 'type: \"None\"'"))
        );

        let anthropic_tool = |name: &str, schema: Value| json!({"max_tokens": 10, "tools": [{"name": name, "input_schema": schema}]});
        assert_eq!(anthropic(&anthropic_tool("t", object)), None);
        assert!(
            anthropic(&anthropic_tool(
                "wetter für köln",
                json!({"type": "object"})
            ))
            .is_some_and(|refusal| refusal.starts_with("tools.0.custom.name"))
        );
        assert!(
            anthropic(&anthropic_tool("t", json!({})))
                .is_some_and(|refusal| refusal.ends_with("Field required"))
        );
    }

    #[test]
    fn token_limits_the_apis_refuse_are_refused_with_their_messages() {
        let openai_body =
            |model: &str, field: &str, limit: Value| json!({"model": model, field: limit});
        for field in ["max_tokens", "max_completion_tokens"] {
            assert_eq!(openai(&openai_body("gpt-4o", field, json!(50))), None);
            assert_eq!(
                openai(&openai_body("gpt-4o", field, json!(0))).as_deref(),
                Some(
                    format!(
                        "Invalid '{field}': integer below minimum value. Expected a value >= 1, \
                         but got 0 instead."
                    )
                    .as_str()
                )
            );
            assert!(
                openai(&openai_body("gpt-4o", field, json!("50")))
                    .is_some_and(|refusal| refusal.contains("got a string instead"))
            );
        }
        assert_eq!(
            openai(&json!({"model": "gpt-4o"})),
            None,
            "no limit is fine"
        );
        assert_eq!(
            openai(&openai_body(
                "gpt-5-mini",
                "max_completion_tokens",
                json!(50)
            )),
            None
        );
        assert!(
            openai(&openai_body("o3", "max_tokens", json!(50)))
                .is_some_and(|refusal| refusal.contains("Use 'max_completion_tokens' instead"))
        );

        assert_eq!(anthropic(&json!({"max_tokens": 1})), None);
        assert_eq!(
            anthropic(&json!({"max_tokens": 1, "seed": 3})).as_deref(),
            Some("seed: Extra inputs are not permitted")
        );
        assert_eq!(
            anthropic(&json!({"max_tokens": 1, "temperature": 1.5})).as_deref(),
            Some("temperature: Input should be less than or equal to 1")
        );
        assert!(
            openai(&json!({"model": "m", "tool_choice": "required"}))
                .is_some_and(|refusal| refusal.contains("only allowed when 'tools' are specified"))
        );
        assert!(
            openai(&json!({"model": "m", "temperature": 2.5}))
                .is_some_and(|refusal| refusal.contains("Expected a value <= 2, but got 2.5"))
        );
        let format = |strict: bool, schema: Value| {
            json!({"model": "m", "response_format": {"type": "json_schema",
                "json_schema": {"name": "final_result", "strict": strict, "schema": schema}}})
        };
        let open = json!({"type": "object", "properties": {"a": {"type": "string"}}});
        assert_eq!(openai(&format(false, open.clone())), None);
        assert!(
            openai(&format(true, open))
                .is_some_and(|refusal| refusal.contains("'additionalProperties' is required"))
        );
        let optional = json!({"type": "object", "properties": {"a": {}}, "required": [],
            "additionalProperties": false});
        assert!(
            openai(&format(true, optional))
                .is_some_and(|refusal| refusal.ends_with("Missing 'a'."))
        );
        assert!(
            openai(&json!({"model": "m", "stop": ["a", "b", "c", "d", "e"]}))
                .is_some_and(|refusal| refusal.contains("maximum length 4"))
        );
        assert_eq!(
            anthropic(&json!({"model": "claude"})).as_deref(),
            Some("max_tokens: Field required")
        );
        assert_eq!(
            anthropic(&json!({"max_tokens": 0})).as_deref(),
            Some("max_tokens: Input should be greater than or equal to 1")
        );
    }
}
