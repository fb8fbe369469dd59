//! Running a checked command line: start or reach the server, ask it, print
//! the answer, end the session, all within `--timeout`. Meanwhile the
//! server's log messages are printed on stderr and its elicitation requests
//! answered (`--on-elicitation`).

use std::future::Future;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use golem_mcp::{
    CallResult, Client, ClientConfig, HttpTransport, LogLevel, Notifications, ServerNotification,
    ServerStderr, StdioTransport, Task, TaskOptions,
};
use serde_json::value::RawValue;

use crate::elicit::Elicitor;
use crate::failure::{Exit, Failure, describe};
use crate::features;
use crate::feedback::{Console, Feedback};
use crate::plan::target::Target;
use crate::plan::{Action, Plan};
use crate::render::content::call_text;
use crate::render::server::{info_json, info_text};
use crate::render::status::log_line;
use crate::render::text::line;
use crate::render::tools::{list_json, list_text, some_names};
use crate::trace::traced;

/// How long ending the session may take after the command's work is done,
/// at most: `--timeout` bounds the whole command, so closing gets only what
/// is left of it. Past that the server's process group is killed (when the
/// runtime drops the transport's shutdown task).
const CLOSE_LIMIT: Duration = Duration::from_secs(2);
/// How many lines of a silent server's stderr a timeout message shows.
const STDERR_LINES_SHOWN: usize = 20;
/// How many tool names an "unknown tool" message lists.
const NAMES_SHOWN: usize = 20;
/// While the user answers a prompt the deadline moves; how often it is
/// looked at again.
const PAUSE_CHECK: Duration = Duration::from_millis(100);

/// Runs `plan` and returns the exit status; failures are reported on stderr.
pub async fn execute(plan: Plan) -> Exit {
    if let Some(exit) = crate::auth::account(&plan).await {
        return exit;
    }
    let mut feedback = Feedback::new(std::io::stderr().is_terminal() && !plan.verbose);
    let console = feedback.console();
    plan.console.fill(console.clone());
    let mut config =
        ClientConfig::default().with_elicitation(Elicitor::new(plan.elicitation, console.clone()));
    if let Some(roots) = plan.roots.clone() {
        config = config.with_roots(roots);
    }
    let (client, server_stderr) = match connect(plan.target, config, plan.verbose) {
        Ok(connected) => connected,
        Err(failure) => {
            feedback.finish();
            return failure.report();
        }
    };
    // Subscribed before anything is sent: the first log message may come
    // with the handshake.
    let mut notifications = client.notifications();
    let started = tokio::time::Instant::now();
    let task_slot = TaskSlot::default();
    let job = work(
        &client,
        &plan.action,
        (plan.json, plan.quiet),
        plan.log_level,
        &task_slot,
        &mut feedback,
    );
    let relay = relay_logs(&mut notifications, &console, plan.quiet);
    let bounded = within(started + plan.timeout, &console, alongside(job, relay));
    // Ctrl-C ends the command here rather than killing it: the spinner is
    // cleared, the user is told what was interrupted, and dropping the
    // client ends the server, whose own process group the terminal's
    // SIGINT does not reach.
    let outcome = tokio::select! {
        outcome = bounded => outcome,
        _ = tokio::signal::ctrl_c() => {
            feedback.finish();
            let exit = Failure::new(
                Exit::Interrupted,
                format!("interrupted while {}", feedback.current_stage()),
            )
            .report();
            // A task `call --task` left running on the server is cancelled
            // there (an HTTP server outlives this command).
            if let Some(task_id) = task_slot.take() {
                cancel_abandoned(&client, &task_id, CLOSE_LIMIT).await;
            }
            drop(client);
            return exit;
        }
    };
    // What arrived before the answer is printed before the session ends.
    drain_logs(&mut notifications, &console, plan.quiet).await;
    feedback.finish();
    let deadline = started + plan.timeout + console.paused_for();
    let (exit, close) = match outcome {
        Ok(Ok(exit)) => (exit, true),
        // A server process that exited has no session to end; dropping the
        // client reaps it and kills what is left of its process group.
        Ok(Err(failure)) if failure.server_exited => (failure.report(), false),
        Ok(Err(failure)) => (failure.report(), true),
        Err(_elapsed) => {
            let failure = Failure::new(
                Exit::Timeout,
                timeout_message(
                    plan.timeout,
                    feedback.current_stage(),
                    client.server().is_some(),
                    server_stderr.as_ref(),
                ),
            );
            let exit = failure.report();
            // A task left running is cancelled, within the time closing
            // would get; then no time is left to close: dropping the
            // client kills the server's process group.
            if let Some(task_id) = task_slot.take() {
                cancel_abandoned(&client, &task_id, CLOSE_LIMIT).await;
            }
            (exit, false)
        }
    };
    if !close {
        return exit;
    }
    let close_limit =
        CLOSE_LIMIT.min(deadline.saturating_duration_since(tokio::time::Instant::now()));
    match tokio::time::timeout(close_limit, client.close()).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::debug!(error = %describe(&error), "golem-mcp: closing failed"),
        Err(_) => {
            tracing::debug!("golem-mcp: the session did not end in time; the server is killed")
        }
    }
    exit
}

/// `future`, unless `deadline` passes first (`Err(())`); the time the user
/// spends answering prompts moves the deadline back.
async fn within<T>(
    deadline: tokio::time::Instant,
    console: &Console,
    future: impl Future<Output = T>,
) -> Result<T, ()> {
    let mut future = std::pin::pin!(future);
    loop {
        let now = tokio::time::Instant::now();
        let moved = deadline + console.paused_for();
        let wake = match console.is_paused() {
            true => moved.max(now + PAUSE_CHECK),
            false => moved,
        };
        tokio::select! {
            output = &mut future => return Ok(output),
            () = tokio::time::sleep_until(wake) => {
                if !console.is_paused() && deadline + console.paused_for() <= tokio::time::Instant::now() {
                    return Err(());
                }
            }
        }
    }
}

/// `job`, with `side` running next to it until `job` is done.
async fn alongside<T>(job: impl Future<Output = T>, side: impl Future<Output = ()>) -> T {
    let mut job = std::pin::pin!(job);
    tokio::select! {
        biased;
        output = &mut job => output,
        () = side => job.await,
    }
}

/// Prints the server's log messages as they arrive, until the client is
/// gone.
async fn relay_logs(notifications: &mut Notifications, console: &Console, quiet: bool) {
    while let Some(notification) = notifications.recv().await {
        show(&notification, console, quiet);
    }
}

/// Prints the log messages already received.
async fn drain_logs(notifications: &mut Notifications, console: &Console, quiet: bool) {
    // A zero timeout still polls `recv` once: what is queued is returned.
    while let Ok(Some(notification)) =
        tokio::time::timeout(Duration::ZERO, notifications.recv()).await
    {
        show(&notification, console, quiet);
    }
}

fn show(notification: &ServerNotification, console: &Console, quiet: bool) {
    if let ServerNotification::Log(message) = notification
        && !quiet
    {
        console.line(log_line(message));
    }
}

/// Starts the stdio server (keeping a handle on its stderr for messages)
/// or prepares the HTTP transport. Nothing is sent yet.
fn connect(
    target: Target,
    config: ClientConfig,
    verbose: bool,
) -> Result<(Client, Option<ServerStderr>), Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    Ok(match target {
        Target::Stdio(stdio) => {
            let transport = StdioTransport::spawn(stdio).map_err(mcp)?;
            let stderr = transport.stderr();
            let client = if verbose {
                Client::with_config(traced(transport), config)
            } else {
                Client::with_config(transport, config)
            };
            (client, Some(stderr))
        }
        Target::Http(http) => {
            let transport = HttpTransport::new(http).map_err(mcp)?;
            let client = if verbose {
                Client::with_config(traced(transport), config)
            } else {
                Client::with_config(transport, config)
            };
            (client, None)
        }
    })
}

/// What a timeout says: what was being done and, for a server that never
/// answered `initialize`, what it wrote to stderr meanwhile (usually why:
/// a port in use, a missing key) instead of advice to wait longer.
fn timeout_message(
    timeout: Duration,
    stage: &str,
    initialized: bool,
    stderr: Option<&ServerStderr>,
) -> String {
    let head = format!("timed out after {} s while {stage}", timeout.as_secs_f64());
    if initialized {
        return format!("{head}; raise --timeout if the server needs longer");
    }
    let tail = stderr.map(ServerStderr::tail).unwrap_or_default();
    let tail = tail.trim_end();
    if tail.is_empty() {
        format!(
            "{head}: the server never answered initialize; check that the command starts an \
             MCP server speaking on stdin/stdout (or the URL is its MCP endpoint), or raise \
             --timeout if it is slow to start"
        )
    } else {
        let lines: Vec<&str> = tail.lines().collect();
        let shown = lines[lines.len().saturating_sub(STDERR_LINES_SHOWN)..].join("\n");
        format!("{head}: the server never answered initialize; its stderr ended with:\n{shown}")
    }
}

async fn work(
    client: &Client,
    action: &Action,
    (json, quiet): (bool, bool),
    log_level: Option<LogLevel>,
    task_slot: &TaskSlot,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage("connecting to the server");
    let server = client.initialize().await.map_err(mcp)?;
    if let Some(level) = log_level {
        feedback.stage("setting the log level");
        set_log_level(client, level, &feedback.console()).await;
    }
    match action {
        // Handled before connecting (`auth::account`); the session shows
        // the authorization worked.
        Action::Login | Action::Logout => Ok(Exit::Success),
        Action::Info => {
            let text = if json {
                info_json(server)
            } else {
                info_text(server)
            };
            feedback.finish();
            emit(&text)?;
            Ok(Exit::Success)
        }
        Action::List { long } => {
            feedback.stage("listing tools");
            let tools = client.list_tools().await.map_err(mcp)?;
            let text = if json {
                list_json(&tools)
            } else {
                list_text(&tools, *long)
            };
            feedback.finish();
            emit(&text)?;
            Ok(Exit::Success)
        }
        Action::Call {
            tool,
            arguments,
            task: false,
        } => {
            feedback.stage(format!("calling {tool}"));
            let mut on_progress = |report: golem_mcp::Progress| feedback.progress(&report);
            let raw = match client
                .call_tool_raw(tool, arguments, Some(&mut on_progress))
                .await
            {
                Ok(raw) => raw,
                Err(error) => {
                    // Servers differ in how they refuse an unknown tool:
                    // `isError` (below) or a JSON-RPC error such as -32602.
                    // Either way, a name the server does not list is a
                    // usage error naming the tools there are.
                    if let Some(refusal) = error.protocol_error() {
                        feedback.stage(format!("checking that {tool} exists"));
                        check_tool_exists(client, tool, &refusal.message).await?;
                    }
                    return Err(mcp(error));
                }
            };
            finish_call(client, tool, raw, json, feedback).await
        }
        Action::Call {
            tool,
            arguments,
            task: true,
        } => {
            feedback.stage(format!("listing tools to find {tool}"));
            let tools = client.list_tools().await.map_err(mcp)?;
            let Some(listed) = tools.iter().find(|listed| &listed.name == tool) else {
                return Err(Failure::usage(format!(
                    "the server has no tool named {tool:?}; it offers: {}",
                    some_names(&tools, NAMES_SHOWN)
                )));
            };
            feedback.stage(format!("calling {tool} as a task"));
            let console = feedback.console();
            // The command cancels the task itself on a timeout, and waits
            // for the answer, since it exits right after.
            let options = TaskOptions::default().with_cancel_on_drop(false);
            let raw = client
                .call_tool_as_task_raw(listed, arguments, &options, |state: &Task| {
                    task_slot.record(&state.task_id);
                    feedback.task_status(state, &console, quiet);
                })
                .await
                .map_err(mcp)?;
            task_slot.finished();
            finish_call(client, tool, raw, json, feedback).await
        }
        Action::Features(action) => features::run(client, action, json, feedback).await,
    }
}

/// The end of `call`: the result printed (its text, or with `--json` its
/// bytes), and the exit status it deserves.
async fn finish_call(
    client: &Client,
    tool: &str,
    raw: Box<RawValue>,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let result: CallResult = serde_json::from_str(raw.get()).map_err(|error| {
        Failure::new(
            Exit::Transport,
            format!("tools/call {tool}: invalid answer from the server: {error}"),
        )
    })?;
    if result.is_error {
        feedback.stage(format!("checking that {tool} exists"));
        check_tool_exists(client, tool, &result.text()).await?;
    }
    feedback.finish();
    if json {
        emit(&line(raw.get()))?;
    } else {
        emit(&line(&call_text(&result)))?;
    }
    if result.is_error {
        eprintln!("golem-mcp: the tool {tool:?} answered with an error (isError)");
        Ok(Exit::ToolError)
    } else {
        Ok(Exit::Success)
    }
}

/// The task `call --task` is running, so that a timeout can cancel it.
#[derive(Debug, Default)]
struct TaskSlot(std::sync::Mutex<Option<String>>);

impl TaskSlot {
    fn record(&self, task_id: &str) {
        let mut slot = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.as_deref() != Some(task_id) {
            *slot = Some(task_id.to_owned());
        }
    }

    /// The task is over: nothing to cancel.
    fn finished(&self) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    fn take(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

/// After a timeout: asks the server to cancel the task `call --task` was
/// waiting for, within `limit`, and says so on stderr.
async fn cancel_abandoned(client: &Client, task_id: &str, limit: Duration) {
    match tokio::time::timeout(limit, client.cancel_task(task_id)).await {
        Ok(Ok(_)) => eprintln!("golem-mcp: cancelled task {task_id} on the server"),
        Ok(Err(error)) => eprintln!(
            "golem-mcp: could not cancel task {task_id} on the server: {}",
            describe(&error)
        ),
        Err(_) => {
            eprintln!("golem-mcp: the server did not confirm cancelling task {task_id} in time")
        }
    }
}

/// `--log-level`: sent when the server declares logging; a warning line
/// otherwise, or when the server refuses it. Either way the command goes on.
async fn set_log_level(client: &Client, level: LogLevel, console: &Console) {
    let declared = client
        .server()
        .is_some_and(|server| server.capabilities.get("logging").is_some());
    if !declared {
        console.line(format!(
            "golem-mcp: warning: the server does not declare the logging capability; \
             --log-level {level} was not sent"
        ));
        return;
    }
    if let Err(error) = client.set_log_level(level).await {
        console.line(format!(
            "golem-mcp: warning: --log-level {level}: {}; going on",
            describe(&error)
        ));
    }
}

/// After a refused call (`isError`, which is how many servers report an
/// unknown tool, or a JSON-RPC error, which is how others do): if the
/// server does not list the tool, that is a usage error (exit 2) saying
/// which tools there are. If listing fails, the answer stands.
async fn check_tool_exists(client: &Client, tool: &str, answer: &str) -> Result<(), Failure> {
    let tools = match client.list_tools().await {
        Ok(tools) => tools,
        Err(error) => {
            tracing::debug!(error = %describe(&error), "golem-mcp: cannot list tools to check the name");
            return Ok(());
        }
    };
    if tools.iter().any(|listed| listed.name == tool) {
        return Ok(());
    }
    let answer = answer.lines().next().unwrap_or_default();
    let offers = if tools.is_empty() {
        "it lists no tools".to_owned()
    } else {
        format!("it offers: {}", some_names(&tools, NAMES_SHOWN))
    };
    Err(Failure::usage(format!(
        "the server has no tool named {tool:?} (it answered: {answer:?}); {offers}; \
         `golem-mcp list --long` with the same server options describes them"
    )))
}

/// Writes `text` to stdout. A closed pipe (`golem-mcp list | head -1`) is
/// not an error.
pub fn emit(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(error) => Err(Failure::new(
            Exit::Transport,
            format!("cannot write the output to stdout: {error}"),
        )),
    }
}
