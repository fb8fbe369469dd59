//! The MCP servers of one command: started once, their tools offered as
//! toolsets (prefixed with the server's name where names clash), their log
//! messages relayed to stderr, and closed at the end. A server whose
//! manifest (its last listing, kept between runs, ADR 0030) is fresh is not
//! started with the command: its tools are offered from the manifest and it
//! starts on the model's first call of one of them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures_util::future::join_all;
use golem_agent::mcp::ToolInfo;
use golem_agent::mcp::config::ServerConfig;
use golem_agent::mcp::{
    AlwaysLoaded, Client, ClientConfig, HttpTransport, LazyToolset, LogLevel, LogMessage,
    MODERN_PROTOCOL_VERSIONS, Manifest, ManifestStore, McpToolset, Notifications, RestartPolicy,
    ServerNotification, ServerStderr, SseTransport, StartServer, StdioTransport, ToolsetConfig,
};
use golem_agent::model::Usage;
use golem_agent::tool::Toolset;
use tokio::task::JoinHandle;

use crate::approve::{Policy, Prefixes, Screened};
use crate::exit::Failure;
use crate::requests::{Answers, SamplingUsage};
use crate::show::Output;

/// The most characters of one server log message shown.
const LOG_SHOWN: usize = 2000;
/// How long closing all the servers may take; past it they are killed
/// (when the runtime drops their transports).
const CLOSE_LIMIT: Duration = Duration::from_secs(3);

/// One server of the command.
struct Server {
    name: String,
    /// Its client, when started with the command (not on a first call).
    client: Option<Client>,
    /// Set once its tools are listed, or read from its manifest.
    toolset: Option<ServerTools>,
    /// The prefix its tools carry, when they clash with another server's.
    prefix: Option<String>,
    /// Prints its log messages (a server started on a first call has a
    /// relay of its own, which ends with its client).
    relay: Option<JoinHandle<()>>,
}

/// A server's tools: listed from the running server, or read from its
/// manifest until its first call.
enum ServerTools {
    Live(Arc<McpToolset<()>>),
    Lazy(Arc<LazyToolset<()>>),
}

impl ServerTools {
    fn toolset(&self) -> Arc<dyn Toolset<()>> {
        match self {
            ServerTools::Live(toolset) => Arc::clone(toolset) as Arc<dyn Toolset<()>>,
            ServerTools::Lazy(toolset) => Arc::clone(toolset) as Arc<dyn Toolset<()>>,
        }
    }
}

/// How the servers' manifests are used.
#[derive(Clone, Default)]
pub struct Manifests {
    /// Where they are kept; `None`: nowhere (no cache directory).
    pub store: Option<Arc<dyn ManifestStore>>,
    /// Whether a fresh one spares starting its server with the command
    /// (not `--eager`, not `--refresh`).
    pub read: bool,
}

/// How the servers' tools are presented to the model.
#[derive(Clone, Default)]
pub struct Presentation {
    /// Which tools of each server are always loaded under tool search.
    pub always_loaded: HashMap<String, AlwaysLoaded>,
    /// Whether a tool's images reach the model (not `--no-tool-images`).
    pub images: bool,
}

/// A server whose tools come from its fresh manifest.
struct Deferred {
    name: String,
    config: ServerConfig,
    key: String,
    manifest: Manifest,
    tools: Vec<ToolInfo>,
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
    presentation: Presentation,
    manifests: Manifests,
    /// The least severe server log message asked for and shown
    /// (`--log-level`); `None`: none (`--quiet`).
    log_level: Option<LogLevel>,
    /// Which tools are not offered (`--deny-tool`, `"denyTools"`).
    policy: Arc<Policy>,
}

impl Servers {
    /// No servers yet; those started will be started again when lost
    /// (and their dropped HTTP sessions renewed) when `restart` says so;
    /// `presentation` says which tools are always loaded and whether images
    /// reach the model; `manifests` says where listings are kept and
    /// whether a fresh one defers its server's start; the servers' log
    /// messages at `log_level` or above are asked for and shown (none for
    /// `None`); the tools `policy` denies are not offered.
    pub fn new(
        restart: bool,
        presentation: Presentation,
        manifests: Manifests,
        (log_level, policy): (Option<LogLevel>, Arc<Policy>),
    ) -> Self {
        Servers {
            restart,
            presentation,
            manifests,
            log_level,
            policy,
            ..Servers::default()
        }
    }

    /// Starts every server and lists its tools, each step within `limit`
    /// (`--start-timeout`): a server that never answers (a wrong command,
    /// one waiting on a prompt) is not waited for. The servers start
    /// together: every process is spawned first, then the handshakes and
    /// listings run at once, so several npm servers start in the time of
    /// the slowest, not of all of them in turn. Each listing is kept as the
    /// server's manifest. A server named in `protocols` speaks that
    /// revision; the others' era is probed.
    ///
    /// A server with a fresh manifest is not started here: its tools are
    /// offered from the manifest, and it starts (within `limit`) on the
    /// first call of one of them.
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
        protocols: &HashMap<String, String>,
        answers: &Answers,
    ) -> Result<Vec<Failure>, Failure> {
        // The servers of this call: those before (none, in practice) are
        // initialized already.
        let first = self.servers.len();
        let wanted = configs.len();
        let mut failed = Vec::new();
        let mut stderrs = Vec::new();
        let mut keys = Vec::new();
        let mut deferred = Vec::new();
        for (name, config) in configs {
            let key = config.manifest_key();
            if let Some((manifest, tools)) = self.fresh_manifest(&key) {
                deferred.push(Deferred {
                    name,
                    config,
                    key,
                    manifest,
                    tools,
                });
                continue;
            }
            let client_config = self.client_config(&name, &config, (output, answers), limit);
            let (client, stderr) = match connect(
                &name,
                config,
                protocols.get(&name).map(String::as_str),
                client_config,
                self.restart,
            ) {
                Ok(connected) => connected,
                Err(failure) if strict => return Err(failure),
                Err(failure) => {
                    failed.push(failure);
                    continue;
                }
            };
            // Subscribed before the handshake: a log message may come with it.
            let notifications = client.passive_notifications();
            let relay = tokio::spawn(relay_logs(
                name.clone(),
                notifications,
                output.clone(),
                self.log_level,
            ));
            self.servers.push(Server {
                name,
                client: Some(client),
                toolset: None,
                prefix: None,
                relay: Some(relay),
            });
            stderrs.push(stderr);
            keys.push(key);
        }
        let handshakes = join_all(self.servers[first..].iter().zip(&stderrs).map(
            |(server, stderr)| {
                let client = server.client.as_ref().expect("started with the command");
                let handshake = handshake(client, self.log_level);
                bounded(
                    &server.name,
                    ("initialize", Some(client)),
                    limit,
                    stderr.as_ref(),
                    handshake,
                )
            },
        ))
        .await;
        let keys = self.leave_out(
            first,
            handshakes
                .into_iter()
                .zip(keys)
                .map(|(done, key)| done.map(|()| key))
                .collect(),
            strict,
            &mut failed,
        )?;
        let listings = join_all(self.servers[first..].iter().map(|server| {
            let client = server.client.as_ref().expect("started with the command");
            bounded(
                &server.name,
                ("tools/list", None),
                limit,
                None,
                client.list_tools(),
            )
        }))
        .await;
        let listings = self.leave_out(
            first,
            listings
                .into_iter()
                .zip(keys)
                .map(|(listed, key)| listed.map(|tools| (tools, key)))
                .collect(),
            strict,
            &mut failed,
        )?;
        for (server, (tools, key)) in self.servers[first..].iter().zip(&listings) {
            let client = server.client.as_ref().expect("started with the command");
            self.save_manifest(&server.name, key, &Manifest::of(client, tools), output);
        }
        let mut all: Vec<Vec<ToolInfo>> = listings.into_iter().map(|(tools, _)| tools).collect();
        let started = self.servers.len();
        for server in &deferred {
            self.servers.push(Server {
                name: server.name.clone(),
                client: None,
                toolset: None,
                prefix: None,
                relay: None,
            });
            all.push(server.tools.clone());
        }
        self.prefix_clashes(first, all);
        let toolsets = join_all(self.servers[first..started].iter().map(|server| {
            let client = server.client.as_ref().expect("started with the command");
            let listing = McpToolset::new(client, self.toolset_config(server));
            bounded(&server.name, ("tools/list", None), limit, None, listing)
        }))
        .await;
        let mut toolsets = toolsets.into_iter();
        for (index, toolset) in (first..started).zip(toolsets.by_ref()) {
            match toolset {
                Ok(toolset) => {
                    self.servers[index].toolset = Some(ServerTools::Live(Arc::new(toolset)))
                }
                Err(failure) if strict => return Err(failure),
                Err(failure) => failed.push(failure),
            }
        }
        for (index, server) in (started..).zip(deferred) {
            let protocol = protocols.get(&server.name).map(String::as_str);
            let toolset = self.deferred_toolset(
                &self.servers[index],
                server,
                limit,
                output,
                protocol,
                answers,
            );
            match toolset {
                Ok(toolset) => {
                    self.servers[index].toolset = Some(ServerTools::Lazy(Arc::new(toolset)))
                }
                Err(failure) if strict => return Err(failure),
                Err(failure) => failed.push(failure),
            }
        }
        // A server whose tools could not be made is left out.
        let servers = self.servers.split_off(first);
        for server in servers {
            match server.toolset {
                Some(_) => self.servers.push(server),
                None => {
                    if let Some(relay) = server.relay {
                        relay.abort();
                    }
                }
            }
        }
        if wanted > 0 && self.servers.len() == first {
            // Nothing left to offer the model: the first failure is the
            // command's.
            return Err(failed.remove(0));
        }
        Ok(failed)
    }

    /// The manifest kept under `key` and its tools, when manifests are read
    /// and it is fresh.
    fn fresh_manifest(&self, key: &str) -> Option<(Manifest, Vec<ToolInfo>)> {
        let store = self
            .manifests
            .store
            .as_ref()
            .filter(|_| self.manifests.read)?;
        let manifest = store
            .load(key)
            .filter(|manifest| manifest.is_fresh(SystemTime::now()))?;
        let tools = manifest.tool_infos().ok()?;
        Some((manifest, tools))
    }

    /// Keeps server `name`'s `manifest` under `key`, when there is a
    /// store; a failure is only noted (the next run starts the server
    /// with the command again).
    fn save_manifest(&self, name: &str, key: &str, manifest: &Manifest, output: &Output) {
        if let Some(store) = &self.manifests.store
            && let Err(error) = store.save(key, manifest)
        {
            output.note(&format!(
                "cannot keep the tool list of MCP server {name:?} for the next run: {error}"
            ));
        }
    }

    /// The handlers of server `name` (elicitation, roots, sampling), with,
    /// for a stdio server, a restart policy unless `--no-restart` (an HTTP
    /// session the server dropped is renewed instead, in `connect`) and an
    /// era probe that may take half of the start's bound (`limit`): a
    /// server slow to answer it is not a legacy one.
    fn client_config(
        &self,
        name: &str,
        config: &ServerConfig,
        (output, answers): (&Output, &Answers),
        limit: Duration,
    ) -> ClientConfig {
        let mut client_config = answers.config(name, output, &self.sampling);
        if !matches!(config, ServerConfig::Stdio(_)) {
            return client_config;
        }
        // Half the start's bound: the other half is left to a legacy
        // server that ignores the probe.
        client_config.probe_timeout = limit / 2;
        match self.restart {
            true => client_config.with_restart(RestartPolicy::default()),
            false => client_config,
        }
    }

    /// How `server`'s tools are presented: its name, its prefix, its
    /// always-loaded tools, and their images given to the model.
    fn toolset_config(&self, server: &Server) -> ToolsetConfig {
        let mut config = ToolsetConfig::default();
        config.name = Some(server.name.clone());
        config.prefix = server.prefix.clone();
        config.bridge = config.bridge.with_images_to_model(self.presentation.images);
        if let Some(always) = self.presentation.always_loaded.get(&server.name) {
            config.bridge = config.bridge.with_always_loaded(always.clone());
        }
        config
    }

    /// The tools of a server with a fresh manifest, which start it (spawn
    /// or connect, relay its logs, initialize within `limit`) on the first
    /// call of one of them; its listing then replaces the manifest.
    fn deferred_toolset(
        &self,
        server: &Server,
        deferred: Deferred,
        limit: Duration,
        output: &Output,
        protocol: Option<&str>,
        answers: &Answers,
    ) -> Result<LazyToolset<()>, Failure> {
        let Deferred {
            name,
            config,
            key,
            manifest,
            ..
        } = deferred;
        let client_config = self.client_config(&name, &config, (output, answers), limit);
        let (output, protocol, restart, log_level) = (
            output.clone(),
            protocol.map(str::to_owned),
            self.restart,
            self.log_level,
        );
        let starter_name = name.clone();
        let start: StartServer = Arc::new(move || {
            let (name, config, client_config) =
                (starter_name.clone(), config.clone(), client_config.clone());
            let (output, protocol) = (output.clone(), protocol.clone());
            Box::pin(async move {
                let (client, stderr) =
                    connect(&name, config, protocol.as_deref(), client_config, restart)
                        .map_err(|failure| failure.message)?;
                let notifications = client.passive_notifications();
                tokio::spawn(relay_logs(name.clone(), notifications, output, log_level));
                let handshake = handshake(&client, log_level);
                let operation = ("initialize", Some(&client));
                bounded(&name, operation, limit, stderr.as_ref(), handshake)
                    .await
                    .map_err(|failure| failure.message)?;
                Ok(client)
            })
        });
        let save_to = self.manifests.store.clone().map(|store| (store, key));
        let config = self.toolset_config(server);
        // Twice the bound: once for initialize, once for the listing, as
        // when started with the command.
        LazyToolset::new(&name, &manifest, config, start, save_to)
            .map(|toolset| toolset.with_start_timeout(limit * 2))
            .map_err(|error| Failure::server(&name, &error))
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
                    if let Some(relay) = server.relay {
                        relay.abort();
                    }
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
    /// another server also has, from their `listings` (a manifest's for a
    /// server not started): the same listings give the same names on every
    /// run, started or not.
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

    /// How many servers there are, started or waiting for a first call.
    pub fn started(&self) -> usize {
        self.servers.len()
    }

    /// The toolsets for the agent.
    pub fn toolsets(&self) -> Vec<Arc<dyn Toolset<()>>> {
        let prefixes = Arc::new(self.prefixes());
        self.servers
            .iter()
            .filter_map(|server| server.toolset.as_ref().map(ServerTools::toolset))
            .map(|inner| {
                Arc::new(Screened {
                    inner,
                    policy: Arc::clone(&self.policy),
                    prefixes: Arc::clone(&prefixes),
                }) as Arc<dyn Toolset<()>>
            })
            .collect()
    }

    /// Which tools run, are asked about, or are not offered.
    pub fn policy(&self) -> &Arc<Policy> {
        &self.policy
    }

    /// Each server's prefix on its tools' names, for those that have one.
    pub fn prefixes(&self) -> Prefixes {
        self.servers
            .iter()
            .filter_map(|server| Some((server.name.clone(), server.prefix.clone()?)))
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
        for toolset in self.toolsets() {
            for tool in toolset.tools() {
                listed.push((
                    toolset.name().to_owned(),
                    tool.name().to_owned(),
                    tool.description().to_owned(),
                ));
            }
        }
        listed
    }

    /// Ends every session (concurrently, within [`CLOSE_LIMIT`]), those of
    /// servers started on a first call too; a server that does not end in
    /// time is killed with its process group when the runtime drops its
    /// transport.
    pub async fn close(self) {
        let mut closing = Vec::new();
        for server in self.servers {
            let client = match (&server.client, &server.toolset) {
                (Some(client), _) => Some(client.clone()),
                (None, Some(ServerTools::Lazy(lazy))) => lazy.client().cloned(),
                _ => None,
            };
            drop(server.toolset);
            if let Some(relay) = server.relay {
                relay.abort();
            }
            if let Some(client) = client {
                closing.push(tokio::spawn(async move {
                    let _ = client.close().await;
                }));
            }
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
/// with what a stdio server wrote to stderr by then, and, when `operation`
/// is `handshaking`'s handshake, names the request the server left
/// unanswered (`server/discover` or `initialize`).
async fn bounded<T>(
    name: &str,
    (operation, handshaking): (&str, Option<&Client>),
    limit: Duration,
    stderr: Option<&ServerStderr>,
    future: impl std::future::Future<Output = Result<T, golem_agent::mcp::Error>>,
) -> Result<T, Failure> {
    let error = match tokio::time::timeout(limit, future).await {
        Ok(Ok(value)) => return Ok(value),
        Ok(Err(error)) => error,
        Err(_) => golem_agent::mcp::Error::Timeout {
            operation: handshaking
                .and_then(Client::handshake_waiting_on)
                .unwrap_or(operation)
                .to_owned(),
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

/// Initializes `client` and asks the server for its log messages from
/// `least` up: a modern server sends none unless asked, and asking costs
/// nothing (the level goes in each later request's `_meta`); a legacy one
/// that declares logging is sent `logging/setLevel`, whose refusal is
/// ignored (`relay_logs` filters anyway). Only whether it succeeded is
/// kept (the answer borrows the client).
async fn handshake(
    client: &Client,
    least: Option<LogLevel>,
) -> Result<(), golem_agent::mcp::Error> {
    let server = client.initialize().await?;
    let modern = MODERN_PROTOCOL_VERSIONS.contains(&server.protocol_version.as_str());
    let logs = modern || server.capabilities.get("logging").is_some();
    if let (true, Some(level)) = (logs, least) {
        let _ = client.set_log_level(level).await;
    }
    Ok(())
}

/// Prints the server's log messages at `least` or above (none for `None`)
/// and its restarts on stderr until its client is closed.
async fn relay_logs(
    name: String,
    mut notifications: Notifications,
    output: Output,
    least: Option<LogLevel>,
) {
    while let Some(notification) = notifications.recv().await {
        match notification {
            ServerNotification::Log(message)
                if least.is_some_and(|least| message.level >= least) =>
            {
                output.note(&log_line(&name, &message))
            }
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
