//! A task's state as the server reports it ([`Task`], [`TaskStatus`]): what
//! `tasks/get` answers and `notifications/tasks/status` carries, shared by
//! the notification stream and the tasks feature. One shape for both eras:
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
