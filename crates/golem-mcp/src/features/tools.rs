//! Tools: their descriptions as the server sends them (`ToolInfo`), and the
//! `Client` methods that list and call them.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::Error;
use crate::features::tool_headers;
use crate::session::client::Client;
use crate::session::connection::Request;
use crate::session::era::HEADER_MISMATCH;
use crate::session::paging::Page;
use crate::session::progress::Progress;

use crate::error::OutputError;
use crate::features::output::OutputCheck;
use crate::features::tool_details::{Execution, Icon, TaskSupport, ToolAnnotations};
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
            // `isError` results explain a failure: they need not match.
            Some(_) if result.is_error => Ok(()),
            Some(schema) => self
                .output_check
                .check(schema, result.structured_content.as_deref()),
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

#[derive(Serialize)]
pub(crate) struct CallToolParams<'a, A: ?Sized> {
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a A,
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
        Ok(tool_headers::screen(self, tools, |tool| {
            (&tool.name, tool.input_schema.as_deref())
        }))
    }

    /// Calls tool `name` with `arguments`: anything serializable as a JSON
    /// object (a `serde_json::json!` value, a struct of yours) is written
    /// straight into the request, and a [`RawValue`] (a model's tool call,
    /// JSON read from a file) byte for byte, never decoded or re-encoded.
    /// Arguments that cannot be serialized (a map with non-string keys) fail
    /// with [`Error::Encode`] before anything is sent.
    ///
    /// A tool that fails reports it in the result
    /// ([`CallResult::is_error`]); an `Err` means the call itself failed: a
    /// JSON-RPC error ([`Error::Protocol`]: servers answer an unknown tool
    /// this way or with an `isError` result, depending on their SDK), or the
    /// transport.
    ///
    /// The result is not checked against the tool's output schema (the
    /// client keeps no tool list); [`call_tool_checked`](Client::call_tool_checked)
    /// does that with a listed tool.
    ///
    /// Cancel safe (see [`Client`]): dropping the future abandons the call,
    /// and the server is told with `notifications/cancelled` at once.
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let result = client
    ///     .call_tool("echo", &serde_json::json!({"message": "hi"}))
    ///     .await?;
    /// println!("{}", result.text());
    ///
    /// // Raw JSON goes out exactly as written.
    /// let raw = serde_json::value::RawValue::from_string(r#"{"message": "hi"}"#.into())?;
    /// let result = client.call_tool("echo", &*raw).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: &(impl Serialize + ?Sized + Sync),
    ) -> Result<CallResult, Error> {
        self.call(name, arguments, None).await
    }

    /// Calls a listed tool and checks its result against the tool's
    /// `outputSchema` ([`ToolInfo::check_output`]): a result that breaks
    /// the schema's promise (no `structuredContent`, or content that does
    /// not match, or a schema that cannot be compiled) is
    /// [`Error::Output`], which carries the result and names the mismatch.
    /// A tool without an output schema, or an `isError` result, is returned
    /// as [`call_tool`](Client::call_tool) would. The schema is compiled on
    /// the tool's first checked call, once per listed tool.
    ///
    /// Cancel safe (see [`Client`]).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// let tools = client.list_tools().await?;
    /// let weather = tools.iter().find(|tool| tool.name == "get-structured-content").unwrap();
    /// let arguments = serde_json::json!({"location": "Chicago"});
    /// match client.call_tool_checked(weather, &arguments).await {
    ///     Ok(result) => println!("{}", result.text()),
    ///     Err(golem_mcp::Error::Output { source, .. }) => eprintln!("the server broke its schema: {source}"),
    ///     Err(other) => return Err(other),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool_checked(
        &self,
        tool: &ToolInfo,
        arguments: &(impl Serialize + ?Sized + Sync),
    ) -> Result<CallResult, Error> {
        let result = self.call_tool(&tool.name, arguments).await?;
        checked(tool, result)
    }

    /// The former name of [`call_tool`](Client::call_tool), from when that
    /// took raw JSON only: `call_tool` now takes any serializable value.
    ///
    /// Cancel safe (see [`Client`]).
    #[deprecated(
        since = "0.1.0",
        note = "use `call_tool`, which takes any serializable value"
    )]
    pub async fn call_tool_json(
        &self,
        name: &str,
        arguments: &(impl Serialize + ?Sized + Sync),
    ) -> Result<CallResult, Error> {
        self.call_tool(name, arguments).await
    }

    /// Like [`call_tool`](Client::call_tool), but asks the server for
    /// progress reports (a `progressToken` in the request's `_meta`) and
    /// hands each `notifications/progress` for this call to `on_progress`,
    /// in the order they arrive, on the caller's task. Servers that do not
    /// report progress simply never call it. Reports that arrive faster than
    /// the caller's task takes them are dropped once a queue of 64 is full (a
    /// later report supersedes them).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: &(impl Serialize + ?Sized + Sync),
        mut on_progress: impl FnMut(Progress) + Send,
    ) -> Result<CallResult, Error> {
        self.call(name, arguments, Some(&mut on_progress)).await
    }

    /// Like [`call_tool`](Client::call_tool) (or
    /// [`call_tool_with_progress`](Client::call_tool_with_progress) when
    /// `on_progress` is given), but returns the result exactly as the server
    /// sent it: the bytes of the JSON-RPC `result`, untouched, for programs
    /// that print or forward it. Parse it into a [`CallResult`] with
    /// `serde_json::from_str` when its content is needed too.
    ///
    /// Cancel safe (see [`Client`]).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let raw = client
    ///     .call_tool_raw("echo", &serde_json::json!({"message": "hi"}), None)
    ///     .await?;
    /// println!("{}", raw.get()); // e.g. {"content":[{"type":"text","text":"Echo: hi"}]}
    /// let result: golem_mcp::CallResult = serde_json::from_str(raw.get())?;
    /// assert!(!result.is_error);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool_raw(
        &self,
        name: &str,
        arguments: &(impl Serialize + ?Sized + Sync),
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<Box<RawValue>, Error> {
        self.call(name, arguments, on_progress).await
    }

    /// `tools/call`, with the request id as progress token when there is an
    /// observer, and the result read as `R`.
    async fn call<R: serde::de::DeserializeOwned>(
        &self,
        name: &str,
        arguments: &(impl Serialize + ?Sized + Sync),
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error> {
        // The progress token (the request's id) joins `_meta` as the
        // request is encoded.
        let params = CallToolParams { name, arguments };
        let headers = tool_headers::headers_for(self, name, arguments)?;
        let mut request = Request::new("tools/call", &params);
        request.name = Some(name);
        request.param_headers = &headers;
        let wants_progress = on_progress.is_some();
        let mut on_progress = on_progress;
        let mut forward = |report: Progress| {
            if let Some(observer) = on_progress.as_deref_mut() {
                observer(report);
            }
        };
        let observer = match wants_progress {
            true => Some(&mut forward as &mut (dyn FnMut(Progress) + Send)),
            false => None,
        };
        // A modern server may run it as a task (when the extension is
        // declared): `send_call` drives it to its result.
        let result = self.send_call(request, observer).await;
        match result {
            // The tool's annotations changed since it was listed (or it was
            // never listed): list again and call once more, as the protocol
            // suggests.
            Err(Error::Protocol { source, .. })
                if source.code == HEADER_MISMATCH && self.mirrors_headers() =>
            {
                tracing::debug!(tool = %name, "mcp: the server found the call's headers wrong; listing the tools again");
                self.list_tools().await?;
                let headers = tool_headers::headers_for(self, name, arguments)?;
                request.param_headers = &headers;
                let observer = match wants_progress {
                    true => Some(&mut forward as &mut (dyn FnMut(Progress) + Send)),
                    false => None,
                };
                self.send_call(request, observer).await
            }
            other => other,
        }
    }
}

/// `result` when it keeps `tool`'s output schema, else [`Error::Output`].
pub(crate) fn checked(tool: &ToolInfo, result: CallResult) -> Result<CallResult, Error> {
    match tool.check_output(&result) {
        Ok(()) => Ok(result),
        Err(source) => Err(Error::Output {
            operation: format!("tools/call {}", tool.name),
            result: Box::new(result),
            source,
        }),
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
