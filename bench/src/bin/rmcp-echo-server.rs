//! `rmcp-echo-server`: the one fast server every client is measured
//! against, written with rmcp, the official Rust SDK.
//!
//! ```text
//! rmcp-echo-server                     # stdio
//! rmcp-echo-server --http PORT         # streamable HTTP at http://127.0.0.1:PORT/mcp
//! rmcp-echo-server --http PORT --json  # the same, answering with JSON bodies
//! ```
//!
//! It offers two tools: `echo`, which takes `{"text": string}` and returns
//! the text as one text content item, and `sleep`, which takes
//! `{"ms": integer, "text": string}` (`text` optional), waits `ms`
//! milliseconds on a timer and returns `text` (or `slept M ms`). It runs on
//! one thread and still answers concurrent requests concurrently: rmcp
//! handles each request in a task of its own (over stdio and HTTP alike),
//! and neither tool blocks the thread. Over stdio it reads
//! and writes its pipes through the runtime's reactor (see [`pipes`]). Over
//! HTTP it listens on 127.0.0.1 only, with `TCP_NODELAY` on every
//! connection, in rmcp's default mode (sessions, answers as event streams),
//! and prints `listening on URL` once it accepts connections (`--http 0`
//! picks a free port). With `--json` it serves without sessions and answers
//! each request with an `application/json` body instead (rmcp's
//! `json_response`, which needs its stateless mode), the other way a
//! server may answer.

use std::fs::File;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::serve::ListenerExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::net::unix::pipe;

const PROGRAM: &str = "rmcp-echo-server";

#[derive(Clone)]
struct Echo {
    tools: Vec<Tool>,
}

impl Echo {
    fn new() -> Echo {
        let echo = json!({
            "type": "object",
            "properties": { "text": { "type": "string" } },
            "required": ["text"],
        });
        let sleep = json!({
            "type": "object",
            "properties": {
                "ms": { "type": "integer", "minimum": 0 },
                "text": { "type": "string" },
            },
            "required": ["ms"],
        });
        Echo {
            tools: vec![
                Tool::new(golem_bench::TOOL, "Returns its text.", schema(echo)),
                Tool::new(
                    golem_bench::SLEEP_TOOL,
                    "Waits `ms` milliseconds, then returns its text.",
                    schema(sleep),
                ),
            ],
        }
    }
}

fn schema(value: Value) -> Arc<JsonObject> {
    Arc::new(match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    })
}

/// The sleep tool: waits on the runtime's timer, so other requests go on
/// meanwhile.
async fn sleep(arguments: Option<JsonObject>) -> Result<CallToolResponse, ErrorData> {
    let mut arguments = arguments.unwrap_or_default();
    let ms = arguments.get("ms").and_then(Value::as_u64);
    let (ms, text) = match (ms, arguments.remove("text")) {
        (Some(ms), Some(Value::String(text))) => (ms, text),
        (Some(ms), None) => (ms, format!("slept {ms} ms")),
        _ => {
            return Err(ErrorData::invalid_params(
                r#"sleep wants {"ms": non-negative integer, "text"?: string}"#,
                None,
            ));
        }
    };
    tokio::time::sleep(Duration::from_millis(ms)).await;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(PROGRAM, env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == golem_bench::SLEEP_TOOL {
            return sleep(request.arguments).await;
        }
        if request.name != golem_bench::TOOL {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {:?}", request.name),
                None,
            ));
        }
        // Moved out of the arguments, not copied: the server should cost as
        // little as rmcp allows.
        match request
            .arguments
            .and_then(|mut arguments| arguments.remove("text"))
        {
            Some(Value::String(text)) => {
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
            }
            _ => Err(ErrorData::invalid_params(
                r#"echo wants {"text": string}"#,
                None,
            )),
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (port, json) = match (
        args.next().as_deref(),
        args.next(),
        args.next(),
        args.next(),
    ) {
        (None, _, _, _) => (None, false),
        (Some("--http"), Some(port), json, None) => {
            let json = match json.as_deref() {
                None => false,
                Some("--json") => true,
                Some(other) => return usage(&format!("unexpected argument {other:?}")),
            };
            match port.parse::<u16>() {
                Ok(port) => (Some(port), json),
                Err(_) => return usage(&format!("--http wants a port number, not {port:?}")),
            }
        }
        _ => return usage("unexpected arguments"),
    };
    // One thread: a second worker only adds cross-thread wake-ups, and the
    // tools do so little that one thread keeps up with concurrent callers
    // too (they are served concurrently all the same: see the module doc).
    // Measured faster for every client, over stdio and HTTP, than the
    // multi-threaded runtime (with sequential calls).
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("{PROGRAM}: cannot start the Tokio runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = match port {
        None => runtime.block_on(serve_stdio()),
        Some(port) => runtime.block_on(serve_http(port, json)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{PROGRAM}: {error}");
            ExitCode::FAILURE
        }
    }
}

fn usage(problem: &str) -> ExitCode {
    eprintln!("{PROGRAM}: {problem}\nusage: {PROGRAM} [--http PORT [--json]]");
    ExitCode::from(2)
}

/// Serves one client on stdin/stdout until it closes stdin.
async fn serve_stdio() -> Result<(), String> {
    let service = match pipes() {
        Some(pipes) => Echo::new().serve(pipes).await,
        None => Echo::new().serve(rmcp::transport::stdio()).await,
    }
    .map_err(|error| format!("initialize: {error}"))?;
    service
        .waiting()
        .await
        .map_err(|error| format!("serve: {error}"))?;
    Ok(())
}

/// Stdin and stdout as non-blocking pipes driven by the runtime's reactor,
/// when both are pipes (as when a client spawns this server). rmcp's
/// `stdio()` reads through Tokio's `Stdin`, which hands every read to the
/// blocking thread pool: a thread hop per 64 KiB pipe read, which made this
/// server, not the clients, the bottleneck with 1 MiB messages.
fn pipes() -> Option<(pipe::Receiver, pipe::Sender)> {
    let stdin = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let stdout = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
    let is_pipe = |fd: &OwnedFd| {
        fd.try_clone()
            .map(File::from)
            .and_then(|file| file.metadata())
            .is_ok_and(|metadata| metadata.file_type().is_fifo())
    };
    if !(is_pipe(&stdin) && is_pipe(&stdout)) {
        return None;
    }
    Some((
        pipe::Receiver::from_owned_fd(stdin).ok()?,
        pipe::Sender::from_owned_fd(stdout).ok()?,
    ))
}

/// Serves streamable HTTP on 127.0.0.1 until killed; with `json`, without
/// sessions and answering with JSON bodies.
async fn serve_http(port: u16, json: bool) -> Result<(), String> {
    let echo = Echo::new();
    let mut config = StreamableHttpServerConfig::default();
    if json {
        config = config
            .with_legacy_session_mode(false)
            .with_json_response(true);
    }
    let service = StreamableHttpService::new(
        move || Ok(echo.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|error| format!("cannot listen on 127.0.0.1:{port}: {error}"))?;
    let address = listener
        .local_addr()
        .map_err(|error| format!("no local address: {error}"))?;
    // Without TCP_NODELAY, a small answer written in two segments waits for
    // the client's delayed ACK (40 ms on Linux).
    let listener = listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            eprintln!("{PROGRAM}: cannot set TCP_NODELAY: {error}");
        }
    });
    println!("listening on http://{address}/mcp");
    axum::serve(listener, router)
        .await
        .map_err(|error| format!("serve: {error}"))
}
