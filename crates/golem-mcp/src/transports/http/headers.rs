//! The header names the transport sets itself, and the URL as errors and
//! logs show it: what the configuration checks and every request share.

use reqwest::Url;
use reqwest::header::HeaderName;

use crate::wire::transport::Peer;

pub(super) const SESSION_HEADER: &str = "mcp-session-id";
pub(super) const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
pub(super) const LAST_EVENT_ID_HEADER: &str = "last-event-id";
// The same names ready-made: a name given as a string is parsed (and
// hashed for its lower case) on every request.
pub(super) const SESSION: HeaderName = HeaderName::from_static(SESSION_HEADER);
pub(super) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static(PROTOCOL_VERSION_HEADER);
pub(super) const LAST_EVENT_ID: HeaderName = HeaderName::from_static(LAST_EVENT_ID_HEADER);
/// A modern request's method, mirrored from its body.
pub(super) const MCP_METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// A modern request's target (tool, prompt, resource), mirrored.
pub(super) const MCP_NAME: HeaderName = HeaderName::from_static("mcp-name");

/// Whether `value` can be a header value as it is, without a copy (visible
/// ASCII and tabs, what [`HeaderValue::from_static`](reqwest::header::HeaderValue::from_static) requires).
pub(super) fn is_header_value(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
}

/// Where `url` goes, as telemetry names it: its host and port (the
/// scheme's default when none is written).
pub(in crate::transports) fn peer_of(url: &Url) -> Peer {
    Peer::http(
        url.host_str().unwrap_or_default(),
        url.port_or_known_default(),
    )
}

/// The URL as errors and logs show it: without credentials, query or
/// fragment, any of which may hold a secret.
pub(in crate::transports) fn redact(url: &Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    #[test]
    fn only_visible_ascii_and_tabs_are_used_as_header_values_without_a_copy() {
        for value in ["2025-11-25", "a b\tc~"] {
            assert!(is_header_value(value), "{value:?}");
            assert_eq!(HeaderValue::from_static(value), value);
        }
        for value in ["2025\n11", "caf\u{e9}", "\u{7f}"] {
            assert!(!is_header_value(value), "{value:?}");
        }
    }
}
