//! Provider-neutral model types for Golem agents.
//!
//! This crate owns the vocabulary an agent and a model speak: [`Message`]s with a
//! [`Role`], the [`ToolCall`]s a model asks for, the [`ToolSpec`]s it is offered, one
//! [`Request`] and its [`Response`], token [`Usage`], the [`Model`] trait every provider
//! implements, the [`ModelError`] of a failed call (with a typed [`ProviderError`] as its
//! source when a provider failed, and the [`RetryPolicy`] providers retry by) and
//! [`ModelRetry`], the correctable
//! rejection a tool or decoder hands back to the model.
//!
//! It does **not** own any provider's wire format or HTTP client (providers live in their
//! own crates and map these types onto their APIs), tools and their execution
//! (`golem-tool`), or the agent run loop (`golem`).
//!
//! JSON the model or a tool server wrote (tool-call arguments, input schemas) is held as
//! [`RawValue`]: validated once, then kept byte for byte, never re-serialised, so what the
//! model sent is exactly what a tool receives.

use std::error::Error;
use std::fmt;
use std::future::Future;
use std::iter::Sum;
use std::ops::{Add, AddAssign};
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

mod provider;

pub use provider::{ApiKey, ProviderError, ProviderErrorKind, RetryPolicy};

/// A boxed, `Send` future: the return type of [`Model::request`] and of tool execution.
///
/// Boxing keeps the traits that return it object-safe, so they can sit behind `Arc<dyn ...>`.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Who wrote a [`Message`]. Serialised in lowercase (`"system"`, `"user"`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions that frame the conversation.
    System,
    /// The human (or calling program) talking to the model.
    User,
    /// The model itself: text and/or tool calls.
    Assistant,
    /// The result of one tool call, answering an assistant's [`ToolCall`].
    Tool,
}

/// One message of a conversation.
///
/// Which optional fields are set depends on the [`Role`]: user messages may carry
/// `images`; assistant messages may carry `tool_calls`; tool messages carry
/// `tool_call_id` and `tool_name`. The constructors ([`Message::user`],
/// [`Message::user_with_images`], [`Message::tool_result`], ...) fill them consistently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote the message.
    pub role: Role,
    /// The text of the message (may be empty for an assistant that only calls tools).
    pub content: String,
    /// The tool calls an assistant message asks for, in the model's order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the id of the [`ToolCall`] it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For a tool message: the name of the tool that produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// For a user message: images shown to the model with the text (providers send
    /// them before it). For a tool message: images the tool gave beside its text
    /// (Anthropic shows them in the tool result; OpenAI, whose tool messages carry
    /// text only, in a user message right after the turn's tool results). Providers
    /// refuse images on system and assistant messages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

/// An image in a user message: its bytes, base64-encoded, with their media type, or a
/// URL the provider fetches itself.
///
/// Which media types and URL schemes a model accepts is the provider's business
/// (commonly `image/png`, `image/jpeg`, `image/gif`, `image/webp`, and `https` URLs); the
/// adapters pass the values through as they are.
///
/// ```
/// use golem_model::{Image, Message};
///
/// let message = Message::user_with_images(
///     "What is in these pictures?",
///     vec![
///         Image::base64("image/png", "iVBORw0KGgo="),
///         Image::url("https://example.com/cat.jpg"),
///     ],
/// );
/// assert_eq!(message.images.len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Image {
    /// The image's bytes.
    Base64 {
        /// The media type, e.g. `image/png`.
        media_type: String,
        /// The bytes in standard base64, without a `data:` prefix.
        data: String,
    },
    /// An address the provider downloads the image from.
    Url {
        /// The URL, e.g. `https://example.com/cat.jpg`.
        url: String,
    },
}

impl Image {
    /// An image from its base64-encoded bytes and media type.
    pub fn base64(media_type: impl Into<String>, data: impl Into<String>) -> Self {
        Image::Base64 {
            media_type: media_type.into(),
            data: data.into(),
        }
    }

    /// An image the provider fetches from `url`.
    pub fn url(url: impl Into<String>) -> Self {
        Image::Url { url: url.into() }
    }
}

impl Message {
    fn plain(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tool_name: None,
            images: Vec::new(),
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::plain(Role::System, content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::plain(Role::User, content)
    }

    /// A user message with images (its text may be empty).
    pub fn user_with_images(content: impl Into<String>, images: Vec<Image>) -> Self {
        Self {
            images,
            ..Self::plain(Role::User, content)
        }
    }

    /// An assistant message with text only.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::plain(Role::Assistant, content)
    }

    /// An assistant message that asks for tool calls (its text may be empty).
    pub fn assistant_with_tool_calls(content: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::plain(Role::Assistant, content)
        }
    }

    /// A tool message: the result of the call `call_id` to the tool `tool_name`.
    pub fn tool_result(
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        content: impl Into<String>,
    ) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            tool_name: Some(tool_name.into()),
            ..Self::plain(Role::Tool, content)
        }
    }

    /// [`tool_result`](Self::tool_result) with the images the tool gave.
    pub fn tool_result_with_images(
        call_id: impl Into<String>,
        tool_name: impl Into<String>,
        content: impl Into<String>,
        images: Vec<Image>,
    ) -> Self {
        Self {
            images,
            ..Self::tool_result(call_id, tool_name, content)
        }
    }
}

/// A model's request to call one tool.
///
/// `arguments` is the model's JSON exactly as it wrote it: validated to be JSON, never
/// re-serialised, so key order, spacing and number spelling reach the tool unchanged.
/// Serialising a `ToolCall` embeds those bytes as they are; equality compares them as text.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call; the tool result message echoes it.
    pub id: String,
    /// The name of the tool to call.
    pub name: String,
    /// The arguments, verbatim JSON.
    pub arguments: Box<RawValue>,
}

impl ToolCall {
    /// Builds a tool call, checking that `arguments_json` is JSON and keeping its bytes.
    ///
    /// Whitespace around the JSON value is dropped; everything inside it is kept as
    /// written. A provider that sends an empty string for "no arguments" should map it to
    /// `{}` first: an empty string is not JSON and is refused.
    ///
    /// ```
    /// use golem_model::ToolCall;
    ///
    /// let call = ToolCall::new("call_1", "search", r#"{"q": "rust",   "limit":3}"#)?;
    /// assert_eq!(call.arguments.get(), r#"{"q": "rust",   "limit":3}"#);
    ///
    /// assert!(ToolCall::new("call_2", "search", r#"{"q": "#).is_err());
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments_json: &str,
    ) -> Result<Self, serde_json::Error> {
        // from_str (not from_string) so surrounding whitespace is trimmed consistently.
        let arguments = serde_json::from_str::<Box<RawValue>>(arguments_json)?;
        Ok(Self {
            id: id.into(),
            name: name.into(),
            arguments,
        })
    }

    /// Builds a tool call from any serializable arguments (a
    /// `serde_json::Value`, a struct), encoded compactly: for tests and for
    /// models that produce parsed arguments. [`new`](Self::new) keeps a
    /// model's own bytes and is the one adapters use.
    ///
    /// ```
    /// use golem_model::ToolCall;
    ///
    /// let call = ToolCall::from_value("call_1", "search", &serde_json::json!({"q": "rust"}))?;
    /// assert_eq!(call.arguments.get(), r#"{"q":"rust"}"#);
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn from_value(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: &impl serde::Serialize,
    ) -> Result<Self, serde_json::Error> {
        Ok(Self {
            id: id.into(),
            name: name.into(),
            arguments: serde_json::value::to_raw_value(arguments)?,
        })
    }
}

impl PartialEq for ToolCall {
    fn eq(&self, other: &Self) -> bool {
        // Raw text, not parsed values: two calls are equal only if the model wrote the same bytes.
        self.id == other.id
            && self.name == other.name
            && self.arguments.get() == other.arguments.get()
    }
}

impl Eq for ToolCall {}

/// A tool as offered to the model: its name, what it does, and the JSON Schema of its input.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does, written for the model.
    pub description: String,
    /// The JSON Schema of the arguments, verbatim (the bytes the tool's author or server wrote).
    pub input_schema: Box<RawValue>,
}

impl ToolSpec {
    /// The input schema as the providers' APIs take it: one whose top
    /// level says `"type": "object"`, which both OpenAI's and Anthropic's
    /// refuse a tool without. A schema that says so is the verbatim bytes;
    /// an object schema without a `type` gets `"type": "object"` added (its
    /// other keys kept); a `type` other than `"object"` is replaced by it,
    /// and a schema that is not a JSON object becomes `{"type":"object"}`
    /// (tool arguments are an object whatever the schema says). The
    /// arguments a model writes are not affected: they go to the tool as
    /// written.
    ///
    /// ```
    /// use golem_model::ToolSpec;
    /// use serde_json::value::RawValue;
    /// let spec = |schema: &str| ToolSpec {
    ///     name: "t".into(),
    ///     description: String::new(),
    ///     input_schema: RawValue::from_string(schema.into()).unwrap(),
    /// };
    /// let kept = spec(r#"{ "type": "object", "properties": {} }"#);
    /// assert_eq!(kept.object_schema().get(), r#"{ "type": "object", "properties": {} }"#);
    /// let added = spec(r#"{"properties":{"q":{"type":"string"}}}"#);
    /// assert_eq!(added.object_schema().get(), r#"{"properties":{"q":{"type":"string"}},"type":"object"}"#);
    /// assert_eq!(spec("true").object_schema().get(), r#"{"type":"object"}"#);
    /// ```
    pub fn object_schema(&self) -> std::borrow::Cow<'_, RawValue> {
        #[derive(Deserialize)]
        struct TopLevel<'a> {
            #[serde(rename = "type", borrow, default)]
            kind: Option<&'a str>,
        }
        let says_object = serde_json::from_str::<TopLevel<'_>>(self.input_schema.get())
            .is_ok_and(|top| top.kind == Some("object"));
        if says_object {
            return std::borrow::Cow::Borrowed(&self.input_schema);
        }
        let mut schema = match serde_json::from_str(self.input_schema.get()) {
            Ok(serde_json::Value::Object(schema)) => schema,
            _ => serde_json::Map::new(),
        };
        schema.insert("type".into(), "object".into());
        let text = serde_json::Value::Object(schema).to_string();
        // Serialized JSON is always valid JSON: the fallback is unreachable.
        std::borrow::Cow::Owned(RawValue::from_string(text).unwrap_or_else(|_| {
            RawValue::from_string(r#"{"type":"object"}"#.to_owned()).expect("valid JSON")
        }))
    }
}

impl PartialEq for ToolSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.description == other.description
            && self.input_schema.get() == other.input_schema.get()
    }
}

impl Eq for ToolSpec {}

/// One request to a model: the whole conversation so far, the tools on offer, and how
/// the model should answer.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// System-level instructions, if any; providers place them where their API expects.
    pub instructions: Option<String>,
    /// The conversation, oldest first.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// How the model should answer: output limit, sampling, stop sequences, tool choice.
    /// Each provider sends what its API has, and refuses (before sending anything) a
    /// setting it cannot honour.
    #[serde(default, skip_serializing_if = "ModelSettings::is_empty")]
    pub settings: ModelSettings,
    /// The shape the final answer must have, if any: the answer's text is then JSON
    /// that fits it. Each provider asks for it its own way (OpenAI `response_format`,
    /// Anthropic a tool whose input is the answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputSchema>,
}

/// The JSON Schema a final answer must fit ([`Request::output`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OutputSchema {
    /// A name for the answer's shape (letters, digits, `_` and `-`, at most 64): the
    /// providers' APIs want one (OpenAI's `json_schema.name`, Anthropic's tool name).
    pub name: String,
    /// The schema, verbatim; its top level is an object (`"type": "object"`), as every
    /// provider's mechanism takes.
    pub schema: Box<RawValue>,
    /// Whether the schema fits OpenAI's strict mode (every object closed with
    /// `"additionalProperties": false` and every property required), so the API can be
    /// asked to hold the model to it exactly.
    pub strict: bool,
}

impl OutputSchema {
    /// What the tool that stands for the answer tells the model, where the shape is
    /// offered as a tool ([`tool`](Self::tool); Anthropic's output tool).
    pub const TOOL_DESCRIPTION: &'static str = "Give your final answer with this tool: its \
                                                input is the answer. Call it once you have \
                                                everything the answer needs.";

    /// The shape as a tool whose input is the answer, for a model that has no way of
    /// its own to ask for it.
    pub fn tool(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone(),
            description: Self::TOOL_DESCRIPTION.into(),
            input_schema: self.schema.clone(),
        }
    }

    /// `response` with its call of [`tool`](Self::tool) made its text, the answer; the
    /// response's other calls are dropped with it (the answer ends the turn), and a
    /// finish by tool call becomes [`FinishReason::Stop`] (a cut one stays
    /// [`FinishReason::Length`]). Unchanged when the tool was not called.
    pub fn answer_from_tool(&self, mut response: Response) -> Response {
        let Some(position) = response
            .tool_calls
            .iter()
            .position(|call| call.name == self.name)
        else {
            return response;
        };
        let call = response.tool_calls.swap_remove(position);
        response.text = call.arguments.get().to_owned();
        response.tool_calls.clear();
        if response.finish_reason == FinishReason::ToolCalls {
            response.finish_reason = FinishReason::Stop;
        }
        response
    }
}

impl PartialEq for OutputSchema {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.schema.get() == other.schema.get()
            && self.strict == other.strict
    }
}

impl Eq for OutputSchema {}

/// How a model should answer; `None` (or empty) leaves a setting to the provider's
/// configuration, then to the API's default. Set on an agent and per run; a run's set
/// fields win ([`ModelSettings::over`]).
///
/// ```
/// use golem_model::{ModelSettings, ToolChoice};
///
/// let agent = ModelSettings { temperature: Some(0.2), seed: Some(7), ..ModelSettings::default() };
/// let run = ModelSettings { temperature: Some(0.0), tool_choice: Some(ToolChoice::Required), ..ModelSettings::default() };
/// let both = run.over(&agent);
/// assert_eq!((both.temperature, both.seed), (Some(0.0), Some(7)));
/// assert_eq!(both.tool_choice, Some(ToolChoice::Required));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelSettings {
    /// The most tokens the model may write in its answer (OpenAI:
    /// `max_completion_tokens`; Anthropic: `max_tokens`). It replaces the provider
    /// configuration's limit. An MCP server's sampling request sets it to the server's
    /// `maxTokens`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Sampling temperature (OpenAI takes 0 to 2, Anthropic 0 to 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    /// Nucleus sampling: the probability mass the model samples from (0 to 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// Text that ends the answer where the model writes it (OpenAI takes at most 4).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// A seed for sampling, for answers that repeat (OpenAI; Anthropic has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<i64>,
    /// Whether and which tool the model must call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
    /// Whether the model may call several tools in one answer (`None`: the API's
    /// default, which is yes for both).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
}

impl ModelSettings {
    /// Nothing set (the same as [`Default`], in a `const` context).
    pub const fn new() -> Self {
        ModelSettings {
            max_output_tokens: None,
            temperature: None,
            top_p: None,
            stop: Vec::new(),
            seed: None,
            tool_choice: None,
            parallel_tool_calls: None,
        }
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        *self == ModelSettings::default()
    }

    /// These settings over `base`: each setting of `self` that is set wins, the others
    /// are `base`'s.
    pub fn over(&self, base: &ModelSettings) -> ModelSettings {
        ModelSettings {
            max_output_tokens: self.max_output_tokens.or(base.max_output_tokens),
            temperature: self.temperature.or(base.temperature),
            top_p: self.top_p.or(base.top_p),
            stop: match self.stop.is_empty() {
                true => base.stop.clone(),
                false => self.stop.clone(),
            },
            seed: self.seed.or(base.seed),
            tool_choice: self
                .tool_choice
                .clone()
                .or_else(|| base.tool_choice.clone()),
            parallel_tool_calls: self.parallel_tool_calls.or(base.parallel_tool_calls),
        }
    }
}

/// Whether and which tool a model must call ([`ModelSettings::tool_choice`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides (the APIs' default when tools are offered).
    Auto,
    /// No tool: the model answers in text.
    None,
    /// At least one tool call, whichever tool.
    Required,
    /// A call of this tool (its name as offered).
    Tool(String),
}

/// Who serves a model and which model it is ([`Model::identity`]): what
/// telemetry says of each request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelIdentity<'a> {
    /// The provider, as OpenTelemetry's GenAI conventions name it
    /// (`openai`, `anthropic`, ...).
    pub provider: &'a str,
    /// The model asked for (`gpt-4o`).
    pub model: &'a str,
    /// The host and port requests go to, when there is one.
    pub server: Option<(&'a str, u16)>,
}

/// A model's answer to one [`Request`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    /// The text the model wrote (may be empty when it only calls tools).
    pub text: String,
    /// The tool calls the model asks for, in its order.
    pub tool_calls: Vec<ToolCall>,
    /// What the request cost.
    pub usage: Usage,
    /// Why the model stopped writing.
    #[serde(default)]
    pub finish_reason: FinishReason,
    /// The model that answered, as the provider names it (a dated
    /// snapshot of the model asked for, e.g. `gpt-4o-2024-08-06`), when it
    /// says: telemetry's `gen_ai.response.model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider's id of this answer (`chatcmpl-…`, `msg_…`), when it
    /// gives one: telemetry's `gen_ai.response.id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// Why a model stopped writing, normalized across providers.
///
/// Providers map their own vocabulary onto it (OpenAI's `finish_reason`,
/// Anthropic's `stop_reason`); a value with no equivalent is kept as
/// [`Other`](Self::Other) with the provider's own spelling.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model finished its answer (or reached a stop sequence).
    #[default]
    Stop,
    /// The output token limit cut the answer short.
    Length,
    /// The model stopped to call tools.
    ToolCalls,
    /// The provider withheld or cut the answer (content filter, refusal).
    ContentFilter,
    /// A reason this crate has no name for, as the provider spelled it.
    Other(String),
}

/// Something a streaming model produced, delivered as it arrives.
///
/// Tool calls are announced by [`ToolCallStarted`](Self::ToolCallStarted), then their
/// arguments follow as [`ToolCallArguments`](Self::ToolCallArguments) fragments whose
/// concatenation is the call's arguments JSON (fragments split anywhere, even inside a
/// UTF-8 sequence's string or a number). `index` is the call's position in
/// [`Response::tool_calls`]; fragments of parallel calls may interleave.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// A fragment of the answer's text.
    Text(String),
    /// The model began a tool call.
    ToolCallStarted {
        /// The call's position among the response's tool calls.
        index: usize,
        /// The provider's id for the call.
        id: String,
        /// The tool's name.
        name: String,
    },
    /// A fragment of a tool call's arguments.
    ToolCallArguments {
        /// The call's position among the response's tool calls.
        index: usize,
        /// The next bytes of its arguments JSON.
        fragment: String,
    },
}

/// Where a streaming request delivers its [`StreamEvent`]s: a callback run on the
/// request's own task, in order. Keep it quick (print, forward to a channel); it runs
/// between reads of the network.
pub type StreamSink<'a> = &'a mut (dyn FnMut(StreamEvent) + Send);

/// Token and request counts. Sums with `+`, `+=` and [`Iterator::sum`], so a run's total is
/// the sum of its turns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens sent to the model.
    pub input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
    /// Model requests made.
    pub requests: u64,
    /// Input tokens read from the provider's prompt cache (counted apart from
    /// `input_tokens` where the provider reports them apart, as Anthropic does;
    /// included in them where it does not, as OpenAI does).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Add for Usage {
    type Output = Usage;

    fn add(self, rhs: Usage) -> Usage {
        // Saturating: a usage counter must never panic or wrap in a long-running process.
        Usage {
            input_tokens: self.input_tokens.saturating_add(rhs.input_tokens),
            output_tokens: self.output_tokens.saturating_add(rhs.output_tokens),
            requests: self.requests.saturating_add(rhs.requests),
            cache_read_tokens: self.cache_read_tokens.saturating_add(rhs.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_add(rhs.cache_write_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        *self = *self + rhs;
    }
}

impl Sum for Usage {
    fn sum<I: Iterator<Item = Usage>>(iter: I) -> Usage {
        iter.fold(Usage::default(), Add::add)
    }
}

/// A language model: takes a [`Request`], answers with a [`Response`].
///
/// The method returns a boxed future rather than being an `async fn` so that the trait is
/// object-safe: agents hold their model as `Arc<dyn Model>` and swap providers (or the
/// scripted test model) at run time. The one allocation per model turn is nothing next to
/// the model call itself.
///
/// ```
/// use std::sync::Arc;
/// use golem_model::{BoxFuture, Model, ModelError, Request, Response};
///
/// /// Answers every request with the same text.
/// struct Echo;
///
/// impl Model for Echo {
///     fn request<'a>(&'a self, _request: &'a Request) -> BoxFuture<'a, Result<Response, ModelError>> {
///         Box::pin(async move {
///             Ok(Response { text: "hello".into(), ..Response::default() })
///         })
///     }
///
///     fn name(&self) -> &str {
///         "echo"
///     }
/// }
///
/// let model: Arc<dyn Model> = Arc::new(Echo);
/// assert_eq!(model.name(), "echo");
/// ```
pub trait Model: Send + Sync {
    /// Sends one request to the model. Dropping the future cancels the call.
    fn request<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ModelError>>;

    /// Sends one request and delivers the answer to `sink` as it arrives (text
    /// fragments, tool calls and their argument fragments), then returns the assembled
    /// [`Response`], the same one [`request`](Self::request) would have returned.
    ///
    /// The default, for models that do not stream, awaits [`request`](Self::request)
    /// and replays the whole response as events: its text in one fragment, then each
    /// tool call started and its arguments in one fragment. Dropping the future
    /// cancels the call; events already delivered stay delivered.
    ///
    /// ```
    /// # use golem_model::{BoxFuture, Model, ModelError, Request, Response, StreamEvent};
    /// # struct Echo;
    /// # impl Model for Echo {
    /// #     fn request<'a>(&'a self, _: &'a Request) -> BoxFuture<'a, Result<Response, ModelError>> {
    /// #         Box::pin(async { Ok(Response { text: "hello".into(), ..Response::default() }) })
    /// #     }
    /// #     fn name(&self) -> &str { "echo" }
    /// # }
    /// use std::task::{Context, Poll, Waker};
    ///
    /// let request = Request::default();
    /// let mut seen = Vec::new();
    /// let mut sink = |event| seen.push(event);
    /// let mut future = Echo.request_stream(&request, &mut sink);
    /// // Echo answers at once, so one poll completes the call.
    /// let Poll::Ready(response) = future.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    /// else {
    ///     panic!("Echo never waits");
    /// };
    /// drop(future);
    /// assert_eq!(response?.text, "hello");
    /// assert_eq!(seen, [StreamEvent::Text("hello".into())]);
    /// # Ok::<(), ModelError>(())
    /// ```
    fn request_stream<'a>(
        &'a self,
        request: &'a Request,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Response, ModelError>> {
        Box::pin(async move {
            let response = self.request(request).await?;
            replay(&response, sink);
            Ok(response)
        })
    }

    /// The model's name, for logs and errors (e.g. `"openai:gpt-4o"`).
    fn name(&self) -> &str;

    /// Who serves the model and which model it is, as telemetry names them
    /// (OpenTelemetry's `gen_ai.provider.name`, `gen_ai.request.model`,
    /// `server.address`, `server.port`). By default read from
    /// [`name`](Self::name) as `provider:model`, with no server.
    fn identity(&self) -> ModelIdentity<'_> {
        let name = self.name();
        let (provider, model) = name.split_once(':').unwrap_or((name, name));
        ModelIdentity {
            provider,
            model,
            server: None,
        }
    }

    /// Whether this model asks for a request's [`output`](Request::output) shape itself
    /// (a provider's structured output: OpenAI's `response_format`, Anthropic's output
    /// tool). The default, `false`, has an agent offer the shape as a `final_result` tool
    /// instead, whose call is the answer, so any model that calls tools can answer in it.
    fn takes_output_schema(&self) -> bool {
        false
    }
}

/// Delivers a whole response to `sink` as stream events: what a model that does not
/// stream "streams" (see [`Model::request_stream`]).
pub fn replay(response: &Response, sink: StreamSink<'_>) {
    if !response.text.is_empty() {
        sink(StreamEvent::Text(response.text.clone()));
    }
    for (index, call) in response.tool_calls.iter().enumerate() {
        sink(StreamEvent::ToolCallStarted {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        sink(StreamEvent::ToolCallArguments {
            index,
            fragment: call.arguments.get().to_owned(),
        });
    }
}

/// A model call that failed: the provider was unreachable, refused the request, or answered
/// with something that could not be understood.
///
/// Display shows the message; the underlying cause, if any, is the error's `source()`.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ModelError {
    message: String,
    #[source]
    source: Option<Box<dyn Error + Send + Sync + 'static>>,
}

impl ModelError {
    /// An error with a message and no underlying cause.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            source: None,
        }
    }

    /// An error with a message and the cause it came from (kept intact for `downcast_ref`).
    pub fn with_source(
        message: impl Into<String>,
        source: impl Into<Box<dyn Error + Send + Sync + 'static>>,
    ) -> Self {
        Self {
            message: message.into(),
            source: Some(source.into()),
        }
    }

    /// The message, without the cause.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// A provider's answer that is not the JSON it should be (or arguments that
/// cannot be encoded), so that a model implementation can use `?` on
/// `serde_json` calls and [`ToolCall::new`]; the JSON error is the
/// `source()`.
///
/// ```
/// fn parse(body: &str) -> Result<golem_model::ToolCall, golem_model::ModelError> {
///     Ok(golem_model::ToolCall::new("call_1", "search", body)?)
/// }
/// let error = parse("{").expect_err("not JSON");
/// assert!(error.to_string().starts_with("invalid JSON from the model provider"));
/// ```
impl From<serde_json::Error> for ModelError {
    fn from(error: serde_json::Error) -> Self {
        ModelError::with_source(
            format!("invalid JSON from the model provider: {error}"),
            error,
        )
    }
}

/// A rejection the model can fix: the reason goes back to the model, which may try again
/// (with corrected tool arguments, or a corrected final answer) within the agent's retry
/// budget.
///
/// Display shows the reason alone, since it is written for the model to read.
///
/// ```
/// use golem_model::ModelRetry;
///
/// let retry = ModelRetry::new("`limit` must be between 1 and 100, got 500");
/// assert_eq!(retry.reason(), "`limit` must be between 1 and 100, got 500");
/// assert_eq!(retry.to_string(), retry.reason());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ModelRetry {
    reason: String,
}

impl ModelRetry {
    /// A retry carrying `reason`, the explanation the model will see.
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// The explanation for the model.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for ModelRetry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl Error for ModelRetry {}

#[cfg(test)]
mod tests {
    use super::*;

    const ODD: &str = r#"{"b":1,   "a" :2.50, "c":[ true ,null]}"#;

    #[test]
    fn tool_call_keeps_argument_bytes() {
        let call = ToolCall::new("id1", "t", ODD).expect("valid JSON");
        assert_eq!(call.arguments.get(), ODD);
    }

    #[test]
    fn tool_call_round_trips_through_serde_unchanged() {
        let call = ToolCall::new("id1", "t", ODD).expect("valid JSON");
        let json = serde_json::to_string(&call).expect("serialise");
        assert!(json.contains(ODD), "arguments embedded verbatim: {json}");
        let back: ToolCall = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back.arguments.get(), ODD);
        assert_eq!(back, call);

        // Through a whole message too.
        let msg = Message::assistant_with_tool_calls("", vec![call]);
        let json = serde_json::to_string(&msg).expect("serialise");
        let back: Message = serde_json::from_str(&json).expect("deserialise");
        assert_eq!(back.tool_calls[0].arguments.get(), ODD);
    }

    #[test]
    fn tool_call_equality_compares_raw_text() {
        let a = ToolCall::new("id", "t", r#"{"a":1,"b":2}"#).expect("valid");
        let b = ToolCall::new("id", "t", r#"{"b":2,"a":1}"#).expect("valid");
        assert_ne!(a, b);
        assert_eq!(a, a.clone());
    }

    #[test]
    fn tool_call_rejects_invalid_json() {
        for bad in ["", "{", "{\"a\":}", "nope", "{} {}"] {
            assert!(ToolCall::new("id", "t", bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn tool_call_trims_only_surrounding_whitespace() {
        let call = ToolCall::new("id", "t", "  { \"a\" : 1 }\n").expect("valid");
        assert_eq!(call.arguments.get(), "{ \"a\" : 1 }");
    }

    #[test]
    fn usage_sums() {
        let a = Usage {
            input_tokens: 10,
            output_tokens: 2,
            requests: 1,
            ..Usage::default()
        };
        let b = Usage {
            input_tokens: 5,
            output_tokens: 7,
            requests: 1,
            cache_read_tokens: 3,
            cache_write_tokens: 0,
        };
        let want = Usage {
            input_tokens: 15,
            output_tokens: 9,
            requests: 2,
            cache_read_tokens: 3,
            cache_write_tokens: 0,
        };
        assert_eq!(a + b, want);
        let mut c = a;
        c += b;
        assert_eq!(c, want);
        assert_eq!([a, b].into_iter().sum::<Usage>(), want);
        let max = Usage {
            input_tokens: u64::MAX,
            ..a
        };
        assert_eq!((max + a).input_tokens, u64::MAX);
    }

    #[test]
    fn message_constructors() {
        let s = Message::system("be brief");
        assert_eq!((s.role, s.content.as_str()), (Role::System, "be brief"));
        assert!(s.tool_calls.is_empty() && s.tool_call_id.is_none() && s.tool_name.is_none());

        assert_eq!(Message::user("hi").role, Role::User);
        assert_eq!(Message::assistant("yo").role, Role::Assistant);

        let call = ToolCall::new("c1", "search", "{}").expect("valid");
        let a = Message::assistant_with_tool_calls("looking", vec![call.clone()]);
        assert_eq!(a.role, Role::Assistant);
        assert_eq!(a.content, "looking");
        assert_eq!(a.tool_calls, vec![call]);

        let t = Message::tool_result("c1", "search", "3 hits");
        assert_eq!(t.role, Role::Tool);
        assert_eq!(t.tool_call_id.as_deref(), Some("c1"));
        assert_eq!(t.tool_name.as_deref(), Some("search"));
        assert_eq!(t.content, "3 hits");
    }

    #[test]
    fn images_serialise_tagged_and_old_messages_have_none() {
        let message = Message::user_with_images(
            "look",
            vec![
                Image::base64("image/png", "aGk="),
                Image::url("https://x/y.png"),
            ],
        );
        let json = serde_json::to_string(&message).expect("serialise");
        assert_eq!(
            json,
            r#"{"role":"user","content":"look","images":[{"type":"base64","media_type":"image/png","data":"aGk="},{"type":"url","url":"https://x/y.png"}]}"#
        );
        assert_eq!(
            serde_json::from_str::<Message>(&json).expect("back"),
            message
        );
        let old: Message = serde_json::from_str(r#"{"role":"user","content":"hi"}"#).expect("old");
        assert!(old.images.is_empty());
        assert!(
            !serde_json::to_string(&old)
                .expect("serialise")
                .contains("images")
        );
    }

    #[test]
    fn role_serialises_lowercase() {
        let json = serde_json::to_string(&[Role::System, Role::User, Role::Assistant, Role::Tool])
            .expect("serialise");
        assert_eq!(json, r#"["system","user","assistant","tool"]"#);
    }

    #[test]
    fn model_error_keeps_its_source() {
        let io = std::io::Error::other("connection reset");
        let err = ModelError::with_source("openai: request failed", io);
        assert_eq!(err.to_string(), "openai: request failed");
        let src = err.source().expect("has a source");
        assert!(src.downcast_ref::<std::io::Error>().is_some());
        assert!(ModelError::new("x").source().is_none());
    }

    #[test]
    fn replay_delivers_text_then_each_call() {
        let response = Response {
            text: "checking".into(),
            tool_calls: vec![
                ToolCall::new("c1", "a", r#"{"x": 1}"#).expect("valid"),
                ToolCall::new("c2", "b", "{}").expect("valid"),
            ],
            ..Response::default()
        };
        let mut seen = Vec::new();
        replay(&response, &mut |event| seen.push(event));
        let started = |index: usize, id: &str, name: &str| StreamEvent::ToolCallStarted {
            index,
            id: id.into(),
            name: name.into(),
        };
        let arguments = |index: usize, fragment: &str| StreamEvent::ToolCallArguments {
            index,
            fragment: fragment.into(),
        };
        assert_eq!(
            seen,
            [
                StreamEvent::Text("checking".into()),
                started(0, "c1", "a"),
                arguments(0, r#"{"x": 1}"#),
                started(1, "c2", "b"),
                arguments(1, "{}"),
            ]
        );

        let mut seen = Vec::new();
        replay(&Response::default(), &mut |event| seen.push(event));
        assert!(seen.is_empty(), "no text, no calls: no events");
    }

    #[test]
    fn finish_reason_serialises_snake_case_and_defaults_to_stop() {
        let json = serde_json::to_string(&[FinishReason::ToolCalls, FinishReason::ContentFilter])
            .expect("serialise");
        assert_eq!(json, r#"["tool_calls","content_filter"]"#);
        let old: Response =
            serde_json::from_str(r#"{"text":"","tool_calls":[],"usage":{"input_tokens":1,"output_tokens":2,"requests":1}}"#)
                .expect("a response without the newer fields");
        assert_eq!(old.finish_reason, FinishReason::Stop);
        assert_eq!(old.usage.cache_read_tokens, 0);
    }

    #[test]
    fn model_retry_displays_its_reason() {
        let r = ModelRetry::new("try again with a date");
        assert_eq!(r.to_string(), "try again with a date");
        assert_eq!(r.clone(), r);
    }
}
