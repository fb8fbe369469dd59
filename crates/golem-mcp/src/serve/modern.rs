//! What a 2026-07-28 host needs of a bridge beyond forwarding: its
//! per-request envelope read (`_meta`'s revision, capabilities, identity,
//! log level), `server/discover` answered from what the client learned of
//! the server, every result marked with its `resultType` (and the cache
//! hints lists and reads must carry), and the server's requests turned into
//! multi-round-trip answers: a call that needs the host's input is parked
//! and answered `input_required`; the host's retry, naming the parked call
//! by its `requestState`, hands the answers over and waits for the rest.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

use crate::error::Error;
use crate::serve::host::{self, Answer, random_hex};
use crate::session::notifications::LogLevel;
use crate::session::protocol::{ClientInfo, MODERN_PROTOCOL_VERSIONS, ServerInfo};
use crate::wire::jsonrpc::ProtocolError;

/// `UnsupportedProtocolVersion`.
const UNSUPPORTED_VERSION: i64 = -32022;

/// How many calls may wait for a host's input at once (no more than the
/// server's requests the client handles at once: each parked call holds
/// one), and for how long.
const MAX_PARKED: usize = 16;
const PARKED_FOR: Duration = Duration::from_secs(600);

/// A modern request's envelope: what `params._meta` says of the host.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    pub(crate) capabilities: Value,
    pub(crate) client_info: ClientInfo,
    pub(crate) log_level: Option<LogLevel>,
}

#[derive(Deserialize)]
struct WithMeta {
    #[serde(rename = "_meta", default)]
    meta: Option<Meta>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(rename = "io.modelcontextprotocol/protocolVersion", default)]
    version: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities", default)]
    capabilities: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/clientInfo", default)]
    client_info: Option<Value>,
    #[serde(rename = "io.modelcontextprotocol/logLevel", default)]
    log_level: Option<Value>,
}

/// Whether `params` carry a modern envelope (a revision in `_meta`).
pub(crate) fn is_modern(params: Option<&RawValue>) -> bool {
    params.is_some_and(|params| {
        params
            .get()
            .contains("io.modelcontextprotocol/protocolVersion")
    })
}

/// The envelope of a modern request, or the JSON-RPC error it gets
/// (`-32602` for a missing or ill-typed member, `-32022` for a revision
/// not served).
pub(crate) fn envelope(
    params: Option<&RawValue>,
) -> Result<Envelope, (i64, String, Option<String>)> {
    let invalid = |why: &str| (ProtocolError::INVALID_PARAMS, why.to_owned(), None);
    let meta = params
        .and_then(|params| serde_json::from_str::<WithMeta>(params.get()).ok())
        .and_then(|with| with.meta)
        .ok_or_else(|| invalid("the request has no _meta envelope"))?;
    let Some(Value::String(version)) = meta.version else {
        return Err(invalid(
            "_meta lacks io.modelcontextprotocol/protocolVersion (a string)",
        ));
    };
    let Some(capabilities @ Value::Object(_)) = meta.capabilities else {
        return Err(invalid(
            "_meta lacks io.modelcontextprotocol/clientCapabilities (an object)",
        ));
    };
    if !MODERN_PROTOCOL_VERSIONS.contains(&version.as_str()) {
        let data = json!({"supported": MODERN_PROTOCOL_VERSIONS, "requested": version});
        return Err((
            UNSUPPORTED_VERSION,
            "Unsupported protocol version".into(),
            Some(data.to_string()),
        ));
    }
    let log_level = match meta.log_level {
        None => None,
        Some(Value::String(level)) => Some(
            level
                .parse()
                .map_err(|_| invalid("io.modelcontextprotocol/logLevel is not a log level"))?,
        ),
        Some(_) => {
            return Err(invalid(
                "io.modelcontextprotocol/logLevel is not a log level",
            ));
        }
    };
    let client_info = meta
        .client_info
        .and_then(|info| {
            Some(ClientInfo {
                name: info.get("name")?.as_str()?.to_owned(),
                version: info
                    .get("version")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            })
        })
        .unwrap_or_default();
    Ok(Envelope {
        capabilities,
        client_info,
        log_level,
    })
}

/// The `server/discover` result for the server the client reached.
pub(crate) fn discover(server: &ServerInfo) -> String {
    let mut info = json!({"name": server.name, "version": server.version});
    if let Some(title) = &server.title {
        info["title"] = json!(title);
    }
    let mut result = json!({
        "resultType": "complete",
        "supportedVersions": MODERN_PROTOCOL_VERSIONS,
        "capabilities": server.capabilities,
        "_meta": {"io.modelcontextprotocol/serverInfo": info},
        "ttlMs": 0,
        "cacheScope": "private",
    });
    if let Some(instructions) = &server.instructions {
        result["instructions"] = json!(instructions);
    }
    result.to_string()
}

/// The methods whose complete results carry cache hints.
fn cacheable(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/templates/list"
            | "resources/read"
    )
}

/// `result` (of `method`) as a modern host reads it: a legacy server's
/// result gets `resultType` and, for lists and reads, cache hints that
/// keep nothing; a modern server's is left as it is.
pub(crate) fn complete(method: &str, result: &str) -> String {
    let members = serde_json::from_str::<HashMap<&str, &RawValue>>(result).unwrap_or_default();
    let mut added = String::new();
    if !members.contains_key("resultType") {
        added.push_str(r#""resultType":"complete","#);
    }
    if cacheable(method) && !members.contains_key("ttlMs") {
        added.push_str(r#""ttlMs":0,"cacheScope":"private","#);
    }
    if added.is_empty() {
        return result.to_owned();
    }
    let inside = result.trim().trim_start_matches('{');
    match inside.trim_start().starts_with('}') {
        // `{}`: no member to put a comma before.
        true => format!("{{{}}}", added.trim_end_matches(',')),
        false => format!("{{{added}{inside}"),
    }
}

/// What a call running for a modern host tells the one waiting for it.
pub(crate) enum Event {
    /// The server asks the host `method` with `params`.
    Ask {
        method: String,
        params: String,
        reply: oneshot::Sender<Answer>,
    },
    /// The call's outcome.
    Done(Result<Box<RawValue>, Error>),
}

/// A call parked while the host answers its questions.
struct Parked {
    events: mpsc::Receiver<Event>,
    asked: HashMap<String, oneshot::Sender<Answer>>,
    pending: serde_json::Map<String, Value>,
    reporting: Reporting,
    task: AbortHandle,
    since: Instant,
}

/// Where a call's progress goes: the host request of its current round
/// (each retry is a request of its own) and that request's token.
#[derive(Debug)]
pub(crate) struct ProgressTarget {
    pub(crate) related: Box<str>,
    pub(crate) token: Option<Box<RawValue>>,
}

/// A call's [`ProgressTarget`], moved on by each retry.
pub(crate) type Reporting = std::sync::Arc<Mutex<ProgressTarget>>;

/// The calls of a bridge's modern hosts: those running (so that a server
/// request finds its call) and those parked.
#[derive(Default)]
pub(crate) struct Rounds {
    running: Mutex<Vec<(u64, mpsc::Sender<Event>)>>,
    parked: Mutex<HashMap<String, Parked>>,
    next: AtomicU64,
}

/// A call in flight for a modern host, as its driver holds it.
pub(crate) struct Call {
    pub(crate) events: mpsc::Receiver<Event>,
    pub(crate) task: AbortHandle,
    /// The questions waiting for the host's answers, by key: where each
    /// answer goes, and the question as the host was shown it.
    asked: HashMap<String, oneshot::Sender<Answer>>,
    pending: serde_json::Map<String, Value>,
    reporting: Reporting,
}

impl Rounds {
    /// Registers a new call: the sender its questions go through, and its
    /// number (to forget it by).
    pub(crate) fn begin(&self) -> (u64, mpsc::Sender<Event>, mpsc::Receiver<Event>) {
        self.expire();
        let (sender, receiver) = mpsc::channel(16);
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock_running().push((number, sender.clone()));
        (number, sender, receiver)
    }

    /// Forgets call `number` once it is done.
    pub(crate) fn end(&self, number: u64) {
        self.lock_running()
            .retain(|(running, _)| *running != number);
    }

    /// The newest call running, for a server request that came without
    /// one (a legacy server's requests arrive beside its calls).
    pub(crate) fn newest(&self) -> Option<mpsc::Sender<Event>> {
        self.lock_running().last().map(|(_, sender)| sender.clone())
    }

    /// A driver for a started call.
    pub(crate) fn call(
        events: mpsc::Receiver<Event>,
        task: AbortHandle,
        reporting: Reporting,
    ) -> Call {
        Call {
            events,
            task,
            asked: HashMap::new(),
            pending: serde_json::Map::new(),
            reporting,
        }
    }

    /// The parked call `state` names, its questions answered by
    /// `responses` (the retry's `inputResponses`), its progress now
    /// reported to the retry (`progress`).
    pub(crate) fn resume(
        &self,
        state: &str,
        responses: Option<&RawValue>,
        progress: ProgressTarget,
    ) -> Option<Call> {
        self.expire();
        let parked = self.lock_parked().remove(state)?;
        *parked
            .reporting
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = progress;
        let mut call = Call {
            events: parked.events,
            task: parked.task,
            asked: parked.asked,
            pending: parked.pending,
            reporting: parked.reporting,
        };
        let responses = responses
            .and_then(|responses| {
                serde_json::from_str::<HashMap<String, Box<RawValue>>>(responses.get()).ok()
            })
            .unwrap_or_default();
        for (key, response) in responses {
            if let Some(reply) = call.asked.remove(&key) {
                call.pending.remove(&key);
                let _ = reply.send(Ok(response));
            }
        }
        Some(call)
    }

    /// Drives `call` until it is done (its response) or asks the host
    /// something (an `input_required` answer, the call parked). `finish`
    /// makes the response of its outcome.
    pub(crate) async fn drive(
        &self,
        id: &str,
        mut call: Call,
        finish: impl FnOnce(Result<Box<RawValue>, Error>) -> Bytes,
    ) -> Bytes {
        let mut guard = Unparked(Some(call.task.clone()));
        // Questions a retry left unanswered are asked again at once: the
        // call cannot go on without them. Otherwise wait for the call.
        if call.pending.is_empty() {
            let mut next = call.events.recv().await;
            loop {
                match next {
                    // Done: any question left is moot.
                    Some(Event::Done(outcome)) => {
                        guard.0 = None;
                        return finish(outcome);
                    }
                    Some(Event::Ask {
                        method,
                        params,
                        reply,
                    }) => {
                        let key = format!("golem-{}", self.next.fetch_add(1, Ordering::Relaxed));
                        let params = serde_json::from_str::<Value>(&params).unwrap_or(Value::Null);
                        call.pending
                            .insert(key.clone(), json!({"method": method, "params": params}));
                        call.asked.insert(key, reply);
                    }
                    None => {
                        guard.0 = None;
                        return host::error(
                            id,
                            ProtocolError::INTERNAL_ERROR,
                            "golem-mcp bridge: the call ended without an answer",
                            None,
                        );
                    }
                }
                // Questions asked together are answered in one round.
                next = match call.events.try_recv() {
                    Ok(event) => Some(event),
                    Err(_) => break,
                };
            }
        }
        let state = random_hex();
        let body = json!({
            "resultType": "input_required",
            "inputRequests": call.pending,
            "requestState": state,
        });
        guard.0 = None;
        self.park(state, call);
        host::result(id, &body.to_string())
    }

    /// Gives up the calls parked too long.
    fn expire(&self) {
        self.lock_parked().retain(|_, waiting| {
            let fresh = waiting.since.elapsed() < PARKED_FOR;
            if !fresh {
                waiting.task.abort();
            }
            fresh
        });
    }

    fn park(&self, state: String, call: Call) {
        self.expire();
        let mut parked = self.lock_parked();
        if parked.len() >= MAX_PARKED
            && let Some(oldest) = parked
                .iter()
                .min_by_key(|(_, waiting)| waiting.since)
                .map(|(state, _)| state.clone())
            && let Some(waiting) = parked.remove(&oldest)
        {
            waiting.task.abort();
        }
        parked.insert(
            state,
            Parked {
                events: call.events,
                asked: call.asked,
                pending: call.pending,
                reporting: call.reporting,
                task: call.task,
                since: Instant::now(),
            },
        );
    }

    fn lock_running(&self) -> std::sync::MutexGuard<'_, Vec<(u64, mpsc::Sender<Event>)>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_parked(&self) -> std::sync::MutexGuard<'_, HashMap<String, Parked>> {
        self.parked.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Rounds {
    /// The calls parked for a host that is gone are given up.
    fn drop(&mut self) {
        for (_, parked) in self.lock_parked().drain() {
            parked.task.abort();
        }
    }
}

/// A call's place among the running ones, given up when the call's task
/// ends, however it ends (done, cancelled, given up while parked).
pub(crate) struct Registered {
    rounds: std::sync::Arc<Rounds>,
    number: u64,
}

impl Registered {
    /// Call `number` of `rounds`, registered until this is dropped.
    pub(crate) fn new(rounds: std::sync::Arc<Rounds>, number: u64) -> Self {
        Registered { rounds, number }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.rounds.end(self.number);
    }
}

/// Aborts a call whose driver was dropped (the host cancelled) before the
/// call was done or parked.
struct Unparked(Option<AbortHandle>);

impl Drop for Unparked {
    fn drop(&mut self) {
        if let Some(task) = self.0.take() {
            task.abort();
        }
    }
}

/// The members a retry adds to its parameters.
#[derive(Deserialize)]
pub(crate) struct Retry {
    #[serde(rename = "requestState", default)]
    pub(crate) state: Option<String>,
    #[serde(rename = "inputResponses", default)]
    pub(crate) responses: Option<Box<RawValue>>,
}

/// The parameters without a retry's members, as the server is to get them
/// again.
pub(crate) fn without_retry(params: &RawValue) -> Box<RawValue> {
    host::without_members(params, &["requestState", "inputResponses"])
        .map_or_else(|_| params.to_owned(), |(kept, _)| kept)
}

tokio::task_local! {
    /// Carries a call's questions to its driver: the sender of the call
    /// running on this task, if any.
    pub(crate) static CURRENT_CALL: mpsc::Sender<Event>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_marked_complete_and_lists_keep_nothing() {
        assert_eq!(complete("tools/call", "{}"), r#"{"resultType":"complete"}"#);
        let listed = complete("tools/list", r#"{"tools":[]}"#);
        let value: Value = serde_json::from_str(&listed).expect("JSON");
        assert_eq!(value["resultType"], "complete");
        assert_eq!(value["ttlMs"], 0);
        assert_eq!(value["tools"], json!([]));
        let modern = r#"{"resultType":"complete","ttlMs":5,"cacheScope":"public","tools":[]}"#;
        assert_eq!(complete("tools/list", modern), modern);
    }

    #[test]
    fn an_envelope_needs_a_served_revision_and_capabilities() {
        let raw = |text: &str| RawValue::from_string(text.into()).expect("JSON");
        let good = raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"},"io.modelcontextprotocol/logLevel":"info"}}"#,
        );
        let read = envelope(Some(&good)).expect("an envelope");
        assert_eq!(read.client_info.name, "h");
        assert_eq!(read.log_level, Some(LogLevel::Info));
        let old = raw(
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01","io.modelcontextprotocol/clientCapabilities":{}}}"#,
        );
        assert_eq!(
            envelope(Some(&old)).map(|_| ()).expect_err("refused").0,
            UNSUPPORTED_VERSION
        );
        let bare = raw(r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#);
        assert_eq!(
            envelope(Some(&bare)).map(|_| ()).expect_err("refused").0,
            ProtocolError::INVALID_PARAMS
        );
    }

    #[test]
    fn a_retry_is_sent_on_without_its_members() {
        let params = RawValue::from_string(
            r#"{"name":"greet","requestState":"s","inputResponses":{"a":{}}}"#.into(),
        )
        .expect("JSON");
        assert_eq!(without_retry(&params).get(), r#"{"name":"greet"}"#);
    }
}
