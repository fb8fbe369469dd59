//! [`Proxy`]: a host's session forwarded to a server through a client of
//! this crate, what `golem-mcp bridge` serves.
//!
//! Each host request is answered on a task of its own (many in flight),
//! by the client's request of the same method with the host's parameters
//! and the server's result passed through as bytes; the JSON-RPC ids are
//! the two sides' own. Because the server is reached through a `Client`,
//! everything the client does the host gets without asking: either era on
//! the server's side (a legacy host bridged to a 2026-07-28 server has its
//! list changes heard through `subscriptions/listen` and its server
//! requests unpacked from `input_required` answers), a stdio server
//! restarted and an HTTP session renewed when lost (the call in flight
//! fails, the next one succeeds), OAuth. The server's notifications and
//! requests go to the host; the host's answers come back.
//!
//! A 2026-07-28 host is served statelessly (`modern_host.rs`); a legacy
//! one through the handshake here. What is not passed on: the host's own
//! `_meta` entries other than its progress token (the client writes the
//! `_meta` the server needs), and a task status notification (2025-11-25's
//! tasks are not bridged).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::task::{AbortHandle, JoinSet};

use crate::error::Error;
use crate::serve::bridged::{Bridged, Settings, failure};
use crate::serve::host::{self, BoxFuture, HostMessage, HostSession, Serves};
use crate::serve::modern;
use crate::serve::tool_filter::ToolFilter;
use crate::serve::upstream::UpstreamSetup;
use crate::session::handle::Client;
use crate::session::notifications::LogLevel;
use crate::session::protocol::{
    ClientInfo, LATEST_PROTOCOL_VERSION, ProtocolChoice, SUPPORTED_PROTOCOL_VERSIONS,
};
use crate::session::restart::RestartPolicy;
use crate::wire::jsonrpc::ProtocolError;

/// How long the server is given to end its session when the host goes.
const CLOSE_TIME: Duration = Duration::from_secs(5);

/// A bridge: serves each host the server that `connect` reaches.
///
/// ```no_run
/// use golem_mcp::serve::{Proxy, Service, ToolFilter};
/// use golem_mcp::{Client, StdioConfig, StdioTransport};
///
/// # async fn run() -> Result<(), golem_mcp::serve::ServeError> {
/// let proxy = Proxy::new(|setup| {
///     let transport = StdioTransport::spawn(StdioConfig::new("mcp-server-everything"))?;
///     Ok(Client::for_bridge(transport, setup))
/// })
/// .with_tools(ToolFilter::default().exclude("get-env"));
/// // Served to the host on this process's stdin and stdout.
/// golem_mcp::serve::serve_stdio(Service::from(proxy)).await
/// # }
/// ```
pub struct Proxy {
    settings: Settings,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("tools", &self.settings.tools)
            .field("restart", &self.settings.restart)
            .field("protocol", &self.settings.protocol)
            .finish_non_exhaustive()
    }
}

impl Proxy {
    /// A bridge whose hosts each get a client from `connect` (a transport
    /// to the server under [`Client::for_bridge`]); a lost server is
    /// restarted (stdio) or its session renewed (HTTP) as the default
    /// [`RestartPolicy`] says.
    pub fn new(
        connect: impl Fn(UpstreamSetup) -> Result<Client, Error> + Send + Sync + 'static,
    ) -> Self {
        Proxy {
            settings: Settings {
                connect: Box::new(connect),
                tools: ToolFilter::default(),
                restart: Some(RestartPolicy::default()),
                protocol: ProtocolChoice::Auto,
                sessions: tokio::sync::watch::Sender::default(),
            },
        }
    }

    /// Offers only the tools `filter` allows: the others are left out of
    /// `tools/list` and a call of one is refused.
    pub fn with_tools(mut self, filter: ToolFilter) -> Self {
        self.settings.tools = filter;
        self
    }

    /// How a lost server is restarted; `None` ends the host's session
    /// with the server's (as does a policy whose attempts are spent).
    pub fn with_restart(mut self, policy: Option<RestartPolicy>) -> Self {
        self.settings.restart = policy;
        self
    }

    /// Speaks `protocol` to the server (by default its era is probed).
    pub fn with_protocol(mut self, protocol: ProtocolChoice) -> Self {
        self.settings.protocol = protocol;
        self
    }
}

impl Proxy {
    /// The settings its hosts share.
    pub(crate) fn into_settings(self) -> Arc<Settings> {
        Arc::new(self.settings)
    }
}

impl Serves for Settings {
    fn serve(self: Arc<Self>, session: HostSession) -> BoxFuture<()> {
        Box::pin(run(self, session))
    }

    fn stop(self: Arc<Self>) -> BoxFuture<()> {
        Box::pin(async move {
            self.sessions
                .send_modify(|sessions| sessions.stopping = true);
            let mut watching = self.sessions.subscribe();
            let _ = watching.wait_for(|sessions| sessions.live == 0).await;
        })
    }
}

/// Serves one host until it goes, then ends the server's session.
async fn run(settings: Arc<Settings>, mut session: HostSession) {
    settings.sessions.send_modify(|sessions| sessions.live += 1);
    let mut stopping = settings.sessions.subscribe();
    let bridged = Arc::new(Bridged::new(settings.clone(), session.outbox.clone()));
    let mut running: HashMap<Box<str>, AbortHandle> = HashMap::new();
    let mut tasks: JoinSet<Box<str>> = JoinSet::new();
    let mut server_gone = false;
    loop {
        tokio::select! {
            message = session.next() => match message {
                Some(message) => bridged.clone().receive(message, &mut running, &mut tasks),
                None => break,
            },
            // The server is gone for good (no restart, or restarts given
            // up): the host's session ends too, so a stdio host sees it.
            () = bridged.ended() => {
                server_gone = true;
                break;
            }
            // The bridge is stopping (a signal): the server's session ends
            // as if the host had gone.
            _ = stopping.wait_for(|sessions| sessions.stopping) => break,
            Some(Ok(done)) = tasks.join_next(), if !tasks.is_empty() => {
                running.remove(&done);
            }
        }
    }
    if server_gone {
        // The requests in flight fail now: their errors reach the host
        // before its session ends.
        let answered = async { while tasks.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(CLOSE_TIME, answered).await;
    }
    tasks.abort_all();
    // Each forwarded request is dropped (and its cancellation queued for
    // the server) before the session is closed.
    while tasks.join_next().await.is_some() {}
    if let Some(client) = bridged.upstream.get() {
        let _ = tokio::time::timeout(CLOSE_TIME, client.close()).await;
    }
    settings.sessions.send_modify(|sessions| sessions.live -= 1);
}

/// A legacy host's requests, and what every host sends.
impl Bridged {
    /// Takes one message from the host.
    fn receive(
        self: Arc<Self>,
        message: HostMessage,
        running: &mut HashMap<Box<str>, AbortHandle>,
        tasks: &mut JoinSet<Box<str>>,
    ) {
        let Some(method) = message.method.as_deref() else {
            // An answer to a request of the server's.
            if let Some(id) = message.id_key() {
                let answer = match (&message.result, &message.error) {
                    (Some(result), _) => Ok(result.clone()),
                    (None, Some(error)) => Err(error.clone()),
                    (None, None) => Ok(RawValue::from_string("{}".into()).expect("JSON")),
                };
                self.host.answer(id, answer);
            }
            return;
        };
        if !message.is_request() {
            self.notified(method, message.params.as_deref());
            if method == "notifications/cancelled"
                && let Some(id) = cancelled_id(message.params.as_deref())
                && let Some(task) = running.remove(id.get())
            {
                // Dropping the forwarded request tells the server; the
                // face ends what it holds open for it.
                task.abort();
                self.outbox.close(id.get());
            }
            return;
        }
        let id: Box<str> = message.id_key().unwrap_or("null").into();
        let key = id.clone();
        let task = tasks.spawn(async move {
            let answer = self.answer(&id, &message).await;
            self.outbox.send(Some(&id), true, answer).await;
            id
        });
        running.insert(key, task);
    }

    /// A host notification: the ones the server must hear are passed on.
    fn notified(self: &Arc<Self>, method: &str, _params: Option<&RawValue>) {
        if method == "notifications/roots/list_changed"
            && let Some(client) = self.upstream.get().cloned()
        {
            tokio::spawn(async move {
                let _ = client
                    .notify_when_negotiated("notifications/roots/list_changed")
                    .await;
            });
        }
    }

    /// The response to host request `message` (id `id`).
    async fn answer(&self, id: &str, message: &HostMessage) -> Bytes {
        let method = message.method.as_deref().unwrap_or("");
        let params = message.params.as_deref();
        match method {
            "ping" => return host::result(id, "{}"),
            "initialize" => return self.initialize(id, params).await,
            _ => {}
        }
        if method == "server/discover" || modern::is_modern(params) {
            return self.answer_modern(id, method, params).await;
        }
        let client = match self
            .connected(ClientInfo::default(), Value::Null, false)
            .await
        {
            Ok(client) => client,
            Err(error) => return failure(id, &error),
        };
        if method == "logging/setLevel" {
            return self.set_level(id, &client, params).await;
        }
        self.forward(id, method, &client, params, false).await
    }

    /// `initialize`: the server reached for this host, and the host told
    /// what the server said of itself.
    async fn initialize(&self, id: &str, params: Option<&RawValue>) -> Bytes {
        #[derive(Deserialize, Default)]
        struct Initialize {
            #[serde(rename = "protocolVersion", default)]
            protocol_version: String,
            #[serde(default)]
            capabilities: Value,
            #[serde(rename = "clientInfo", default)]
            client_info: Option<HostInfo>,
        }
        #[derive(Deserialize)]
        struct HostInfo {
            name: String,
            #[serde(default)]
            version: String,
        }
        let request: Initialize = params
            .and_then(|params| serde_json::from_str(params.get()).ok())
            .unwrap_or_default();
        let client_info = match request.client_info {
            Some(host) => ClientInfo {
                name: host.name,
                version: host.version,
            },
            None => ClientInfo::default(),
        };
        let client = match self
            .connected(client_info, request.capabilities, false)
            .await
        {
            Ok(client) => client,
            Err(error) => return failure(id, &error),
        };
        let version = match SUPPORTED_PROTOCOL_VERSIONS.contains(&request.protocol_version.as_str())
        {
            true => request.protocol_version.as_str(),
            false => LATEST_PROTOCOL_VERSION,
        };
        let Some(server) = client.server() else {
            return host::error(
                id,
                ProtocolError::INTERNAL_ERROR,
                "golem-mcp bridge: the server is not initialized",
                None,
            );
        };
        let mut info = json!({"name": server.name, "version": server.version});
        if let Some(title) = &server.title {
            info["title"] = json!(title);
        }
        let mut result = json!({
            "protocolVersion": version,
            "capabilities": server.capabilities,
            "serverInfo": info,
        });
        if let Some(instructions) = &server.instructions {
            result["instructions"] = json!(instructions);
        }
        host::result(id, &result.to_string())
    }

    /// `logging/setLevel`, as the server's era takes it.
    async fn set_level(&self, id: &str, client: &Client, params: Option<&RawValue>) -> Bytes {
        #[derive(Deserialize)]
        struct SetLevel {
            level: LogLevel,
        }
        let level = params.and_then(|params| serde_json::from_str::<SetLevel>(params.get()).ok());
        let Some(SetLevel { level }) = level else {
            return host::error(
                id,
                ProtocolError::INVALID_PARAMS,
                "logging/setLevel needs a level: debug, info, notice, warning, error, critical, alert or emergency",
                None,
            );
        };
        match client.set_log_level(level).await {
            Ok(()) => host::result(id, "{}"),
            Err(error) => failure(id, &error),
        }
    }
}

/// The request `notifications/cancelled` gives up on.
fn cancelled_id(params: Option<&RawValue>) -> Option<Box<RawValue>> {
    #[derive(Deserialize)]
    struct Cancelled {
        #[serde(rename = "requestId")]
        request_id: Box<RawValue>,
    }
    serde_json::from_str::<Cancelled>(params?.get())
        .ok()
        .map(|cancelled| cancelled.request_id)
}
