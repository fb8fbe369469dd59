//! Starting over with a server that dropped the session (HTTP: a `404` to
//! a request carrying the session id, with
//! `HttpConfig::reinitialize_expired_session`): the same connection, the
//! handshake run again (`handshake/mod.rs`), and what the old session was
//! told told again (`revive.rs`), as after a restart. The transport only
//! reports the expiry; it never replays the handshake itself.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde::Serialize;

use crate::error::Error;
use crate::session::connection::Request;
use crate::session::generation::Generation;
use crate::session::handle::Client;
use crate::session::notifications::ServerNotification;
use crate::session::operation::Operation;
use crate::session::progress::Progress;

/// How long a renewal may take, all its requests together: it runs on a
/// task of its own, which holds the client until it ends.
const RENEWAL_TIME: Duration = Duration::from_secs(30);

impl Client {
    /// Renews the session `generation`'s server dropped (unless another
    /// request did since `seen` renewals) and sends `request` again, once:
    /// its reply, or the error of the renewal or of the second attempt.
    ///
    /// Cancel safe: the renewal runs on a task of its own, so a caller
    /// that goes away leaves it to finish (within [`RENEWAL_TIME`]); the
    /// request sent again is abandoned as any.
    pub(in crate::session) async fn renew_and_resend<P: Serialize>(
        &self,
        generation: &Generation,
        seen: u64,
        operation: Operation<'_>,
        request: &Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<Bytes, Error> {
        let current = self.generation();
        if current.number != generation.number {
            // A restart replaced the connection meanwhile: nothing to renew
            // here; the request, sent on the ended connection, fails as
            // that connection ended.
            return generation
                .connection
                .exchange(&operation, request, on_progress)
                .await;
        }
        let client = self.clone();
        let renewal = tokio::spawn(async move {
            tokio::time::timeout(RENEWAL_TIME, client.renew_session(&current, seen)).await
        });
        match renewal.await {
            Ok(Ok(renewed)) => renewed?,
            Ok(Err(_)) => {
                return Err(Error::Timeout {
                    operation: "initialize".into(),
                    after: RENEWAL_TIME,
                    stderr_tail: String::new(),
                });
            }
            Err(error) => {
                return Err(Error::transport(
                    "initialize",
                    crate::wire::transport_error::TransportError::Other(Box::new(error)),
                ));
            }
        }
        generation
            .connection
            .exchange(&operation, request, on_progress)
            .await
    }

    /// Starts a new session on `generation`'s connection, unless one was
    /// started since `seen` renewals: the handshake again, then what the
    /// old session was told (the log level, the resource subscriptions);
    /// subscribers hear [`ServerNotification::SessionRenewed`].
    async fn renew_session(&self, generation: &Arc<Generation>, seen: u64) -> Result<(), Error> {
        let _renewal = generation.renewal.lock().await;
        if generation.renewals() != seen {
            return Ok(()); // renewed meanwhile by another request
        }
        tracing::warn!("mcp: the server dropped the session; starting a new one");
        self.initialize_again(generation).await?;
        self.tell_again(generation).await?;
        // What was kept from the old session may be stale.
        self.inner.cache.clear();
        generation.renewed();
        self.inner.hub.publish(ServerNotification::SessionRenewed);
        Ok(())
    }
}
