//! `golem`: run an agent on a real model, with the tools of MCP servers,
//! from a shell.
//!
//! ```text
//! golem run  --model PROVIDER:MODEL [OPTIONS] PROMPT
//! golem chat --model PROVIDER:MODEL [OPTIONS]
//! ```
//!
//! `PROVIDER` is `openai` (the Chat Completions API, or any compatible
//! server with `--base-url`) or `anthropic`. The tools are those of the MCP
//! servers of an `mcpServers` file (`--config FILE [--server NAME]...`),
//! started once and closed at the end, also on Ctrl-C. The answer streams
//! to stdout; each tool call, and the usage totals at the end, go to
//! stderr. Exit status: 0 success, 1 the run ended without an answer,
//! 2 usage error, 3 a server answered with an error, 4 a server could not
//! be reached, 5 a timeout, 6 a limit of the command reached, 130 Ctrl-C,
//! 143 SIGTERM, 129 SIGHUP (ADR 0010). `golem run --help` says
//! the rest.

mod approve;
mod ask;
mod cli;
mod exit;
mod image;
mod keep;
mod outputs;
mod requests;
mod schema;
mod servers;
mod session;
mod show;
mod tool_search;

use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use crate::cli::{Cli, Plan};
use crate::exit::{Exit, Failure};

fn main() -> ExitCode {
    // Usage errors exit with 2, --help and --version with 0.
    let cli = Cli::parse();
    let plan = match Plan::from_cli(
        cli,
        |name| std::env::var(name).ok(),
        std::io::stdin().lock(),
    ) {
        Ok(plan) => plan,
        Err(failure) => return failure.report().into(),
    };
    // Spans and metrics go out over OTLP when the OTEL_* variables ask.
    let telemetry = golem_otel::Telemetry::install("golem", None);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            return Failure::new(
                Exit::Transport,
                format!("cannot start the async runtime: {error}"),
            )
            .report()
            .into();
        }
    };
    let exit = runtime.block_on(session::execute(plan));
    // A server whose session did not end in time has a shutdown task left;
    // dropping it here kills the server's whole process group. A pending
    // read of stdin is left to the process's exit.
    runtime.shutdown_timeout(Duration::from_millis(100));
    // What is still queued goes out, within a bound (also after a signal:
    // the session ends on it and returns here).
    telemetry.shutdown();
    exit.into()
}
