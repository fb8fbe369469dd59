//! `call --task`: the tool found in the list, run with
//! `Client::call_tool_as_task_raw` (the spinner line or stderr lines show
//! each status), and `TaskSlot`, the task in flight, so that a timeout or
//! Ctrl-C can cancel it on the server (`cancel_abandoned`, awaited before
//! the command exits). The same in both eras: `configure` declares the
//! tasks extension of 2026-07-28 for a modern server (ADR 0025). It knows
//! nothing of the deadline itself.

use std::time::Duration;

use golem_mcp::{Client, ClientConfig, Task, TaskOptions};
use serde_json::value::RawValue;

use crate::failure::{Exit, Failure, describe};
use crate::feedback::Feedback;
use crate::plan::typed::{Pair, typed_arguments};
use crate::run::tools::{ResultSink, find_tool, finish_call};

/// `call --task`: the call as a task, each status shown, its result
/// printed.
pub async fn call(
    client: &Client,
    tool: &str,
    (arguments, pairs): (&RawValue, &[Pair]),
    (sink, quiet): (ResultSink<'_>, bool),
    task_slot: &TaskSlot,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage(format!("listing tools to find {tool}"));
    let tools = client.list_tools().await.map_err(mcp)?;
    let listed = find_tool(&tools, tool)?;
    let typed;
    let arguments = match pairs.is_empty() {
        true => arguments,
        false => {
            typed = typed_arguments(tool, listed.input_schema.as_deref(), arguments, pairs)?;
            typed.as_ref()
        }
    };
    feedback.stage(format!("calling {tool} as a task"));
    let console = feedback.console();
    let options = options();
    let raw = client
        .call_tool_as_task_raw(listed, arguments, &options, |state: &Task| {
            task_slot.record(&state.task_id);
            feedback.task_status(state, &console, quiet);
        })
        .await
        .map_err(mcp)?;
    task_slot.finished();
    finish_call(client, tool, raw, sink, feedback).await
}

/// How `call --task` runs its task: the command cancels the task itself on
/// a timeout or a signal, and waits for the answer, since it exits right
/// after.
fn options() -> TaskOptions {
    TaskOptions::default().with_cancel_on_drop(false)
}

/// The client's configuration for `call --task` (`task`): the tasks
/// extension declared, so that a modern server may run the call as a task;
/// any other command declares nothing.
pub fn configure(config: ClientConfig, task: bool) -> ClientConfig {
    match task {
        true => config.with_tasks(options()),
        false => config,
    }
}

/// The task `call --task` is running, so that a timeout can cancel it.
#[derive(Debug, Default)]
pub struct TaskSlot(std::sync::Mutex<Option<String>>);

impl TaskSlot {
    pub fn record(&self, task_id: &str) {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_deref() != Some(task_id) {
            *slot = Some(task_id.to_owned());
        }
    }

    /// The task is over: nothing to cancel.
    pub fn finished(&self) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    pub fn take(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

/// After a timeout: asks the server to cancel the task `call --task` was
/// waiting for, within `limit`, and says so on stderr.
pub async fn cancel_abandoned(client: &Client, task_id: &str, limit: Duration) {
    // The id is the server's: shown escaped.
    let shown = golem_terminal::one_line(task_id);
    match tokio::time::timeout(limit, client.cancel_task(task_id)).await {
        Ok(Ok(_)) => eprintln!("golem-mcp: cancelled task {shown} on the server"),
        Ok(Err(error)) => eprintln!(
            "golem-mcp: could not cancel task {shown} on the server: {}",
            golem_terminal::message(&describe(&error))
        ),
        Err(_) => {
            eprintln!("golem-mcp: the server did not confirm cancelling task {shown} in time")
        }
    }
}
