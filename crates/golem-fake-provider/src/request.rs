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

/// The text of the last tool result of the request's last turn (what
/// follows the model's last message), if there is one (Chat Completions: a
/// `tool` message, perhaps followed by a user message with the results'
/// images; Messages: a user turn with a `tool_result` block, whose content
/// may be blocks).
pub fn last_tool_result(body: &Value) -> Option<String> {
    let messages = messages(body);
    // This turn's results: what came after the model's last message (an
    // OpenAI user message with a tool's images may follow them).
    let start = messages
        .iter()
        .rposition(|message| message["role"] == "assistant")
        .map_or(0, |at| at + 1);
    let turn = &messages[start..];
    if let Some(tool) = turn.iter().rev().find(|message| message["role"] == "tool") {
        return Some(text_of(&tool["content"]));
    }
    let block = turn
        .iter()
        .rev()
        .filter_map(|message| message["content"].as_array())
        .flat_map(|blocks| blocks.iter().rev())
        .find(|block| block["type"] == "tool_result")?;
    Some(text_of(&block["content"]))
}

/// A content's text: the string, or its text blocks joined.
fn text_of(content: &Value) -> String {
    match content {
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.as_str().unwrap_or_default().to_owned(),
    }
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
