//! What the `features/` layer keeps per client: plain fields the session
//! holds for it (made with the client, dropped with it) and never reads.
//! A field per feature that keeps state, so that the import check sees
//! every type kept here.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::wire::mcp_headers::HeaderParams;
use crate::wire::prompt::Prompt;
use crate::wire::task::TaskOptions;

/// The state the features keep for one client.
#[derive(Default)]
pub(crate) struct FeatureState {
    /// The prompt list [`Client::get_prompt`](crate::Client::get_prompt)
    /// checks arguments against, while no change was announced since
    /// (`features/prompts.rs`).
    pub(crate) prompts: Mutex<Option<KeptPrompts>>,
    /// The header parameters of the listed tools that have any, by tool
    /// name: what a modern HTTP `tools/call` mirrors into headers
    /// (`features/tools/headers.rs`).
    pub(crate) tool_headers: Mutex<HashMap<String, Arc<HeaderParams>>>,
    /// The options of the tasks extension of 2026-07-28, when the
    /// application enabled it ([`ClientConfig::tasks`](crate::ClientConfig::tasks)).
    pub(crate) task_defaults: Option<TaskOptions>,
}

/// A prompt list as it was fetched.
#[derive(Debug)]
pub(crate) struct KeptPrompts {
    /// The list.
    pub(crate) prompts: Arc<[Prompt]>,
    /// How many prompt list changes the server had announced when the
    /// fetch began: the list is stale once the count differs.
    pub(crate) changes: u64,
}
