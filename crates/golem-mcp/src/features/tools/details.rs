//! What `tools/list` says about a tool beyond its name and schemas: its
//! annotations, icons and whether it runs as a task.
//!
//! Each is read leniently: a malformed hint or icon is dropped (with the
//! rest of its object kept where possible) rather than failing the whole
//! list, since none of them changes what a call sends.

use serde::{Deserialize, Deserializer, Serialize};

/// Hints about a tool's behaviour (`annotations` in `tools/list`).
///
/// They are the server's claims, not guarantees: never base a security
/// decision on them for a server you do not trust. A hint left out has the
/// default the specification gives it, which the methods apply.
///
/// ```
/// # use golem_mcp::ToolAnnotations;
/// let hints: ToolAnnotations = serde_json::from_str(r#"{"readOnlyHint": true}"#).unwrap();
/// assert!(hints.read_only());
/// assert!(!hints.destructive()); // read-only tools do not destroy
/// assert!(hints.open_world()); // the default
///
/// let newer: ToolAnnotations =
///     serde_json::from_str(r#"{"readOnlyHint": true, "x-cost": "high"}"#).unwrap();
/// assert_eq!(newer.extra["x-cost"], "high");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// A human-friendly title.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub title: Option<String>,
    /// The tool does not change its environment.
    #[serde(
        rename = "readOnlyHint",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or overwrite (meaningful when not read-only).
    #[serde(
        rename = "destructiveHint",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments has no further effect
    /// (meaningful when not read-only).
    #[serde(
        rename = "idempotentHint",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world (the web, other people) rather than
    /// a closed domain.
    #[serde(
        rename = "openWorldHint",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub open_world_hint: Option<bool>,
    /// Any other hint, as the server sent it (one of a newer revision, or
    /// a vendor's own), so that nothing the server said is lost.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl ToolAnnotations {
    /// `readOnlyHint`, default `false`.
    pub fn read_only(&self) -> bool {
        self.read_only_hint.unwrap_or(false)
    }

    /// `destructiveHint`, default `true`; always `false` for a read-only
    /// tool.
    pub fn destructive(&self) -> bool {
        !self.read_only() && self.destructive_hint.unwrap_or(true)
    }

    /// `idempotentHint`, default `false`; always `true` for a read-only
    /// tool.
    pub fn idempotent(&self) -> bool {
        self.read_only() || self.idempotent_hint.unwrap_or(false)
    }

    /// `openWorldHint`, default `true`.
    pub fn open_world(&self) -> bool {
        self.open_world_hint.unwrap_or(true)
    }
}

/// An icon for a tool (`icons` in `tools/list`, 2025-11-25).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Icon {
    /// Where the icon is: an `https:` or `data:` URI. Fetching it is the
    /// application's decision; this client never does.
    pub src: String,
    /// Its MIME type, when given.
    #[serde(
        rename = "mimeType",
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub mime_type: Option<String>,
    /// The sizes it fits, e.g. `48x48` or `any`.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "lenient_vec"
    )]
    pub sizes: Vec<String>,
    /// `light` or `dark`: the background it is meant for, when given.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient"
    )]
    pub theme: Option<String>,
}

/// Whether a tool may, must or must not be called as a task
/// (`execution.taskSupport`), given that the server's `tasks` capability
/// covers `tools/call` at all.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never as a task: the default, and what an unknown value means.
    #[default]
    Forbidden,
    /// As a task or as a plain call.
    Optional,
    /// Only as a task; a plain call fails.
    Required,
}

impl TaskSupport {
    /// The specification's name for it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }
}

/// `execution` in `tools/list`.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Execution {
    #[serde(rename = "taskSupport", default, deserialize_with = "lenient")]
    task_support: Option<String>,
}

impl Execution {
    pub(crate) fn task_support(&self) -> TaskSupport {
        match self.task_support.as_deref() {
            Some("optional") => TaskSupport::Optional,
            Some("required") => TaskSupport::Required,
            _ => TaskSupport::Forbidden,
        }
    }
}

/// Reads any JSON value and keeps it only if it has the expected type.
pub(crate) fn lenient<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    let value = serde_json::Value::deserialize(deserializer)?;
    Ok(serde_json::from_value(value).ok())
}

/// Reads a JSON array, keeping the items of the expected type; anything
/// else is an empty list.
pub(crate) fn lenient_vec<'de, D: Deserializer<'de>, T: serde::de::DeserializeOwned>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    Ok(match serde_json::Value::deserialize(deserializer)? {
        serde_json::Value::Array(items) => items
            .into_iter()
            .filter_map(|item| serde_json::from_value(item).ok())
            .collect(),
        _ => Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_default_as_the_specification_says() {
        let none = ToolAnnotations::default();
        assert!(!none.read_only() && none.destructive() && !none.idempotent() && none.open_world());
        let careful: ToolAnnotations = serde_json::from_str(
            r#"{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false,"title":"T"}"#,
        )
        .expect("valid hints");
        assert!(!careful.destructive() && careful.idempotent() && !careful.open_world());
        assert_eq!(careful.title.as_deref(), Some("T"));
    }

    #[test]
    fn a_malformed_hint_or_icon_is_dropped_not_fatal() {
        let hints: ToolAnnotations =
            serde_json::from_str(r#"{"readOnlyHint":"yes","openWorldHint":false}"#)
                .expect("lenient");
        assert_eq!(hints.read_only_hint, None);
        assert_eq!(hints.open_world_hint, Some(false));
        #[derive(Deserialize)]
        struct Icons {
            #[serde(deserialize_with = "lenient_vec")]
            icons: Vec<Icon>,
        }
        let icons: Icons = serde_json::from_str(
            r#"{"icons":[{"src":"data:image/png;base64,AA==","sizes":["48x48"],"theme":"dark"},{"nosrc":1},7]}"#,
        )
        .expect("lenient");
        assert_eq!(icons.icons.len(), 1);
        assert_eq!(icons.icons[0].sizes, ["48x48"]);
    }

    #[test]
    fn hints_this_client_does_not_know_are_kept_and_sent_back() {
        let text = r#"{"readOnlyHint":true,"x-cost":"high","costHint":{"usd":0.1}}"#;
        let hints: ToolAnnotations = serde_json::from_str(text).expect("valid hints");
        assert!(hints.read_only());
        assert_eq!(hints.extra.len(), 2);
        assert_eq!(hints.extra["costHint"]["usd"], 0.1);
        let again: serde_json::Value = serde_json::to_value(&hints).expect("serializes");
        let original: serde_json::Value = serde_json::from_str(text).expect("JSON");
        assert_eq!(again, original);
    }

    #[test]
    fn task_support_defaults_to_forbidden() {
        let read = |json: &str| {
            serde_json::from_str::<Execution>(json)
                .expect("lenient")
                .task_support()
        };
        assert_eq!(read("{}"), TaskSupport::Forbidden);
        assert_eq!(read(r#"{"taskSupport":"optional"}"#), TaskSupport::Optional);
        assert_eq!(read(r#"{"taskSupport":"required"}"#), TaskSupport::Required);
        assert_eq!(
            read(r#"{"taskSupport":"sometimes"}"#),
            TaskSupport::Forbidden
        );
        assert_eq!(read(r#"{"taskSupport":3}"#), TaskSupport::Forbidden);
    }
}
