//! What `resources` and `read` print: `URI  NAME` lines for resources
//! and templates, a read resource's text with a placeholder line for each
//! binary item; with `--json`, the server's answer. The bytes `--raw` and
//! `--output` write are not rendered here (see `run/resources.rs`). It
//! knows nothing of the client or of stdout.

use std::fmt::Write as _;

use golem_mcp::{ReadResourceResult, Resource, ResourceTemplate};
use serde_json::json;

use crate::render::text::{line, pretty};

/// `resources`: one `URI  NAME` line per resource.
pub fn resources_text(resources: &[Resource]) -> String {
    lines(resources.iter().map(|r| (r.uri.as_str(), r.name.as_str())))
}

/// `resources --json`: `{"resources": [...]}`.
pub fn resources_json(resources: &[Resource]) -> String {
    pretty(&json!({ "resources": resources }))
}

/// `resources --templates`: one `URI_TEMPLATE  NAME` line per template.
pub fn templates_text(templates: &[ResourceTemplate]) -> String {
    lines(
        templates
            .iter()
            .map(|t| (t.uri_template.as_str(), t.name.as_str())),
    )
}

/// `resources --templates --json`: `{"resourceTemplates": [...]}`.
pub fn templates_json(templates: &[ResourceTemplate]) -> String {
    pretty(&json!({ "resourceTemplates": templates }))
}

/// `FIRST  SECOND` lines.
fn lines<'a>(rows: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (first, second) in rows {
        let _ = writeln!(out, "{first}  {second}");
    }
    out
}

/// `read` as text: every text item, and a placeholder line for each binary
/// one.
pub fn read_text(read: &ReadResourceResult) -> String {
    let mut out = String::new();
    for item in &read.contents {
        match item.text() {
            Some(text) => out.push_str(&line(text)),
            None => {
                let size = item.decode().map(|bytes| bytes.len());
                let _ = writeln!(
                    out,
                    "[binary contents: {} ({}), {} not shown; --output FILE or --raw writes them]",
                    item.uri(),
                    item.mime_type().unwrap_or("unknown type"),
                    match size {
                        Ok(size) => format!("{size} bytes"),
                        Err(_) => "invalid base64".to_owned(),
                    }
                );
            }
        }
    }
    out
}

/// `read --json`: the server's answer.
pub fn read_json(read: &ReadResourceResult) -> String {
    pretty(read)
}
