//! Tasks (2025-11-25, experimental in the specification): a tool called as
//! a task answers at once with a task id; the client polls `tasks/get` at
//! the interval the server suggests (bounded), fetches `tasks/result`, and
//! cancels the task with `tasks/cancel` when its caller goes away (ADR
//! 0011).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::error::Error;
use crate::features::tool_details::TaskSupport;
use crate::features::tools::ToolInfo;
use crate::features::tools::{checked, raw_arguments};
use crate::session::client::Client;
use crate::session::notifications::{Notifications, ServerNotification};
use crate::wire::call_result::CallResult;
use crate::wire::task::{Task, TaskStatus};

/// One page of `tasks/list`.
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

/// How a tool is run as a task: the lifetime asked for and the bounds on
/// polling.
///
/// ```
/// use std::time::Duration;
/// let options = golem_mcp::TaskOptions::default()
///     .with_ttl(Duration::from_secs(600))
///     .with_poll_bounds(Duration::from_millis(250), Duration::from_secs(2));
/// assert_eq!(options.max_poll_interval, Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskOptions {
    /// How long the server should keep the task after creating it
    /// (`task.ttl`); `None` (the default) leaves it to the server.
    pub ttl: Option<Duration>,
    /// The least time between two polls, whatever the server suggests
    /// (100 ms).
    pub min_poll_interval: Duration,
    /// The most time between two polls, whatever the server suggests (5 s).
    pub max_poll_interval: Duration,
    /// The interval when the server suggests none (1 s).
    pub default_poll_interval: Duration,
    /// Whether dropping the call's future before the task is over sends
    /// `tasks/cancel` for it (on a task of its own): `true` by default.
    /// A program that cancels the task itself, awaiting the answer (a
    /// command about to exit), turns it off.
    pub cancel_on_drop: bool,
    /// How long the `tasks/cancel` sent for an abandoned task may take
    /// (10 s); it runs on a task of its own, after the caller has gone.
    pub cancel_timeout: Duration,
}

impl Default for TaskOptions {
    fn default() -> Self {
        TaskOptions {
            ttl: None,
            min_poll_interval: Duration::from_millis(100),
            max_poll_interval: Duration::from_secs(5),
            default_poll_interval: Duration::from_secs(1),
            cancel_on_drop: true,
            cancel_timeout: Duration::from_secs(10),
        }
    }
}

impl TaskOptions {
    /// The same options, asking the server to keep the task for `ttl`.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// The same options, with `tasks/cancel` sent or not when the call's
    /// future is dropped before the task is over.
    pub fn with_cancel_on_drop(mut self, cancel: bool) -> Self {
        self.cancel_on_drop = cancel;
        self
    }

    /// The same options, polling no more often than every `min` and no less
    /// often than every `max` (`max` is raised to `min` if below it).
    pub fn with_poll_bounds(mut self, min: Duration, max: Duration) -> Self {
        self.min_poll_interval = min;
        self.max_poll_interval = max.max(min);
        self
    }

    fn interval(&self, task: &Task) -> Duration {
        task.poll_interval
            .unwrap_or(self.default_poll_interval)
            .clamp(
                self.min_poll_interval,
                self.max_poll_interval.max(self.min_poll_interval),
            )
    }
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
struct TaskIdParams<'a> {
    #[serde(rename = "taskId")]
    task_id: &'a str,
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
    /// Whether the server's `tasks` capability covers `tools/call`
    /// (`tasks.requests.tools.call`); `false` before `initialize`.
    pub fn offers_tool_tasks(&self) -> bool {
        self.server().is_some_and(|server| {
            server
                .capabilities
                .pointer("/tasks/requests/tools/call")
                .is_some_and(serde_json::Value::is_object)
        })
    }

    /// Calls a listed tool as a task and returns its result, checked
    /// against the tool's output schema as
    /// [`call_tool_checked`](Client::call_tool_checked) does.
    ///
    /// The request carries `task` (with [`TaskOptions::ttl`]); the server
    /// answers with a task, which is polled with `tasks/get` at the
    /// interval the server suggests, kept within the options' bounds. A
    /// `notifications/tasks/status` for the task makes the next poll come
    /// at once (no sooner than the least interval). When the task needs
    /// input or is over, `tasks/result` fetches the result (the server asks
    /// for input, an elicitation say, while it is pending). `on_status`
    /// sees the task each time its status or status message changes, on
    /// the caller's task.
    ///
    /// A server that runs the call at once instead (its answer is the
    /// result) is accepted. Fails with [`Error::NotSupported`] before
    /// anything is sent when the server's `tasks` capability does not
    /// cover `tools/call` or the tool's `execution.taskSupport` forbids it,
    /// and with [`Error::InvalidResponse`] when a poll names another task
    /// or a status moves on from a terminal one.
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
    /// `tasks/result` answer, or of the `tools/call` answer when the
    /// server ran the call at once), unchecked: for programs that print or
    /// forward it.
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

    /// The task's state now (`tasks/get`).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn get_task(&self, task_id: &str) -> Result<Task, Error> {
        self.request("tasks/get", Some(task_id), TaskIdParams { task_id })
            .await
    }

    /// Asks the server to cancel the task (`tasks/cancel`) and returns its
    /// state after. A task already over is refused by the server
    /// ([`Error::Protocol`], `-32602`).
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn cancel_task(&self, task_id: &str) -> Result<Task, Error> {
        self.request("tasks/cancel", Some(task_id), TaskIdParams { task_id })
            .await
    }

    /// One page of the server's tasks (`tasks/list`): pass the previous
    /// page's `next_cursor` for the next one.
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
        self.request("tasks/list", None, CursorParams { cursor })
            .await
    }

    /// The task protocol, with the result read as `R`.
    pub(crate) async fn task_call<R: DeserializeOwned + Send>(
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
        let mut notifications = self.notifications();
        let answer = self.create(name, arguments, options).await?;
        let created: Created = serde_json::from_str(answer.get())
            .map_err(|error| Error::invalid_response(&format!("tools/call {name}"), error))?;
        let Some(task) = created.task else {
            // The server ran the call at once.
            return serde_json::from_str(answer.get())
                .map_err(|error| Error::invalid_response(&format!("tools/call {name}"), error));
        };
        let mut guard = CancelOnDrop {
            client: self.clone(),
            task_id: options.cancel_on_drop.then(|| task.task_id.clone()),
            timeout: options.cancel_timeout,
        };
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
        let name = name.to_owned();
        let arguments = arguments.to_owned();
        let limit = options.cancel_timeout;
        let (answer_sender, answer) = oneshot::channel();
        tokio::spawn(async move {
            let params = TaskCallParams {
                name: &name,
                arguments: &arguments,
                task: TaskParams { ttl },
            };
            let mut request = std::pin::pin!(client.request::<Box<RawValue>, _>(
                "tools/call",
                Some(&name),
                params
            ));
            let mut answer_sender = answer_sender;
            let abandoned = tokio::select! {
                answer = &mut request => match answer_sender.send(answer) {
                    Ok(()) => return,
                    // The caller went away as the answer came.
                    Err(answer) => answer,
                },
                () = answer_sender.closed() => match tokio::time::timeout(limit, request).await {
                    Ok(answer) => answer,
                    Err(_) => {
                        tracing::debug!(tool = name, "mcp: no answer to an abandoned task call; nothing to cancel");
                        return;
                    }
                },
            };
            let task = abandoned
                .ok()
                .and_then(|answer| serde_json::from_str::<Created>(answer.get()).ok())
                .and_then(|created| created.task)
                .filter(|task| !task.status.is_terminal());
            if let Some(task) = task {
                drop(CancelOnDrop {
                    client: client.clone(),
                    task_id: Some(task.task_id),
                    timeout: limit,
                });
            }
        });
        answer.await.unwrap_or_else(|_| {
            // The request's task was stopped: its runtime is shutting down.
            Err(Error::Closed {
                operation: "tools/call as a task".to_owned(),
            })
        })
    }
}

/// The latest state of the task being watched, and the checks on each new
/// one.
struct Watch {
    last: Task,
}

impl Watch {
    /// Takes a polled state; `Ok(true)` when it differs from the last one.
    fn accept(&mut self, polled: Task) -> Result<bool, Error> {
        let operation = format!("tasks/get {}", self.last.task_id);
        if polled.task_id != self.last.task_id {
            return Err(Error::invalid_response(
                &operation,
                format!(
                    "the server answered about task {:?}, not {:?}",
                    polled.task_id, self.last.task_id
                ),
            ));
        }
        if self.last.status.is_terminal() && polled.status != self.last.status {
            return Err(Error::invalid_response(
                &operation,
                format!(
                    "the task went from {} back to {}; a finished task cannot change",
                    self.last.status, polled.status
                ),
            ));
        }
        let changed =
            polled.status != self.last.status || polled.status_message != self.last.status_message;
        self.last = polled;
        Ok(changed)
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

/// Sends `tasks/cancel` for a task whose caller went away before it was
/// over, on a task of its own.
struct CancelOnDrop {
    client: Client,
    task_id: Option<String>,
    timeout: Duration,
}

impl CancelOnDrop {
    fn disarm(&mut self) {
        self.task_id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(task_id) = self.task_id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::debug!(task_id, "mcp: no runtime to cancel an abandoned task on");
            return;
        };
        let client = self.client.clone();
        let timeout = self.timeout;
        runtime.spawn(async move {
            match tokio::time::timeout(timeout, client.cancel_task(&task_id)).await {
                Ok(Ok(_)) => tracing::debug!(task_id, "mcp: cancelled an abandoned task"),
                Ok(Err(error)) => {
                    tracing::debug!(task_id, %error, "mcp: could not cancel an abandoned task");
                }
                Err(_) => tracing::debug!(task_id, "mcp: gave up cancelling an abandoned task"),
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, status: TaskStatus) -> Task {
        Task {
            task_id: id.into(),
            status,
            status_message: None,
            created_at: None,
            last_updated_at: None,
            ttl: None,
            poll_interval: None,
        }
    }

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

    #[test]
    fn the_poll_interval_is_the_servers_within_bounds() {
        let options = TaskOptions::default();
        let mut suggested = task("t", TaskStatus::Working);
        assert_eq!(options.interval(&suggested), Duration::from_secs(1));
        suggested.poll_interval = Some(Duration::ZERO);
        assert_eq!(options.interval(&suggested), Duration::from_millis(100));
        suggested.poll_interval = Some(Duration::from_secs(3600));
        assert_eq!(options.interval(&suggested), Duration::from_secs(5));
        suggested.poll_interval = Some(Duration::from_millis(700));
        assert_eq!(options.interval(&suggested), Duration::from_millis(700));
    }

    #[test]
    fn a_status_may_move_forward_but_not_out_of_a_terminal_one() {
        let mut watch = Watch {
            last: task("t", TaskStatus::Working),
        };
        assert!(
            watch
                .accept(task("t", TaskStatus::InputRequired))
                .expect("forward")
        );
        assert!(
            watch
                .accept(task("t", TaskStatus::Working))
                .expect("back to work")
        );
        assert!(!watch.accept(task("t", TaskStatus::Working)).expect("same"));
        assert!(
            watch
                .accept(task("t", TaskStatus::Completed))
                .expect("done")
        );
        let error = watch
            .accept(task("t", TaskStatus::Working))
            .expect_err("backwards");
        assert!(
            error.to_string().contains("from completed back to working"),
            "{error}"
        );
    }

    #[test]
    fn a_poll_about_another_task_is_refused() {
        let mut watch = Watch {
            last: task("mine", TaskStatus::Working),
        };
        let error = watch
            .accept(task("theirs", TaskStatus::Working))
            .expect_err("another task");
        assert!(error.to_string().contains("\"theirs\""), "{error}");
    }
}
