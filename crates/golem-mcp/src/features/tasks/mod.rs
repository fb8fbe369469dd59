//! Tools called as tasks, one API for both eras (ADRs 0013 and 0025).
//!
//! In 2025-11-25 (experimental there) a tool called as a task answers at
//! once with a task id; the client polls `tasks/get` at the interval the
//! server suggests (bounded), fetches `tasks/result`, and cancels the task
//! with `tasks/cancel` when its caller goes away. On a modern connection
//! the same methods speak the tasks extension (`modern.rs`), where
//! the server decides which calls become tasks and `tasks/result` and
//! `tasks/list` are gone.

pub(crate) mod modern;
pub(crate) mod options;

use std::future::Future;
use std::pin::Pin;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::time::Instant;

use crate::error::Error;
use crate::features::tasks::options::{CancelOnDrop, TaskIdParams, Watch, detached_create};
use crate::features::tools::ToolInfo;
use crate::features::tools::call::checked;
use crate::features::tools::details::TaskSupport;
use crate::features::tools::raw_arguments;
use crate::session::handle::Client;
use crate::session::modern::era::{TASKS_EXTENSION, declares_extension};
use crate::session::notifications::{Notifications, ServerNotification};
use crate::session::protocol::Era;
use crate::wire::call_result::CallResult;
use crate::wire::task::{Task, TaskOptions, TaskStatus};

/// One page of `tasks/list` (2025-11-25 only).
#[derive(Debug, Clone, Deserialize)]
#[non_exhaustive]
pub struct TaskPage {
    /// The tasks on this page.
    #[serde(default)]
    pub tasks: Vec<Task>,
    /// The cursor of the next page; `None` (or empty) on the last.
    #[serde(rename = "nextCursor", default)]
    pub next_cursor: Option<String>,
}

#[derive(Serialize)]
struct TaskCallParams<'a> {
    name: &'a str,
    arguments: &'a RawValue,
    task: TaskParams,
}

#[derive(Serialize)]
struct TaskParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<u64>,
}

#[derive(Serialize)]
struct CursorParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    cursor: Option<&'a str>,
}

/// The answer to a task-augmented `tools/call`, as far as it is probed: a
/// `CreateTaskResult` has `task`; a server that ran the call at once sent
/// the result itself.
#[derive(Deserialize)]
struct Created {
    #[serde(default)]
    task: Option<Task>,
}

impl Client {
    /// Whether the server offers to run tools as tasks: in 2025-11-25, its
    /// `tasks` capability covers `tools/call` (`tasks.requests.tools.call`);
    /// on a modern server, its `server/discover` capabilities declare the
    /// tasks extension (`extensions["io.modelcontextprotocol/tasks"]`).
    /// `false` before `initialize`.
    pub fn offers_tool_tasks(&self) -> bool {
        self.server().is_some_and(|server| match server.era() {
            Era::Modern => declares_extension(&server.capabilities, TASKS_EXTENSION),
            Era::Legacy => server
                .capabilities
                .pointer("/tasks/requests/tools/call")
                .is_some_and(serde_json::Value::is_object),
        })
    }

    /// The refusal of a task request on a modern connection whose client
    /// did not enable the extension: the server would refuse it (`-32021`)
    /// or not know it.
    fn modern_tasks_refused(&self, operation: String) -> Option<Error> {
        let modern = self
            .server()
            .is_some_and(|server| server.era() == Era::Modern);
        (modern && self.modern_task_options().is_none()).then(|| Error::NotSupported {
            operation,
            detail: "the server speaks 2026-07-28, where tasks are the tasks extension, which \
                     this client was not set up to declare; enable it with \
                     ClientConfig::with_tasks"
                .into(),
        })
    }

    /// The refusal of a 2025-11-25 method that the tasks extension has no
    /// counterpart for, on a modern connection.
    fn legacy_only(&self, method: &str, instead: &str) -> Option<Error> {
        let modern = self
            .server()
            .is_some_and(|server| server.era() == Era::Modern);
        modern.then(|| Error::NotSupported {
            operation: method.to_owned(),
            detail: format!(
                "the server speaks 2026-07-28, whose tasks extension has no {method}; {instead}"
            ),
        })
    }

    /// Calls a listed tool as a task and returns its result, checked
    /// against the tool's output schema as
    /// [`call_tool_checked`](Client::call_tool_checked) does.
    ///
    /// In 2025-11-25, the request carries `task` (with
    /// [`TaskOptions::ttl`]); the server answers with a task, which is
    /// polled with `tasks/get` at the
    /// interval the server suggests, kept within the options' bounds. A
    /// `notifications/tasks/status` for the task makes the next poll come
    /// at once (no sooner than the least interval). When the task needs
    /// input or is over, `tasks/result` fetches the result (the server asks
    /// for input, an elicitation say, while it is pending). `on_status`
    /// sees the task each time its status or status message changes, on
    /// the caller's task.
    ///
    /// On a modern (2026-07-28) connection the call speaks the tasks
    /// extension (ADR 0025), which the client must have been set up to
    /// declare ([`ClientConfig::with_tasks`](crate::ClientConfig::with_tasks)):
    /// the plain `tools/call` goes out, and the server decides whether to
    /// answer with a task; `tasks/get` is polled at its `pollIntervalMs`
    /// (within the same bounds) until the task is over, and the input it
    /// asks for (`inputRequests`) is answered by the registered handlers
    /// and sent with `tasks/update`. A `failed` task is the call's
    /// [`Error::Protocol`]; a `cancelled` one is [`Error::TaskCancelled`].
    /// [`TaskOptions::ttl`] is not sent (the server decides), and tools have
    /// no `taskSupport` to check.
    ///
    /// A server that runs the call at once instead (its answer is the
    /// result) is accepted. Fails with [`Error::NotSupported`] before
    /// anything is sent when the server does not offer tasks
    /// ([`offers_tool_tasks`](Client::offers_tool_tasks)), the client did
    /// not enable the extension (modern), or the tool's
    /// `execution.taskSupport` forbids it (2025-11-25); and with
    /// [`Error::InvalidResponse`] when a poll names another task or a
    /// status moves on from a terminal one.
    ///
    /// Cancel safe: dropping the future abandons the call, and a
    /// `tasks/cancel` for the task is sent on a task of its own (within
    /// [`TaskOptions::cancel_timeout`]), so a caller's timeout ends the work
    /// on the server too. Dropped before the server answered the
    /// `tools/call`, the request goes on on that task, and the task it
    /// creates is cancelled. With [`TaskOptions::cancel_on_drop`] off,
    /// nothing is sent for the task (a pending `tools/call` gets
    /// `notifications/cancelled`, as any request).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// use golem_mcp::TaskOptions;
    /// let tools = client.list_tools().await?;
    /// let research = tools.iter().find(|tool| tool.name == "simulate-research-query").unwrap();
    /// let arguments = serde_json::json!({"topic": "tides"});
    /// let result = client
    ///     .call_tool_as_task(research, &arguments, &TaskOptions::default(), |task| {
    ///         eprintln!("{}: {}", task.status, task.status_message.as_deref().unwrap_or(""));
    ///     })
    ///     .await?;
    /// println!("{}", result.text());
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool_as_task(
        &self,
        tool: &ToolInfo,
        arguments: &(impl Serialize + ?Sized + Sync),
        options: &TaskOptions,
        mut on_status: impl FnMut(&Task) + Send,
    ) -> Result<CallResult, Error> {
        let arguments = raw_arguments(&tool.name, arguments)?;
        let result = self
            .task_call(tool, &arguments, options, &mut on_status)
            .await?;
        checked(tool, result)
    }

    /// Like [`call_tool_as_task`](Client::call_tool_as_task), but returns
    /// the result exactly as the server sent it (the bytes of the
    /// `tasks/result` answer, of the modern task's `result`, or of the
    /// `tools/call` answer when the server ran the call at once),
    /// unchecked: for programs that print or forward it.
    ///
    /// Cancel safe, as `call_tool_as_task`.
    pub async fn call_tool_as_task_raw(
        &self,
        tool: &ToolInfo,
        arguments: &(impl Serialize + ?Sized + Sync),
        options: &TaskOptions,
        mut on_status: impl FnMut(&Task) + Send,
    ) -> Result<Box<RawValue>, Error> {
        let arguments = raw_arguments(&tool.name, arguments)?;
        self.task_call(tool, &arguments, options, &mut on_status)
            .await
    }

    /// The task's state now (`tasks/get`), in both eras. An unknown task id
    /// is the server's [`Error::Protocol`] (`-32602`). On a modern
    /// connection the client must have enabled the tasks extension
    /// ([`ClientConfig::with_tasks`](crate::ClientConfig::with_tasks)), or
    /// this fails with [`Error::NotSupported`] before sending.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, Error> {
        if let Some(refused) = self.modern_tasks_refused(format!("tasks/get {task_id}")) {
            return Err(refused);
        }
        self.request("tasks/get", Some(task_id), TaskIdParams { task_id })
            .await
    }

    /// Asks the server to cancel the task (`tasks/cancel`) and returns its
    /// state after. In 2025-11-25 a task already over is refused by the
    /// server ([`Error::Protocol`], `-32602`). The tasks extension's
    /// `tasks/cancel` is only acknowledged: the state after is read with
    /// `tasks/get`, and may still be `working` (cancellation is
    /// cooperative, and eventually consistent); an unknown id is the
    /// server's `-32602`. Needs the extension enabled, as
    /// [`get_task`](Client::get_task).
    ///
    /// Cancel safe (see [`Client`]): dropped after the acknowledgement, the
    /// cancellation stands.
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, Error> {
        if let Some(refused) = self.modern_tasks_refused(format!("tasks/cancel {task_id}")) {
            return Err(refused);
        }
        if self.modern_task_options().is_none() {
            return self
                .request("tasks/cancel", Some(task_id), TaskIdParams { task_id })
                .await;
        }
        let _: serde::de::IgnoredAny = self
            .request("tasks/cancel", Some(task_id), TaskIdParams { task_id })
            .await?;
        self.get_task(task_id).await
    }

    /// One page of the server's tasks (`tasks/list`): pass the previous
    /// page's `next_cursor` for the next one. 2025-11-25 only: the tasks
    /// extension has no `tasks/list` (a server cannot tell whose tasks are
    /// whose without sessions), and on a modern connection this fails with
    /// [`Error::NotSupported`] before sending; keep the ids of the tasks
    /// you start instead.
    ///
    /// Cancel safe (see [`Client`]).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), golem_mcp::Error> {
    /// let page = client.list_tasks(None).await?;
    /// for task in &page.tasks {
    ///     println!("{} {}", task.task_id, task.status);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_tasks(&self, cursor: Option<&str>) -> Result<TaskPage, Error> {
        if let Some(refused) = self.legacy_only(
            "tasks/list",
            "keep the ids of the tasks you start (the on_status callback of call_tool_as_task sees them)",
        ) {
            return Err(refused);
        }
        self.request("tasks/list", None, CursorParams { cursor })
            .await
    }

    /// The task protocol, with the result read as `R`: every request of it
    /// to one server (a restarted one never created the task).
    pub(crate) async fn task_call<R: DeserializeOwned + Send>(
        &self,
        tool: &ToolInfo,
        arguments: &RawValue,
        options: &TaskOptions,
        on_status: &mut (dyn FnMut(&Task) + Send),
    ) -> Result<R, Error> {
        self.pinned("tools/call")
            .await?
            .task_call_here(tool, arguments, options, on_status)
            .await
    }

    /// [`task_call`](Client::task_call) on a pinned handle.
    async fn task_call_here<R: DeserializeOwned + Send>(
        &self,
        tool: &ToolInfo,
        arguments: &RawValue,
        options: &TaskOptions,
        on_status: &mut (dyn FnMut(&Task) + Send),
    ) -> Result<R, Error> {
        let name = tool.name.as_str();
        let refuse = |detail: String| Error::NotSupported {
            operation: format!("tools/call {name} as a task"),
            detail,
        };
        if self.server().is_none() {
            return Err(Error::NotInitialized {
                operation: format!("tools/call {name}"),
            });
        }
        if let Some(refused) = self.modern_tasks_refused(format!("tools/call {name} as a task")) {
            return Err(refused);
        }
        if self.modern_task_options().is_some() {
            if !self.offers_tool_tasks() {
                return Err(refuse(
                    "the server does not declare the tasks extension (io.modelcontextprotocol/tasks) \
                     in its capabilities, so it runs no call as a task; call the tool plainly"
                        .into(),
                ));
            }
            let result = self
                .modern_task_call(name, arguments, options, on_status)
                .await?;
            return serde_json::from_str(result.get())
                .map_err(|error| Error::invalid_response(&format!("tools/call {name}"), error));
        }
        if !self.offers_tool_tasks() {
            return Err(refuse(
                "the server's tasks capability does not cover tools/call".into(),
            ));
        }
        if tool.task_support() == TaskSupport::Forbidden {
            return Err(refuse(
                "the tool does not allow it (its execution.taskSupport is absent or \"forbidden\")"
                    .into(),
            ));
        }
        // Subscribed before the call: no status notification is missed.
        // Passive: the legacy shape's status notifications need no
        // `subscriptions/listen`.
        let mut notifications = self.passive_notifications();
        let answer = self.create(name, arguments, options).await?;
        let created: Created = serde_json::from_str(answer.get())
            .map_err(|error| Error::invalid_response(&format!("tools/call {name}"), error))?;
        let Some(task) = created.task else {
            // The server ran the call at once.
            return serde_json::from_str(answer.get())
                .map_err(|error| Error::invalid_response(&format!("tools/call {name}"), error));
        };
        let mut guard = CancelOnDrop::new(
            self,
            options.cancel_on_drop.then(|| task.task_id.clone()),
            options.cancel_timeout,
        );
        on_status(&task);
        let mut watch = Watch { last: task };
        let mut pending: Option<PendingResult<'_, R>> = None;
        let mut last_poll = Instant::now();
        loop {
            if watch.last.status.is_terminal() {
                // Nothing left to cancel.
                guard.disarm();
            }
            if pending.is_none()
                && (watch.last.status.is_terminal()
                    || watch.last.status == TaskStatus::InputRequired)
            {
                let task_id = watch.last.task_id.clone();
                pending = Some(Box::pin(async move {
                    self.request(
                        "tasks/result",
                        Some(&task_id),
                        TaskIdParams { task_id: &task_id },
                    )
                    .await
                }));
            }
            // Polling goes on while the result is pending: it shows the
            // status as it changes, and a server that breaks the rules.
            let next_poll = last_poll + options.interval(&watch.last);
            tokio::select! {
                result = settle(&mut pending), if pending.is_some() => {
                    // A result that failed (its POST broke, say) says
                    // nothing of the task, which may still run: the guard
                    // stays armed and cancels it.
                    if result.is_ok() || watch.last.status.is_terminal() {
                        guard.disarm();
                    }
                    return result;
                }
                () = tokio::time::sleep_until(next_poll) => {}
                () = status_of(&mut notifications, &watch.last.task_id) => {
                    // Poll at once, but not sooner than the least interval.
                    tokio::time::sleep_until(last_poll + options.min_poll_interval).await;
                }
            }
            last_poll = Instant::now();
            let polled = match self.get_task(&watch.last.task_id).await {
                Ok(polled) => polled,
                // The server may forget a task once its result is out: the
                // result says how it ended.
                Err(_) if pending.is_some() => {
                    let result = settle(&mut pending).await;
                    if result.is_ok() || watch.last.status.is_terminal() {
                        guard.disarm();
                    }
                    return result;
                }
                Err(error) => return Err(error),
            };
            if watch.accept(polled)? {
                on_status(&watch.last);
            }
        }
    }
}

/// A `tasks/result` under way.
type PendingResult<'a, R> = Pin<Box<dyn Future<Output = Result<R, Error>> + Send + 'a>>;

/// The pending `tasks/result`, if one was sent; never ready otherwise.
async fn settle<F: Future + Unpin>(pending: &mut Option<F>) -> F::Output {
    match pending {
        Some(result) => result.await,
        None => std::future::pending().await,
    }
}

impl Client {
    /// Sends the task-augmented `tools/call` and returns the answer.
    ///
    /// With [`TaskOptions::cancel_on_drop`], the request runs on a task of
    /// its own: a caller that goes away before the answer leaves it there,
    /// and the task the server then creates is cancelled (the answer is
    /// awaited for at most [`TaskOptions::cancel_timeout`]). Otherwise the
    /// request is the caller's, cancelled with `notifications/cancelled`
    /// when dropped.
    async fn create(
        &self,
        name: &str,
        arguments: &RawValue,
        options: &TaskOptions,
    ) -> Result<Box<RawValue>, Error> {
        let ttl = options
            .ttl
            .map(|ttl| u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
        if !options.cancel_on_drop {
            let params = TaskCallParams {
                name,
                arguments,
                task: TaskParams { ttl },
            };
            return self.request("tools/call", Some(name), params).await;
        }
        let client = self.clone();
        let tool = name.to_owned();
        let arguments = arguments.to_owned();
        let request = async move {
            let params = TaskCallParams {
                name: &tool,
                arguments: &arguments,
                task: TaskParams { ttl },
            };
            client
                .request::<Box<RawValue>, _>("tools/call", Some(&tool), params)
                .await
        };
        let found = |answer: &RawValue| {
            serde_json::from_str::<Created>(answer.get())
                .ok()
                .and_then(|created| created.task)
        };
        detached_create(
            self.clone(),
            name.to_owned(),
            options.cancel_timeout,
            request,
            found,
        )
        .await
    }
}

/// Waits for a status notification about `task_id`; never returns once
/// the subscription ended (the client is closing: the next poll says how).
async fn status_of(notifications: &mut Notifications, task_id: &str) {
    loop {
        match notifications.recv().await {
            Some(ServerNotification::TaskStatus(task)) if task.task_id == task_id => return,
            Some(_) => {}
            None => std::future::pending().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_task_reads_as_the_specification_shows_it() {
        let read: Task = serde_json::from_str(
            r#"{"taskId":"786512e2","status":"input_required","statusMessage":"m",
                "createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:40:00Z",
                "ttl":null,"pollInterval":1500.0}"#,
        )
        .expect("a task");
        assert_eq!(read.status, TaskStatus::InputRequired);
        assert_eq!(read.ttl, None);
        assert_eq!(read.poll_interval, Some(Duration::from_millis(1500)));
    }
}
