//! `FileTokenStore`: tokens in one JSON file that only its owner can read.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::AuthError;
use crate::secret::Secret;
use crate::store::{EntryLock, StoredGrant, TokenStore};
use crate::token::Tokens;

/// The largest token file read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// How long a change waits for another process's change to the file to
/// end: one read and one small write, so anything near this bound is a
/// process stopped in the middle.
const WRITE_LOCK_WAIT: Duration = Duration::from_secs(5);

/// A [`TokenStore`] in a JSON file, for tokens that outlive the process
/// (a command-line tool's cache).
///
/// The file is created with mode `0600` (its directory, if created, `0700`)
/// and replaced atomically on every change; a file that another user could
/// read or write, or that belongs to another user, is refused, as are
/// files over 1 MiB.
///
/// Several processes may share the file. Each change (read, modify,
/// write) holds an advisory lock (`flock`) on `<file>.lock`, so that no
/// process writes back an entry another just changed; a refresh holds the
/// lock of its server's entry, `<file>.<hash of the server>.lock`
/// ([`TokenStore::try_lock_entry`]), so that one process refreshes and the
/// others use its rotated tokens. The lock files are empty, `0600`, and
/// stay beside the file: deleting one while another process waits on it
/// would let a third lock a new file of the same name.
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

    /// The lock file named `<file>.<what>.lock`, beside the file.
    fn lock_path(&self, what: &str) -> PathBuf {
        let mut name = self.path.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{what}"));
        self.path.with_file_name(name)
    }

    /// Creates the file's directory, `0700`, if it does not exist yet.
    fn create_directory(&self) -> Result<(), AuthError> {
        if let Some(dir) = self.path.parent()
            && !dir.as_os_str().is_empty()
            && !dir.exists()
        {
            fs::create_dir_all(dir)
                .map_err(|error| self.failure("cannot create the directory of", error))?;
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|error| self.failure("cannot restrict the directory of", error))?;
        }
        Ok(())
    }

    /// Takes the exclusive `flock` of the lock file at `path` (created
    /// `0600` if need be) if nobody holds it: `None` while another open
    /// file holds it, in this process or another. Closing the returned
    /// file releases it, as does the holder's death.
    fn try_flock(&self, path: &Path) -> Result<Option<File>, AuthError> {
        self.create_directory()?;
        // The directory is checked first: in one another user may write
        // to, the lock file could be theirs.
        self.check_directory()?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
            .map_err(|error| self.failure("cannot open the lock file of", error))?;
        loop {
            // SAFETY: the descriptor is open for as long as `file` lives;
            // flock has no other precondition.
            let locked = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
            if locked == 0 {
                return Ok(Some(file));
            }
            let error = io::Error::last_os_error();
            match error.kind() {
                io::ErrorKind::WouldBlock => return Ok(None),
                io::ErrorKind::Interrupted => continue,
                _ => return Err(self.failure("cannot lock the lock file of", error)),
            }
        }
    }

    /// Holds the file's write lock, waiting for another process's change
    /// to end (at most [`WRITE_LOCK_WAIT`]). Synchronous: the store's
    /// methods are, and a change holds it for one small read and write.
    fn lock_for_change(&self) -> Result<File, AuthError> {
        let path = self.lock_path("lock");
        let deadline = Instant::now() + WRITE_LOCK_WAIT;
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(file) = self.try_flock(&path)? {
                return Ok(file);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(self.failure(
                    "cannot change",
                    format!(
                        "another process has held {} for {} s; is one stopped?",
                        path.display(),
                        WRITE_LOCK_WAIT.as_secs()
                    ),
                ));
            }
            std::thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(50));
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
        self.create_directory()?;
        let text = serde_json::to_vec_pretty(records)
            .map_err(|error| self.failure("cannot encode", error))?;
        // Named for this write alone (the process, then a count): two
        // stores on one file in one process never share one, should a
        // writer ever not hold the write lock. A file of that name is a
        // crashed process's (of the same id) leftover.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let temporary = self.path.with_extension(format!(
            "tmp.{}.{}",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
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
        let _change = self.lock_for_change()?;
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
        let _change = self.lock_for_change()?;
        let mut records = self.read()?;
        if records.remove(server).is_some() {
            self.write(&records)?;
        }
        Ok(())
    }

    /// Locks `<file>.<hash>.lock`, the hash naming the server (a URL is no
    /// file name); two servers whose hashes met would only share a lock.
    fn try_lock_entry(&self, server: &str) -> Result<Option<EntryLock>, AuthError> {
        let digest = Sha256::digest(server.as_bytes());
        let hash: String = digest[..8]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        Ok(self
            .try_flock(&self.lock_path(&format!("{hash}.lock")))?
            .map(EntryLock::new))
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
    fn an_entry_lock_excludes_every_other_holder_of_that_entry_until_dropped() {
        let path = scratch("entry-lock");
        let (one, other) = (FileTokenStore::new(&path), FileTokenStore::new(&path));
        let held = one
            .try_lock_entry("https://a.example/mcp")
            .expect("lockable")
            .expect("free");
        // Another store on the file, as another process would be, and this
        // one again: `flock` excludes every other open file of the lock.
        for store in [&other, &one] {
            let again = store
                .try_lock_entry("https://a.example/mcp")
                .expect("lockable");
            assert!(again.is_none(), "the entry was locked twice");
        }
        assert!(
            other
                .try_lock_entry("https://b.example/mcp")
                .expect("lockable")
                .is_some(),
            "another server's entry is another lock"
        );
        // Neither reading nor changing the file waits for an entry lock.
        other
            .save("https://a.example/mcp", &grant())
            .expect("saved while the entry is locked");
        drop(held);
        assert!(
            other
                .try_lock_entry("https://a.example/mcp")
                .expect("lockable")
                .is_some(),
            "not released when dropped"
        );
        let dir = path.parent().expect("a dir");
        for lock in fs::read_dir(dir).expect("listed") {
            let lock = lock.expect("an entry").path();
            let mode = fs::metadata(&lock).expect("exists").mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", lock.display());
        }
        let _ = fs::remove_dir_all(dir);
    }

    #[tokio::test]
    async fn a_wait_for_a_held_entry_ends_at_its_bound_with_an_error_that_says_why() {
        let path = scratch("entry-lock-bound");
        let store = FileTokenStore::new(&path);
        let _held = FileTokenStore::new(&path)
            .try_lock_entry("https://a.example/mcp")
            .expect("lockable")
            .expect("free");
        let error =
            crate::store::lock_entry(&store, "https://a.example/mcp", Duration::from_millis(50))
                .await
                .expect_err("held by another store throughout");
        assert!(matches!(error, AuthError::Store { .. }), "{error}");
        assert!(error.to_string().contains("stayed locked"), "{error}");
        let _ = fs::remove_dir_all(path.parent().expect("a dir"));
    }

    #[test]
    fn stores_in_several_threads_on_one_file_lose_none_of_each_others_changes() {
        const WRITERS: usize = 4;
        const SAVES: usize = 25;
        let path = scratch("many-writers");
        let start = std::sync::Barrier::new(WRITERS);
        std::thread::scope(|scope| {
            for writer in 0..WRITERS {
                let (path, start) = (&path, &start);
                scope.spawn(move || {
                    // One store each: nothing shared in memory, as between
                    // processes.
                    let store = FileTokenStore::new(path);
                    start.wait();
                    for save in 0..SAVES {
                        store
                            .save(&format!("https://{writer}-{save}.example/mcp"), &grant())
                            .expect("saved");
                    }
                });
            }
        });
        let kept = FileTokenStore::new(&path).read().expect("readable");
        assert_eq!(kept.len(), WRITERS * SAVES, "changes were lost");
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
