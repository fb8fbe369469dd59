//! The Chat Completions wire format: the request body we send, the JSON answer, the
//! streamed chunks and the error body, as plain serde structs. Only the fields we use
//! are declared; unknown fields are ignored, so servers that add their own still parse.

use std::borrow::Cow;

use golem_model::{
    FinishReason, Image, Message, OutputSchema, Request, Role, ToolChoice, ToolSpec, Usage,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// `tool_choice` as Chat Completions writes it: `"auto"`, `"none"`, `"required"` or
/// `{"type": "function", "function": {"name": ...}}`.
pub(crate) fn tool_choice(choice: &ToolChoice) -> serde_json::Value {
    match choice {
        ToolChoice::Auto => "auto".into(),
        ToolChoice::None => "none".into(),
        ToolChoice::Required => "required".into(),
        ToolChoice::Tool(name) => {
            serde_json::json!({"type": "function", "function": {"name": name}})
        }
    }
}

/// The body of `POST {base_url}/chat/completions`.
#[derive(Serialize)]
pub(crate) struct ChatRequest<'a> {
    pub(crate) model: &'a str,
    pub(crate) messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<WireTool<'a>>,
    /// The configuration's limit, in the field every compatible server reads; never
    /// sent with `max_completion_tokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_tokens: Option<u32>,
    /// The request's own limit ([`ModelSettings::max_output_tokens`]), in the field that
    /// replaced `max_tokens` (which OpenAI's reasoning models refuse).
    ///
    /// [`ModelSettings::max_output_tokens`]: golem_model::ModelSettings::max_output_tokens
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) top_p: Option<f32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub(crate) stop: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) seed: Option<i64>,
    /// Sent only with tools: the API refuses it without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_choice: Option<serde_json::Value>,
    /// Sent only with tools: the API refuses it without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) parallel_tool_calls: Option<bool>,
    /// The answer's schema, when the request asks for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response_format: Option<ResponseFormat<'a>>,
    pub(crate) stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) stream_options: Option<StreamOptions>,
}

/// `response_format`: `{"type": "json_schema", "json_schema": {"name", "schema",
/// "strict"}}`, the schema sent verbatim.
#[derive(Serialize)]
pub(crate) struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    json_schema: JsonSchemaFormat<'a>,
}

#[derive(Serialize)]
struct JsonSchemaFormat<'a> {
    name: &'a str,
    schema: &'a RawValue,
    strict: bool,
}

impl<'a> ResponseFormat<'a> {
    /// The format that asks for answers fitting `output`.
    pub(crate) fn of(output: &'a OutputSchema) -> Self {
        ResponseFormat {
            kind: "json_schema",
            json_schema: JsonSchemaFormat {
                name: &output.name,
                schema: &output.schema,
                strict: output.strict,
            },
        }
    }
}

#[derive(Serialize)]
pub(crate) struct StreamOptions {
    pub(crate) include_usage: bool,
}

#[derive(Serialize)]
pub(crate) struct WireMessage<'a> {
    role: &'static str,
    /// `null` for an assistant message that only calls tools.
    content: Option<WireContent<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<WireCallOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<&'a str>,
}

/// A message's content: a string, or content parts when a user message has images.
#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<Part<'a>>),
}

/// A content part of a user message.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Part<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl<'a> },
}

#[derive(Serialize)]
struct ImageUrl<'a> {
    /// An `https` URL, or the bytes as a `data:` URL.
    url: std::borrow::Cow<'a, str>,
}

#[derive(Serialize)]
struct WireCallOut<'a> {
    id: &'a str,
    r#type: &'static str,
    function: WireFunctionOut<'a>,
}

#[derive(Serialize)]
struct WireFunctionOut<'a> {
    name: &'a str,
    /// The model's arguments as a JSON string holding the verbatim bytes.
    arguments: &'a str,
}

#[derive(Serialize)]
pub(crate) struct WireTool<'a> {
    r#type: &'static str,
    function: WireToolFunction<'a>,
}

#[derive(Serialize)]
struct WireToolFunction<'a> {
    name: &'a str,
    description: &'a str,
    /// The schema, verbatim when the API takes it ([`ToolSpec::object_schema`]).
    parameters: Cow<'a, RawValue>,
}

/// Maps a neutral request onto the wire: instructions first as a system message.
pub(crate) fn messages(request: &Request) -> Vec<WireMessage<'_>> {
    let instructions = request.instructions.as_deref().map(|text| WireMessage {
        role: "system",
        content: Some(WireContent::Text(text)),
        tool_calls: Vec::new(),
        tool_call_id: None,
    });
    let mut wire: Vec<WireMessage<'_>> = instructions.into_iter().collect();
    let mut pending: Vec<&Message> = Vec::new();
    for each in &request.messages {
        if each.role != Role::Tool {
            wire.extend(tool_images(&pending));
            pending.clear();
        }
        if each.role == Role::Tool && !each.images.is_empty() {
            pending.push(each);
        }
        wire.push(message(each));
    }
    wire.extend(tool_images(&pending));
    wire
}

/// The images of a turn's tool results (`results`, in call order), as the
/// user message that follows them: a tool message carries text only. Each
/// call's images come after a line naming the call.
fn tool_images<'a>(results: &[&'a Message]) -> Option<WireMessage<'a>> {
    if results.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    for result in results {
        parts.push(Part::Text {
            text: Cow::Owned(format!(
                "The images of tool call {} ({}):",
                result.tool_call_id.as_deref().unwrap_or("?"),
                result.tool_name.as_deref().unwrap_or("a tool")
            )),
        });
        parts.extend(result.images.iter().map(image_part));
    }
    Some(WireMessage {
        role: "user",
        content: Some(WireContent::Parts(parts)),
        tool_calls: Vec::new(),
        tool_call_id: None,
    })
}

fn message(message: &Message) -> WireMessage<'_> {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let only_calls = message.role == Role::Assistant
        && message.content.is_empty()
        && !message.tool_calls.is_empty();
    WireMessage {
        role,
        content: (!only_calls).then(|| content(message)),
        tool_calls: message
            .tool_calls
            .iter()
            .map(|call| WireCallOut {
                id: &call.id,
                r#type: "function",
                function: WireFunctionOut {
                    name: &call.name,
                    arguments: call.arguments.get(),
                },
            })
            .collect(),
        tool_call_id: message.tool_call_id.as_deref(),
    }
}

/// The text, or (a user message with images) the images and then the text
/// (when there is some) as content parts. A tool message's images go in the
/// user message after the turn's results ([`tool_images`]).
fn content(message: &Message) -> WireContent<'_> {
    if message.images.is_empty() || message.role != Role::User {
        return WireContent::Text(&message.content);
    }
    let images = message.images.iter().map(image_part);
    let text = (!message.content.is_empty()).then_some(Part::Text {
        text: Cow::Borrowed(&message.content),
    });
    WireContent::Parts(images.chain(text).collect())
}

/// An image as an `image_url` part: its URL, or its bytes as a `data:` URL.
fn image_part(image: &Image) -> Part<'_> {
    Part::ImageUrl {
        image_url: ImageUrl {
            url: match image {
                Image::Url { url } => Cow::Borrowed(url.as_str()),
                Image::Base64 { media_type, data } => {
                    Cow::Owned(format!("data:{media_type};base64,{data}"))
                }
            },
        },
    }
}

/// The first system or assistant message with images, as a complaint: the
/// API takes images in user messages (and this adapter moves a tool
/// result's there).
pub(crate) fn misplaced_images(request: &Request) -> Option<String> {
    let index = request.messages.iter().position(|message| {
        matches!(message.role, Role::System | Role::Assistant) && !message.images.is_empty()
    })?;
    Some(format!(
        "openai: messages[{index}] has images but is not a user or tool message; the Chat \
         Completions API takes images in user messages only"
    ))
}

pub(crate) fn tools(specs: &[ToolSpec]) -> Vec<WireTool<'_>> {
    specs
        .iter()
        .map(|spec| WireTool {
            r#type: "function",
            function: WireToolFunction {
                name: &spec.name,
                description: &spec.description,
                parameters: spec.object_schema(),
            },
        })
        .collect()
}

/// A non-streamed answer.
#[derive(Deserialize)]
pub(crate) struct ChatResponse {
    pub(crate) id: Option<String>,
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) choices: Vec<Choice>,
    pub(crate) usage: Option<WireUsage>,
}

#[derive(Deserialize)]
pub(crate) struct Choice {
    pub(crate) message: ChoiceMessage,
    pub(crate) finish_reason: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct ChoiceMessage {
    pub(crate) content: Option<String>,
    pub(crate) refusal: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Vec<WireCallIn>,
}

#[derive(Deserialize)]
pub(crate) struct WireCallIn {
    pub(crate) id: String,
    pub(crate) function: WireFunctionIn,
}

#[derive(Deserialize)]
pub(crate) struct WireFunctionIn {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) arguments: String,
}

#[derive(Deserialize, Default)]
pub(crate) struct WireUsage {
    #[serde(default)]
    pub(crate) prompt_tokens: u64,
    #[serde(default)]
    pub(crate) completion_tokens: u64,
    pub(crate) prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize, Default)]
pub(crate) struct PromptDetails {
    #[serde(default)]
    pub(crate) cached_tokens: u64,
}

impl WireUsage {
    pub(crate) fn to_usage(&self) -> Usage {
        Usage {
            input_tokens: self.prompt_tokens,
            output_tokens: self.completion_tokens,
            requests: 1,
            cache_read_tokens: self
                .prompt_tokens_details
                .as_ref()
                .map_or(0, |details| details.cached_tokens),
            cache_write_tokens: 0,
        }
    }
}

/// One streamed chunk (`chat.completion.chunk`), or an error sent inside the stream.
#[derive(Deserialize)]
pub(crate) struct Chunk {
    pub(crate) id: Option<String>,
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) choices: Vec<ChunkChoice>,
    pub(crate) usage: Option<WireUsage>,
    pub(crate) error: Option<ErrorDetail>,
}

#[derive(Deserialize)]
pub(crate) struct ChunkChoice {
    #[serde(default)]
    pub(crate) index: usize,
    #[serde(default)]
    pub(crate) delta: Delta,
    pub(crate) finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
pub(crate) struct Delta {
    pub(crate) content: Option<String>,
    pub(crate) refusal: Option<String>,
    #[serde(default)]
    pub(crate) tool_calls: Vec<CallDelta>,
}

#[derive(Deserialize)]
pub(crate) struct CallDelta {
    #[serde(default)]
    pub(crate) index: usize,
    pub(crate) id: Option<String>,
    pub(crate) function: Option<FunctionDelta>,
}

#[derive(Deserialize)]
pub(crate) struct FunctionDelta {
    pub(crate) name: Option<String>,
    pub(crate) arguments: Option<String>,
}

/// `{"error": {...}}`, the body of an error answer.
#[derive(Deserialize)]
pub(crate) struct ErrorBody {
    pub(crate) error: ErrorDetail,
}

#[derive(Deserialize)]
pub(crate) struct ErrorDetail {
    #[serde(default)]
    pub(crate) message: String,
    pub(crate) r#type: Option<String>,
    /// A string in OpenAI's answers; some compatible servers send a number.
    pub(crate) code: Option<serde_json::Value>,
}

impl ErrorDetail {
    /// The most specific of `code` and `type`.
    pub(crate) fn kind(&self) -> Option<String> {
        match &self.code {
            Some(serde_json::Value::String(code)) => Some(code.clone()),
            _ => self.r#type.clone(),
        }
    }
}

pub(crate) fn finish_reason(reason: Option<&str>) -> FinishReason {
    match reason {
        None | Some("stop") => FinishReason::Stop,
        Some("length") => FinishReason::Length,
        Some("tool_calls" | "function_call") => FinishReason::ToolCalls,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_images_are_image_url_parts_before_the_text() {
        let request = Request {
            messages: vec![
                Message::user_with_images(
                    "What is this?",
                    vec![
                        Image::base64("image/png", "iVBORw0KGgo="),
                        Image::url("https://example.com/cat.jpg"),
                    ],
                ),
                Message::user_with_images("", vec![Image::url("https://example.com/dog.jpg")]),
                Message::user("plain"),
            ],
            ..Request::default()
        };
        let json = serde_json::to_string(&messages(&request)).expect("encode");
        assert_eq!(
            json,
            concat!(
                r#"[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},"#,
                r#"{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}},"#,
                r#"{"type":"text","text":"What is this?"}]},"#,
                r#"{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://example.com/dog.jpg"}}]},"#,
                r#"{"role":"user","content":"plain"}]"#,
            )
        );
        assert_eq!(misplaced_images(&request), None);
    }

    #[test]
    fn images_on_assistant_messages_are_refused() {
        let mut assistant = Message::assistant("here");
        assistant
            .images
            .push(Image::url("https://example.com/a.png"));
        let request = Request {
            messages: vec![Message::user("hi"), assistant],
            ..Request::default()
        };
        let complaint = misplaced_images(&request).expect("refused");
        assert!(complaint.contains("messages[1] has images"), "{complaint}");
    }
}
