//! The MCP client: handshake, tool listing and calling, close.

use std::collections::HashSet;
use std::fmt;
use std::sync::{Arc, OnceLock};

use serde_json::value::RawValue;
use tokio::sync::{Mutex, MutexGuard, watch};

use crate::connection::{Connection, Notification};
use crate::error::Error;
use crate::jsonrpc::RequestId;
use crate::protocol::{ClientInfo, InitializeParams, InitializeResult, ServerInfo};
use crate::tools::{
    CallMeta, CallResult, CallToolParams, ListToolsParams, Progress, ProgressParams, ToolInfo,
    ToolsPage,
};
use crate::transport::Transport;

/// The most `tools/list` pages followed before giving up: a bound for
/// servers whose cursors never repeat and never end.
const MAX_TOOL_PAGES: usize = 10_000;

/// How a [`Client`] is set up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientConfig {
    /// How the client introduces itself at `initialize`.
    pub client_info: ClientInfo,
}

/// A client for one MCP server, over any [`Transport`].
///
/// Cheap to clone (clones share the connection) and `Send + Sync`.
/// Operations are serialized: one request is in flight at a time, and
/// concurrent callers wait their turn in order. While a request waits, a
/// server `ping` is answered, any other server request is refused with
/// "method not found", notifications are dropped, and answers to other
/// requests are dropped.
///
/// # Cancel safety
///
/// Every async method may be dropped at any await point (a timeout, a
/// `select!`); the next operation on the same client then works as usual
/// (after a dropped [`close`](Client::close), the client is closed). A
/// message half-written when its future was dropped is completed before the
/// next one, a half-read message is kept, the abandoned request is announced
/// to the server with `notifications/cancelled` when the next operation
/// starts (or, best effort and bounded, at `close`), and its late answer is
/// dropped.
///
/// # Example
///
/// ```no_run
/// use golem_mcp::{Client, StdioConfig, StdioTransport};
///
/// # async fn run() -> Result<(), golem_mcp::Error> {
/// let transport = StdioTransport::spawn(StdioConfig {
///     args: vec!["-y".into(), "@modelcontextprotocol/server-everything".into()],
///     ..StdioConfig::new("npx")
/// })?;
/// let client = Client::new(transport);
/// let server = client.initialize().await?;
/// println!("connected to {} {}", server.name, server.version);
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// let arguments = serde_json::value::RawValue::from_string(r#"{"message":"hi"}"#.into()).expect("valid JSON");
/// let result = client.call_tool("echo", &arguments).await?;
/// println!("{}", result.text());
/// client.close().await?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    state: Mutex<State>,
    /// Raised by `close` before it waits for the connection, so that an
    /// operation waiting on the server gives way instead of making `close`
    /// queue behind it.
    closing: watch::Sender<bool>,
    server: OnceLock<ServerInfo>,
    config: ClientConfig,
}

struct State {
    connection: Connection,
    phase: Phase,
    /// The progress token of the next call that asks for progress.
    next_progress_token: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    New,
    /// `initialize` was sent but its caller went away before the answer:
    /// the next `initialize` resumes waiting for it instead of sending a
    /// second one.
    Initializing(RequestId),
    Ready,
    /// `close` started; if it was dropped half-way, the next `close` runs
    /// the transport's (restartable) close again.
    Closing,
    Closed,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field(
                "server",
                &self.inner.server.get().map(|server| &server.name),
            )
            .finish_non_exhaustive()
    }
}

/// Names an operation in error messages, e.g. `tools/call echo`, without
/// allocating unless an error is built.
#[derive(Clone, Copy)]
struct Operation<'a>(&'static str, Option<&'a str>);

impl fmt::Display for Operation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.1 {
            Some(target) => write!(f, "{} {target}", self.0),
            None => f.write_str(self.0),
        }
    }
}

impl Client {
    /// A client over `transport`, introducing itself as `golem-mcp`.
    /// Call [`initialize`](Client::initialize) before anything else.
    pub fn new(transport: impl Transport) -> Self {
        Client::with_config(transport, ClientConfig::default())
    }

    /// A client over `transport` with the given configuration.
    pub fn with_config(transport: impl Transport, config: ClientConfig) -> Self {
        let (closing, closing_watch) = watch::channel(false);
        Client {
            inner: Arc::new(Inner {
                closing,
                state: Mutex::new(State {
                    connection: Connection::new(Box::new(transport), closing_watch),
                    phase: Phase::New,
                    next_progress_token: 1,
                }),
                server: OnceLock::new(),
                config,
            }),
        }
    }

    /// Performs the MCP handshake: offers the newest protocol revision this
    /// client implements, accepts any revision it can speak (refusing others
    /// with [`Error::VersionMismatch`]), sends `notifications/initialized`,
    /// and records the server's identity, capabilities and instructions.
    ///
    /// Must succeed before any other operation. Calling it again once it has
    /// succeeded does nothing and returns the same server information.
    ///
    /// Cancel safe: if dropped while waiting for the server's answer, the
    /// next call waits for that same answer rather than sending a second
    /// `initialize` (which servers refuse).
    pub async fn initialize(&self) -> Result<&ServerInfo, Error> {
        let operation = Operation("initialize", None);
        let mut state = self.inner.state.lock().await;
        let id = match state.phase {
            Phase::Ready => return self.server_or_invalid(),
            Phase::Closing | Phase::Closed => return Err(closed(operation)),
            Phase::Initializing(id) => id,
            Phase::New => {
                let id = state.connection.allocate_id();
                state.phase = Phase::Initializing(id);
                let params = InitializeParams::new(&self.inner.config.client_info);
                if let Err(error) = state
                    .connection
                    .send_request(&operation, id, "initialize", &params)
                    .await
                {
                    state.phase = Phase::New;
                    return Err(error);
                }
                id
            }
        };
        let answer = state
            .connection
            .await_reply::<InitializeResult>(&operation, id, None)
            .await;
        let server = match answer.and_then(InitializeResult::accept) {
            Ok(server) => server,
            Err(error) => {
                // Only a dropped future resumes the handshake; after an
                // error a later call starts again from scratch (a dead
                // transport then fails it at once).
                state.phase = Phase::New;
                return Err(error);
            }
        };
        state
            .connection
            .protocol_version_negotiated(&server.protocol_version);
        // A client is initialized once; should a resumed handshake race a
        // value in, the first one stays.
        let _ = self.inner.server.set(server);
        // Ready before the notification is sent: if this future is dropped
        // during the send, the transport still delivers it before the next
        // message.
        state.phase = Phase::Ready;
        if let Err(error) = state
            .connection
            .notify(&operation, "notifications/initialized", None::<&()>)
            .await
        {
            state.phase = Phase::New;
            return Err(error);
        }
        self.server_or_invalid()
    }

    /// What the server said about itself at `initialize`; `None` before a
    /// successful [`initialize`](Client::initialize).
    pub fn server(&self) -> Option<&ServerInfo> {
        self.inner.server.get()
    }

    fn server_or_invalid(&self) -> Result<&ServerInfo, Error> {
        self.inner.server.get().ok_or_else(|| {
            Error::invalid_response("initialize", "no server information was recorded")
        })
    }

    /// Lists every tool the server offers, following `nextCursor` to the
    /// last page. Stops with [`Error::CursorLoop`] if the server repeats a
    /// cursor. An empty cursor counts as the end.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn list_tools(&self) -> Result<Vec<ToolInfo>, Error> {
        let operation = Operation("tools/list", None);
        let mut state = self.ready(operation).await?;
        let mut tools = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_TOOL_PAGES {
            let params = ListToolsParams {
                cursor: cursor.as_deref(),
            };
            let page: ToolsPage = state
                .connection
                .request(&operation, "tools/list", &params, None)
                .await?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => return Ok(tools),
                Some(next) if next.is_empty() => return Ok(tools),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(Error::CursorLoop { cursor: next });
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(Error::invalid_response(
            "tools/list",
            format!("more than {MAX_TOOL_PAGES} pages of tools; stopped paging"),
        ))
    }

    /// Calls tool `name` with `arguments`, which are sent verbatim.
    ///
    /// A tool that fails reports it in the result
    /// ([`CallResult::is_error`]); an `Err` means the call itself failed: a
    /// JSON-RPC error ([`Error::Protocol`], e.g. an unknown tool), or the
    /// transport.
    ///
    /// Cancel safe (see [`Client`]): dropping the future abandons the call,
    /// and the server is told with `notifications/cancelled`.
    pub async fn call_tool(&self, name: &str, arguments: &RawValue) -> Result<CallResult, Error> {
        self.call(name, arguments, None).await
    }

    /// Like [`call_tool`](Client::call_tool), but asks the server for
    /// progress reports (a `progressToken` in the request's `_meta`) and
    /// hands each `notifications/progress` for this call to `on_progress`,
    /// in the order they arrive. Servers that do not report progress simply
    /// never call it.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn call_tool_with_progress(
        &self,
        name: &str,
        arguments: &RawValue,
        mut on_progress: impl FnMut(Progress) + Send,
    ) -> Result<CallResult, Error> {
        self.call(name, arguments, Some(&mut on_progress)).await
    }

    /// Like [`call_tool`](Client::call_tool) (or
    /// [`call_tool_with_progress`](Client::call_tool_with_progress) when
    /// `on_progress` is given), but returns the result exactly as the server
    /// sent it: the bytes of the JSON-RPC `result`, untouched, for programs
    /// that print or forward it. Parse it into a [`CallResult`] with
    /// `serde_json::from_str` when its content is needed too.
    ///
    /// Cancel safe (see [`Client`]).
    ///
    /// ```no_run
    /// # async fn run(client: golem_mcp::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// let arguments = serde_json::value::RawValue::from_string(r#"{"message":"hi"}"#.into())?;
    /// let raw = client.call_tool_raw("echo", &arguments, None).await?;
    /// println!("{}", raw.get()); // e.g. {"content":[{"type":"text","text":"Echo: hi"}]}
    /// let result: golem_mcp::CallResult = serde_json::from_str(raw.get())?;
    /// assert!(!result.is_error);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_tool_raw(
        &self,
        name: &str,
        arguments: &RawValue,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<Box<RawValue>, Error> {
        self.call(name, arguments, on_progress).await
    }

    /// `tools/call`, with a progress token when there is an observer, and
    /// the result read as `R`.
    async fn call<R: serde::de::DeserializeOwned>(
        &self,
        name: &str,
        arguments: &RawValue,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error> {
        let operation = Operation("tools/call", Some(name));
        let mut state = self.ready(operation).await?;
        let Some(on_progress) = on_progress else {
            let params = CallToolParams {
                name,
                arguments,
                meta: None,
            };
            return state
                .connection
                .request(&operation, "tools/call", &params, None)
                .await;
        };
        let token = state.next_progress_token;
        state.next_progress_token += 1;
        let params = CallToolParams {
            name,
            arguments,
            meta: Some(CallMeta {
                progress_token: token,
            }),
        };
        let mut observer = |notification: Notification<'_>| {
            if notification.method != "notifications/progress" {
                return;
            }
            let Some(params) = notification.params else {
                return;
            };
            match serde_json::from_str::<ProgressParams>(params.get()) {
                Ok(report) if report.progress_token == token => on_progress(report.progress),
                Ok(_) => {} // another call's progress
                Err(error) => tracing::debug!(%error, "mcp: malformed progress notification"),
            }
        };
        state
            .connection
            .request(&operation, "tools/call", &params, Some(&mut observer))
            .await
    }

    /// Sends a `ping` and waits for the answer: a liveness check.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn ping(&self) -> Result<(), Error> {
        let operation = Operation("ping", None);
        let mut state = self.ready(operation).await?;
        let _: serde::de::IgnoredAny = state
            .connection
            .request(&operation, "ping", &EmptyParams {}, None)
            .await?;
        Ok(())
    }

    /// Closes the connection: a stdio server is ended and reaped, an HTTP
    /// session is ended. Every later operation fails with [`Error::Closed`];
    /// closing again does nothing. Clones share the connection, so this
    /// closes it for all of them, and an operation of another clone that is
    /// waiting on the server fails at once with [`Error::Closed`] rather than
    /// making `close` wait for it.
    ///
    /// Not needed for cleanup (dropping the last clone releases the
    /// transport too) but it waits for the server to be gone, within the
    /// transport's bound (see [`ShutdownTimeouts`](crate::ShutdownTimeouts)
    /// and `HttpConfig::close_timeout`), and reports a failure to close.
    ///
    /// Cancel safe: if dropped half-way, the client is closed for every
    /// other operation, and calling `close` again finishes the job.
    pub async fn close(&self) -> Result<(), Error> {
        let operation = Operation("close", None);
        self.inner.closing.send_replace(true);
        let mut state = self.inner.state.lock().await;
        if state.phase == Phase::Closed {
            return Ok(());
        }
        state.phase = Phase::Closing;
        let result = state.connection.close(&operation).await;
        state.phase = Phase::Closed;
        result
    }

    /// Waits for the connection and checks the client may send requests.
    async fn ready(&self, operation: Operation<'_>) -> Result<MutexGuard<'_, State>, Error> {
        let state = self.inner.state.lock().await;
        if *self.inner.closing.borrow() {
            return Err(closed(operation));
        }
        match state.phase {
            Phase::Ready => Ok(state),
            Phase::New | Phase::Initializing(_) => Err(Error::NotInitialized {
                operation: operation.to_string(),
            }),
            Phase::Closing | Phase::Closed => Err(closed(operation)),
        }
    }
}

#[derive(serde::Serialize)]
struct EmptyParams {}

fn closed(operation: Operation<'_>) -> Error {
    Error::Closed {
        operation: operation.to_string(),
    }
}
