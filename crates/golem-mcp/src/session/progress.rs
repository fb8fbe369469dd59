//! Progress reports (`notifications/progress`): what a server says about a
//! call still running, routed by the session to the call that asked.

use serde::Deserialize;

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
