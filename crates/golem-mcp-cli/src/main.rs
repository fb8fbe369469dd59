//! `golem-mcp`: inspect and call any Model Context Protocol server from a
//! shell.
//!
//! ```text
//! golem-mcp info                    [SERVER]
//! golem-mcp list [--long]           [SERVER]
//! golem-mcp call TOOL [ARGS_JSON] [--arg NAME=VALUE]... [--output DIR] [SERVER]
//! golem-mcp resources [--templates] [SERVER]
//! golem-mcp read URI [--output FILE | --raw] [SERVER]
//! golem-mcp prompts                 [SERVER]
//! golem-mcp prompt NAME [ARGS_JSON] [SERVER]
//! golem-mcp complete (--prompt NAME | --template URI_TEMPLATE) ARGUMENT VALUE [--context JSON] [SERVER]
//! golem-mcp ping                    [SERVER]
//! golem-mcp login | logout          --url URL
//! golem-mcp bridge [--serve stdio|URL] [--tool P]... [--exclude-tool P]... [SERVER]
//! golem-mcp record --out FILE [--serve stdio|URL] [SERVER]
//! golem-mcp replay FILE [--serve stdio|URL]
//! ```
//!
//! `SERVER` is `--url URL [--sse] [-H 'Name: value']...`, `[-e KEY=VALUE]...
//! [--cwd DIR] -- COMMAND [ARGS...]`, or `--config FILE --server NAME`
//! (`--sse`: the URL is an HTTP+SSE event stream; without it, such a
//! server is found by the streamable transport's fallback).
//! Exit status: 0 success, 1 the tool answered `isError`, 2 usage error,
//! 3 JSON-RPC error, 4 transport, process or HTTP failure, 5 timeout, 130 Ctrl-C,
//! 143 SIGTERM, 129 SIGHUP (ADRs 0005 and 0022; after a timeout or a signal the
//! server hears of the abandoned call and the session ends, within 2 s). With
//! `--json` a failure is also one JSON object on stdout. It answers the server's elicitation requests
//! (`--on-elicitation`) and `roots/list` (`--root`), prints the server's log
//! messages on stderr, and declares no sampling capability. A tool's
//! result, a resource's text and a prompt's messages are written exact to a
//! pipe or a file and escaped on a terminal (`run/output.rs`). HTTP servers
//! that require OAuth are authorized when they ask (`plan/oauth.rs`).
//! `golem-mcp --help` says the rest.
//!
//! The crate is a pipeline of stages, a folder each, every one knowing only
//! those before it: `args/` (what clap parses, types only), `plan/`
//! (`Plan::from_cli` and every usage check, before anything starts),
//! `run/` (a plan carried out against the server) and `render/` (pure
//! functions from answers to the text printed, which `run/` calls). Beside
//! them, files that import no stage (`feedback.rs` borrows only
//! `render/status.rs`'s task line): `failure.rs` (exit statuses),
//! `feedback.rs` (spinner and console; the elicitation handler, from the
//! `golem-elicit` crate, writes through it)
//! and `trace.rs` (`-v`). This file only ties the stages together.

mod args;
mod failure;
mod feedback;
mod plan;
mod render;
mod run;
mod trace;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::args::Cli;
use crate::failure::{Exit, Failure};
use crate::plan::Plan;

fn main() -> ExitCode {
    // Usage errors exit with 2, --help and --version with 0.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            if let Some(tip) = plan::arguments::missing_separator_tip(&error, std::env::args()) {
                eprintln!("\n{tip}");
            }
            // clap has printed the error; `--json` wants it on stdout too.
            if error.use_stderr() && plan::arguments::asks_for_json(std::env::args()) {
                Failure::from_clap(&error).print_json();
            }
            return ExitCode::from(error.exit_code().clamp(0, 255) as u8);
        }
    };
    if let args::Command::Serve(command) = cli.command {
        return serve(command, cli.options);
    }
    let json = cli.options.json;
    let stdin_is_terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
    let plan = match Plan::from_cli(cli, std::io::stdin().lock(), stdin_is_terminal) {
        Ok(plan) => plan,
        Err(failure) => return failure.report(json).into(),
    };
    let local_logs = plan.verbose.then(library_logs);
    let telemetry = golem_otel::Telemetry::install("golem-mcp", local_logs);
    let runtime = match runtime(tokio::runtime::Builder::new_current_thread()) {
        Ok(runtime) => runtime,
        Err(failure) => return failure.report(json).into(),
    };
    let exit = runtime.block_on(run::execute(plan));
    // A server whose session did not end in time has a shutdown task left;
    // dropping it here kills the server's whole process group.
    runtime.shutdown_timeout(Duration::from_millis(100));
    // Spans and metrics still queued go out, within a bound.
    telemetry.shutdown();
    exit.into()
}

/// `bridge`, `record` and `replay`: served until the host goes or a
/// signal comes.
fn serve(command: args::serve::ServeCommand, options: args::Options) -> ExitCode {
    let plan = match plan::serve::ServePlan::from_cli(command, options) {
        Ok(plan) => plan,
        Err(failure) => return failure.report(false).into(),
    };
    let local_logs = plan.verbose.then(library_logs);
    let telemetry = golem_otel::Telemetry::install("golem-mcp", local_logs);
    // Many hosts and servers at once: a thread per core.
    let runtime = match runtime(tokio::runtime::Builder::new_multi_thread()) {
        Ok(runtime) => runtime,
        Err(failure) => return failure.report(false).into(),
    };
    let exit = runtime.block_on(run::serve::execute(plan));
    // Servers whose sessions did not end in time are killed with the
    // runtime's tasks.
    runtime.shutdown_timeout(Duration::from_millis(500));
    telemetry.shutdown();
    exit.into()
}

/// The runtime `builder` makes, with every driver on.
fn runtime(mut builder: tokio::runtime::Builder) -> Result<tokio::runtime::Runtime, Failure> {
    builder.enable_all().build().map_err(|error| {
        Failure::new(
            Exit::Transport,
            format!("cannot start the async runtime: {error}"),
        )
    })
}

/// `-v`: the client library's own log lines (spawns, skipped stdout lines,
/// refused server requests, ...) on stderr, next to the protocol trace and
/// in its style: `golem-mcp: · spawned stdio server (command: npx, pid: 42)`.
/// Not its metric events, which are for an exporter.
fn library_logs() -> golem_otel::LocalLayer {
    use tracing_subscriber::Layer as _;
    let only_ours = tracing_subscriber::filter::Targets::new()
        .with_target("golem_mcp", tracing::Level::DEBUG)
        .with_target(
            "golem_mcp::metrics",
            tracing::level_filters::LevelFilter::OFF,
        );
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .event_format(trace::LogLine)
        .with_filter(only_ours)
        .boxed()
}
