//! `mcpServers` configuration files: the JSON format desktop MCP hosts use to
//! name the servers they connect to, read into transport configurations.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "everything": {
//!       "command": "npx",
//!       "args": ["-y", "@modelcontextprotocol/server-everything"],
//!       "env": { "LOG_LEVEL": "debug" },
//!       "cwd": "/tmp"
//!     },
//!     "remote": {
//!       "url": "https://example.com/mcp",
//!       "headers": { "Authorization": "Bearer ${API_TOKEN}" }
//!     }
//!   }
//! }
//! ```
//!
//! An entry with `command` is a stdio server ([`StdioConfig`]); one with
//! `url` is a streamable-HTTP endpoint (`HttpConfig`), or, with
//! `"type": "sse"`, the event stream of the deprecated HTTP+SSE transport
//! of 2024-11-05 (`ServerConfig::Sse`, the same `HttpConfig`). An optional
//! `type` (`"stdio"`, or `"http"` / `"streamable-http"` /
//! `"streamableHttp"`, or `"sse"`) must agree with that. (A streamable
//! entry whose server turns out to speak only HTTP+SSE works too: the
//! transport falls back to it.) An entry with
//! `"disabled": true` stays readable but is left out of
//! [`Servers::connect_all`] and [`Servers::enabled`]. `"protocol":
//! "2025-11-25"` pins that entry's revision ([`Servers::protocol`]) where
//! the others are probed (for a server that answers the era probe badly);
//! it must be a revision this client speaks, and `2026-07-28` does not fit
//! an `"sse"` entry. Other fields (hosts add their own) are kept, unread,
//! for the application: [`Servers::extra`].
//!
//! # Connecting
//!
//! [`ServerConfig::connect`] starts or reaches one server and initializes a
//! [`Client`](crate::Client) on it; [`Servers::connect_all`] does that for
//! every enabled entry at once, with one result per entry.
//!
//! A `url` entry may say how to authorize with OAuth under `"oauth"`:
//! `client_id`, `client_secret` (use `${VAR}`), `client_metadata_url`,
//! `scope`, `client_credentials` (a boolean) and `private_key_file`, read
//! into [`OAuthSettings`] ([`Servers::oauth`]); an unknown key there is an
//! error, since a mistyped security setting should not pass unnoticed.
//!
//! # Environment variables
//!
//! In `command`, `args`, `env` values, `cwd`, `url` and `headers` values,
//! `${NAME}` is replaced by the variable's value and `${NAME:-default}` by
//! the value, or `default` when the variable is unset or empty. A variable
//! that is unset and has no default is an error naming the server entry
//! and field: nothing is silently replaced by an empty string. `$${` stands
//! for a literal `${`; any other `$` is kept as is. Expanded values are not
//! expanded again.
//!
//! # Errors per entry
//!
//! A file that is not JSON or has no `mcpServers` object fails as a whole
//! ([`load`], [`parse`]). A malformed entry fails only when it is asked for
//! ([`Servers::get`]), so one entry whose variable is unset does not keep the
//! others from being used. Every error names the entry and the field, e.g.
//! `mcpServers.github.env.GITHUB_TOKEN`.
//!
//! ```
//! use golem_mcp::config::{self, ServerConfig};
//!
//! let servers = config::parse(
//!     r#"{"mcpServers": {"files": {"command": "mcp-files", "args": ["${HOME}/notes"]}}}"#,
//!     |name| (name == "HOME").then(|| "/home/ada".to_owned()),
//! )?;
//! match servers.get("files")? {
//!     ServerConfig::Stdio(stdio) => assert_eq!(stdio.args, ["/home/ada/notes"]),
//!     other => panic!("expected a stdio server, got {other:?}"),
//! }
//! assert!(servers.get("github").is_err()); // names the servers there are
//! # Ok::<(), golem_mcp::config::ConfigError>(())
//! ```

mod connect;
mod key;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

#[cfg(feature = "http")]
use crate::transports::http::HttpConfig;
use crate::transports::stdio::StdioConfig;

/// Every problem reading a file is one of these (defined with the crate's
/// other errors, which embed it).
pub use crate::error::ConfigError;

/// How to reach one server named in a configuration file.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ServerConfig {
    /// A server started as a child process (the entry has `command`).
    Stdio(StdioConfig),
    /// A streamable-HTTP endpoint (the entry has `url`).
    #[cfg(feature = "http")]
    Http(HttpConfig),
    /// The event stream of the HTTP+SSE transport of 2024-11-05 (the entry
    /// has `url` and `"type": "sse"`), for
    /// [`SseTransport`](crate::SseTransport).
    #[cfg(feature = "http")]
    Sse(HttpConfig),
}

/// The servers of one configuration file, by name.
///
/// Each entry was checked and its variables expanded when the file was
/// read; [`get`](Servers::get) returns it, or the problem found in it.
#[derive(Debug, Clone)]
pub struct Servers {
    origin: String,
    entries: BTreeMap<String, Slot>,
    /// The `"oauth"` objects of the well-formed entries that have one.
    #[cfg(feature = "http")]
    oauth: BTreeMap<String, OAuthSettings>,
}

/// How to authorize with an HTTP server, as an entry's `"oauth"` object
/// says (the application builds its [`OAuthProvider`](golem_mcp_auth::OAuthProvider)
/// from it). `Debug` never shows the secret.
#[cfg(feature = "http")]
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthSettings {
    /// `client_id`: a pre-registered client id.
    pub client_id: Option<String>,
    /// `client_secret`: its secret (give it as `${VAR}`).
    pub client_secret: Option<golem_mcp_auth::Secret>,
    /// `client_metadata_url`: a Client ID Metadata Document URL.
    pub client_metadata_url: Option<String>,
    /// `scope`: the scopes to ask for, space-separated.
    pub scope: Option<String>,
    /// `client_credentials`: authorize as the client itself.
    pub client_credentials: bool,
    /// `private_key_file`: a PEM key for `private_key_jwt`.
    pub private_key_file: Option<PathBuf>,
}

/// One entry as read: its configuration or problem, and the fields this
/// module does not interpret.
#[derive(Debug, Clone)]
struct Slot {
    config: Result<ServerConfig, ConfigError>,
    disabled: bool,
    /// The revision `"protocol"` pins, when the entry is well-formed.
    protocol: Option<&'static str>,
    extra: Map<String, Value>,
}

/// The entry fields this module reads; any other is [`Servers::extra`].
const KNOWN_FIELDS: [&str; 10] = [
    "type", "command", "args", "env", "cwd", "url", "headers", "disabled", "oauth", "protocol",
];

impl Servers {
    /// The server named `name`.
    ///
    /// Fails with [`ConfigError::UnknownServer`] (listing the names there
    /// are) when the file has no such entry, and with the entry's own
    /// [`ConfigError::Invalid`] when it is malformed. A disabled entry is
    /// returned like any other: asking for it by name is taken as meaning
    /// it (check [`is_disabled`](Servers::is_disabled) to refuse it).
    pub fn get(&self, name: &str) -> Result<ServerConfig, ConfigError> {
        self.slot(name).and_then(|slot| slot.config.clone())
    }

    /// Whether the entry `name` says `"disabled": true` (`false` for a name
    /// the file does not have).
    pub fn is_disabled(&self, name: &str) -> bool {
        self.entries.get(name).is_some_and(|slot| slot.disabled)
    }

    /// The revision the entry `name` pins with `"protocol"` (a well-formed
    /// entry's; a bad value fails [`get`](Servers::get)), for
    /// [`ClientConfig::with_protocol`](crate::ClientConfig::with_protocol);
    /// [`connect_all`](Servers::connect_all) applies it. `None`: the era
    /// is probed.
    ///
    /// ```
    /// let servers = golem_mcp::config::parse(
    ///     r#"{"mcpServers": {"git": {"url": "http://127.0.0.1:3015/mcp", "protocol": "2025-11-25"}}}"#,
    ///     |_| None,
    /// )?;
    /// assert_eq!(servers.protocol("git"), Some("2025-11-25"));
    /// # Ok::<(), golem_mcp::config::ConfigError>(())
    /// ```
    pub fn protocol(&self, name: &str) -> Option<&'static str> {
        self.entries.get(name).and_then(|slot| slot.protocol)
    }

    /// The fields of entry `name` that this module does not read (such as a
    /// host's own `"timeout"` or `"autoApprove"`), for the application to
    /// honour; `None` for a name the file does not have.
    ///
    /// ```
    /// let servers = golem_mcp::config::parse(
    ///     r#"{"mcpServers": {"git": {"command": "mcp-git", "autoApprove": ["git_status"]}}}"#,
    ///     |_| None,
    /// )?;
    /// let extra = servers.extra("git").expect("the entry exists");
    /// assert_eq!(extra["autoApprove"], serde_json::json!(["git_status"]));
    /// # Ok::<(), golem_mcp::config::ConfigError>(())
    /// ```
    pub fn extra(&self, name: &str) -> Option<&Map<String, Value>> {
        self.entries.get(name).map(|slot| &slot.extra)
    }

    /// The names of the entries that are not disabled, in sorted order.
    pub fn enabled(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .filter(|(_, slot)| !slot.disabled)
            .map(|(name, _)| name.as_str())
    }

    fn slot(&self, name: &str) -> Result<&Slot, ConfigError> {
        self.entries
            .get(name)
            .ok_or_else(|| ConfigError::UnknownServer {
                origin: self.origin.clone(),
                name: name.to_owned(),
                available: self.entries.keys().cloned().collect(),
            })
    }

    /// The `"oauth"` settings of the entry `name`, if it has any (and is
    /// well-formed: a malformed `"oauth"` object fails [`get`](Servers::get)).
    #[cfg(feature = "http")]
    pub fn oauth(&self, name: &str) -> Option<&OAuthSettings> {
        self.oauth.get(name)
    }

    /// The names of every entry, malformed ones included, in sorted order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.keys().map(String::as_str)
    }

    /// Every entry (disabled ones included) with its configuration or its
    /// problem, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Result<&ServerConfig, &ConfigError>)> {
        self.entries
            .iter()
            .map(|(name, slot)| (name.as_str(), slot.config.as_ref()))
    }

    /// How many entries the file has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the file's `mcpServers` object is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Reads the `mcpServers` file at `path`, expanding `${VAR}` references from
/// this process's environment.
///
/// Fails when the file cannot be read, is not JSON, or has no `mcpServers`
/// object; problems inside one entry are reported by [`Servers::get`].
pub fn load(path: impl AsRef<Path>) -> Result<Servers, ConfigError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
        path: path.to_owned(),
        detail: match error.kind() {
            std::io::ErrorKind::NotFound => format!("{error}; check the path"),
            _ => error.to_string(),
        },
    })?;
    parse_from(path.display().to_string(), &text, |name| {
        std::env::var(name).ok()
    })
}

/// Reads `mcpServers` configuration text, looking variables up with `env`
/// (pass `|name| std::env::var(name).ok()` for the process environment).
///
/// Fails when the text is not JSON or has no `mcpServers` object; problems
/// inside one entry are reported by [`Servers::get`].
pub fn parse(json: &str, env: impl Fn(&str) -> Option<String>) -> Result<Servers, ConfigError> {
    parse_from("configuration".to_owned(), json, env)
}

fn parse_from(
    origin: String,
    json: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Servers, ConfigError> {
    let document: Value = serde_json::from_str(json).map_err(|error| ConfigError::Syntax {
        origin: origin.clone(),
        detail: error.to_string(),
    })?;
    let servers = document
        .as_object()
        .and_then(|top| top.get("mcpServers"))
        .and_then(Value::as_object)
        .ok_or_else(|| ConfigError::Invalid {
            origin: origin.clone(),
            server: None,
            field: "mcpServers".to_owned(),
            problem: "expected a top-level \"mcpServers\" object, e.g. \
                      {\"mcpServers\": {\"name\": {\"command\": \"npx\", \"args\": [\"-y\", \"package\"]}}}"
                .to_owned(),
        })?;
    let mut entries = BTreeMap::new();
    #[cfg(feature = "http")]
    let mut oauth = BTreeMap::new();
    for (name, entry) in servers {
        let reader = Entry {
            origin: &origin,
            name,
            env: &env,
        };
        #[allow(unused_mut)] // without `http`, nothing changes it
        let mut slot = reader.slot(entry);
        #[cfg(feature = "http")]
        if let Some(settings) = entry.get("oauth")
            && let Ok(server) = &slot.config
        {
            match reader.oauth(server, settings) {
                Ok(settings) => {
                    oauth.insert(name.clone(), settings);
                }
                Err(error) => slot.config = Err(error),
            }
        }
        entries.insert(name.clone(), slot);
    }
    Ok(Servers {
        origin,
        entries,
        #[cfg(feature = "http")]
        oauth,
    })
}

/// Reads one server entry, naming it in every error.
struct Entry<'a, E> {
    origin: &'a str,
    name: &'a str,
    env: &'a E,
}

impl<E: Fn(&str) -> Option<String>> Entry<'_, E> {
    fn invalid(&self, field: &str, problem: impl Into<String>) -> ConfigError {
        let field = if field.is_empty() {
            format!("mcpServers.{}", self.name)
        } else {
            format!("mcpServers.{}.{field}", self.name)
        };
        ConfigError::Invalid {
            origin: self.origin.to_owned(),
            server: Some(self.name.to_owned()),
            field,
            problem: problem.into(),
        }
    }

    fn slot(&self, entry: &Value) -> Slot {
        let (disabled, extra) = match entry.as_object() {
            Some(fields) => (
                fields.get("disabled"),
                fields
                    .iter()
                    .filter(|(key, _)| !KNOWN_FIELDS.contains(&key.as_str()))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect(),
            ),
            None => (None, Map::new()),
        };
        let (disabled, config) = match disabled {
            None | Some(Value::Null) => (false, self.read(entry)),
            Some(Value::Bool(disabled)) => (*disabled, self.read(entry)),
            Some(other) => (
                false,
                Err(self.invalid(
                    "disabled",
                    format!("expected true or false, found {}", kind_of(other)),
                )),
            ),
        };
        let (config, protocol) = match config.and_then(|server| {
            let protocol = self.protocol(entry, &server)?;
            Ok((server, protocol))
        }) {
            Ok((server, protocol)) => (Ok(server), protocol),
            Err(error) => (Err(error), None),
        };
        Slot {
            config,
            disabled,
            protocol,
            extra,
        }
    }

    /// The entry's `"protocol"`: a revision this client speaks, and one the
    /// transport can carry (HTTP+SSE carries only the initialize era).
    fn protocol(
        &self,
        entry: &Value,
        server: &ServerConfig,
    ) -> Result<Option<&'static str>, ConfigError> {
        let Some(fields) = entry.as_object() else {
            return Ok(None);
        };
        let Some(text) = self.string(fields, "protocol")? else {
            return Ok(None);
        };
        let modern = crate::MODERN_PROTOCOL_VERSIONS;
        let known: Vec<&'static str> = modern
            .iter()
            .chain(crate::SUPPORTED_PROTOCOL_VERSIONS)
            .copied()
            .collect();
        let Some(version) = known.iter().copied().find(|known| *known == text.trim()) else {
            return Err(self.invalid(
                "protocol",
                format!(
                    "{text:?} is not a revision this client speaks: {}",
                    known.join(", ")
                ),
            ));
        };
        #[cfg(feature = "http")]
        if matches!(server, ServerConfig::Sse(_)) && modern.contains(&version) {
            return Err(self.invalid(
                "protocol",
                format!(
                    "an \"sse\" entry speaks the initialize era; {version} does not fit it (use \
                     2025-11-25 or earlier, or a streamable-HTTP entry)"
                ),
            ));
        }
        #[cfg(not(feature = "http"))]
        let _ = server;
        Ok(Some(version))
    }

    fn read(&self, entry: &Value) -> Result<ServerConfig, ConfigError> {
        let Some(fields) = entry.as_object() else {
            return Err(self.invalid(
                "",
                "expected an object with \"command\" (a server to start) or \"url\" (a \
                 streamable-HTTP endpoint)",
            ));
        };
        let kind = match fields.get("type") {
            None => None,
            Some(Value::String(kind)) => Some(kind.as_str()),
            Some(_) => {
                return Err(self.invalid("type", "expected a string: \"stdio\" or \"http\""));
            }
        };
        match (fields.contains_key("command"), fields.contains_key("url")) {
            (true, true) => Err(self.invalid(
                "",
                "has both \"command\" and \"url\"; keep \"command\" to start the server, or \
                 \"url\" to reach a running one",
            )),
            (false, false) => Err(self.invalid(
                "",
                "needs \"command\" (a server to start) or \"url\" (a streamable-HTTP endpoint)",
            )),
            (true, false) => match kind {
                None | Some("stdio") => self.stdio(fields).map(ServerConfig::Stdio),
                Some(other) => Err(self.type_mismatch(other, "command")),
            },
            (false, true) => match kind {
                None | Some("http" | "streamable-http" | "streamableHttp") => {
                    self.http(fields, false)
                }
                Some("sse") => self.http(fields, true),
                Some(other) => Err(self.type_mismatch(other, "url")),
            },
        }
    }

    fn type_mismatch(&self, kind: &str, has: &str) -> ConfigError {
        match kind {
            "stdio" | "http" | "streamable-http" | "streamableHttp" | "sse" => self.invalid(
                "type",
                format!(
                    "{kind:?} does not fit an entry with {has:?}; use \"stdio\" with \
                     \"command\", \"http\" or \"sse\" with \"url\""
                ),
            ),
            _ => self.invalid(
                "type",
                format!(
                    "unknown transport {kind:?}; use \"stdio\", \"http\" or \"sse\", or leave \
                     it out"
                ),
            ),
        }
    }

    fn stdio(&self, fields: &Map<String, Value>) -> Result<StdioConfig, ConfigError> {
        let command = self.string(fields, "command")?.unwrap_or_default();
        // The transport's own checks, so the error names the entry.
        crate::transports::stdio::check_command(&command)
            .map_err(|problem| self.invalid("command", problem))?;
        let mut config = StdioConfig::new(command);
        match fields.get("args") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    let field = format!("args[{index}]");
                    let Value::String(arg) = item else {
                        return Err(self.invalid(
                            &field,
                            format!("expected a string, found {}; quote it", kind_of(item)),
                        ));
                    };
                    config.args.push(self.expand(&field, arg)?);
                }
            }
            Some(other) => {
                return Err(self.invalid(
                    "args",
                    format!(
                        "expected an array of strings, e.g. [\"-y\", \"package\"], found {}",
                        kind_of(other)
                    ),
                ));
            }
        }
        config.env = self.string_map(fields, "env")?;
        for (name, value) in &config.env {
            crate::transports::stdio::check_env_entry(name, value)
                .map_err(|problem| self.invalid(&format!("env.{name}"), problem))?;
        }
        if let Some(dir) = self.string(fields, "cwd")? {
            if dir.is_empty() {
                return Err(self.invalid("cwd", "it is empty; give a directory or leave it out"));
            }
            config.dir = Some(PathBuf::from(dir));
        }
        Ok(config)
    }

    /// A `url` entry: a streamable-HTTP endpoint, or with `sse` the event
    /// stream of the HTTP+SSE transport; the same fields either way.
    #[cfg(feature = "http")]
    fn http(&self, fields: &Map<String, Value>, sse: bool) -> Result<ServerConfig, ConfigError> {
        let url = self.string(fields, "url")?.unwrap_or_default();
        // Checked here with the transport's own checks, so the error names
        // the entry and field; values are never echoed (they may hold an
        // expanded secret).
        crate::transports::http::check_url(&url).map_err(|problem| self.invalid("url", problem))?;
        let headers = self.string_map(fields, "headers")?;
        for (name, value) in &headers {
            crate::transports::http::check_header(name, value)
                .map_err(|problem| self.invalid(&format!("headers.{name}"), problem))?;
        }
        let mut config = HttpConfig::new(url);
        config.headers = headers;
        Ok(match sse {
            true => ServerConfig::Sse(config),
            false => ServerConfig::Http(config),
        })
    }

    /// An entry's `"oauth"` object.
    #[cfg(feature = "http")]
    fn oauth(&self, server: &ServerConfig, value: &Value) -> Result<OAuthSettings, ConfigError> {
        if !matches!(server, ServerConfig::Http(_) | ServerConfig::Sse(_)) {
            return Err(self.invalid(
                "oauth",
                "OAuth applies to HTTP servers (\"url\"), not to a server started over stdio",
            ));
        }
        let Some(fields) = value.as_object() else {
            return Err(self.invalid(
                "oauth",
                format!("expected an object, found {}", kind_of(value)),
            ));
        };
        let mut settings = OAuthSettings::default();
        for (key, value) in fields {
            let field = format!("oauth.{key}");
            let text = || match value {
                Value::String(text) => self.expand(&field, text),
                other => Err(self.invalid(
                    &field,
                    format!("expected a string, found {}", kind_of(other)),
                )),
            };
            match key.as_str() {
                "client_id" => settings.client_id = Some(text()?),
                "client_secret" => settings.client_secret = Some(text()?.into()),
                "client_metadata_url" => settings.client_metadata_url = Some(text()?),
                "scope" => settings.scope = Some(text()?),
                "private_key_file" => settings.private_key_file = Some(PathBuf::from(text()?)),
                "client_credentials" => match value {
                    Value::Bool(on) => settings.client_credentials = *on,
                    other => {
                        return Err(self.invalid(
                            &field,
                            format!("expected true or false, found {}", kind_of(other)),
                        ));
                    }
                },
                _ => {
                    return Err(self.invalid(
                        &field,
                        "unknown key; the keys are client_id, client_secret, \
                         client_metadata_url, scope, client_credentials and private_key_file",
                    ));
                }
            }
        }
        Ok(settings)
    }

    #[cfg(not(feature = "http"))]
    fn http(&self, _fields: &Map<String, Value>, _sse: bool) -> Result<ServerConfig, ConfigError> {
        Err(self.invalid(
            "url",
            "this build of golem-mcp has no HTTP transport; enable its \"http\" feature",
        ))
    }

    /// An optional string field, expanded.
    fn string(
        &self,
        fields: &Map<String, Value>,
        field: &str,
    ) -> Result<Option<String>, ConfigError> {
        match fields.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(value)) => self.expand(field, value).map(Some),
            Some(other) => Err(self.invalid(
                field,
                format!("expected a string, found {}", kind_of(other)),
            )),
        }
    }

    /// An optional object of strings (`env`, `headers`), values expanded.
    fn string_map(
        &self,
        fields: &Map<String, Value>,
        field: &str,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        match fields.get(field) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(key, value)| {
                    let field = format!("{field}.{key}");
                    match value {
                        Value::String(value) => Ok((key.clone(), self.expand(&field, value)?)),
                        other => Err(self.invalid(
                            &field,
                            format!("expected a string, found {}; quote it", kind_of(other)),
                        )),
                    }
                })
                .collect(),
            Some(other) => Err(self.invalid(
                field,
                format!(
                    "expected an object of strings, e.g. {{\"NAME\": \"value\"}}, found {}",
                    kind_of(other)
                ),
            )),
        }
    }

    fn expand(&self, field: &str, value: &str) -> Result<String, ConfigError> {
        expand(value, self.env).map_err(|problem| self.invalid(field, problem))
    }
}

/// Replaces `${NAME}` and `${NAME:-default}` in `value`; `$${` is a literal
/// `${`. The error says what is wrong and how to fix it.
fn expand(value: &str, env: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let from_dollar = &rest[at..];
        if let Some(after) = from_dollar.strip_prefix("$${") {
            out.push_str("${");
            rest = after;
            continue;
        }
        let Some(reference) = from_dollar.strip_prefix("${") else {
            out.push('$');
            rest = &from_dollar[1..];
            continue;
        };
        let Some(end) = reference.find('}') else {
            return Err(
                "\"${\" without a closing \"}\"; write ${NAME}, or \"$${\" for a literal \"${\""
                    .to_owned(),
            );
        };
        let (name, default) = match reference[..end].split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (&reference[..end], None),
        };
        if !is_variable_name(name) {
            return Err(format!(
                "${{{name}}} is not a variable reference: a name is letters, digits and '_', \
                 not starting with a digit (write \"$${{\" for a literal \"${{\")"
            ));
        }
        match (env(name), default) {
            (Some(found), Some(default)) if found.is_empty() => out.push_str(default),
            (Some(found), _) => out.push_str(&found),
            (None, Some(default)) => out.push_str(default),
            (None, None) => {
                return Err(format!(
                    "${{{name}}} is not set; set it in the environment, give a default with \
                     ${{{name}:-value}}, or write the value into the file"
                ));
            }
        }
        rest = &reference[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first == '_' || first.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("s3cret".to_owned()),
            "HOME" => Some("/home/ada".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    fn servers(json: &str) -> Servers {
        parse(json, env).expect("a valid file")
    }

    fn stdio(servers: &Servers, name: &str) -> StdioConfig {
        match servers.get(name).expect("a valid entry") {
            ServerConfig::Stdio(config) => config,
            #[allow(unreachable_patterns)]
            other => panic!("expected stdio, got {other:?}"),
        }
    }

    #[cfg(feature = "http")]
    fn http(servers: &Servers, name: &str) -> HttpConfig {
        match servers.get(name).expect("a valid entry") {
            ServerConfig::Http(config) => config,
            other => panic!("expected http, got {other:?}"),
        }
    }

    /// The entry's error, which must be `Invalid`: (field, problem).
    fn invalid(json: &str, name: &str) -> (String, String) {
        match servers(json).get(name) {
            Err(ConfigError::Invalid {
                field,
                problem,
                server,
                ..
            }) => {
                assert_eq!(server.as_deref(), Some(name));
                (field, problem)
            }
            other => panic!("expected an invalid entry, got {other:?}"),
        }
    }

    #[test]
    fn an_entry_may_pin_its_protocol_revision() {
        let servers = servers(
            r#"{"mcpServers": {
                "git": {"command": "srv", "protocol": " 2025-11-25"},
                "new": {"command": "srv", "protocol": "2026-07-28"},
                "probed": {"command": "srv"}
            }}"#,
        );
        assert_eq!(servers.protocol("git"), Some("2025-11-25"));
        assert_eq!(servers.protocol("new"), Some("2026-07-28"));
        assert_eq!(servers.protocol("probed"), None);
        assert_eq!(servers.protocol("absent"), None);
        assert!(
            !servers
                .extra("git")
                .expect("entry")
                .contains_key("protocol"),
            "read here, not left to the application"
        );
        let (field, problem) = invalid(
            r#"{"mcpServers": {"x": {"command": "srv", "protocol": "2099-01-01"}}}"#,
            "x",
        );
        assert_eq!(field, "mcpServers.x.protocol");
        assert!(
            problem
                .starts_with("\"2099-01-01\" is not a revision this client speaks: 2026-07-28, "),
            "{problem}"
        );
        let (field, problem) = invalid(
            r#"{"mcpServers": {"x": {"command": "srv", "protocol": 20251125}}}"#,
            "x",
        );
        assert_eq!(
            (field.as_str(), problem.as_str()),
            ("mcpServers.x.protocol", "expected a string, found a number")
        );
    }

    #[cfg(feature = "http")]
    #[test]
    fn an_sse_entry_may_pin_only_an_initialize_era_revision() {
        let servers = servers(
            r#"{"mcpServers": {
                "old": {"type": "sse", "url": "http://127.0.0.1:8000/sse", "protocol": "2024-11-05"}
            }}"#,
        );
        assert_eq!(servers.protocol("old"), Some("2024-11-05"));
        let (_, problem) = invalid(
            r#"{"mcpServers": {"x": {"type": "sse", "url": "http://h/sse", "protocol": "2026-07-28"}}}"#,
            "x",
        );
        assert!(problem.contains("2026-07-28 does not fit it"), "{problem}");
    }

    #[test]
    fn reads_stdio_and_http_entries() {
        let servers = servers(
            r#"{"mcpServers": {
                "local": {"command": "npx", "args": ["-y", "pkg"], "env": {"A": "1", "B": "two"}, "cwd": "/tmp", "disabled": false},
                "bare": {"command": "server"},
                "remote": {"url": "http://127.0.0.1:3000/mcp", "headers": {"Authorization": "Bearer x"}},
                "typed": {"type": "streamable-http", "url": "https://example.com/mcp"}
            }, "otherHostSetting": 1}"#,
        );
        assert_eq!(
            servers.names().collect::<Vec<_>>(),
            ["bare", "local", "remote", "typed"]
        );
        assert_eq!(servers.len(), 4);
        let local = stdio(&servers, "local");
        assert_eq!(local.command, "npx");
        assert_eq!(local.args, ["-y", "pkg"]);
        assert_eq!(
            local.env,
            [("A".into(), "1".into()), ("B".into(), "two".into())]
        );
        assert_eq!(local.dir.as_deref(), Some(Path::new("/tmp")));
        let bare = stdio(&servers, "bare");
        assert!(bare.args.is_empty() && bare.env.is_empty() && bare.dir.is_none());
        #[cfg(feature = "http")]
        {
            let remote = http(&servers, "remote");
            assert_eq!(remote.url, "http://127.0.0.1:3000/mcp");
            assert_eq!(
                remote.headers,
                [("Authorization".into(), "Bearer x".into())]
            );
            assert_eq!(http(&servers, "typed").url, "https://example.com/mcp");
        }
    }

    #[cfg(feature = "http")]
    #[test]
    fn an_sse_entry_is_the_legacy_transport_with_the_http_fields() {
        let servers = parse(
            r#"{"mcpServers": {
                "old": {"type": "sse", "url": "http://127.0.0.1:${PORT}/sse",
                        "headers": {"X-Key": "${TOKEN}"}, "oauth": {"scope": "read"}}
            }}"#,
            |name| match name {
                "PORT" => Some("8000".to_owned()),
                "TOKEN" => Some("s3cret".to_owned()),
                _ => None,
            },
        )
        .expect("parsed");
        let ServerConfig::Sse(config) = servers.get("old").expect("a valid entry") else {
            panic!("expected the HTTP+SSE transport");
        };
        assert_eq!(config.url, "http://127.0.0.1:8000/sse");
        assert_eq!(config.headers, [("X-Key".into(), "s3cret".into())]);
        let oauth = servers.oauth("old").expect("its oauth settings");
        assert_eq!(oauth.scope.as_deref(), Some("read"));
    }

    #[cfg(feature = "http")]
    #[test]
    fn oauth_settings_are_read_expanded_and_checked() {
        let servers = parse(
            r#"{"mcpServers": {
                "a": {"url": "https://a.example/mcp", "oauth": {
                    "client_id": "id", "client_secret": "${SECRET}", "scope": "x y",
                    "client_credentials": true, "private_key_file": "k.pem",
                    "client_metadata_url": "https://app.example/client.json"}},
                "b": {"url": "https://b.example/mcp"},
                "typo": {"url": "https://c.example/mcp", "oauth": {"clientid": "x"}},
                "stdio": {"command": "x", "oauth": {}},
                "flag": {"url": "https://d.example/mcp", "oauth": {"client_credentials": "yes"}}
            }}"#,
            |name| (name == "SECRET").then(|| "s3cr3t-value".to_owned()),
        )
        .expect("parsed");
        let a = servers.oauth("a").expect("settings");
        assert_eq!(a.client_id.as_deref(), Some("id"));
        assert_eq!(
            a.client_secret.as_ref().map(golem_mcp_auth::Secret::expose),
            Some("s3cr3t-value")
        );
        assert_eq!(a.scope.as_deref(), Some("x y"));
        assert!(a.client_credentials);
        assert_eq!(a.private_key_file, Some(PathBuf::from("k.pem")));
        assert_eq!(
            a.client_metadata_url.as_deref(),
            Some("https://app.example/client.json")
        );
        assert!(servers.oauth("b").is_none());
        for (name, field) in [
            ("typo", "mcpServers.typo.oauth.clientid"),
            ("stdio", "mcpServers.stdio.oauth"),
            ("flag", "mcpServers.flag.oauth.client_credentials"),
        ] {
            let error = servers.get(name).expect_err("malformed oauth");
            assert!(error.to_string().contains(field), "{error}");
            assert!(servers.oauth(name).is_none());
        }
        assert!(!format!("{servers:?}").contains("s3cr3t-value"));
    }

    #[test]
    fn expands_variables_in_every_string_field() {
        let servers = servers(
            r#"{"mcpServers": {
                "s": {"command": "${HOME}/bin/server", "args": ["--token=${TOKEN}", "$${LITERAL}", "cost: $5", "${UNSET:-fallback}", "${EMPTY:-fallback}", "[${EMPTY}]"],
                      "env": {"T": "${TOKEN}"}, "cwd": "${HOME}"},
                "h": {"url": "http://127.0.0.1:${PORT:-8080}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
            }}"#,
        );
        let s = stdio(&servers, "s");
        assert_eq!(s.command, "/home/ada/bin/server");
        assert_eq!(
            s.args,
            [
                "--token=s3cret",
                "${LITERAL}",
                "cost: $5",
                "fallback",
                "fallback",
                "[]"
            ]
        );
        assert_eq!(s.env, [("T".into(), "s3cret".into())]);
        assert_eq!(s.dir.as_deref(), Some(Path::new("/home/ada")));
        #[cfg(feature = "http")]
        {
            let h = http(&servers, "h");
            assert_eq!(h.url, "http://127.0.0.1:8080/mcp");
            assert_eq!(
                h.headers,
                [("Authorization".into(), "Bearer s3cret".into())]
            );
        }
    }

    #[test]
    fn an_unset_variable_names_the_entry_the_field_and_the_fix() {
        let json = r#"{"mcpServers": {
            "github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
            "fine": {"command": "ok"}
        }}"#;
        let (field, problem) = invalid(json, "github");
        assert_eq!(field, "mcpServers.github.env.GITHUB_TOKEN");
        assert!(problem.contains("${GITHUB_TOKEN} is not set"), "{problem}");
        assert!(problem.contains("set it in the environment"), "{problem}");
        // The other entry stays usable.
        assert_eq!(stdio(&servers(json), "fine").command, "ok");
        let message = servers(json).get("github").expect_err("unset").to_string();
        assert!(
            message.starts_with("mcp: config configuration: mcpServers.github.env.GITHUB_TOKEN: "),
            "{message}"
        );
    }

    #[test]
    fn malformed_references_are_errors() {
        let (field, problem) = invalid(r#"{"mcpServers": {"s": {"command": "a${HOME"}}}"#, "s");
        assert_eq!(field, "mcpServers.s.command");
        assert!(problem.contains("without a closing"), "{problem}");
        let (field, problem) = invalid(
            r#"{"mcpServers": {"s": {"command": "x", "args": ["${1X}"]}}}"#,
            "s",
        );
        assert_eq!(field, "mcpServers.s.args[0]");
        assert!(problem.contains("not a variable reference"), "{problem}");
    }

    #[test]
    fn each_malformed_field_is_named() {
        let cases = [
            (r#""oops""#, "mcpServers.s", "expected an object"),
            (r#"{}"#, "mcpServers.s", "needs \"command\""),
            (
                r#"{"command": "a", "url": "http://x"}"#,
                "mcpServers.s",
                "both",
            ),
            (
                r#"{"command": 7}"#,
                "mcpServers.s.command",
                "expected a string, found a number",
            ),
            (r#"{"command": " "}"#, "mcpServers.s.command", "empty"),
            (
                r#"{"command": "a", "args": "-y pkg"}"#,
                "mcpServers.s.args",
                "array of strings",
            ),
            (
                r#"{"command": "a", "args": ["ok", 3]}"#,
                "mcpServers.s.args[1]",
                "found a number",
            ),
            (
                r#"{"command": "a", "env": ["A=1"]}"#,
                "mcpServers.s.env",
                "object of strings",
            ),
            (
                r#"{"command": "a", "env": {"PORT": 8080}}"#,
                "mcpServers.s.env.PORT",
                "quote it",
            ),
            (
                r#"{"command": "a", "cwd": ""}"#,
                "mcpServers.s.cwd",
                "empty",
            ),
            (
                r#"{"command": "a", "cwd": false}"#,
                "mcpServers.s.cwd",
                "found a boolean",
            ),
            (
                r#"{"command": "a", "type": "http"}"#,
                "mcpServers.s.type",
                "does not fit",
            ),
            (
                r#"{"command": "a", "type": "sse"}"#,
                "mcpServers.s.type",
                "\"sse\" with \"url\"",
            ),
            (
                r#"{"url": "http://x", "type": "carrier-pigeon"}"#,
                "mcpServers.s.type",
                "unknown transport",
            ),
            (
                r#"{"url": "http://x", "type": 1}"#,
                "mcpServers.s.type",
                "expected a string",
            ),
            (r#"{"url": 1}"#, "mcpServers.s.url", "expected a string"),
            (r#"{"url": ""}"#, "mcpServers.s.url", "empty"),
            (
                r#"{"url": "http://x", "headers": {"X-Key": null}}"#,
                "mcpServers.s.headers.X-Key",
                "found null",
            ),
            (
                r#"{"url": "http://x", "headers": "Authorization: x"}"#,
                "mcpServers.s.headers",
                "object of strings",
            ),
        ];
        for (entry, expected_field, expected_problem) in cases {
            let json = format!(r#"{{"mcpServers": {{"s": {entry}}}}}"#);
            if cfg!(not(feature = "http")) && entry.contains("url") {
                continue;
            }
            let (field, problem) = invalid(&json, "s");
            assert_eq!(field, expected_field, "for {entry}");
            assert!(
                problem.contains(expected_problem),
                "for {entry}: {problem:?} should mention {expected_problem:?}"
            );
        }
    }

    #[test]
    fn an_unknown_name_lists_the_servers_there_are() {
        let servers = servers(r#"{"mcpServers": {"b": {"command": "b"}, "a": {"command": "a"}}}"#);
        let error = servers.get("c").expect_err("no such server");
        assert_eq!(
            error,
            ConfigError::UnknownServer {
                origin: "configuration".into(),
                name: "c".into(),
                available: vec!["a".into(), "b".into()]
            }
        );
        assert!(error.to_string().ends_with("it defines: a, b"), "{error}");
        let empty = parse(r#"{"mcpServers": {}}"#, env).expect("valid");
        assert!(empty.is_empty());
        assert!(
            empty
                .get("a")
                .expect_err("none")
                .to_string()
                .ends_with("the file defines no server")
        );
    }

    #[test]
    fn file_level_problems_fail_the_whole_file() {
        let error = parse("{\"mcpServers\": {", env).expect_err("not JSON");
        assert!(matches!(error, ConfigError::Syntax { .. }), "{error:?}");
        assert!(error.to_string().contains("line 1"), "{error}");
        for text in ["[]", "{}", r#"{"servers": {}}"#, r#"{"mcpServers": []}"#] {
            let error = parse(text, env).expect_err("no mcpServers object");
            assert!(
                matches!(&error, ConfigError::Invalid { field, server: None, .. } if field == "mcpServers"),
                "{text}: {error:?}"
            );
        }
    }

    #[test]
    fn load_reads_a_file_and_names_it() {
        let dir = std::env::temp_dir().join(format!("golem-mcp-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("servers.json");
        std::fs::write(
            &path,
            r#"{"mcpServers": {"x": {"command": "x", "args": [1]}}}"#,
        )
        .expect("written");
        let servers = load(&path).expect("loads");
        let error = servers.get("x").expect_err("args[0] is a number");
        assert!(
            error.to_string().starts_with(&format!(
                "mcp: config {}: mcpServers.x.args[0]: ",
                path.display()
            )),
            "{error}"
        );
        let missing = load(dir.join("missing.json")).expect_err("no such file");
        assert!(matches!(missing, ConfigError::Read { .. }), "{missing:?}");
        assert!(missing.to_string().contains("check the path"), "{missing}");
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }

    #[cfg(feature = "http")]
    #[test]
    fn bad_urls_and_headers_name_the_entry_and_never_show_the_value() {
        let json = r#"{"mcpServers": {
            "badurl": {"url": "not a url ${TOKEN}"},
            "ftp": {"url": "ftp://example.com/${TOKEN}"},
            "badhdr": {"url": "http://127.0.0.1/mcp", "headers": {"X-Key": "a\nb${TOKEN}"}}
        }}"#;
        for (name, field) in [
            ("badurl", "url"),
            ("ftp", "url"),
            ("badhdr", "headers.X-Key"),
        ] {
            let (named, problem) = invalid(json, name);
            assert_eq!(named, format!("mcpServers.{name}.{field}"));
            let error = servers(json).get(name).expect_err("invalid").to_string();
            assert!(
                !error.contains("s3cret") && !problem.contains("s3cret"),
                "{error}"
            );
        }
    }
}
