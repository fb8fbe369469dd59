//! What both eras' tasks share: [`TaskOptions`] (the polling bounds and the
//! cancel that outlives its caller), the checks on each polled state
//! (`Watch`), and `CancelOnDrop`, the guard that sends `tasks/cancel` for
//! a task whose caller went away (ADRs 0013 and 0025).
//!
//! It knows neither era's requests beyond `tasks/cancel`, whose answer it
//! does not read (a task in 2025-11-25, an empty acknowledgement in the
//! tasks extension).

use std::time::Duration;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::error::Error;
use crate::session::client::Client;
use crate::wire::task::Task;

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
    /// (`task.ttl`, 2025-11-25); `None` (the default) leaves it to the
    /// server. The tasks extension has no way to ask: its server decides.
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

    /// The time until the next poll of `task`: the server's suggestion,
    /// within the bounds.
    pub(crate) fn interval(&self, task: &Task) -> Duration {
        task.poll_interval
            .unwrap_or(self.default_poll_interval)
            .clamp(
                self.min_poll_interval,
                self.max_poll_interval.max(self.min_poll_interval),
            )
    }
}

/// The parameters of the requests about one task.
#[derive(Serialize)]
pub(crate) struct TaskIdParams<'a> {
    #[serde(rename = "taskId")]
    pub(crate) task_id: &'a str,
}

/// The latest state of the task being watched, and the checks on each new
/// one.
pub(crate) struct Watch {
    pub(crate) last: Task,
}

impl Watch {
    /// Takes a polled state; `Ok(true)` when it differs from the last one.
    pub(crate) fn accept(&mut self, polled: Task) -> Result<bool, Error> {
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

/// Sends `tasks/cancel` for a task whose caller went away before it was
/// over, on a task of its own.
pub(crate) struct CancelOnDrop {
    client: Client,
    task_id: Option<String>,
    timeout: Duration,
}

impl CancelOnDrop {
    /// A guard for `task_id` (`None`: nothing to cancel), whose
    /// `tasks/cancel` may take `timeout`.
    pub(crate) fn new(client: &Client, task_id: Option<String>, timeout: Duration) -> Self {
        CancelOnDrop {
            client: client.clone(),
            task_id,
            timeout,
        }
    }

    /// Nothing to cancel any more.
    pub(crate) fn disarm(&mut self) {
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
            let cancel = client.request::<serde::de::IgnoredAny, _>(
                "tasks/cancel",
                Some(&task_id),
                TaskIdParams { task_id: &task_id },
            );
            match tokio::time::timeout(timeout, cancel).await {
                Ok(Ok(_)) => tracing::debug!(task_id, "mcp: cancelled an abandoned task"),
                Ok(Err(error)) => {
                    tracing::debug!(task_id, %error, "mcp: could not cancel an abandoned task");
                }
                Err(_) => tracing::debug!(task_id, "mcp: gave up cancelling an abandoned task"),
            }
        });
    }
}

/// Runs `request` (a `tools/call` that may create a task) on a task of its
/// own and returns its answer. A caller that goes away first leaves it
/// there: it waits for the answer, at most `limit`, and cancels the task
/// that `created` finds in it, so that an abandoned call leaves no task
/// running on the server. Both tasks shapes (2025-11-25 and 2026-07-28)
/// create their tasks this way.
pub(crate) async fn detached_create<F>(
    client: Client,
    tool: String,
    limit: Duration,
    request: F,
    created: impl FnOnce(&RawValue) -> Option<Task> + Send + 'static,
) -> Result<Box<RawValue>, Error>
where
    F: std::future::Future<Output = Result<Box<RawValue>, Error>> + Send + 'static,
{
    let operation = format!("tools/call {tool} as a task");
    let (answer_sender, answer) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let mut request = std::pin::pin!(request);
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
                    tracing::debug!(tool, "mcp: no answer to an abandoned task call; nothing to cancel");
                    return;
                }
            },
        };
        let task = abandoned
            .ok()
            .and_then(|answer| created(&answer))
            .filter(|task| !task.status.is_terminal());
        if let Some(task) = task {
            drop(CancelOnDrop::new(&client, Some(task.task_id), limit));
        }
    });
    // The request's task was stopped: its runtime is shutting down.
    answer
        .await
        .unwrap_or_else(|_| Err(Error::Closed { operation }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::task::TaskStatus;

    pub(crate) fn task(id: &str, status: TaskStatus) -> Task {
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
