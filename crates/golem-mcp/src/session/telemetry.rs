//! The session's telemetry, by OpenTelemetry's MCP semantic conventions
//! and through the `tracing` facade (ADR 0035): a client span per request
//! sent (`{mcp.method.name} {target}`), a server span per request the
//! server sends us, one per notification sent, and the events the
//! `tracing-opentelemetry` metrics layer turns into the histograms
//! `mcp.client.operation.duration` and `mcp.client.session.duration`.
//!
//! Nothing is made while nobody listens: each entry point first asks
//! `tracing` whether its callsite is enabled, a load of one static. No
//! argument, result or message text goes into an attribute; the only
//! values taken from a request are its method, its tool or prompt name
//! and a resource's URI, as the conventions ask.
//!
//! A `tools/call` made directly inside a span that declares the field
//! `mcp.method.name` (the agent's `execute_tool` span) makes no span of its
//! own: the MCP attributes go on that span, as the conventions ask when an
//! outer GenAI span already traces the tool's execution.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use bytes::Bytes;
use tracing::field::Empty;
use tracing::{Instrument, Level, Span};

use crate::error::Error;
use crate::wire::transport::Peer;
use crate::wire::transport_error::TransportError;

/// The target of the spans, so that an application can filter them.
pub(crate) const SPAN_TARGET: &str = "golem_mcp::client";

/// The span one request is traced in: its own, or the outer span that
/// takes its attributes. Dropped unfinished (the caller gave up on the
/// request), it records the request as cancelled.
pub(crate) struct RequestSpan {
    span: Span,
    method: &'static str,
    /// The tool's name, for the metric's attributes.
    tool: Option<String>,
    protocol: Option<&'static str>,
    network_transport: Option<&'static str>,
    started: Instant,
    finished: AtomicBool,
}

/// What a request's span says of its connection, asked only while
/// anything listens.
pub(crate) struct Reached {
    /// The negotiated revision, once there is one.
    pub(crate) protocol: Option<&'static str>,
    /// Where the connection goes.
    pub(crate) peer: Peer,
    /// The session the server assigned, if any.
    pub(crate) session_id: Option<String>,
}

/// Whether anything listens to the client's spans: one load of a static
/// while nobody does.
pub(crate) fn listening() -> bool {
    tracing::enabled!(target: SPAN_TARGET, Level::INFO)
}

/// The span of request `method` about `target`, when anything listens to
/// it; `reached` tells where the request goes.
pub(crate) fn request_span(
    method: &'static str,
    target: Option<&str>,
    reached: impl FnOnce() -> Reached,
) -> Option<RequestSpan> {
    if !listening() {
        return None;
    }
    let outer = Span::current();
    let takes_attributes = method == "tools/call"
        && outer
            .metadata()
            .is_some_and(|meta| meta.fields().field("mcp.method.name").is_some());
    let span = match takes_attributes {
        true => outer,
        false => client_span(method, target),
    };
    if span.is_disabled() {
        return None;
    }
    span.record("mcp.method.name", method);
    match (method, target) {
        // An outer span names the tool as its agent offers it.
        ("tools/call", Some(_)) if takes_attributes => {}
        ("tools/call", Some(tool)) => {
            span.record("gen_ai.tool.name", tool);
            span.record("gen_ai.operation.name", "execute_tool");
        }
        ("prompts/get", Some(prompt)) => {
            span.record("gen_ai.prompt.name", prompt);
        }
        ("resources/read" | "resources/subscribe" | "resources/unsubscribe", Some(uri)) => {
            span.record("mcp.resource.uri", uri);
        }
        _ => {}
    }
    let Reached {
        protocol,
        peer,
        session_id,
    } = reached();
    if let Some(version) = protocol {
        span.record("mcp.protocol.version", version);
    }
    record_peer(&span, &peer);
    if let Some(session) = session_id {
        span.record("mcp.session.id", session.as_str());
    }
    Some(RequestSpan {
        span,
        method,
        tool: (method == "tools/call")
            .then(|| target.map(str::to_owned))
            .flatten(),
        protocol,
        network_transport: peer.network_transport,
        started: Instant::now(),
        finished: AtomicBool::new(false),
    })
}

fn client_span(method: &str, target: Option<&str>) -> Span {
    // A tool's or a prompt's name makes the span's name; a resource's URI
    // would make too many names, so it stays an attribute.
    let name: Cow<'_, str> = match (method, target) {
        ("tools/call" | "prompts/get", Some(target)) => format!("{method} {target}").into(),
        _ => method.into(),
    };
    tracing::info_span!(
        target: SPAN_TARGET,
        "mcp.request",
        otel.name = %name,
        otel.kind = "client",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        gen_ai.operation.name = Empty,
        mcp.resource.uri = Empty,
        jsonrpc.request.id = Empty,
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        network.transport = Empty,
        network.protocol.name = Empty,
        server.address = Empty,
        server.port = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
    )
}

fn record_peer(span: &Span, peer: &Peer) {
    if let Some(transport) = peer.network_transport {
        span.record("network.transport", transport);
    }
    if let Some(protocol) = peer.protocol_name {
        span.record("network.protocol.name", protocol);
    }
    if let Some(address) = &peer.address {
        span.record("server.address", address.as_str());
    }
    if let Some(port) = peer.port {
        // An integer attribute: OpenTelemetry has no unsigned one, and
        // `tracing-opentelemetry` writes a `u64` as a string.
        span.record("server.port", i64::from(port));
    }
}

impl RequestSpan {
    /// The span the request runs in.
    pub(crate) fn span(&self) -> &Span {
        &self.span
    }

    /// Runs `exchanged` (the request's exchange) in the span, then records
    /// how it ended.
    pub(crate) async fn run(
        &self,
        exchanged: impl Future<Output = Result<Bytes, Error>>,
    ) -> Result<Bytes, Error> {
        let result = exchanged.instrument(self.span.clone()).await;
        self.finish(&result);
        result
    }

    /// The request got id `id`.
    pub(crate) fn sent_as(&self, id: u64) {
        self.span
            .record("jsonrpc.request.id", id.to_string().as_str());
    }

    /// The request ended with `result`: its error, if any, recorded, and
    /// its duration measured.
    fn finish(&self, result: &Result<Bytes, Error>) {
        self.finished.store(true, Ordering::Relaxed);
        let failure = match result {
            Ok(reply) => reply_failure(self.method, reply),
            Err(error) => Some(error_failure(error)),
        };
        self.ended(failure);
    }

    /// The request's answer was read and judged by its caller, with
    /// `error` when it failed: for a request sent and answered apart (the
    /// first `initialize`).
    pub(crate) fn settled(&self, error: Option<&Error>) {
        self.finished.store(true, Ordering::Relaxed);
        self.ended(error.map(error_failure));
    }

    fn ended(&self, failure: Option<Failure>) {
        let error_type = failure.as_ref().map(|failure| failure.error_type.clone());
        if let Some(failure) = failure {
            self.span.record("error.type", &*failure.error_type);
            if let Some(code) = failure.status_code {
                self.span
                    .record("rpc.response.status_code", code.to_string().as_str());
            }
            self.span.record("otel.status_code", "ERROR");
            if let Some(message) = failure.message {
                self.span
                    .record("otel.status_description", message.as_str());
            }
        }
        operation_duration(
            self.method,
            self.tool.as_deref(),
            self.protocol,
            self.network_transport,
            error_type.as_deref(),
            self.started.elapsed().as_secs_f64(),
        );
    }
}

impl Drop for RequestSpan {
    fn drop(&mut self) {
        if !self.finished.load(Ordering::Relaxed) {
            self.ended(Some(Failure {
                error_type: "cancelled".into(),
                status_code: None,
                message: Some("the caller gave up on the request".into()),
            }));
        }
    }
}

/// How `error` is told on a request's span: a JSON-RPC error with its
/// code and message.
fn error_failure(error: &Error) -> Failure {
    Failure {
        error_type: error_type(error),
        status_code: match error {
            Error::Protocol { source, .. } => Some(source.code),
            _ => None,
        },
        message: match error {
            Error::Protocol { source, .. } => Some(source.message.clone()),
            _ => None,
        },
    }
}

/// How a request failed, as its span says it.
struct Failure {
    error_type: Cow<'static, str>,
    status_code: Option<i64>,
    /// The JSON-RPC error's message: the span's status description.
    message: Option<String>,
}

/// The failure a reply reports: a JSON-RPC error, or a tool's `isError`
/// result. Read only while a span listens.
fn reply_failure(method: &str, reply: &Bytes) -> Option<Failure> {
    #[derive(serde::Deserialize)]
    struct Reply {
        error: Option<ErrorObject>,
        result: Option<ResultFlags>,
    }
    #[derive(serde::Deserialize)]
    struct ErrorObject {
        code: Option<i64>,
        message: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct ResultFlags {
        #[serde(rename = "isError", default)]
        is_error: bool,
    }
    let reply: Reply = serde_json::from_slice(reply).ok()?;
    if let Some(error) = reply.error {
        let code = error.code.unwrap_or(0);
        return Some(Failure {
            error_type: code.to_string().into(),
            status_code: Some(code),
            message: error.message,
        });
    }
    match reply.result {
        Some(result) if method == "tools/call" && result.is_error => Some(Failure {
            error_type: "tool_error".into(),
            status_code: None,
            message: None,
        }),
        _ => None,
    }
}

/// A low-cardinality name for `error`: a JSON-RPC error's code, an HTTP
/// status, or the kind of failure.
pub(crate) fn error_type(error: &Error) -> Cow<'static, str> {
    match error {
        Error::Protocol { source, .. } => source.code.to_string().into(),
        Error::Transport { source, .. } => transport_error_type(source),
        Error::Timeout { .. } => "timeout".into(),
        Error::Closed { .. } => "closed".into(),
        Error::InvalidResponse { .. } => "invalid_response".into(),
        Error::VersionMismatch { .. } => "version_mismatch".into(),
        Error::TaskCancelled { .. } => "cancelled".into(),
        Error::Spawn { .. } => "spawn".into(),
        _ => "_OTHER".into(),
    }
}

/// A low-cardinality name for a transport's failure.
pub(crate) fn transport_error_type(error: &TransportError) -> Cow<'static, str> {
    match error {
        TransportError::HttpStatus(status) => status.status.to_string().into(),
        TransportError::Io { .. } => "io".into(),
        TransportError::ProcessExited(_) => "process_exited".into(),
        TransportError::MessageTooLarge { .. } => "message_too_large".into(),
        TransportError::Http { .. } => "http".into(),
        TransportError::StreamEnded { .. } => "stream_ended".into(),
        TransportError::UnexpectedResponse { .. } => "unexpected_response".into(),
        TransportError::ConnectionClosed => "connection_closed".into(),
        TransportError::Closed => "closed".into(),
        TransportError::Authorization(_) => "authorization".into(),
        _ => "_OTHER".into(),
    }
}

/// `mcp.client.operation.duration`, as an event the metrics layer reads.
fn operation_duration(
    method: &str,
    tool: Option<&str>,
    protocol: Option<&str>,
    network_transport: Option<&str>,
    error_type: Option<&str>,
    seconds: f64,
) {
    tracing::event!(
        target: METRICS_TARGET,
        Level::INFO,
        histogram.mcp.client.operation.duration = seconds,
        mcp.method.name = method,
        gen_ai.tool.name = tool,
        gen_ai.operation.name = tool.map(|_| "execute_tool"),
        mcp.protocol.version = protocol,
        network.transport = network_transport,
        error.type = error_type,
    );
}

/// The target of the metric events (`histogram.*` fields, for
/// `tracing-opentelemetry`'s metrics layer): other layers filter it out.
pub(crate) const METRICS_TARGET: &str = "golem_mcp::metrics";

/// `mcp.client.session.duration`: a connection that lasted `lasted` ended,
/// failed with `failure` or closed; `reached` gives its revision and
/// `network.transport`, asked only while anything listens.
pub(crate) fn session_ended(
    failure: Option<&TransportError>,
    lasted: std::time::Duration,
    reached: impl FnOnce() -> (Option<&'static str>, Option<&'static str>),
) {
    if !tracing::enabled!(target: METRICS_TARGET, Level::INFO) {
        return;
    }
    let (protocol, network_transport) = reached();
    let error_type = failure.map(transport_error_type);
    tracing::event!(
        target: METRICS_TARGET,
        Level::INFO,
        histogram.mcp.client.session.duration = lasted.as_secs_f64(),
        mcp.protocol.version = protocol,
        network.transport = network_transport,
        error.type = error_type.as_deref(),
    );
}

/// The span of notification `method` sent, when anything listens.
pub(crate) fn notification_span(method: &str, protocol: Option<&str>) -> Span {
    tracing::info_span!(
        target: SPAN_TARGET,
        "mcp.notification",
        otel.name = method,
        otel.kind = "client",
        mcp.method.name = method,
        mcp.protocol.version = protocol,
    )
}

/// The span a request from the server is handled in (kind server), when
/// anything listens: `{method}` with its id; the caller sets its parent
/// from the request's trace context.
pub(crate) fn server_request_span(method: &str, raw_id: &str, protocol: Option<&str>) -> Span {
    tracing::info_span!(
        target: SPAN_TARGET,
        "mcp.server_request",
        otel.name = method,
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = raw_id.trim_matches('"'),
        mcp.protocol.version = protocol,
        error.type = Empty,
        rpc.response.status_code = Empty,
    )
}

/// A server request's handler failed with JSON-RPC error `code`.
pub(crate) fn server_request_failed(span: &Span, code: i64, message: &str) {
    let code = code.to_string();
    span.record("error.type", code.as_str());
    span.record("rpc.response.status_code", code.as_str());
    span.record("otel.status_code", "ERROR");
    span.record("otel.status_description", message);
}
