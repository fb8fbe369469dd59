//! One host's session as the faces hand it to a service: the messages the
//! host sent, in order, and a way to send it messages, each tagged with
//! the host request it belongs to so that an HTTP face can put it on that
//! request's response stream. Nothing here knows a face or a service.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::mpsc;

use crate::transports::replay::{Direction, RecordWriter};

/// How many messages from a host wait for its service before the face
/// stops reading (stdio) or answers 503 (HTTP).
pub(crate) const INBOX: usize = 64;

/// How many messages to a host wait for its face.
pub(crate) const OUTBOX: usize = 256;

/// A boxed future of a session's service.
pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What serves one host's session until the host goes.
pub(crate) trait Serves: Send + Sync + 'static {
    /// Serves `session` to its end.
    fn serve(self: Arc<Self>, session: HostSession) -> BoxFuture<()>;

    /// Ends every session being served, each as it ends when its host goes
    /// (a bridge's client closed), and resolves when they have ended.
    fn stop(self: Arc<Self>) -> BoxFuture<()> {
        Box::pin(async {})
    }
}

/// A JSON-RPC message from the host, with the members the services route
/// by read once.
#[derive(Debug)]
pub(crate) struct HostMessage {
    /// The message as the host wrote it.
    pub(crate) text: Box<str>,
    /// The id, as written (`7`, `"a"`), for requests and responses.
    pub(crate) id: Option<Box<RawValue>>,
    pub(crate) method: Option<Box<str>>,
    pub(crate) params: Option<Box<RawValue>>,
    /// A response's `result`.
    pub(crate) result: Option<Box<RawValue>>,
    /// A response's `error`.
    pub(crate) error: Option<Box<RawValue>>,
}

#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Box<RawValue>>,
    #[serde(default)]
    method: Option<Box<str>>,
    #[serde(default)]
    params: Option<Box<RawValue>>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<Box<RawValue>>,
}

impl HostMessage {
    /// Reads one JSON-RPC message; `Err` says why it is not one.
    pub(crate) fn parse(text: &str) -> Result<HostMessage, String> {
        let envelope: Envelope = serde_json::from_str(text).map_err(|error| error.to_string())?;
        // `"id": null` is no id.
        let id = envelope.id.filter(|id| id.get() != "null");
        if envelope.method.is_none() && id.is_none() {
            return Err("neither a request, a notification nor a response".into());
        }
        Ok(HostMessage {
            text: text.into(),
            id,
            method: envelope.method,
            params: envelope.params,
            result: envelope.result,
            error: envelope.error,
        })
    }

    /// Whether the host asks something (a method and an id).
    pub(crate) fn is_request(&self) -> bool {
        self.method.is_some() && self.id.is_some()
    }

    /// The id's text, the key a request's messages are routed by.
    pub(crate) fn id_key(&self) -> Option<&str> {
        self.id.as_deref().map(RawValue::get)
    }
}

/// The host's answer: its `result`, or its `error` object.
pub(crate) type Answer = Result<Box<RawValue>, Box<RawValue>>;

/// A message to the host.
#[derive(Debug)]
pub(crate) struct Outbound {
    /// The host request it belongs to (its id's text), if any.
    pub(crate) related: Option<Box<str>>,
    /// Whether it is that request's response: its last message.
    pub(crate) ends: bool,
    /// The message; empty when the request ends without one (cancelled).
    pub(crate) body: Bytes,
}

/// The way to a host, shared by a session's tasks. Every message sent is
/// recorded first when the session is recorded.
#[derive(Clone)]
pub(crate) struct Outbox {
    sender: mpsc::Sender<Outbound>,
    recorder: Option<Arc<RecordWriter>>,
}

impl Outbox {
    /// Sends `body`; `false` once the host is gone.
    pub(crate) async fn send(&self, related: Option<&str>, ends: bool, body: Bytes) -> bool {
        self.record(&body);
        self.sender
            .send(Outbound {
                related: related.map(Into::into),
                ends,
                body,
            })
            .await
            .is_ok()
    }

    /// Sends `body` if there is room now (progress, which a later report
    /// supersedes), else drops it.
    pub(crate) fn offer(&self, related: Option<&str>, body: Bytes) {
        self.record(&body);
        let _ = self.sender.try_send(Outbound {
            related: related.map(Into::into),
            ends: false,
            body,
        });
    }

    /// Says that host request `related` gets no response (it was
    /// cancelled): a face ends what it holds open for it. Nothing is sent
    /// to the host.
    pub(crate) fn close(&self, related: &str) {
        let sender = self.sender.clone();
        let end = Outbound {
            related: Some(related.into()),
            ends: true,
            body: Bytes::new(),
        };
        // Never dropped for a full queue: the face would hold the request's
        // stream open for good.
        tokio::spawn(async move {
            let _ = sender.send(end).await;
        });
    }

    fn record(&self, body: &Bytes) {
        if let Some(recorder) = &self.recorder {
            recorder.record(Direction::Server, &String::from_utf8_lossy(body));
        }
    }
}

/// One host's session: what the face reads from the host, and the way
/// back.
pub(crate) struct HostSession {
    /// The host's messages, in order; closed when the host goes.
    pub(crate) inbox: mpsc::Receiver<HostMessage>,
    pub(crate) outbox: Outbox,
    /// Where the messages are recorded, if they are.
    pub(crate) recorder: Option<Arc<RecordWriter>>,
}

/// The face's ends of a new session: where it puts the host's messages and
/// where it takes the messages to the host from.
pub(crate) struct FaceEnds {
    pub(crate) inbox: mpsc::Sender<HostMessage>,
    pub(crate) outbox: mpsc::Receiver<Outbound>,
}

/// A new session and the face's ends of it.
pub(crate) fn session(recorder: Option<Arc<RecordWriter>>) -> (HostSession, FaceEnds) {
    let (inbox_sender, inbox) = mpsc::channel(INBOX);
    let (outbox_sender, outbox) = mpsc::channel(OUTBOX);
    let session = HostSession {
        inbox,
        outbox: Outbox {
            sender: outbox_sender,
            recorder: recorder.clone(),
        },
        recorder,
    };
    (
        session,
        FaceEnds {
            inbox: inbox_sender,
            outbox,
        },
    )
}

impl HostSession {
    /// The host's next message, recorded; `None` once it is gone.
    pub(crate) async fn next(&mut self) -> Option<HostMessage> {
        let message = self.inbox.recv().await?;
        if let Some(recorder) = &self.recorder {
            recorder.record(Direction::Client, &message.text);
        }
        Some(message)
    }
}

/// JSON object members by name, their values as written.
pub(crate) type Members = HashMap<String, Box<RawValue>>;

/// `params` (a JSON object) without its top-level members `names`, every
/// other member's value byte for byte (a tool's arguments are never
/// re-encoded), and the values of those taken out, by name. `params` that
/// name none of them are returned as they are, unparsed.
pub(crate) fn without_members(
    params: &RawValue,
    names: &[&str],
) -> Result<(Box<RawValue>, Members), String> {
    let text = params.get();
    if !names
        .iter()
        .any(|name| text.contains(&format!("\"{name}\"")))
    {
        return Ok((params.to_owned(), HashMap::new()));
    }
    let mut members: Members = serde_json::from_str(text)
        .map_err(|error| format!("the params are not a JSON object: {error}"))?;
    let taken = names
        .iter()
        .filter_map(|name| members.remove_entry(*name))
        .collect();
    let kept = serde_json::value::to_raw_value(&members).map_err(|error| error.to_string())?;
    Ok((kept, taken))
}

/// A JSON-RPC response to host request `id` (its text), with `result`.
pub(crate) fn result(id: &str, result: &str) -> Bytes {
    Bytes::from(format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#
    ))
}

/// A JSON-RPC error response (`id` is `null` when unknown).
pub(crate) fn error(id: &str, code: i64, message: &str, data: Option<&str>) -> Bytes {
    let message = serde_json::to_string(message).expect("a string is JSON");
    Bytes::from(match data {
        Some(data) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message},"data":{data}}}}}"#
        ),
        None => {
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":{code},"message":{message}}}}}"#
            )
        }
    })
}

/// 128 random bits as hex (a session id, a request state): the standard
/// library's per-process random hash keys, drawn anew for each half.
pub(crate) fn random_hex() -> String {
    let half = || {
        let mut hasher =
            std::hash::BuildHasher::build_hasher(&std::collections::hash_map::RandomState::new());
        std::hash::Hasher::write_u128(
            &mut hasher,
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|since| since.as_nanos())
                .unwrap_or_default(),
        );
        std::hash::Hasher::finish(&hasher)
    };
    format!("{:016x}{:016x}", half(), half())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_keeps_its_text_and_routes_by_its_id_as_written() {
        let message = HostMessage::parse(r#"{"jsonrpc":"2.0","id":"a-1","method":"tools/list"}"#)
            .expect("ok");
        assert!(message.is_request());
        assert_eq!(message.id_key(), Some(r#""a-1""#));
        let note = HostMessage::parse(r#"{"jsonrpc":"2.0","method":"x","id":null}"#).expect("ok");
        assert!(!note.is_request());
        assert!(HostMessage::parse(r#"{"jsonrpc":"2.0"}"#).is_err());
        assert!(HostMessage::parse("nope").is_err());
    }

    #[test]
    fn members_are_taken_out_and_the_rest_kept_byte_for_byte() {
        let params = RawValue::from_string(
            r#"{"arguments":{"b": 1.50, "a":[2]},"_meta":{"x":1},"name":"t"}"#.into(),
        )
        .expect("JSON");
        let (kept, taken) = without_members(&params, &["_meta"]).expect("an object");
        assert!(
            kept.get().contains(r#""arguments":{"b": 1.50, "a":[2]}"#),
            "{kept}"
        );
        assert!(!kept.get().contains("_meta"), "{kept}");
        assert_eq!(taken["_meta"].get(), r#"{"x":1}"#);
        let untouched = without_members(&params, &["requestState"]).expect("an object");
        assert_eq!(untouched.0.get(), params.get());
    }

    #[test]
    fn random_tokens_differ() {
        assert_ne!(random_hex(), random_hex());
        assert_eq!(random_hex().len(), 32);
    }

    #[test]
    fn errors_are_json_rpc() {
        let text = error("3", -32601, "no \"such\"", Some(r#"{"a":1}"#));
        let value: serde_json::Value = serde_json::from_slice(&text).expect("JSON");
        assert_eq!(value["id"], 3);
        assert_eq!(value["error"]["message"], "no \"such\"");
        assert_eq!(value["error"]["data"]["a"], 1);
    }
}
