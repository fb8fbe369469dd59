//! Tool search (ADR 0028): when an agent offers more tools than its
//! [`ToolSearch`] setting allows, each model request carries only the tools
//! marked [always loaded](golem_tool::Tool::always_loaded), those found or
//! called so far in the conversation, and one tool, [`SEARCH_TOOL`], that
//! ranks the others ([`ToolIndex`]) and loads what it finds from the next
//! request on. [`RunSearch`] is one run's state: what is loaded (seeded from
//! the conversation's history, so a continued chat keeps its tools), the
//! index (rebuilt only when the tools change) and the search tool itself.
//! A call of any offered tool by its exact name still runs, loaded or not.
//! It knows nothing of turns, budgets or events.

use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use golem_model::{Message, Role, ToolSpec};
use golem_tool::{Tool, ToolContext, ToolError, ToolHints, ToolIndex};
use serde_json::Value;
use serde_json::value::RawValue;

use super::config::ToolSearch;
use super::gather::Offered;
use crate::error::RunError;

/// The name of the search tool a model is offered when tools are deferred
/// ([`SEARCH_TOOL_FALLBACK`] when a source offers a tool of this name).
pub const SEARCH_TOOL: &str = "search_tools";

/// The search tool's name when a source offers one named [`SEARCH_TOOL`].
pub const SEARCH_TOOL_FALLBACK: &str = "golem_search_tools";

/// How many tools one search lists when the model gives no `limit`.
const DEFAULT_LIMIT: usize = 8;
/// The most tools one search lists.
const MAX_LIMIT: usize = 25;

/// Where the agent's tools come from, in a duplicate-name error.
pub(super) const SEARCH_SOURCE: &str = "tool search";

/// The search tool's input schema.
const SEARCH_SCHEMA: &str = r#"{"type":"object","properties":{"query":{"type":"string","description":"What the tool should do, in a few words (for example: create github issue)"},"limit":{"type":"integer","minimum":1,"maximum":25,"description":"The most tools to list (default 8)"}},"required":["query"],"additionalProperties":false}"#;

/// The search tool's description.
const SEARCH_DESCRIPTION: &str = "Finds tools by what they do. More tools are available than \
     are offered here: search with a few words, and each tool found (one per line, best first, \
     its exact name first) can be called from your next step on, by that name.";

/// What the model is offered of an agent's tools at one point of a
/// conversation ([`Agent::offered_tools`](crate::Agent::offered_tools)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OfferedTools {
    /// The tools whose definitions the next model request carries, in
    /// order ([`SEARCH_TOOL`] not among them).
    pub loaded: Vec<String>,
    /// The tools only a search finds, in order; empty when every tool is
    /// offered.
    pub searchable: Vec<String>,
}

/// One request's tools as the model sees them.
pub(super) struct View<'a, Deps> {
    /// Every tool a call may name (the search tool among them when
    /// searching).
    pub(super) offered: Cow<'a, Offered<Deps>>,
    /// The definitions sent.
    pub(super) specs: Vec<ToolSpec>,
    /// The names sent, when not all tools are: what a correction lists.
    pub(super) listed: Option<Vec<String>>,
    /// The search tool's name, when it is offered.
    pub(super) search: Option<&'static str>,
}

/// One run's tool search.
pub(super) struct RunSearch<Deps> {
    mode: ToolSearch,
    shared: Arc<Shared>,
    /// The search tool, named [`SEARCH_TOOL`] and [`SEARCH_TOOL_FALLBACK`].
    tools: [Tool<Deps>; 2],
}

/// What the search tool and the run loop share.
#[derive(Default)]
struct Shared {
    /// The tools found or called so far.
    loaded: Mutex<HashSet<String>>,
    /// The index of the tools offered, with a fingerprint of them.
    index: Mutex<(u64, Arc<ToolIndex>)>,
}

impl Shared {
    fn loaded(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.loaded.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn index(&self) -> Arc<ToolIndex> {
        Arc::clone(&self.index.lock().unwrap_or_else(PoisonError::into_inner).1)
    }
}

impl<Deps: Send + Sync + 'static> RunSearch<Deps> {
    /// The search of a run continuing `history`: the tools called in it, or
    /// listed by a search in it, are loaded.
    pub(super) fn new(mode: ToolSearch, history: &[Message]) -> Self {
        let shared = Arc::new(Shared::default());
        shared.loaded().extend(loaded_in(history));
        let tools = [SEARCH_TOOL, SEARCH_TOOL_FALLBACK].map(|name| {
            let searcher = Arc::clone(&shared);
            Tool::new(
                name,
                SEARCH_DESCRIPTION,
                SEARCH_SCHEMA,
                move |_: ToolContext<Deps>, arguments: Box<RawValue>| {
                    let found = search(&searcher, &arguments);
                    async move { found }
                },
            )
            .expect("the search tool's definition is valid")
            .always_loaded(true)
            // It changes nothing: an approver need not ask about it.
            .with_hints(ToolHints::READ_ONLY)
        });
        RunSearch {
            mode,
            shared,
            tools,
        }
    }
}

impl<Deps> RunSearch<Deps> {
    /// What the next request offers of `offered`: all of it, or (when
    /// searching) the tools always loaded, those loaded so far, and the
    /// search tool, which a call may then name.
    pub(super) fn view<'a>(
        &self,
        offered: Cow<'a, Offered<Deps>>,
    ) -> Result<View<'a, Deps>, RunError> {
        if !self.mode.defers(offered.tools.len()) {
            let specs = offered.specs.clone();
            return Ok(View {
                offered,
                specs,
                listed: None,
                search: None,
            });
        }
        self.index(&offered);
        // A source's own `search_tools` keeps its name; ours takes another.
        let tool = match offered.source_of(SEARCH_TOOL) {
            None => &self.tools[0],
            Some(_) => &self.tools[1],
        };
        let search = Some(if tool.name() == SEARCH_TOOL {
            SEARCH_TOOL
        } else {
            SEARCH_TOOL_FALLBACK
        });
        let mut offered = offered.into_owned();
        offered.add(tool.clone(), SEARCH_SOURCE)?;
        let loaded = self.shared.loaded();
        let shown: Vec<usize> = (0..offered.tools.len())
            .filter(|&at| {
                let tool = &offered.tools[at];
                tool.is_always_loaded() || loaded.contains(tool.name())
            })
            .collect();
        drop(loaded);
        Ok(View {
            specs: shown.iter().map(|&at| offered.specs[at].clone()).collect(),
            listed: Some(
                shown
                    .iter()
                    .map(|&at| offered.tools[at].name().to_owned())
                    .collect(),
            ),
            offered: Cow::Owned(offered),
            search,
        })
    }

    /// Notes that the model called `tool`: it is loaded from now on.
    pub(super) fn called(&self, tool: &str) {
        let mut loaded = self.shared.loaded();
        if !loaded.contains(tool) {
            loaded.insert(tool.to_owned());
        }
    }

    /// What is loaded and what only a search finds, of `offered`.
    pub(super) fn split(&self, offered: &Offered<Deps>) -> OfferedTools {
        let names = offered.tools.iter().map(|tool| tool.name().to_owned());
        if !self.mode.defers(offered.tools.len()) {
            return OfferedTools {
                loaded: names.collect(),
                searchable: Vec::new(),
            };
        }
        let loaded = self.shared.loaded();
        let (shown, searchable) = offered
            .tools
            .iter()
            .partition::<Vec<_>, _>(|tool| tool.is_always_loaded() || loaded.contains(tool.name()));
        let named =
            |tools: Vec<&Tool<Deps>>| tools.iter().map(|tool| tool.name().to_owned()).collect();
        OfferedTools {
            loaded: named(shown),
            searchable: named(searchable),
        }
    }

    /// Rebuilds the index when the tools offered changed.
    fn index(&self, offered: &Offered<Deps>) {
        let mut hasher = DefaultHasher::new();
        for (tool, source) in offered.tools.iter().zip(&offered.sources) {
            (tool.name(), tool.title(), tool.description(), source).hash(&mut hasher);
            tool.input_schema().get().hash(&mut hasher);
        }
        let fingerprint = hasher.finish();
        let mut index = self
            .shared
            .index
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if index.0 != fingerprint || index.1.len() != offered.tools.len() {
            let tools = offered
                .tools
                .iter()
                .zip(offered.sources.iter().map(String::as_str));
            *index = (fingerprint, Arc::new(ToolIndex::new(tools)));
        }
    }
}

/// One call of the search tool: the matches, one per line, each loaded.
fn search(shared: &Shared, arguments: &RawValue) -> Result<String, ToolError> {
    let shape = || {
        ToolError::retry(format!(
            "{SEARCH_TOOL} takes {{\"query\": string, \"limit\"?: integer}}; got {}",
            arguments.get()
        ))
    };
    let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(arguments.get()) else {
        return Err(shape());
    };
    let Some(query) = fields.get("query").and_then(Value::as_str) else {
        return Err(shape());
    };
    let limit = match fields.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(limit) => match limit.as_u64() {
            Some(limit @ 1..) => limit.min(MAX_LIMIT as u64) as usize,
            _ => {
                return Err(ToolError::retry(format!(
                    "limit must be an integer from 1 to {MAX_LIMIT}; got {limit}"
                )));
            }
        },
    };
    let query = query.trim();
    if query.is_empty() {
        return Err(ToolError::retry(
            "the query is empty: say in a few words what the tool should do",
        ));
    }
    let index = shared.index();
    let found = index.search(query, limit);
    if found.is_empty() {
        return Ok(format!(
            "No tool matches {query:?}. Search again with other words, or answer without a tool."
        ));
    }
    let mut loaded = shared.loaded();
    let mut text = String::new();
    for found in found {
        loaded.insert(found.name.to_owned());
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(found.name);
        if !found.summary.is_empty() {
            text.push_str(": ");
            text.push_str(found.summary);
        }
    }
    Ok(text)
}

/// The tools a conversation loaded: those its assistant messages called,
/// and those its searches listed (each line of a search's result begins
/// with a tool's name).
fn loaded_in(history: &[Message]) -> HashSet<String> {
    let mut loaded = HashSet::new();
    for message in history {
        loaded.extend(message.tool_calls.iter().map(|call| call.name.clone()));
        let searched = matches!(
            message.tool_name.as_deref(),
            Some(SEARCH_TOOL | SEARCH_TOOL_FALLBACK)
        );
        if message.role == Role::Tool && searched {
            for line in message.content.lines() {
                let name = line.split(':').next().unwrap_or("").trim();
                if !name.is_empty() && !name.contains(' ') {
                    loaded.insert(name.to_owned());
                }
            }
        }
    }
    loaded
}
