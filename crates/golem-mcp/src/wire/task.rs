//! A task's state as the server reports it ([`Task`], [`TaskStatus`]): what
//! `tasks/get` answers and `notifications/tasks/status` carries, shared by
//! the notification stream and the tasks feature; and [`TaskOptions`], how
//! a client polls a task. One shape for both eras:
//! the 2025-11-25 names (`ttl`, `pollInterval`) and the tasks extension's
//! (`ttlMs`, `pollIntervalMs`, ADR 0025) are read alike.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// The server needs input from the client (an elicitation, say),
    /// which it asks for while `tasks/result` is pending (2025-11-25) or
    /// lists in the `tasks/get` answer (the tasks extension).
    InputRequired,
    /// Done; its result is ready.
    Completed,
    /// Done, unsuccessfully (in 2025-11-25, for a tool, this includes an
    /// `isError` result; in the tasks extension only a JSON-RPC error).
    Failed,
    /// Cancelled before it was done.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task is over (completed, failed or cancelled): its
    /// status can no longer change.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The specification's name for it, e.g. `input_required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

impl fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task's state, as `tasks/get`, `tasks/list`, `tasks/cancel` and
/// `notifications/tasks/status` give it (2025-11-25), or as the tasks
/// extension's `tools/call` (`resultType: "task"`) and `tasks/get` do.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[non_exhaustive]
pub struct Task {
    /// The id the server gave the task.
    #[serde(rename = "taskId")]
    pub task_id: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// A human-readable account of the status, when given.
    #[serde(rename = "statusMessage", default)]
    pub status_message: Option<String>,
    /// When it was created (ISO 8601, as sent).
    #[serde(rename = "createdAt", default)]
    pub created_at: Option<String>,
    /// When its status last changed (ISO 8601, as sent).
    #[serde(rename = "lastUpdatedAt", default)]
    pub last_updated_at: Option<String>,
    /// How long after creation the server keeps it; `None` when unlimited
    /// or not said (`ttl`, or the extension's `ttlMs`).
    #[serde(default, alias = "ttlMs", deserialize_with = "millis")]
    pub ttl: Option<Duration>,
    /// How often the server suggests polling it, when it says
    /// (`pollInterval`, or the extension's `pollIntervalMs`).
    #[serde(
        rename = "pollInterval",
        alias = "pollIntervalMs",
        default,
        deserialize_with = "millis"
    )]
    pub poll_interval: Option<Duration>,
}

/// Milliseconds (an integer or a float; `null` or a negative number is
/// `None`) as a duration.
fn millis<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
    let value = Option::<f64>::deserialize(deserializer)?;
    Ok(value
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .map(|ms| Duration::from_secs_f64(ms.min(1e15) / 1000.0)))
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
