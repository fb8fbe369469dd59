//! Calling a tool: `call_tool` and its kin, one path for every plain call
//! (the headers a modern HTTP call mirrors, a progress observer, one more
//! try after the server found the headers stale), into the tasks feature
//! only when the server may answer with a task (the tasks extension
//! declared on a modern connection); `call_listed_tool`, what the agent
//! bridge calls; and the output-schema check of a listed tool's result.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::error::Error;
use crate::features::tools::ToolInfo;
use crate::features::tools::details::TaskSupport;
use crate::features::tools::headers;
use crate::session::connection::Request;
use crate::session::handle::Client;
use crate::session::modern::era::HEADER_MISMATCH;
use crate::session::progress::Progress;
use crate::wire::call_result::CallResult;
use crate::wire::task::TaskOptions;

#[derive(Serialize)]
pub(crate) struct CallToolParams<'a, A: ?Sized> {
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a A,
}

impl Client {
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
        let headers = headers::headers_for(self, name, arguments)?;
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
                let headers = headers::headers_for(self, name, arguments)?;
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

    /// Sends a `tools/call` (`request`) and reads its result as `R`: a
    /// plain request, unless the connection declares the tasks extension,
    /// where the server may answer with a task, which the tasks feature
    /// then drives to its result (`tasks/modern.rs`).
    ///
    /// Cancel safe: dropped before the answer, the request is cancelled as
    /// any; dropped while a task runs, it is cancelled as
    /// [`TaskOptions::cancel_on_drop`] says.
    async fn send_call<R, P>(
        &self,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: DeserializeOwned,
        P: Serialize,
    {
        match self.modern_task_options() {
            None => self.send_request(request, on_progress).await,
            Some(options) => {
                // Boxed: the rare path, which would otherwise make every
                // call's future larger.
                Box::pin(self.send_call_as_task(request, on_progress, options)).await
            }
        }
    }

    /// Calls a listed tool as it must be called (as a task when it requires
    /// one and the server offers tool tasks, with the default
    /// [`TaskOptions`]; plainly otherwise, asking for progress) and checks
    /// the result against its output schema: what the agent bridge runs for
    /// each tool call. `alive` hears of each progress report (or task
    /// status) the server sends for it.
    pub(crate) async fn call_listed_tool(
        &self,
        tool: &ToolInfo,
        arguments: &RawValue,
        alive: &(dyn Fn() + Send + Sync),
    ) -> Result<CallResult, Error> {
        let result = if tool.task_support() == TaskSupport::Required && self.offers_tool_tasks() {
            self.task_call(tool, arguments, &TaskOptions::default(), &mut |_| alive())
                .await?
        } else {
            self.call_tool_with_progress(&tool.name, arguments, |_| alive())
                .await?
        };
        checked(tool, result)
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
