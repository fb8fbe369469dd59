//! What a restart (`restart/mod.rs`, ADR 0026) does to a client: waits for the
//! session in use to be lost, starts the next one and its handshake, tells
//! it the session state the old server kept, and puts it in use.

use std::sync::Arc;

use serde::de::IgnoredAny;

use crate::error::Error;
use crate::session::connection::{Request, decode};
use crate::session::generation::Generation;
use crate::session::handle::{Client, WeakClient};
use crate::session::notifications::ServerNotification;
use crate::session::restart::Revive;

/// How long a restart waits for the new server to acknowledge the
/// subscriptions of a modern connection.
const LISTEN_AGAIN_TIME: std::time::Duration = std::time::Duration::from_secs(10);

impl Revive for WeakClient {
    async fn lost(&self) -> Option<String> {
        // Only the connection is held while waiting: dropping the client
        // ends the wait (the task is aborted with it).
        let connection = self.upgrade()?.generation().connection().clone();
        let lost = connection.ended().await?;
        Some(lost.to_string())
    }

    async fn start_again(&self, generation: u64) -> Result<(), Error> {
        match self.upgrade() {
            Some(client) => client.start_again(generation).await,
            None => Err(Error::Closed {
                operation: "restart".into(),
            }),
        }
    }

    fn publish(&self, notification: ServerNotification, last: bool) {
        if let Some(client) = self.upgrade() {
            client.hub().publish(notification);
            if last {
                client.hub().end();
            }
        }
    }
}

impl Client {
    /// Remembers the log level asked for, for a new generation.
    pub(crate) fn remember_log_level(&self, level: &str) {
        self.resume().log_level = Some(level.to_owned());
    }

    /// Remembers (or forgets) a legacy resource subscription, for a new
    /// generation.
    pub(crate) fn remember_subscription(&self, uri: &str, subscribed: bool) {
        let mut resume = self.resume();
        if subscribed {
            resume.subscriptions.insert(uri.to_owned());
        } else {
            resume.subscriptions.remove(uri);
        }
    }

    /// Starts the server again as session `generation`, hands it what the
    /// old one was told, and puts it in use; a session that gets no
    /// further is ended with its server.
    async fn start_again(&self, generation: u64) -> Result<(), Error> {
        const OPERATION: &str = "restart";
        // The lost server is ended first, with its whole process group (a
        // child that still holds a port or a lock must not meet the new
        // one), and its listen says nothing more.
        let lost = self.generation();
        lost.stop_listening();
        let _ = lost.close_transport().await;
        drop(lost);
        let session = match self.reopen(generation) {
            Some(Ok(session)) => Arc::new(session),
            Some(Err(source)) => return Err(Error::transport(OPERATION, source)),
            None => {
                return Err(Error::NotSupported {
                    operation: OPERATION.into(),
                    detail: "the transport cannot start its server again".into(),
                });
            }
        };
        let within = self
            .restarts()
            .map(|restarts| restarts.handshake_timeout())
            .unwrap_or_default();
        let ready = match tokio::time::timeout(within, self.handshake(&session)).await {
            Ok(Ok(())) => self.same_revision(&session),
            Ok(Err(error)) => Err(error),
            // The request the server never answered: the probe, when the
            // restarted server ignores it for longer than the bound.
            Err(_) => Err(Error::Timeout {
                operation: session.waiting_on().unwrap_or("initialize").into(),
                after: within,
                stderr_tail: String::new(),
            }),
        };
        let told = match ready {
            Ok(()) => self.tell_again(&session).await,
            Err(error) => Err(error),
        };
        if let Err(error) = told {
            discard(&session).await;
            return Err(error);
        }
        if let Err(session) = self.install(session) {
            discard(&session).await;
            return Err(Error::Closed {
                operation: OPERATION.into(),
            });
        }
        Ok(())
    }

    /// Fails when the restarted server speaks another revision than the
    /// first: what the client learnt of the server would no longer hold.
    fn same_revision(&self, session: &Generation) -> Result<(), Error> {
        let (Some(first), Some(now)) = (self.server(), session.server_info()) else {
            return Ok(());
        };
        if first.protocol_version == now.protocol_version {
            return Ok(());
        }
        Err(Error::invalid_response(
            "initialize",
            format!(
                "the restarted server speaks protocol {}, the first spoke {}",
                now.protocol_version, first.protocol_version
            ),
        ))
    }

    /// Tells the new session what the old one was told: the log level
    /// (named by every modern request; `logging/setLevel` for a legacy
    /// server) and the legacy resource subscriptions. A modern listen is
    /// opened again by the session's own listener, and waited for (within
    /// [`LISTEN_AGAIN_TIME`]), so that what comes after `Restarted` is
    /// heard.
    pub(in crate::session) async fn tell_again(&self, session: &Generation) -> Result<(), Error> {
        let resume = self.resume().clone();
        let connection = session.connection();
        if connection.modern().is_some() {
            if let Some(level) = &resume.log_level {
                connection.set_log_level(level);
            }
            // The session's listener opens the listen; it is back once the
            // server acknowledged it (not a failed restart if it is not).
            if let Some(generation) = self.listening().wanted_generation() {
                let acknowledged = tokio::time::timeout(
                    LISTEN_AGAIN_TIME,
                    self.listening().acknowledged(generation),
                )
                .await;
                if !matches!(acknowledged, Ok(Ok(_))) {
                    tracing::warn!(
                        "mcp: the restarted server did not acknowledge the subscriptions again"
                    );
                }
            }
            return Ok(());
        }
        let level = resume.log_level.map(|level| {
            (
                "logging/setLevel".to_owned(),
                "logging/setLevel",
                serde_json::json!({ "level": level }),
            )
        });
        let subscriptions = resume.subscriptions.iter().map(|uri| {
            (
                format!("resources/subscribe {uri}"),
                "resources/subscribe",
                serde_json::json!({ "uri": uri }),
            )
        });
        for (operation, method, params) in level.into_iter().chain(subscriptions) {
            let told = match connection
                .exchange(&operation, &Request::new(method, &params), None)
                .await
            {
                Ok(reply) => decode::<IgnoredAny>(&operation, reply).map(drop),
                Err(error) => Err(error),
            };
            match told {
                Ok(()) => {}
                // The new server is lost too: this attempt failed.
                Err(error @ (Error::Transport { .. } | Error::Closed { .. })) => return Err(error),
                // It answered, and refused: the session is up without it.
                Err(error) => {
                    tracing::warn!(%error, "mcp: the restarted server refused what the lost one was told")
                }
            }
        }
        Ok(())
    }
}

/// Ends a session that will not be used, and its server.
async fn discard(session: &Generation) {
    session.end();
    let _ = session.close_transport().await;
}
