//! The key a server's [`Manifest`](crate::Manifest) is kept under (ADR
//! 0030): a hash of what makes the entry's server the same server (the
//! command, its arguments, working directory and environment; the URL and
//! headers), so that editing the entry starts afresh. The values
//! themselves (tokens in an environment or a header) are never kept: only
//! the hash is, and it is SHA-256, so they cannot be guessed back from it.

use sha2::{Digest, Sha256};

use crate::config::ServerConfig;

impl ServerConfig {
    /// The key of this server's manifest: 32 hexadecimal digits, the same
    /// on every run and machine for the same entry, different when the
    /// command, arguments, working directory, environment, URL or headers
    /// differ (the order of environment variables and headers does not
    /// count).
    ///
    /// ```
    /// use golem_mcp::config::parse;
    /// let servers = parse(
    ///     r#"{"mcpServers": {"a": {"command": "x", "env": {"K": "1"}},
    ///                        "b": {"command": "x", "env": {"K": "2"}}}}"#,
    ///     |_| None,
    /// )?;
    /// let (a, b) = (servers.get("a")?.manifest_key(), servers.get("b")?.manifest_key());
    /// assert_eq!(a.len(), 32);
    /// assert_ne!(a, b);
    /// # Ok::<(), golem_mcp::config::ConfigError>(())
    /// ```
    pub fn manifest_key(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        match self {
            ServerConfig::Stdio(stdio) => {
                parts.push("stdio".into());
                parts.push(stdio.command.clone());
                parts.push(format!("{}", stdio.args.len()));
                parts.extend(stdio.args.iter().cloned());
                parts.push(
                    stdio
                        .dir
                        .as_ref()
                        .map(|dir| dir.display().to_string())
                        .unwrap_or_default(),
                );
                parts.push(pairs(&stdio.env));
                let mut removed = stdio.env_remove.clone();
                removed.sort();
                parts.push(removed.join("\0"));
            }
            #[cfg(feature = "http")]
            ServerConfig::Http(http) | ServerConfig::Sse(http) => {
                let kind = match self {
                    ServerConfig::Sse(_) => "sse",
                    _ => "http",
                };
                parts.push(kind.into());
                parts.push(http.url.clone());
                parts.push(pairs(&http.headers));
            }
        }
        let digest = Sha256::digest(parts.join("\u{1}").as_bytes());
        // The first 128 bits, in hexadecimal.
        digest[..16]
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect()
    }
}

/// `name=value` pairs, sorted, as one text.
fn pairs(pairs: &[(String, String)]) -> String {
    let mut sorted: Vec<String> = pairs
        .iter()
        .map(|(name, value)| format!("{name}\u{2}{value}"))
        .collect();
    sorted.sort();
    sorted.join("\u{3}")
}

#[cfg(test)]
mod tests {
    use crate::config::parse;

    fn key(entry: &str) -> String {
        let servers = parse(&format!(r#"{{"mcpServers": {{"s": {entry}}}}}"#), |_| None)
            .expect("valid config");
        servers.get("s").expect("an entry").manifest_key()
    }

    #[test]
    fn the_key_changes_with_whatever_makes_another_server_and_nothing_else() {
        let base = key(r#"{"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1", "B": "2"}}"#);
        assert_eq!(
            base,
            key(r#"{"command": "npx", "args": ["-y", "pkg"], "env": {"B": "2", "A": "1"}}"#)
        );
        for other in [
            r#"{"command": "npx", "args": ["-y", "pkg2"], "env": {"A": "1", "B": "2"}}"#,
            r#"{"command": "npx", "args": ["-y pkg"], "env": {"A": "1", "B": "2"}}"#,
            r#"{"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1", "B": "3"}}"#,
            r#"{"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1", "B": "2"}, "cwd": "/tmp"}"#,
            r#"{"command": "node", "args": ["-y", "pkg"], "env": {"A": "1", "B": "2"}}"#,
        ] {
            assert_ne!(base, key(other), "{other}");
        }
        assert_eq!(base.len(), 32);
        assert!(base.chars().all(|c| c.is_ascii_hexdigit()));
    }
}
