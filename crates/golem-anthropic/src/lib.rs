//! A Golem model provider for the Anthropic Messages API.
//!
//! [`Anthropic`] implements [`Model`]: the request's instructions (and any system
//! messages) as the `system` prompt; user and assistant turns; tools from
//! [`ToolSpec`](golem_model::ToolSpec)s with their schema sent verbatim as
//! `input_schema`; `tool_use` blocks with their `input` kept as the bytes the API sent
//! and `tool_result` blocks for the answers; `max_tokens` (required by the API: the
//! request's output limit when its [settings](golem_model::ModelSettings) set one, else
//! [`AnthropicConfig::max_tokens`], default [`DEFAULT_MAX_TOKENS`]); the other settings
//! (`temperature`, the request's else the configuration's; `top_p`; `stop_sequences`;
//! with tools, `tool_choice` and `disable_parallel_tool_use`; a seed, which the API has
//! no field for, is an error before sending); stop reasons mapped onto
//! [`FinishReason`](golem_model::FinishReason); usage with cache writes and reads; and
//! streaming, where `input_json_delta` fragments are assembled however the chunks split
//! them.
//!
//! Failures are a [`ModelError`] whose `source()` is a typed [`ProviderError`]: the HTTP
//! status, Anthropic's error type (`invalid_request_error`, `rate_limit_error`,
//! `overloaded_error` ...) and message, whether it is retryable and the `retry-after`
//! delay. Retryable failures (408, 409, 429, 5xx and 529, connection failures, timeouts,
//! an `error` event or a cut stream before anything was delivered) are retried per
//! [`AnthropicConfig::retry`]; a streamed answer is never retried once part of it
//! reached the caller. Bodies are bounded by [`AnthropicConfig::max_response_bytes`].
//! The API key is an [`ApiKey`]: never in `Debug` output or errors.
//!
//! Images of user messages are `image` blocks (a `base64` or `url` source) before the
//! turn's text. It does **not** do images outside user messages (refused before
//! sending), documents, extended thinking (thinking blocks are skipped), prompt-cache breakpoints (`cache_control`), `tool_choice`, or
//! the Batches and token-counting endpoints.
//!
//! ```no_run
//! use golem_model::{ApiKey, Message, Model, Request};
//! use golem_anthropic::{Anthropic, AnthropicConfig};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let model = Anthropic::new(AnthropicConfig {
//!     api_key: std::env::var("ANTHROPIC_API_KEY").ok().map(ApiKey::new),
//!     ..AnthropicConfig::new("claude-sonnet-4-5")
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
mod output;
mod stream;
mod wire;

use std::time::Duration;

use golem_model::{
    ApiKey, BoxFuture, Model, ModelError, ProviderError, ProviderErrorKind, Request, Response,
    RetryPolicy, StreamSink, ToolCall, Usage,
};
use golem_provider_http::{Attempt, Reader, retry_after};
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};

use crate::error::{PROVIDER, invalid};
use crate::stream::Assembler;
use crate::wire::{ErrorBody, MessagesRequest, MessagesResponse};

/// How much of an error body is read (the rest is not needed to report it).
const MAX_ERROR_BODY: usize = 64 * 1024;

/// What the Messages API takes of a request's settings: no seed.
const SETTING_RULES: golem_provider_http::SettingRules = golem_provider_http::SettingRules {
    provider: PROVIDER,
    max_temperature: 1.0,
    // The API documents no bound.
    max_stop: usize::MAX,
    seed: false,
};

/// The `max_tokens` sent when the configuration does not change it.
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The `anthropic-version` sent when the configuration does not change it.
pub const DEFAULT_VERSION: &str = "2023-06-01";

/// The configuration of an [`Anthropic`] model. Start from [`AnthropicConfig::new`].
#[derive(Clone, Debug)]
pub struct AnthropicConfig {
    /// The model's name, e.g. `"claude-sonnet-4-5"`.
    pub model: String,
    /// The API's base URL, to which `/v1/messages` is appended. Default
    /// `https://api.anthropic.com`.
    pub base_url: String,
    /// The key sent as `x-api-key`; `None` sends no key (a gateway that adds its own).
    pub api_key: Option<ApiKey>,
    /// The `anthropic-version` header (default [`DEFAULT_VERSION`]).
    pub version: String,
    /// `max_tokens`: the most tokens the model may write (default [`DEFAULT_MAX_TOKENS`]),
    /// for requests that set no output limit of their own
    /// ([`ModelSettings::max_output_tokens`](golem_model::ModelSettings::max_output_tokens)).
    pub max_tokens: u32,
    /// `temperature`; `None` leaves it to the API.
    pub temperature: Option<f32>,
    /// How failed requests are retried.
    pub retry: RetryPolicy,
    /// How long one attempt may wait for the answer to start, and a stream for its next
    /// chunk (default 120 s; the API sends `ping`s while a long answer is being written).
    pub request_timeout: Duration,
    /// The largest answer read, whole or streamed (default 16 MiB).
    pub max_response_bytes: usize,
    /// The HTTP client to use (proxies, TLS settings); `None` builds a
    /// default one, which follows redirects within the API's origin only
    /// (a client given here brings its own redirect policy).
    pub client: Option<reqwest::Client>,
}

impl AnthropicConfig {
    /// The defaults for `model` on api.anthropic.com, without a key.
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            base_url: "https://api.anthropic.com".into(),
            api_key: None,
            version: DEFAULT_VERSION.into(),
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
            retry: RetryPolicy::default(),
            request_timeout: Duration::from_secs(120),
            max_response_bytes: 16 * 1024 * 1024,
            client: None,
        }
    }
}

/// An Anthropic Messages model. Cheap to share: hold it as `Arc<dyn Model>`.
#[derive(Debug)]
pub struct Anthropic {
    config: AnthropicConfig,
    name: String,
    url: reqwest::Url,
    client: reqwest::Client,
}

impl Anthropic {
    /// A model for `config`. Fails if the base URL is not an http(s) URL, or the key or
    /// version cannot be sent as a header (the error never shows the key).
    pub fn new(config: AnthropicConfig) -> Result<Self, ModelError> {
        if let Some(key) = &config.api_key {
            HeaderValue::from_str(key.expose()).map_err(|_| {
                ModelError::new(
                    "anthropic: api_key is not a valid header value (a line break or other \
                     control character copied with it?)",
                )
            })?;
        }
        HeaderValue::from_str(&config.version).map_err(|_| {
            ModelError::new(format!(
                "anthropic: version {:?} is not a valid header value (e.g. {DEFAULT_VERSION})",
                config.version
            ))
        })?;
        let base = config.base_url.trim_end_matches('/');
        let url = reqwest::Url::parse(&format!("{base}/v1/messages"))
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https"))
            .ok_or_else(|| {
                ModelError::new(format!(
                    "anthropic: base_url {:?} is not an http(s) URL (e.g. https://api.anthropic.com)",
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
    pub fn config(&self) -> &AnthropicConfig {
        &self.config
    }

    fn body(&self, request: &Request, stream: bool) -> Result<Vec<u8>, ModelError> {
        if let Some(complaint) = wire::misplaced_images(request) {
            return Err(ModelError::new(complaint));
        }
        golem_provider_http::check_settings(request, SETTING_RULES)?;
        let settings = &request.settings;
        let temperature = settings.temperature.or(self.config.temperature);
        // Claude's current models refuse the two together.
        if temperature.is_some() && settings.top_p.is_some() {
            return Err(ModelError::new(
                "anthropic: temperature and top_p are both set; Claude models take one of them",
            ));
        }
        let mut tools = wire::tools(&request.tools);
        // An answer's shape is one more tool, which the model is made to call.
        let mut tool_choice = settings.tool_choice.clone();
        if let Some(shape) = &request.output {
            let (choice, offered) = output::tool_choice(request, shape);
            if offered {
                tools.push(output::tool(shape));
            }
            tool_choice = Some(choice);
        }
        let body = MessagesRequest {
            model: &self.config.model,
            // Required by the API: the request's own limit, else the configuration's.
            max_tokens: settings.max_output_tokens.unwrap_or(self.config.max_tokens),
            system: wire::system(request),
            messages: wire::messages(request),
            temperature,
            top_p: settings.top_p,
            stop_sequences: &settings.stop,
            // The API refuses a tool choice without tools; with none offered, `auto` and
            // `none` mean nothing (the others were refused above).
            tool_choice: wire::tool_choice(tool_choice.as_ref(), settings.parallel_tool_calls)
                .filter(|_| !tools.is_empty()),
            tools,
            stream,
        };
        serde_json::to_vec(&body)
            .map_err(|error| ModelError::with_source("anthropic: cannot encode the request", error))
    }

    /// The retry loop around one attempt; `sink` selects streaming.
    async fn run(
        &self,
        request: &Request,
        sink: Option<StreamSink<'_>>,
    ) -> Result<Response, ModelError> {
        let body = self.body(request, sink.is_some())?;
        let Some(shape) = &request.output else {
            return golem_provider_http::ask(&Attempts(self), &self.config.retry, &body, sink)
                .await;
        };
        // The output tool's call is the answer, streamed as text.
        let response = match sink {
            None => {
                golem_provider_http::ask(&Attempts(self), &self.config.retry, &body, None).await
            }
            Some(sink) => {
                let mut streamed = output::Streamed::new(shape);
                let mut forward = |event| {
                    if let Some(event) = streamed.map(event) {
                        sink(event);
                    }
                };
                golem_provider_http::ask(
                    &Attempts(self),
                    &self.config.retry,
                    &body,
                    Some(&mut forward),
                )
                .await
            }
        }?;
        Ok(shape.answer_from_tool(response))
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
            .header("anthropic-version", &self.config.version)
            .body(body.to_vec());
        if let Some(key) = &self.config.api_key {
            // Checked by `new`; the fallback keeps a bad key out of any message.
            let mut value = HeaderValue::from_str(key.expose()).map_err(|_| {
                ProviderError::new(
                    PROVIDER,
                    ProviderErrorKind::InvalidResponse,
                    "the API key is not a valid header value",
                )
            })?;
            value.set_sensitive(true);
            builder = builder.header("x-api-key", value);
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
            Ok(ErrorBody { error }) => (error.r#type, error.message),
            Err(_) => (None, String::from_utf8_lossy(&body).trim().to_owned()),
        };
        let message = match message.is_empty() {
            true => status.canonical_reason().unwrap_or("error").to_owned(),
            false => message,
        };
        Err(ProviderError {
            status: Some(status.as_u16()),
            error_type,
            retryable: ProviderError::retryable_status(status.as_u16()),
            retry_after,
            ..ProviderError::new(PROVIDER, ProviderErrorKind::Status, message)
        })
    }
}

/// `Anthropic`'s single attempts, for the retry loop (`golem_provider_http::ask`):
/// a private type, so that an attempt without retries is not part of
/// `Anthropic`'s API.
struct Attempts<'a>(&'a Anthropic);

impl Attempt for Attempts<'_> {
    async fn json_once(&self, body: &[u8]) -> Result<Response, ProviderError> {
        let mut response = self.0.send(body, false).await?;
        let body = self
            .0
            .reader()
            .read(&mut response, self.0.config.max_response_bytes, false)
            .await?;
        let answer: MessagesResponse = serde_json::from_slice(&body)
            .map_err(|error| invalid(format!("the answer is not a message: {error}")))?;
        let mut text = String::new();
        let mut tool_calls = Vec::new();
        for block in answer.content {
            match block.r#type.as_str() {
                "text" => text.push_str(block.text.as_deref().unwrap_or_default()),
                "tool_use" => {
                    let id = block.id.unwrap_or_default();
                    let name = block.name.unwrap_or_default();
                    let input = block.input.as_deref().map_or("{}", |input| input.get());
                    tool_calls.push(tool_call(&id, &name, input)?);
                }
                // Thinking, server tools and their results, anything newer.
                _ => {}
            }
        }
        let mut usage = Usage::default();
        answer.usage.apply(&mut usage);
        Ok(Response {
            text,
            tool_calls,
            usage,
            finish_reason: wire::finish_reason(answer.stop_reason.as_deref()),
            model: answer.model,
            id: answer.id,
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

impl Model for Anthropic {
    /// Sends the request (`stream: false`), retrying per the policy. Dropping the future
    /// cancels the call.
    fn request<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ModelError>> {
        Box::pin(self.run(request, None))
    }

    /// Streams the answer (`stream: true`) to `sink`. Retries only before the first
    /// event reached `sink`.
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

/// A tool call from the wire: empty input means no arguments, `{}`.
fn tool_call(id: &str, name: &str, arguments: &str) -> Result<ToolCall, ProviderError> {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    ToolCall::new(id, name, arguments).map_err(|error| {
        invalid(format!(
            "the input of tool_use {id:?} to {name:?} is not JSON: {error}"
        ))
    })
}
