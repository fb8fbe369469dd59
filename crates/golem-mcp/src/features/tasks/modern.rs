//! Tasks in the shape of the tasks extension of 2026-07-28
//! (`io.modelcontextprotocol/tasks`, ADR 0025): a server that has the
//! declaration on a request may answer a `tools/call` with a task
//! (`resultType: "task"`) instead of its result. The client polls
//! `tasks/get` at the `pollIntervalMs` the server suggests (within the
//! [`TaskOptions`] bounds) until the task is over: `completed` carries the
//! call's result, `failed` its JSON-RPC error, `cancelled` nothing. A task
//! that needs input lists it in `inputRequests`; the handlers the
//! application registered answer each key once, sent with `tasks/update`.
//! `tasks/cancel` (an acknowledgement only) ends an abandoned task.
//!
//! It knows nothing of the 2025-11-25 shape (`tasks/mod.rs`), which calls into
//! it on modern connections.

use std::collections::BTreeMap;
use std::collections::HashSet;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::Error;
use crate::features::tasks::options::{CancelOnDrop, TaskIdParams, Watch, detached_create};
use crate::features::tools::headers;
use crate::session::connection::Request;
use crate::session::handle::Client;
use crate::session::modern::mrtr::{InputRequest, answer_one};
use crate::session::progress::Progress;
use crate::session::protocol::Era;
use crate::wire::jsonrpc::ProtocolError;
use crate::wire::task::{Task, TaskOptions, TaskStatus};

/// The most input requests one task may have answered: a server that keeps
/// asking is given up on, like a multi-round-trip request that does.
pub(crate) const MAX_TASK_INPUTS: usize = 256;

/// What the parts of a `tasks/get` answer beyond the [`Task`] are (read on
/// their own: a raw value cannot be read through a flattened struct).
#[derive(Deserialize)]
struct Outcome {
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<ProtocolError>,
    #[serde(rename = "inputRequests", default)]
    input_requests: Option<Box<RawValue>>,
}

/// The top of a `tools/call` answer, as far as it says whether it is a task.
#[derive(Deserialize)]
struct ResultTypeOnly<'a> {
    #[serde(rename = "resultType", borrow, default)]
    result_type: Option<&'a str>,
}

#[derive(Serialize)]
struct UpdateParams<'a> {
    #[serde(rename = "taskId")]
    task_id: &'a str,
    #[serde(rename = "inputResponses")]
    input_responses: &'a RawValue,
}

#[derive(Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a RawValue,
}

impl Client {
    /// The options modern task answers are driven with: `Some` when this
    /// connection is of the modern era and the application enabled the
    /// extension (then every modern request declares it).
    pub(crate) fn modern_task_options(&self) -> Option<TaskOptions> {
        let modern = self
            .server()
            .is_some_and(|server| server.era() == Era::Modern);
        if !modern {
            return None;
        }
        self.features().task_defaults.clone()
    }

    /// Sends a plain `tools/call` (`request`) on a connection that
    /// declares the tasks extension, and reads its result as `R`: a task
    /// the server answers with is driven to its result first, with the
    /// options the application gave (`options`). How the plain calls
    /// (`call_tool` and its kin, the bridge) meet a server that runs them
    /// as tasks.
    ///
    /// Cancel safe: dropped before the answer, the request is cancelled as
    /// any; dropped while the task runs, it is cancelled as
    /// [`TaskOptions::cancel_on_drop`] says.
    pub(crate) async fn send_call_as_task<R, P>(
        &self,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
        options: TaskOptions,
    ) -> Result<R, Error>
    where
        R: DeserializeOwned,
        P: Serialize,
    {
        // A task's polls go to the server that created it.
        let client = self.pinned("tools/call").await?;
        let name = request.name.unwrap_or_default();
        let answer: Box<RawValue> = client.send_request(request, on_progress).await?;
        let result = match created(name, &answer)? {
            Some(task) => client.drive(name, task, &options, &mut |_| {}).await?,
            None => answer,
        };
        serde_json::from_str(result.get())
            .map_err(|error| Error::invalid_response(&format!("tools/call {name}"), error))
    }

    /// `call_tool_as_task` on a modern connection: the call, and the task
    /// the server answers with (if it does) driven to its result, which is
    /// returned as the server sent it. The caller checked the declaration.
    ///
    /// With [`TaskOptions::cancel_on_drop`], the `tools/call` runs on a task
    /// of its own, so that a task created after its caller went away is
    /// cancelled too (as in 2025-11-25).
    pub(crate) async fn modern_task_call(
        &self,
        name: &str,
        arguments: &RawValue,
        options: &TaskOptions,
        on_status: &mut (dyn FnMut(&Task) + Send),
    ) -> Result<Box<RawValue>, Error> {
        let headers = headers::headers_for(self, name, arguments)?;
        let answer = match options.cancel_on_drop {
            true => {
                self.create_detached(name, arguments, headers, options)
                    .await?
            }
            false => {
                let params = CallParams { name, arguments };
                let mut request = Request::new("tools/call", &params);
                request.name = Some(name);
                request.param_headers = &headers;
                self.send_request(request, None).await?
            }
        };
        match created(name, &answer)? {
            Some(task) => self.drive(name, task, options, on_status).await,
            // The server ran the call at once.
            None => Ok(answer),
        }
    }

    /// Sends the `tools/call` on a task of its own and returns its answer;
    /// a caller that goes away first leaves it there, which waits for the
    /// answer (at most [`TaskOptions::cancel_timeout`]) and cancels the
    /// task it names.
    async fn create_detached(
        &self,
        name: &str,
        arguments: &RawValue,
        headers: Vec<(String, String)>,
        options: &TaskOptions,
    ) -> Result<Box<RawValue>, Error> {
        let client = self.clone();
        let tool = name.to_owned();
        let arguments = arguments.to_owned();
        let request = async move {
            let params = CallParams {
                name: &tool,
                arguments: &arguments,
            };
            let mut request = Request::new("tools/call", &params);
            request.name = Some(&tool);
            request.param_headers = &headers;
            client.send_request::<Box<RawValue>, _>(request, None).await
        };
        let tool = name.to_owned();
        let found = move |answer: &RawValue| created(&tool, answer).ok().flatten();
        detached_create(
            self.clone(),
            name.to_owned(),
            options.cancel_timeout,
            request,
            found,
        )
        .await
    }

    /// Polls the task `first` (the answer to `tools/call name`) until it is
    /// over, answering its input requests, and returns the call's result.
    async fn drive(
        &self,
        name: &str,
        first: Task,
        options: &TaskOptions,
        on_status: &mut (dyn FnMut(&Task) + Send),
    ) -> Result<Box<RawValue>, Error> {
        let mut guard = CancelOnDrop::new(
            self,
            options.cancel_on_drop.then(|| first.task_id.clone()),
            options.cancel_timeout,
        );
        on_status(&first);
        let mut watch = Watch { last: first };
        let mut answered: HashSet<String> = HashSet::new();
        loop {
            // Even a task created finished is read once: its result comes
            // with `tasks/get` only.
            tokio::time::sleep(options.interval(&watch.last)).await;
            let (polled, outcome) = self.poll(&watch.last.task_id).await?;
            if watch.accept(polled)? {
                on_status(&watch.last);
            }
            let task = &watch.last;
            let operation = || format!("tools/call {name} (task {})", task.task_id);
            match task.status {
                TaskStatus::Working => {}
                TaskStatus::InputRequired => {
                    let Some(requests) = outcome.input_requests else {
                        continue;
                    };
                    self.give_input(&operation(), &task.task_id, &requests, &mut answered)
                        .await?;
                }
                TaskStatus::Completed => {
                    guard.disarm();
                    return outcome.result.ok_or_else(|| {
                        Error::invalid_response(&operation(), "a completed task without its result")
                    });
                }
                TaskStatus::Failed => {
                    guard.disarm();
                    return Err(match outcome.error {
                        Some(source) => Error::Protocol {
                            operation: operation(),
                            source,
                        },
                        None => {
                            Error::invalid_response(&operation(), "a failed task without its error")
                        }
                    });
                }
                TaskStatus::Cancelled => {
                    guard.disarm();
                    return Err(Error::TaskCancelled {
                        operation: operation(),
                        task_id: task.task_id.clone(),
                        status_message: task.status_message.clone(),
                    });
                }
            }
        }
    }

    /// One `tasks/get`: the task's state and what comes with it.
    async fn poll(&self, task_id: &str) -> Result<(Task, Outcome), Error> {
        let answer: Box<RawValue> = self
            .request("tasks/get", Some(task_id), TaskIdParams { task_id })
            .await?;
        let operation = || format!("tasks/get {task_id}");
        let task = serde_json::from_str(answer.get())
            .map_err(|error| Error::invalid_response(&operation(), error))?;
        let outcome = serde_json::from_str(answer.get())
            .map_err(|error| Error::invalid_response(&operation(), error))?;
        Ok((task, outcome))
    }

    /// Answers the input requests not answered before (a server lists a
    /// request until it has taken the answer in) with the registered
    /// handlers, and sends the answers with `tasks/update`.
    async fn give_input(
        &self,
        operation: &str,
        task_id: &str,
        requests: &RawValue,
        answered: &mut HashSet<String>,
    ) -> Result<(), Error> {
        let requests: BTreeMap<String, InputRequest<'_>> = serde_json::from_str(requests.get())
            .map_err(|error| {
                Error::invalid_response(
                    operation,
                    format!("its inputRequests cannot be read: {error}"),
                )
            })?;
        let mut responses = String::from("{");
        for (key, request) in &requests {
            if answered.contains(key) {
                continue;
            }
            if answered.len() >= MAX_TASK_INPUTS {
                return Err(Error::invalid_response(
                    operation,
                    format!("the task asked for more than {MAX_TASK_INPUTS} inputs; gave up"),
                ));
            }
            let result = answer_one(self.offer(), &operation, request).await?;
            if responses.len() > 1 {
                responses.push(',');
            }
            let key_text =
                serde_json::to_string(key).map_err(|error| Error::encode(operation, error))?;
            responses.push_str(&key_text);
            responses.push(':');
            responses.push_str(&result);
            answered.insert(key.clone());
        }
        if responses.len() == 1 {
            // Every request listed was answered already.
            return Ok(());
        }
        responses.push('}');
        let responses = RawValue::from_string(responses)
            .map_err(|error| Error::invalid_response(operation, error))?;
        let _: serde::de::IgnoredAny = self
            .request(
                "tasks/update",
                Some(task_id),
                UpdateParams {
                    task_id,
                    input_responses: &responses,
                },
            )
            .await?;
        Ok(())
    }
}

/// The task a `tools/call name` answer names, or `None` when it is the
/// call's result.
fn created(name: &str, answer: &RawValue) -> Result<Option<Task>, Error> {
    let invalid =
        |error: serde_json::Error| Error::invalid_response(&format!("tools/call {name}"), error);
    let kind: ResultTypeOnly<'_> = serde_json::from_str(answer.get()).map_err(invalid)?;
    if kind.result_type != Some("task") {
        return Ok(None);
    }
    serde_json::from_str(answer.get())
        .map(Some)
        .map_err(invalid)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> Box<RawValue> {
        RawValue::from_string(text.to_owned()).expect("valid JSON")
    }

    #[test]
    fn a_task_answer_is_told_from_a_result() {
        let task = created(
            "slow",
            &raw(r#"{"resultType":"task","taskId":"t1","status":"working","ttlMs":60000,"pollIntervalMs":250,"createdAt":"2026-07-28T10:00:00Z","lastUpdatedAt":"2026-07-28T10:00:00Z"}"#),
        )
        .expect("readable")
        .expect("a task");
        assert_eq!(task.task_id, "t1");
        assert_eq!(
            task.poll_interval,
            Some(std::time::Duration::from_millis(250))
        );
        assert_eq!(task.ttl, Some(std::time::Duration::from_secs(60)));
        for result in [
            r#"{"resultType":"complete","content":[]}"#,
            r#"{"content":[{"type":"text","text":"resultType task"}]}"#,
        ] {
            assert!(
                created("slow", &raw(result)).expect("readable").is_none(),
                "{result}"
            );
        }
        let broken = created("slow", &raw(r#"{"resultType":"task","status":"working"}"#))
            .expect_err("no taskId");
        assert!(broken.to_string().contains("tools/call slow"), "{broken}");
    }

    #[test]
    fn a_polled_task_keeps_its_result_error_and_input_requests_verbatim() {
        let outcome: Outcome = serde_json::from_str(
            r#"{"taskId":"t","status":"completed","result":{"content":[],"isError":false},
                "error":{"code":-32603,"message":"m"},"inputRequests":{"k":{"method":"roots/list"}}}"#,
        )
        .expect("readable");
        assert_eq!(
            outcome.result.map(|raw| raw.get().to_owned()).as_deref(),
            Some(r#"{"content":[],"isError":false}"#)
        );
        assert_eq!(outcome.error.map(|error| error.code), Some(-32603));
        assert!(outcome.input_requests.is_some());
    }
}
