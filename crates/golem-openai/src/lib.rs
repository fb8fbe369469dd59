//! A Golem model provider for the OpenAI Chat Completions API, and for every server
//! that speaks it: set [`OpenAiConfig::base_url`] to reach Ollama, vLLM, llama.cpp's
//! server, LM Studio, OpenRouter, Groq, Together, DeepSeek, Mistral ...
//!
//! [`OpenAi`] implements [`Model`]: system, user (with images: `image_url` content
//! parts, base64 as `data:` URLs) assistant and tool messages; tools from
//! [`ToolSpec`](golem_model::ToolSpec)s with their schema sent verbatim; tool calls (parallel ones too) with
//! their arguments kept byte for byte (an empty string meaning `{}`); usage (with cached
//! prompt tokens); finish reasons; and streaming, where tool-call arguments are assembled
//! from their deltas however the chunks split them. A request's
//! [settings](golem_model::ModelSettings): its output limit is sent as
//! `max_completion_tokens` (the current field), [`OpenAiConfig::max_tokens`] as
//! `max_tokens` (the one every compatible server reads) only when the request sets no
//! limit of its own; `temperature` (the request's, else the configuration's), `top_p`,
//! `stop` (at most 4), `seed`, and, when tools are offered, `tool_choice` and
//! `parallel_tool_calls`. A setting the API would refuse is an error before anything is
//! sent. A request's [output schema](golem_model::OutputSchema) is sent as
//! `response_format` (`json_schema`, `strict` as the schema allows): the answer's text is
//! the JSON.
//!
//! Failures are a [`ModelError`] whose `source()` is a typed [`ProviderError`]: the HTTP
//! status, OpenAI's error type (or code) and message, whether it is retryable and the
//! `Retry-After` delay. Retryable failures (408, 409, 429 other than exhausted quota,
//! 5xx, connection failures, timeouts, a stream cut before anything was delivered) are
//! retried per [`OpenAiConfig::retry`]; a streamed answer is never retried once part of
//! it reached the caller. Bodies are bounded by [`OpenAiConfig::max_response_bytes`].
//! The API key is an [`ApiKey`]: never in `Debug` output or errors.
//!
//! It does **not** do the Responses API, `n > 1`, structured outputs, or images outside
//! user messages (the API takes none; such a request is refused before it is sent).
//!
//! ```no_run
//! use golem_model::{ApiKey, Message, Model, Request};
//! use golem_openai::{OpenAi, OpenAiConfig};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let model = OpenAi::new(OpenAiConfig {
//!     api_key: std::env::var("OPENAI_API_KEY").ok().map(ApiKey::new),
//!     ..OpenAiConfig::new("gpt-4o-mini")
//! })?;
//! let request = Request {
//!     messages: vec![Message::user("Say hi")],
//!     ..Request::default()
//! };
//! let response = model.request(&request).await?;
//! println!("{}", response.text);
//! # Ok(())
//! # }
//! ```

mod error;
mod stream;
mod wire;

use std::time::Duration;

use golem_model::{
    ApiKey, BoxFuture, Model, ModelError, ProviderError, Request, Response, RetryPolicy,
    StreamSink, ToolCall, Usage,
};
use golem_provider_http::{Attempt, Reader, retry_after};
use reqwest::header::{ACCEPT, CONTENT_TYPE};

use crate::error::{PROVIDER, invalid, status_error};
use crate::stream::Assembler;
use crate::wire::{ChatRequest, ChatResponse, ErrorBody, ResponseFormat, StreamOptions};

/// How much of an error body is read (the rest is not needed to report it).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// What Chat Completions takes of a request's settings.
const SETTING_RULES: golem_provider_http::SettingRules = golem_provider_http::SettingRules {
    provider: PROVIDER,
    max_temperature: 2.0,
    max_stop: 4,
    seed: true,
};

/// The configuration of an [`OpenAi`] model. Start from [`OpenAiConfig::new`].
#[derive(Clone, Debug)]
pub struct OpenAiConfig {
    /// The model's name on the server, e.g. `"gpt-4o"` or `"llama3.2"`.
    pub model: String,
    /// The API's base URL, to which `/chat/completions` is appended. Default
    /// `https://api.openai.com/v1`; Ollama's is `http://localhost:11434/v1`.
    pub base_url: String,
    /// The key sent as `Authorization: Bearer ...`; `None` sends no header (local servers).
    pub api_key: Option<ApiKey>,
    /// `max_tokens`: the most tokens the model may write; `None` leaves it to the server.
    /// A request's own output limit
    /// ([`ModelSettings::max_output_tokens`](golem_model::ModelSettings::max_output_tokens))
    /// replaces it, sent as `max_completion_tokens` (then `max_tokens` is not sent).
    pub max_tokens: Option<u32>,
    /// `temperature`; `None` leaves it to the server.
    pub temperature: Option<f32>,
    /// How failed requests are retried.
    pub retry: RetryPolicy,
    /// How long one attempt may wait for the answer to start, and a stream for its next
    /// chunk (default 120 s).
    pub request_timeout: Duration,
    /// The largest answer read, whole or streamed (default 16 MiB).
    pub max_response_bytes: usize,
    /// The HTTP client to use (proxies, TLS settings); `None` builds a
    /// default one, which follows redirects within the API's origin only
    /// (a client given here brings its own redirect policy).
    pub client: Option<reqwest::Client>,
}

impl OpenAiConfig {
    /// The defaults for `model` on api.openai.com, without a key.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            base_url: "https://api.openai.com/v1".into(),
            api_key: None,
            max_tokens: None,
            temperature: None,
            retry: RetryPolicy::default(),
            request_timeout: Duration::from_secs(120),
            max_response_bytes: 16 * 1024 * 1024,
            client: None,
        }
    }
}

/// An OpenAI-compatible chat model. Cheap to share: hold it as `Arc<dyn Model>`.
#[derive(Debug)]
pub struct OpenAi {
    config: OpenAiConfig,
    name: String,
    url: reqwest::Url,
    client: reqwest::Client,
}

impl OpenAi {
    /// A model for `config`. Fails if the base URL is not an http(s) URL.
    pub fn new(config: OpenAiConfig) -> Result<Self, ModelError> {
        let base = config.base_url.trim_end_matches('/');
        let url = reqwest::Url::parse(&format!("{base}/chat/completions"))
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| {
                ModelError::new(format!(
                    "openai: base_url {:?} is not an http(s) URL (e.g. https://api.openai.com/v1)",
                    config.base_url
                ))
            })?;
        Ok(Self {
            name: format!("{PROVIDER}:{}", config.model),
            client: config
                .client
                .clone()
                .unwrap_or_else(golem_provider_http::default_client),
            url,
            config,
        })
    }

    /// The configuration this model was built with.
    pub fn config(&self) -> &OpenAiConfig {
        &self.config
    }

    fn body(&self, request: &Request, stream: bool) -> Result<Vec<u8>, ModelError> {
        if let Some(complaint) = wire::misplaced_images(request) {
            return Err(ModelError::new(complaint));
        }
        golem_provider_http::check_settings(request, SETTING_RULES)?;
        let settings = &request.settings;
        // The API refuses a tool choice or parallel_tool_calls without tools; with none
        // offered, `auto` and `none` mean nothing (the others were refused above).
        let tools_offered = !request.tools.is_empty();
        let body = ChatRequest {
            model: &self.config.model,
            messages: wire::messages(request),
            tools: wire::tools(&request.tools),
            // The request's own limit replaces the configuration's: one field, never both.
            max_tokens: match settings.max_output_tokens {
                Some(_) => None,
                None => self.config.max_tokens,
            },
            max_completion_tokens: settings.max_output_tokens,
            temperature: settings.temperature.or(self.config.temperature),
            top_p: settings.top_p,
            stop: &settings.stop,
            seed: settings.seed,
            tool_choice: settings
                .tool_choice
                .as_ref()
                .filter(|_| tools_offered)
                .map(wire::tool_choice),
            parallel_tool_calls: settings.parallel_tool_calls.filter(|_| tools_offered),
            response_format: request.output.as_ref().map(ResponseFormat::of),
            stream,
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
        };
        serde_json::to_vec(&body)
            .map_err(|error| ModelError::with_source("openai: cannot encode the request", error))
    }

    /// The retry loop around one attempt; `sink` selects streaming.
    async fn run(
        &self,
        request: &Request,
        sink: Option<StreamSink<'_>>,
    ) -> Result<Response, ModelError> {
        let body = self.body(request, sink.is_some())?;
        golem_provider_http::ask(&Attempts(self), &self.config.retry, &body, sink).await
    }

    /// How this provider reads its answers (the shared plumbing).
    fn reader(&self) -> Reader {
        Reader {
            provider: PROVIDER,
            timeout: self.config.request_timeout,
        }
    }

    /// Sends the body; a non-success status becomes its typed error.
    async fn send(&self, body: &[u8], stream: bool) -> Result<reqwest::Response, ProviderError> {
        let mut builder = self
            .client
            .post(self.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(
                ACCEPT,
                if stream {
                    "text/event-stream"
                } else {
                    "application/json"
                },
            )
            .body(body.to_vec());
        if let Some(key) = &self.config.api_key {
            builder = builder.bearer_auth(key.expose());
        }
        let response = self.reader().send(builder).await?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = retry_after(response.headers());
        let mut response = response;
        let body = self
            .reader()
            .read(&mut response, MAX_ERROR_BODY, true)
            .await?;
        let (error_type, message) = match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(ErrorBody { error }) => (error.kind(), error.message),
            Err(_) => (None, String::from_utf8_lossy(&body).trim().to_owned()),
        };
        let message = match message.is_empty() {
            true => status.canonical_reason().unwrap_or("error").to_owned(),
            false => message,
        };
        Err(status_error(
            Some(status.as_u16()),
            retry_after,
            error_type,
            message,
        ))
    }
}

/// `OpenAi`'s single attempts, for the retry loop (`golem_provider_http::ask`):
/// a private type, so that an attempt without retries is not part of
/// `OpenAi`'s API.
struct Attempts<'a>(&'a OpenAi);

impl Attempt for Attempts<'_> {
    async fn json_once(&self, body: &[u8]) -> Result<Response, ProviderError> {
        let mut response = self.0.send(body, false).await?;
        let body = self
            .0
            .reader()
            .read(&mut response, self.0.config.max_response_bytes, false)
            .await?;
        let answer: ChatResponse = serde_json::from_slice(&body)
            .map_err(|error| invalid(format!("the answer is not a chat completion: {error}")))?;
        let (model, id) = (answer.model, answer.id);
        let choice = answer
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| invalid("the answer has no choices"))?;
        let message = choice.message;
        let mut tool_calls = Vec::with_capacity(message.tool_calls.len());
        for call in &message.tool_calls {
            tool_calls.push(tool_call(
                &call.id,
                &call.function.name,
                &call.function.arguments,
            )?);
        }
        Ok(Response {
            text: message.content.or(message.refusal).unwrap_or_default(),
            tool_calls,
            usage: answer.usage.map_or(
                Usage {
                    requests: 1,
                    ..Usage::default()
                },
                |usage| usage.to_usage(),
            ),
            finish_reason: wire::finish_reason(choice.finish_reason.as_deref()),
            model,
            id,
        })
    }

    async fn stream_once(
        &self,
        body: &[u8],
        sink: StreamSink<'_>,
    ) -> Result<Response, ProviderError> {
        let mut response = self.0.send(body, true).await?;
        let assembler = Assembler::new(self.0.config.max_response_bytes);
        self.0
            .reader()
            .read_stream(&mut response, assembler, sink)
            .await
    }
}

impl Model for OpenAi {
    /// Sends the request (`stream: false`), retrying per the policy. Dropping the future
    /// cancels the call.
    fn request<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ModelError>> {
        Box::pin(self.run(request, None))
    }

    /// Streams the answer (`stream: true`, usage included) to `sink`. Retries only
    /// before the first event reached `sink`.
    fn request_stream<'a>(
        &'a self,
        request: &'a Request,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Response, ModelError>> {
        Box::pin(self.run(request, Some(sink)))
    }

    fn name(&self) -> &str {
        &self.name
    }

    fn identity(&self) -> golem_model::ModelIdentity<'_> {
        golem_model::ModelIdentity {
            provider: PROVIDER,
            model: &self.config.model,
            server: self.url.host_str().zip(self.url.port_or_known_default()),
        }
    }

    /// Yes: see [`Request::output`].
    fn takes_output_schema(&self) -> bool {
        true
    }
}

/// A tool call from the wire: an empty arguments string means no arguments, `{}`.
fn tool_call(id: &str, name: &str, arguments: &str) -> Result<ToolCall, ProviderError> {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    ToolCall::new(id, name, arguments).map_err(|error| {
        invalid(format!(
            "the arguments of tool call {id:?} to {name:?} are not JSON: {error}"
        ))
    })
}
