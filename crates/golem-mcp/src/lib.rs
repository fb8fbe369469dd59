//! A [Model Context Protocol](https://modelcontextprotocol.io) client: it
//! speaks MCP to a server over stdio or streamable HTTP, discovers the
//! server's tools, calls them, and bridges them into
//! [`golem_tool::Tool`]s any Golem agent can register.
//!
//! - [`StdioTransport`] runs a server as a child process and owns it.
//! - `HttpTransport` reaches a streamable-HTTP endpoint (feature `http`, on
//!   by default; hyper's own client for plain `http://` reached directly,
//!   reqwest with rustls for `https://`, proxies and a client you give; no
//!   OpenSSL), and falls back by itself
//!   to the deprecated HTTP+SSE transport of 2024-11-05 where a server
//!   speaks only that; `SseTransport` speaks it from the start.
//! - [`auth`] authorizes with OAuth 2.1 servers that require it (feature
//!   `http`): an auth provider in `HttpConfig::auth`.
//! - [`Client::connect`] connects over any [`Transport`] in one call;
//!   [`Client`] performs the handshake and the requests over any
//!   [`Transport`], many in flight at once, honouring cancellation (drop the
//!   future) at every await point; an inbound task answers the server
//!   meanwhile.
//! - [`ClientConfig`] registers what the client offers the server:
//!   handlers for sampling ([`SamplingHandler`], or any model with
//!   [`sampling_with_model`]) and elicitation ([`ElicitationHandler`]), and
//!   roots; [`Client::notifications`] subscribes to what the server tells.
//! - Beyond tools: resources ([`Client::list_resources`],
//!   [`Client::read_resource`], [`Client::subscribe_resource`], templates
//!   expanded with [`UriTemplate`]), prompts ([`Client::get_prompt`], its
//!   arguments checked before sending) and argument completion
//!   ([`Client::complete`]); every list follows its cursors.
//! - [`ToolInfo`] keeps everything `tools/list` says about a tool (title,
//!   [`ToolAnnotations`], icons, schemas, [`TaskSupport`]);
//!   [`Client::call_tool_checked`] checks a result's `structuredContent`
//!   against the tool's output schema ([`OutputError`] names a mismatch;
//!   feature `output-validation`, on by default: without it the content
//!   passes unvalidated and only its absence is an error).
//! - [`Client::call_tool_as_task`] runs a tool as a task (2025-11-25):
//!   polled, its result fetched, cancelled on the server when the caller
//!   goes away.
//! - [`as_tools`] bridges a server's tools into agent tools (a snapshot;
//!   [`as_tools_with`] and [`BridgeConfig`] for linked resources read
//!   inline); [`McpToolset`] keeps them current as the server changes them.
//! - [`config`] reads the `mcpServers` files desktop MCP hosts use into
//!   transport configurations.
//! - [`Observed`] wraps any transport to show every message on the wire
//!   (to a closure, or as `tracing` events).
//! - [`Error`] says which operation failed and why; a server's JSON-RPC error
//!   is the typed [`ProtocolError`].
//! - `serve` (feature `serve`) serves MCP to a host over stdio or HTTP,
//!   both eras, forwarding each host to a server through a client
//!   (`serve::Proxy`, what `golem-mcp bridge` runs) or answering from a
//!   recorded session; [`replay`] holds the recordings' format and
//!   [`ReplayTransport`](replay::ReplayTransport), a recorded session as a
//!   server in-process, for tests.
//!
//! ```no_run
//! use golem_mcp::{Client, StdioConfig, StdioTransport};
//!
//! # async fn run() -> Result<(), golem_mcp::Error> {
//! let client = Client::connect(StdioTransport::spawn(StdioConfig {
//!     args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
//!     ..StdioConfig::new("npx")
//! })?)
//! .await?;
//! let tools = client.list_tools().await?;
//! println!("{} tools", tools.len());
//! client.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! The decisions behind this crate are recorded in `docs/adr/` of the
//! repository; `ARCHITECTURE.md` maps the modules.

/// OAuth 2.1 authorization (feature `http`): the crate `golem-mcp-auth`.
#[cfg(feature = "http")]
#[doc(inline)]
pub use golem_mcp_auth as auth;

// The layers, from the bottom up: wire, error, transports, session,
// features, server_requests, client_config, bridge, config, serve. Each imports only those below
// it (ARCHITECTURE.md, "Code map of golem-mcp"; scripts/module-graph.py
// checks it).
mod bridge;
mod client_config;
pub mod config;
mod error;
mod features;
#[cfg(feature = "serve")]
pub mod serve;
mod server_requests;
mod session;
mod transports;
mod wire;

pub use transports::memory;
pub use transports::replay;

pub use bridge::as_tools::{AlwaysLoaded, BridgeConfig, as_tools, as_tools_with};
pub use bridge::lazy::{DEFAULT_START_TIMEOUT, LazyToolset, StartError, StartServer};
pub use bridge::manifest::{
    DEFAULT_MANIFEST_TTL, FileManifestStore, Manifest, ManifestStore, golem_cache_dir,
};
pub use bridge::names::{MAX_TOOL_NAME, model_tool_name};
pub use bridge::toolset::{McpToolset, ToolsetConfig};
pub use client_config::ClientConfig;
pub use error::{Error, Mismatch, OutputError};
pub use features::completion::{Completion, CompletionRef};
pub use features::prompts::{GetPromptResult, PromptMessage};
pub use features::resources::{
    ReadResourceResult, Resource, ResourceContents, ResourceSubscription, ResourceTemplate,
};
pub use features::tasks::TaskPage;
pub use features::tools::ToolInfo;
pub use features::tools::details::{Icon, TaskSupport, ToolAnnotations};
pub use server_requests::elicitation::{
    Choice, ElicitationRequest, ElicitationResponse, Field, FieldKind, Form,
};
pub use server_requests::handlers::{ElicitationHandler, SamplingHandler};
pub use server_requests::model_sampling::{ModelSampling, sampling_with_model};
pub use server_requests::sampling::{
    CreateMessageRequest, CreateMessageResult, ModelHint, ModelPreferences, SamplingContent,
    SamplingMessage, StopReason, ToolChoice,
};
pub use session::context::RequestContext;
pub use session::handle::Client;
pub use session::notifications::{
    LogLevel, LogMessage, Notifications, ServerNotification, UnknownLogLevel,
};
pub use session::progress::Progress;
pub use session::protocol::{
    ClientInfo, Era, HowChosen, LATEST_PROTOCOL_VERSION, MODERN_PROTOCOL_VERSION,
    MODERN_PROTOCOL_VERSIONS, ProtocolChoice, SUPPORTED_PROTOCOL_VERSIONS, ServerInfo,
};
pub use session::restart::RestartPolicy;
pub use session::serving::{HandlerError, HandlerFuture};
#[cfg(feature = "http")]
pub use transports::http::{HttpConfig, HttpTransport, ResumePolicy, SseFallback};
pub use transports::observe::{Observed, WireEvent};
#[cfg(feature = "http")]
pub use transports::sse::SseTransport;
pub use transports::stdio::{
    DEFAULT_MAX_MESSAGE_BYTES, ServerStderr, ShutdownTimeouts, StderrEvent, StderrLines,
    StderrMode, StdioConfig, StdioTransport,
};
pub use wire::call_result::CallResult;
pub use wire::content::{Content, Role};
pub use wire::jsonrpc::ProtocolError;
pub use wire::prompt::{Prompt, PromptArgument};
pub use wire::root::Root;
pub use wire::task::{Task, TaskOptions, TaskStatus};
pub use wire::transport::{Inbound, Outgoing, OutgoingKind, Peer, RequestId, Transport};
pub use wire::transport_error::{HttpStatusError, ProcessExit, TransportError};
pub use wire::uri_template::{UriTemplate, UriTemplateError};
