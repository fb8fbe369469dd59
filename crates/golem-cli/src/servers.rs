//! The MCP servers of one command: started once, their tools offered as
//! toolsets (prefixed with the server's name where names clash), their log
//! messages relayed to stderr, and closed at the end.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use golem_agent::mcp::ToolInfo;
use golem_agent::mcp::config::ServerConfig;
use golem_agent::mcp::{
    AlwaysLoaded, Client, ClientConfig, HttpTransport, LogMessage, McpToolset, Notifications,
    RestartPolicy, ServerNotification, ServerStderr, SseTransport, StdioTransport, ToolsetConfig,
};
use golem_agent::model::Usage;
use golem_agent::tool::Toolset;
use tokio::task::JoinHandle;

use crate::exit::Failure;
use crate::requests::{Answers, SamplingUsage};
use crate::show::Output;

/// The most characters of one server log message shown.
const LOG_SHOWN: usize = 2000;
/// How long closing all the servers may take; past it they are killed
/// (when the runtime drops their transports).
const CLOSE_LIMIT: Duration = Duration::from_secs(3);

/// One started server.
struct Server {
    name: String,
    client: Client,
    /// Set once its tools are listed.
    toolset: Option<Arc<McpToolset<()>>>,
    /// The prefix its tools carry, when they clash with another server's.
    prefix: Option<String>,
    /// Prints its log messages.
    relay: JoinHandle<()>,
}

/// The servers of a command. Whatever was started is closed by
/// [`close`](Self::close), also after a failed start.
#[derive(Default)]
pub struct Servers {
    servers: Vec<Server>,
    /// What the servers' sampling requests cost.
    sampling: SamplingUsage,
    /// Whether a lost server is started again (ADR 0026).
    restart: bool,
    /// Which tools of each server are always loaded under tool search.
    always_loaded: HashMap<String, AlwaysLoaded>,
}

impl Servers {
    /// No servers yet; those started will be started again when lost
    /// (and their dropped HTTP sessions renewed) when `restart` says so.
    /// A server's tools named in `always_loaded` (by server) are offered
    /// on every model request under tool search.
    pub fn new(restart: bool, always_loaded: HashMap<String, AlwaysLoaded>) -> Self {
        Servers {
            restart,
            always_loaded,
            ..Servers::default()
        }
    }

    /// Starts every server and lists its tools, each step within `limit`
    /// (`--start-timeout`): a server that never answers (a wrong command,
    /// one waiting on a prompt) is not waited for. The servers start
    /// together: every process is spawned first, then the handshakes and
    /// listings run at once, so several npm servers start in the time of
    /// the slowest, not of all of them in turn.
    ///
    /// A server that cannot be spawned, initialized or listed is stopped
    /// and left out, and its failure returned with the others (desktop
    /// hosts go on without a broken entry too); with `strict`, the first
    /// failure fails the command instead. When every server fails, the
    /// first failure does. The servers started stay here, for
    /// [`close`](Self::close).
    ///
    /// Cancel safe: a server is added here as soon as it is spawned.
    pub async fn start(
        &mut self,
        configs: Vec<(String, ServerConfig)>,
        limit: Duration,
        output: &Output,
        strict: bool,
        protocol: Option<&str>,
        answers: &Answers,
    ) -> Result<Vec<Failure>, Failure> {
        // The servers of this call: those before (none, in practice) are
        // initialized already.
        let first = self.servers.len();
        let wanted = configs.len();
        let mut failed = Vec::new();
        let mut stderrs = Vec::new();
        for (name, config) in configs {
            let mut client_config = answers.config(&name, output, &self.sampling);
            // Only a stdio server can be started again; an HTTP session
            // the server dropped is renewed instead (`connect`).
            if self.restart && matches!(config, ServerConfig::Stdio(_)) {
                client_config = client_config.with_restart(RestartPolicy::default());
            }
            let (client, stderr) =
                match connect(&name, config, protocol, client_config, self.restart) {
                    Ok(connected) => connected,
                    Err(failure) if strict => return Err(failure),
                    Err(failure) => {
                        failed.push(failure);
                        continue;
                    }
                };
            // Subscribed before the handshake: a log message may come with it.
            let notifications = client.passive_notifications();
            let relay = tokio::spawn(relay_logs(name.clone(), notifications, output.clone()));
            self.servers.push(Server {
                name,
                client,
                toolset: None,
                prefix: None,
                relay,
            });
            stderrs.push(stderr);
        }
        let handshakes = join_all(self.servers[first..].iter().zip(&stderrs).map(
            |(server, stderr)| {
                // Only whether it succeeded is kept (the answer borrows the client).
                let handshake = async { server.client.initialize().await.map(|_| ()) };
                bounded(
                    &server.name,
                    "initialize",
                    limit,
                    stderr.as_ref(),
                    handshake,
                )
            },
        ))
        .await;
        self.leave_out(first, handshakes, strict, &mut failed)?;
        let listings = join_all(self.servers[first..].iter().map(|server| {
            let listing = server.client.list_tools();
            bounded(&server.name, "tools/list", limit, None, listing)
        }))
        .await;
        let listings = self.leave_out(first, listings, strict, &mut failed)?;
        self.prefix_clashes(first, listings);
        let toolsets = join_all(self.servers[first..].iter().map(|server| {
            let mut config = ToolsetConfig::default();
            config.name = Some(server.name.clone());
            config.prefix = server.prefix.clone();
            if let Some(always) = self.always_loaded.get(&server.name) {
                config.bridge = config.bridge.with_always_loaded(always.clone());
            }
            let listing = McpToolset::new(&server.client, config);
            bounded(&server.name, "tools/list", limit, None, listing)
        }))
        .await;
        let toolsets = self.leave_out(first, toolsets, strict, &mut failed)?;
        for (server, toolset) in self.servers[first..].iter_mut().zip(toolsets) {
            server.toolset = Some(Arc::new(toolset));
        }
        if wanted > 0 && self.servers.len() == first {
            // Nothing left to offer the model: the first failure is the
            // command's.
            return Err(failed.remove(0));
        }
        Ok(failed)
    }

    /// Keeps the servers (from `first`) whose step succeeded, in order, and
    /// the values it gave; the others are stopped (dropped: their process
    /// group is killed) and their failures added to `failed`, unless
    /// `strict`, where the first failure is returned.
    fn leave_out<T>(
        &mut self,
        first: usize,
        results: Vec<Result<T, Failure>>,
        strict: bool,
        failed: &mut Vec<Failure>,
    ) -> Result<Vec<T>, Failure> {
        let servers = self.servers.split_off(first);
        let mut values = Vec::new();
        let mut first_failure = None;
        for (server, result) in servers.into_iter().zip(results) {
            match result {
                Ok(value) => {
                    self.servers.push(server);
                    values.push(value);
                }
                // The command fails: every server stays for `close`.
                Err(failure) if strict => {
                    self.servers.push(server);
                    first_failure.get_or_insert(failure);
                }
                Err(failure) => {
                    server.relay.abort();
                    failed.push(failure);
                }
            }
        }
        match first_failure {
            Some(failure) => Err(failure),
            None => Ok(values),
        }
    }

    /// Gives a prefix to each server (from `first`) with a tool name
    /// another server also has, from their `listings`.
    fn prefix_clashes(&mut self, first: usize, listings: Vec<Vec<ToolInfo>>) {
        let mut owners: HashMap<String, Vec<usize>> = HashMap::new();
        for (index, tools) in listings.into_iter().enumerate() {
            for tool in tools {
                owners.entry(tool.name).or_default().push(first + index);
            }
        }
        for indexes in owners.values().filter(|indexes| indexes.len() > 1) {
            for &index in indexes {
                let server = &mut self.servers[index];
                server.prefix = Some(tool_prefix(&server.name));
            }
        }
    }

    /// What the servers' sampling requests have cost so far.
    pub fn sampling_usage(&self) -> Usage {
        self.sampling.total()
    }

    /// How many servers are running.
    pub fn started(&self) -> usize {
        self.servers.len()
    }

    /// The toolsets for the agent.
    pub fn toolsets(&self) -> Vec<Arc<dyn Toolset<()>>> {
        self.servers
            .iter()
            .filter_map(|server| server.toolset.clone())
            .map(|toolset| toolset as Arc<dyn Toolset<()>>)
            .collect()
    }

    /// The server's own name for a tool the model knows as `exposed`, from
    /// the toolset named `source`.
    pub fn server_tool<'a>(&self, source: &str, exposed: &'a str) -> &'a str {
        self.servers
            .iter()
            .find(|server| server.name == source)
            .and_then(|server| server.prefix.as_deref())
            .and_then(|prefix| exposed.strip_prefix(prefix))
            .and_then(|rest| rest.strip_prefix('_'))
            .unwrap_or(exposed)
    }

    /// Every tool offered now: (server, name for the model, description).
    pub fn listing(&self) -> Vec<(String, String, String)> {
        let mut listed = Vec::new();
        for server in &self.servers {
            let Some(toolset) = &server.toolset else {
                continue;
            };
            for tool in toolset.tools() {
                listed.push((
                    server.name.clone(),
                    tool.name().to_owned(),
                    tool.description().to_owned(),
                ));
            }
        }
        listed
    }

    /// Ends every session (concurrently, within [`CLOSE_LIMIT`]); a server
    /// that does not end in time is killed with its process group when the
    /// runtime drops its transport.
    pub async fn close(self) {
        let mut closing = Vec::new();
        for server in self.servers {
            drop(server.toolset);
            server.relay.abort();
            let client = server.client;
            closing.push(tokio::spawn(async move {
                let _ = client.close().await;
            }));
        }
        let all = async {
            for task in closing {
                let _ = task.await;
            }
        };
        let _ = tokio::time::timeout(CLOSE_LIMIT, all).await;
    }
}

/// A prefix for a server's tools: its name, with what a tool name may not
/// hold (OpenAI allows letters, digits, `_` and `-`) as `_`.
fn tool_prefix(server: &str) -> String {
    server
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect()
}

/// `operation` of server `name`, within `limit`; a timeout is reported
/// with what a stdio server wrote to stderr by then.
async fn bounded<T>(
    name: &str,
    operation: &str,
    limit: Duration,
    stderr: Option<&ServerStderr>,
    future: impl std::future::Future<Output = Result<T, golem_agent::mcp::Error>>,
) -> Result<T, Failure> {
    let error = match tokio::time::timeout(limit, future).await {
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(error)) => error,
        Err(_) => golem_agent::mcp::Error::Timeout {
            operation: operation.to_owned(),
            after: limit,
            stderr_tail: stderr.map(ServerStderr::tail).unwrap_or_default(),
        },
    };
    Err(Failure::server(name, &error))
}

/// Starts the stdio server (keeping a handle on its stderr for a timeout's
/// message) or prepares the HTTP transport (streamable, or HTTP+SSE for a
/// `"type": "sse"` entry), with the handlers of `client_config`;
/// `protocol` pins the revision; `renew_sessions` renews an HTTP session
/// the server dropped (ADR 0026).
fn connect(
    name: &str,
    config: ServerConfig,
    protocol: Option<&str>,
    client_config: ClientConfig,
    renew_sessions: bool,
) -> Result<(Client, Option<ServerStderr>), Failure> {
    let failed = |error: golem_agent::mcp::Error| Failure::server(name, &error);
    let client_config = match protocol {
        Some(version) => client_config.with_protocol(version),
        None => client_config,
    };
    match config {
        ServerConfig::Stdio(stdio) => {
            let transport = StdioTransport::spawn(stdio).map_err(failed)?;
            let stderr = transport.stderr();
            Ok((Client::with_config(transport, client_config), Some(stderr)))
        }
        ServerConfig::Http(mut http) => {
            // What a restart is to a stdio server: a session the server
            // dropped (404) is started again, once per request.
            http.reinitialize_expired_session |= renew_sessions;
            let transport = HttpTransport::new(http).map_err(failed)?;
            Ok((Client::with_config(transport, client_config), None))
        }
        ServerConfig::Sse(http) => Ok((
            Client::with_config(SseTransport::new(http).map_err(failed)?, client_config),
            None,
        )),
        // Not printed: a configuration may hold secrets.
        _ => Err(Failure::usage(format!(
            "MCP server {name:?} uses a transport this version of golem cannot use"
        ))),
    }
}

/// `[fs] log [info] LOGGER: TEXT`. A server's text is not trusted with the
/// terminal: control characters (escape sequences, line breaks that would
/// fake a `golem:` line) become spaces.
fn log_line(name: &str, message: &LogMessage) -> String {
    let mut line = format!("[{name}] log [{}] ", message.level);
    if let Some(logger) = message.logger.as_deref().filter(|l| !l.is_empty()) {
        line.push_str(&crate::show::one_line(logger, LOG_SHOWN));
        line.push_str(": ");
    }
    line.push_str(&crate::show::one_line(&message.text(), LOG_SHOWN));
    line
}

/// What a restart's cause says first: how the server ended (its last
/// words follow on other lines, already shown with the failed call).
fn first_line(cause: &str) -> String {
    crate::show::one_line(cause.lines().next().unwrap_or_default(), LOG_SHOWN)
}

/// Prints the server's log messages and its restarts on stderr until its
/// client is closed.
async fn relay_logs(name: String, mut notifications: Notifications, output: Output) {
    while let Some(notification) = notifications.recv().await {
        match notification {
            ServerNotification::Log(message) => output.note(&log_line(&name, &message)),
            ServerNotification::Restarted { attempt, cause } => output.note(&format!(
                "MCP server {name:?} was lost ({}); started it again (attempt {attempt}), and \
                 its tools are back",
                first_line(&cause)
            )),
            ServerNotification::RestartAbandoned {
                attempts, error, ..
            } => output.note(&format!(
                "MCP server {name:?} could not be started again after {attempts} attempt(s) \
                 ({}); its tools fail from now on",
                first_line(&error)
            )),
            ServerNotification::SessionRenewed => output.note(&format!(
                "MCP server {name:?} had dropped the session; started a new one"
            )),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_log_line_cannot_reach_the_terminal_raw() {
        let message: LogMessage = serde_json::from_value(serde_json::json!({
            "level": "warning",
            "logger": "db",
            "data": "ok\ngolem: usage: 0 requests\u{1b}[2J"
        }))
        .expect("a log message");
        assert_eq!(
            log_line("fs", &message),
            "[fs] log [warning] db: ok golem: usage: 0 requests [2J"
        );
    }

    #[test]
    fn prefixes_keep_only_tool_name_characters() {
        assert_eq!(tool_prefix("fs"), "fs");
        assert_eq!(tool_prefix("my files.v2"), "my_files_v2");
        assert_eq!(tool_prefix("git-hub"), "git-hub");
    }
}
