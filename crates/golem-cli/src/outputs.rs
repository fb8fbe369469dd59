//! Where `golem` keeps the whole text of a tool result it cut for the
//! model (ADR 0029): one file per result under
//! `$XDG_CACHE_HOME/golem/outputs/` (else `~/.cache/golem/outputs/`), mode
//! 0600 in a 0700 directory, named by the call's id, which the model's note
//! names and `read_tool_output` reads back. Files older than a week are
//! removed when the store opens, so the directory does not grow forever.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use golem_agent::{Kept, OutputStore};

/// How long a kept output stays.
const KEPT_FOR: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The most characters of a call id kept in a file name.
const ID_MAX: usize = 64;
/// The most names tried for one output when its id is taken.
const NAMES_TRIED: usize = 1000;

/// Tool outputs kept as files in one directory.
#[derive(Debug)]
pub struct FileOutputStore {
    dir: PathBuf,
}

impl FileOutputStore {
    /// The store in `dir` (created on the first output kept); files in it
    /// older than a week are removed now.
    pub fn open(dir: PathBuf) -> Arc<Self> {
        if let Ok(entries) = fs::read_dir(&dir) {
            let now = SystemTime::now();
            for entry in entries.flatten() {
                let old = entry
                    .metadata()
                    .and_then(|metadata| metadata.modified())
                    .is_ok_and(|modified| {
                        now.duration_since(modified).unwrap_or_default() > KEPT_FOR
                    });
                if old && entry.file_name().to_string_lossy().ends_with(".txt") {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        Arc::new(FileOutputStore { dir })
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.txt"))
    }
}

impl OutputStore for FileOutputStore {
    fn keep(&self, call_id: &str, text: &str) -> std::io::Result<Kept> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)?;
        let stem = file_stem(call_id);
        for attempt in 1..=NAMES_TRIED {
            // The suffix within the bound, so that `read` knows the name.
            let id = match attempt {
                1 => stem.clone(),
                n => {
                    let suffix = format!("-{n}");
                    format!("{}{suffix}", &stem[..stem.len().min(ID_MAX - suffix.len())])
                }
            };
            let path = self.path(&id);
            let file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&path);
            match file {
                Ok(mut file) => {
                    file.write_all(text.as_bytes())?;
                    return Ok(Kept {
                        id,
                        location: Some(path.display().to_string()),
                    });
                }
                Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(error),
            }
        }
        Err(std::io::Error::other(format!(
            "{} names for {stem:?} are taken in {}",
            NAMES_TRIED,
            self.dir.display()
        )))
    }

    fn read(&self, id: &str) -> std::io::Result<Option<Arc<str>>> {
        // Only a name this store could have made: nothing outside the
        // directory.
        let made_here = id.len() <= ID_MAX
            && !id.is_empty()
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        if !made_here {
            return Ok(None);
        }
        match fs::read_to_string(self.path(id)) {
            Ok(text) => Ok(Some(Arc::from(text))),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }
}

/// A call id as a file name: letters, digits, `_` and `-` kept, anything
/// else `_`, at most [`ID_MAX`] characters; `output` when nothing is left.
fn file_stem(call_id: &str) -> String {
    let stem: String = call_id
        .chars()
        .take(ID_MAX)
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    match stem.trim_matches('_').is_empty() {
        true => "output".to_owned(),
        false => stem,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    use super::*;

    #[test]
    fn outputs_are_owner_only_files_named_by_a_safe_unique_id() {
        let dir = std::env::temp_dir().join(format!("golem-outputs-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let store = FileOutputStore::open(dir.clone());
        let first = store.keep("call_1", "whole text").expect("kept");
        let second = store.keep("call_1", "other").expect("kept");
        let odd = store.keep("../../etc/passwd", "x").expect("kept");
        assert_eq!(
            (first.id.as_str(), second.id.as_str()),
            ("call_1", "call_1-2")
        );
        assert_eq!(odd.id, "______etc_passwd");
        let path = first.location.expect("a path");
        assert_eq!(path, dir.join("call_1.txt").display().to_string());
        let mode = |path: &Path| fs::metadata(path).expect("exists").permissions().mode() & 0o777;
        assert_eq!(mode(Path::new(&path)), 0o600);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(
            store.read("call_1").expect("read").as_deref(),
            Some("whole text")
        );
        assert_eq!(store.read("../call_1").expect("read"), None);
        assert_eq!(store.read("nope").expect("read"), None);
        // A long id taken already gets a suffix within the bound, and reads.
        let long = "c".repeat(70);
        store.keep(&long, "one").expect("kept");
        let again = store.keep(&long, "two").expect("kept");
        assert!(
            again.id.len() <= ID_MAX && again.id.ends_with("-2"),
            "{}",
            again.id
        );
        assert_eq!(store.read(&again.id).expect("read").as_deref(), Some("two"));
        let _ = fs::remove_dir_all(&dir);
    }
}
