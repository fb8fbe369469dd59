//! What a server offers, as `Client` methods and their types: tools (with
//! their details and output-schema checks), resources, prompts, argument
//! completion, tools run as tasks (`tasks.rs`, with the 2026-07-28 tasks
//! extension in `modern_tasks.rs` and what both share in `task_options.rs`),
//! and the level of its log messages.
//!
//! Each feature is one file that adds an `impl Client` block on the
//! session's `request` and `list_all` (`output.rs` and `tool_details.rs`
//! are the tools feature's types). Features never touch the transport
//! or the request table directly, and know nothing of the agent bridge or
//! of configuration files.

pub(crate) mod completion;
pub(crate) mod logging;
pub(crate) mod modern_tasks;
pub(crate) mod output;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod task_options;
pub(crate) mod tasks;
pub(crate) mod tool_details;
pub(crate) mod tool_headers;
pub(crate) mod tools;
