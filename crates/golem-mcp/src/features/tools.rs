//! Tool descriptions and call results, as the server sends them.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

use crate::features::output::{OutputCheck, OutputError};
use crate::features::tool_details::{Execution, Icon, TaskSupport, ToolAnnotations};
use crate::wire::content::Content;

/// One tool a server offers, from `tools/list`.
///
/// The schemas are the server's bytes, untouched: they are the model-facing
/// contract, so they are never re-serialised or reordered. The output
/// schema is compiled the first time a result is checked against it
/// ([`check_output`](ToolInfo::check_output)), once for this listed tool and
/// all its clones.
///
/// ```
/// # use golem_mcp::{CallResult, OutputError, TaskSupport, ToolInfo};
/// let tool: ToolInfo = serde_json::from_str(r#"{
///     "name": "weather", "title": "Weather",
///     "inputSchema": {"type": "object"},
///     "outputSchema": {"type": "object", "required": ["celsius"]},
///     "annotations": {"readOnlyHint": true},
///     "execution": {"taskSupport": "optional"}
/// }"#)?;
/// assert!(tool.annotations.as_ref().is_some_and(|hints| hints.read_only()));
/// assert_eq!(tool.task_support(), TaskSupport::Optional);
///
/// let mut result = CallResult::new(vec![]);
/// result.structured_content = Some(serde_json::value::RawValue::from_string(r#"{"kelvin":300}"#.into())?);
/// let Err(OutputError::Mismatch { mismatches, .. }) = tool.check_output(&result) else { panic!() };
/// assert!(mismatches[0].message.contains("celsius"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct ToolInfo {
    /// The tool's name, unique on this server.
    pub name: String,
    /// Its human-friendly title, when given.
    #[serde(default)]
    pub title: Option<String>,
    /// What the tool does, written for a model.
    #[serde(default)]
    pub description: Option<String>,
    /// The JSON Schema of its arguments, verbatim. The protocol requires
    /// it; `None` when a server left it out anyway.
    #[serde(rename = "inputSchema", default)]
    pub input_schema: Option<Box<RawValue>>,
    /// The JSON Schema of its `structuredContent`, verbatim, when declared.
    #[serde(rename = "outputSchema", default)]
    pub output_schema: Option<Box<RawValue>>,
    /// Hints about the tool's behaviour (`readOnlyHint`, ...), when given;
    /// a malformed hint reads as absent.
    #[serde(default, deserialize_with = "crate::features::tool_details::lenient")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for the tool (2025-11-25); malformed entries are dropped.
    #[serde(
        default,
        deserialize_with = "crate::features::tool_details::lenient_vec"
    )]
    pub icons: Vec<Icon>,
    /// The tool's `_meta`, verbatim, when present.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "crate::features::tool_details::lenient")]
    execution: Option<Execution>,
    #[serde(skip)]
    output_check: OutputCheck,
}

impl ToolInfo {
    /// Whether the tool may be called as a task (`execution.taskSupport`;
    /// [`TaskSupport::Forbidden`] when absent or unknown). It matters only
    /// when the server's `tasks` capability covers `tools/call`.
    pub fn task_support(&self) -> TaskSupport {
        self.execution
            .as_ref()
            .map(Execution::task_support)
            .unwrap_or_default()
    }

    /// Checks a result of this tool against its `outputSchema`: `Ok` when
    /// the tool declares none, when the result is an `isError` one, or when
    /// its `structuredContent` matches (JSON Schema 2020-12 unless the
    /// schema's `$schema` names another draft, such as draft-07).
    ///
    /// The schema is compiled on the first check and kept for this tool
    /// and its clones; an `outputSchema` that does not compile makes every
    /// check fail with [`OutputError::InvalidSchema`].
    pub fn check_output(&self, result: &CallResult) -> Result<(), OutputError> {
        match &self.output_schema {
            Some(schema) => self.output_check.check(schema, result),
            None => Ok(()),
        }
    }
}

/// One page of `tools/list`.
#[derive(Deserialize)]
pub(crate) struct ToolsPage {
    #[serde(default)]
    pub(crate) tools: Vec<ToolInfo>,
    #[serde(rename = "nextCursor", default)]
    pub(crate) next_cursor: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct ListToolsParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<&'a str>,
}

#[derive(Serialize)]
pub(crate) struct CallToolParams<'a> {
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a RawValue,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub(crate) meta: Option<CallMeta>,
}

#[derive(Serialize)]
pub(crate) struct CallMeta {
    #[serde(rename = "progressToken")]
    pub(crate) progress_token: u64,
}

/// A progress report a server sent for a running call
/// (`notifications/progress`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Progress {
    /// Progress so far; increases with every report.
    pub progress: f64,
    /// The total, when the server knows it.
    #[serde(default)]
    pub total: Option<f64>,
    /// A human-readable description of the current step, when given.
    #[serde(default)]
    pub message: Option<String>,
}

impl Progress {
    /// A report of `progress` out of `total` (if known), with an optional
    /// message: for tests and for programs that stand in for a server.
    pub fn new(progress: f64, total: Option<f64>, message: Option<String>) -> Self {
        Progress {
            progress,
            total,
            message,
        }
    }
}

/// The parameters of `notifications/progress`, as far as they are read.
#[derive(Deserialize)]
pub(crate) struct ProgressParams {
    #[serde(rename = "progressToken")]
    pub(crate) progress_token: serde_json::Value,
    #[serde(flatten)]
    pub(crate) progress: Progress,
}

/// The result of `tools/call`.
///
/// Every content item is kept; [`text`](CallResult::text) renders them the
/// way a model sees them.
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct CallResult {
    /// The content items, in order.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the tool reported failure. The content then explains what
    /// went wrong, in words meant for the model.
    #[serde(rename = "isError", default, deserialize_with = "null_as_false")]
    pub is_error: bool,
    /// Structured output, verbatim, when the server sent it.
    #[serde(rename = "structuredContent", default)]
    pub structured_content: Option<Box<RawValue>>,
    /// The result's `_meta`, verbatim, when present.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Box<RawValue>>,
}

fn null_as_false<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    Ok(Option::<bool>::deserialize(deserializer)?.unwrap_or(false))
}

impl CallResult {
    /// A successful result with these content items and nothing else (set
    /// the public fields after it for more): for tests and for programs
    /// that stand in for a server.
    pub fn new(content: Vec<Content>) -> Self {
        CallResult {
            content,
            is_error: false,
            structured_content: None,
            meta: None,
        }
    }

    /// The result as a model reads it: text items joined by newlines, and
    /// one placeholder line per non-text item saying what was left out.
    ///
    /// ```
    /// # use golem_mcp::{CallResult, Content};
    /// let result = CallResult::new(vec![
    ///     Content::Text { text: "hello".into() },
    ///     Content::Image { data: "aGk=".into(), mime_type: "image/png".into() },
    /// ]);
    /// assert_eq!(result.text(), "hello\n[image: image/png, 2 bytes not shown]");
    /// ```
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(match self.content.as_slice() {
            [Content::Text { text }] => text.len(),
            _ => 0,
        });
        for (index, item) in self.content.iter().enumerate() {
            if index > 0 {
                out.push('\n');
            }
            item.render(&mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> CallResult {
        serde_json::from_str(json).expect("a valid result")
    }

    #[test]
    fn keeps_every_content_kind_and_renders_placeholders() {
        let result = parse(
            r#"{"content":[
                {"type":"text","text":"one"},
                {"type":"image","data":"AAECAw==","mimeType":"image/png"},
                {"type":"audio","data":"AAEC","mimeType":"audio/wav"},
                {"type":"resource_link","uri":"file:///a.txt","name":"a","mimeType":"text/plain"},
                {"type":"resource","resource":{"uri":"file:///b","mimeType":"text/plain","text":"hello"}},
                {"type":"resource","resource":{"uri":"file:///c","blob":"AA=="}},
                {"type":"hologram"},
                {"type":"text","text":"two"}
            ],"isError":false,"structuredContent":{"z":1, "a":2}}"#,
        );
        assert_eq!(result.content.len(), 8);
        assert_eq!(
            result.text(),
            "one\n\
             [image: image/png, 4 bytes not shown]\n\
             [audio: audio/wav, 3 bytes not shown]\n\
             [resource link: file:///a.txt (text/plain)]\n\
             [embedded resource: file:///b (text/plain), 5 bytes of text not shown]\n\
             [embedded resource: file:///c (unknown type), 1 bytes not shown]\n\
             [content of unsupported type \"hologram\" not shown]\n\
             two"
        );
        assert_eq!(
            result.structured_content.as_deref().map(RawValue::get),
            Some(r#"{"z":1, "a":2}"#)
        );
    }

    #[test]
    fn an_unknown_content_type_with_unusual_fields_does_not_fail_the_result() {
        let result = parse(
            r#"{"content":[{"type":"text","text":"kept"},
                {"type":"future_kind","name":{"a":1},"size":"big","uri":7,"resource":[1]}]}"#,
        );
        assert_eq!(
            result.text(),
            "kept\n[content of unsupported type \"future_kind\" not shown]"
        );
    }

    #[test]
    fn is_error_defaults_to_false_and_accepts_null() {
        assert!(!parse(r#"{"content":[]}"#).is_error);
        assert!(!parse(r#"{"content":[],"isError":null}"#).is_error);
        assert!(parse(r#"{"content":[],"isError":true}"#).is_error);
    }

    #[test]
    fn an_item_missing_its_payload_is_an_error_naming_it() {
        let error = serde_json::from_str::<CallResult>(
            r#"{"content":[{"type":"image","mimeType":"image/png"}]}"#,
        )
        .expect_err("image without data");
        assert!(error.to_string().contains("\"data\""), "{error}");
    }

    #[test]
    fn tool_schemas_stay_verbatim() {
        let page: ToolsPage = serde_json::from_str(
            r#"{"tools":[{"name":"t","inputSchema":{ "type" : "object","properties":{"b":{},"a":{}} }}],"nextCursor":"c2"}"#,
        )
        .expect("valid page");
        assert_eq!(
            page.tools[0].input_schema.as_deref().map(RawValue::get),
            Some(r#"{ "type" : "object","properties":{"b":{},"a":{}} }"#)
        );
        assert_eq!(page.next_cursor.as_deref(), Some("c2"));
    }
}
