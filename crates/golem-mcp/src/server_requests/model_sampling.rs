//! Sampling answered by a model: any [`golem_model::Model`] as a client's
//! sampling handler, so a server's `sampling/createMessage` is answered by
//! the application's (the agent's) own model.

use std::collections::HashMap;
use std::sync::Arc;

use golem_model::{Image, Message, Model, ModelSettings, Request, ToolCall, ToolSpec};
use serde_json::value::RawValue;

use crate::server_requests::handlers::SamplingHandler;
use crate::server_requests::sampling::{
    CreateMessageRequest, CreateMessageResult, SamplingContent, StopReason, ToolChoice,
};
use crate::session::context::RequestContext;
use crate::session::serving::{HandlerError, HandlerFuture};
use crate::wire::call_result::CallResult;
use crate::wire::content::Content;
use crate::wire::content::Role;

/// The schema offered for a tool whose server sent none.
const ANY_OBJECT: &str = r#"{"type":"object"}"#;

/// A [`SamplingHandler`] that asks `model`.
///
/// The server's system prompt becomes the request's instructions; its
/// messages become the conversation (text as is; a user's images as the
/// message's images; audio, and images in an assistant message, as
/// placeholder lines, since the model port carries neither; tool use and
/// tool results as tool calls and tool messages); the tools it offers are offered
/// to the model with their schemas verbatim (none when its tool choice is
/// `none`). The answer is the model's text and tool calls, named after
/// [`Model::name`]. The server's `maxTokens` is the request's output limit
/// ([`ModelSettings::max_output_tokens`]; a `maxTokens` of 0 is refused as
/// invalid parameters), and its tool choice `required` the request's; the
/// temperature, stop sequences and model preferences are not passed on: the
/// model's own configuration decides.
///
/// ```no_run
/// # fn run(model: std::sync::Arc<dyn golem_model::Model>) {
/// let config = golem_mcp::ClientConfig::default()
///     .with_sampling(golem_mcp::sampling_with_model(model));
/// # }
/// ```
pub fn sampling_with_model(model: Arc<dyn Model>) -> ModelSampling {
    ModelSampling { model }
}

/// Sampling answered by a model; made by [`sampling_with_model`].
#[derive(Clone)]
pub struct ModelSampling {
    model: Arc<dyn Model>,
}

impl std::fmt::Debug for ModelSampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelSampling")
            .field("model", &self.model.name())
            .finish()
    }
}

impl SamplingHandler for ModelSampling {
    fn create_message(
        &self,
        request: CreateMessageRequest,
        _context: RequestContext,
    ) -> HandlerFuture<CreateMessageResult> {
        let model = self.model.clone();
        Box::pin(async move {
            let request = model_request(&request)?;
            let response = model
                .request(&request)
                .await
                .map_err(|error| HandlerError::internal(format!("the model failed: {error}")))?;
            let mut content = Vec::new();
            if !response.text.is_empty() {
                content.push(SamplingContent::Text {
                    text: response.text,
                });
            }
            let uses_tools = !response.tool_calls.is_empty();
            if content.is_empty() && !uses_tools {
                // One (empty) text block rather than an empty list, which
                // servers of older revisions cannot read.
                content.push(SamplingContent::Text {
                    text: String::new(),
                });
            }
            for call in response.tool_calls {
                let input = serde_json::from_str(call.arguments.get())
                    .unwrap_or_else(|_| serde_json::json!({}));
                content.push(SamplingContent::ToolUse {
                    id: call.id,
                    name: call.name,
                    input,
                });
            }
            let mut result = CreateMessageResult::new(model.name(), content);
            result.stop_reason = Some(match uses_tools {
                true => StopReason::ToolUse,
                false => StopReason::EndTurn,
            });
            Ok(result)
        })
    }

    fn supports_tools(&self) -> bool {
        true
    }
}

/// The model request for a sampling request.
fn model_request(request: &CreateMessageRequest) -> Result<Request, HandlerError> {
    if request.max_tokens == 0 {
        return Err(HandlerError::invalid_params(
            "maxTokens is 0: a model must be allowed at least 1 token",
        ));
    }
    let mut messages = Vec::with_capacity(request.messages.len());
    // Tool results name their call by id; the model port wants the tool's
    // name too.
    let mut tool_names: HashMap<&str, &str> = HashMap::new();
    for message in &request.messages {
        let mut text = Vec::new();
        let mut calls = Vec::new();
        let mut images = Vec::new();
        for block in &message.content {
            match block {
                SamplingContent::Text { text: part } => text.push(part.clone()),
                SamplingContent::Image { data, mime_type } if message.role == Role::User => {
                    images.push(Image::Base64 {
                        media_type: mime_type.clone(),
                        data: data.clone(),
                    });
                }
                SamplingContent::Image { data, mime_type } => {
                    text.push(placeholder(Content::Image {
                        data: data.clone(),
                        mime_type: mime_type.clone(),
                    }));
                }
                SamplingContent::Audio { data, mime_type } => {
                    text.push(placeholder(Content::Audio {
                        data: data.clone(),
                        mime_type: mime_type.clone(),
                    }));
                }
                SamplingContent::ToolUse { id, name, input } => {
                    tool_names.insert(id, name);
                    let call = ToolCall::new(id.clone(), name.clone(), &input.to_string())
                        .map_err(|error| {
                            HandlerError::invalid_params(format!("tool use {id}: {error}"))
                        })?;
                    calls.push(call);
                }
                SamplingContent::ToolResult {
                    tool_use_id,
                    content,
                    ..
                } => {
                    let name = tool_names.get(tool_use_id.as_str()).copied().unwrap_or("");
                    let result = CallResult::new(content.clone()).text();
                    messages.push(Message::tool_result(tool_use_id.clone(), name, result));
                }
            }
        }
        let text = text.join("\n");
        match message.role {
            Role::Assistant => {
                if !text.is_empty() || !calls.is_empty() {
                    messages.push(Message::assistant_with_tool_calls(text, calls));
                }
            }
            Role::User if !text.is_empty() || !images.is_empty() => {
                messages.push(Message::user_with_images(text, images));
            }
            Role::User => {}
        }
    }
    let tools = match request.tool_choice {
        Some(ToolChoice::None) => Vec::new(),
        _ => request
            .tools
            .iter()
            .map(tool_spec)
            .collect::<Result<_, _>>()?,
    };
    let settings = ModelSettings {
        // More than a provider takes is the provider's to refuse.
        max_output_tokens: Some(u32::try_from(request.max_tokens).unwrap_or(u32::MAX)),
        // `none` offers no tools at all (above); `auto` is the default.
        tool_choice: match request.tool_choice {
            Some(ToolChoice::Required) => Some(golem_model::ToolChoice::Required),
            _ => None,
        },
        ..ModelSettings::default()
    };
    Ok(Request {
        instructions: request.system_prompt.clone(),
        messages,
        tools,
        settings,
        output: None,
    })
}

fn tool_spec(tool: &crate::features::tools::ToolInfo) -> Result<ToolSpec, HandlerError> {
    let input_schema = match &tool.input_schema {
        Some(schema) => schema.clone(),
        None => RawValue::from_string(ANY_OBJECT.to_owned())
            .map_err(|error| HandlerError::internal(error.to_string()))?,
    };
    Ok(ToolSpec {
        name: tool.name.clone(),
        description: tool.description.clone().unwrap_or_default(),
        input_schema,
    })
}

/// A non-text block as the one line a text model sees.
fn placeholder(content: Content) -> String {
    CallResult::new(vec![content]).text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_conversation_with_tool_use_and_images_becomes_a_model_request() {
        // Raw text: `json!` would reorder the schema's keys.
        let request: CreateMessageRequest = serde_json::from_str(
            r#"{
            "systemPrompt": "be brief",
            "maxTokens": 50,
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "weather?"}, {"type": "image", "data": "aGk=", "mimeType": "image/png"}]},
                {"role": "assistant", "content": {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}}},
                {"role": "user", "content": {"type": "tool_result", "toolUseId": "c1", "content": [{"type": "text", "text": "rain"}]}}
            ],
            "tools": [{"name": "weather", "description": "the weather", "inputSchema": {"type":"object","properties":{"city":{"type":"string"}}}}]
        }"#,
        )
        .expect("a request");
        let model = model_request(&request).expect("converts");
        assert_eq!(model.instructions.as_deref(), Some("be brief"));
        assert_eq!(
            model.settings.max_output_tokens,
            Some(50),
            "the server's maxTokens"
        );
        assert_eq!(model.messages.len(), 3);
        assert_eq!(model.messages[0].content, "weather?");
        assert_eq!(
            model.messages[0].images,
            [Image::Base64 {
                media_type: "image/png".into(),
                data: "aGk=".into()
            }],
            "a user's image goes to the model as an image"
        );
        assert_eq!(model.messages[1].tool_calls[0].name, "weather");
        assert_eq!(
            model.messages[1].tool_calls[0].arguments.get(),
            r#"{"city":"Oslo"}"#
        );
        assert_eq!(model.messages[2].tool_call_id.as_deref(), Some("c1"));
        assert_eq!(model.messages[2].tool_name.as_deref(), Some("weather"));
        assert_eq!(model.messages[2].content, "rain");
        assert_eq!(
            model.tools[0].input_schema.get(),
            r#"{"type":"object","properties":{"city":{"type":"string"}}}"#
        );
        assert_eq!(model.settings.tool_choice, None, "auto: the model decides");
        let mut no_tools = request.clone();
        no_tools.tool_choice = Some(ToolChoice::None);
        assert!(model_request(&no_tools).expect("converts").tools.is_empty());
        let mut required = request.clone();
        required.tool_choice = Some(ToolChoice::Required);
        assert_eq!(
            model_request(&required)
                .expect("converts")
                .settings
                .tool_choice,
            Some(golem_model::ToolChoice::Required)
        );
    }

    #[test]
    fn a_max_tokens_of_zero_is_refused() {
        let request: CreateMessageRequest =
            serde_json::from_str(r#"{"maxTokens": 0, "messages": []}"#).expect("a request");
        let refused = model_request(&request).expect_err("refused");
        assert_eq!(refused.code, crate::ProtocolError::INVALID_PARAMS);
        assert!(
            refused.message.contains("maxTokens is 0"),
            "{}",
            refused.message
        );
    }
}
