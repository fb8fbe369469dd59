//! The run's telemetry, by OpenTelemetry's GenAI semantic conventions and
//! through the `tracing` facade (ADR 0035): an `invoke_agent {name}` span
//! per run (kind internal), a `chat {model}` span per model request (kind
//! client) and an `execute_tool {tool}` span per tool call (kind internal),
//! with the conventions' attributes (`gen_ai.operation.name`,
//! `gen_ai.provider.name`, `gen_ai.request.model`, `gen_ai.response.model`,
//! token usage, finish reasons, `error.type`, ...); and the events the
//! `tracing-opentelemetry` metrics layer turns into the histograms
//! `gen_ai.client.operation.duration` and `gen_ai.client.token.usage`
//! (target `golem_agent::metrics`).
//!
//! The spans' target is `golem_agent::agent`, their level `INFO`; the
//! OpenTelemetry span name and kind are the `otel.name` and `otel.kind`
//! fields. An `execute_tool` span declares the MCP attributes
//! (`mcp.method.name`, `mcp.session.id`, ...): a bridged MCP tool's call
//! records them on it instead of making a span of its own, as the
//! conventions ask, and the W3C context of this span is what reaches the
//! server. [`TelemetryConfig::separate_mcp_spans`] keeps both spans.
//!
//! Message content (instructions, messages, tool arguments and results) is
//! recorded only when [`TelemetryConfig::capture_content`] asks: it may
//! hold secrets and personal data.

use std::time::Duration;

use golem_model::{
    FinishReason, Message, Model, ModelError, ModelSettings, ProviderError, Request, Response,
    Role, ToolCall, Usage,
};
use tracing::Span;
use tracing::field::Empty;

use crate::error::RunError;

/// What a run's telemetry says beyond the conventions' defaults.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct TelemetryConfig {
    /// The agent's name: `gen_ai.agent.name`, and the `invoke_agent`
    /// span's name.
    pub agent_name: Option<String>,
    /// Records the conventions' opt-in content attributes:
    /// `gen_ai.system_instructions`, `gen_ai.input.messages`,
    /// `gen_ai.output.messages`, `gen_ai.tool.call.arguments` and
    /// `gen_ai.tool.call.result`. Off by default.
    pub capture_content: bool,
    /// Gives a bridged MCP tool's call a span of its own, a child of the
    /// `execute_tool` span, instead of recording the MCP attributes on
    /// the `execute_tool` span (the conventions' default). Off by default.
    pub separate_mcp_spans: bool,
}

impl TelemetryConfig {
    /// Names the agent (`gen_ai.agent.name`).
    pub fn with_agent_name(mut self, name: impl Into<String>) -> Self {
        self.agent_name = Some(name.into());
        self
    }

    /// Records message content and tool arguments and results (see
    /// [`capture_content`](Self::capture_content)).
    pub fn with_content(mut self, capture: bool) -> Self {
        self.capture_content = capture;
        self
    }

    /// See [`separate_mcp_spans`](Self::separate_mcp_spans).
    pub fn with_separate_mcp_spans(mut self, separate: bool) -> Self {
        self.separate_mcp_spans = separate;
        self
    }
}

/// The target of the metric events.
const METRICS: &str = "golem_agent::metrics";

/// The span of one run.
pub(crate) fn run_span(
    model: &dyn Model,
    config: &TelemetryConfig,
    settings: &ModelSettings,
    instructions: Option<&str>,
    typed: bool,
    streaming: bool,
    max_turns: u32,
) -> Span {
    if !tracing::enabled!(target: "golem_agent::agent", tracing::Level::INFO) {
        return Span::none();
    }
    let identity = model.identity();
    let name = match &config.agent_name {
        Some(agent) => format!("invoke_agent {agent}"),
        None => "invoke_agent".to_owned(),
    };
    let span = tracing::info_span!(
        target: "golem_agent::agent",
        "invoke_agent",
        otel.name = name,
        otel.kind = "internal",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.provider.name = identity.provider,
        gen_ai.request.model = identity.model,
        gen_ai.agent.name = config.agent_name.as_deref(),
        gen_ai.output.type = typed.then_some("json"),
        gen_ai.request.max_tokens = settings.max_output_tokens.map(i64::from),
        gen_ai.request.temperature = settings.temperature.map(f64::from),
        gen_ai.request.top_p = settings.top_p.map(f64::from),
        gen_ai.request.seed = settings.seed,
        gen_ai.request.stream = streaming,
        gen_ai.system_instructions = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        server.address = identity.server.map(|(host, _)| host),
        server.port = identity.server.map(|(_, port)| i64::from(port)),
        error.type = Empty,
        golem.max_turns = i64::from(max_turns),
        golem.requests = Empty,
    );
    if config.capture_content
        && let Some(instructions) = instructions
    {
        span.record(
            "gen_ai.system_instructions",
            serde_json::json!([{"type": "text", "content": instructions}])
                .to_string()
                .as_str(),
        );
    }
    span
}

/// Records how a run ended on its span.
pub(crate) fn run_finished(span: &Span, usage: Option<&Usage>, error: Option<&RunError>) {
    if let Some(usage) = usage {
        record_usage(span, usage);
        span.record("golem.requests", int(usage.requests));
    }
    // A run waiting for approvals has not failed.
    if let Some(error) = error
        && !matches!(error, RunError::ApprovalsPending(_))
    {
        span.record("error.type", run_error_type(error));
        span.record("otel.status_code", "ERROR");
    }
}

/// A low-cardinality name for how a run failed.
fn run_error_type(error: &RunError) -> &'static str {
    match error {
        RunError::Model { .. } => "model_error",
        RunError::Tool { .. } => "tool_error",
        RunError::ToolRetriesExhausted { .. } => "tool_retries_exhausted",
        RunError::UsageLimit { .. } => "usage_limit",
        RunError::DuplicateTool { .. } => "duplicate_tool",
        _ => "_OTHER",
    }
}

fn record_usage(span: &Span, usage: &Usage) {
    span.record("gen_ai.usage.input_tokens", int(usage.input_tokens));
    span.record("gen_ai.usage.output_tokens", int(usage.output_tokens));
    if usage.cache_read_tokens > 0 {
        span.record(
            "gen_ai.usage.cache_read.input_tokens",
            int(usage.cache_read_tokens),
        );
    }
    if usage.cache_write_tokens > 0 {
        span.record(
            "gen_ai.usage.cache_creation.input_tokens",
            int(usage.cache_write_tokens),
        );
    }
}

/// `count` as an integer attribute: OpenTelemetry has no unsigned one, and
/// `tracing-opentelemetry` writes a `u64` as a string.
fn int(count: u64) -> i64 {
    i64::try_from(count).unwrap_or(i64::MAX)
}

/// The span of one model request (`chat {model}`, kind client).
pub(crate) fn model_span(
    turn: u32,
    model: &dyn Model,
    request: &Request,
    streaming: bool,
    capture_content: bool,
) -> Span {
    if !tracing::enabled!(target: "golem_agent::agent", tracing::Level::INFO) {
        return Span::none();
    }
    let identity = model.identity();
    let settings = &request.settings;
    let span = tracing::info_span!(
        target: "golem_agent::agent",
        "chat",
        otel.name = format!("chat {}", identity.model),
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = identity.provider,
        gen_ai.request.model = identity.model,
        gen_ai.output.type = request.output.as_ref().map(|_| "json"),
        gen_ai.request.max_tokens = settings.max_output_tokens.map(i64::from),
        gen_ai.request.temperature = settings.temperature.map(f64::from),
        gen_ai.request.top_p = settings.top_p.map(f64::from),
        gen_ai.request.seed = settings.seed,
        gen_ai.request.stop_sequences = Empty,
        gen_ai.request.stream = streaming,
        gen_ai.response.model = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        server.address = identity.server.map(|(host, _)| host),
        server.port = identity.server.map(|(_, port)| i64::from(port)),
        error.type = Empty,
        golem.turn = i64::from(turn),
        golem.messages = int(request.messages.len() as u64),
        golem.tools = int(request.tools.len() as u64),
    );
    if !settings.stop.is_empty() {
        let stops: Vec<&str> = settings.stop.iter().map(String::as_str).collect();
        record_strings(&span, "gen_ai.request.stop_sequences", &stops);
    }
    if capture_content {
        span.record(
            "gen_ai.input.messages",
            input_messages(&request.messages).as_str(),
        );
    }
    span
}

/// Records how a model request ended on its span, and its metrics.
pub(crate) fn model_finished(
    span: &Span,
    model: &dyn Model,
    result: &Result<Response, ModelError>,
    took: Duration,
    capture_content: bool,
) {
    let error_type = match result {
        Ok(response) => {
            record_usage(span, &response.usage);
            if let Some(answering) = &response.model {
                span.record("gen_ai.response.model", answering.as_str());
            }
            if let Some(id) = &response.id {
                span.record("gen_ai.response.id", id.as_str());
            }
            record_strings(
                span,
                "gen_ai.response.finish_reasons",
                &[finish_reason(&response.finish_reason)],
            );
            if capture_content {
                span.record("gen_ai.output.messages", output_messages(response).as_str());
            }
            None
        }
        Err(error) => {
            let error_type = model_error_type(error);
            span.record("error.type", error_type.as_str());
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_description", error.message());
            Some(error_type)
        }
    };
    if !tracing::enabled!(target: METRICS, tracing::Level::INFO) {
        return;
    }
    let identity = model.identity();
    let response_model = result.as_ref().ok().and_then(|r| r.model.as_deref());
    tracing::event!(
        target: METRICS,
        tracing::Level::INFO,
        histogram.gen_ai.client.operation.duration = took.as_secs_f64(),
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = identity.provider,
        gen_ai.request.model = identity.model,
        gen_ai.response.model = response_model,
        server.address = identity.server.map(|(host, _)| host),
        server.port = identity.server.map(|(_, port)| i64::from(port)),
        error.type = error_type.as_deref(),
    );
    if let Ok(response) = result {
        for (kind, tokens) in [
            ("input", response.usage.input_tokens),
            ("output", response.usage.output_tokens),
        ] {
            tracing::event!(
                target: METRICS,
                tracing::Level::INFO,
                histogram.gen_ai.client.token.usage = tokens,
                gen_ai.operation.name = "chat",
                gen_ai.provider.name = identity.provider,
                gen_ai.token.type = kind,
                gen_ai.request.model = identity.model,
                gen_ai.response.model = response_model,
                server.address = identity.server.map(|(host, _)| host),
                server.port = identity.server.map(|(_, port)| i64::from(port)),
            );
        }
    }
}

/// The conventions' name for why a model stopped.
fn finish_reason(reason: &FinishReason) -> &str {
    match reason {
        FinishReason::Stop => "stop",
        FinishReason::Length => "length",
        FinishReason::ToolCalls => "tool_call",
        FinishReason::ContentFilter => "content_filter",
        FinishReason::Other(other) => other,
    }
}

/// A low-cardinality name for a model error: the provider's HTTP status,
/// or the kind of failure.
fn model_error_type(error: &ModelError) -> String {
    let provider =
        std::error::Error::source(error).and_then(|source| source.downcast_ref::<ProviderError>());
    match provider {
        Some(ProviderError {
            status: Some(status),
            ..
        }) => status.to_string(),
        Some(provider) => format!("{:?}", provider.kind).to_lowercase(),
        None => "_OTHER".to_owned(),
    }
}

/// The span of one tool call (`execute_tool {tool}`, kind internal): its
/// size, not its arguments, unless content is captured.
pub(crate) fn tool_span(turn: u32, tool: &str, call: &ToolCall, config: &TelemetryConfig) -> Span {
    if !tracing::enabled!(target: "golem_agent::agent", tracing::Level::INFO) {
        return Span::none();
    }
    let span = match config.separate_mcp_spans {
        // The MCP attributes undeclared: a bridged call makes its own span.
        true => tracing::info_span!(
            target: "golem_agent::agent",
            "execute_tool",
            otel.name = format!("execute_tool {tool}"),
            otel.kind = "internal",
            otel.status_code = Empty,
            otel.status_description = Empty,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool,
            gen_ai.tool.call.id = call.id.as_str(),
            gen_ai.tool.type = "function",
            gen_ai.tool.call.arguments = Empty,
            gen_ai.tool.call.result = Empty,
            error.type = Empty,
            golem.turn = i64::from(turn),
            golem.argument_bytes = int(call.arguments.get().len() as u64),
            golem.result_bytes = Empty,
        ),
        false => tracing::info_span!(
            target: "golem_agent::agent",
            "execute_tool",
            otel.name = format!("execute_tool {tool}"),
            otel.kind = "internal",
            otel.status_code = Empty,
            otel.status_description = Empty,
            gen_ai.operation.name = "execute_tool",
            gen_ai.tool.name = tool,
            gen_ai.tool.call.id = call.id.as_str(),
            gen_ai.tool.type = "function",
            gen_ai.tool.call.arguments = Empty,
            gen_ai.tool.call.result = Empty,
            error.type = Empty,
            mcp.method.name = Empty,
            mcp.protocol.version = Empty,
            mcp.session.id = Empty,
            jsonrpc.request.id = Empty,
            network.transport = Empty,
            network.protocol.name = Empty,
            server.address = Empty,
            server.port = Empty,
            rpc.response.status_code = Empty,
            golem.turn = i64::from(turn),
            golem.argument_bytes = int(call.arguments.get().len() as u64),
            golem.result_bytes = Empty,
        ),
    };
    if config.capture_content {
        span.record("gen_ai.tool.call.arguments", call.arguments.get());
    }
    span
}

/// Records how a tool call ended on its span: `outcome` is its label
/// ("ok", "rejected", "failed", "timed out" or "cancelled"), `result` the
/// text sent back to the model (its size always; itself when content is
/// captured).
pub(crate) fn tool_finished(
    span: &Span,
    outcome: &'static str,
    result: Option<&str>,
    capture_content: bool,
) {
    if let Some(result) = result {
        span.record("golem.result_bytes", int(result.len() as u64));
        if capture_content && outcome == "ok" {
            span.record("gen_ai.tool.call.result", result);
        }
    }
    let error_type = match outcome {
        "ok" => return,
        // The tool answered, with an error result (MCP's `isError`).
        "rejected" => "tool_error",
        "timed out" => "timeout",
        "cancelled" => "cancelled",
        _ => "_OTHER",
    };
    span.record("error.type", error_type);
    span.record("otel.status_code", "ERROR");
}

/// Records `values` as the string array `key` (feature `otel`: a real
/// array attribute; without it, the values joined by commas).
fn record_strings(span: &Span, key: &'static str, values: &[&str]) {
    // Nobody listens: no array is made for nothing.
    if span.is_disabled() {
        return;
    }
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let array = opentelemetry::Array::String(
            values
                .iter()
                .map(|value| opentelemetry::StringValue::from(value.to_string()))
                .collect(),
        );
        span.set_attribute(key, opentelemetry::Value::Array(array));
    }
    #[cfg(not(feature = "otel"))]
    span.record(key, values.join(",").as_str());
}

/// Messages as the conventions' `gen_ai.input.messages` shows them: a
/// role and parts (text, tool calls, tool call responses; an image as a
/// part naming its kind, without its bytes).
fn input_messages(messages: &[Message]) -> String {
    let shown: Vec<serde_json::Value> = messages
        .iter()
        .map(|message| {
            let role = match message.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Tool => "tool",
            };
            let mut parts = Vec::new();
            match &message.tool_call_id {
                Some(id) => parts.push(serde_json::json!({
                    "type": "tool_call_response", "id": id, "response": message.content,
                })),
                None if !message.content.is_empty() => {
                    parts.push(serde_json::json!({"type": "text", "content": message.content}));
                }
                None => {}
            }
            parts.extend(message.tool_calls.iter().map(tool_call_part));
            parts.extend(
                message
                    .images
                    .iter()
                    .map(|_| serde_json::json!({"type": "blob", "modality": "image"})),
            );
            serde_json::json!({"role": role, "parts": parts})
        })
        .collect();
    serde_json::Value::Array(shown).to_string()
}

fn tool_call_part(call: &ToolCall) -> serde_json::Value {
    serde_json::json!({
        "type": "tool_call",
        "id": call.id,
        "name": call.name,
        "arguments": serde_json::from_str::<serde_json::Value>(call.arguments.get()).unwrap_or_default(),
    })
}

/// A response as `gen_ai.output.messages` shows it.
fn output_messages(response: &Response) -> String {
    let mut parts = Vec::new();
    if !response.text.is_empty() {
        parts.push(serde_json::json!({"type": "text", "content": response.text}));
    }
    parts.extend(response.tool_calls.iter().map(tool_call_part));
    serde_json::json!([{
        "role": "assistant",
        "parts": parts,
        "finish_reason": finish_reason(&response.finish_reason),
    }])
    .to_string()
}

/// A call of a tool the agent does not have, answered with a correction: a
/// `WARN` event (target `golem_agent::agent`) with the turn, the name the model
/// used and the call's id.
pub(crate) fn unknown_tool(turn: u32, call: &ToolCall) {
    tracing::warn!(
        target: "golem_agent::agent",
        turn,
        tool = %call.name,
        call_id = %call.id,
        "the model called a tool the agent does not have; told it the tools there are"
    );
}
