//! The request rules the real APIs enforce on the tools offered, checked
//! before the script is asked, and refused with the APIs' own error
//! messages (400, `invalid_request_error`): a tool name of letters, digits,
//! `_` and `-`, at most 64 characters; an input schema whose top level is
//! `"type": "object"`. A test that offers a tool the real API would refuse
//! fails here as it would in production.

use serde_json::Value;

/// The longest tool name both APIs accept.
const MAX_NAME: usize = 64;

/// Why the OpenAI Chat Completions API would refuse `body`'s tools.
pub(crate) fn openai(body: &Value) -> Option<String> {
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

/// Why the Anthropic Messages API would refuse `body`'s tools.
pub(crate) fn anthropic(body: &Value) -> Option<String> {
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

        let anthropic_tool =
            |name: &str, schema: Value| json!({"tools": [{"name": name, "input_schema": schema}]});
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
}
