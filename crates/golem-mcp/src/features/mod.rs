//! What a server offers, as `Client` methods and their types: tools
//! (`tools/`: listing, the plain call, their details, the headers a modern
//! HTTP call mirrors, output-schema checks), tools run as tasks (`tasks/`:
//! 2025-11-25's tasks in `mod.rs`, the 2026-07-28 tasks extension in
//! `modern.rs`, what both share in `options.rs`), resources, prompts,
//! argument completion, and the level of its log messages.
//!
//! Each feature adds an `impl Client` block on the session's request path
//! (`request`, `send_request`, `list_all`) and keeps its per-client state
//! in the session's `FeatureState`. A feature that differs per era matches
//! on the era at the call site.
//!
//! Architecture invariant: features never touch the transport or the
//! request table directly, and know nothing of the agent bridge or of
//! configuration files.

pub(crate) mod completion;
pub(crate) mod forward;
pub(crate) mod logging;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod tasks;
pub(crate) mod tools;
