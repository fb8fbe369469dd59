//! `golem-bench`: the benchmark client on golem-mcp.
//!
//! ```text
//! golem-bench --calls N --bytes B [--concurrency C] [--sleep-ms M] [--clients K] [--peak-rss]
//!             [--protocol VERSION] (--url URL | -- SERVER_CMD [ARGS...])
//! ```
//!
//! See the `golem_bench` library for the interface every client shares.
//! Only the client's public API is used (`Client::new`, `initialize`,
//! `list_tools`, `call_tool`, `close`, and `Clone` to share one client
//! between the C tasks), so the program measures whatever client is built.
//! With `--clients K`, K clients connect together and task T calls through
//! client T mod K.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use golem_bench::{Args, Call, Report, Stopwatch, Target};
use golem_mcp::{
    Client, ClientConfig, Content, HttpConfig, HttpTransport, StdioConfig, StdioTransport,
};
use serde_json::value::RawValue;

const PROGRAM: &str = "golem-bench";

fn main() -> ExitCode {
    let args = match Args::from_env() {
        Ok(args) => args,
        Err(problem) => return golem_bench::usage_error(PROGRAM, &problem),
    };
    // The client's spans and metrics exported as the commands export them,
    // when the OTEL_* variables say where (bench/cpu.py's "golem +OTLP");
    // without them nothing is installed: no subscriber, as in an
    // application that does not trace.
    let telemetry = golem_otel::Telemetry::install(PROGRAM, None);
    let result = golem_bench::runtime().and_then(|runtime| runtime.block_on(run(&args)));
    let exit = golem_bench::finish(PROGRAM, &args, result);
    telemetry.shutdown();
    exit
}

async fn run(args: &Args) -> Result<Report, String> {
    // Built before the clock starts, as an agent holds the model's raw
    // arguments: the client sends them verbatim.
    let tasks = args.plan(|json| {
        RawValue::from_string(json)
            .map(Arc::from)
            .map_err(|error| format!("the payload is not JSON: {error}"))
    })?;

    // `--protocol` pins the revision (both eras are measured that way);
    // without it the client probes, as applications' clients do.
    let config = match &args.protocol {
        Some(version) => ClientConfig::default().with_protocol(version.clone()),
        None => ClientConfig::default(),
    };
    // `--clients K`: K clients connect at once, each to its own server. The
    // futures are made (their targets copied) before the clock starts.
    let connects = (0..args.clients)
        .map(|index| {
            let (target, config) = (args.target.clone(), config.clone());
            let (tool, count) = (args.tool(), args.clients);
            async move {
                connect(target, config, tool)
                    .await
                    .map_err(|error| golem_bench::client_error(index, count, error))
            }
        })
        .collect();
    let mut watch = Stopwatch::start(args);
    let clients = golem_bench::all_at_once(connects).await?;
    watch.connected();

    let tasks = tasks
        .into_iter()
        .enumerate()
        .map(|(task, calls)| make_calls(clients[task % clients.len()].clone(), args.tool(), calls))
        .collect();
    watch.record(golem_bench::run_tasks(tasks).await?);
    watch.calls_done();

    let count = clients.len();
    let closes = clients
        .into_iter()
        .enumerate()
        .map(|(index, client)| async move {
            client
                .close()
                .await
                .map_err(|error| golem_bench::client_error(index, count, error))
        })
        .collect();
    golem_bench::all_at_once(closes).await?;
    Ok(watch.finish("golem", args))
}

/// Spawns or reaches the server, then `initialize` and `tools/list`,
/// checking that `tool` is offered.
async fn connect(target: Target, config: ClientConfig, tool: &str) -> Result<Client, String> {
    let client = match target {
        Target::Stdio { command, args } => {
            let transport = StdioTransport::spawn(StdioConfig {
                args,
                ..StdioConfig::new(command)
            })
            .map_err(|error| error.to_string())?;
            Client::with_config(transport, config)
        }
        Target::Http { url } => {
            let transport =
                HttpTransport::new(HttpConfig::new(url)).map_err(|error| error.to_string())?;
            Client::with_config(transport, config)
        }
    };
    client
        .initialize()
        .await
        .map_err(|error| error.to_string())?;
    let tools = client
        .list_tools()
        .await
        .map_err(|error| error.to_string())?;
    if !tools.iter().any(|offered| offered.name == tool) {
        return Err(format!("the server offers no {tool:?} tool"));
    }
    Ok(client)
}

/// One task's calls, one after the other, on its clone of the client.
async fn make_calls(
    client: Client,
    tool: &'static str,
    calls: Vec<Call<Arc<RawValue>>>,
) -> Result<Vec<Duration>, String> {
    let mut latencies = Vec::with_capacity(calls.len());
    for call in &calls {
        let started = Instant::now();
        let result = client
            .call_tool(tool, &*call.arguments)
            .await
            .map_err(|error| format!("{call}: {error}"))?;
        latencies.push(started.elapsed());
        if result.is_error {
            return Err(format!("{call}: the tool failed: {}", result.text()));
        }
        call.check(texts(&result.content))?;
    }
    Ok(latencies)
}

/// The text of each content item, read in place rather than through
/// `text()`, which would copy it: every client checks its own result the
/// same way, without rendering.
fn texts(content: &[Content]) -> impl Iterator<Item = &str> + Clone {
    content.iter().filter_map(|item| match item {
        Content::Text { text } => Some(text.as_str()),
        _ => None,
    })
}
