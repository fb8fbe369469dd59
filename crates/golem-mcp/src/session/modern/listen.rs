//! Subscriptions in the modern era (2026-07-28, ADR 0023): the
//! `subscriptions/listen` request that carries list changes and resource
//! updates, kept open for what the application asked to hear.
//!
//! The application says what it wants through the client: list changes
//! (asked for by [`Client::notifications`](crate::Client::notifications),
//! which an `McpToolset` uses) and resource URIs (by
//! [`Client::subscribe_resource`](crate::Client::subscribe_resource)).
//! Nothing is opened before something is wanted, and nothing in the
//! legacy era, where the GET stream and `resources/subscribe` do the job.
//! One task per modern client ([`run`]) keeps one listen open for the
//! whole of what is wanted. When that changes, a new listen is opened and
//! the old one is ended only once the new one is acknowledged, so nothing
//! falls between the two; when the server ends a listen (a result, an
//! error, a stream cut, its `notifications/cancelled` on stdio), it is
//! opened again after a delay that doubles from [`MIN_REOPEN_DELAY`] to
//! [`MAX_REOPEN_DELAY`] (back to the least after a listen that lasted
//! [`STEADY`]). A server that does not know the method (`-32601`) is not
//! asked again.
//!
//! The acknowledgment (`notifications/subscriptions/acknowledged`, routed
//! here by the inbound side by its subscription id) says which part of
//! the filter the server honours; what a resource subscription waits for.
//! The notifications themselves go, as every notification does, to the
//! client's broadcast.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::Error;
use crate::session::connection::{Connection, Request, decode};
use crate::wire::jsonrpc::ProtocolError;
use crate::wire::transport::RequestId;

/// The shortest wait before a listen that ended is opened again.
pub(crate) const MIN_REOPEN_DELAY: Duration = Duration::from_millis(250);
/// The longest wait before a listen that ended is opened again.
pub(crate) const MAX_REOPEN_DELAY: Duration = Duration::from_secs(30);
/// How long a listen must have lasted, acknowledged, for the next delay to
/// start from the least again.
pub(crate) const STEADY: Duration = Duration::from_secs(10);

const METHOD: &str = "subscriptions/listen";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// What a listen asks for (the specification's `SubscriptionFilter`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct Filter {
    #[serde(rename = "toolsListChanged", skip_serializing_if = "is_false")]
    pub(crate) tools: bool,
    #[serde(rename = "promptsListChanged", skip_serializing_if = "is_false")]
    pub(crate) prompts: bool,
    #[serde(rename = "resourcesListChanged", skip_serializing_if = "is_false")]
    pub(crate) resources: bool,
    #[serde(
        rename = "resourceSubscriptions",
        skip_serializing_if = "BTreeSet::is_empty"
    )]
    pub(crate) uris: BTreeSet<String>,
}

fn is_false(value: &bool) -> bool {
    !*value
}

impl Filter {
    fn is_empty(&self) -> bool {
        !self.tools && !self.prompts && !self.resources && self.uris.is_empty()
    }

    /// What of `asked` this (acknowledged) filter leaves out, in words.
    fn missing(&self, asked: &Filter) -> Vec<String> {
        let mut missing = Vec::new();
        for (wanted, honoured, name) in [
            (asked.tools, self.tools, "toolsListChanged"),
            (asked.prompts, self.prompts, "promptsListChanged"),
            (asked.resources, self.resources, "resourcesListChanged"),
        ] {
            if wanted && !honoured {
                missing.push(name.to_owned());
            }
        }
        missing.extend(asked.uris.difference(&self.uris).cloned());
        missing
    }
}

/// The acknowledgment's filter as servers send it: a flag may be `false`
/// or `null` as well as missing.
#[derive(Deserialize)]
struct AckFilter {
    #[serde(rename = "toolsListChanged", default)]
    tools: Option<bool>,
    #[serde(rename = "promptsListChanged", default)]
    prompts: Option<bool>,
    #[serde(rename = "resourcesListChanged", default)]
    resources: Option<bool>,
    #[serde(rename = "resourceSubscriptions", default)]
    uris: Option<Vec<String>>,
}

#[derive(Deserialize)]
struct AckParams {
    #[serde(rename = "_meta", default)]
    meta: Option<Value>,
    notifications: AckFilter,
}

/// What the application wants, numbered: every change gets a higher
/// number, and a listen is acknowledged for the number it was opened with.
#[derive(Debug, Clone, Default)]
struct Wanted {
    generation: u64,
    filter: Filter,
}

/// Where the listen stands, for those who wait on it.
#[derive(Debug, Clone)]
enum Status {
    /// No listen acknowledged yet.
    Waiting,
    /// The listen opened for `generation` was acknowledged with `filter`.
    Acknowledged { generation: u64, filter: Filter },
    /// The server does not serve `subscriptions/listen`.
    Refused(String),
    /// The connection ended.
    Ended,
}

/// One event of one listen.
enum Event {
    Acknowledged(Filter),
    Ended(Result<Bytes, Error>),
}

/// One client's subscriptions: what is wanted, the listens open (by id,
/// for their acknowledgments), and what was acknowledged.
pub(crate) struct Listening {
    wanted: watch::Sender<Wanted>,
    status: watch::Sender<Status>,
    /// By connection and request id: a restarted server's connection
    /// numbers its requests from 1 again (ADR 0026).
    open: Mutex<HashMap<ListenKey, mpsc::Sender<Event>>>,
}

impl Default for Listening {
    fn default() -> Self {
        Listening {
            wanted: watch::channel(Wanted::default()).0,
            status: watch::channel(Status::Waiting).0,
            open: Mutex::new(HashMap::new()),
        }
    }
}

impl Listening {
    fn open(&self) -> MutexGuard<'_, HashMap<ListenKey, mpsc::Sender<Event>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks for the server's tool, prompt and resource list changes.
    pub(crate) fn want_list_changes(&self) {
        self.wanted.send_if_modified(|wanted| {
            let filter = &mut wanted.filter;
            if filter.tools && filter.prompts && filter.resources {
                return false;
            }
            (filter.tools, filter.prompts, filter.resources) = (true, true, true);
            wanted.generation += 1;
            true
        });
    }

    /// Asks for the updates of `uri`; returns the number of the want that
    /// includes it.
    pub(crate) fn want_uri(&self, uri: &str) -> u64 {
        let mut generation = 0;
        self.wanted.send_if_modified(|wanted| {
            let added = wanted.filter.uris.insert(uri.to_owned());
            if added {
                wanted.generation += 1;
            }
            generation = wanted.generation;
            added
        });
        generation
    }

    /// Stops asking for the updates of `uri`.
    pub(crate) fn unwant_uri(&self, uri: &str) {
        self.wanted.send_if_modified(|wanted| {
            let removed = wanted.filter.uris.remove(uri);
            if removed {
                wanted.generation += 1;
            }
            removed
        });
    }

    /// Forgets what the last connection's server acknowledged: a new
    /// connection (a restarted server, ADR 0026) starts from nothing.
    pub(crate) fn reset(&self) {
        self.status.send_replace(Status::Waiting);
    }

    /// The number of what is wanted now, `None` when nothing is.
    pub(crate) fn wanted_generation(&self) -> Option<u64> {
        let wanted = self.wanted.borrow();
        (!wanted.filter.is_empty()).then_some(wanted.generation)
    }

    /// Waits until a listen opened for want `generation` or a later one is
    /// acknowledged, and returns what the server honours; `Err` (why, in
    /// words) when it never will be. Unbounded: the caller sets the limit.
    pub(crate) async fn acknowledged(&self, generation: u64) -> Result<Filter, String> {
        let mut status = self.status.subscribe();
        loop {
            match &*status.borrow_and_update() {
                Status::Acknowledged {
                    generation: acknowledged,
                    filter,
                } if *acknowledged >= generation => return Ok(filter.clone()),
                Status::Refused(why) => return Err(why.clone()),
                Status::Ended => return Err("the connection ended".into()),
                _ => {}
            }
            if status.changed().await.is_err() {
                return Err("the connection ended".into());
            }
        }
    }

    /// Routes an acknowledgment (the inbound side's, read on `connection`):
    /// to the listen its subscription id names, if it is one of ours.
    pub(crate) fn acknowledge(&self, connection: &Connection, params: Option<&str>) {
        let Some(params) = params.and_then(|params| serde_json::from_str::<AckParams>(params).ok())
        else {
            tracing::debug!("mcp: dropped a malformed subscription acknowledgment");
            return;
        };
        let id = params
            .meta
            .as_ref()
            .and_then(|meta| meta.get(SUBSCRIPTION_ID))
            .and_then(Value::as_u64);
        let Some(events) = id.and_then(|id| self.open().get(&key(connection, id)).cloned()) else {
            tracing::debug!(?id, "mcp: dropped an acknowledgment of no listen of ours");
            return;
        };
        let AckFilter {
            tools,
            prompts,
            resources,
            uris,
        } = params.notifications;
        let filter = Filter {
            tools: tools == Some(true),
            prompts: prompts == Some(true),
            resources: resources == Some(true),
            uris: uris.unwrap_or_default().into_iter().collect(),
        };
        // Room for one acknowledgment and the end: a second one is dropped.
        let _ = events.try_send(Event::Acknowledged(filter));
    }

    /// Whether request `id` is a listen of ours (the only requests a modern
    /// server may cancel).
    pub(crate) fn is_listen(&self, connection: &Connection, id: RequestId) -> bool {
        self.open().contains_key(&key(connection, id))
    }
}

/// Keeps a listen open for what is wanted until the connection ends: the
/// task a modern client runs (aborted when the client closes or goes away).
pub(crate) async fn run(connection: Arc<Connection>, listening: Arc<Listening>) {
    let mut wanted = listening.wanted.subscribe();
    // The listen acknowledged, and one opened since and not yet.
    let mut current: Option<Open> = None;
    let mut pending: Option<Open> = None;
    let mut delay = MIN_REOPEN_DELAY;
    let mut reopen_at: Option<Instant> = None;
    let mut refused = false;
    loop {
        let want = wanted.borrow_and_update().clone();
        let newest = pending
            .as_ref()
            .or(current.as_ref())
            .map(|open| open.generation);
        if !refused && reopen_at.is_none() && newest != Some(want.generation) {
            if want.filter.is_empty() {
                // Nothing wanted any more: end what is open.
                (current, pending) = (None, None);
            } else {
                pending = Some(Open::start(&connection, &listening, want));
            }
        }
        let ended = tokio::select! {
            changed = wanted.changed() => {
                if changed.is_err() {
                    return;
                }
                // The application asked for something new: at once.
                reopen_at = None;
                None
            }
            () = sleep_until(reopen_at) => {
                reopen_at = None;
                None
            }
            event = next(&mut pending) => match event {
                Event::Acknowledged(filter) => {
                    if let Some(mut open) = pending.take() {
                        report_missing(&open.filter, &filter);
                        open.acknowledged_at = Some(Instant::now());
                        listening.status.send_replace(Status::Acknowledged {
                            generation: open.generation,
                            filter,
                        });
                        // The one it replaces ends now (its cancellation is sent).
                        current = Some(open);
                    }
                    None
                }
                Event::Ended(outcome) => pending.take().map(|open| (open, outcome)),
            },
            event = next(&mut current) => match event {
                // A second acknowledgment changes nothing.
                Event::Acknowledged(_) => None,
                Event::Ended(outcome) => current.take().map(|open| (open, outcome)),
            },
        };
        let Some((open, outcome)) = ended else {
            continue;
        };
        match why_it_ended(&connection, outcome) {
            End::Connection => {
                listening.status.send_replace(Status::Ended);
                return;
            }
            End::Refused(why) => {
                tracing::warn!(%why, "mcp: the server does not serve subscriptions/listen; its list changes and resource updates will not arrive");
                refused = true;
                (current, pending) = (None, None);
                listening.status.send_replace(Status::Refused(why));
            }
            End::Reopen(why) => {
                if open
                    .acknowledged_at
                    .is_some_and(|at| at.elapsed() >= STEADY)
                {
                    delay = MIN_REOPEN_DELAY;
                }
                tracing::debug!(%why, ?delay, "mcp: a subscriptions/listen ended; opening it again");
                // A newer listen still on its way carries on; otherwise the
                // newest want is asked for again after the delay.
                if pending.is_none() {
                    reopen_at = Some(Instant::now() + delay);
                }
                delay = (delay * 2).min(MAX_REOPEN_DELAY);
            }
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The next event of a listen; never, when there is none.
async fn next(open: &mut Option<Open>) -> Event {
    match open {
        Some(open) => match open.events.recv().await {
            Some(event) => event,
            // The listen's task always says how it ended before it stops.
            None => Event::Ended(Err(Error::invalid_response(METHOD, "the listen stopped"))),
        },
        None => std::future::pending().await,
    }
}

fn report_missing(asked: &Filter, acknowledged: &Filter) {
    let missing = acknowledged.missing(asked);
    if !missing.is_empty() {
        tracing::debug!(
            ?missing,
            "mcp: the server honours less than was asked of subscriptions/listen"
        );
    }
}

enum End {
    /// The connection is over: nothing more to listen on.
    Connection,
    /// The server does not know the method.
    Refused(String),
    /// Anything else: open it again.
    Reopen(String),
}

fn why_it_ended(connection: &Connection, outcome: Result<Bytes, Error>) -> End {
    if connection.check_open(&METHOD).is_err() {
        return End::Connection;
    }
    let outcome = outcome.and_then(|reply| decode::<serde::de::IgnoredAny>(&METHOD, reply));
    match outcome {
        Ok(_) => End::Reopen("the server ended it".into()),
        Err(Error::Protocol { source, .. }) if source.code == ProtocolError::METHOD_NOT_FOUND => {
            End::Refused(source.to_string())
        }
        Err(error) => End::Reopen(error.to_string()),
    }
}

/// One listen: its own task, so that its request lives until it is
/// dropped (which cancels it: `notifications/cancelled` on stdio, the
/// stream closed over HTTP).
struct Open {
    /// The connection it is sent on, kept while it is open: its address is
    /// half of the listen's key, and must not be reused meanwhile.
    connection: Arc<Connection>,
    generation: u64,
    filter: Filter,
    events: mpsc::Receiver<Event>,
    task: JoinHandle<()>,
    /// Its request id, once it has one (0 before).
    id: Arc<AtomicU64>,
    listening: Arc<Listening>,
    acknowledged_at: Option<Instant>,
}

/// A listen's key: its connection (by address) and its request id.
type ListenKey = (usize, RequestId);

fn key(connection: &Connection, id: RequestId) -> ListenKey {
    (std::ptr::from_ref(connection) as usize, id)
}

#[derive(Serialize)]
struct ListenParams<'a> {
    notifications: &'a Filter,
}

impl Open {
    fn start(connection: &Arc<Connection>, listening: &Arc<Listening>, want: Wanted) -> Open {
        let (sender, events) = mpsc::channel(2);
        let id = Arc::new(AtomicU64::new(0));
        let task = tokio::spawn({
            let connection = connection.clone();
            let listening = listening.clone();
            let filter = want.filter.clone();
            let id = id.clone();
            async move {
                let params = ListenParams {
                    notifications: &filter,
                };
                let request = Request::new(METHOD, &params);
                let outcome = connection
                    .exchange_noting_id(&METHOD, &request, |listen| {
                        id.store(listen, Ordering::Release);
                        listening
                            .open()
                            .insert(key(&connection, listen), sender.clone());
                    })
                    .await;
                let _ = sender.send(Event::Ended(outcome)).await;
            }
        });
        Open {
            connection: connection.clone(),
            generation: want.generation,
            filter: want.filter,
            events,
            task,
            id,
            listening: listening.clone(),
            acknowledged_at: None,
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.task.abort();
        let id = self.id.load(Ordering::Acquire);
        self.listening.open().remove(&key(&self.connection, id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_is_sent_with_only_what_is_asked_for() {
        let filter = Filter {
            tools: true,
            uris: BTreeSet::from(["file:///a".to_owned()]),
            ..Filter::default()
        };
        assert_eq!(
            serde_json::to_string(&ListenParams {
                notifications: &filter
            })
            .expect("encodes"),
            r#"{"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///a"]}}"#
        );
    }

    #[test]
    fn what_an_acknowledgment_leaves_out_is_named() {
        let asked = Filter {
            tools: true,
            prompts: true,
            resources: true,
            uris: BTreeSet::from(["x:a".to_owned(), "x:b".to_owned()]),
        };
        let honoured = Filter {
            tools: true,
            uris: BTreeSet::from(["x:a".to_owned()]),
            ..Filter::default()
        };
        assert_eq!(
            honoured.missing(&asked),
            ["promptsListChanged", "resourcesListChanged", "x:b"]
        );
    }

    #[tokio::test]
    async fn wants_are_numbered_and_an_acknowledgment_answers_the_wants_before_it() {
        let listening = Listening::default();
        listening.want_list_changes();
        let first = listening.want_uri("x:a");
        assert_eq!(
            listening.want_uri("x:a"),
            first,
            "the same URI again changes nothing"
        );
        let second = listening.want_uri("x:b");
        assert!(second > first);
        listening.status.send_replace(Status::Acknowledged {
            generation: second,
            filter: Filter::default(),
        });
        assert!(listening.acknowledged(first).await.is_ok());
        listening
            .status
            .send_replace(Status::Refused("Method not found".into()));
        assert_eq!(
            listening
                .acknowledged(second + 1)
                .await
                .expect_err("refused"),
            "Method not found"
        );
    }
}
