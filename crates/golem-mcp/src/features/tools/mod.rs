//! Tools: their descriptions as the server sends them (`ToolInfo`) and
//! `list_tools`; the call (`call.rs`), the details of a description
//! (`details.rs`), the headers a modern HTTP call mirrors (`headers.rs`)
//! and the output-schema check (`output.rs`).

pub(crate) mod call;
pub(crate) mod details;
pub(crate) mod headers;
pub(crate) mod output;

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::Error;
use crate::session::handle::Client;
use crate::session::paging::Page;

use crate::error::OutputError;
use crate::features::tools::details::{Execution, Icon, TaskSupport, ToolAnnotations};
use crate::features::tools::output::OutputCheck;
use crate::wire::call_result::CallResult;

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
    #[serde(default, deserialize_with = "crate::features::tools::details::lenient")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for the tool (2025-11-25); malformed entries are dropped.
    #[serde(
        default,
        deserialize_with = "crate::features::tools::details::lenient_vec"
    )]
    pub icons: Vec<Icon>,
    /// The tool's `_meta`, verbatim, when present.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Box<RawValue>>,
    #[serde(default, deserialize_with = "crate::features::tools::details::lenient")]
    execution: Option<Execution>,
    #[serde(skip)]
    output_check: OutputCheck,
    /// The tool's JSON exactly as listed, when read from a listing.
    #[serde(skip)]
    verbatim: Option<Arc<RawValue>>,
}

impl ToolInfo {
    /// Reads a tool from its JSON, as `tools/list` gives it (and a
    /// [`Manifest`](crate::Manifest) keeps it); the JSON is kept as
    /// [`verbatim`](Self::verbatim).
    ///
    /// # Errors
    ///
    /// When the JSON is not a tool (no `name`, say).
    pub fn from_verbatim(json: Box<RawValue>) -> Result<Self, serde_json::Error> {
        let mut tool: ToolInfo = serde_json::from_str(json.get())?;
        tool.verbatim = Some(Arc::from(json));
        Ok(tool)
    }

    /// The tool's JSON exactly as the server listed it (fields this client
    /// does not know included), for a host that keeps the list; `None` for
    /// a tool not read from a listing.
    pub fn verbatim(&self) -> Option<&RawValue> {
        self.verbatim.as_deref()
    }

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
            // `isError` results explain a failure: they need not match.
            Some(_) if result.is_error => Ok(()),
            Some(schema) => self
                .output_check
                .check(schema, result.structured_content.as_deref()),
            None => Ok(()),
        }
    }
}

/// One page of `tools/list`, each tool's JSON kept verbatim.
#[derive(Deserialize)]
#[serde(try_from = "RawToolsPage")]
pub(crate) struct ToolsPage {
    pub(crate) tools: Vec<ToolInfo>,
    pub(crate) next_cursor: Option<String>,
}

/// A page of `tools/list` as sent, before its tools are read.
#[derive(Deserialize)]
struct RawToolsPage {
    #[serde(default)]
    tools: Vec<Box<RawValue>>,
    #[serde(rename = "nextCursor", default)]
    next_cursor: Option<String>,
}

impl TryFrom<RawToolsPage> for ToolsPage {
    type Error = serde_json::Error;

    fn try_from(page: RawToolsPage) -> Result<Self, Self::Error> {
        Ok(ToolsPage {
            tools: page
                .tools
                .into_iter()
                .map(ToolInfo::from_verbatim)
                .collect::<Result<_, _>>()?,
            next_cursor: page.next_cursor,
        })
    }
}

impl Page for ToolsPage {
    type Item = ToolInfo;

    fn into_parts(self) -> (Vec<Self::Item>, Option<String>) {
        (self.tools, self.next_cursor)
    }

    fn params(cursor: Option<&str>) -> impl Serialize + '_ {
        ListToolsParams { cursor }
    }
}

#[derive(Serialize)]
pub(crate) struct ListToolsParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cursor: Option<&'a str>,
}

/// `arguments` as raw JSON, for the calls that keep them beyond the
/// caller's borrow (a task's call runs on a task of its own).
pub(crate) fn raw_arguments(
    name: &str,
    arguments: &(impl Serialize + ?Sized),
) -> Result<Box<RawValue>, Error> {
    serde_json::value::to_raw_value(arguments)
        .map_err(|error| Error::encode(&format!("tools/call {name}"), error))
}

impl Client {
    /// Lists every tool the server offers, following `nextCursor` to the
    /// last page. Stops with [`Error::CursorLoop`] if the server repeats a
    /// cursor, and after 10,000 pages. An empty cursor counts as the end.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, Error> {
        let tools = self.list_all::<ToolsPage>("tools/list").await?;
        Ok(self.adopt_tool_list(tools))
    }

    /// Whether calls on this connection mirror the arguments a tool's
    /// schema annotates (`x-mcp-header`) into `Mcp-Param-*` headers: a
    /// modern (2026-07-28) HTTP connection, once initialized. Such a call
    /// of a tool this client has not listed (nor adopted, below) goes
    /// without them, and only a server that refuses it (`-32020`) gets them
    /// on the resend; a host that calls before listing should list first,
    /// or adopt a kept listing.
    pub fn mirrors_tool_headers(&self) -> bool {
        self.mirrors_headers()
    }

    /// Takes `tools` (a listing kept from an earlier run, such as a
    /// [`Manifest`](crate::Manifest)'s) as the server's, for the headers
    /// its calls mirror, without asking the server, as
    /// [`list_tools`](Self::list_tools) does with a fresh listing: a tool
    /// whose annotations are invalid is left out of what is returned. On a
    /// connection that mirrors nothing the tools are returned as they are.
    pub fn adopt_tool_list(&self, tools: Vec<ToolInfo>) -> Vec<ToolInfo> {
        headers::screen(self, tools, |tool| {
            (&tool.name, tool.input_schema.as_deref())
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;

    #[test]
    fn an_is_error_result_is_not_checked_against_the_output_schema() {
        let tool: ToolInfo = serde_json::from_str(
            r#"{"name":"t","inputSchema":{"type":"object"},"outputSchema":{"type":"object"}}"#,
        )
        .expect("valid tool");
        let mut result = CallResult::new(Vec::new());
        assert_eq!(tool.check_output(&result), Err(OutputError::Missing));
        result.is_error = true;
        assert_eq!(tool.check_output(&result), Ok(()));
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
