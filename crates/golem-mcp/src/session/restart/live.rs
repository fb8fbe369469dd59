//! The generation in use, as a request finds it: live at once on the hot
//! path, or after the restart under way (ADR 0026); a handle pinned to one
//! generation; the new generation put in the lost one's place.

use std::sync::Arc;
use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use crate::error::Error;
use crate::session::generation::{Current, Generation};
use crate::session::handle::Client;
use crate::session::operation::Operation;
use crate::session::restart::{Restarts, Resume};
use crate::wire::transport_error::TransportError;

impl Client {
    /// The session to send requests on, once there is one: while a lost
    /// server is being restarted, waits for the restart (ADR 0026). A
    /// connection that ended otherwise fails as it ended.
    pub(in crate::session) async fn live(
        &self,
        operation: Operation<'_>,
    ) -> Result<Current<'_>, Error> {
        if let Some(session) = self.live_now() {
            return Ok(session);
        }
        let session = self.live_after_a_loss(operation).await?;
        match self.pinned {
            Some(generation) if generation != session.number => Err(Error::transport(
                &operation.to_string(),
                TransportError::Other(
                    "the server was lost and started again since this began: what it handed \
                     out (a cursor, a task) is gone with it"
                        .into(),
                ),
            )),
            _ => Ok(session),
        }
    }

    /// A handle whose requests all go to the session in use now (waiting
    /// for a restart under way first), and fail once it is replaced: for
    /// a sequence of requests that only this server understands.
    pub(crate) async fn pinned(&self, method: &'static str) -> Result<Client, Error> {
        let session = self.live(Operation(method, None)).await?;
        Ok(Client {
            inner: self.inner.clone(),
            pinned: Some(self.pinned.unwrap_or(session.number)),
        })
    }

    /// The session in use when it is ready and nothing about it needs a
    /// look: the hot path of [`live`](Client::live), without its future.
    pub(in crate::session) fn live_now(&self) -> Option<Current<'_>> {
        let session = self.current();
        (session.is_ready() && !session.connection.has_ended() && self.pinned.is_none())
            .then_some(session)
    }

    /// [`live`](Client::live) when the session in use is not ready.
    async fn live_after_a_loss(&self, operation: Operation<'_>) -> Result<Current<'_>, Error> {
        loop {
            let session = self.ready(operation)?;
            if !session.connection.has_ended() {
                return Ok(session);
            }
            let restarted = match &self.inner.restarts {
                Some(restarts) if !self.inner.closed.load(Ordering::Acquire) => {
                    restarts.replaced(session.number).await
                }
                _ => false,
            };
            if !restarted {
                // Fails as closed, or as the connection ended (the server's
                // exit status and last words).
                if self.inner.closed.load(Ordering::Acquire) {
                    return Err(Error::Closed {
                        operation: operation.to_string(),
                    });
                }
                session.connection.check_open(&operation)?;
                return Ok(session);
            }
        }
    }

    /// Puts `session` in the place of the lost one, unless the client was
    /// closed meanwhile: the last step of a restart. The results kept from
    /// the old server are dropped.
    pub(crate) fn install(&self, session: Arc<Generation>) -> Result<(), Arc<Generation>> {
        let mut current = self
            .inner
            .generation
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(session);
        }
        // The level asked for last, also while this restart was under way.
        if session.connection.modern().is_some()
            && let Some(level) = self.resume().log_level.clone()
        {
            session.connection.set_log_level(&level);
        }
        *current = session;
        drop(current);
        self.inner.cache.clear();
        Ok(())
    }

    /// Generation `number`, made like the one in use (its server started
    /// again): `None` when the client has no restart policy or the
    /// transport cannot start its server again.
    pub(crate) fn reopen(&self, number: u64) -> Option<Result<Generation, TransportError>> {
        self.inner.restarts.as_ref()?;
        self.generation().transport.next_generation(
            number,
            self.inner.offer.clone(),
            self.inner.sinks.clone(),
        )
    }

    /// What a new generation must be told again.
    pub(crate) fn resume(&self) -> std::sync::MutexGuard<'_, Resume> {
        crate::session::generation::lock(&self.inner.resume)
    }

    /// The client's restarts, when it has a restart policy.
    pub(crate) fn restarts(&self) -> Option<&Restarts> {
        self.inner.restarts.as_ref()
    }
}
