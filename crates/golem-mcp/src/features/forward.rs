//! Any request, its parameters and result as raw JSON: `request_raw`, what
//! a bridge forwards a host's requests with (an extension's method, a
//! list's page, a resource read) without knowing their types.
//!
//! The session's request path names methods with `&'static str` (its
//! spans, its cache keys and its handshake state keep them), so a method
//! only known at run time is interned: the protocol's own names map to
//! themselves, and at most [`MAX_OTHER_METHODS`] others are kept for the
//! process's life; beyond them a method is refused rather than let memory
//! grow with what a peer sends.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::Error;
use crate::session::connection::Request;
use crate::session::handle::Client;
use crate::session::progress::Progress;

/// How many method names outside the protocol's own a process interns.
pub(crate) const MAX_OTHER_METHODS: usize = 256;

/// The protocol's client-to-server request methods, every era.
const KNOWN_METHODS: &[&str] = &[
    "ping",
    "initialize",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tasks/update",
    "subscriptions/listen",
];

/// `method` as a `&'static str`, or `None` once too many unknown methods
/// were seen.
fn intern(method: &str) -> Option<&'static str> {
    if let Some(known) = KNOWN_METHODS.iter().find(|known| **known == method) {
        return Some(known);
    }
    static OTHERS: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut others = OTHERS.lock().unwrap_or_else(PoisonError::into_inner);
    let others = others.get_or_insert_with(HashSet::new);
    if let Some(kept) = others.get(method) {
        return Some(kept);
    }
    if others.len() >= MAX_OTHER_METHODS {
        return None;
    }
    // Leaked on purpose, and bounded above: the name lives as long as the
    // process's spans and caches may refer to it.
    let kept: &'static str = Box::leak(method.to_owned().into_boxed_str());
    others.insert(kept);
    Some(kept)
}

/// What a request is about, for the requests that name a target (a modern
/// HTTP request's `Mcp-Name`, and error messages).
#[derive(Deserialize)]
struct Target<'a> {
    #[serde(borrow, default)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    uri: Option<std::borrow::Cow<'a, str>>,
}

impl Client {
    /// Sends request `method` with `params` written verbatim (an object;
    /// `None` sends `{}`) and returns the result's bytes untouched: for
    /// methods this crate has no typed call for (an extension's), and for
    /// programs that forward requests they do not read.
    ///
    /// `params` must not carry a `_meta` of its own: the client writes the
    /// `_meta` the request needs (a progress token when `on_progress` is
    /// given, a modern request's reserved entries). A `tools/call` goes
    /// through [`call_tool_raw`](Client::call_tool_raw)'s path, so the
    /// headers a modern HTTP call mirrors are set as for any call.
    ///
    /// Fails with [`Error::InvalidConfig`] when more than 256 distinct
    /// methods outside the protocol's own were asked for in this process.
    ///
    /// Cancel safe (see [`Client`]).
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<&RawValue>,
        on_progress: Option<&mut (dyn FnMut(Progress) + Send)>,
    ) -> Result<Box<RawValue>, Error> {
        let empty = empty_object();
        let params = params.unwrap_or(&empty);
        let Some(method) = intern(method) else {
            return Err(Error::InvalidConfig {
                operation: "request_raw",
                field: "method".into(),
                problem: format!(
                    "too many methods outside the protocol's own ({MAX_OTHER_METHODS}) were asked for in this process"
                ),
            });
        };
        let target = serde_json::from_str::<Target<'_>>(params.get()).ok();
        if method == "tools/call"
            && let Some(name) = target.as_ref().and_then(|target| target.name.as_deref())
        {
            let arguments = tool_arguments(params);
            return self.call_tool_raw(name, &*arguments, on_progress).await;
        }
        let mut request = Request::new(method, &params);
        request.name = match method {
            "prompts/get" => target.as_ref().and_then(|target| target.name.as_deref()),
            "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
                target.as_ref().and_then(|target| target.uri.as_deref())
            }
            _ => None,
        };
        self.send_request(request, on_progress).await
    }
}

/// `{}`, as raw JSON.
fn empty_object() -> Box<RawValue> {
    RawValue::from_string("{}".to_owned()).expect("{} is JSON")
}

/// The `arguments` of a `tools/call`'s parameters, verbatim (`{}` when
/// absent).
fn tool_arguments(params: &RawValue) -> Box<RawValue> {
    #[derive(Deserialize)]
    struct Arguments {
        #[serde(default)]
        arguments: Option<Box<RawValue>>,
    }
    serde_json::from_str::<Arguments>(params.get())
        .ok()
        .and_then(|call| call.arguments)
        .unwrap_or_else(empty_object)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_methods_are_their_own_names_and_others_are_kept_once() {
        assert_eq!(intern("tools/list"), Some("tools/list"));
        let first = intern("x-test/alpha").expect("room for it");
        let again = intern("x-test/alpha").expect("kept");
        assert!(std::ptr::eq(first, again));
    }

    #[test]
    fn a_calls_arguments_are_read_verbatim() {
        let params = RawValue::from_string(r#"{"name":"echo","arguments":{"b": 2, "a":1}}"#.into())
            .expect("JSON");
        assert_eq!(tool_arguments(&params).get(), r#"{"b": 2, "a":1}"#);
        let bare = RawValue::from_string(r#"{"name":"echo"}"#.into()).expect("JSON");
        assert_eq!(tool_arguments(&bare).get(), "{}");
    }
}
