//! A 2026-07-28 host's requests: each carries its envelope (checked, and
//! its log level applied), `server/discover` is answered from what the
//! client learned of the server, `subscriptions/listen` streams the list
//! changes asked for, and a call, prompt or read that needs the host's
//! input is answered `input_required` until the host has given it. The
//! server may speak either era: the client in between does the rest.

use std::sync::{Arc, Mutex, PoisonError};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::serve::bridged::{Bridged, failure, progress_notification, without_meta};
use crate::serve::host;
use crate::serve::modern::{
    self, CURRENT_CALL, Event, ProgressTarget, Registered, Reporting, Retry, Rounds,
};
use crate::session::handle::Client;
use crate::session::notifications::ServerNotification;
use crate::session::progress::Progress;
use crate::wire::jsonrpc::ProtocolError;

use bytes::Bytes;

impl Bridged {
    /// The response to modern host request `method` (id `id`).
    pub(crate) async fn answer_modern(
        &self,
        id: &str,
        method: &str,
        params: Option<&RawValue>,
    ) -> Bytes {
        let envelope = match modern::envelope(params) {
            Ok(envelope) => envelope,
            Err((code, message, data)) => return host::error(id, code, &message, data.as_deref()),
        };
        let client = match self
            .connected(envelope.client_info, envelope.capabilities, true)
            .await
        {
            Ok(client) => client,
            Err(error) => return failure(id, &error),
        };
        if let Some(level) = envelope.log_level
            && self.level_changes(level)
            && let Err(error) = client.set_log_level(level).await
        {
            tracing::debug!(%error, "golem-mcp bridge: the server took no log level");
        }
        match method {
            "server/discover" => match client.server() {
                Some(server) => host::result(id, &modern::discover(server)),
                None => host::error(
                    id,
                    ProtocolError::INTERNAL_ERROR,
                    "golem-mcp bridge: the server is not initialized",
                    None,
                ),
            },
            "subscriptions/listen" => self.listen(id, &client, params).await,
            "tools/call" | "prompts/get" | "resources/read" => {
                self.in_rounds(id, method, client, params).await
            }
            _ => self.forward(id, method, &client, params, true).await,
        }
    }

    /// A request the server may need the host's input for: started (or, on
    /// a retry naming a parked one, resumed with the host's answers) and
    /// driven until it is done or asks again.
    async fn in_rounds(
        &self,
        id: &str,
        method: &str,
        client: Client,
        params: Option<&RawValue>,
    ) -> Bytes {
        let retry = params.and_then(|params| serde_json::from_str::<Retry>(params.get()).ok());
        let finish = |outcome| self.finish(id, method, outcome, true);
        let stripped = params.map(modern::without_retry);
        let (params, token) = match stripped.as_deref().map(without_meta) {
            Some(Ok(split)) => (Some(split.0), split.1),
            Some(Err(problem)) => {
                return host::error(id, ProtocolError::INVALID_PARAMS, &problem, None);
            }
            None => (None, None),
        };
        if let Some(Retry {
            state: Some(state),
            responses,
        }) = &retry
        {
            let progress = ProgressTarget {
                related: id.into(),
                token: token.clone(),
            };
            if let Some(call) = self.rounds.resume(state, responses.as_deref(), progress) {
                return self.rounds.drive(id, call, finish).await;
            }
            tracing::debug!("golem-mcp bridge: a retry names no parked call; calling afresh");
        }
        if let Some(refused) = self.refused_tool(id, method, stripped.as_deref()) {
            return refused;
        }
        let (number, sender, events) = self.rounds.begin();
        let rounds = self.rounds.clone();
        let outbox = self.outbox.clone();
        let method_name = method.to_owned();
        let wants_progress = token.is_some();
        let reporting: Reporting = Arc::new(Mutex::new(ProgressTarget {
            related: id.into(),
            token,
        }));
        let reported = reporting.clone();
        // Made before the task: a call aborted before it first runs is
        // forgotten too.
        let registered = Registered::new(rounds, number);
        let running = async move {
            let _registered = registered;
            // To the host request of the call's current round.
            let mut report = |progress: Progress| {
                let target = reported.lock().unwrap_or_else(PoisonError::into_inner);
                if let Some(token) = &target.token {
                    outbox.offer(
                        Some(&target.related),
                        progress_notification(token, &progress),
                    );
                }
            };
            let on_progress =
                wants_progress.then_some(&mut report as &mut (dyn FnMut(Progress) + Send));
            let outcome = client
                .request_raw(&method_name, params.as_deref(), on_progress)
                .await;
            let _ = CURRENT_CALL
                .with(|sender| sender.clone())
                .send(Event::Done(outcome))
                .await;
        };
        // The call runs on its own task: it outlives this request while it
        // waits for the host's answers.
        let task = tokio::spawn(CURRENT_CALL.scope(sender, running));
        let call = Rounds::call(events, task.abort_handle(), reporting);
        self.rounds.drive(id, call, finish).await
    }

    /// `subscriptions/listen`: acknowledged with the notifications honoured
    /// (the list changes; resource subscriptions are not bridged), then the
    /// server's list changes asked for, each naming the subscription, until
    /// the host cancels.
    async fn listen(&self, id: &str, client: &Client, params: Option<&RawValue>) -> Bytes {
        #[derive(Deserialize, Default)]
        struct Asked {
            #[serde(rename = "toolsListChanged", default)]
            tools: bool,
            #[serde(rename = "promptsListChanged", default)]
            prompts: bool,
            #[serde(rename = "resourcesListChanged", default)]
            resources: bool,
        }
        #[derive(Deserialize, Default)]
        struct Listen {
            #[serde(default)]
            notifications: Asked,
        }
        let asked = params
            .and_then(|params| serde_json::from_str::<Listen>(params.get()).ok())
            .unwrap_or_default()
            .notifications;
        let subscription: Value = serde_json::from_str(id).unwrap_or(Value::Null);
        let mut honoured = serde_json::Map::new();
        for (name, wanted) in [
            ("toolsListChanged", asked.tools),
            ("promptsListChanged", asked.prompts),
            ("resourcesListChanged", asked.resources),
        ] {
            if wanted {
                honoured.insert(name.into(), json!(true));
            }
        }
        let meta = json!({"io.modelcontextprotocol/subscriptionId": subscription});
        let acknowledged = json!({
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": meta, "notifications": honoured},
        });
        // Subscribed before the acknowledgement: nothing after it is missed.
        let mut notifications = client.notifications();
        if !self
            .outbox
            .send(Some(id), false, acknowledged.to_string().into())
            .await
        {
            return host::result(id, "{}");
        }
        while let Some(notification) = notifications.recv().await {
            let method = match notification {
                ServerNotification::ToolsListChanged if asked.tools => {
                    "notifications/tools/list_changed"
                }
                ServerNotification::PromptsListChanged if asked.prompts => {
                    "notifications/prompts/list_changed"
                }
                ServerNotification::ResourcesListChanged if asked.resources => {
                    "notifications/resources/list_changed"
                }
                _ => continue,
            };
            let changed = json!({"jsonrpc": "2.0", "method": method, "params": {"_meta": meta}});
            if !self
                .outbox
                .send(Some(id), false, changed.to_string().into())
                .await
            {
                break;
            }
        }
        // The server's side ended: the subscription ends gracefully.
        host::result(
            id,
            &json!({"resultType": "complete", "_meta": meta}).to_string(),
        )
    }
}
