//! The Golem agent.
//!
//! An [`Agent<Deps, Output>`](Agent) asks a [`Model`](model::Model), runs
//! the [`Tool`](tool::Tool)s the model calls, sends their results back, and
//! repeats until the model answers without calling a tool; a decoder turns
//! that answer into `Output` ([`decode::text`] for plain text). The loop
//! honours correction budgets (a tool's or decoder's
//! [`ModelRetry`](model::ModelRetry) goes back to the model while the budget
//! lasts), tool timeouts, sequential tools and a turn limit; see [`Agent`].
//! [`Agent::run_stream`] runs the same loop on the model's streaming API and
//! reports what happens as it happens ([`RunEvent`]: text fragments, tool
//! calls starting and finishing with their duration and outcome), for hosts
//! that show an answer while it is written.
//!
//! [`testmodel`] has models that answer offline and record what they were
//! asked, for tests and examples.
//!
//! The building blocks are re-exported, so one dependency is enough:
//!
//! - [`model`]: messages, tool calls, the [`Model`](model::Model) trait
//!   (`golem-model`);
//! - [`tool`]: [`Tool`](tool::Tool) and its errors (`golem-tool`);
//! - [`mcp`]: the Model Context Protocol client, whose
//!   [`as_tools`](mcp::as_tools) turns an MCP server's tools into agent
//!   tools (`golem-mcp`; cargo feature `mcp`, on by default).
//!
//! ```
//! use std::sync::Arc;
//! use golem_agent::testmodel::{ScriptedModel, text_response};
//! use golem_agent::{Agent, AgentConfig};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let model = ScriptedModel::new([text_response("Hello!")]);
//! let agent = Agent::<(), String>::new(Arc::new(model), golem_agent::decode::text, AgentConfig::default())?;
//! let run = agent.run((), "Say hello.").await?;
//! assert_eq!(run.output, "Hello!");
//! # Ok(())
//! # }
//! ```
//!
//! # Cargo features
//!
//! - `mcp` (default): re-exports `golem-mcp` as [`mcp`], with the stdio
//!   transport only: no HTTP or TLS stack is compiled.
//! - `mcp-http` (default): `mcp` with the streamable-HTTP transport
//!   (`golem-mcp`'s `http` feature: reqwest with rustls). A stdio-only
//!   application sets `default-features = false, features = ["mcp"]`.
//!
//! The run loop's decisions are recorded in `docs/adr/0003-agent-run-loop.md`
//! of the repository.

mod agent;
mod conversation;
pub mod decode;
mod error;
mod telemetry;
pub mod testmodel;
mod typed;

pub use agent::{
    Agent, AgentConfig, ApprovalRequest, Approver, DEFAULT_MAX_TOOL_OUTPUT, DEFAULT_MAX_TURNS,
    DEFAULT_SEARCH_ABOVE, Decision, Kept, MemoryOutputStore, OfferedTools, OutputStore,
    READ_OUTPUT_TOOL, READ_OUTPUT_TOOL_FALLBACK, RunEvent, RunOutput, RunSink, SEARCH_TOOL,
    SEARCH_TOOL_FALLBACK, ToolFailures, ToolOutcome, ToolSearch,
};
pub use agent::{Budget, Limit, Reached, Spent, UsageLimits};
pub use agent::{PendingApprovals, PendingCall};
pub use conversation::{
    Conversation, ConversationError, estimated_tokens, fit_tokens, keep_last_exchanges,
};
pub use decode::DecodeError;
pub use error::{ConfigError, RunError};
pub use telemetry::TelemetryConfig;

// The re-exported crates are inlined, so that `cargo doc -p golem-agent` gives
// each its pages under `golem_agent::` (a plain re-export of a crate only links
// to the crate's own docs, which `--no-deps` does not build).

/// Provider-neutral model types: the `golem-model` crate.
#[doc(inline)]
pub use golem_model as model;
/// Agent tools: the `golem-tool` crate.
#[doc(inline)]
pub use golem_tool as tool;

/// The Model Context Protocol client: the `golem-mcp` crate (cargo feature
/// `mcp`, on by default).
#[cfg(feature = "mcp")]
#[doc(inline)]
pub use golem_mcp as mcp;

// The README's Rust examples, compiled (not run) as doc tests, so that the
// quick start cannot drift from the API.
#[cfg(all(doctest, feature = "mcp-http"))]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

// The Rust examples moved from the README to docs/library.md, compiled the
// same way.
#[cfg(all(doctest, feature = "mcp-http"))]
#[doc = include_str!("../../../docs/library.md")]
struct LibraryExamples;
