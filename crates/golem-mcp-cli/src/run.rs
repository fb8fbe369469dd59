//! Running a checked command line: start or reach the server, ask it, print
//! the answer, end the session, all within `--timeout`. Meanwhile the
//! server's log messages are printed on stderr and its elicitation requests
//! answered (`--on-elicitation`).

use std::future::Future;
use std::io::{IsTerminal, Write};
use std::time::Duration;

use golem_mcp::{
    CallResult, Client, ClientConfig, HttpTransport, LogLevel, Notifications, ServerNotification,
    StdioTransport,
};

use crate::cli::{Action, Plan, Target};
use crate::elicit::Elicitor;
use crate::failure::{Exit, Failure, describe};
use crate::feedback::{Console, Feedback};
use crate::render;
use crate::trace::Traced;

/// How long ending the session may take after the command's work is done,
/// at most: `--timeout` bounds the whole command, so closing gets only what
/// is left of it. Past that the server's process group is killed (when the
/// runtime drops the transport's shutdown task).
const CLOSE_LIMIT: Duration = Duration::from_secs(2);
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
    let mut config =
        ClientConfig::default().with_elicitation(Elicitor::new(plan.elicitation, console.clone()));
    if let Some(roots) = plan.roots.clone() {
        config = config.with_roots(roots);
    }
    let client = match connect(plan.target, config, plan.verbose) {
        Ok(client) => client,
        Err(failure) => {
            feedback.finish();
            return failure.report();
        }
    };
    // Subscribed before anything is sent: the first log message may come
    // with the handshake.
    let mut notifications = client.notifications();
    let started = tokio::time::Instant::now();
    let job = work(
        &client,
        &plan.action,
        plan.json,
        plan.log_level,
        &mut feedback,
    );
    let relay = relay_logs(&mut notifications, &console, plan.quiet);
    let outcome = within(started + plan.timeout, &console, alongside(job, relay)).await;
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
                format!(
                    "timed out after {} s while {}; raise --timeout if the server needs longer",
                    plan.timeout.as_secs_f64(),
                    feedback.current_stage()
                ),
            );
            // No time is left to close: dropping the client kills the
            // server's process group.
            (failure.report(), false)
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
        console.line(render::log_line(message));
    }
}

/// Starts the stdio server or prepares the HTTP transport. Nothing is sent
/// yet.
fn connect(target: Target, config: ClientConfig, verbose: bool) -> Result<Client, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    Ok(match target {
        Target::Stdio(stdio) => {
            let transport = StdioTransport::spawn(stdio).map_err(mcp)?;
            if verbose {
                Client::with_config(Traced::new(transport), config)
            } else {
                Client::with_config(transport, config)
            }
        }
        Target::Http(http) => {
            let transport = HttpTransport::new(http).map_err(mcp)?;
            if verbose {
                Client::with_config(Traced::new(transport), config)
            } else {
                Client::with_config(transport, config)
            }
        }
    })
}

async fn work(
    client: &Client,
    action: &Action,
    json: bool,
    log_level: Option<LogLevel>,
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
                render::info_json(server)
            } else {
                render::info_text(server)
            };
            feedback.finish();
            emit(&text)?;
            Ok(Exit::Success)
        }
        Action::List { long } => {
            feedback.stage("listing tools");
            let tools = client.list_tools().await.map_err(mcp)?;
            let text = if json {
                render::list_json(&tools)
            } else {
                render::list_text(&tools, *long)
            };
            feedback.finish();
            emit(&text)?;
            Ok(Exit::Success)
        }
        Action::Call { tool, arguments } => {
            feedback.stage(format!("calling {tool}"));
            let mut on_progress = |report: golem_mcp::Progress| feedback.progress(&report);
            let raw = client
                .call_tool_raw(tool, arguments, Some(&mut on_progress))
                .await
                .map_err(mcp)?;
            let result: CallResult = serde_json::from_str(raw.get()).map_err(|error| {
                Failure::new(
                    Exit::Transport,
                    format!("tools/call {tool}: invalid answer from the server: {error}"),
                )
            })?;
            if result.is_error {
                feedback.stage(format!("checking that {tool} exists"));
                check_tool_exists(client, tool, &result).await?;
            }
            feedback.finish();
            if json {
                emit(&render::line(raw.get()))?;
            } else {
                emit(&render::line(&result.text()))?;
            }
            if result.is_error {
                eprintln!("golem-mcp: the tool {tool:?} answered with an error (isError)");
                Ok(Exit::ToolError)
            } else {
                Ok(Exit::Success)
            }
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

/// After an `isError` answer: many servers report an unknown tool that way
/// rather than with the JSON-RPC error the specification asks for. If the
/// server does not list the tool, that is a usage error (exit 2) saying
/// which tools there are. If listing fails, the answer stands.
async fn check_tool_exists(
    client: &Client,
    tool: &str,
    result: &CallResult,
) -> Result<(), Failure> {
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
    let answer = result.text();
    let answer = answer.lines().next().unwrap_or_default();
    let offers = if tools.is_empty() {
        "it lists no tools".to_owned()
    } else {
        format!("it offers: {}", render::some_names(&tools, NAMES_SHOWN))
    };
    Err(Failure::usage(format!(
        "the server has no tool named {tool:?} (it answered: {answer:?}); {offers}; \
         `golem-mcp list --long` with the same server options describes them"
    )))
}

/// Writes `text` to stdout. A closed pipe (`golem-mcp list | head -1`) is
/// not an error.
fn emit(text: &str) -> Result<(), Failure> {
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
