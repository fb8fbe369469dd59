//! `sampling/createMessage`: a server asks the application's model for a
//! completion (protocol revision 2025-11-25, tool use included).

use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::features::tools::ToolInfo;
use crate::wire::content::{Content, Role};

/// One content block of a sampling message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SamplingContent {
    /// Text.
    #[serde(rename = "text")]
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    #[serde(rename = "image")]
    Image {
        /// The base64 data.
        data: String,
        /// Its MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio, base64-encoded.
    #[serde(rename = "audio")]
    Audio {
        /// The base64 data.
        data: String,
        /// Its MIME type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// The model asks for a tool (one the request offered).
    #[serde(rename = "tool_use")]
    ToolUse {
        /// The call's id, which its result names.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments, a JSON object.
        input: Value,
    },
    /// A tool's result, sent back to the model.
    #[serde(rename = "tool_result")]
    ToolResult {
        /// The id of the [`ToolUse`](SamplingContent::ToolUse) it answers.
        #[serde(rename = "toolUseId")]
        tool_use_id: String,
        /// The result's content.
        #[serde(serialize_with = "serialize_content", default)]
        content: Vec<Content>,
        /// Structured output, when the tool gave it.
        #[serde(
            rename = "structuredContent",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        structured_content: Option<Value>,
        /// Whether the tool failed.
        #[serde(rename = "isError", default, skip_serializing_if = "is_false")]
        is_error: bool,
    },
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// Tool results are only ever received by this client; the content is
/// written back as text items should a handler echo it.
fn serialize_content<S: Serializer>(content: &[Content], serializer: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(content.len()))?;
    for item in content {
        if let Content::Text { text } = item {
            seq.serialize_element(&serde_json::json!({"type": "text", "text": text}))?;
        }
    }
    seq.end()
}

/// One message of the conversation a server asks the model to continue.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who it is from.
    pub role: Role,
    /// Its content blocks (a single block on the wire becomes a list of one).
    #[serde(deserialize_with = "one_or_many")]
    pub content: Vec<SamplingContent>,
}

fn one_or_many<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<SamplingContent>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        Many(Vec<SamplingContent>),
        One(SamplingContent),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::Many(blocks) => blocks,
        OneOrMany::One(block) => vec![block],
    })
}

/// What the server would like in a model; advice, not a requirement.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct ModelPreferences {
    /// Model names or families to consider, in order of preference.
    #[serde(default)]
    pub hints: Vec<ModelHint>,
    /// How much cost matters, from 0 to 1.
    #[serde(rename = "costPriority", default)]
    pub cost_priority: Option<f64>,
    /// How much speed matters, from 0 to 1.
    #[serde(rename = "speedPriority", default)]
    pub speed_priority: Option<f64>,
    /// How much capability matters, from 0 to 1.
    #[serde(rename = "intelligencePriority", default)]
    pub intelligence_priority: Option<f64>,
}

/// A model name or family the server suggests, e.g. `claude-3-5-sonnet`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[non_exhaustive]
pub struct ModelHint {
    /// The name or a part of it.
    #[serde(default)]
    pub name: Option<String>,
}

/// How the model may use the offered tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoice {
    /// The model decides (the default).
    #[default]
    Auto,
    /// The model must call at least one tool.
    Required,
    /// The model must not call a tool.
    None,
}

#[derive(Deserialize)]
struct ToolChoiceWire {
    #[serde(default)]
    mode: ToolChoice,
}

fn tool_choice<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<ToolChoice>, D::Error> {
    Ok(Option::<ToolChoiceWire>::deserialize(deserializer)?.map(|wire| wire.mode))
}

/// A server's `sampling/createMessage` request.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct CreateMessageRequest {
    /// The conversation to continue.
    pub messages: Vec<SamplingMessage>,
    /// What the server would like in a model.
    #[serde(rename = "modelPreferences", default)]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the server asks for; the application may change it.
    #[serde(rename = "systemPrompt", default)]
    pub system_prompt: Option<String>,
    /// Context from MCP servers to include (`none`, `thisServer`,
    /// `allServers`; the latter two are deprecated).
    #[serde(rename = "includeContext", default)]
    pub include_context: Option<String>,
    /// The sampling temperature.
    #[serde(default)]
    pub temperature: Option<f64>,
    /// The most tokens to generate.
    #[serde(rename = "maxTokens")]
    pub max_tokens: u64,
    /// Sequences that end generation.
    #[serde(rename = "stopSequences", default)]
    pub stop_sequences: Vec<String>,
    /// Provider-specific metadata, passed through as sent.
    #[serde(default)]
    pub metadata: Option<Value>,
    /// Tools the model may use while answering (the capability's `tools`).
    #[serde(default)]
    pub tools: Vec<ToolInfo>,
    /// How it may use them.
    #[serde(rename = "toolChoice", default, deserialize_with = "tool_choice")]
    pub tool_choice: Option<ToolChoice>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// It finished its turn.
    EndTurn,
    /// It produced one of the stop sequences.
    StopSequence,
    /// It reached `max_tokens`.
    MaxTokens,
    /// It asked for tools.
    ToolUse,
    /// Another reason, as the application names it.
    Other(String),
}

impl Serialize for StopReason {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(match self {
            StopReason::EndTurn => "endTurn",
            StopReason::StopSequence => "stopSequence",
            StopReason::MaxTokens => "maxTokens",
            StopReason::ToolUse => "toolUse",
            StopReason::Other(reason) => reason,
        })
    }
}

/// The application's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CreateMessageResult {
    /// Always the assistant, in practice.
    pub role: Role,
    /// The content blocks (text, images, tool use).
    pub content: Vec<SamplingContent>,
    /// The model that answered.
    pub model: String,
    /// Why it stopped, when known.
    pub stop_reason: Option<StopReason>,
}

impl CreateMessageResult {
    /// An assistant answer of plain text from `model`, ended normally.
    pub fn text(model: impl Into<String>, text: impl Into<String>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content: vec![SamplingContent::Text { text: text.into() }],
            model: model.into(),
            stop_reason: Some(StopReason::EndTurn),
        }
    }

    /// An assistant answer with these blocks from `model`.
    pub fn new(model: impl Into<String>, content: Vec<SamplingContent>) -> Self {
        CreateMessageResult {
            role: Role::Assistant,
            content,
            model: model.into(),
            stop_reason: None,
        }
    }
}

impl Serialize for CreateMessageResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("role", &self.role)?;
        // One block goes as an object, which every revision reads; several
        // (tool use) as the 2025-11-25 array.
        match self.content.as_slice() {
            [one] => map.serialize_entry("content", one)?,
            many => map.serialize_entry("content", many)?,
        }
        map.serialize_entry("model", &self.model)?;
        if let Some(reason) = &self.stop_reason {
            map.serialize_entry("stopReason", reason)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_2025_11_25_request_with_tools_and_single_or_many_blocks() {
        let request: CreateMessageRequest = serde_json::from_value(serde_json::json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "weather?"}},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}}]},
                {"role": "user", "content": [{"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "rain"}]}]}
            ],
            "maxTokens": 100,
            "systemPrompt": "be brief",
            "stopSequences": ["END"],
            "modelPreferences": {"hints": [{"name": "claude"}], "speedPriority": 0.5},
            "tools": [{"name": "weather", "inputSchema": {"type": "object"}}],
            "toolChoice": {"mode": "required"}
        }))
        .expect("a valid request");
        assert_eq!(request.messages.len(), 3);
        assert_eq!(request.messages[0].content.len(), 1);
        assert!(matches!(
            request.messages[1].content[0],
            SamplingContent::ToolUse { .. }
        ));
        assert_eq!(request.tool_choice, Some(ToolChoice::Required));
        assert_eq!(request.tools[0].name, "weather");
        assert_eq!(request.stop_sequences, ["END"]);
    }

    #[test]
    fn writes_one_block_as_an_object_and_several_as_an_array() {
        let one = serde_json::to_value(CreateMessageResult::text("m", "hi")).expect("serializes");
        assert_eq!(
            one,
            serde_json::json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m", "stopReason": "endTurn"})
        );
        let mut two = CreateMessageResult::new(
            "m",
            vec![
                SamplingContent::Text {
                    text: "calling".into(),
                },
                SamplingContent::ToolUse {
                    id: "c".into(),
                    name: "t".into(),
                    input: serde_json::json!({}),
                },
            ],
        );
        two.stop_reason = Some(StopReason::ToolUse);
        let two = serde_json::to_value(two).expect("serializes");
        assert_eq!(two["content"][1]["type"], "tool_use");
        assert_eq!(two["stopReason"], "toolUse");
    }
}
