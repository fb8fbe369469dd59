//! Running: `execute` carries out a [`Plan`] against the server: starts or
//! reaches it, runs the subcommand under `--timeout` (Ctrl-C, SIGTERM and
//! SIGHUP end it there: `signals.rs`), prints, and closes the session
//! within a bound; after a timeout or a signal the server is told of the
//! calls abandoned before the session ends. One file per
//! subcommand family does the asking; what is printed is rendered in
//! `render/`. Meanwhile the server's log messages are printed on stderr and
//! its elicitation requests answered (`--on-elicitation`). It knows nothing
//! of clap: every usage check was made in `plan/`.

mod account;
mod capabilities;
mod connect;
mod deadline;
mod kept;
mod logs;
mod output;
mod prompts;
mod resources;
mod save;
pub mod serve;
mod server;
mod signals;
mod task;
mod tools;

use std::io::IsTerminal;
use std::time::Duration;

use golem_mcp::{Client, ClientConfig, LogLevel, ServerStderr};

use crate::failure::{Exit, Failure, describe};
use crate::feedback::Feedback;
use crate::plan::features::FeatureAction;
use crate::plan::{Action, Plan};
use connect::{Carrier, connect};
use deadline::{alongside, timeout_message, within};
use golem_elicit::Elicitor;
use logs::{StderrRelay, drain_logs, relay_logs, set_log_level};
use signals::{Signal, Signals};
use task::{TaskSlot, cancel_abandoned};

/// How long ending the command may take once its work is over, at most:
/// cancelling a task `call --task` left running, announcing the calls a
/// signal or `--timeout` abandoned (`notifications/cancelled`) and ending
/// the session (HTTP `DELETE`, a stdio server's exit). `--timeout` bounds
/// the whole command, so after a normal answer closing gets only what is
/// left of it. Past that the server's process group is killed (when the
/// runtime drops the transport's shutdown task).
const CLOSE_LIMIT: Duration = Duration::from_secs(2);

/// How long `-v` waits, once the server is gone, for its last stderr lines
/// to be printed: they are read to the end of its stderr, which comes with
/// the end of its process group, at once.
const STDERR_LIMIT: Duration = Duration::from_millis(500);

/// How the work ended early, when it did.
enum Cut {
    /// `--timeout` ran out.
    Timeout,
    /// A signal came.
    Signal(Signal),
}

/// Runs `plan` and returns the exit status; failures are reported on stderr.
pub async fn execute(plan: Plan) -> Exit {
    // Before anything starts: a signal at any moment ends the command the
    // same way.
    let mut signals = Signals::listen();
    if let Some(exit) = account::login_or_logout(&plan).await {
        return exit;
    }
    let json = plan.json;
    let mut feedback = Feedback::new(std::io::stderr().is_terminal() && !plan.verbose);
    let console = feedback.console();
    plan.console.fill(console.clone());
    let mut config = ClientConfig::default().with_elicitation(Elicitor::new(
        plan.elicitation,
        std::sync::Arc::new(console.clone()),
        &plan.server_name,
    ));
    if let Some(roots) = plan.roots.clone() {
        config = config.with_roots(roots);
    }
    if let Some(version) = plan.protocol.clone() {
        config = config.with_protocol(version);
    }
    let as_task = matches!(plan.action, Action::Call { task: true, .. });
    config = task::configure(config, as_task);
    let kept = kept::KeptTools::for_target(&plan.target);
    let (client, server_stderr, carrier) = match connect(plan.target, config, plan.verbose) {
        Ok(connected) => connected,
        Err(failure) => {
            feedback.finish();
            return failure.report(json);
        }
    };
    // Subscribed before anything is sent: the first log message may come
    // with the handshake.
    let mut notifications = client.passive_notifications();
    // `-v` (the only way lines are handed over): the server's stderr lines,
    // those it wrote while starting included.
    let stderr_relay = server_stderr
        .as_ref()
        .and_then(ServerStderr::lines)
        .map(|lines| StderrRelay::start(lines, &console));
    let started = tokio::time::Instant::now();
    let task_slot = TaskSlot::default();
    let outcome = {
        let job = work(
            (&client, &carrier),
            &plan.action,
            (json, plan.quiet),
            plan.log_level,
            (&task_slot, kept.as_ref()),
            &mut feedback,
        );
        let relay = relay_logs(&mut notifications, &console, plan.quiet);
        let bounded = within(started + plan.timeout, &console, alongside(job, relay));
        // A signal ends the command here rather than killing it: the
        // spinner is cleared, the user is told what was cut short, and the
        // server is told too (below).
        tokio::select! {
            outcome = bounded => outcome.map_err(|()| Cut::Timeout),
            signal = signals.recv() => Err(Cut::Signal(signal)),
        }
        // The work is dropped here: a call still in flight is abandoned,
        // and its cancellation queued for the server.
    };
    // What arrived before the answer is printed before the session ends.
    drain_logs(&mut notifications, &console, plan.quiet).await;
    feedback.finish();
    let deadline = started + plan.timeout + console.paused_for();
    let exit = match outcome {
        Ok(Ok(exit)) => exit,
        // A server process that exited has no session to end; dropping the
        // client reaps it and kills what is left of its process group. Its
        // last stderr lines (why it exited, often) come before the message.
        Ok(Err(failure)) if failure.server_exited => {
            last_stderr_lines(stderr_relay).await;
            return failure.report(json);
        }
        Ok(Err(failure)) => failure.report(json),
        Err(cut) => {
            let failure = match cut {
                Cut::Timeout => Failure::new(
                    Exit::Timeout,
                    timeout_message(
                        plan.timeout,
                        feedback.current_stage(),
                        // The handshake's request left unanswered, if
                        // the handshake did not finish.
                        match client.server() {
                            Some(_) => None,
                            None => Some(client.handshake_waiting_on().unwrap_or("initialize")),
                        },
                        server_stderr.as_ref(),
                    ),
                ),
                Cut::Signal(signal) => Failure::new(
                    signal.exit(),
                    format!("{} while {}", signal.word(), feedback.current_stage()),
                ),
            };
            let exit = failure.report(json);
            // The server is told what was abandoned and the session ends,
            // within a bound of its own: the deadline is gone.
            let end_by = tokio::time::Instant::now() + CLOSE_LIMIT;
            tokio::select! {
                () = async {
                    tell_the_server(&client, &task_slot, end_by).await;
                    last_stderr_lines(stderr_relay).await;
                } => {}
                // A second signal: the user will not wait.
                _ = signals.recv() => {}
            }
            return exit;
        }
    };
    let end_by = deadline.min(tokio::time::Instant::now() + CLOSE_LIMIT);
    close_by(&client, end_by).await;
    last_stderr_lines(stderr_relay).await;
    exit
}

/// With `-v`, once the server is gone: its stderr lines not printed yet,
/// within [`STDERR_LIMIT`].
async fn last_stderr_lines(relay: Option<StderrRelay>) {
    if let Some(relay) = relay {
        relay.finish(STDERR_LIMIT).await;
    }
}

/// After a timeout or a signal: the task `call --task` left running is
/// cancelled on the server, the calls abandoned are announced and the
/// session ended, all by `end_by`.
async fn tell_the_server(client: &Client, task_slot: &TaskSlot, end_by: tokio::time::Instant) {
    if let Some(task_id) = task_slot.take() {
        let limit = end_by.saturating_duration_since(tokio::time::Instant::now());
        cancel_abandoned(client, &task_id, limit).await;
    }
    close_by(client, end_by).await;
}

/// Ends the session by `end_by`: first the cancellations of the calls
/// abandoned are sent, then the session ends (`Client::close`).
async fn close_by(client: &Client, end_by: tokio::time::Instant) {
    match tokio::time::timeout_at(end_by, client.close()).await {
        Ok(Ok(())) => {}
        Ok(Err(error)) => tracing::debug!(error = %describe(&error), "golem-mcp: closing failed"),
        Err(_) => {
            tracing::debug!("golem-mcp: the session did not end in time; the server is killed")
        }
    }
}

/// Initializes the session, sets `--log-level`, and runs the subcommand.
async fn work(
    (client, carrier): (&Client, &Carrier),
    action: &Action,
    (json, quiet): (bool, bool),
    log_level: Option<LogLevel>,
    (task_slot, kept): (&TaskSlot, Option<&kept::KeptTools>),
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
        Action::Info { pinned } => server::info(server, (pinned, carrier), json, feedback),
        Action::List { long } => tools::list(client, *long, json, kept, feedback).await,
        Action::Call {
            tool,
            arguments,
            pairs,
            task,
            output,
        } => {
            let sink = tools::ResultSink {
                json,
                save_to: output.as_deref(),
            };
            let arguments = (arguments.as_ref(), pairs.as_slice());
            match task {
                false => tools::call(client, tool, arguments, sink, kept, feedback).await,
                true => {
                    task::call(client, tool, arguments, (sink, quiet), task_slot, feedback).await
                }
            }
        }
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
