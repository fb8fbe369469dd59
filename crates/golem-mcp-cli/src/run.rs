//! Running a checked command line: start or reach the server, ask it, print
//! the answer, end the session, all within `--timeout`.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use golem_mcp::{CallResult, Client, HttpTransport, StdioTransport};

use crate::cli::{Action, Plan, Target};
use crate::failure::{Exit, Failure, describe};
use crate::feedback::Feedback;
use crate::render;
use crate::trace::Traced;

/// How long ending the session may take after the command's work is done,
/// at most: `--timeout` bounds the whole command, so closing gets only what
/// is left of it. Past that the server's process group is killed (when the
/// runtime drops the transport's shutdown task).
const CLOSE_LIMIT: Duration = Duration::from_secs(2);
/// How many tool names an "unknown tool" message lists.
const NAMES_SHOWN: usize = 20;

/// Runs `plan` and returns the exit status; failures are reported on stderr.
pub async fn execute(plan: Plan) -> Exit {
    let mut feedback = Feedback::new(std::io::stderr().is_terminal() && !plan.verbose);
    let client = match connect(plan.target, plan.verbose) {
        Ok(client) => client,
        Err(failure) => {
            feedback.finish();
            return failure.report();
        }
    };
    let deadline = tokio::time::Instant::now() + plan.timeout;
    let outcome = tokio::time::timeout_at(
        deadline,
        work(&client, &plan.action, plan.json, &mut feedback),
    )
    .await;
    feedback.finish();
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

/// Starts the stdio server or prepares the HTTP transport. Nothing is sent
/// yet.
fn connect(target: Target, verbose: bool) -> Result<Client, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    Ok(match target {
        Target::Stdio(config) => {
            let transport = StdioTransport::spawn(config).map_err(mcp)?;
            if verbose {
                Client::new(Traced::new(transport))
            } else {
                Client::new(transport)
            }
        }
        Target::Http(config) => {
            let transport = HttpTransport::new(config).map_err(mcp)?;
            if verbose {
                Client::new(Traced::new(transport))
            } else {
                Client::new(transport)
            }
        }
    })
}

async fn work(
    client: &Client,
    action: &Action,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage("connecting to the server");
    let server = client.initialize().await.map_err(mcp)?;
    match action {
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
