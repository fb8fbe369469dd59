//! The answers the fake writes itself ([`Reply::Text`], [`Reply::ToolCall`],
//! [`Reply::Error`]: what the `golem` command's tests script), read by the
//! real providers as they read documented ones, streamed and not.

use golem_anthropic::{Anthropic, AnthropicConfig};
use golem_fake_provider::{FakeProvider, Reply, anthropic, openai, provider_error, streamed_text};
use golem_model::{FinishReason, Message, Model, Request, RetryPolicy};
use golem_openai::{OpenAi, OpenAiConfig};

/// What one provider should make of the fake's answers.
struct Expected {
    /// The endpoint the provider asks.
    path: &'static str,
    /// The id the fake gives a tool call.
    call_id: &'static str,
    /// (input, output) tokens of the text, the call, the streamed text and
    /// the streamed call.
    usage: [(u64, u64); 4],
    /// The error the fake is told to answer last: (status, type).
    error: (u16, &'static str),
}

/// A text and a tool call, then the same two streamed, then an error.
fn script(expected: &Expected) -> Vec<Reply> {
    let text = Reply::Text("Hi there.".into());
    let call = Reply::ToolCall {
        name: "read".into(),
        arguments: r#"{"path":"a"}"#.into(),
    };
    let (status, kind) = expected.error;
    let error = Reply::Error {
        status,
        kind: kind.into(),
        message: "it went wrong".into(),
    };
    vec![text.clone(), call.clone(), text, call, error]
}

/// Asks `model` (pointed at `fake`, started with [`script`]) for each
/// answer in turn and checks what it made of them.
async fn reads_the_script(model: &dyn Model, fake: &FakeProvider, expected: &Expected) {
    let request = Request {
        messages: vec![Message::user("Hi")],
        ..Request::default()
    };
    let mut events = Vec::new();
    let answers = [
        model.request(&request).await.expect("text"),
        model.request(&request).await.expect("call"),
        model
            .request_stream(&request, &mut |event| events.push(event))
            .await
            .expect("streamed text"),
        model
            .request_stream(&request, &mut |_| {})
            .await
            .expect("streamed call"),
    ];
    for (answer, usage) in answers.iter().zip(expected.usage) {
        let tokens = (answer.usage.input_tokens, answer.usage.output_tokens);
        assert_eq!(tokens, usage);
    }
    for answer in [&answers[0], &answers[2]] {
        assert_eq!(answer.text, "Hi there.");
        assert_eq!(answer.finish_reason, FinishReason::Stop);
    }
    assert_eq!(streamed_text(&events), "Hi there.");
    for answer in [&answers[1], &answers[3]] {
        assert_eq!(answer.finish_reason, FinishReason::ToolCalls);
        let call = &answer.tool_calls[0];
        let named = (call.id.as_str(), call.name.as_str());
        assert_eq!(named, (expected.call_id, "read"));
        assert_eq!(call.arguments.get(), r#"{"path":"a"}"#);
    }
    let error = model.request(&request).await.expect_err("an error");
    let provider = provider_error(&error);
    let (status, kind) = expected.error;
    assert_eq!(provider.status, Some(status));
    assert_eq!(provider.error_type.as_deref(), Some(kind));
    assert_eq!(provider.message, "it went wrong");
    let paths: Vec<String> = fake.requests().into_iter().map(|seen| seen.path).collect();
    assert_eq!(paths, [expected.path; 5], "one request each, no retry");
}

#[tokio::test]
async fn openai_reads_the_chat_completions_it_writes() {
    let expected = Expected {
        path: openai::PATH,
        call_id: "call_1",
        usage: [(12, 7), (12, 7), (12, 7), (20, 9)],
        error: (400, "invalid_request_error"),
    };
    let fake = FakeProvider::start(script(&expected));
    let model = OpenAi::new(OpenAiConfig {
        base_url: fake.openai_base_url().to_owned(),
        retry: RetryPolicy::none(),
        ..OpenAiConfig::new("gpt-fake")
    })
    .expect("valid config");
    reads_the_script(&model, &fake, &expected).await;
}

#[tokio::test]
async fn anthropic_reads_the_messages_it_writes() {
    let expected = Expected {
        path: anthropic::PATH,
        call_id: "toolu_1",
        usage: [(15, 5); 4],
        error: (529, "overloaded_error"),
    };
    let fake = FakeProvider::start(script(&expected));
    let model = Anthropic::new(AnthropicConfig {
        base_url: fake.anthropic_base_url().to_owned(),
        retry: RetryPolicy::none(),
        ..AnthropicConfig::new("claude-fake")
    })
    .expect("valid config");
    reads_the_script(&model, &fake, &expected).await;
}
