//! `rmcp-bench`: the same benchmark client on rmcp, the official Rust SDK,
//! used the way its documentation shows: `().serve(transport)`, then the
//! running service's `list_all_tools` and `call_tool`, then `cancel`.
//!
//! ```text
//! rmcp-bench --calls N --bytes B [--concurrency C] [--sleep-ms M] (--url URL | -- SERVER_CMD [ARGS...])
//! ```
//!
//! With C tasks, each calls through its own clone of the service's `Peer`,
//! which is rmcp's way to share one connection.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use golem_bench::{Args, Call, Report, Stopwatch, Target};
use rmcp::model::{CallToolRequestParams, ContentBlock, JsonObject};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};

const PROGRAM: &str = "rmcp-bench";

fn main() -> ExitCode {
    let args = match Args::from_env() {
        Ok(args) => args,
        Err(problem) => return golem_bench::usage_error(PROGRAM, &problem),
    };
    if args.protocol.is_some() {
        return golem_bench::usage_error(
            PROGRAM,
            "--protocol is golem-bench's: rmcp speaks the revision it chooses itself",
        );
    }
    let result = golem_bench::runtime().and_then(|runtime| runtime.block_on(run(&args)));
    golem_bench::finish(PROGRAM, &args, result)
}

async fn run(args: &Args) -> Result<Report, String> {
    // rmcp takes arguments as a parsed JSON object: parse each payload
    // before the clock starts and clone it per call (cheaper than the parse
    // an agent holding the model's raw arguments would need per call).
    let tasks = args.plan(|json| {
        serde_json::from_str::<JsonObject>(&json)
            .map(Arc::new)
            .map_err(|error| format!("the payload is not a JSON object: {error}"))
    })?;

    let mut watch = Stopwatch::start(args.calls);
    let service: RunningService<RoleClient, ()> = match &args.target {
        Target::Stdio { command, args } => {
            let command = tokio::process::Command::new(command).configure(|command| {
                command.args(args);
            });
            let transport = TokioChildProcess::new(command)
                .map_err(|error| format!("cannot spawn the server: {error}"))?;
            ().serve(transport)
                .await
                .map_err(|error| format!("initialize: {error}"))?
        }
        Target::Http { url } => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            ().serve(transport)
                .await
                .map_err(|error| format!("initialize: {error}"))?
        }
    };
    let tools = service
        .list_all_tools()
        .await
        .map_err(|error| format!("tools/list: {error}"))?;
    if !tools.iter().any(|tool| tool.name == args.tool()) {
        return Err(format!("the server offers no {:?} tool", args.tool()));
    }
    watch.connected();

    let tasks = tasks
        .into_iter()
        .map(|calls| make_calls(service.peer().clone(), args.tool(), calls))
        .collect();
    watch.record(golem_bench::run_tasks(tasks).await?);
    watch.calls_done();

    // Closes the transport: for a child process, stdin is closed and the
    // server is waited for (then SIGTERM, then SIGKILL).
    service
        .cancel()
        .await
        .map_err(|error| format!("close: {error}"))?;
    Ok(watch.finish("rmcp", args))
}

/// One task's calls, one after the other, through its clone of the peer.
async fn make_calls(
    peer: Peer<RoleClient>,
    tool: &'static str,
    calls: Vec<Call<Arc<JsonObject>>>,
) -> Result<Vec<Duration>, String> {
    let mut latencies = Vec::with_capacity(calls.len());
    for call in &calls {
        let started = Instant::now();
        let result = peer
            .call_tool(CallToolRequestParams::new(tool).with_arguments((*call.arguments).clone()))
            .await
            .map_err(|error| format!("{call}: {error}"))?;
        latencies.push(started.elapsed());
        if result.is_error == Some(true) {
            return Err(format!("{call}: the tool failed: {:?}", result.content));
        }
        call.check(
            result
                .content
                .iter()
                .filter_map(ContentBlock::as_text)
                .map(|text| text.text.as_str()),
        )?;
    }
    Ok(latencies)
}
