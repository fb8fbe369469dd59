//! Roots: the directories (or other URIs) the application lets servers work
//! in, answered to `roots/list` (the `server_requests/` layer offers them).

use std::path::Path;

use serde::{Deserialize, Serialize};

/// One root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Root {
    /// Its URI, usually `file://…`.
    pub uri: String,
    /// A name to show, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Root {
    /// A root with this URI and no name.
    pub fn new(uri: impl Into<String>) -> Self {
        Root {
            uri: uri.into(),
            name: None,
        }
    }

    /// The same root with a name to show.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The `file://` root of a local directory, named after it. Fails,
    /// saying why, when the path is not an absolute path to a directory or
    /// is not valid UTF-8.
    ///
    /// ```
    /// let root = golem_mcp::Root::directory("/tmp").expect("a directory");
    /// assert_eq!(root.uri, "file:///tmp");
    /// ```
    pub fn directory(path: impl AsRef<Path>) -> Result<Self, String> {
        let path = path.as_ref();
        if !path.is_absolute() {
            return Err(format!("{} is not an absolute path", path.display()));
        }
        if !path.is_dir() {
            return Err(format!("{} is not a directory", path.display()));
        }
        let Some(text) = path.to_str() else {
            return Err(format!("{} is not valid UTF-8", path.display()));
        };
        let mut uri = String::from("file://");
        for byte in text.bytes() {
            match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                    uri.push(byte as char);
                }
                other => uri.push_str(&format!("%{other:02X}")),
            }
        }
        let name = path
            .file_name()
            .and_then(|name| name.to_str())
            .map(str::to_owned);
        Ok(Root { uri, name })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_become_percent_encoded_file_uris() {
        let dir = std::env::temp_dir().join("golem roots test");
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let root = Root::directory(&dir).expect("a directory");
        assert!(root.uri.starts_with("file:///"), "{}", root.uri);
        assert!(root.uri.ends_with("golem%20roots%20test"), "{}", root.uri);
        assert_eq!(root.name.as_deref(), Some("golem roots test"));
        assert!(Root::directory("relative").is_err());
        assert!(Root::directory(dir.join("missing")).is_err());
    }
}
