//! `golem-bench`: the benchmark client on golem-mcp.
//!
//! ```text
//! golem-bench --calls N --bytes B (--url URL | -- SERVER_CMD [ARGS...])
//! ```
//!
//! See the `golem_bench` library for the interface every client shares.

use std::process::ExitCode;
use std::time::Instant;

use golem_bench::{Args, Report, Stopwatch, Target};
use golem_mcp::{Client, Content, HttpConfig, HttpTransport, StdioConfig, StdioTransport};
use serde_json::value::RawValue;

const PROGRAM: &str = "golem-bench";

fn main() -> ExitCode {
    let args = match Args::from_env() {
        Ok(args) => args,
        Err(problem) => return golem_bench::usage_error(PROGRAM, &problem),
    };
    let result = golem_bench::runtime().and_then(|runtime| runtime.block_on(run(&args)));
    golem_bench::finish(PROGRAM, &args, result)
}

async fn run(args: &Args) -> Result<Report, String> {
    // Built once, as an agent holds the model's raw arguments: the client
    // sends them verbatim.
    let arguments = RawValue::from_string(golem_bench::arguments_json(args.bytes))
        .map_err(|error| format!("the payload is not JSON: {error}"))?;

    let mut watch = Stopwatch::start(args.calls);
    let client = match &args.target {
        Target::Stdio { command, args } => {
            let transport = StdioTransport::spawn(StdioConfig {
                args: args.clone(),
                ..StdioConfig::new(command)
            })
            .map_err(|error| error.to_string())?;
            Client::new(transport)
        }
        Target::Http { url } => {
            let transport =
                HttpTransport::new(HttpConfig::new(url)).map_err(|error| error.to_string())?;
            Client::new(transport)
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
    if !tools.iter().any(|tool| tool.name == golem_bench::TOOL) {
        return Err(format!("the server offers no {:?} tool", golem_bench::TOOL));
    }
    watch.connected();

    for call in 0..args.calls {
        let started = Instant::now();
        let result = client
            .call_tool(golem_bench::TOOL, &arguments)
            .await
            .map_err(|error| format!("call {call}: {error}"))?;
        watch.call(started);
        if result.is_error {
            return Err(format!("call {call}: the tool failed: {}", result.text()));
        }
        golem_bench::check_length(call, text_length(&result.content), args.bytes)?;
    }
    watch.calls_done();

    client.close().await.map_err(|error| error.to_string())?;
    Ok(watch.finish("golem", args))
}

/// The bytes of text in a result, read from the content items rather than
/// `text()`, which would copy them: every client checks its own result the
/// same way, without rendering.
fn text_length(content: &[Content]) -> usize {
    content
        .iter()
        .map(|item| match item {
            Content::Text { text } => text.len(),
            _ => 0,
        })
        .sum()
}
