//! The tool list kept between runs (ADR 0030), shared with `golem`: the
//! server's [`Manifest`] under `$XDG_CACHE_HOME/golem/manifests/`, keyed by
//! the target's configuration. `list` keeps it; `call` on a connection that
//! mirrors `x-mcp-header` parameters takes the tool's annotations from a
//! fresh one, or lists first, so that its one request carries the headers.

use std::time::SystemTime;

use golem_mcp::config::ServerConfig;
use golem_mcp::{Client, FileManifestStore, Manifest, ManifestStore, ToolInfo};

use crate::plan::target::Target;

/// Where the target's manifest is kept.
pub struct KeptTools {
    store: FileManifestStore,
    key: String,
}

impl KeptTools {
    /// The target's manifest slot; `None` without a cache directory.
    pub fn for_target(target: &Target) -> Option<Self> {
        let config = match target {
            Target::Stdio(stdio) => ServerConfig::Stdio(stdio.clone()),
            Target::Http(http) => ServerConfig::Http(http.clone()),
            Target::Sse(http) => ServerConfig::Sse(http.clone()),
        };
        Some(KeptTools {
            store: FileManifestStore::in_cache()?,
            key: config.manifest_key(),
        })
    }

    /// Keeps `tools`, just listed on `client`; a failure only costs the
    /// next run a listing.
    pub fn keep(&self, client: &Client, tools: &[ToolInfo]) {
        if let Err(error) = self.store.save(&self.key, &Manifest::of(client, tools)) {
            tracing::debug!(%error, "golem-mcp: cannot keep the tool list");
        }
    }

    /// The tools of a fresh kept manifest, if there is one.
    pub fn fresh(&self) -> Option<Vec<ToolInfo>> {
        let manifest = self.store.load(&self.key)?;
        if !manifest.is_fresh(SystemTime::now()) {
            return None;
        }
        manifest.tool_infos().ok()
    }
}
