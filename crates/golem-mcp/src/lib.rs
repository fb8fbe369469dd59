//! A [Model Context Protocol](https://modelcontextprotocol.io) client: it
//! speaks MCP to a server over stdio or streamable HTTP, discovers the
//! server's tools, calls them, and bridges them into
//! [`golem_tool::Tool`]s any Golem agent can register.
//!
//! - [`StdioTransport`] runs a server as a child process and owns it.
//! - `HttpTransport` reaches a streamable-HTTP endpoint (feature `http`, on
//!   by default; reqwest with rustls, no OpenSSL).
//! - [`auth`] authorizes with OAuth 2.1 servers that require it (feature
//!   `http`): an auth provider in `HttpConfig::auth`.
//! - [`Client`] performs the handshake and the requests over any
//!   [`Transport`], many in flight at once, honouring cancellation (drop the
//!   future) at every await point; an inbound task answers the server
//!   meanwhile.
//! - [`ClientConfig`] registers what the client offers the server:
//!   handlers for sampling ([`SamplingHandler`], or any model with
//!   [`sampling_with_model`]) and elicitation ([`ElicitationHandler`]), and
//!   roots; [`Client::notifications`] subscribes to what the server tells.
//! - [`as_tools`] bridges a server's tools into agent tools (a snapshot);
//!   [`McpToolset`] keeps them current as the server changes them.
//! - [`config`] reads the `mcpServers` files desktop MCP hosts use into
//!   transport configurations.
//! - [`Error`] says which operation failed and why; a server's JSON-RPC error
//!   is the typed [`ProtocolError`].
//!
//! ```no_run
//! use golem_mcp::{Client, StdioConfig, StdioTransport};
//!
//! # async fn run() -> Result<(), golem_mcp::Error> {
//! let client = Client::new(StdioTransport::spawn(StdioConfig {
//!     args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
//!     ..StdioConfig::new("npx")
//! })?);
//! client.initialize().await?;
//! let tools = client.list_tools().await?;
//! println!("{} tools", tools.len());
//! client.close().await?;
//! # Ok(())
//! # }
//! ```
//!
//! The decisions behind this crate are recorded in `docs/adr/` of the
//! repository; `ARCHITECTURE.md` maps the modules.

#[cfg(feature = "http")]
pub mod auth;
mod bridge;
mod client;
pub mod config;
mod connection;
mod elicitation;
mod error;
mod handlers;
#[cfg(feature = "http")]
mod http;
mod inbound;
mod jsonrpc;
pub mod memory;
mod model_sampling;
mod notifications;
mod protocol;
mod roots;
mod sampling;
mod stdio;
mod tools;
mod toolset;
mod transport;

pub use bridge::as_tools;
pub use client::{Client, ClientConfig};
pub use elicitation::{Choice, ElicitationRequest, ElicitationResponse, Field, FieldKind, Form};
pub use error::{Error, HttpStatusError, ProcessExit, TransportError};
pub use handlers::{
    ElicitationHandler, HandlerError, HandlerFuture, RequestContext, SamplingHandler,
};
#[cfg(feature = "http")]
pub use http::{HttpConfig, HttpTransport, ResumePolicy};
pub use jsonrpc::ProtocolError;
pub use model_sampling::{ModelSampling, sampling_with_model};
pub use notifications::{LogLevel, LogMessage, Notifications, ServerNotification};
pub use protocol::{ClientInfo, LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, ServerInfo};
pub use roots::Root;
pub use sampling::{
    CreateMessageRequest, CreateMessageResult, ModelHint, ModelPreferences, Role, SamplingContent,
    SamplingMessage, StopReason, ToolChoice,
};
pub use stdio::{
    DEFAULT_MAX_MESSAGE_BYTES, ServerStderr, ShutdownTimeouts, StderrMode, StdioConfig,
    StdioTransport,
};
pub use tools::{CallResult, Content, Progress, ToolInfo};
pub use toolset::{McpToolset, ToolsetConfig};
pub use transport::{Inbound, Outgoing, OutgoingKind, RequestId, Transport};
