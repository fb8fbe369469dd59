//! The request path every feature is built on: a request sent once the
//! client is live, its reply decoded; in the modern era through the
//! multi-round-trip loop (`modern/mrtr.rs`) and, for the methods whose
//! results may be kept, the cache (`modern/cache.rs`); lists followed
//! through their cursors.

use bytes::Bytes;

use crate::error::Error;
use crate::session::connection::{Request, decode};
use crate::session::generation::Generation;
use crate::session::handle::Client;
use crate::session::modern::cache;
use crate::session::modern::era::ModernMeta;
use crate::session::modern::mrtr;
use crate::session::operation::Operation;
use crate::session::paging;
use crate::session::progress::Progress;

impl Client {
    /// Sends a `ping` and waits for the answer: a liveness check. The
    /// modern era has no `ping`: there the check is a `server/discover`.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn ping(&self) -> Result<(), Error> {
        let method = match self.generation().connection.modern() {
            Some(_) => "server/discover",
            None => "ping",
        };
        // Never from the cache: a kept answer would prove nothing.
        let request = Request::new(method, &EmptyParams {});
        let _: serde::de::IgnoredAny = self.send_uncached(request, None).await?;
        Ok(())
    }

    /// Sends request `method` (about `target`, for error messages: a tool,
    /// a prompt, a URI) once the client is initialized, and reads its
    /// result: how the feature modules (`features/`) ask the server.
    /// Cancel safe (see [`Client`]).
    pub(crate) async fn request<R: serde::de::DeserializeOwned, P: serde::Serialize>(
        &self,
        method: &'static str,
        target: Option<&str>,
        params: P,
    ) -> Result<R, Error> {
        self.request_with_progress(method, target, &params, None)
            .await
    }

    /// Like [`request`](Client::request), with progress reports for it
    /// handed to `on_progress`, on the caller's task.
    pub(crate) async fn request_with_progress<R, P>(
        &self,
        method: &'static str,
        target: Option<&str>,
        params: &P,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let mut request = Request::new(method, params);
        request.name = target;
        self.send_request(request, on_progress).await
    }

    /// Sends `request` (its `name` is also what errors name) and reads
    /// its result. A legacy request is one exchange; a modern one may take
    /// several (`mrtr.rs`).
    pub(crate) async fn send_request<R, P>(
        &self,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let operation = Operation(request.method, request.name);
        let session = match self.live_now() {
            Some(session) => session,
            None => self.live(operation).await?,
        };
        if session.connection.modern().is_some() && cache::cacheable(request.method) {
            return self.send_cached(&session, request, on_progress).await;
        }
        self.run_request(&session, operation, request, on_progress, None)
            .await
    }

    /// [`send_request`](Client::send_request) for a method whose modern
    /// results may be kept (ADR 0024): a fresh kept reply is read instead
    /// of sending anything; a reply that says it stays fresh is kept.
    async fn send_cached<R, P>(
        &self,
        session: &Generation,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let operation = Operation(request.method, request.name);
        let key = serde_json::to_string(request.params)
            .map_err(|error| Error::encode(&operation.to_string(), error))?;
        let cache = &self.inner.cache;
        if let Some(reply) = cache.get(request.method, &key) {
            return decode(&operation, reply);
        }
        let ticket = cache.ticket(request.method);
        // A read is invalidated by its URI's updates.
        let uri = (request.method == "resources/read")
            .then_some(request.name)
            .flatten();
        let mut keep = |reply: &Bytes| {
            if let Some(ticket) = ticket {
                cache.store(ticket, &key, uri, reply);
            }
        };
        self.run_request(session, operation, request, on_progress, Some(&mut keep))
            .await
    }

    /// [`send_request`](Client::send_request), never from the cache.
    async fn send_uncached<R, P>(
        &self,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let operation = Operation(request.method, request.name);
        let session = self.live(operation).await?;
        self.run_request(&session, operation, request, on_progress, None)
            .await
    }

    /// Sends `request` on `generation` and reads its result; `keep` is
    /// shown a modern complete reply that needed no multi-round-trip
    /// retry. A legacy request that meets a session the server dropped is
    /// sent again once on a new session, when the transport asks for
    /// renewals (`restart/renew.rs`).
    async fn run_request<R, P>(
        &self,
        generation: &Generation,
        operation: Operation<'_>,
        request: Request<'_, P>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
        keep: Option<&mut (dyn FnMut(&Bytes) + Send)>,
    ) -> Result<R, Error>
    where
        R: serde::de::DeserializeOwned,
        P: serde::Serialize,
    {
        let connection = &generation.connection;
        if connection.modern().is_none() {
            // Read before sending: a renewal that another request finishes
            // after this one went out is not run again for it.
            let renewals = generation.renewals();
            let mut on_progress = on_progress;
            let first = connection
                .exchange(&operation, &request, reborrow(&mut on_progress))
                .await;
            let reply = match first {
                Err(error) if error.is_session_expired() && connection.renews_sessions() => {
                    // Boxed: the rare path, kept out of every call's future.
                    Box::pin(self.renew_and_resend(
                        generation,
                        renewals,
                        operation,
                        &request,
                        on_progress,
                    ))
                    .await?
                }
                reply => reply?,
            };
            return decode(&operation, reply);
        }
        // Made only for a retry in another revision: nothing is cloned on
        // the hot path.
        let remake = |version| {
            ModernMeta::new(
                version,
                &self.inner.setup.client_info,
                &self.inner.offer.modern_capabilities(),
            )
        };
        mrtr::run(
            connection,
            &*self.inner.offer,
            &operation,
            request,
            remake,
            on_progress,
            keep,
        )
        .await
    }

    /// Every item of list `method`, following its cursors (`paging.rs`).
    /// Cancel safe (see [`Client`]): dropping it abandons the page in
    /// flight (announced like any request) and the pages already read.
    pub(crate) async fn list_all<P: paging::Page>(
        &self,
        method: &'static str,
    ) -> Result<Vec<P::Item>, Error> {
        // Every page from the one server: a cursor means nothing to another.
        let client = &self.pinned(method).await?;
        paging::follow(method, paging::MAX_PAGES, |cursor| async move {
            let params = P::params(cursor.as_deref());
            let page: P = client
                .request_with_progress(method, None, &params, None)
                .await?;
            Ok(page.into_parts())
        })
        .await
    }
}

#[derive(serde::Serialize)]
struct EmptyParams {}

/// The progress observer lent for one attempt, so that a second attempt
/// may use it too.
fn reborrow<'a>(
    observer: &'a mut Option<&mut (dyn FnMut(Progress) + Send)>,
) -> Option<&'a mut (dyn FnMut(Progress) + Send)> {
    match observer {
        Some(observer) => Some(&mut **observer),
        None => None,
    }
}
