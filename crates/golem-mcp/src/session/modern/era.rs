//! The modern era's data: what `server/discover` answers, which errors only
//! a modern server gives, how a revision is chosen from a server's list,
//! and the `_meta` every modern request carries (ADR 0018).
//!
//! The era decision itself (probe, fallback, pinning) is the handshake's
//! (`handshake/mod.rs`); this module holds the pure parts it decides with,
//! so that they can be tested on their own.

use serde::Deserialize;
use serde_json::Value;

use crate::error::Error;
use crate::session::protocol::{
    ClientInfo, HowChosen, Implementation, MODERN_PROTOCOL_VERSIONS, ServerInfo,
};
use crate::wire::jsonrpc::ProtocolError;

/// `HeaderMismatch`: the HTTP headers do not match the body.
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// `MissingRequiredClientCapability`.
pub(crate) const MISSING_CAPABILITY: i64 = -32021;
/// `UnsupportedProtocolVersion`, with `data.supported`.
pub(crate) const UNSUPPORTED_VERSION: i64 = -32022;

/// The tasks extension's identifier, the key of its entry in the
/// `extensions` of both sides' capabilities (ADR 0025).
pub(crate) const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether `capabilities` (a client's or a server's) declare extension
/// `name` (an object under `extensions`).
pub(crate) fn declares_extension(capabilities: &Value, name: &str) -> bool {
    capabilities
        .get("extensions")
        .and_then(|extensions| extensions.get(name))
        .is_some_and(Value::is_object)
}

/// An error only a modern server gives: what identifies one, on the probe
/// and on any later request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ModernError {
    /// The revision asked for is not served; these are.
    UnsupportedVersion { supported: Vec<String> },
    /// The headers did not match the body (`-32020`).
    HeaderMismatch,
    /// A capability the request needs was not declared (`-32021`).
    MissingCapability,
}

impl ModernError {
    /// The modern error `error` is, if it is one. A `-32022` without a list
    /// of versions is not recognised: legacy servers use codes of that
    /// range for their own errors too.
    pub(crate) fn recognise(error: &ProtocolError) -> Option<ModernError> {
        match error.code {
            UNSUPPORTED_VERSION => {
                let supported = error.data.as_ref()?.get("supported")?.as_array()?;
                let supported = supported
                    .iter()
                    .map(|version| version.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()?;
                Some(ModernError::UnsupportedVersion { supported })
            }
            HEADER_MISMATCH => Some(ModernError::HeaderMismatch),
            MISSING_CAPABILITY => Some(ModernError::MissingCapability),
            _ => None,
        }
    }
}

/// The newest modern revision both this client and a server with
/// `supported` speak.
pub(crate) fn newest_mutual(supported: &[String]) -> Option<&'static str> {
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .find(|version| supported.iter().any(|theirs| theirs == **version))
        .copied()
}

/// The error for a modern server that speaks no revision this client does.
pub(crate) fn no_mutual_version(operation: &str, supported: &[String]) -> Error {
    Error::VersionMismatch {
        offered: MODERN_PROTOCOL_VERSIONS.join(", "),
        received: match supported.is_empty() {
            true => format!("none (from {operation})"),
            false => supported.join(", "),
        },
        supported: crate::session::protocol::known_versions(),
    }
}

/// A `server/discover` answer, as far as this client reads it.
#[derive(Deserialize)]
pub(crate) struct DiscoverResult {
    #[serde(rename = "supportedVersions")]
    supported_versions: Vec<String>,
    #[serde(default)]
    capabilities: Value,
    #[serde(default)]
    instructions: Option<String>,
    #[serde(rename = "_meta", default)]
    meta: Option<DiscoverMeta>,
    /// Where some servers put their identity instead of `_meta`.
    #[serde(rename = "serverInfo", default)]
    server_info: Option<Implementation>,
}

#[derive(Deserialize)]
struct DiscoverMeta {
    #[serde(rename = "io.modelcontextprotocol/serverInfo", default)]
    server_info: Option<Implementation>,
}

impl DiscoverResult {
    /// The versions the server listed.
    pub(crate) fn supported_versions(&self) -> &[String] {
        &self.supported_versions
    }

    /// What the client records about the server, speaking `version`.
    pub(crate) fn into_info(self, version: &'static str, chosen: HowChosen) -> ServerInfo {
        let identity = self
            .meta
            .and_then(|meta| meta.server_info)
            .or(self.server_info);
        let mut info = ServerInfo::new("", "");
        if let Some(identity) = identity {
            info.name = identity.name;
            info.version = identity.version;
            info.title = identity.title;
        }
        info.protocol_version = version.to_owned();
        info.supported_versions = self.supported_versions;
        info.chosen = chosen;
        info.capabilities = match self.capabilities {
            Value::Object(_) => self.capabilities,
            _ => Value::Object(serde_json::Map::new()),
        };
        info.instructions = self.instructions;
        info
    }
}

/// The reserved `_meta` entries of every modern request, encoded once per
/// connection: the revision, the client's capabilities (exactly what the
/// application registered) and its identity. Without the braces, so that
/// a request's own entries (its progress token) can join them.
#[derive(Debug, Clone)]
pub(crate) struct ModernMeta {
    version: &'static str,
    entries: Box<str>,
    /// Whether the capabilities declare the tasks extension: then a
    /// `tools/call` may be answered with a task.
    tasks: bool,
}

impl ModernMeta {
    /// The entries for revision `version`.
    pub(crate) fn new(version: &'static str, client: &ClientInfo, capabilities: &Value) -> Self {
        let entries = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": client,
        })
        .to_string();
        // `{...}` without its braces (servers read the members by name).
        let entries = entries[1..entries.len() - 1].into();
        ModernMeta {
            version,
            entries,
            tasks: declares_extension(capabilities, TASKS_EXTENSION),
        }
    }

    /// Whether the requests declare the tasks extension.
    pub(crate) fn declares_tasks(&self) -> bool {
        self.tasks
    }

    /// The revision the entries name.
    pub(crate) fn version(&self) -> &'static str {
        self.version
    }

    /// The entries as JSON object members, without braces.
    pub(crate) fn entries(&self) -> &str {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error(code: i64, data: Option<Value>) -> ProtocolError {
        ProtocolError {
            code,
            message: "m".into(),
            data,
        }
    }

    #[test]
    fn modern_errors_are_recognised_by_code_and_shape() {
        assert_eq!(
            ModernError::recognise(&error(
                -32022,
                Some(json!({"supported": ["2026-07-28", "2025-11-25"]}))
            )),
            Some(ModernError::UnsupportedVersion {
                supported: vec!["2026-07-28".into(), "2025-11-25".into()]
            })
        );
        assert_eq!(
            ModernError::recognise(&error(-32020, None)),
            Some(ModernError::HeaderMismatch)
        );
        assert_eq!(
            ModernError::recognise(&error(-32021, None)),
            Some(ModernError::MissingCapability)
        );
        // A -32022 without its list, and the legacy servers' usual answers.
        for (code, data) in [
            (-32022, None),
            (-32022, Some(json!({"supported": "2026-07-28"}))),
            (-32601, None),
            (-32602, None),
            (-32000, None),
        ] {
            assert_eq!(ModernError::recognise(&error(code, data)), None, "{code}");
        }
    }

    #[test]
    fn the_newest_mutual_version_is_chosen_or_none() {
        assert_eq!(
            newest_mutual(&["2099-01-01".into(), "2026-07-28".into()]),
            Some("2026-07-28")
        );
        assert_eq!(newest_mutual(&["2099-01-01".into()]), None);
        assert_eq!(newest_mutual(&[]), None);
        let message = no_mutual_version("server/discover", &["2099-01-01".into()]).to_string();
        assert!(
            message.contains("2099-01-01") && message.contains("2026-07-28"),
            "{message}"
        );
    }

    #[test]
    fn a_discovery_answer_gives_identity_capabilities_and_versions() {
        let result: DiscoverResult = serde_json::from_value(json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
            "instructions": "use it",
        }))
        .expect("valid");
        let info = result.into_info("2026-07-28", HowChosen::Discovered);
        assert_eq!((info.name.as_str(), info.version.as_str()), ("s", "1"));
        assert_eq!(info.capabilities, json!({"tools": {}}));
        assert_eq!(info.supported_versions, ["2026-07-28"]);
        assert_eq!(info.instructions.as_deref(), Some("use it"));
        assert_eq!(info.era(), crate::session::protocol::Era::Modern);
        assert_eq!(info.chosen, HowChosen::Discovered);
    }

    #[test]
    fn an_identity_in_the_body_is_read_too() {
        let result: DiscoverResult = serde_json::from_value(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": {},
            "serverInfo": {"name": "body", "version": "2"},
        }))
        .expect("valid");
        let info = result.into_info("2026-07-28", HowChosen::Discovered);
        assert_eq!((info.name.as_str(), info.version.as_str()), ("body", "2"));
    }

    #[test]
    fn the_meta_entries_name_version_capabilities_and_client() {
        let meta = ModernMeta::new(
            "2026-07-28",
            &ClientInfo::default(),
            &json!({"elicitation": {"form": {}}}),
        );
        let object: Value =
            serde_json::from_str(&format!("{{{}}}", meta.entries())).expect("members");
        assert_eq!(
            object["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            object["io.modelcontextprotocol/clientCapabilities"],
            json!({"elicitation": {"form": {}}})
        );
        assert_eq!(
            object["io.modelcontextprotocol/clientInfo"]["name"],
            "golem-mcp"
        );
        assert!(!meta.declares_tasks());
        let with_tasks = ModernMeta::new(
            "2026-07-28",
            &ClientInfo::default(),
            &json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
        );
        assert!(with_tasks.declares_tasks());
    }
}
