//! A server started on its first call (ADR 0030): a [`LazyToolset`]
//! offers the tools of a [`Manifest`] without a server, and starts the
//! server (with the function its host gives) when the model first calls one
//! of them. From then on it is an [`McpToolset`]: the live list replaces
//! the manifest's (and is saved as the new manifest), and each call goes to
//! the live tool of the same name; a tool the server no longer has is a
//! correction, and the next request offers the live list.

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use golem_tool::{Tool, ToolContext, ToolError, Toolset};
use serde_json::value::RawValue;
use tokio::sync::OnceCell;

use crate::bridge::as_tools::{define, exposed_name};
use crate::bridge::manifest::{Manifest, ManifestStore};
use crate::bridge::toolset::{McpToolset, ToolsetConfig};
use crate::error::Error;
use crate::session::handle::Client;

/// Why a server could not be started, or listed, for its first call.
type StartCause = Box<dyn StdError + Send + Sync + 'static>;

/// What starts a lazy server: connects and initializes a [`Client`].
pub type StartServer =
    Arc<dyn Fn() -> Pin<Box<dyn Future<Output = Result<Client, StartCause>> + Send>> + Send + Sync>;

/// Where a started server's new manifest is saved.
type SaveTo = Option<(Arc<dyn ManifestStore>, String)>;

/// A server's tools offered from its [`Manifest`], the server started on
/// the first call of one of them (ADR 0030): from then on the toolset is
/// the started server's [`McpToolset`], whose listing is saved as the new
/// manifest, and a call of a tool the server no longer has is a
/// correction.
pub struct LazyToolset<Deps> {
    /// The manifest's tools, each starting the server when called.
    offered: Vec<Tool<Deps>>,
    shared: Arc<Shared<Deps>>,
}

/// What the toolset and its tools share.
struct Shared<Deps> {
    name: String,
    config: ToolsetConfig,
    start: StartServer,
    save_to: SaveTo,
    /// The longest a start (with its listing) may take, in milliseconds.
    start_timeout_ms: AtomicU64,
    live: OnceCell<(Client, McpToolset<Deps>)>,
}

/// [`LazyToolset`]'s start bound unless [`with_start_timeout`](LazyToolset::with_start_timeout) sets another.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(60);

/// How often a call waiting for its server's start tells the agent it is
/// alive (the start is bounded on its own).
const ALIVE_WHILE_STARTING: Duration = Duration::from_secs(1);

/// A lazy server that could not be started, or listed, for a call.
#[derive(Debug, thiserror::Error)]
#[error("MCP server {server:?} could not be started for the first call of its tools: {source}")]
pub struct StartError {
    /// The server's name.
    pub server: String,
    /// Why.
    #[source]
    pub source: StartCause,
}

impl<Deps> fmt::Debug for LazyToolset<Deps> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LazyToolset")
            .field("name", &self.shared.name)
            .field("tools", &self.offered.len())
            .field("started", &self.shared.live.initialized())
            .finish_non_exhaustive()
    }
}

impl<Deps: Send + Sync + 'static> LazyToolset<Deps> {
    /// The tools of `manifest`, presented as `config` says (named as an
    /// [`McpToolset`] with the same configuration names them); `start`
    /// connects and initializes the server on the first call; the live
    /// listing is then saved to `save_to` (a store and the server's key),
    /// when given.
    ///
    /// # Errors
    ///
    /// When a tool of the manifest cannot be read or bridged.
    pub fn new(
        name: impl Into<String>,
        manifest: &Manifest,
        config: ToolsetConfig,
        start: StartServer,
        save_to: Option<(Arc<dyn ManifestStore>, String)>,
    ) -> Result<Self, Error> {
        let shared = Arc::new(Shared {
            name: name.into(),
            config,
            start,
            save_to,
            start_timeout_ms: AtomicU64::new(DEFAULT_START_TIMEOUT.as_millis() as u64),
            live: OnceCell::new(),
        });
        let tools = manifest
            .tool_infos()
            .map_err(|error| Error::invalid_response("tools/list", error))?;
        let offered = tools
            .into_iter()
            .map(|info| {
                let exposed = exposed_name(shared.config.prefix.as_deref(), &info.name);
                let shared = Arc::clone(&shared);
                let called = exposed.clone();
                define(info, &exposed, &shared.config.bridge.clone(), move |_| {
                    move |ctx: ToolContext<Deps>, arguments: Box<RawValue>| {
                        let shared = Arc::clone(&shared);
                        let called = called.clone();
                        async move { shared.call(&called, ctx, arguments).await }
                    }
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(LazyToolset { offered, shared })
    }

    /// The same toolset, its server's start (connecting, initializing and
    /// listing) bounded by `timeout` rather than [`DEFAULT_START_TIMEOUT`].
    /// A call waiting for the start tells the agent it is alive meanwhile,
    /// so the agent's idle timeout does not cut the start short.
    pub fn with_start_timeout(self, timeout: Duration) -> Self {
        let millis = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self.shared
            .start_timeout_ms
            .store(millis, Ordering::Relaxed);
        self
    }

    /// Starts the server now, unless it is started already (a concurrent
    /// start is waited for, not repeated).
    ///
    /// # Errors
    ///
    /// [`StartError`] when it cannot be started or listed; a later call
    /// tries again.
    ///
    /// Cancel safe: a start dropped half way leaves no server behind (its
    /// client is dropped), and the next call starts it afresh.
    pub async fn start(&self) -> Result<&McpToolset<Deps>, StartError> {
        self.shared.started().await
    }
}

impl<Deps> LazyToolset<Deps> {
    /// The started server's client, once it is started (to close it).
    pub fn client(&self) -> Option<&Client> {
        self.shared.live.get().map(|(client, _)| client)
    }

    /// Whether the server was started.
    pub fn is_started(&self) -> bool {
        self.shared.live.initialized()
    }
}

impl<Deps: Send + Sync + 'static> Shared<Deps> {
    /// The live toolset, the server started first if need be.
    async fn started(&self) -> Result<&McpToolset<Deps>, StartError> {
        let failed = |source: StartCause| StartError {
            server: self.name.clone(),
            source,
        };
        let start = async {
            let client = (self.start)().await.map_err(failed)?;
            let (toolset, listed) = McpToolset::listed(&client, self.config.clone())
                .await
                .map_err(|error| failed(Box::new(error)))?;
            if let Some((store, key)) = &self.save_to
                && let Err(error) = store.save(key, &Manifest::of(&client, &listed))
            {
                tracing::warn!(%error, server = %self.name, "mcp: the server's manifest could not be saved");
            }
            Ok((client, toolset))
        };
        let bound = Duration::from_millis(self.start_timeout_ms.load(Ordering::Relaxed));
        let bounded = async {
            match tokio::time::timeout(bound, start).await {
                Ok(started) => started,
                Err(_) => Err(failed(format!("no answer within {bound:?}").into())),
            }
        };
        let (_, toolset) = self.live.get_or_try_init(|| bounded).await?;
        Ok(toolset)
    }

    /// One call of the tool the model knows as `called`: on the live tool
    /// of that name, once the server is started.
    async fn call(
        &self,
        called: &str,
        ctx: ToolContext<Deps>,
        arguments: Box<RawValue>,
    ) -> Result<String, ToolError> {
        // The start is bounded on its own: meanwhile the call is alive.
        let started = self.started();
        tokio::pin!(started);
        let live = loop {
            tokio::select! {
                live = &mut started => break live.map_err(ToolError::fatal)?,
                () = tokio::time::sleep(ALIVE_WHILE_STARTING) => ctx.alive.report(),
            }
        };
        let tool = live.tools().into_iter().find(|tool| tool.name() == called);
        match tool {
            Some(tool) => tool.call(ctx, arguments).await,
            None => Err(ToolError::retry(format!(
                "MCP server {:?} no longer offers {called:?}: its tools changed since they were \
                 last listed. Call one of the tools offered now.",
                self.name
            ))),
        }
    }
}

impl<Deps: Send + Sync + 'static> Toolset<Deps> for LazyToolset<Deps> {
    fn name(&self) -> &str {
        &self.shared.name
    }

    /// The manifest's tools until the server is started, its live list
    /// from then on.
    fn tools(&self) -> Vec<Tool<Deps>> {
        match self.shared.live.get() {
            Some((_, live)) => live.tools(),
            None => self.offered.clone(),
        }
    }
}
