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
use crate::session::handle::Client;
use crate::wire::task::Task;

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
    use crate::wire::task::{TaskOptions, TaskStatus};

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
