//! One host's bridge, what both eras' handling shares: the settings of
//! the [`Proxy`](crate::serve::Proxy) it belongs to, the client to the
//! server (opened for the host on first use, declaring the host's
//! capabilities), a host request forwarded through it, and how results,
//! errors, progress and the server's notifications are written for the
//! host.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::OnceCell;

use crate::error::Error;
use crate::serve::host::{self, Outbox};
use crate::serve::modern::{self, Rounds};
use crate::serve::tool_filter::ToolFilter;
use crate::serve::upstream::{ForwardOffer, HostRequests, UpstreamSetup};
use crate::session::handle::Client;
use crate::session::notifications::{LogLevel, ServerNotification};
use crate::session::progress::Progress;
use crate::session::protocol::{ClientInfo, ProtocolChoice};
use crate::session::restart::RestartPolicy;
use crate::wire::jsonrpc::ProtocolError;

/// What opens a client to the server for one host.
pub(crate) type Connect = dyn Fn(UpstreamSetup) -> Result<Client, Error> + Send + Sync;

/// A proxy's settings, shared by its hosts.
pub(crate) struct Settings {
    pub(crate) connect: Box<Connect>,
    pub(crate) tools: ToolFilter,
    pub(crate) restart: Option<RestartPolicy>,
    pub(crate) protocol: ProtocolChoice,
    /// The sessions being served, told to end by `stop`.
    pub(crate) sessions: tokio::sync::watch::Sender<Sessions>,
}

/// How many sessions a proxy serves, and whether it was told to stop.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sessions {
    pub(crate) live: usize,
    pub(crate) stopping: bool,
}

/// One host's bridge.
pub(crate) struct Bridged {
    pub(crate) settings: Arc<Settings>,
    pub(crate) outbox: Outbox,
    /// The server's requests asked of a legacy host.
    pub(crate) host: HostRequests,
    /// A modern host's calls.
    pub(crate) rounds: Arc<Rounds>,
    pub(crate) upstream: OnceCell<Client>,
    /// The log level last asked of the server for a modern host.
    level: Mutex<Option<LogLevel>>,
    /// Told when the client's session has ended for good.
    gone: Arc<tokio::sync::Notify>,
}

impl Bridged {
    /// A bridge for the host whose messages go out through `outbox`.
    pub(crate) fn new(settings: Arc<Settings>, outbox: Outbox) -> Self {
        Bridged {
            settings,
            host: HostRequests::new(outbox.clone()),
            outbox,
            rounds: Arc::default(),
            upstream: OnceCell::new(),
            level: Mutex::new(None),
            gone: Arc::default(),
        }
    }

    /// Resolves once the client to the server has ended for good.
    pub(crate) async fn ended(&self) {
        self.gone.notified().await;
    }

    /// The client to the server, opened (with `client_info` and
    /// `capabilities`, the host's; its requests asked through the host's
    /// calls when `modern`) and initialized on first use. A legacy host is
    /// also handed the server's notifications.
    pub(crate) async fn connected(
        &self,
        client_info: ClientInfo,
        capabilities: Value,
        modern: bool,
    ) -> Result<Client, Error> {
        let client = self
            .upstream
            .get_or_try_init(|| async {
                let offer = ForwardOffer::new(
                    capabilities,
                    self.host.clone(),
                    modern.then(|| self.rounds.clone()),
                );
                let setup = UpstreamSetup {
                    client_info,
                    protocol: self.settings.protocol.clone(),
                    restart: self.settings.restart.clone(),
                    offer: Arc::new(offer),
                };
                let client = (self.settings.connect)(setup)?;
                client.initialize_or_close().await?;
                let outbox = (!modern).then(|| self.outbox.clone());
                tokio::spawn(pass_notifications(
                    client.clone(),
                    outbox,
                    self.gone.clone(),
                ));
                Ok::<_, Error>(client)
            })
            .await?;
        Ok(client.clone())
    }

    /// Whether `level` differs from the level last asked of the server (and
    /// is now the last).
    pub(crate) fn level_changes(&self, level: LogLevel) -> bool {
        let mut last = self.level.lock().unwrap_or_else(PoisonError::into_inner);
        last.replace(level) != Some(level)
    }

    /// The refusal of a `tools/call` whose parameters cannot be read or
    /// that calls a tool the bridge does not offer.
    pub(crate) fn refused_tool(
        &self,
        id: &str,
        method: &str,
        params: Option<&RawValue>,
    ) -> Option<Bytes> {
        if method != "tools/call" {
            return None;
        }
        let refuse = |message: &str| host::error(id, ProtocolError::INVALID_PARAMS, message, None);
        match tool_call(params) {
            Err(problem) => Some(refuse(&problem)),
            Ok((name, _)) if !self.settings.tools.allows(&name) => Some(refuse(&format!(
                "Unknown tool: {name} (this bridge does not offer it)"
            ))),
            Ok(_) => None,
        }
    }

    /// Host request `method` (id `id`) sent on through `client`, its
    /// progress reports passed back; a modern host's result marked as one.
    pub(crate) async fn forward(
        &self,
        id: &str,
        method: &str,
        client: &Client,
        params: Option<&RawValue>,
        modern: bool,
    ) -> Bytes {
        if let Some(refused) = self.refused_tool(id, method, params) {
            return refused;
        }
        let (params, token) = match params.map(without_meta) {
            Some(Ok(split)) => (Some(split.0), split.1),
            Some(Err(problem)) => {
                return host::error(id, ProtocolError::INVALID_PARAMS, &problem, None);
            }
            None => (None, None),
        };
        let outbox = &self.outbox;
        let mut report = |progress: Progress| {
            if let Some(token) = &token {
                outbox.offer(Some(id), progress_notification(token, &progress));
            }
        };
        let wants_progress = token.is_some();
        let on_progress =
            wants_progress.then_some(&mut report as &mut (dyn FnMut(Progress) + Send));
        let outcome = client
            .request_raw(method, params.as_deref(), on_progress)
            .await;
        self.finish(id, method, outcome, modern)
    }

    /// The response to host request `method` (id `id`) of `outcome`: a
    /// listing without the tools not offered, a modern host's result marked
    /// as one.
    pub(crate) fn finish(
        &self,
        id: &str,
        method: &str,
        outcome: Result<Box<RawValue>, Error>,
        modern: bool,
    ) -> Bytes {
        let result = match outcome {
            Ok(result) => result,
            Err(error) => return failure(id, &error),
        };
        let mut text = std::borrow::Cow::Borrowed(result.get());
        if method == "tools/list"
            && !self.settings.tools.is_empty()
            && let Some(listed) = self.settings.tools.list(&text)
        {
            text = listed.into();
        }
        if modern {
            text = modern::complete(method, &text).into();
        }
        host::result(id, &text)
    }
}

/// Passes the server's notifications to a legacy host (`outbox`) for as
/// long as both are there, and tells `gone` when the client's session has
/// ended for good (its notifications end with it).
async fn pass_notifications(
    client: Client,
    outbox: Option<Outbox>,
    gone: Arc<tokio::sync::Notify>,
) {
    // A modern host hears list changes through its listen only: nothing is
    // asked of the server here.
    let mut notifications = match outbox {
        Some(_) => client.notifications(),
        None => client.passive_notifications(),
    };
    drop(client);
    while let Some(notification) = notifications.recv().await {
        if let Some(outbox) = &outbox
            && let Some(body) = notification_text(&notification)
            && !outbox.send(None, false, body.into()).await
        {
            return;
        }
    }
    gone.notify_one();
}

/// A server notification as the host is to read it; `None` for what the
/// host has no use for.
fn notification_text(notification: &ServerNotification) -> Option<String> {
    let (method, params) = match notification {
        ServerNotification::ToolsListChanged => ("notifications/tools/list_changed", None),
        ServerNotification::ResourcesListChanged => ("notifications/resources/list_changed", None),
        ServerNotification::PromptsListChanged => ("notifications/prompts/list_changed", None),
        ServerNotification::ResourceUpdated { uri } => (
            "notifications/resources/updated",
            Some(json!({ "uri": uri })),
        ),
        ServerNotification::ElicitationComplete { elicitation_id } => (
            "notifications/elicitation/complete",
            Some(json!({ "elicitationId": elicitation_id })),
        ),
        ServerNotification::Log(message) => {
            let mut params = json!({"level": message.level, "data": message.data});
            if let Some(logger) = &message.logger {
                params["logger"] = json!(logger);
            }
            ("notifications/message", Some(params))
        }
        ServerNotification::Restarted { .. } | ServerNotification::SessionRenewed => (
            "notifications/message",
            Some(json!({
                "level": "warning",
                "logger": "golem-mcp bridge",
                "data": "the server was lost and is reached again; a call in flight then failed",
            })),
        ),
        ServerNotification::Other { method, params } => {
            return Some(match params {
                Some(params) => {
                    json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string()
                }
                None => json!({"jsonrpc": "2.0", "method": method}).to_string(),
            });
        }
        _ => return None,
    };
    Some(match params {
        Some(params) => json!({"jsonrpc": "2.0", "method": method, "params": params}).to_string(),
        None => json!({"jsonrpc": "2.0", "method": method}).to_string(),
    })
}

/// A failed request as the host reads it: a server's JSON-RPC error as the
/// server gave it, anything else an internal error saying what failed.
pub(crate) fn failure(id: &str, error: &Error) -> Bytes {
    match error {
        Error::Protocol { source, .. } => {
            let data = source.data.as_ref().map(Value::to_string);
            host::error(id, source.code, &source.message, data.as_deref())
        }
        other => host::error(
            id,
            ProtocolError::INTERNAL_ERROR,
            &format!("golem-mcp bridge: {other}"),
            None,
        ),
    }
}

/// A `tools/call`'s parameters, read strictly (a name given twice is
/// refused: the server might read the other one): the tool's name, and its
/// arguments verbatim.
pub(crate) fn tool_call(
    params: Option<&RawValue>,
) -> Result<(String, Option<Box<RawValue>>), String> {
    #[derive(Deserialize)]
    struct Call {
        name: String,
        #[serde(default)]
        arguments: Option<Box<RawValue>>,
    }
    let params = params.ok_or("tools/call needs params with the tool's name")?;
    serde_json::from_str::<Call>(params.get())
        .map(|call| (call.name, call.arguments))
        .map_err(|error| format!("invalid tools/call params: {error}"))
}

/// The parameters without their `_meta` (the client writes its own), and
/// the host's progress token from it. Parameters without `_meta` are kept
/// as they are.
pub(crate) fn without_meta(
    params: &RawValue,
) -> Result<(Box<RawValue>, Option<Box<RawValue>>), String> {
    #[derive(Deserialize)]
    struct Meta {
        #[serde(rename = "progressToken", default)]
        token: Option<Box<RawValue>>,
    }
    let (params, mut taken) = host::without_members(params, &["_meta"])?;
    let token = taken
        .remove("_meta")
        .and_then(|meta| serde_json::from_str::<Meta>(meta.get()).ok())
        .and_then(|meta| meta.token);
    Ok((params, token))
}

/// `notifications/progress` for the host's `token`.
pub(crate) fn progress_notification(token: &RawValue, progress: &Progress) -> Bytes {
    let mut params = json!({"progress": progress.progress});
    if let Some(total) = progress.total {
        params["total"] = json!(total);
    }
    if let Some(message) = &progress.message {
        params["message"] = json!(message);
    }
    let mut text = params.to_string();
    // The token as the host wrote it.
    text.insert_str(1, &format!(r#""progressToken":{},"#, token.get()));
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{text}}}"#
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hosts_meta_is_left_out_and_its_token_kept() {
        let params = RawValue::from_string(
            r#"{"name":"echo","_meta":{"progressToken":"t-1","x":1},"arguments":{}}"#.into(),
        )
        .expect("JSON");
        let (params, token) = without_meta(&params).expect("an object");
        assert_eq!(
            token.map(|token| token.get().to_owned()),
            Some(r#""t-1""#.into())
        );
        let value: Value = serde_json::from_str(params.get()).expect("JSON");
        assert!(value.get("_meta").is_none());
        assert_eq!(value["name"], "echo");
        let plain = RawValue::from_string(r#"{"name":"echo"}"#.into()).expect("JSON");
        assert_eq!(
            without_meta(&plain).expect("ok").0.get(),
            r#"{"name":"echo"}"#
        );
    }

    #[test]
    fn progress_carries_the_hosts_token() {
        let token = RawValue::from_string("7".into()).expect("JSON");
        let text = progress_notification(&token, &Progress::new(1.0, Some(4.0), None));
        let value: Value = serde_json::from_slice(&text).expect("JSON");
        assert_eq!(value["params"]["progressToken"], 7);
        assert_eq!(value["params"]["total"], 4.0);
    }
}
