//! An answer of a required shape ([`Request::output`]) through the Messages
//! API, which has no response format: the shape is offered as one more
//! tool, whose input is the answer, and the model is made to call a tool
//! (that one when it is the only one, any otherwise, so it can still use
//! the real tools first). The call of that tool is then the answer: its
//! input becomes the response's text, streamed as text, and the call is
//! not a tool call. It knows nothing of HTTP.

use golem_model::{OutputSchema, Request, StreamEvent, ToolChoice};

/// The output tool's wire form ([`OutputSchema::tool`], borrowed).
pub(crate) fn tool(output: &OutputSchema) -> crate::wire::WireTool<'_> {
    crate::wire::WireTool::new(&output.name, OutputSchema::TOOL_DESCRIPTION, &output.schema)
}

/// The tool choice when an answer of `output`'s shape is asked for, and
/// whether the output tool is offered: while the request forces a call of
/// a real tool, that choice, without the output tool (so the force cannot
/// be met by answering); with no tool to call (`none`, or no real tools),
/// the output tool; otherwise any tool, the output tool among them.
pub(crate) fn tool_choice(request: &Request, output: &OutputSchema) -> (ToolChoice, bool) {
    match &request.settings.tool_choice {
        Some(ToolChoice::Required) => (ToolChoice::Required, false),
        Some(forced @ ToolChoice::Tool(_)) => (forced.clone(), false),
        Some(ToolChoice::None) => (ToolChoice::Tool(output.name.clone()), true),
        _ if request.tools.is_empty() => (ToolChoice::Tool(output.name.clone()), true),
        _ => (ToolChoice::Required, true),
    }
}

/// Stream events as they reach the caller when an answer of `output`'s
/// shape is asked for: the output tool's call is streamed as text.
pub(crate) struct Streamed<'a> {
    output: &'a OutputSchema,
    /// The index of the output tool's call, once it has started.
    answer: Option<usize>,
}

impl<'a> Streamed<'a> {
    pub(crate) fn new(output: &'a OutputSchema) -> Self {
        Streamed {
            output,
            answer: None,
        }
    }

    /// The event the caller sees for `event`, if any.
    pub(crate) fn map(&mut self, event: StreamEvent) -> Option<StreamEvent> {
        match event {
            StreamEvent::ToolCallStarted {
                index, ref name, ..
            } if *name == self.output.name => {
                self.answer = Some(index);
                None
            }
            StreamEvent::ToolCallArguments { index, fragment } if Some(index) == self.answer => {
                Some(StreamEvent::Text(fragment))
            }
            other => Some(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use golem_model::{FinishReason, Response, ToolCall};

    fn output() -> OutputSchema {
        OutputSchema {
            name: "final_result".into(),
            schema: serde_json::value::RawValue::from_string(r#"{"type":"object"}"#.into())
                .expect("json"),
            strict: false,
        }
    }

    #[test]
    fn the_output_tools_call_is_the_answer_and_streams_as_text() {
        let response = Response {
            tool_calls: vec![
                ToolCall::new("t1", "final_result", r#"{"city": "Oslo"}"#).expect("json"),
            ],
            finish_reason: FinishReason::ToolCalls,
            ..Response::default()
        };
        let answered = output().answer_from_tool(response);
        assert_eq!(answered.text, r#"{"city": "Oslo"}"#);
        assert!(answered.tool_calls.is_empty());
        assert_eq!(answered.finish_reason, FinishReason::Stop);

        let output = output();
        let mut streamed = Streamed::new(&output);
        let events = [
            StreamEvent::ToolCallStarted {
                index: 0,
                id: "t1".into(),
                name: "final_result".into(),
            },
            StreamEvent::ToolCallArguments {
                index: 0,
                fragment: "{\"ci".into(),
            },
            StreamEvent::ToolCallArguments {
                index: 0,
                fragment: "ty\": 1}".into(),
            },
        ];
        let seen: Vec<StreamEvent> = events.into_iter().filter_map(|e| streamed.map(e)).collect();
        assert_eq!(
            seen,
            [
                StreamEvent::Text("{\"ci".into()),
                StreamEvent::Text("ty\": 1}".into())
            ]
        );
    }
}
