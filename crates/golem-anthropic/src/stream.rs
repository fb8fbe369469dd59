//! Assembling a streamed answer: SSE events in, [`StreamEvent`]s out as they arrive,
//! and the [`Response`] at the end. Pure (no I/O), so it is tested by feeding a
//! transcript cut at every byte.
//!
//! The events are `message_start` (input usage), then per content block a
//! `content_block_start`, its `content_block_delta`s (`text_delta`, `input_json_delta`)
//! and a `content_block_stop`, then `message_delta` (stop reason, cumulative usage) and
//! `message_stop`; `ping`s may come anywhere and an `error` event ends the answer.
//! Unknown event, block and delta types are ignored, as the API asks of clients.

use golem_model::{ProviderError, ProviderErrorKind, Response, StreamEvent, StreamSink, Usage};
use golem_provider_http::{Assemble, EventStream};

use crate::error::{PROVIDER, invalid, stream_error};
use crate::wire::{self, StreamData};

/// What a content block of the stream is, keyed by the wire's `index`.
enum Block {
    Text,
    /// A `tool_use` block: its position among the response's tool calls.
    Tool(usize),
    /// Thinking, server tools and anything newer: not part of the neutral response.
    Ignored,
}

/// One tool call being assembled.
struct PartialCall {
    id: String,
    name: String,
    /// The `input` of `content_block_start` (normally `{}`), used when no delta follows.
    start_input: String,
    /// The `partial_json` fragments so far.
    arguments: String,
    /// Whether any fragment reached the sink.
    fragments: bool,
}

impl PartialCall {
    fn arguments(&self) -> &str {
        match (self.fragments, self.start_input.is_empty()) {
            (true, _) => &self.arguments,
            (false, false) => &self.start_input,
            (false, true) => "{}",
        }
    }
}

/// The state of one streamed answer.
pub(crate) struct Assembler {
    events: EventStream,
    text: String,
    blocks: Vec<(usize, Block)>,
    calls: Vec<PartialCall>,
    stop_reason: Option<String>,
    usage: Usage,
    /// The answering model and the message's id, from `message_start`.
    model: Option<String>,
    id: Option<String>,
    stopped: bool,
    /// Whether any event reached the sink: from then on the request cannot be retried.
    pub(crate) delivered: bool,
}

impl Assembler {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            events: EventStream::new(PROVIDER, max_bytes),
            text: String::new(),
            blocks: Vec::new(),
            calls: Vec::new(),
            stop_reason: None,
            model: None,
            id: None,
            usage: Usage {
                requests: 1,
                ..Usage::default()
            },
            stopped: false,
            delivered: false,
        }
    }

    fn apply(&mut self, data: StreamData, sink: StreamSink<'_>) -> Result<(), ProviderError> {
        match data.r#type.as_str() {
            "message_start" => {
                if let Some(message) = data.message {
                    message.usage.apply(&mut self.usage);
                    self.model = message.model;
                    self.id = message.id;
                }
            }
            "content_block_start" => {
                let index = required(data.index, "content_block_start")?;
                let block = data
                    .content_block
                    .ok_or_else(|| invalid("content_block_start without a content_block"))?;
                self.start_block(index, block, sink);
            }
            "content_block_delta" => {
                let index = required(data.index, "content_block_delta")?;
                if let Some(delta) = data.delta {
                    self.apply_delta(index, delta, sink)?;
                }
            }
            "content_block_stop" => {
                let index = required(data.index, "content_block_stop")?;
                if let Some(&Block::Tool(position)) = self.block(index) {
                    let call = &mut self.calls[position];
                    // A call whose arguments came whole with its start still gets them
                    // as one fragment, so the fragments always add up to the arguments.
                    if !call.fragments {
                        let arguments = call.arguments().to_owned();
                        call.arguments.clone_from(&arguments);
                        call.fragments = true;
                        sink(StreamEvent::ToolCallArguments {
                            index: position,
                            fragment: arguments,
                        });
                    }
                }
            }
            "message_delta" => {
                if let Some(reason) = data.delta.and_then(|delta| delta.stop_reason) {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = data.usage {
                    usage.apply(&mut self.usage);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => {
                let error = data
                    .error
                    .ok_or_else(|| invalid("an error event without an error"))?;
                return Err(stream_error(error.r#type, error.message));
            }
            // "ping", and event types added after this was written.
            _ => {}
        }
        Ok(())
    }

    fn block(&self, index: usize) -> Option<&Block> {
        self.blocks
            .iter()
            .find(|(wire, _)| *wire == index)
            .map(|(_, block)| block)
    }

    fn start_block(&mut self, index: usize, block: wire::BlockIn, sink: StreamSink<'_>) {
        let kind = match block.r#type.as_str() {
            "text" => {
                let text = block.text.unwrap_or_default();
                self.push_text(text, sink);
                Block::Text
            }
            "tool_use" => {
                let position = self.calls.len();
                let id = block.id.unwrap_or_else(|| format!("toolu_{position}"));
                let name = block.name.unwrap_or_default();
                self.calls.push(PartialCall {
                    id: id.clone(),
                    name: name.clone(),
                    start_input: block
                        .input
                        .map(|input| input.get().to_owned())
                        .unwrap_or_default(),
                    arguments: String::new(),
                    fragments: false,
                });
                self.delivered = true;
                sink(StreamEvent::ToolCallStarted {
                    index: position,
                    id,
                    name,
                });
                Block::Tool(position)
            }
            _ => Block::Ignored,
        };
        self.blocks.push((index, kind));
    }

    fn apply_delta(
        &mut self,
        index: usize,
        delta: wire::DeltaIn,
        sink: StreamSink<'_>,
    ) -> Result<(), ProviderError> {
        let block = self.block(index).ok_or_else(|| {
            invalid(format!(
                "content_block_delta for block {index}, which never started"
            ))
        })?;
        match (block, delta.r#type.as_deref()) {
            (Block::Text, Some("text_delta")) => {
                self.push_text(delta.text.unwrap_or_default(), sink);
            }
            (&Block::Tool(position), Some("input_json_delta")) => {
                let fragment = delta.partial_json.unwrap_or_default();
                if !fragment.is_empty() {
                    let call = &mut self.calls[position];
                    call.arguments.push_str(&fragment);
                    call.fragments = true;
                    sink(StreamEvent::ToolCallArguments {
                        index: position,
                        fragment,
                    });
                }
            }
            // Citations, thinking and signatures, server tools' input, newer deltas.
            _ => {}
        }
        Ok(())
    }

    fn push_text(&mut self, text: String, sink: StreamSink<'_>) {
        if !text.is_empty() {
            self.text.push_str(&text);
            self.delivered = true;
            sink(StreamEvent::Text(text));
        }
    }
}

impl Assemble for Assembler {
    /// Feeds the next chunk of the body; returns `true` once `message_stop` arrived.
    fn feed(&mut self, chunk: &[u8], sink: StreamSink<'_>) -> Result<bool, ProviderError> {
        self.events.feed(chunk)?;
        while let Some(event) = self.events.next_event() {
            if self.stopped {
                continue;
            }
            let data: StreamData = serde_json::from_str(&event.data).map_err(|error| {
                invalid(format!(
                    "stream event {:?} is not a Messages event: {error}",
                    event.event.as_deref().unwrap_or("message")
                ))
            })?;
            self.apply(data, sink)?;
        }
        Ok(self.stopped)
    }

    fn delivered(&self) -> bool {
        self.delivered
    }

    /// Ends the body: the assembled response, or why it is incomplete. An answer is
    /// complete once `message_stop` arrived, or the stop reason did (only the end marker
    /// was lost).
    fn finish(mut self) -> Result<Response, ProviderError> {
        self.events.finish();
        if !self.stopped && self.stop_reason.is_none() {
            let mut error = ProviderError::new(
                PROVIDER,
                ProviderErrorKind::StreamCut,
                "the event stream ended before the answer was complete",
            );
            error.retryable = !self.delivered;
            return Err(error);
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for call in &self.calls {
            tool_calls.push(crate::tool_call(&call.id, &call.name, call.arguments())?);
        }
        Ok(Response {
            text: self.text,
            tool_calls,
            usage: self.usage,
            finish_reason: wire::finish_reason(self.stop_reason.as_deref()),
            model: self.model,
            id: self.id,
        })
    }
}

fn required(index: Option<usize>, event: &str) -> Result<usize, ProviderError> {
    index.ok_or_else(|| invalid(format!("{event} without an index")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_model::FinishReason;

    /// One event in the API's framing: `event: TYPE`, `data: JSON`, a blank line.
    fn event(data: &str) -> String {
        let value: serde_json::Value = serde_json::from_str(data).expect("json");
        let kind = value["type"].as_str().expect("type").to_owned();
        format!("event: {kind}\ndata: {data}\n\n")
    }

    /// Text, a ping, a thinking block (skipped), then two tool calls: the first's input
    /// split inside a key, a string and an escape, the second's given whole at its start.
    fn transcript() -> String {
        [
            r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"cache_creation_input_tokens":7,"cache_read_input_tokens":3,"output_tokens":1}}}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type": "ping"}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me é"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hmm"}}"#,
            r#"{"type":"content_block_stop","index":1}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"th\": \"a\\\"b\"}"}}"#,
            r#"{"type":"content_block_stop","index":2}"#,
            r#"{"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_b","name":"list","input":{}}}"#,
            r#"{"type":"content_block_stop","index":3}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}"#,
            r#"{"type":"message_stop"}"#,
        ]
        .iter()
        .map(|data| event(data))
        .collect()
    }

    fn run(chunks: &[&[u8]]) -> (Result<Response, ProviderError>, Vec<StreamEvent>) {
        let mut assembler = Assembler::new(1 << 20);
        let mut events = Vec::new();
        for chunk in chunks {
            if let Err(error) = assembler.feed(chunk, &mut |event| events.push(event)) {
                return (Err(error), events);
            }
        }
        (assembler.finish(), events)
    }

    /// Merges consecutive fragments, so that event lists from different splits compare.
    fn merged(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
        let mut out: Vec<StreamEvent> = Vec::new();
        for event in events {
            match (out.last_mut(), event) {
                (Some(StreamEvent::Text(last)), StreamEvent::Text(more)) => last.push_str(&more),
                (
                    Some(StreamEvent::ToolCallArguments { index: a, fragment }),
                    StreamEvent::ToolCallArguments {
                        index: b,
                        fragment: more,
                    },
                ) if *a == b => fragment.push_str(&more),
                (_, event) => out.push(event),
            }
        }
        out
    }

    #[test]
    fn assembles_text_and_tool_calls_with_usage() {
        let (response, events) = run(&[transcript().as_bytes()]);
        let response = response.expect("complete");
        assert_eq!(response.text, "Let me é");
        assert_eq!(response.tool_calls.len(), 2);
        assert_eq!(response.tool_calls[0].id, "toolu_a");
        assert_eq!(response.tool_calls[0].name, "read");
        assert_eq!(
            response.tool_calls[0].arguments.get(),
            r#"{"path": "a\"b"}"#
        );
        assert_eq!(response.tool_calls[1].name, "list");
        assert_eq!(response.tool_calls[1].arguments.get(), "{}");
        assert_eq!(response.finish_reason, FinishReason::ToolCalls);
        assert_eq!(
            response.usage,
            Usage {
                input_tokens: 25,
                output_tokens: 42,
                requests: 1,
                cache_read_tokens: 3,
                cache_write_tokens: 7,
            }
        );
        let started = |index: usize, id: &str, name: &str| StreamEvent::ToolCallStarted {
            index,
            id: id.into(),
            name: name.into(),
        };
        let arguments = |index: usize, fragment: &str| StreamEvent::ToolCallArguments {
            index,
            fragment: fragment.into(),
        };
        assert_eq!(
            events,
            [
                StreamEvent::Text("Let me é".into()),
                started(0, "toolu_a", "read"),
                arguments(0, "{\"pa"),
                arguments(0, r#"th": "a\"b"}"#),
                started(1, "toolu_b", "list"),
                arguments(1, "{}"),
            ]
        );
    }

    #[test]
    fn any_split_gives_the_same_answer_and_events() {
        let transcript = transcript();
        let bytes = transcript.as_bytes();
        let (whole, whole_events) = run(&[bytes]);
        let whole = whole.expect("complete");
        let whole_events = merged(whole_events);
        for cut in 0..=bytes.len() {
            let (response, events) = run(&[&bytes[..cut], &bytes[cut..]]);
            assert_eq!(response.as_ref().ok(), Some(&whole), "cut at {cut}");
            assert_eq!(merged(events), whole_events, "cut at {cut}");
        }
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        let (response, events) = run(&bytewise);
        assert_eq!(response.ok(), Some(whole));
        assert_eq!(merged(events), whole_events);
    }

    #[test]
    fn input_json_split_at_every_point_assembles_the_same_bytes() {
        let input = r#"{"path": "dir/é \"q\"", "n" : [1, 2.50]}"#;
        let boundaries = (0..=input.len()).filter(|cut| input.is_char_boundary(*cut));
        for cut in boundaries {
            let delta = |part: &str| {
                let data = serde_json::json!({"type":"content_block_delta","index":0,
                    "delta":{"type":"input_json_delta","partial_json":part}});
                event(&data.to_string())
            };
            let body = [
                event(r#"{"type":"message_start","message":{"usage":{"input_tokens":1,"output_tokens":1}}}"#),
                event(r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"n","input":{}}}"#),
                delta(&input[..cut]),
                delta(&input[cut..]),
                event(r#"{"type":"content_block_stop","index":0}"#),
                event(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}}"#),
                event(r#"{"type":"message_stop"}"#),
            ]
            .concat();
            let (response, events) = run(&[body.as_bytes()]);
            let response = response.expect("complete");
            assert_eq!(
                response.tool_calls[0].arguments.get(),
                input,
                "cut at {cut}"
            );
            let fragments: String = events
                .iter()
                .filter_map(|event| match event {
                    StreamEvent::ToolCallArguments { fragment, .. } => Some(fragment.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(fragments, input, "cut at {cut}");
        }
    }

    #[test]
    fn a_cut_stream_is_an_error_retryable_only_before_any_event() {
        let transcript = transcript();
        let bytes = transcript.as_bytes();
        let text = transcript.find("text_delta").expect("the text delta");
        let end = transcript.find("event: message_delta").expect("the end");
        for cut in [0, 10, text, end] {
            let (response, events) = run(&[&bytes[..cut]]);
            let error = response.expect_err("cut");
            assert_eq!(error.kind, ProviderErrorKind::StreamCut, "cut at {cut}");
            assert_eq!(error.retryable, events.is_empty(), "cut at {cut}");
        }
    }

    #[test]
    fn an_error_event_is_typed_and_retryable_when_transient() {
        let body =
            event(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#);
        let error = run(&[body.as_bytes()]).0.expect_err("error event");
        assert_eq!(error.kind, ProviderErrorKind::Status);
        assert_eq!(error.status, None);
        assert_eq!(error.error_type.as_deref(), Some("overloaded_error"));
        assert_eq!(error.message, "Overloaded");
        assert!(error.retryable);

        let body =
            event(r#"{"type":"error","error":{"type":"invalid_request_error","message":"bad"}}"#);
        assert!(!run(&[body.as_bytes()]).0.expect_err("error").retryable);
    }

    #[test]
    fn a_delta_for_an_unknown_block_is_refused() {
        let body = event(
            r#"{"type":"content_block_delta","index":5,"delta":{"type":"text_delta","text":"x"}}"#,
        );
        let error = run(&[body.as_bytes()]).0.expect_err("no such block");
        assert_eq!(error.kind, ProviderErrorKind::InvalidResponse);
    }

    #[test]
    fn the_stream_is_bounded() {
        let mut assembler = Assembler::new(100);
        let error = assembler
            .feed(&[b'x'; 101], &mut |_| {})
            .expect_err("too large");
        assert_eq!(error.kind, ProviderErrorKind::TooLarge);
    }
}
