//! The Messages API wire format: the request body we send, the JSON answer, the streamed
//! events and the error body, as plain serde structs. Only the fields we use are
//! declared; unknown fields (and unknown content block or event types) are ignored, so
//! additions to the API still parse.
//!
//! Content blocks are read into one flat struct rather than an enum tagged by `type`:
//! serde buffers a tagged enum's fields before choosing the variant, which would lose
//! the bytes of a tool call's `input` that [`RawValue`] keeps.

use std::borrow::Cow;

use golem_model::{FinishReason, Image, Request, Role, ToolChoice, ToolSpec, Usage};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The body of `POST {base_url}/v1/messages`.
#[derive(Serialize)]
pub(crate) struct MessagesRequest<'a> {
    pub(crate) model: &'a str,
    pub(crate) max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system: Option<String>,
    pub(crate) messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) top_p: Option<f32>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub(crate) stop_sequences: &'a [String],
    /// Sent only with tools: the API refuses it without.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_choice: Option<serde_json::Value>,
    pub(crate) stream: bool,
}

/// `tool_choice` as the Messages API writes it (`{"type": "auto" | "any" | "tool" |
/// "none"}`, with the tool's `name`), `disable_parallel_tool_use` set when
/// `parallel` is `Some(false)`; `None` when neither is set.
pub(crate) fn tool_choice(
    choice: Option<&ToolChoice>,
    parallel: Option<bool>,
) -> Option<serde_json::Value> {
    let mut written = match choice {
        None if parallel.is_none() => return None,
        None | Some(ToolChoice::Auto) => serde_json::json!({"type": "auto"}),
        // One call or none: there is nothing to run in parallel.
        Some(ToolChoice::None) => return Some(serde_json::json!({"type": "none"})),
        Some(ToolChoice::Required) => serde_json::json!({"type": "any"}),
        Some(ToolChoice::Tool(name)) => serde_json::json!({"type": "tool", "name": name}),
    };
    if let Some(parallel) = parallel {
        written["disable_parallel_tool_use"] = (!parallel).into();
    }
    Some(written)
}

/// One turn: `user` or `assistant`, its content always as blocks.
#[derive(Serialize)]
pub(crate) struct WireMessage<'a> {
    role: &'static str,
    content: Vec<BlockOut<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockOut<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        /// The model's arguments, verbatim.
        input: &'a RawValue,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ResultContent<'a>,
    },
    Image {
        source: ImageSource<'a>,
    },
}

/// A tool result's content: its text, or (when the tool gave images) its
/// text block and image blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum ResultContent<'a> {
    Text(&'a str),
    Blocks(Vec<BlockOut<'a>>),
}

/// Where an image block's bytes come from.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ImageSource<'a> {
    Base64 { media_type: &'a str, data: &'a str },
    Url { url: &'a str },
}

fn image_block(image: &Image) -> BlockOut<'_> {
    BlockOut::Image {
        source: match image {
            Image::Base64 { media_type, data } => ImageSource::Base64 { media_type, data },
            Image::Url { url } => ImageSource::Url { url },
        },
    }
}

/// The first system or assistant message with images, as a complaint: this
/// adapter sends images in user turns and tool results only.
pub(crate) fn misplaced_images(request: &Request) -> Option<String> {
    let index = request.messages.iter().position(|message| {
        matches!(message.role, Role::System | Role::Assistant) && !message.images.is_empty()
    })?;
    Some(format!(
        "anthropic: messages[{index}] has images but is not a user or tool message; images \
         are sent in user messages and tool results only"
    ))
}

#[derive(Serialize)]
pub(crate) struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    /// The schema, verbatim when the API takes it ([`ToolSpec::object_schema`]).
    input_schema: Cow<'a, RawValue>,
}

impl<'a> WireTool<'a> {
    /// A tool of this name, description and input schema (sent verbatim).
    pub(crate) fn new(name: &'a str, description: &'a str, input_schema: &'a RawValue) -> Self {
        WireTool {
            name,
            description,
            input_schema: Cow::Borrowed(input_schema),
        }
    }
}

/// The `system` parameter: the request's instructions, then the text of any system
/// messages (the API has no system role inside `messages`), separated by blank lines.
pub(crate) fn system(request: &Request) -> Option<String> {
    let parts: Vec<&str> = request
        .instructions
        .as_deref()
        .into_iter()
        .chain(
            request
                .messages
                .iter()
                .filter(|message| message.role == Role::System)
                .map(|message| message.content.as_str()),
        )
        .filter(|text| !text.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// Maps the conversation onto turns. Tool results are `tool_result` blocks of a user
/// turn; consecutive messages that land on the same role are merged into one turn (the
/// results of parallel calls must answer in a single user turn); messages with nothing
/// to send are left out, since the API refuses empty content and empty text blocks.
pub(crate) fn messages(request: &Request) -> Vec<WireMessage<'_>> {
    let mut turns: Vec<WireMessage<'_>> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message.role {
            Role::System => continue,
            Role::User => {
                // Images first, as Anthropic's documentation advises.
                let images = message.images.iter().map(image_block);
                let blocks: Vec<_> = images.chain(text_block(&message.content)).collect();
                ("user", blocks)
            }
            Role::Assistant => {
                let calls = message.tool_calls.iter().map(|call| BlockOut::ToolUse {
                    id: &call.id,
                    name: &call.name,
                    input: &call.arguments,
                });
                let blocks: Vec<_> = text_block(&message.content)
                    .into_iter()
                    .chain(calls)
                    .collect();
                ("assistant", blocks)
            }
            Role::Tool => {
                let content = match message.images.is_empty() {
                    true => ResultContent::Text(&message.content),
                    false => ResultContent::Blocks(
                        text_block(&message.content)
                            .into_iter()
                            .chain(message.images.iter().map(image_block))
                            .collect(),
                    ),
                };
                (
                    "user",
                    vec![BlockOut::ToolResult {
                        tool_use_id: message.tool_call_id.as_deref().unwrap_or_default(),
                        content,
                    }],
                )
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => turns.push(WireMessage {
                role,
                content: blocks,
            }),
        }
    }
    turns
}

fn text_block(text: &str) -> Option<BlockOut<'_>> {
    (!text.is_empty()).then_some(BlockOut::Text { text })
}

pub(crate) fn tools(specs: &[ToolSpec]) -> Vec<WireTool<'_>> {
    specs
        .iter()
        .map(|spec| WireTool {
            name: &spec.name,
            description: &spec.description,
            input_schema: spec.object_schema(),
        })
        .collect()
}

/// A non-streamed answer (`"type": "message"`).
#[derive(Deserialize)]
pub(crate) struct MessagesResponse {
    pub(crate) id: Option<String>,
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) content: Vec<BlockIn>,
    pub(crate) stop_reason: Option<String>,
    #[serde(default)]
    pub(crate) usage: WireUsage,
}

/// A content block of an answer, or the `content_block` of a `content_block_start`.
#[derive(Deserialize)]
pub(crate) struct BlockIn {
    pub(crate) r#type: String,
    pub(crate) text: Option<String>,
    pub(crate) id: Option<String>,
    pub(crate) name: Option<String>,
    /// A `tool_use` block's input, the bytes as received.
    pub(crate) input: Option<Box<RawValue>>,
}

/// `usage`. In a stream, `message_start` carries the input side and `message_delta`
/// cumulative totals (output always, the others when the API sends them).
#[derive(Deserialize, Default)]
pub(crate) struct WireUsage {
    pub(crate) input_tokens: Option<u64>,
    pub(crate) output_tokens: Option<u64>,
    pub(crate) cache_creation_input_tokens: Option<u64>,
    pub(crate) cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Sets the counts this usage reports, leaving the others as they are.
    pub(crate) fn apply(&self, usage: &mut Usage) {
        let fields = [
            (self.input_tokens, &mut usage.input_tokens),
            (self.output_tokens, &mut usage.output_tokens),
            (
                self.cache_creation_input_tokens,
                &mut usage.cache_write_tokens,
            ),
            (self.cache_read_input_tokens, &mut usage.cache_read_tokens),
        ];
        for (value, field) in fields {
            if let Some(value) = value {
                *field = value;
            }
        }
        usage.requests = 1;
    }
}

/// The data of one streamed event. Which fields are present depends on `type`.
#[derive(Deserialize)]
pub(crate) struct StreamData {
    pub(crate) r#type: String,
    /// `message_start`.
    pub(crate) message: Option<StartMessage>,
    /// `content_block_start`, `content_block_delta`, `content_block_stop`.
    pub(crate) index: Option<usize>,
    /// `content_block_start`.
    pub(crate) content_block: Option<BlockIn>,
    /// `content_block_delta` and `message_delta`.
    pub(crate) delta: Option<DeltaIn>,
    /// `message_delta`.
    pub(crate) usage: Option<WireUsage>,
    /// `error`.
    pub(crate) error: Option<ErrorDetail>,
}

#[derive(Deserialize)]
pub(crate) struct StartMessage {
    pub(crate) id: Option<String>,
    pub(crate) model: Option<String>,
    #[serde(default)]
    pub(crate) usage: WireUsage,
}

/// A block delta (`text_delta`, `input_json_delta`, ...) or a message delta.
#[derive(Deserialize)]
pub(crate) struct DeltaIn {
    pub(crate) r#type: Option<String>,
    pub(crate) text: Option<String>,
    pub(crate) partial_json: Option<String>,
    pub(crate) stop_reason: Option<String>,
}

/// `{"type":"error","error":{"type":...,"message":...}}`, the body of an error answer
/// and the data of an `error` event.
#[derive(Deserialize)]
pub(crate) struct ErrorBody {
    pub(crate) error: ErrorDetail,
}

#[derive(Deserialize)]
pub(crate) struct ErrorDetail {
    pub(crate) r#type: Option<String>,
    #[serde(default)]
    pub(crate) message: String,
}

/// `stop_reason` onto [`FinishReason`].
pub(crate) fn finish_reason(reason: Option<&str>) -> FinishReason {
    match reason {
        None | Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("max_tokens" | "model_context_window_exceeded") => FinishReason::Length,
        Some("tool_use") => FinishReason::ToolCalls,
        Some("refusal") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_model::{Message, ToolCall};

    #[test]
    fn turns_merge_and_system_messages_join_the_system_prompt() {
        let call = |id: &str| ToolCall::new(id, "read", r#"{"p" : 1}"#).expect("json");
        let request = Request {
            instructions: Some("Be brief.".into()),
            messages: vec![
                Message::system("Use tools."),
                Message::user("Read both"),
                Message::assistant_with_tool_calls("", vec![call("t1"), call("t2")]),
                Message::tool_result("t1", "read", "one"),
                Message::tool_result("t2", "read", "two"),
                Message::user("Thanks"),
                Message::assistant(""),
            ],
            ..Request::default()
        };
        assert_eq!(system(&request).as_deref(), Some("Be brief.\n\nUse tools."));
        let json = serde_json::to_string(&messages(&request)).expect("encode");
        assert_eq!(
            json,
            concat!(
                r#"[{"role":"user","content":[{"type":"text","text":"Read both"}]},"#,
                r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{"p" : 1}},"#,
                r#"{"type":"tool_use","id":"t2","name":"read","input":{"p" : 1}}]},"#,
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"one"},"#,
                r#"{"type":"tool_result","tool_use_id":"t2","content":"two"},{"type":"text","text":"Thanks"}]}]"#,
            )
        );
        assert_eq!(system(&Request::default()), None);
    }

    #[test]
    fn user_images_are_image_blocks_before_the_text() {
        let request = Request {
            messages: vec![
                Message::user_with_images(
                    "What is this?",
                    vec![
                        Image::base64("image/png", "iVBORw0KGgo="),
                        Image::url("https://example.com/cat.jpg"),
                    ],
                ),
                Message::assistant("A cat."),
                Message::user_with_images("", vec![Image::url("https://example.com/dog.jpg")]),
            ],
            ..Request::default()
        };
        let json = serde_json::to_string(&messages(&request)).expect("encode");
        assert_eq!(
            json,
            concat!(
                r#"[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},"#,
                r#"{"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},"#,
                r#"{"type":"text","text":"What is this?"}]},"#,
                r#"{"role":"assistant","content":[{"type":"text","text":"A cat."}]},"#,
                r#"{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://example.com/dog.jpg"}}]}]"#,
            )
        );
        assert_eq!(misplaced_images(&request), None);
        let mut said = Message::assistant("png");
        said.images.push(Image::url("https://example.com/a.png"));
        let request = Request {
            messages: vec![Message::user("hi"), said],
            ..Request::default()
        };
        assert!(
            misplaced_images(&request)
                .expect("refused")
                .contains("messages[1]")
        );
    }

    #[test]
    fn a_tool_results_images_are_image_blocks_in_the_tool_result() {
        let shot = Image::base64("image/png", "iVBORw0KGgo=");
        let request = Request {
            messages: vec![
                Message::tool_result_with_images("t1", "shot", "a screenshot", vec![shot.clone()]),
                Message::tool_result_with_images("t2", "shot", "", vec![shot]),
                Message::tool_result("t3", "time", "noon"),
            ],
            ..Request::default()
        };
        assert_eq!(misplaced_images(&request), None);
        let json = serde_json::to_string(&messages(&request)).expect("encode");
        let image = r#"{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}"#;
        assert_eq!(
            json,
            format!(
                r#"[{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":[{{"type":"text","text":"a screenshot"}},{image}]}},{{"type":"tool_result","tool_use_id":"t2","content":[{image}]}},{{"type":"tool_result","tool_use_id":"t3","content":"noon"}}]}}]"#
            )
        );
    }

    #[test]
    fn stop_reasons_map() {
        let cases = [
            (Some("end_turn"), FinishReason::Stop),
            (Some("stop_sequence"), FinishReason::Stop),
            (Some("max_tokens"), FinishReason::Length),
            (Some("tool_use"), FinishReason::ToolCalls),
            (Some("refusal"), FinishReason::ContentFilter),
            (Some("pause_turn"), FinishReason::Other("pause_turn".into())),
            (None, FinishReason::Stop),
        ];
        for (reason, want) in cases {
            assert_eq!(finish_reason(reason), want, "{reason:?}");
        }
    }

    #[test]
    fn tool_input_keeps_its_bytes() {
        let block: BlockIn = serde_json::from_str(
            r#"{"type":"tool_use","id":"t","name":"n","input":{"b": 1,  "a":[2.50]}}"#,
        )
        .expect("block");
        assert_eq!(
            block.input.expect("input").get(),
            r#"{"b": 1,  "a":[2.50]}"#
        );
    }
}
