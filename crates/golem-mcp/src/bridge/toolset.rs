//! An MCP server's tools as a [`Toolset`] that stays current: re-listed
//! when the server announces `notifications/tools/list_changed` or the
//! client started the server again after losing it, and, on a
//! modern server that gave its list a time to live, once it went stale.

use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use golem_tool::{Tool, Toolset};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::bridge::as_tools::{BridgeConfig, as_tools_prefixed, bridge_listing};
use crate::error::Error;
use crate::features::tools::ToolInfo;
use crate::session::handle::Client;
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
/// The same in both eras: on a modern (2026-07-28) server the
/// announcements come on the client's `subscriptions/listen`, which the
/// toolset asks for ([`Client::notifications`]). A modern server may also
/// say how long its list stays fresh (`ttlMs`, ADR 0024): the toolset then
/// lists again only when told or stale. When asked for its tools after the
/// list went stale, it hands out the list it has and lists again in the
/// background (the next request sees the result): the specification asks
/// clients to check freshness when they need the data, never to poll.
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
    freshness: Arc<Freshness>,
    watcher: JoinHandle<()>,
}

/// When the listing goes stale, and how the watcher is told it has.
#[derive(Default)]
struct Freshness {
    /// When the server's time to live for the list runs out; `None` when
    /// it gave none (or the watcher was told already).
    stale_at: Mutex<Option<Instant>>,
    relist: Notify,
}

impl Freshness {
    /// Notes how long the list just fetched stays fresh.
    fn listed(&self, client: &Client) {
        *self.stale_at.lock().unwrap_or_else(PoisonError::into_inner) =
            client.fresh_until("tools/list");
    }

    /// Tells the watcher once when the list has gone stale.
    fn check(&self) {
        let mut stale_at = self.stale_at.lock().unwrap_or_else(PoisonError::into_inner);
        if stale_at.is_some_and(|at| Instant::now() >= at) {
            *stale_at = None;
            self.relist.notify_one();
        }
    }
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
        Ok(Self::listed(client, config).await?.0)
    }

    /// [`new`](Self::new), also returning the listing the tools were made
    /// from (each tool's JSON [verbatim](ToolInfo::verbatim), for a
    /// [`Manifest`](crate::Manifest)).
    pub async fn listed(
        client: &Client,
        config: ToolsetConfig,
    ) -> Result<(Self, Vec<ToolInfo>), Error> {
        // Subscribed before listing: a change announced meanwhile is seen.
        let notifications = client.notifications();
        let listed = client.list_tools().await?;
        let prefix = config.prefix.clone();
        let tools = bridge_listing(client, listed.clone(), prefix.as_deref(), &config.bridge)?;
        let tools = Arc::new(RwLock::new(tools));
        let freshness = Arc::new(Freshness::default());
        freshness.listed(client);
        let name = config
            .name
            .clone()
            .or_else(|| client.server().map(|server| server.name.clone()))
            .unwrap_or_else(|| "an MCP server".to_owned());
        let watcher = tokio::spawn(watch(
            client.clone(),
            notifications,
            Arc::clone(&tools),
            Arc::clone(&freshness),
            config,
        ));
        let toolset = McpToolset {
            name,
            tools,
            freshness,
            watcher,
        };
        Ok((toolset, listed))
    }
}

/// Lists the tools again after each announced change, debounced, and when
/// the list was found stale, until the client's notifications end.
async fn watch<Deps: Send + Sync + 'static>(
    client: Client,
    mut notifications: Notifications,
    tools: Arc<RwLock<Vec<Tool<Deps>>>>,
    freshness: Arc<Freshness>,
    config: ToolsetConfig,
) {
    loop {
        tokio::select! {
            notification = notifications.recv() => match notification {
                None => return,
                // A restarted server (ADR 0026) may have other tools.
                Some(ServerNotification::ToolsListChanged | ServerNotification::Restarted { .. }) => {
                    tokio::time::sleep(config.debounce).await;
                    // Whatever else arrived meanwhile is covered by this listing.
                    while let Ok(Some(_)) =
                        tokio::time::timeout(Duration::ZERO, notifications.recv()).await
                    {}
                }
                Some(_) => continue,
            },
            () = freshness.relist.notified() => {}
        }
        match as_tools_prefixed(&client, config.prefix.as_deref(), &config.bridge).await {
            Ok(listed) => {
                *tools.write().unwrap_or_else(PoisonError::into_inner) = listed;
                freshness.listed(&client);
            }
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
        self.freshness.check();
        self.tools
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
