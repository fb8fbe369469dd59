//! `FileTokenStore`: tokens in one JSON file that only its owner can read.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::AuthError;
use crate::secret::Secret;
use crate::store::{StoredGrant, TokenStore};
use crate::token::Tokens;

/// The largest token file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// A [`TokenStore`] in a JSON file, for tokens that outlive the process
/// (a command-line tool's cache).
///
/// The file is created with mode `0600` (its directory, if created, `0700`)
/// and replaced atomically on every change; a file that another user could
/// read or write, or that belongs to another user, is refused, as are
/// files over 1 MiB. Writers in several processes at once: the last one
/// wins.
pub struct FileTokenStore {
    path: PathBuf,
    /// Serializes this process's read-modify-write cycles.
    lock: Mutex<()>,
}

impl fmt::Debug for FileTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileTokenStore")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize)]
struct Record {
    access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refresh_token: Option<String>,
    /// Seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_secret: Option<String>,
    /// The authorization server that issued them (absent in files written
    /// before grants were bound to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    issuer: Option<String>,
}

impl FileTokenStore {
    /// A store in the file at `path` (created when first saved to).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileTokenStore {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn failure(&self, what: &str, detail: impl fmt::Display) -> AuthError {
        AuthError::Store {
            detail: format!("{what} {}: {detail}", self.path.display()),
        }
    }

    /// Refuses a directory that another user owns or may write to: in it,
    /// they could put a file of their own in the cache's place.
    fn check_directory(&self) -> Result<(), AuthError> {
        let Some(dir) = self.path.parent().filter(|dir| !dir.as_os_str().is_empty()) else {
            return Ok(());
        };
        let metadata = match fs::metadata(dir) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(error) => return Err(self.failure("cannot read the directory of", error)),
        };
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        if metadata.uid() != uid {
            return Err(self.failure("refusing", "its directory belongs to another user"));
        }
        if metadata.mode() & 0o022 != 0 {
            return Err(self.failure(
                "refusing",
                format!(
                    "other users can write to its directory (mode {:o}); run chmod go-w on it",
                    metadata.mode() & 0o777
                ),
            ));
        }
        Ok(())
    }

    fn read(&self) -> Result<BTreeMap<String, Record>, AuthError> {
        self.check_directory()?;
        let metadata = match fs::symlink_metadata(&self.path) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(BTreeMap::new());
            }
            Err(error) => return Err(self.failure("cannot read", error)),
        };
        if !metadata.is_file() {
            return Err(self.failure("refusing", "it is not a regular file"));
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        if metadata.uid() != uid {
            return Err(self.failure("refusing", "it belongs to another user"));
        }
        if metadata.mode() & 0o077 != 0 {
            return Err(self.failure(
                "refusing",
                format!(
                    "other users can access it (mode {:o}); run chmod 600 on it",
                    metadata.mode() & 0o777
                ),
            ));
        }
        if metadata.len() > MAX_FILE_BYTES {
            return Err(self.failure("refusing", "it is larger than 1 MiB"));
        }
        let text = fs::read(&self.path).map_err(|error| self.failure("cannot read", error))?;
        serde_json::from_slice(&text).map_err(|error| self.failure("cannot parse", error))
    }

    fn write(&self, records: &BTreeMap<String, Record>) -> Result<(), AuthError> {
        if let Some(dir) = self.path.parent()
            && !dir.as_os_str().is_empty()
            && !dir.exists()
        {
            fs::create_dir_all(dir)
                .map_err(|error| self.failure("cannot create the directory of", error))?;
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|error| self.failure("cannot restrict the directory of", error))?;
        }
        let text = serde_json::to_vec_pretty(records)
            .map_err(|error| self.failure("cannot encode", error))?;
        let temporary = self
            .path
            .with_extension(format!("tmp.{}", std::process::id()));
        let _ = fs::remove_file(&temporary);
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temporary)
            .and_then(|mut file| {
                file.write_all(&text)?;
                file.sync_all()
            })
            .and_then(|()| fs::rename(&temporary, &self.path));
        if let Err(error) = written {
            let _ = fs::remove_file(&temporary);
            return Err(self.failure("cannot write", error));
        }
        Ok(())
    }
}

impl TokenStore for FileTokenStore {
    fn load(&self, server: &str) -> Result<Option<StoredGrant>, AuthError> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(self.read()?.remove(server).map(|record| StoredGrant {
            tokens: Tokens {
                access_token: Secret::new(record.access_token),
                refresh_token: record.refresh_token.map(Secret::new),
                expires_at: record
                    .expires_at
                    .map(|seconds| UNIX_EPOCH + Duration::from_secs(seconds)),
                scope: record.scope,
            },
            client_id: record.client_id,
            client_secret: record.client_secret.map(Secret::new),
            issuer: record.issuer,
        }))
    }

    fn save(&self, server: &str, grant: &StoredGrant) -> Result<(), AuthError> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut records = self.read()?;
        let tokens = &grant.tokens;
        records.insert(
            server.to_owned(),
            Record {
                access_token: tokens.access_token.expose().to_owned(),
                refresh_token: tokens
                    .refresh_token
                    .as_ref()
                    .map(|token| token.expose().to_owned()),
                expires_at: tokens.expires_at.map(|at| {
                    at.duration_since(UNIX_EPOCH)
                        .map_or(0, |since| since.as_secs())
                }),
                scope: tokens.scope.clone(),
                client_id: grant.client_id.clone(),
                client_secret: grant
                    .client_secret
                    .as_ref()
                    .map(|secret| secret.expose().to_owned()),
                issuer: grant.issuer.clone(),
            },
        );
        self.write(&records)
    }

    fn remove(&self, server: &str) -> Result<(), AuthError> {
        let _guard = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut records = self.read()?;
        if records.remove(server).is_some() {
            self.write(&records)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    fn seconds(at: SystemTime) -> u64 {
        at.duration_since(UNIX_EPOCH)
            .map_or(0, |since| since.as_secs())
    }

    fn scratch(name: &str) -> PathBuf {
        std::env::temp_dir()
            .join(format!(
                "golem-mcp-file-store-{}-{name}",
                std::process::id()
            ))
            .join("tokens.json")
    }

    fn grant() -> StoredGrant {
        StoredGrant {
            tokens: Tokens {
                access_token: Secret::new("access-token-value"),
                refresh_token: Some(Secret::new("refresh-token-value")),
                expires_at: Some(UNIX_EPOCH + Duration::from_secs(2_000_000_000)),
                scope: Some("a b".into()),
            },
            client_id: "client".into(),
            client_secret: Some(Secret::new("secret")),
            issuer: Some("https://as.example".into()),
        }
    }

    #[test]
    fn grants_round_trip_in_a_file_only_its_owner_can_read() {
        let path = scratch("round-trip");
        let store = FileTokenStore::new(&path);
        assert_eq!(store.load("https://a.example/mcp").expect("empty"), None);
        store
            .save("https://a.example/mcp", &grant())
            .expect("saved");
        store
            .save("https://b.example/mcp", &grant())
            .expect("saved");
        let mode = fs::metadata(&path).expect("exists").mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = fs::metadata(path.parent().expect("a dir"))
            .expect("exists")
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
        let loaded = FileTokenStore::new(&path)
            .load("https://a.example/mcp")
            .expect("read")
            .expect("kept");
        assert_eq!(loaded, grant());
        assert_eq!(loaded.tokens.expires_at.map(seconds), Some(2_000_000_000));
        store.remove("https://a.example/mcp").expect("removed");
        assert_eq!(store.load("https://a.example/mcp").expect("read"), None);
        assert!(store.load("https://b.example/mcp").expect("read").is_some());
        assert!(!format!("{store:?}").contains("secret"));
        let _ = fs::remove_dir_all(path.parent().expect("a dir"));
    }

    #[test]
    fn a_file_others_can_read_is_refused() {
        let path = scratch("readable");
        let store = FileTokenStore::new(&path);
        store
            .save("https://a.example/mcp", &grant())
            .expect("saved");
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).expect("chmod");
        let error = store.load("https://a.example/mcp").expect_err("refused");
        assert!(error.to_string().contains("chmod 600"), "{error}");
        assert!(!error.to_string().contains("token-value"), "{error}");
        let _ = fs::remove_dir_all(path.parent().expect("a dir"));
    }

    #[test]
    fn a_directory_others_can_write_to_is_refused_before_anything_is_read_or_written() {
        let path = scratch("open-dir");
        let store = FileTokenStore::new(&path);
        store
            .save("https://a.example/mcp", &grant())
            .expect("saved");
        let dir = path.parent().expect("a dir");
        fs::set_permissions(dir, fs::Permissions::from_mode(0o777)).expect("chmod");
        let error = store.load("https://a.example/mcp").expect_err("refused");
        assert!(error.to_string().contains("chmod go-w"), "{error}");
        let error = store
            .save("https://b.example/mcp", &grant())
            .expect_err("refused");
        assert!(
            error.to_string().contains("write to its directory"),
            "{error}"
        );
        let _ = fs::remove_dir_all(dir);
    }
}
