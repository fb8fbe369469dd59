//! The protocol revisions as data: the versions offered and accepted, the
//! eras they belong to ([`Era`]), what `initialize` announces and what its
//! answer means, and what is known of each side. The negotiated revision reaches the transports as data
//! on every message ([`Outgoing::protocol_version`](crate::wire::transport::Outgoing::protocol_version)),
//! not through a method they must remember to forward.
//!
//! Two eras of the protocol are spoken (ADR 0018). The *legacy* revisions
//! (2025-11-25 and earlier) open with the `initialize` handshake; the
//! *modern* ones (2026-07-28 and later) are stateless: the server describes
//! itself through `server/discover`, and every request carries the revision
//! and the client's identity and capabilities in its `_meta`. Which era a
//! connection speaks is decided once, before its first request, by the
//! handshake (`handshake/mod.rs`), and never mixed; the modern era's own
//! data is in `modern/era.rs`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;

/// The newest legacy protocol revision this client implements: the one it
/// offers at `initialize`.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// The newest protocol revision this client implements: the stateless one
/// it prefers, named in `server/discover` and in every request's `_meta`.
pub const MODERN_PROTOCOL_VERSION: &str = "2026-07-28";

/// The modern (stateless) revisions this client speaks, newest first.
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &["2026-07-28"];

/// Every legacy (`initialize`) revision this client can speak, newest
/// first. A server answering `initialize` with any other version is refused
/// with [`Error::VersionMismatch`].
///
/// Tool listing and calling read the same in all of them; what a newer
/// revision adds (elicitation, structured output, tasks) is used only when
/// the server offers it.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Which era a protocol revision belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// 2026-07-28 and later: stateless, no handshake; the revision and the
    /// client's identity and capabilities travel with every request.
    Modern,
    /// 2025-11-25 and earlier: a session opened by `initialize`.
    Legacy,
}

impl Era {
    /// The era of revision `version` (a date, `YYYY-MM-DD`): modern from
    /// 2026-07-28 on.
    pub fn of(version: &str) -> Era {
        match version >= MODERN_PROTOCOL_VERSION {
            true => Era::Modern,
            false => Era::Legacy,
        }
    }
}

/// Which protocol revision a [`Client`](crate::Client) speaks to its
/// server; see [`ClientConfig::protocol`](crate::ClientConfig::protocol).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ProtocolChoice {
    /// Find the server's era (the default): probe with `server/discover`;
    /// a discovery answer or a modern error means a modern server, any
    /// other error (or no answer within
    /// [`ClientConfig::probe_timeout`](crate::ClientConfig::probe_timeout))
    /// a legacy one, which is then initialized on the same connection.
    #[default]
    Auto,
    /// Speak exactly this revision: a modern one never sends `initialize`,
    /// a legacy one never probes. It must be one of
    /// [`MODERN_PROTOCOL_VERSIONS`] or [`SUPPORTED_PROTOCOL_VERSIONS`].
    Pinned(String),
}

impl ProtocolChoice {
    /// The revision pinned, checked against what this client speaks.
    pub(crate) fn pinned(&self) -> Result<Option<&'static str>, Error> {
        let ProtocolChoice::Pinned(version) = self else {
            return Ok(None);
        };
        MODERN_PROTOCOL_VERSIONS
            .iter()
            .chain(SUPPORTED_PROTOCOL_VERSIONS)
            .find(|known| **known == version)
            .map(|known| Some(*known))
            .ok_or_else(|| Error::InvalidConfig {
                operation: "initialize",
                field: "protocol".into(),
                problem: format!(
                    "this client does not speak protocol version {version:?}; it speaks {}",
                    known_versions()
                ),
            })
    }
}

/// Every revision this client speaks, newest first, comma-separated.
pub(crate) fn known_versions() -> String {
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .chain(SUPPORTED_PROTOCOL_VERSIONS)
        .copied()
        .collect::<Vec<_>>()
        .join(", ")
}

/// How the revision a client speaks was chosen ([`ServerInfo::chosen`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum HowChosen {
    /// The server answered `server/discover`: it speaks the modern era.
    Discovered,
    /// The probe got no discovery answer (`probe` says what it got
    /// instead), and the server accepted `initialize`: a legacy server.
    FellBack {
        /// What the `server/discover` probe was answered with.
        probe: String,
    },
    /// The application pinned the revision
    /// ([`ProtocolChoice::Pinned`]); nothing was probed.
    Pinned,
    /// The transport carries the initialize era only (the HTTP+SSE
    /// transport of 2024-11-05:
    /// [`Transport::legacy_only`](crate::Transport::legacy_only)); nothing
    /// was probed, `initialize` was sent at once.
    LegacyTransport,
}

/// How this client introduces itself to servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClientInfo {
    /// A short machine-friendly name, e.g. `my-agent`.
    pub name: String,
    /// The client's version.
    pub version: String,
}

impl Default for ClientInfo {
    /// `golem-mcp` and this crate's version.
    fn default() -> Self {
        ClientInfo {
            name: "golem-mcp".to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// What the server said about itself: at `initialize` (legacy), or in its
/// `server/discover` answer (modern: its identity is the answer's
/// `_meta["io.modelcontextprotocol/serverInfo"]`, empty when absent). The
/// same in both eras.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ServerInfo {
    /// The server's name (`serverInfo.name`).
    pub name: String,
    /// The server's version (`serverInfo.version`).
    pub version: String,
    /// Its human-friendly title, when given (`serverInfo.title`).
    pub title: Option<String>,
    /// The protocol revision both sides agreed on.
    pub protocol_version: String,
    /// The revisions the server said it supports (`supportedVersions` of
    /// `server/discover`; for a legacy server, the one it chose).
    pub supported_versions: Vec<String>,
    /// How the revision was chosen: discovered, fallen back to, pinned.
    pub chosen: HowChosen,
    /// The server's capabilities object, as sent.
    pub capabilities: Value,
    /// Guidance on using the server, which applications may show to a model.
    pub instructions: Option<String>,
}

/// The `initialize` request's parameters.
#[derive(Serialize)]
pub(crate) struct InitializeParams<'a> {
    #[serde(rename = "protocolVersion")]
    protocol_version: &'static str,
    /// Exactly what the application registered (sampling, elicitation,
    /// roots); servers send no other requests.
    capabilities: Value,
    #[serde(rename = "clientInfo")]
    client_info: &'a ClientInfo,
}

impl<'a> InitializeParams<'a> {
    /// Offers `pinned`, or else the newest legacy revision.
    pub(crate) fn new(
        client_info: &'a ClientInfo,
        capabilities: Value,
        pinned: Option<&'static str>,
    ) -> Self {
        InitializeParams {
            protocol_version: pinned.unwrap_or(LATEST_PROTOCOL_VERSION),
            capabilities,
            client_info,
        }
    }
}

/// The `initialize` answer, as far as this client reads it.
#[derive(Deserialize)]
pub(crate) struct InitializeResult {
    #[serde(rename = "protocolVersion")]
    protocol_version: String,
    #[serde(default)]
    capabilities: Value,
    #[serde(rename = "serverInfo")]
    server_info: Implementation,
    #[serde(default)]
    instructions: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct Implementation {
    pub(crate) name: String,
    #[serde(default)]
    pub(crate) version: String,
    #[serde(default)]
    pub(crate) title: Option<String>,
}

impl ServerInfo {
    /// Server information with a name and a version, the newest protocol
    /// revision, no capabilities, title or instructions: for tests and for
    /// tools that show a server they did not connect to. Set the other
    /// (public) fields after it.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        ServerInfo {
            name: name.into(),
            version: version.into(),
            title: None,
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            supported_versions: vec![LATEST_PROTOCOL_VERSION.to_owned()],
            chosen: HowChosen::Pinned,
            capabilities: Value::Object(serde_json::Map::new()),
            instructions: None,
        }
    }

    /// The era of the revision spoken.
    pub fn era(&self) -> Era {
        Era::of(&self.protocol_version)
    }
}

/// A handshake the client accepted.
pub(crate) struct Accepted {
    /// What the client records about the server.
    pub(crate) info: ServerInfo,
    /// The negotiated revision, as one of [`SUPPORTED_PROTOCOL_VERSIONS`].
    pub(crate) protocol_version: &'static str,
}

impl InitializeResult {
    /// Checks the version the server chose (the pinned one, when the
    /// client was pinned) and returns what the client records.
    pub(crate) fn accept(self, pinned: Option<&'static str>) -> Result<Accepted, Error> {
        let Some(version) = SUPPORTED_PROTOCOL_VERSIONS
            .iter()
            .find(|supported| **supported == self.protocol_version)
            .filter(|version| pinned.is_none_or(|pinned| pinned == **version))
        else {
            return Err(Error::VersionMismatch {
                offered: pinned.unwrap_or(LATEST_PROTOCOL_VERSION).to_owned(),
                received: self.protocol_version,
                supported: SUPPORTED_PROTOCOL_VERSIONS.join(", "),
            });
        };
        Ok(Accepted {
            info: ServerInfo {
                name: self.server_info.name,
                version: self.server_info.version,
                title: self.server_info.title,
                supported_versions: vec![self.protocol_version.clone()],
                chosen: HowChosen::Pinned,
                protocol_version: self.protocol_version,
                capabilities: self.capabilities,
                instructions: self.instructions,
            },
            protocol_version: version,
        })
    }
}

/// The `notifications/cancelled` parameters for a request this client gave
/// up on.
#[derive(Serialize)]
pub(crate) struct CancelledParams {
    #[serde(rename = "requestId")]
    request_id: u64,
    reason: &'static str,
}

impl CancelledParams {
    /// For request `request_id`, whose caller dropped its future.
    pub(crate) fn abandoned(request_id: u64) -> Self {
        CancelledParams {
            request_id,
            reason: "the client abandoned the request",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(version: &str) -> InitializeResult {
        serde_json::from_value(serde_json::json!({
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "s", "version": "1"},
        }))
        .expect("valid result")
    }

    #[test]
    fn accepts_every_supported_version() {
        for version in SUPPORTED_PROTOCOL_VERSIONS {
            let accepted = result(version).accept(None).expect("supported");
            assert_eq!(accepted.info.protocol_version, *version);
            assert_eq!(accepted.protocol_version, *version);
        }
    }

    #[test]
    fn refuses_an_unknown_version_naming_both() {
        let Err(error) = result("2099-01-01").accept(None) else {
            panic!("2099-01-01 was accepted");
        };
        let message = error.to_string();
        assert!(message.contains("2099-01-01"), "{message}");
        assert!(message.contains(LATEST_PROTOCOL_VERSION), "{message}");
    }

    #[test]
    fn announces_the_newest_version_and_no_capabilities() {
        let info = ClientInfo::default();
        let params =
            serde_json::to_value(InitializeParams::new(&info, serde_json::json!({}), None))
                .expect("serialises");
        assert_eq!(params["protocolVersion"], LATEST_PROTOCOL_VERSION);
        assert_eq!(params["capabilities"], serde_json::json!({}));
        assert_eq!(params["clientInfo"]["name"], "golem-mcp");
    }
}
