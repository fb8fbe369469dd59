//! The replay's rules, as a state machine without I/O: a live client's
//! message in, the recorded server's messages out.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use crate::transports::replay::closest::{nearest, shown};
use crate::transports::replay::messages::{
    Live, error_response, members, read_live, result_response, split_params, with_member,
};
use crate::transports::replay::recording::{Direction, Recording};
use crate::wire::jsonrpc::ProtocolError;

/// Answers a live client from a recording, one message at a time.
///
/// - A live request matches a recorded client request with the same
///   `method` and the same `params` (compared as JSON values, the
///   top-level `params._meta` left out, absent params taken as `{}`);
///   `initialize` matches by method alone, as clients differ in the
///   identity they send, and `ping` is always answered `{}`.
/// - Of several matches the first unused is taken; once all are used,
///   the last again (a client may list the tools twice). A recorded
///   request that was never answered is taken only when no answered one
///   matches, and is answered with an error saying so.
/// - The answer: the server requests and notifications recorded between
///   the recorded request and its response, then the response with the
///   live request's id. A `notifications/progress` for the recorded
///   request's `progressToken` gets the live request's token (and is left
///   out when the live request asked for no progress); one for another
///   recorded request's token is left out, as it concerns a call the live
///   client did not make. Server requests get fresh ids (`"replay-1"`,
///   `"replay-2"`, …), so that they cannot collide with the client's.
///   What the server sent outside any request is not replayed.
/// - What is sent back is the recorded text (results, schemas and
///   notifications byte for byte) but for the ids and tokens rewritten.
/// - The client's notifications and its answers to those server requests
///   get nothing back.
/// - A request nothing matches gets a JSON-RPC error naming the closest
///   recorded request (`-32602` when its method was recorded with other
///   params, `-32601` when the method never was); a message that is not
///   JSON gets a parse error (`-32700`).
///
/// Responses are paired with requests by id per direction: a client
/// request's id and a server request's id never meet, even when equal.
#[derive(Debug)]
pub struct Replayer {
    requests: Vec<RecordedRequest>,
    /// Request indices by method, in recorded order.
    by_method: HashMap<String, Vec<usize>>,
    /// The server's requests and notifications, in recorded order.
    server_messages: Vec<ServerMessage>,
    /// Every recorded request's progress token, as JSON text.
    progress_tokens: Vec<String>,
    /// The last fresh id handed to a re-sent server request.
    fresh_ids: u64,
}

#[derive(Debug)]
struct RecordedRequest {
    method: String,
    /// Without `_meta`; `{}` when absent.
    params: Value,
    progress_token: Option<Value>,
    /// Where the request is in the recording.
    at: usize,
    /// Where its response is, and what it says.
    answer: Option<(usize, Answer)>,
    used: bool,
}

/// A recorded response's `result` or `error`, as recorded.
#[derive(Debug)]
enum Answer {
    Result(Box<RawValue>),
    Error(Box<RawValue>),
}

/// A request or notification the server sent.
#[derive(Debug)]
struct ServerMessage {
    /// Where it is in the recording.
    at: usize,
    text: Box<RawValue>,
    /// A server request, whose id is replaced.
    is_request: bool,
    /// A `notifications/progress`'s token.
    progress_token: Option<Value>,
}

impl Replayer {
    /// A replayer of `recording`, with none of its requests used yet.
    pub fn new(recording: &Recording) -> Self {
        let mut replayer = Replayer {
            requests: Vec::new(),
            by_method: HashMap::new(),
            server_messages: Vec::new(),
            progress_tokens: Vec::new(),
            fresh_ids: 0,
        };
        // Client requests waiting for their response, by id as JSON text:
        // `1` and `"1"` are different ids.
        let mut pending: HashMap<String, usize> = HashMap::new();
        let messages = recording.messages().iter().zip(recording.verbatim());
        for (at, (recorded, text)) in messages.enumerate() {
            let message = &recorded.message;
            let method = message.get("method").and_then(Value::as_str);
            let id = message.get("id");
            match (recorded.from, method, id) {
                (Direction::Client, Some(method), Some(id)) => {
                    let (params, progress_token) = split_params(message.get("params"));
                    if let Some(token) = &progress_token {
                        replayer.progress_tokens.push(token.to_string());
                    }
                    let index = replayer.requests.len();
                    pending.insert(id.to_string(), index);
                    replayer
                        .by_method
                        .entry(method.to_owned())
                        .or_default()
                        .push(index);
                    replayer.requests.push(RecordedRequest {
                        method: method.to_owned(),
                        params,
                        progress_token,
                        at,
                        answer: None,
                        used: false,
                    });
                }
                (Direction::Server, Some(method), id) => {
                    let progress_token = match method {
                        "notifications/progress" => {
                            message.pointer("/params/progressToken").cloned()
                        }
                        _ => None,
                    };
                    replayer.server_messages.push(ServerMessage {
                        at,
                        text: text.clone(),
                        is_request: id.is_some(),
                        progress_token,
                    });
                }
                (Direction::Server, None, Some(id)) => {
                    let members = members(text.get());
                    let answer = match (members.get("result"), members.get("error")) {
                        (Some(result), _) => Answer::Result((*result).to_owned()),
                        (None, Some(error)) => Answer::Error((*error).to_owned()),
                        (None, None) => continue,
                    };
                    if let Some(index) = pending.remove(&id.to_string()) {
                        replayer.requests[index].answer = Some((at, answer));
                    }
                }
                _ => {}
            }
        }
        replayer
    }

    /// Takes one message from the live client and returns what the
    /// recorded server sends back, in order (the response, if any, last).
    pub fn on_message(&mut self, message: &str) -> Vec<String> {
        let message: Value = match serde_json::from_str(message) {
            Ok(message) => message,
            Err(error) => {
                let detail = format!("golem-mcp replay: the message is not JSON: {error}");
                return vec![error_response(
                    &Value::Null,
                    ProtocolError::PARSE_ERROR,
                    detail,
                    None,
                )];
            }
        };
        match read_live(&message) {
            Live::Silent => Vec::new(),
            Live::Invalid { id, detail } => {
                let detail = format!("golem-mcp replay: {detail}");
                vec![error_response(
                    &id,
                    ProtocolError::INVALID_REQUEST,
                    detail,
                    None,
                )]
            }
            Live::Request { id, method, .. } if method == "ping" => {
                vec![result_response(&id, &json!({}))]
            }
            Live::Request {
                id,
                method,
                params,
                progress_token,
            } => match self.take(&method, &params) {
                Some(index) => self.replay(index, &id, progress_token.as_ref()),
                None => vec![self.unmatched(&id, &method, &params)],
            },
        }
    }

    /// The recorded request `method` with `params` answers, marked used.
    fn take(&mut self, method: &str, params: &Value) -> Option<usize> {
        let matching: Vec<usize> = self
            .by_method
            .get(method)?
            .iter()
            .copied()
            .filter(|&index| method == "initialize" || self.requests[index].params == *params)
            .collect();
        let answered = |index: &&usize| self.requests[**index].answer.is_some();
        let unused = |index: &&usize| !self.requests[**index].used;
        let chosen = matching
            .iter()
            .filter(answered)
            .find(unused)
            .or_else(|| matching.iter().rev().find(answered))
            .or_else(|| matching.iter().find(unused))
            .or_else(|| matching.last())
            .copied()?;
        self.requests[chosen].used = true;
        Some(chosen)
    }

    /// What the server sent for recorded request `index`, addressed to the
    /// live request `id`.
    fn replay(&mut self, index: usize, id: &Value, live_token: Option<&Value>) -> Vec<String> {
        let request = &self.requests[index];
        let Some((answered_at, answer)) = &request.answer else {
            let detail = format!(
                "golem-mcp replay: the recorded {} was never answered",
                described(&request.method, &request.params)
            );
            return vec![error_response(
                id,
                ProtocolError::INTERNAL_ERROR,
                detail,
                None,
            )];
        };
        let first = self
            .server_messages
            .partition_point(|sent| sent.at < request.at);
        let last = self
            .server_messages
            .partition_point(|sent| sent.at < *answered_at);
        let mut sent = Vec::with_capacity(last - first + 1);
        for message in &self.server_messages[first..last] {
            let text = message.text.get();
            if message.is_request {
                self.fresh_ids += 1;
                let fresh = format!("\"replay-{}\"", self.fresh_ids);
                sent.push(with_member(text, "id", &fresh));
                continue;
            }
            match (&message.progress_token, &request.progress_token, live_token) {
                (Some(token), Some(ours), Some(live)) if token == ours => {
                    let params = members(text)
                        .get("params")
                        .map_or("{}", |params| params.get());
                    let params = with_member(params, "progressToken", &live.to_string());
                    sent.push(with_member(text, "params", &params));
                }
                (Some(token), Some(ours), None) if token == ours => {}
                (Some(token), _, _) if self.progress_tokens.contains(&token.to_string()) => {}
                _ => sent.push(text.to_owned()),
            }
        }
        let (key, value) = match answer {
            Answer::Result(result) => ("result", result),
            Answer::Error(error) => ("error", error),
        };
        sent.push(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"{key}\":{}}}",
            value.get()
        ));
        sent
    }

    /// The error for a live request nothing recorded matches.
    fn unmatched(&self, id: &Value, method: &str, params: &Value) -> String {
        let wanted = described(method, params);
        let Some(closest) = self.closest(method, params) else {
            let detail = format!(
                "golem-mcp replay: no recorded request matches {wanted}; the recording holds no requests"
            );
            return error_response(id, ProtocolError::METHOD_NOT_FOUND, detail, None);
        };
        let code = match closest.method == method {
            true => ProtocolError::INVALID_PARAMS,
            false => ProtocolError::METHOD_NOT_FOUND,
        };
        let detail = format!(
            "golem-mcp replay: no recorded request matches {wanted}; the closest recorded one is {}",
            described(&closest.method, &closest.params)
        );
        let data = json!({"closest": {"method": closest.method, "params": closest.params}});
        error_response(id, code, detail, Some(data))
    }

    /// The recorded request nearest to `method` with `params`: of the same
    /// method, the one whose params are nearest; else the first of the
    /// method nearest in name.
    fn closest(&self, method: &str, params: &Value) -> Option<&RecordedRequest> {
        if let Some(indices) = self.by_method.get(method) {
            let texts: Vec<String> = indices
                .iter()
                .map(|&index| self.requests[index].params.to_string())
                .collect();
            let nearest = nearest(&params.to_string(), texts.iter().map(String::as_str))?;
            return Some(&self.requests[indices[nearest]]);
        }
        // Methods in recorded order, so that ties go to the first recorded.
        let mut methods: Vec<&str> = Vec::new();
        for request in &self.requests {
            if !methods.contains(&request.method.as_str()) {
                methods.push(&request.method);
            }
        }
        let nearest = nearest(method, methods.iter().copied())?;
        let first = *self.by_method.get(methods[nearest])?.first()?;
        Some(&self.requests[first])
    }
}

/// A request as an error message names it: `method {params}`, the params
/// compact and cut.
fn described(method: &str, params: &Value) -> String {
    format!("{method} {}", shown(&params.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recording of `lines`, each `client: {…}` or `server: {…}`.
    fn recording(lines: &[&str]) -> Recording {
        let mut text = String::from("{\"golem_mcp_recording\":1}\n");
        for line in lines {
            let (from, message) = line.split_once(": ").expect("from: message");
            text.push_str(&format!(
                "{{\"t_ms\":0,\"from\":\"{from}\",\"message\":{message}}}\n"
            ));
        }
        Recording::parse(&text).expect("a valid recording")
    }

    fn parsed(sent: &[String]) -> Vec<Value> {
        sent.iter()
            .map(|message| serde_json::from_str(message).expect("JSON"))
            .collect()
    }

    #[track_caller]
    fn answers(replayer: &mut Replayer, live: &str) -> Vec<Value> {
        parsed(&replayer.on_message(live))
    }

    const LISTS: &[&str] = &[
        r#"client: {"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"server: {"jsonrpc":"2.0","id":1,"result":{"tools":["first"]}}"#,
        r#"client: {"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"x":1}}}"#,
        r#"server: {"jsonrpc":"2.0","id":2,"result":{"tools":["second"]}}"#,
    ];

    #[test]
    fn matches_are_used_in_order_then_the_last_again() {
        let mut replayer = Replayer::new(&recording(LISTS));
        let first = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#,
        );
        assert_eq!(
            first,
            [json!({"jsonrpc":"2.0","id":7,"result":{"tools":["first"]}})]
        );
        let second = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":"eight","method":"tools/list"}"#,
        );
        assert_eq!(
            second,
            [json!({"jsonrpc":"2.0","id":"eight","result":{"tools":["second"]}})]
        );
        let third = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/list"}"#,
        );
        assert_eq!(third[0]["result"]["tools"], json!(["second"]));
    }

    #[test]
    fn meta_is_ignored_and_initialize_matches_by_method() {
        let mut replayer = Replayer::new(&recording(&[
            r#"client: {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"a"}}}"#,
            r#"server: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}"#,
            r#"client: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":1}}}"#,
            r#"server: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
        ]));
        let init = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"b"}}}"#,
        );
        assert_eq!(init[0]["result"]["protocolVersion"], "2025-06-18");
        let call = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","_meta":{"other":true}}}"#,
        );
        assert_eq!(
            call,
            [json!({"jsonrpc":"2.0","id":5,"result":{"content":[]}})]
        );
        let ping = answers(&mut replayer, r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#);
        assert_eq!(ping, [json!({"jsonrpc":"2.0","id":6,"result":{}})]);
        assert!(
            replayer
                .on_message(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .is_empty()
        );
    }

    #[test]
    fn progress_follows_the_live_token_and_server_requests_get_fresh_ids() {
        let lines = [
            r#"client: {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":3}}}"#,
            r#"server: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":3,"progress":1}}"#,
            r#"server: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":99,"progress":1}}"#,
            r#"client: {"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"other","_meta":{"progressToken":99}}}"#,
            r#"server: {"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{"message":"name?"}}"#,
            r#"client: {"jsonrpc":"2.0","id":0,"result":{"action":"accept"}}"#,
            r#"server: {"jsonrpc":"2.0","id":1,"method":"roots/list"}"#,
            r#"server: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}"#,
            r#"server: {"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#,
            r#"server: {"jsonrpc":"2.0","id":99,"result":{"content":[]}}"#,
        ];
        let mut replayer = Replayer::new(&recording(&lines));
        let call = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":40,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"live"}}}"#,
        );
        assert_eq!(
            call,
            [
                json!({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"live","progress":1}}),
                json!({"jsonrpc":"2.0","id":"replay-1","method":"elicitation/create","params":{"message":"name?"}}),
                json!({"jsonrpc":"2.0","id":"replay-2","method":"roots/list"}),
                json!({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}),
                json!({"jsonrpc":"2.0","id":40,"result":{"content":[]}}),
            ]
        );
        // The client's answers to them produce nothing.
        assert!(
            replayer
                .on_message(r#"{"jsonrpc":"2.0","id":"replay-1","result":{"action":"accept"}}"#)
                .is_empty()
        );

        // Without a live token the progress is left out; ids go on.
        let call = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"slow"}}"#,
        );
        let methods: Vec<&Value> = call.iter().map(|message| &message["method"]).collect();
        assert_eq!(
            methods,
            [
                &json!("elicitation/create"),
                &json!("roots/list"),
                &json!("notifications/message"),
                &Value::Null
            ]
        );
        assert_eq!(call[0]["id"], "replay-3");
    }

    #[test]
    fn server_ids_are_a_space_of_their_own() {
        // The server's request 1 and its answer from the client do not
        // answer the client's request 1.
        let mut replayer = Replayer::new(&recording(&[
            r#"client: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#,
            r#"server: {"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{}}"#,
            r#"client: {"jsonrpc":"2.0","id":1,"result":{"model":"m"}}"#,
            r#"server: {"jsonrpc":"2.0","id":1,"result":{"content":["done"]}}"#,
        ]));
        let call = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}"#,
        );
        assert_eq!(call.len(), 2);
        assert_eq!(call[0]["id"], "replay-1");
        assert_eq!(
            call[1],
            json!({"jsonrpc":"2.0","id":1,"result":{"content":["done"]}})
        );
    }

    #[test]
    fn an_unmatched_request_is_told_the_closest_recorded_one() {
        let mut replayer = Replayer::new(&recording(&[
            r#"client: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}"#,
            r#"server: {"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"client: {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1}}}"#,
            r#"server: {"jsonrpc":"2.0","id":2,"result":{}}"#,
        ]));
        let refused = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"ho"}}}"#,
        );
        let error = &refused[0]["error"];
        assert_eq!(refused[0]["id"], 3);
        assert_eq!(error["code"], -32602);
        assert_eq!(
            error["message"],
            r#"golem-mcp replay: no recorded request matches tools/call {"arguments":{"message":"ho"},"name":"echo"}; the closest recorded one is tools/call {"arguments":{"message":"hi"},"name":"echo"}"#
        );
        assert_eq!(error["data"]["closest"]["params"]["name"], "echo");

        let refused = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/cal"}"#,
        );
        assert_eq!(refused[0]["error"]["code"], -32601);
        assert_eq!(
            refused[0]["error"]["data"]["closest"]["method"],
            "tools/call"
        );
        assert!(
            refused[0]["error"]["message"]
                .as_str()
                .expect("text")
                .ends_with(r#"tools/call {"arguments":{"message":"hi"},"name":"echo"}"#)
        );

        let mut empty = Replayer::new(&recording(&[]));
        let refused = answers(
            &mut empty,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        );
        assert_eq!(refused[0]["error"]["code"], -32601);
        assert_eq!(
            refused[0]["error"]["message"],
            "golem-mcp replay: no recorded request matches tools/list {}; the recording holds no requests"
        );
    }

    #[test]
    fn not_json_is_a_parse_error_and_unanswered_requests_say_so() {
        let mut replayer = Replayer::new(&recording(&[
            r#"client: {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}"#,
        ]));
        let refused = answers(&mut replayer, "{not json");
        assert_eq!(refused[0]["id"], Value::Null);
        assert_eq!(refused[0]["error"]["code"], -32700);
        let refused = answers(&mut replayer, "[1]");
        assert_eq!(refused[0]["error"]["code"], -32600);
        let unanswered = answers(
            &mut replayer,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}"#,
        );
        assert_eq!(unanswered[0]["id"], 2);
        assert_eq!(unanswered[0]["error"]["code"], -32603);
    }
}
