//! The inbound streams: each event-stream answer is read by a task of its
//! own, with its own parser, `Last-Event-ID` and resumption, and delivers
//! its messages in order. So is the standalone `GET` stream, on which a
//! server sends the requests and notifications that belong to no request
//! of the client's (sampling or elicitation it starts itself, list changes,
//! log messages).

use std::sync::Arc;
use std::time::Duration;

use golem_sse::{SseError, SseParser};
use reqwest::Method;
use reqwest::header::{ACCEPT, HeaderValue};
use tokio::sync::oneshot;

use super::client::{HttpError, Response};
use super::drain::Rest;
use super::headers::LAST_EVENT_ID;
use super::shared::{GaveUp, Shared, Standalone, addressed_to};
use super::status::{http_error, status_error};
use crate::wire::jsonrpc::{self, Route};
use crate::wire::transport::{Inbound, RequestId};
use crate::wire::transport_error::TransportError;

/// Starts reading the event stream that answers request `id`. The task is
/// registered under `id` so that the request's cancellation, or closing the
/// transport, stops it.
pub(super) fn spawn(shared: &Arc<Shared>, id: RequestId, response: Response, resumable: bool) {
    let mut streams = shared.streams();
    if shared.check_open().is_err() {
        return; // closing: nobody will read it
    }
    let task = tokio::spawn(read(shared.clone(), id, response, resumable));
    streams.insert(id, task.abort_handle());
}

/// Reads the stream to the answer, resuming it when it ends early, and
/// reports a stream that cannot deliver the answer as
/// [`Inbound::RequestFailed`].
async fn read(shared: Arc<Shared>, id: RequestId, response: Response, resumable: bool) {
    let mut stream = Stream::new(&shared, Some(id));
    stream.resumable = resumable;
    let outcome = stream.run(response).await;
    shared.streams().remove(&id);
    if let Err(error) = outcome {
        shared.deliver(Inbound::RequestFailed { id, error }).await;
    }
}

/// Opens the standalone `GET` stream once the session is initialized, on a
/// task that keeps it open (resuming or reopening it when it ends) until the
/// transport closes. A server that offers none (`405`) is left alone.
///
/// The receiver hears when the server has answered the first `GET` (or it
/// failed), so that the caller can wait for the stream before the session
/// is used: a server that sends a request outside any request of ours
/// (an elicitation from inside a tool, say) drops it while no stream is
/// open. `None` when the stream was already open or the transport closed.
pub(super) fn open_standalone(shared: &Arc<Shared>) -> Option<oneshot::Receiver<()>> {
    let mut standalone = shared.standalone();
    standalone.gave_up = None; // a new session starts from its own beginning
    start_standalone(shared, &mut standalone, None)
}

fn start_standalone(
    shared: &Arc<Shared>,
    standalone: &mut Standalone,
    resume_from: Option<String>,
) -> Option<oneshot::Receiver<()>> {
    let running = standalone
        .task
        .as_ref()
        .is_some_and(|task| !task.is_finished());
    if running || shared.check_open().is_err() {
        return None;
    }
    let (answered, first_answer) = oneshot::channel();
    let task = tokio::spawn(listen(shared.clone(), answered, resume_from));
    standalone.task = Some(task.abort_handle());
    Some(first_answer)
}

/// Opens the standalone stream again, resuming after the last event it
/// received, if it gave up after failed openings; called once a request
/// was authorized anew. A credential that expired while the client was
/// idle makes every reopening fail (`401`) until the provider authorizes
/// again, which only a request's refusal asks it to do. The stream's own
/// failures never start an authorization (with an interactive provider,
/// that would open a browser from a background task). A stream the server
/// does not offer (`405`) is not asked for again.
pub(super) fn reopen_standalone(shared: &Arc<Shared>) {
    let mut standalone = shared.standalone();
    // Under the same lock as the task's decision to give up: either it sees
    // this authorization and tries again, or it has given up and is
    // reopened here.
    standalone.authorizations += 1;
    if let Some(gave_up) = standalone.gave_up.take() {
        tracing::debug!("mcp: reopening the standalone event stream after an authorization");
        // The task that gave up returns right after saying so: it does not
        // count as running.
        standalone.task = None;
        let _ = start_standalone(shared, &mut standalone, gave_up.last_event_id);
    }
}

/// The shortest wait before reopening the standalone stream, whatever the
/// server's `retry` says: a server that closes it at once, over and over,
/// costs a request per 100 ms, not a busy loop.
const MIN_REOPEN_DELAY: Duration = Duration::from_millis(100);

/// Keeps the standalone stream open. A stream that opened and later ended
/// is reopened (resumed from its last event id) as often as the server
/// ends it: servers may close it whenever they like. Only failures to open
/// it count against [`ResumePolicy::max_attempts`](super::ResumePolicy), in
/// a row; a `405` means the server offers none.
async fn listen(shared: Arc<Shared>, answered: oneshot::Sender<()>, resume_from: Option<String>) {
    let mut stream = Stream::new(&shared, None);
    let policy = shared.resume;
    let mut answered = Some(answered);
    // The last event id from before the current parser: a stream that
    // failed and was started afresh, or an earlier task that gave up.
    let mut resume_from = resume_from;
    // Where the last reading failed (the last whole event's id), while the
    // stream has not got past it; and how often a new stream was started
    // for want of a way past an unreadable event, since a stream last
    // ended normally.
    let mut failed_at: Option<Option<String>> = None;
    let mut restarts = 0;
    loop {
        let authorizations = shared.standalone().authorizations;
        shared.prepare_authorization().await;
        let Ok(mut request) = shared.session_request(Method::GET) else {
            return; // closed
        };
        request = request.header(ACCEPT, HeaderValue::from_static("text/event-stream"));
        if let Some(last_event_id) = stream.parser.last_event_id().or(resume_from.as_deref()) {
            request = request.header(LAST_EVENT_ID, last_event_id.to_owned());
        }
        let response = request.send().await;
        if let Some(answered) = answered.take() {
            let _ = answered.send(());
        }
        match response {
            Ok(response) if response.status().is_success() => {
                stream.attempts = 0;
                match stream.read(response).await {
                    Read::Ended(_) => {
                        failed_at = None;
                        restarts = 0;
                    }
                    Read::Answered | Read::NobodyReceives => return,
                    Read::Failed(error) => {
                        // An event too large or a malformed stream: start
                        // afresh after the last event that arrived whole.
                        let whole = stream
                            .parser
                            .last_event_id()
                            .map(str::to_owned)
                            .or(resume_from.take());
                        if let Some(skipped) = stream.parser.failed_event_id() {
                            // A resumable server would send the bad event
                            // again: past it, by its own id.
                            tracing::warn!(%error, event_id = skipped, "mcp: skipped an event of the standalone stream that cannot be read");
                            resume_from = Some(skipped.to_owned());
                            failed_at = None;
                        } else if failed_at.as_ref() == Some(&whole) {
                            // It failed at the same place again, and the bad
                            // event has no id to skip it by: a new stream,
                            // from now on, rather than the same download
                            // for ever; after `max_attempts` new streams
                            // that fail too, the task gives up.
                            tracing::warn!(%error, "mcp: the standalone event stream fails at the same event again; opening a new one (events sent meanwhile are lost)");
                            restarts += 1;
                            failed_at = Some(None);
                        } else {
                            tracing::debug!(%error, "mcp: the standalone event stream failed; reopening it");
                            resume_from = whole.clone();
                            failed_at = Some(whole);
                        }
                        stream.parser = SseParser::new(shared.max_message_bytes);
                    }
                }
            }
            Ok(response) if response.status() == reqwest::StatusCode::METHOD_NOT_ALLOWED => {
                tracing::debug!("mcp: the server offers no standalone event stream");
                return;
            }
            Ok(response) => {
                stream.attempts += 1;
                tracing::debug!(status = %response.status(), "mcp: the server refused the standalone event stream");
            }
            Err(error) => {
                stream.attempts += 1;
                tracing::debug!(error = %error, "mcp: could not open the standalone event stream");
            }
        }
        if stream.attempts > policy.max_attempts || restarts > policy.max_attempts {
            let mut standalone = shared.standalone();
            if standalone.authorizations != authorizations {
                // A request was authorized while this attempt failed: the
                // next one carries the new credential.
                stream.attempts = 0;
                continue;
            }
            let last_event_id = stream
                .parser
                .last_event_id()
                .map(str::to_owned)
                .or(resume_from);
            standalone.gave_up = Some(GaveUp { last_event_id });
            tracing::warn!(
                "mcp: gave up opening the standalone event stream; the server's own requests and notifications will not arrive until a request is authorized anew or the session is renewed"
            );
            return;
        }
        let delay = stream
            .parser
            .retry()
            .unwrap_or(policy.default_retry)
            .clamp(MIN_REOPEN_DELAY, policy.max_retry.max(MIN_REOPEN_DELAY));
        tokio::time::sleep(delay).await;
    }
}

struct Stream<'s> {
    shared: &'s Shared,
    /// The request whose answer this stream carries; `None` for the
    /// standalone stream.
    id: Option<RequestId>,
    parser: SseParser,
    answered: bool,
    /// The answer, and what followed it in its chunk, until the response
    /// has ended (see `drain.rs`).
    held: Vec<bytes::Bytes>,
    /// Reconnections in a row that delivered nothing.
    attempts: u32,
    /// The `Last-Event-ID` of the last reconnection.
    resumed_from: Option<String>,
    /// Whether a broken stream may be resumed: not a modern request's (the
    /// 2026-07-28 revision has no resumption: the request is lost).
    resumable: bool,
}

/// How reading one response ended.
enum Read {
    /// It ended (cleanly, or broken with this error) without the answer.
    Ended(Option<HttpError>),
    /// It carried the answer.
    Answered,
    /// The client is gone.
    NobodyReceives,
    /// It cannot be read on (an event too large, a malformed stream).
    Failed(TransportError),
}

impl<'s> Stream<'s> {
    fn new(shared: &'s Shared, id: Option<RequestId>) -> Self {
        Stream {
            shared,
            id,
            parser: SseParser::new(shared.max_message_bytes),
            answered: false,
            held: Vec::new(),
            attempts: 0,
            resumed_from: None,
            resumable: true,
        }
    }

    async fn run(mut self, mut response: Response) -> Result<(), TransportError> {
        loop {
            let broken = match self.read(response).await {
                Read::Ended(broken) => broken,
                Read::Answered | Read::NobodyReceives => return Ok(()),
                Read::Failed(error) => return Err(error),
            };
            // A reconnection that moved the stream on to a new event id is
            // progress too, without a message: a server that answers each
            // poll with a fresh priming event and closes (SSE polling while
            // a tool runs) is waited for as long as it keeps doing so.
            if self.resumed_from.is_some()
                && self.parser.last_event_id() != self.resumed_from.as_deref()
            {
                self.attempts = 0;
            }
            // Boxed: the rare path would otherwise make every stream task's
            // future (moved into the task at each answer) a kilobyte larger.
            response = Box::pin(self.resume(broken)).await?;
        }
    }

    /// Reads one response's events to its end, or to the answer and then
    /// what is left of the response (see [`after_answer`](Self::after_answer)).
    async fn read(&mut self, mut response: Response) -> Read {
        let broken = loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let fed = self.parser.feed(&chunk);
                    if !self.deliver_events().await {
                        return Read::NobodyReceives;
                    }
                    if self.answered {
                        // What follows the answer is not read as events: a
                        // bad one cannot fail an answered request.
                        return self.after_answer(response).await;
                    }
                    if let Err(error) = fed {
                        return Read::Failed(match error {
                            SseError::TooLarge { limit } => {
                                TransportError::MessageTooLarge { limit }
                            }
                            other => TransportError::UnexpectedResponse {
                                detail: other.to_string(),
                            },
                        });
                    }
                }
                Ok(None) => break None,
                Err(error) => break Some(error),
            }
        };
        self.parser.finish();
        if !self.deliver_events().await || !self.deliver_held().await {
            return Read::NobodyReceives;
        }
        match self.answered {
            true => Read::Answered,
            false => Read::Ended(broken),
        }
    }

    /// Hands the answer over once the rest of its response is read, so
    /// that the connection is back in the pool before the caller's next
    /// request looks for one; for a short grace at most, after which the
    /// answer goes and the rest is read behind it, within bounds
    /// (`drain.rs` says why and how long).
    async fn after_answer(&mut self, response: Response) -> Read {
        let drains = &self.shared.drains;
        let mut rest = Rest::new(response);
        let ended = drains.wait_for_end(&mut rest).await;
        if !self.deliver_held().await {
            return Read::NobodyReceives;
        }
        if ended.is_none() {
            // Boxed, as `resume` is: a server that keeps its streams open
            // is the exception.
            Box::pin(drains.finish(rest)).await;
        }
        Read::Answered
    }

    /// Delivers the answer and what followed it; `false` once nobody
    /// receives.
    async fn deliver_held(&mut self) -> bool {
        for message in std::mem::take(&mut self.held) {
            if !self.shared.deliver(Inbound::Message(message)).await {
                return false;
            }
        }
        true
    }

    /// Delivers every complete event; `false` once nobody receives.
    async fn deliver_events(&mut self) -> bool {
        while let Some(event) = self.parser.next_event() {
            if event.data.is_empty() || event.event.as_deref().is_some_and(|kind| kind != "message")
            {
                continue; // a priming event (id only), or not a JSON-RPC message
            }
            let mut message = bytes::Bytes::from(event.data.into_bytes());
            let Some(id) = self.id else {
                // The standalone stream answers nothing of ours.
                self.attempts = 0;
                if !self.shared.deliver(Inbound::Message(message)).await {
                    return false;
                }
                continue;
            };
            match jsonrpc::route(&message) {
                // An error answer without an id is about a message the
                // server could not read: on this stream, this request.
                // Addressed to it, it reaches it with others in flight.
                Route::Response { raw_id: None } => {
                    self.answered = true;
                    message = addressed_to(&message, id);
                }
                Route::Response { raw_id: Some(raw) } => {
                    self.answered |= jsonrpc::our_id(raw) == Some(id);
                }
                Route::Other => {}
            }
            self.attempts = 0;
            if self.answered {
                // Delivered once the response has ended: `after_answer`.
                self.held.push(message);
                continue;
            }
            if !self.shared.deliver(Inbound::Message(message)).await {
                return false;
            }
        }
        true
    }

    /// Reconnects with `Last-Event-ID` after the server's `retry` delay, or
    /// explains why the answer is lost.
    async fn resume(&mut self, broken: Option<HttpError>) -> Result<Response, TransportError> {
        // A refusal's `Retry-After`, for the next attempt.
        let mut retry_after = None;
        if !self.resumable {
            return Err(TransportError::StreamEnded {
                detail: match broken {
                    None => "the server's event stream ended before the response (protocol 2026-07-28 has no resumption: the request is lost; send it again)".to_owned(),
                    Some(error) => format!("the server's event stream broke before the response ({}; protocol 2026-07-28 has no resumption: the request is lost; send it again)", error),
                },
            });
        }
        loop {
            let Some(last_event_id) = self.parser.last_event_id().map(str::to_owned) else {
                return Err(TransportError::StreamEnded {
                    detail: match broken {
                        None => "the server's event stream ended before the response, and gave no event id to resume from".to_owned(),
                        Some(error) => format!("the server's event stream broke before the response ({}), and gave no event id to resume from", error),
                    },
                });
            };
            let policy = self.shared.resume;
            if self.attempts >= policy.max_attempts {
                return Err(TransportError::StreamEnded {
                    detail: format!(
                        "the server's event stream ended before the response, {} resumption attempt(s) did not deliver it",
                        self.attempts
                    ),
                });
            }
            let delay = retry_after
                .take()
                .or(self.parser.retry())
                .unwrap_or(policy.default_retry)
                .min(policy.max_retry);
            self.attempts += 1;
            tracing::debug!(
                stream = %self.id.map_or("standalone".to_owned(), |id| format!("of request {id}")),
                delay_ms = delay.as_millis() as u64,
                attempt = self.attempts,
                "mcp: event stream ended early; resuming"
            );
            tokio::time::sleep(delay).await;
            self.shared.prepare_authorization().await;
            let request = self
                .shared
                .session_request(Method::GET)?
                .header(ACCEPT, HeaderValue::from_static("text/event-stream"))
                .header(LAST_EVENT_ID, last_event_id.as_str());
            self.resumed_from = Some(last_event_id);
            match request.send().await {
                Ok(response) if response.status().is_success() => return Ok(response),
                // A server restarting or overloaded (or a proxy in front of
                // it) may say no for now: tried again while attempts last.
                Ok(response)
                    if is_transient(response.status()) && self.attempts < policy.max_attempts =>
                {
                    tracing::debug!(status = %response.status(), "mcp: resuming the event stream was refused for now; retrying");
                    retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|value| value.to_str().ok())
                        .and_then(|value| value.trim().parse().ok())
                        .map(Duration::from_secs);
                }
                Ok(response) => {
                    let expired = response.status() == reqwest::StatusCode::NOT_FOUND
                        && self.shared.session().id.is_some();
                    return Err(status_error(response, expired).await);
                }
                Err(error) if self.attempts < policy.max_attempts => {
                    tracing::debug!(error = %error, "mcp: resuming the event stream failed; retrying");
                }
                Err(error) => return Err(http_error("GET (resume the event stream)", error)),
            }
        }
    }
}

/// Whether a refusal may pass if asked again later: the server erred
/// (`5xx`) or asked to slow down (`429`).
fn is_transient(status: reqwest::StatusCode) -> bool {
    status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS
}
