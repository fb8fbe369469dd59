//! JSON-RPC messages as the replay reads and writes them: a live message
//! classified, a recorded object's members rewritten without reordering
//! what lies inside them, answers written.

use std::collections::BTreeMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use crate::wire::jsonrpc::ProtocolError;

/// A live message, as far as the replay reads it.
pub(crate) enum Live {
    /// A request: it is answered.
    Request {
        id: Value,
        method: String,
        params: Value,
        progress_token: Option<Value>,
    },
    /// A notification or a response: nothing is sent back.
    Silent,
    /// Neither: refused.
    Invalid { id: Value, detail: &'static str },
}

/// What replay reads of a live message.
pub(crate) fn read_live(message: &Value) -> Live {
    let Some(object) = message.as_object() else {
        return Live::Invalid {
            id: Value::Null,
            detail: "the message is not a JSON object",
        };
    };
    let id = object.get("id").cloned();
    match (object.get("method"), id) {
        (Some(Value::String(method)), Some(id)) => {
            let (params, progress_token) = split_params(object.get("params"));
            Live::Request {
                id,
                method: method.clone(),
                params,
                progress_token,
            }
        }
        (Some(Value::String(_)), None) => Live::Silent,
        (None, Some(_)) if object.contains_key("result") || object.contains_key("error") => {
            Live::Silent
        }
        (_, id) => Live::Invalid {
            id: id.unwrap_or(Value::Null),
            detail: "the message is neither a request, a notification nor a response",
        },
    }
}

/// A request's params as matched (the top-level `_meta` left out, `{}`
/// when absent), and the progress token its `_meta` carried.
pub(crate) fn split_params(params: Option<&Value>) -> (Value, Option<Value>) {
    match params {
        None | Some(Value::Null) => (Value::Object(Map::new()), None),
        Some(Value::Object(params)) => {
            let mut params = params.clone();
            let token = params
                .remove("_meta")
                .and_then(|mut meta| meta.get_mut("progressToken").map(Value::take));
            (Value::Object(params), token)
        }
        Some(other) => (other.clone(), None),
    }
}

/// The members of the JSON object `object`, each as its text; none when
/// it is not an object.
pub(crate) fn members(object: &str) -> BTreeMap<String, &RawValue> {
    serde_json::from_str(object).unwrap_or_default()
}

/// The JSON object `object` with member `key` set to the JSON text
/// `value`, its other members as they were.
pub(crate) fn with_member(object: &str, key: &str, value: &str) -> String {
    let mut members: BTreeMap<String, &str> = members(object)
        .into_iter()
        .map(|(name, member)| (name, member.get()))
        .collect();
    members.insert(key.to_owned(), value);
    let members: Vec<String> = members
        .iter()
        .map(|(name, member)| format!("{}:{member}", Value::from(name.as_str())))
        .collect();
    format!("{{{}}}", members.join(","))
}

pub(crate) fn result_response(id: &Value, result: &Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string()
}

pub(crate) fn error_response(
    id: &Value,
    code: i64,
    message: String,
    data: Option<Value>,
) -> String {
    let error = ProtocolError {
        code,
        message,
        data,
    };
    json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string()
}
