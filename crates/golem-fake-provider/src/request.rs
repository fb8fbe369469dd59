//! What the fake saw, and readers for a request body in either API's shape.

use std::collections::BTreeMap;

use serde_json::Value;

/// One request as the fake received it. Any value is valid.
#[derive(Debug, Clone, PartialEq)]
pub struct Recorded {
    /// The path asked for (`/v1/chat/completions`, `/v1/messages` ...).
    pub path: String,
    /// The headers, by lowercase name; a repeated header's values joined
    /// with `, `.
    pub headers: BTreeMap<String, String>,
    /// The body's bytes, as sent.
    pub raw: Vec<u8>,
    /// The body as JSON (`null` if it is not JSON).
    pub body: Value,
}

impl Recorded {
    /// The value of the header `name` (lowercase), if it was sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }
}

/// The `messages` of a request body (none if it has no such array).
pub fn messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().cloned().unwrap_or_default()
}

/// The content of the last tool result, if the request ends with one (Chat
/// Completions: a `tool` message; Messages: a user turn with a
/// `tool_result` block).
pub fn last_tool_result(body: &Value) -> Option<String> {
    let messages = messages(body);
    let last = messages.last()?;
    if last["role"] == "tool" {
        return Some(last["content"].as_str().unwrap_or_default().to_owned());
    }
    let block = last["content"]
        .as_array()?
        .iter()
        .rev()
        .find(|block| block["type"] == "tool_result")?;
    Some(block["content"].as_str().unwrap_or_default().to_owned())
}

/// The names of the tools a request offers (either API's shape).
pub fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| {
                    tool["function"]["name"]
                        .as_str()
                        .or(tool["name"].as_str())
                        .map(str::to_owned)
                })
                .collect()
        })
        .unwrap_or_default()
}
