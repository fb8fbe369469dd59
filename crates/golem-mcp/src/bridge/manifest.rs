//! What a host remembers of a server between runs (ADR 0030): a
//! [`Manifest`] (the server's identity and instructions, its tool list
//! verbatim, when it was listed and for how long the server said the list
//! stays fresh), kept in a [`ManifestStore`] under a key made from the
//! server's configuration ([`ServerConfig::manifest_key`](crate::config::ServerConfig::manifest_key)).
//! With a fresh manifest a host offers the server's tools without starting
//! it ([`LazyToolset`](crate::LazyToolset)). [`FileManifestStore`] keeps
//! one owner-only file per key.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::features::tools::ToolInfo;
use crate::session::handle::Client;

/// How long a manifest stays fresh when its server gave no `ttlMs`.
pub const DEFAULT_MANIFEST_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// A server's tools as last listed, with what is needed to offer them
/// without the server.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Manifest {
    /// The server's `serverInfo.name`, when known.
    #[serde(rename = "serverName", default)]
    pub server_name: Option<String>,
    /// The server's `serverInfo.version`, when known.
    #[serde(rename = "serverVersion", default)]
    pub server_version: Option<String>,
    /// The server's instructions, when it gave some.
    #[serde(default)]
    pub instructions: Option<String>,
    /// Each tool's JSON exactly as `tools/list` gave it.
    pub tools: Vec<Box<RawValue>>,
    /// When the list was taken, in milliseconds since the Unix epoch.
    #[serde(rename = "listedAt")]
    pub listed_at_ms: u64,
    /// How long the server said the list stays fresh (a modern server's
    /// `ttlMs`), in milliseconds; [`DEFAULT_MANIFEST_TTL`] when `None`.
    #[serde(rename = "ttlMs", default)]
    pub ttl_ms: Option<u64>,
}

impl Manifest {
    /// The manifest of `client`'s server (initialized), whose tools were
    /// just listed as `tools` (read from a listing, so that each keeps its
    /// JSON verbatim: a tool without it is left out).
    pub fn of(client: &Client, tools: &[ToolInfo]) -> Manifest {
        let server = client.server();
        let ttl_ms = client
            .fresh_until("tools/list")
            .map(|until| until.saturating_duration_since(Instant::now()).as_millis() as u64);
        Manifest {
            server_name: server.map(|server| server.name.clone()),
            server_version: server.map(|server| server.version.clone()),
            instructions: server.and_then(|server| server.instructions.clone()),
            tools: tools
                .iter()
                .filter_map(|tool| tool.verbatim().map(RawValue::to_owned))
                .collect(),
            listed_at_ms: millis_since_epoch(SystemTime::now()),
            ttl_ms,
        }
    }

    /// Whether the list is still fresh at `now`: within the server's
    /// `ttlMs`, else [`DEFAULT_MANIFEST_TTL`], of when it was listed (a
    /// listing dated in the future is not fresh).
    pub fn is_fresh(&self, now: SystemTime) -> bool {
        let ttl = self
            .ttl_ms
            .unwrap_or(DEFAULT_MANIFEST_TTL.as_millis() as u64);
        let now = millis_since_epoch(now);
        now >= self.listed_at_ms && now - self.listed_at_ms < ttl
    }

    /// The tools, read.
    ///
    /// # Errors
    ///
    /// When a kept tool is not one (the file was edited, say).
    pub fn tool_infos(&self) -> Result<Vec<ToolInfo>, serde_json::Error> {
        self.tools
            .iter()
            .map(|tool| ToolInfo::from_verbatim(tool.clone()))
            .collect()
    }
}

fn millis_since_epoch(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map(|since| since.as_millis() as u64)
        .unwrap_or(0)
}

/// Where manifests are kept between runs, by key.
pub trait ManifestStore: Send + Sync {
    /// The manifest kept under `key`, if there is one that can be read.
    fn load(&self, key: &str) -> Option<Manifest>;

    /// Keeps `manifest` under `key`, replacing any.
    ///
    /// # Errors
    ///
    /// When it cannot be written.
    fn save(&self, key: &str, manifest: &Manifest) -> std::io::Result<()>;
}

/// The default [`ManifestStore`]: one JSON file per key in a directory
/// (mode 0700), each written whole (a temporary file renamed) with mode
/// 0600.
#[derive(Debug, Clone)]
pub struct FileManifestStore {
    dir: PathBuf,
}

impl FileManifestStore {
    /// The store in `dir`, created when the first manifest is saved.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileManifestStore { dir: dir.into() }
    }

    /// The store in the user's cache: `manifests/` of [`golem_cache_dir`]; `None`
    /// when there is no cache directory.
    pub fn in_cache() -> Option<Self> {
        golem_cache_dir(|name| std::env::var(name).ok()).map(|dir| Self::new(dir.join("manifests")))
    }

    /// The directory of the files.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// Removes the manifests last written more than `age` ago (an entry
    /// edited or gone leaves its old one behind: its key changed). Returns
    /// how many were removed; a directory that cannot be read removes none.
    pub fn prune(&self, age: Duration) -> usize {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return 0;
        };
        let now = SystemTime::now();
        let mut removed = 0;
        for entry in entries.flatten() {
            let old = entry
                .metadata()
                .and_then(|metadata| metadata.modified())
                .is_ok_and(|modified| now.duration_since(modified).unwrap_or_default() > age);
            let ours = entry.file_name().to_string_lossy().ends_with(".json");
            if old && ours && fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
        removed
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        let safe = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        safe.then(|| self.dir.join(format!("{key}.json")))
    }
}

impl ManifestStore for FileManifestStore {
    fn load(&self, key: &str) -> Option<Manifest> {
        let text = fs::read_to_string(self.path(key)?).ok()?;
        serde_json::from_str(&text).ok()
    }

    fn save(&self, key: &str, manifest: &Manifest) -> std::io::Result<()> {
        let path = self
            .path(key)
            .ok_or_else(|| std::io::Error::other(format!("{key:?} is not a manifest key")))?;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        let temporary = self.dir.join(format!(".{key}.{}.tmp", std::process::id()));
        let mut file = fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&temporary)?;
        let written = serde_json::to_vec(manifest)
            .map_err(std::io::Error::other)
            .and_then(|json| file.write_all(&json));
        drop(file);
        match written.and_then(|()| fs::rename(&temporary, &path)) {
            Ok(()) => Ok(()),
            Err(error) => {
                let _ = fs::remove_file(&temporary);
                Err(error)
            }
        }
    }
}

/// The cache directory of golem's hosts, from the environment `env` gives:
/// `$XDG_CACHE_HOME/golem` when that is an absolute path, else
/// `$HOME/.cache/golem`; `None` without either.
pub fn golem_cache_dir(env: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let absolute = |name: &str| {
        env(name)
            .map(PathBuf::from)
            .filter(|path| path.is_absolute())
    };
    let base =
        absolute("XDG_CACHE_HOME").or_else(|| absolute("HOME").map(|home| home.join(".cache")))?;
    Some(base.join("golem"))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn manifest(listed_at_ms: u64, ttl_ms: Option<u64>) -> Manifest {
        Manifest {
            server_name: Some("fs".into()),
            server_version: Some("1".into()),
            instructions: None,
            tools: vec![
                RawValue::from_string(
                    r#"{"name":"t","inputSchema":{"type":"object"},"x-extra":1}"#.into(),
                )
                .expect("JSON"),
            ],
            listed_at_ms,
            ttl_ms,
        }
    }

    #[test]
    fn freshness_is_the_servers_ttl_else_a_day() {
        let at = |ms: u64| UNIX_EPOCH + Duration::from_millis(ms);
        let day = DEFAULT_MANIFEST_TTL.as_millis() as u64;
        assert!(manifest(1000, None).is_fresh(at(1000 + day - 1)));
        assert!(!manifest(1000, None).is_fresh(at(1000 + day)));
        assert!(manifest(1000, Some(50)).is_fresh(at(1049)));
        assert!(!manifest(1000, Some(50)).is_fresh(at(1050)));
        assert!(
            !manifest(1000, None).is_fresh(at(999)),
            "listed in the future"
        );
    }

    #[test]
    fn the_file_store_keeps_tools_verbatim_in_owner_only_files() {
        let dir = std::env::temp_dir().join(format!("golem-manifests-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let store = FileManifestStore::new(&dir);
        assert!(store.load("abc").is_none());
        store.save("abc", &manifest(5, Some(7))).expect("saved");
        let loaded = store.load("abc").expect("loaded");
        assert_eq!(
            loaded.tools[0].get(),
            r#"{"name":"t","inputSchema":{"type":"object"},"x-extra":1}"#
        );
        assert_eq!((loaded.listed_at_ms, loaded.ttl_ms), (5, Some(7)));
        assert_eq!(loaded.tool_infos().expect("tools")[0].name, "t");
        let mode = |path: &std::path::Path| {
            fs::metadata(path).expect("exists").permissions().mode() & 0o777
        };
        assert_eq!(mode(&dir.join("abc.json")), 0o600);
        assert_eq!(mode(&dir), 0o700);
        assert!(store.save("../x", &manifest(5, None)).is_err());
        assert_eq!(
            store.prune(Duration::from_secs(3600)),
            0,
            "written just now"
        );
        assert_eq!(store.prune(Duration::ZERO), 1);
        assert!(store.load("abc").is_none());
        assert!(store.load("../x").is_none());
        let _ = fs::remove_dir_all(&dir);
    }
}
