//! An MCP server's tools as a [`Toolset`] that stays current: re-listed
//! when the server announces `notifications/tools/list_changed`.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use golem_tool::{Tool, Toolset};
use tokio::task::JoinHandle;

use crate::bridge::as_tools::{BridgeConfig, as_tools_prefixed};
use crate::error::Error;
use crate::session::client::Client;
use crate::session::notifications::{Notifications, ServerNotification};

/// How an [`McpToolset`] presents its server's tools.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolsetConfig {
    /// The name used in messages (a clash names both toolsets); the
    /// server's own name when `None`.
    pub name: Option<String>,
    /// Put before every tool name, with `_` (`fs` gives `fs_read_file`), so
    /// that two servers' tools cannot clash; calls still name the server's
    /// tool. `None`: the server's names as they are.
    pub prefix: Option<String>,
    /// How long to wait after a change is announced before listing again,
    /// so that a burst of announcements costs one `tools/list` (100 ms).
    pub debounce: Duration,
    /// How the tools present results to the model (see [`BridgeConfig`]).
    pub bridge: BridgeConfig,
}

impl Default for ToolsetConfig {
    fn default() -> Self {
        ToolsetConfig {
            name: None,
            prefix: None,
            debounce: Duration::from_millis(100),
            bridge: BridgeConfig::default(),
        }
    }
}

impl ToolsetConfig {
    /// The same configuration with `prefix` before every tool name.
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// The same configuration, presenting results as `bridge` says
    /// (linked resources read inline, say).
    pub fn with_bridge(mut self, bridge: BridgeConfig) -> Self {
        self.bridge = bridge;
        self
    }
}

/// The tools of one MCP server, as an agent's [`Toolset`]: bridged like
/// [`as_tools`](crate::as_tools), and listed again (in the background,
/// debounced) whenever the server announces that they changed, so the next
/// model request sees the new list. A call already running is not
/// disturbed. If listing again fails, the previous list stays (and a
/// warning is logged).
///
/// The toolset keeps a handle on the client while it lives (to list
/// again); dropping it stops the watching.
///
/// ```no_run
/// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
/// use std::sync::Arc;
/// use golem_mcp::{McpToolset, ToolsetConfig};
///
/// let files = McpToolset::<()>::new(&client, ToolsetConfig::default().with_prefix("fs")).await?;
/// let toolsets: Vec<Arc<dyn golem_tool::Toolset<()>>> = vec![Arc::new(files)];
/// // AgentConfig { toolsets, .. }
/// # Ok(())
/// # }
/// ```
pub struct McpToolset<Deps> {
    name: String,
    tools: Arc<RwLock<Vec<Tool<Deps>>>>,
    watcher: JoinHandle<()>,
}

impl<Deps> std::fmt::Debug for McpToolset<Deps> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolset")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<Deps> Drop for McpToolset<Deps> {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

impl<Deps: Send + Sync + 'static> McpToolset<Deps> {
    /// Lists the tools of `client`'s server (initialized) and starts
    /// watching for changes. Fails as [`as_tools`](crate::as_tools) does.
    ///
    /// Cancel safe: nothing is started before the listing has completed; a
    /// dropped call leaves no watcher behind.
    pub async fn new(client: &Client, config: ToolsetConfig) -> Result<Self, Error> {
        // Subscribed before listing: a change announced meanwhile is seen.
        let notifications = client.notifications();
        let prefix = config.prefix.clone();
        let tools = as_tools_prefixed(client, prefix.as_deref(), &config.bridge).await?;
        let tools = Arc::new(RwLock::new(tools));
        let name = config
            .name
            .clone()
            .or_else(|| client.server().map(|server| server.name.clone()))
            .unwrap_or_else(|| "an MCP server".to_owned());
        let watcher = tokio::spawn(watch(
            client.clone(),
            notifications,
            Arc::clone(&tools),
            config,
        ));
        Ok(McpToolset {
            name,
            tools,
            watcher,
        })
    }
}

/// Lists the tools again after each announced change, debounced, until the
/// client's notifications end.
async fn watch<Deps: Send + Sync + 'static>(
    client: Client,
    mut notifications: Notifications,
    tools: Arc<RwLock<Vec<Tool<Deps>>>>,
    config: ToolsetConfig,
) {
    while let Some(notification) = notifications.recv().await {
        if notification != ServerNotification::ToolsListChanged {
            continue;
        }
        tokio::time::sleep(config.debounce).await;
        // Whatever else arrived meanwhile is covered by this listing.
        while let Ok(Some(_)) = tokio::time::timeout(Duration::ZERO, notifications.recv()).await {}
        match as_tools_prefixed(&client, config.prefix.as_deref(), &config.bridge).await {
            Ok(listed) => *tools.write().unwrap_or_else(PoisonError::into_inner) = listed,
            Err(error) => {
                tracing::warn!(%error, "mcp: listing the server's changed tools failed; keeping the previous list");
            }
        }
    }
}

impl<Deps: Send + Sync + 'static> Toolset<Deps> for McpToolset<Deps> {
    fn name(&self) -> &str {
        &self.name
    }

    fn tools(&self) -> Vec<Tool<Deps>> {
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
