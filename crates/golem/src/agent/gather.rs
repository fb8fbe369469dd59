//! Tool gathering: which tools a model request offers. [`Sources`] holds
//! where they come from: the agent's fixed tools, indexed once when it is
//! built (a name given twice is a `ConfigError`), and its toolsets, asked
//! before every model request; their tools are offered after the fixed ones
//! and a name offered twice fails the run, naming both sources.
//! [`Offered`] is one request's tools, indexed by name, with each one's
//! source and spec; [`resolve`] maps a turn's calls to them (an unknown name
//! maps to none). It does not run tools, and knows nothing of turns,
//! budgets, timeouts or events.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use golem_model::{ToolCall, ToolSpec};
use golem_tool::{Tool, Toolset};

use crate::error::{ConfigError, RunError};

/// Where a run's tools come from: the agent's fixed tools and its toolsets.
pub(super) struct Sources<Deps> {
    /// The fixed tools, indexed once.
    fixed: Offered<Deps>,
    toolsets: Vec<Arc<dyn Toolset<Deps>>>,
}

impl<Deps> Sources<Deps> {
    /// Indexes the fixed `tools`, in this order; a name given twice is
    /// refused.
    pub(super) fn new(
        tools: Vec<Tool<Deps>>,
        toolsets: Vec<Arc<dyn Toolset<Deps>>>,
    ) -> Result<Self, ConfigError> {
        let mut fixed = Offered::default();
        for tool in tools {
            let name = tool.name().to_owned();
            if fixed.add(tool, FIXED).is_err() {
                return Err(ConfigError::DuplicateTool { name });
            }
        }
        Ok(Self { fixed, toolsets })
    }

    /// The fixed tools, in the order they are offered.
    pub(super) fn fixed(&self) -> &[Tool<Deps>] {
        &self.fixed.tools
    }

    /// The toolsets, in the order they are asked.
    pub(super) fn toolsets(&self) -> &[Arc<dyn Toolset<Deps>>] {
        &self.toolsets
    }

    /// The tools for the next model request: the fixed ones, then each
    /// toolset's. Borrowed when there are no toolsets.
    pub(super) fn offered(&self) -> Result<Cow<'_, Offered<Deps>>, RunError> {
        if self.toolsets.is_empty() {
            return Ok(Cow::Borrowed(&self.fixed));
        }
        let mut offered = self.fixed.clone();
        for toolset in &self.toolsets {
            for tool in toolset.tools() {
                offered.add(tool, toolset.name())?;
            }
        }
        Ok(Cow::Owned(offered))
    }
}

/// Where the agent's fixed tools come from, in messages.
const FIXED: &str = "the agent's tools";

/// The tools offered for one model request, indexed by name.
pub(super) struct Offered<Deps> {
    pub(super) tools: Vec<Tool<Deps>>,
    by_name: HashMap<String, usize>,
    /// Where each tool came from (a toolset's name, or [`FIXED`]).
    pub(super) sources: Vec<String>,
    pub(super) specs: Vec<ToolSpec>,
}

impl<Deps> Default for Offered<Deps> {
    fn default() -> Self {
        Offered {
            tools: Vec::new(),
            by_name: HashMap::new(),
            sources: Vec::new(),
            specs: Vec::new(),
        }
    }
}

// Manual: a derive would demand `Deps: Clone`.
impl<Deps> Clone for Offered<Deps> {
    fn clone(&self) -> Self {
        Offered {
            tools: self.tools.clone(),
            by_name: self.by_name.clone(),
            sources: self.sources.clone(),
            specs: self.specs.clone(),
        }
    }
}

impl<Deps> Offered<Deps> {
    /// Adds a tool from `source`; a name offered already is refused, naming
    /// both sources.
    pub(super) fn add(&mut self, tool: Tool<Deps>, source: &str) -> Result<(), RunError> {
        if let Some(&index) = self.by_name.get(tool.name()) {
            return Err(RunError::DuplicateTool {
                name: tool.name().to_owned(),
                first: self.sources[index].clone(),
                second: source.to_owned(),
            });
        }
        self.by_name
            .insert(tool.name().to_owned(), self.tools.len());
        self.specs.push(tool.spec());
        self.sources.push(source.to_owned());
        self.tools.push(tool);
        Ok(())
    }
}

/// The index of the tool each call names, or `None` for a name no offered
/// tool has (what that call gets instead is the turn loop's business).
pub(super) fn resolve<Deps>(offered: &Offered<Deps>, calls: &[ToolCall]) -> Vec<Option<usize>> {
    calls
        .iter()
        .map(|call| offered.by_name.get(&call.name).copied())
        .collect()
}

impl<Deps> Offered<Deps> {
    /// Where the offered tool `name` comes from, if one is offered.
    pub(super) fn source_of(&self, name: &str) -> Option<&str> {
        self.by_name.get(name).map(|&at| self.sources[at].as_str())
    }

    /// The offered tools' names, in the order they are offered.
    pub(super) fn names(&self) -> Vec<&str> {
        self.tools.iter().map(|tool| tool.name()).collect()
    }
}
