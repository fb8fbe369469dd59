//! The text helpers every renderer shares: whole lines, indentation,
//! pretty JSON (escaping is `golem-terminal`'s). It knows nothing of MCP.

use std::fmt::Write as _;

use serde::Serialize;

/// Text ending in exactly one newline (none added to an empty text).
pub fn line(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_owned()
    } else {
        format!("{text}\n")
    }
}

/// Every line of `text` indented by two spaces (empty lines stay empty).
pub fn indented(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

/// `value` as indented JSON and a newline.
pub fn pretty(value: &impl Serialize) -> String {
    // Serializing values built from parsed JSON cannot fail; should it, the
    // compact form is just as valid.
    serde_json::to_string_pretty(value)
        .or_else(|_| serde_json::to_string(value))
        .map(|text| text + "\n")
        .unwrap_or_default()
}
