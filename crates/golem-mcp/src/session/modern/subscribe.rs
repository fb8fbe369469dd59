//! What a modern client asks of the server's state for the features:
//! until when a kept list is fresh (ADR 0024), the updates of a resource
//! through the listen (ADR 0023), the log level named in every request.
//! Each is called only on a modern connection: the features match on the
//! era first.

use crate::error::Error;
use crate::session::handle::Client;
use crate::session::operation::Operation;

impl Client {
    /// Until when every kept page of list `method` is fresh (ADR 0024):
    /// `None` when none is kept (no TTL, a change announced, legacy).
    pub(crate) fn fresh_until(&self, method: &str) -> Option<std::time::Instant> {
        self.inner.cache.fresh_until(method)
    }

    /// Asks the modern server (through the listen) for the updates of
    /// `uri` and waits for its acknowledgment. Fails when the server does
    /// not honour it, does not serve `subscriptions/listen`, or does not
    /// acknowledge within `within`.
    pub(crate) async fn listen_to_uri(
        &self,
        uri: &str,
        within: std::time::Duration,
    ) -> Result<(), Error> {
        let operation = Operation("subscriptions/listen", Some(uri));
        let session = self.live(operation).await?;
        let listening = &self.inner.listening;
        let generation = listening.want_uri(uri);
        let refused = |problem: String| Error::NotSupported {
            operation: operation.to_string(),
            detail: problem,
        };
        let acknowledged = tokio::time::timeout(within, listening.acknowledged(generation)).await;
        let honoured = match acknowledged {
            Ok(Ok(filter)) => filter,
            Ok(Err(why)) => {
                listening.unwant_uri(uri);
                session.connection.check_open(&operation)?;
                return Err(refused(format!(
                    "the server does not serve subscriptions/listen ({why})"
                )));
            }
            Err(_) => {
                listening.unwant_uri(uri);
                return Err(Error::Timeout {
                    operation: operation.to_string(),
                    after: within,
                    stderr_tail: String::new(),
                });
            }
        };
        if !honoured.uris.contains(uri) {
            listening.unwant_uri(uri);
            return Err(refused(
                "the server's acknowledgment leaves this resource out: it does not offer its updates"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Stops asking the modern server for the updates of `uri`.
    pub(crate) fn stop_listening_to_uri(&self, uri: &str) -> Result<(), Error> {
        self.ready(Operation("subscriptions/listen", Some(uri)))?;
        self.inner.listening.unwant_uri(uri);
        Ok(())
    }

    /// Names `level` in every later modern request.
    pub(crate) fn set_modern_log_level(&self, level: &str) -> Result<(), Error> {
        let session = self.ready(Operation("logging/setLevel", None))?;
        // Remembered first: a new generation installed meanwhile names it
        // there (`install`).
        self.remember_log_level(level);
        session.connection.set_log_level(level);
        Ok(())
    }
}
