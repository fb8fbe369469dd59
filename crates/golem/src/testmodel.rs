//! Models for tests and examples: they answer offline and deterministically,
//! and record every request so a test can assert what the model saw.
//!
//! - [`ScriptedModel`] answers with a fixed list of responses, in order, and
//!   fails once the list runs out.
//! - [`FunctionModel`] answers with whatever a closure makes of the request,
//!   e.g. a tool call on the first turn and, on the next, an answer built
//!   from the tool's result.
//!
//! Both are cheap to clone, and clones share the script and the recording:
//! hand one clone to the agent, keep another to inspect
//! [`requests`](ScriptedModel::requests) afterwards.
//!
//! [`text_response`] and [`tool_calls_response`] build the responses they
//! give.
//!
//! Asked to stream ([`Model::request_stream`]), both replay the whole
//! response as one text fragment and one fragment per call's arguments,
//! unless [`fragmented`](ScriptedModel::fragmented) makes them deliver it a
//! few characters at a time, as a streaming provider would.

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use golem_model::{
    BoxFuture, FinishReason, Model, ModelError, Request, Response, StreamEvent, StreamSink,
    ToolCall, Usage,
};

/// A final answer: `text` and no tool calls, with a usage of one request.
pub fn text_response(text: impl Into<String>) -> Response {
    Response {
        text: text.into(),
        tool_calls: Vec::new(),
        usage: one_request(),
        finish_reason: FinishReason::Stop,
        ..Response::default()
    }
}

/// A response that calls tools, in the given order, with no text and a
/// usage of one request.
pub fn tool_calls_response(calls: impl IntoIterator<Item = ToolCall>) -> Response {
    Response {
        text: String::new(),
        tool_calls: calls.into_iter().collect(),
        usage: one_request(),
        finish_reason: FinishReason::ToolCalls,
        ..Response::default()
    }
}

fn one_request() -> Usage {
    Usage {
        requests: 1,
        ..Usage::default()
    }
}

/// Locks a mutex whose data stays consistent even if a holder panicked (a
/// test's assertion inside a closure, say).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A model that answers with scripted responses, in order.
///
/// Each request is recorded, then answered with the next response of the
/// script, returned exactly as scripted. A request after the last response
/// fails with a [`ModelError`] saying so, which fails the run: a test whose
/// agent asks more than expected fails loudly.
///
/// ```
/// use golem_agent::model::{Model, Request};
/// use golem_agent::testmodel::{ScriptedModel, text_response};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let model = ScriptedModel::new([text_response("first"), text_response("second")]);
/// assert_eq!(model.request(&Request::default()).await.map(|r| r.text).ok(), Some("first".into()));
/// assert_eq!(model.request(&Request::default()).await.map(|r| r.text).ok(), Some("second".into()));
/// assert!(model.request(&Request::default()).await.is_err());
/// assert_eq!(model.requests().len(), 3);
/// # }
/// ```
#[derive(Clone)]
pub struct ScriptedModel {
    inner: Arc<Mutex<Script>>,
    /// Streamed pieces of at most this many characters; 0: whole.
    fragment: usize,
}

struct Script {
    responses: VecDeque<Response>,
    scripted: usize,
    requests: Vec<Request>,
}

impl ScriptedModel {
    /// A model answering with `responses`, in order.
    pub fn new(responses: impl IntoIterator<Item = Response>) -> Self {
        let responses: VecDeque<Response> = responses.into_iter().collect();
        Self {
            inner: Arc::new(Mutex::new(Script {
                scripted: responses.len(),
                responses,
                requests: Vec::new(),
            })),
            fragment: 0,
        }
    }

    /// The same model (sharing the script and the recording), streaming
    /// each answer in pieces of at most `chars` characters: the text, then
    /// each tool call started and its arguments (0 streams each whole).
    pub fn fragmented(mut self, chars: usize) -> Self {
        self.fragment = chars;
        self
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.inner).requests.clone()
    }

    /// How many scripted responses are still unused.
    pub fn remaining(&self) -> usize {
        lock(&self.inner).responses.len()
    }
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let script = lock(&self.inner);
        f.debug_struct("ScriptedModel")
            .field("remaining", &script.responses.len())
            .field("requests", &script.requests.len())
            .finish()
    }
}

impl Model for ScriptedModel {
    /// Records the request and answers at once with the next scripted
    /// response. Cancel safe: nothing is awaited.
    fn request<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ModelError>> {
        let answer = {
            let mut script = lock(&self.inner);
            script.requests.push(request.clone());
            let number = script.requests.len();
            let scripted = script.scripted;
            script.responses.pop_front().ok_or_else(|| {
                ModelError::new(format!(
                    "testmodel: request {number} has no scripted response (the script had \
                     {scripted}); add responses to the ScriptedModel"
                ))
            })
        };
        Box::pin(std::future::ready(answer))
    }

    /// As [`request`](Model::request), delivering the answer to `sink`
    /// first, in pieces when the model is [`fragmented`](Self::fragmented).
    fn request_stream<'a>(
        &'a self,
        request: &'a Request,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Response, ModelError>> {
        Box::pin(async move {
            let response = self.request(request).await?;
            stream_in_pieces(&response, self.fragment, sink);
            Ok(response)
        })
    }

    fn name(&self) -> &str {
        "testmodel:scripted"
    }
}

/// The stored form of a [`FunctionModel`]'s closure.
type Respond = dyn Fn(&Request) -> Result<Response, ModelError> + Send + Sync;

/// A model whose answers a closure decides, from the request it is given.
///
/// Each request is recorded, then handed to the closure; its result is the
/// model's answer.
///
/// ```
/// use golem_agent::model::{Request, Role};
/// use golem_agent::testmodel::{FunctionModel, text_response};
/// use golem_agent::model::Model;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// // Repeats the last message it was sent.
/// let model = FunctionModel::new(|request: &Request| {
///     let last = request.messages.last().map(|m| m.content.as_str()).unwrap_or("");
///     Ok(text_response(format!("you said: {last}")))
/// });
/// let request = Request {
///     messages: vec![golem_agent::model::Message::user("hi")],
///     ..Request::default()
/// };
/// let answer = model.request(&request).await.map(|r| r.text).ok();
/// assert_eq!(answer.as_deref(), Some("you said: hi"));
/// assert_eq!(model.requests()[0].messages[0].role, Role::User);
/// # }
/// ```
#[derive(Clone)]
pub struct FunctionModel {
    respond: Arc<Respond>,
    requests: Arc<Mutex<Vec<Request>>>,
    /// Streamed pieces of at most this many characters; 0: whole.
    fragment: usize,
}

impl FunctionModel {
    /// A model answering each request with `respond(request)`.
    pub fn new(
        respond: impl Fn(&Request) -> Result<Response, ModelError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            respond: Arc::new(respond),
            requests: Arc::new(Mutex::new(Vec::new())),
            fragment: 0,
        }
    }

    /// The same model, streaming each answer in pieces of at most `chars`
    /// characters, as [`ScriptedModel::fragmented`] does.
    pub fn fragmented(mut self, chars: usize) -> Self {
        self.fragment = chars;
        self
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.requests).clone()
    }
}

impl fmt::Debug for FunctionModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FunctionModel")
            .field("requests", &lock(&self.requests).len())
            .finish_non_exhaustive()
    }
}

impl Model for FunctionModel {
    /// Records the request and answers at once with the closure's result.
    /// Cancel safe: nothing is awaited.
    fn request<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response, ModelError>> {
        lock(&self.requests).push(request.clone());
        Box::pin(std::future::ready((self.respond)(request)))
    }

    /// As [`request`](Model::request), delivering the answer to `sink`
    /// first, in pieces when the model is [`fragmented`](Self::fragmented).
    fn request_stream<'a>(
        &'a self,
        request: &'a Request,
        sink: StreamSink<'a>,
    ) -> BoxFuture<'a, Result<Response, ModelError>> {
        Box::pin(async move {
            let response = self.request(request).await?;
            stream_in_pieces(&response, self.fragment, sink);
            Ok(response)
        })
    }

    fn name(&self) -> &str {
        "testmodel:function"
    }
}

/// Delivers `response` to `sink` as a streaming model would, in pieces of at
/// most `chars` characters (0: each part whole, as [`golem_model::replay`]).
fn stream_in_pieces(response: &Response, chars: usize, sink: StreamSink<'_>) {
    if chars == 0 {
        golem_model::replay(response, sink);
        return;
    }
    for piece in pieces(&response.text, chars) {
        sink(StreamEvent::Text(piece));
    }
    for (index, call) in response.tool_calls.iter().enumerate() {
        sink(StreamEvent::ToolCallStarted {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        for fragment in pieces(call.arguments.get(), chars) {
            sink(StreamEvent::ToolCallArguments { index, fragment });
        }
    }
}

/// `text` cut into pieces of at most `chars` characters.
fn pieces(text: &str, chars: usize) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    characters
        .chunks(chars)
        .map(|chunk| chunk.iter().collect())
        .collect()
}
