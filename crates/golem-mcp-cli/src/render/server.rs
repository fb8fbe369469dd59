//! What `info` and `ping` print: the server's identity, protocol,
//! capabilities and instructions, and the round-trip time. It knows
//! nothing of the client: it is given the `initialize` answer or a
//! duration.

use std::fmt::Write as _;

use golem_mcp::{HowChosen, ServerInfo};
use serde_json::{Value, json};

use crate::render::text::{dedented, indented, pretty};

/// What carried the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// A stdio server.
    Stdio,
    /// Streamable HTTP.
    StreamableHttp,
    /// HTTP+SSE (2024-11-05): asked for, or `after` streamable HTTP was
    /// refused with that status.
    Sse {
        /// The status that refused streamable HTTP, when it fell back.
        after: Option<u16>,
    },
}

/// The transport in a few words.
fn transport_text(transport: Transport) -> String {
    match transport {
        Transport::Stdio => "stdio".to_owned(),
        Transport::StreamableHttp => "streamable HTTP".to_owned(),
        Transport::Sse { after: None } => "HTTP+SSE (2024-11-05)".to_owned(),
        Transport::Sse {
            after: Some(status),
        } => format!("HTTP+SSE (2024-11-05), after streamable HTTP got HTTP {status}"),
    }
}

/// `info` for people: identity, protocol (a pinned one said to be pinned
/// `pinned`: `with --protocol`, `in the config`), transport,
/// capabilities, instructions.
pub fn info_text(server: &ServerInfo, pinned: &str, transport: Transport) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let identity = format!("{} {}", server.name, server.version);
    // A server without a version gets no trailing blank.
    let _ = writeln!(out, "server:       {}", identity.trim_end());
    if let Some(title) = server.title.as_deref().filter(|title| !title.is_empty()) {
        let _ = writeln!(out, "title:        {title}");
    }
    let _ = writeln!(
        out,
        "protocol:     {} ({})",
        server.protocol_version,
        how_chosen(&server.chosen, pinned)
    );
    let _ = writeln!(out, "transport:    {}", transport_text(transport));
    let _ = writeln!(
        out,
        "capabilities: {}",
        capabilities_summary(&server.capabilities)
    );
    match server.instructions.as_deref().map(dedented) {
        Some(instructions) if !instructions.is_empty() => {
            out.push_str("instructions:\n");
            out.push_str(&indented(&instructions));
        }
        _ => out.push_str("instructions: none\n"),
    }
    out
}

/// How the revision was chosen, in a few words.
fn how_chosen(chosen: &HowChosen, pinned: &str) -> String {
    match chosen {
        HowChosen::Discovered => "discovered with server/discover".to_owned(),
        HowChosen::FellBack { probe } => format!(
            "initialize, after server/discover got {}",
            golem_terminal::one_line(probe)
        ),
        HowChosen::Pinned => format!("pinned {pinned}"),
        HowChosen::LegacyTransport => {
            "initialize, no probe: the HTTP+SSE transport carries no other era".to_owned()
        }
        _ => "chosen".to_owned(),
    }
}

/// `info --json`: the server's description in the protocol's shape, with
/// the revision chosen and how.
pub fn info_json(server: &ServerInfo, transport: Transport) -> String {
    let chosen = match &server.chosen {
        HowChosen::Discovered => json!({"by": "discovery"}),
        HowChosen::FellBack { probe } => json!({"by": "fallback", "probe": probe}),
        HowChosen::Pinned => json!({"by": "pinned"}),
        HowChosen::LegacyTransport => json!({"by": "transport"}),
        _ => json!({"by": "other"}),
    };
    let value = serde_json::json!({
        "serverInfo": {
            "name": server.name,
            "version": server.version,
            "title": server.title,
        },
        "protocolVersion": server.protocol_version,
        "supportedVersions": server.supported_versions,
        "chosen": chosen,
        "transport": match transport {
            Transport::Stdio => json!({"kind": "stdio"}),
            Transport::StreamableHttp => json!({"kind": "streamable-http"}),
            Transport::Sse { after: None } => json!({"kind": "sse"}),
            Transport::Sse { after: Some(status) } => {
                json!({"kind": "sse", "fellBackAfter": status})
            }
        },
        "capabilities": server.capabilities,
        "instructions": server.instructions,
    });
    pretty(&value)
}

/// `tools (listChanged), resources (subscribe)`: each capability with the
/// sub-capabilities it turns on.
pub fn capabilities_summary(capabilities: &Value) -> String {
    let Some(map) = capabilities.as_object().filter(|map| !map.is_empty()) else {
        return "none".to_owned();
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(name, value)| {
            let enabled: Vec<&str> = value
                .as_object()
                .map(|details| {
                    details
                        .iter()
                        .filter(|(_, on)| on.as_bool() == Some(true) || on.is_object())
                        .map(|(detail, _)| detail.as_str())
                        .collect()
                })
                .unwrap_or_default();
            if enabled.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", enabled.join(", "))
            }
        })
        .collect();
    parts.join(", ")
}

/// `ping`: the round-trip time in milliseconds.
pub fn ping_text(milliseconds: f64) -> String {
    format!("pong in {milliseconds:.1} ms\n")
}

/// `ping --json`: `{"ok": true, "milliseconds": ...}`.
pub fn ping_json(milliseconds: f64) -> String {
    pretty(&json!({ "ok": true, "milliseconds": milliseconds }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `info` of a server whose revision, if pinned, was pinned with
    /// `--protocol`.
    fn info_text_with_option(server: &ServerInfo) -> String {
        info_text(server, "with --protocol", Transport::Stdio)
    }

    fn server(capabilities: Value, instructions: Option<&str>) -> ServerInfo {
        let mut server = ServerInfo::new("demo", "1.2");
        server.title = Some("Demo Server".into());
        server.protocol_version = "2025-11-25".into();
        server.capabilities = capabilities;
        server.instructions = instructions.map(str::to_owned);
        server
    }

    #[test]
    fn info_shows_identity_protocol_capabilities_and_instructions() {
        let text = info_text_with_option(&server(
            serde_json::json!({"tools": {"listChanged": true}, "logging": {}, "resources": {"subscribe": false, "listChanged": true}}),
            Some("Use echo.\n\nBe kind.\n"),
        ));
        assert_eq!(
            text,
            "server:       demo 1.2\n\
             title:        Demo Server\n\
             protocol:     2025-11-25 (pinned with --protocol)\n\
             transport:    stdio\n\
             capabilities: logging, resources (listChanged), tools (listChanged)\n\
             instructions:\n  Use echo.\n\n  Be kind.\n"
        );
        assert!(
            info_text(
                &server(serde_json::json!({}), None),
                "in the config",
                Transport::Stdio
            )
            .contains("protocol:     2025-11-25 (pinned in the config)\n")
        );
        let bare = info_text_with_option(&server(serde_json::json!({}), None));
        assert!(bare.contains("capabilities: none\n"), "{bare}");
        assert!(bare.ends_with("instructions: none\n"), "{bare}");
        let json: Value = serde_json::from_str(&info_json(
            &server(serde_json::json!({"tools": {}}), None),
            Transport::Sse { after: Some(405) },
        ))
        .expect("JSON");
        assert_eq!(json["serverInfo"]["name"], "demo");
        assert_eq!(json["protocolVersion"], "2025-11-25");
        assert_eq!(json["chosen"], serde_json::json!({"by": "pinned"}));
        assert_eq!(
            json["transport"],
            serde_json::json!({"kind": "sse", "fellBackAfter": 405})
        );
        assert_eq!(
            transport_text(Transport::Sse { after: Some(405) }),
            "HTTP+SSE (2024-11-05), after streamable HTTP got HTTP 405"
        );
        let mut fell_back = server(serde_json::json!({}), None);
        fell_back.chosen = HowChosen::FellBack {
            probe: "error -32601: Method not found".into(),
        };
        assert!(
            info_text_with_option(&fell_back).contains(
                "protocol:     2025-11-25 (initialize, after server/discover got error -32601: Method not found)"
            ),
            "{}",
            info_text_with_option(&fell_back)
        );
        assert_eq!(json["capabilities"], serde_json::json!({"tools": {}}));
    }

    #[test]
    fn a_server_without_a_version_has_no_trailing_blank() {
        let mut info = server(json!({}), None);
        info.version = String::new();
        let text = info_text_with_option(&info);
        let first = text.lines().next().expect("a first line");
        assert_eq!(first, first.trim_end(), "{text:?}");
    }
}
