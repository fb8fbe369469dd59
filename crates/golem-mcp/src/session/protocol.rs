//! The handshake and the protocol-era decisions, in one place.
//!
//! Everything that depends on *which revision* of MCP is spoken lives here:
//! the versions offered and accepted, what `initialize` announces, and what
//! its answer means. The negotiated revision reaches the transports as data
//! on every message ([`Outgoing::protocol_version`](crate::wire::transport::Outgoing::protocol_version)),
//! not through a method they must remember to forward.
//!
//! The stateless revision (2026-07-28) replaces `initialize` with a
//! `server/discover` probe and puts the revision and the client's identity
//! in each request's `_meta`. Supporting it changes this module, the
//! client's handshake (`Lifecycle` in `client.rs`) and the request encoding
//! in `connection.rs` (the per-request metadata); the transports already
//! carry whatever each message says.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Error;

/// The newest protocol revision this client implements, offered at
/// `initialize`.
pub const LATEST_PROTOCOL_VERSION: &str = "2025-11-25";

/// Every revision this client can speak, newest first. A server answering
/// `initialize` with any other version is refused with
/// [`Error::VersionMismatch`].
///
/// Tool listing and calling read the same in all of them; what a newer
/// revision adds (elicitation, structured output, tasks) is used only when
/// the server offers it.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

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

/// What the server said about itself at `initialize`.
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
    pub(crate) fn new(client_info: &'a ClientInfo, capabilities: Value) -> Self {
        InitializeParams {
            protocol_version: LATEST_PROTOCOL_VERSION,
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
struct Implementation {
    name: String,
    #[serde(default)]
    version: String,
    #[serde(default)]
    title: Option<String>,
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
            capabilities: Value::Object(serde_json::Map::new()),
            instructions: None,
        }
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
    /// Checks the version the server chose and returns what the client
    /// records.
    pub(crate) fn accept(self) -> Result<Accepted, Error> {
        let Some(version) = SUPPORTED_PROTOCOL_VERSIONS
            .iter()
            .find(|supported| **supported == self.protocol_version)
        else {
            return Err(Error::VersionMismatch {
                offered: LATEST_PROTOCOL_VERSION.to_owned(),
                received: self.protocol_version,
                supported: SUPPORTED_PROTOCOL_VERSIONS.join(", "),
            });
        };
        Ok(Accepted {
            info: ServerInfo {
                name: self.server_info.name,
                version: self.server_info.version,
                title: self.server_info.title,
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
            let accepted = result(version).accept().expect("supported");
            assert_eq!(accepted.info.protocol_version, *version);
            assert_eq!(accepted.protocol_version, *version);
        }
    }

    #[test]
    fn refuses_an_unknown_version_naming_both() {
        let Err(error) = result("2099-01-01").accept() else {
            panic!("2099-01-01 was accepted");
        };
        let message = error.to_string();
        assert!(message.contains("2099-01-01"), "{message}");
        assert!(message.contains(LATEST_PROTOCOL_VERSION), "{message}");
    }

    #[test]
    fn announces_the_newest_version_and_no_capabilities() {
        let info = ClientInfo::default();
        let params = serde_json::to_value(InitializeParams::new(&info, serde_json::json!({})))
            .expect("serialises");
        assert_eq!(params["protocolVersion"], LATEST_PROTOCOL_VERSION);
        assert_eq!(params["capabilities"], serde_json::json!({}));
        assert_eq!(params["clientInfo"]["name"], "golem-mcp");
    }
}
