//! Running: `execute` carries out a [`Plan`] against the server: starts or
//! reaches it, runs the subcommand under `--timeout` (Ctrl-C ends it
//! there), prints, and closes the session within a bound. One file per
//! subcommand family does the asking; what is printed is rendered in
//! `render/`. Meanwhile the server's log messages are printed on stderr and
//! its elicitation requests answered (`--on-elicitation`). It knows nothing
//! of clap: every usage check was made in `plan/`.

mod account;
mod capabilities;
mod connect;
mod deadline;
mod logs;
mod output;
mod prompts;
mod resources;
mod server;
mod task;
mod tools;

use std::io::IsTerminal;
use std::time::Duration;

use golem_mcp::{Client, ClientConfig, LogLevel};

use crate::failure::{Exit, Failure, describe};
use crate::feedback::Feedback;
use crate::plan::features::FeatureAction;
use crate::plan::{Action, Plan};
use connect::connect;
use deadline::{alongside, timeout_message, within};
use golem_elicit::Elicitor;
use logs::{drain_logs, relay_logs, set_log_level};
use task::{TaskSlot, cancel_abandoned};

/// How long ending the session may take after the command's work is done,
/// at most: `--timeout` bounds the whole command, so closing gets only what
/// is left of it. Past that the server's process group is killed (when the
/// runtime drops the transport's shutdown task).
const CLOSE_LIMIT: Duration = Duration::from_secs(2);

/// Runs `plan` and returns the exit status; failures are reported on stderr.
pub async fn execute(plan: Plan) -> Exit {
    if let Some(exit) = account::login_or_logout(&plan).await {
        return exit;
    }
    let mut feedback = Feedback::new(std::io::stderr().is_terminal() && !plan.verbose);
    let console = feedback.console();
    plan.console.fill(console.clone());
    let mut config = ClientConfig::default().with_elicitation(Elicitor::new(
        plan.elicitation,
        std::sync::Arc::new(console.clone()),
    ));
    if let Some(roots) = plan.roots.clone() {
        config = config.with_roots(roots);
    }
    if let Some(version) = plan.protocol.clone() {
        config = config.with_protocol(version);
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

/// Initializes the session, sets `--log-level`, and runs the subcommand.
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
        // Handled before connecting (`account.rs`); the session shows the
        // authorization worked.
        Action::Login | Action::Logout => Ok(Exit::Success),
        Action::Info => server::info(server, json, feedback),
        Action::List { long } => tools::list(client, *long, json, feedback).await,
        Action::Call {
            tool,
            arguments,
            task: false,
        } => tools::call(client, tool, arguments, json, feedback).await,
        Action::Call {
            tool,
            arguments,
            task: true,
        } => task::call(client, tool, arguments, (json, quiet), task_slot, feedback).await,
        Action::Features(action) => {
            if let Some(outcome) = capabilities::unless_offered(server, action, json, feedback) {
                return outcome;
            }
            features(client, action, json, feedback).await
        }
    }
}

/// Runs a feature's subcommand on a server that offers the feature.
async fn features(
    client: &Client,
    action: &FeatureAction,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    match action {
        FeatureAction::Resources { templates: false } => {
            resources::list(client, json, feedback).await
        }
        FeatureAction::Resources { templates: true } => {
            resources::templates(client, json, feedback).await
        }
        FeatureAction::Read { uri, sink } => {
            resources::read(client, uri, sink, json, feedback).await
        }
        FeatureAction::Prompts => prompts::list(client, json, feedback).await,
        FeatureAction::Prompt { name, arguments } => {
            prompts::get(client, name, arguments, json, feedback).await
        }
        FeatureAction::Complete {
            target,
            argument,
            value,
            context,
        } => prompts::complete(client, target, (argument, value), context, json, feedback).await,
        FeatureAction::Ping => server::ping(client, json, feedback).await,
    }
}
