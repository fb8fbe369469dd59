//! `rmcp-bench`: the same benchmark client on rmcp, the official Rust SDK,
//! used the way its documentation shows: `().serve(transport)`, then the
//! running service's `list_all_tools` and `call_tool`, then `cancel`.
//!
//! ```text
//! rmcp-bench --calls N --bytes B [--concurrency C] [--sleep-ms M] [--clients K] [--peak-rss]
//!            (--url URL | -- SERVER_CMD [ARGS...])
//! ```
//!
//! With C tasks, each calls through its own clone of the service's `Peer`,
//! which is rmcp's way to share one connection. With `--clients K`, K
//! services connect together and task T calls through service T mod K.

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

    // `--clients K`: K services connect at once, each to its own server.
    // The futures are made (their targets copied) before the clock starts.
    let connects = (0..args.clients)
        .map(|index| {
            let target = args.target.clone();
            let (tool, count) = (args.tool(), args.clients);
            async move {
                connect(target, tool)
                    .await
                    .map_err(|error| golem_bench::client_error(index, count, error))
            }
        })
        .collect();
    let mut watch = Stopwatch::start(args);
    let services = golem_bench::all_at_once(connects).await?;
    watch.connected();

    let tasks = tasks
        .into_iter()
        .enumerate()
        .map(|(task, calls)| {
            let peer = services[task % services.len()].peer().clone();
            make_calls(peer, args.tool(), calls)
        })
        .collect();
    watch.record(golem_bench::run_tasks(tasks).await?);
    watch.calls_done();

    // Closes each transport: for a child process, stdin is closed and the
    // server is waited for (then SIGTERM, then SIGKILL).
    let count = services.len();
    let closes =
        services
            .into_iter()
            .enumerate()
            .map(|(index, service)| async move {
                service.cancel().await.map(drop).map_err(|error| {
                    golem_bench::client_error(index, count, format!("close: {error}"))
                })
            })
            .collect();
    golem_bench::all_at_once(closes).await?;
    Ok(watch.finish("rmcp", args))
}

/// Spawns or reaches the server, runs rmcp's `initialize`, then
/// `tools/list`, checking that `tool` is offered.
async fn connect(target: Target, tool: &str) -> Result<RunningService<RoleClient, ()>, String> {
    let service: RunningService<RoleClient, ()> = match target {
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
            let transport = StreamableHttpClientTransport::from_uri(url);
            ().serve(transport)
                .await
                .map_err(|error| format!("initialize: {error}"))?
        }
    };
    let tools = service
        .list_all_tools()
        .await
        .map_err(|error| format!("tools/list: {error}"))?;
    if !tools.iter().any(|offered| offered.name == tool) {
        return Err(format!("the server offers no {tool:?} tool"));
    }
    Ok(service)
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
