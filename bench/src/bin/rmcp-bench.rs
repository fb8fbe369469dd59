//! `rmcp-bench`: the same benchmark client on rmcp, the official Rust SDK,
//! used the way its documentation shows: `().serve(transport)`, then the
//! running service's `list_all_tools` and `call_tool`, then `cancel`.
//!
//! ```text
//! rmcp-bench --calls N --bytes B (--url URL | -- SERVER_CMD [ARGS...])
//! ```

use std::process::ExitCode;
use std::time::Instant;

use golem_bench::{Args, Report, Stopwatch, Target};
use rmcp::model::{CallToolRequestParams, ContentBlock, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};

const PROGRAM: &str = "rmcp-bench";

fn main() -> ExitCode {
    let args = match Args::from_env() {
        Ok(args) => args,
        Err(problem) => return golem_bench::usage_error(PROGRAM, &problem),
    };
    let result = golem_bench::runtime().and_then(|runtime| runtime.block_on(run(&args)));
    golem_bench::finish(PROGRAM, &args, result)
}

async fn run(args: &Args) -> Result<Report, String> {
    // rmcp takes arguments as a parsed JSON object: parse the payload once
    // and clone it per call (cheaper than the parse an agent holding the
    // model's raw arguments would need per call).
    let arguments: JsonObject = serde_json::from_str(&golem_bench::arguments_json(args.bytes))
        .map_err(|error| format!("the payload is not a JSON object: {error}"))?;

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
    if !tools.iter().any(|tool| tool.name == golem_bench::TOOL) {
        return Err(format!("the server offers no {:?} tool", golem_bench::TOOL));
    }
    watch.connected();

    for call in 0..args.calls {
        let started = Instant::now();
        let result = service
            .call_tool(
                CallToolRequestParams::new(golem_bench::TOOL).with_arguments(arguments.clone()),
            )
            .await
            .map_err(|error| format!("call {call}: {error}"))?;
        watch.call(started);
        if result.is_error == Some(true) {
            return Err(format!(
                "call {call}: the tool failed: {:?}",
                result.content
            ));
        }
        let length = result
            .content
            .iter()
            .filter_map(ContentBlock::as_text)
            .map(|text| text.text.len())
            .sum();
        golem_bench::check_length(call, length, args.bytes)?;
    }
    watch.calls_done();

    // Closes the transport: for a child process, stdin is closed and the
    // server is waited for (then SIGTERM, then SIGKILL).
    service
        .cancel()
        .await
        .map_err(|error| format!("close: {error}"))?;
    Ok(watch.finish("rmcp", args))
}
