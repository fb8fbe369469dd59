//! Assembling a streamed answer: SSE events in, [`StreamEvent`]s out as they arrive,
//! and the [`Response`] at the end. Pure (no I/O), so it is tested by feeding a
//! transcript cut at every byte.

use golem_model::{ProviderError, ProviderErrorKind, Response, StreamEvent, StreamSink, Usage};
use golem_provider_http::{Assemble, EventStream};

use crate::error::{PROVIDER, invalid, status_error};
use crate::wire::{self, Chunk};

/// One tool call being assembled, keyed by the wire's `index`.
struct PartialCall {
    wire_index: usize,
    id: String,
    name: String,
    arguments: String,
    started: bool,
}

/// The state of one streamed answer.
pub(crate) struct Assembler {
    events: EventStream,
    text: String,
    calls: Vec<PartialCall>,
    finish_reason: Option<String>,
    usage: Option<Usage>,
    /// The answering model and the answer's id, as the chunks name them.
    model: Option<String>,
    id: Option<String>,
    done: bool,
    /// Whether any event reached the sink: from then on the request cannot be retried.
    pub(crate) delivered: bool,
}

impl Assembler {
    pub(crate) fn new(max_bytes: usize) -> Self {
        Self {
            events: EventStream::new(PROVIDER, max_bytes),
            text: String::new(),
            calls: Vec::new(),
            finish_reason: None,
            usage: None,
            model: None,
            id: None,
            done: false,
            delivered: false,
        }
    }

    fn apply(&mut self, chunk: Chunk, sink: StreamSink<'_>) -> Result<(), ProviderError> {
        if let Some(error) = chunk.error {
            return Err(status_error(None, None, error.kind(), error.message));
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(usage.to_usage());
        }
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if self.id.is_none() {
            self.id = chunk.id;
        }
        // One choice is asked for (no `n`); others, if a server sends them, are ignored.
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            let delta = choice.delta;
            for text in [delta.content, delta.refusal].into_iter().flatten() {
                if !text.is_empty() {
                    self.text.push_str(&text);
                    self.delivered = true;
                    sink(StreamEvent::Text(text));
                }
            }
            for call in delta.tool_calls {
                self.apply_call(call, sink);
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
        Ok(())
    }

    fn apply_call(&mut self, delta: wire::CallDelta, sink: StreamSink<'_>) {
        let position = match self.calls.iter().position(|c| c.wire_index == delta.index) {
            Some(position) => position,
            None => {
                self.calls.push(PartialCall {
                    wire_index: delta.index,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                    started: false,
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position];
        if let Some(id) = delta.id.filter(|id| !id.is_empty()) {
            call.id = id;
        }
        let (name, fragment) = match delta.function {
            Some(function) => (function.name, function.arguments.unwrap_or_default()),
            None => (None, String::new()),
        };
        // The name arrives whole in the call's first delta; a server that repeats it
        // later repeats the same name.
        if let Some(name) = name.filter(|name| !name.is_empty()) {
            call.name = name;
        }
        call.arguments.push_str(&fragment);
        if !call.started && !call.name.is_empty() {
            call.started = true;
            if call.id.is_empty() {
                call.id = format!("call_{position}");
            }
            self.delivered = true;
            sink(StreamEvent::ToolCallStarted {
                index: position,
                id: call.id.clone(),
                name: call.name.clone(),
            });
            // Arguments that came before the name are delivered with the start.
            if !call.arguments.is_empty() {
                sink(StreamEvent::ToolCallArguments {
                    index: position,
                    fragment: call.arguments.clone(),
                });
            }
        } else if call.started && !fragment.is_empty() {
            sink(StreamEvent::ToolCallArguments {
                index: position,
                fragment,
            });
        }
    }
}

impl Assemble for Assembler {
    /// Feeds the next chunk of the body; returns `true` once `[DONE]` arrived.
    fn feed(&mut self, chunk: &[u8], sink: StreamSink<'_>) -> Result<bool, ProviderError> {
        self.events.feed(chunk)?;
        while let Some(event) = self.events.next_event() {
            if self.done {
                continue;
            }
            if event.data == "[DONE]" {
                self.done = true;
                continue;
            }
            let chunk: Chunk = serde_json::from_str(&event.data).map_err(|error| {
                invalid(format!("stream chunk is not a completion chunk: {error}"))
            })?;
            self.apply(chunk, sink)?;
        }
        Ok(self.done)
    }

    fn delivered(&self) -> bool {
        self.delivered
    }

    /// Ends the body: the assembled response, or why it is incomplete.
    fn finish(mut self) -> Result<Response, ProviderError> {
        self.events.finish();
        if !self.done && self.finish_reason.is_none() {
            let mut error = ProviderError::new(
                PROVIDER,
                ProviderErrorKind::StreamCut,
                "the event stream ended before the answer was complete",
            );
            error.retryable = !self.delivered;
            return Err(error);
        }
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for call in self.calls {
            tool_calls.push(crate::tool_call(&call.id, &call.name, &call.arguments)?);
        }
        Ok(Response {
            text: self.text,
            tool_calls,
            usage: self.usage.unwrap_or(Usage {
                requests: 1,
                ..Usage::default()
            }),
            finish_reason: wire::finish_reason(self.finish_reason.as_deref()),
            model: self.model,
            id: self.id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_model::FinishReason;

    /// A text fragment, then two parallel tool calls whose arguments are split inside
    /// keys, strings and escapes, then usage and `[DONE]`.
    const TRANSCRIPT: &str = concat!(
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me é\"},\"finish_reason\":null}]}\n\n",
        ": keep-alive\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"pa\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"list\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"th\\\": \\\"a\\\\\\\"b\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7,\"total_tokens\":19,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n",
        "data: [DONE]\n\n",
    );

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
    fn assembles_text_and_parallel_calls() {
        let (response, events) = run(&[TRANSCRIPT.as_bytes()]);
        let response = response.expect("complete");
        assert_eq!(response.text, "Let me é");
        assert_eq!(response.tool_calls.len(), 2);
        assert_eq!(response.tool_calls[0].id, "call_a");
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
                input_tokens: 12,
                output_tokens: 7,
                requests: 1,
                cache_read_tokens: 4,
                cache_write_tokens: 0,
            }
        );
        assert_eq!(events.len(), 5, "{events:?}");
    }

    #[test]
    fn any_split_gives_the_same_answer_and_events() {
        let bytes = TRANSCRIPT.as_bytes();
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
    fn a_cut_stream_is_an_error_retryable_only_before_any_event() {
        let bytes = TRANSCRIPT.as_bytes();
        let end = TRANSCRIPT.find("tool_calls\"}").expect("the finish chunk");
        for cut in [0, 10, 200, end] {
            let (response, events) = run(&[&bytes[..cut]]);
            let error = response.expect_err("cut");
            assert_eq!(error.kind, ProviderErrorKind::StreamCut, "cut at {cut}");
            assert_eq!(error.retryable, events.is_empty(), "cut at {cut}");
        }
    }

    #[test]
    fn an_error_inside_the_stream_is_typed() {
        let body = b"data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"code\":null}}\n\n";
        let error = run(&[body]).0.expect_err("error event");
        assert_eq!(error.kind, ProviderErrorKind::Status);
        assert_eq!(error.error_type.as_deref(), Some("server_error"));
        assert_eq!(error.message, "overloaded");
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
