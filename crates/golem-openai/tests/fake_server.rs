//! `OpenAi` against an in-process fake that answers in the documented Chat Completions
//! wire format: scripted answers served in order, every request recorded.

use std::time::{Duration, Instant};

use golem_fake_provider::{
    FakeProvider, Raw, openai, provider_error, quick_retries, refused_address, streamed_text,
};
use golem_model::{
    ApiKey, FinishReason, Message, Model, ProviderErrorKind, Request, RetryPolicy, StreamEvent,
    ToolCall, ToolSpec,
};
use golem_openai::{OpenAi, OpenAiConfig};
use serde_json::Value;

/// A fake serving `script` in order, and a config that reaches it with a key
/// and quick retries.
fn serve(script: Vec<Raw>) -> (FakeProvider, OpenAiConfig) {
    let fake = FakeProvider::start(script);
    let config = OpenAiConfig {
        base_url: fake.openai_base_url().to_owned(),
        api_key: Some(ApiKey::new("sk-test-secret")),
        retry: quick_retries(),
        ..OpenAiConfig::new("gpt-test")
    };
    (fake, config)
}

fn model(config: OpenAiConfig) -> OpenAi {
    OpenAi::new(config).expect("valid config")
}

fn request() -> Request {
    Request {
        instructions: Some("Be brief.".into()),
        messages: vec![
            Message::user("Read a"),
            Message::assistant_with_tool_calls(
                "",
                vec![ToolCall::new("call_1", "read", r#"{"path":  "a"}"#).expect("json")],
            ),
            Message::tool_result("call_1", "read", "contents"),
        ],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Reads a file".into(),
            input_schema: serde_json::from_str(
                r#"{"type":"object","properties":{"path":{"type":"string"}}}"#,
            )
            .expect("schema"),
        }],
        ..Request::default()
    }
}

const COMPLETION: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"path\":  \"b\"}"}},{"id":"call_b","type":"function","function":{"name":"list","arguments":""}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39,"prompt_tokens_details":{"cached_tokens":10}}}"#;

#[tokio::test]
async fn sends_the_documented_request_and_maps_the_answer() {
    let (fake, config) = serve(vec![Raw::json(200, COMPLETION)]);
    let response = model(config).request(&request()).await.expect("answer");

    assert_eq!(response.text, "");
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(response.tool_calls[0].arguments.get(), r#"{"path":  "b"}"#);
    assert_eq!(response.tool_calls[1].name, "list");
    assert_eq!(response.tool_calls[1].arguments.get(), "{}");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage.input_tokens, 30);
    assert_eq!(response.usage.output_tokens, 9);
    assert_eq!(response.usage.cache_read_tokens, 10);

    let seen = fake.requests();
    let (auth, body) = (seen[0].header("authorization"), &seen[0].body);
    assert_eq!(auth, Some("Bearer sk-test-secret"));
    let want: Value = serde_json::from_str(
        r#"{"model":"gpt-test","stream":false,"messages":[
            {"role":"system","content":"Be brief."},
            {"role":"user","content":"Read a"},
            {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"read","arguments":"{\"path\":  \"a\"}"}}]},
            {"role":"tool","content":"contents","tool_call_id":"call_1"}],
          "tools":[{"type":"function","function":{"name":"read","description":"Reads a file","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}]}"#,
    )
    .expect("json");
    assert_eq!(body, &want);
}

#[tokio::test]
async fn a_requests_output_limit_is_sent_as_max_completion_tokens_instead_of_the_configs() {
    // A reasoning model: the fake refuses `max_tokens` for it, as OpenAI does.
    let (fake, config) = serve(vec![Raw::json(200, COMPLETION)]);
    let model = model(OpenAiConfig {
        max_tokens: Some(1000),
        ..OpenAiConfig {
            model: "gpt-5-test".into(),
            ..config
        }
    });
    let limited = Request {
        settings: golem_model::ModelSettings {
            max_output_tokens: Some(50),
            ..Default::default()
        },
        ..request()
    };
    model.request(&limited).await.expect("answer");
    let seen = fake.requests();
    assert_eq!(seen[0].body["max_completion_tokens"], 50);
    assert!(seen[0].body.get("max_tokens").is_none(), "{}", seen[0].body);

    // No limit of its own: the configuration's, as `max_tokens` (refused
    // by this model, as the real API does).
    let error = model.request(&request()).await.expect_err("refused");
    assert!(
        error.to_string().contains("'max_tokens' is not supported"),
        "{error}"
    );
    let seen = fake.requests();
    assert_eq!(seen[1].body["max_tokens"], 1000);
    assert!(seen[1].body.get("max_completion_tokens").is_none());
}

/// A streamed answer with text and two parallel calls.
fn transcript() -> String {
    openai::sse(&[
        r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi "},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"there"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"pa"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"list","arguments":"{}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"x\"}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}"#,
        "[DONE]",
    ])
}

#[tokio::test]
async fn streams_split_at_every_byte_over_http() {
    let bytes = transcript().into_bytes();
    let chunks = bytes.chunks(1).map(<[u8]>::to_vec).collect();
    let (fake, config) = serve(vec![Raw::sse(chunks)]);
    let mut events = Vec::new();
    let response = model(config)
        .request_stream(&request(), &mut |event| events.push(event))
        .await
        .expect("answer");

    assert_eq!(response.text, "Hi there");
    assert_eq!(response.tool_calls[0].arguments.get(), r#"{"path":"x"}"#);
    assert_eq!(response.tool_calls[1].arguments.get(), "{}");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(response.usage.output_tokens, 6);
    assert_eq!(streamed_text(&events), "Hi there");
    assert!(events.contains(&StreamEvent::ToolCallStarted {
        index: 1,
        id: "call_b".into(),
        name: "list".into()
    }));
    let seen = fake.requests();
    assert_eq!(seen[0].body["stream"], true);
    assert_eq!(seen[0].body["stream_options"]["include_usage"], true);
}

#[tokio::test]
async fn error_bodies_are_typed_and_the_key_never_shows() {
    let cases = [
        (
            400,
            r#"{"error":{"message":"bad tools","type":"invalid_request_error","param":"tools","code":null}}"#,
            Some("invalid_request_error"),
            false,
        ),
        (
            401,
            r#"{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}"#,
            Some("invalid_api_key"),
            false,
        ),
        (
            429,
            r#"{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}"#,
            Some("insufficient_quota"),
            false,
        ),
        (404, "not json at all", None, false),
    ];
    for (status, body, error_type, retryable) in cases {
        let (fake, config) = serve(vec![Raw::json(status, body)]);
        let error = model(config).request(&request()).await.expect_err("error");
        let provider = provider_error(&error);
        assert_eq!(provider.kind, ProviderErrorKind::Status);
        assert_eq!(provider.status, Some(status));
        assert_eq!(provider.error_type.as_deref(), error_type);
        assert_eq!(provider.retryable, retryable);
        assert!(!format!("{error:?} {error}").contains("sk-test-secret"));
        assert_eq!(fake.request_count(), 1, "not retried");
    }
    let (_fake, config) = serve(Vec::new());
    assert!(!format!("{config:?} {:?}", model(config.clone())).contains("sk-test-secret"));
}

#[tokio::test]
async fn retries_429_after_its_retry_after_then_succeeds() {
    let mut limited = Raw::json(
        429,
        r#"{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}"#,
    );
    limited.headers.push(("retry-after".into(), "1".into()));
    let (fake, config) = serve(vec![limited, Raw::json(200, COMPLETION)]);
    let started = Instant::now();
    let response = model(config).request(&request()).await.expect("answer");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited for Retry-After"
    );
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn retries_500_twice_then_succeeds_and_gives_up_after_max_attempts() {
    let error = r#"{"error":{"message":"boom","type":"server_error","code":null}}"#;
    let (fake, config) = serve(vec![
        Raw::json(500, error),
        Raw::json(500, error),
        Raw::json(200, COMPLETION),
    ]);
    model(config)
        .request(&request())
        .await
        .expect("third time lucky");
    assert_eq!(fake.request_count(), 3);

    let script = (0..5).map(|_| Raw::json(503, error)).collect();
    let (fake, config) = serve(script);
    let failure = model(config)
        .request(&request())
        .await
        .expect_err("gives up");
    assert_eq!(provider_error(&failure).status, Some(503));
    assert_eq!(fake.request_count(), 4, "max_attempts");
}

#[tokio::test]
async fn a_stream_cut_mid_message_is_an_error_and_is_not_retried() {
    let full = transcript();
    let cut = full.find("th\\\"").expect("mid-arguments");
    let (fake, config) = serve(vec![
        Raw::sse(vec![full.as_bytes()[..cut].to_vec()]),
        Raw::json(200, COMPLETION),
    ]);
    let mut events = Vec::new();
    let error = model(config)
        .request_stream(&request(), &mut |event| events.push(event))
        .await
        .expect_err("cut");
    assert_eq!(provider_error(&error).kind, ProviderErrorKind::StreamCut);
    assert!(!events.is_empty(), "the start was delivered");
    assert_eq!(fake.request_count(), 1, "not retried after delivery");
}

#[tokio::test]
async fn connection_failures_are_retried_then_reported_with_the_url() {
    let address = refused_address();
    let config = OpenAiConfig {
        base_url: format!("http://{address}/v1"),
        retry: RetryPolicy {
            max_attempts: 2,
            initial_backoff: Duration::from_millis(1),
            ..RetryPolicy::default()
        },
        ..OpenAiConfig::new("m")
    };
    let error = model(config)
        .request(&request())
        .await
        .expect_err("refused");
    assert_eq!(provider_error(&error).kind, ProviderErrorKind::Connection);
    // One line naming the request, its URL and the cause, once.
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "openai: POST http://{address}/v1/chat/completions: Connection refused"
        )),
        "{message}"
    );
    assert_eq!(message.matches("onnection refused").count(), 1, "{message}");
}

#[tokio::test]
async fn a_bad_base_url_is_refused_with_the_fix() {
    let error = OpenAi::new(OpenAiConfig {
        base_url: "localhost:11434".into(),
        ..OpenAiConfig::new("m")
    })
    .expect_err("no scheme");
    assert!(
        error.to_string().contains("https://api.openai.com/v1"),
        "{error}"
    );
}

const TEXT_COMPLETION: &str = r#"{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"A cat."},"finish_reason":"stop"}],"usage":{"prompt_tokens":80,"completion_tokens":3,"total_tokens":83}}"#;

#[tokio::test]
async fn user_images_are_sent_as_image_url_parts() {
    let (fake, config) = serve(vec![Raw::json(200, TEXT_COMPLETION)]);
    let request = Request {
        messages: vec![Message::user_with_images(
            "What is this?",
            vec![
                golem_model::Image::base64("image/png", "iVBORw0KGgo="),
                golem_model::Image::url("https://example.com/cat.jpg"),
            ],
        )],
        ..Request::default()
    };
    let response = model(config).request(&request).await.expect("answer");
    assert_eq!(response.text, "A cat.");

    let seen = fake.requests();
    let want: Value = serde_json::from_str(
        r#"[{"role":"user","content":[
            {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
            {"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}},
            {"type":"text","text":"What is this?"}]}]"#,
    )
    .expect("json");
    assert_eq!(seen[0].body["messages"], want);
}

#[tokio::test]
async fn images_on_an_assistant_message_are_refused_before_sending() {
    let (fake, config) = serve(vec![Raw::json(200, TEXT_COMPLETION)]);
    let mut said = Message::assistant("a screenshot");
    said.images
        .push(golem_model::Image::base64("image/png", "iVBORw0KGgo="));
    let request = Request {
        messages: vec![Message::user("Take one"), said],
        ..Request::default()
    };
    let error = model(config).request(&request).await.expect_err("refused");
    assert!(
        error.to_string().contains("messages[1] has images"),
        "{error}"
    );
    assert_eq!(fake.request_count(), 0, "nothing was sent");
}

#[tokio::test]
async fn a_tool_results_images_follow_the_turns_tool_messages_in_a_user_message() {
    let (fake, config) = serve(vec![Raw::json(200, TEXT_COMPLETION)]);
    let calls = vec![
        golem_model::ToolCall::new("call_1", "shot", "{}").expect("call"),
        golem_model::ToolCall::new("call_2", "time", "{}").expect("call"),
    ];
    let shot = golem_model::Image::base64("image/png", "iVBORw0KGgo=");
    let request = Request {
        messages: vec![
            Message::user("Take one"),
            Message::assistant_with_tool_calls("", calls),
            Message::tool_result_with_images("call_1", "shot", "a screenshot", vec![shot]),
            Message::tool_result("call_2", "time", "noon"),
        ],
        ..Request::default()
    };
    model(config).request(&request).await.expect("answered");
    let seen = fake.requests();
    let messages = seen[0].body["messages"].as_array().expect("messages");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(roles, ["user", "assistant", "tool", "tool", "user"]);
    assert_eq!(
        messages[2]["content"], "a screenshot",
        "tool messages carry text"
    );
    let want: serde_json::Value = serde_json::from_str(
        r#"[{"type":"text","text":"The images of tool call call_1 (shot):"},
            {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}}]"#,
    )
    .expect("json");
    assert_eq!(messages[4]["content"], want);
}

#[tokio::test]
async fn a_redirect_to_another_origin_is_not_followed_with_the_prompt() {
    // The default client follows redirects within the API's origin only
    // (ADR 0017): a 307 elsewhere would carry the whole prompt there.
    let elsewhere = FakeProvider::start([Raw::json(200, COMPLETION)]);
    let mut redirect = Raw::json(307, "");
    redirect.headers.push((
        "location".into(),
        format!("{}/chat/completions", elsewhere.openai_base_url()),
    ));
    let (fake, config) = serve(vec![redirect]);
    let error = model(config)
        .request(&request())
        .await
        .expect_err("the redirect is not followed");
    assert_eq!(provider_error(&error).status, Some(307));
    assert_eq!(fake.request_count(), 1);
    assert_eq!(
        elsewhere.request_count(),
        0,
        "another origin got the prompt"
    );
}

#[tokio::test]
async fn a_schema_without_type_object_is_normalised_for_the_api() {
    let (fake, config) = serve(vec![Raw::json(200, COMPLETION)]);
    let mut request = request();
    // What an MCP server may list: the API would refuse it as it is.
    request.tools[0].input_schema =
        serde_json::from_str(r#"{"properties":{"path":{"type":"string"}}}"#).expect("schema");
    model(config).request(&request).await.expect("accepted");
    let parameters = &fake.requests()[0].body["tools"][0]["function"]["parameters"];
    assert_eq!(parameters["type"], "object");
    assert_eq!(parameters["properties"]["path"]["type"], "string");
}

#[tokio::test]
async fn every_setting_reaches_the_body_and_what_the_api_refuses_is_never_sent() {
    use golem_model::{ModelSettings, ToolChoice};
    let (fake, config) = serve(vec![Raw::json(200, COMPLETION); 5]);
    let model = model(config);
    let with = |settings: ModelSettings| Request {
        settings,
        ..request()
    };
    let all = ModelSettings {
        max_output_tokens: Some(64),
        temperature: Some(0.25),
        top_p: Some(0.5),
        stop: vec!["END".into()],
        seed: Some(42),
        tool_choice: Some(ToolChoice::Required),
        parallel_tool_calls: Some(false),
    };
    model.request(&with(all)).await.expect("answer");
    let body = &fake.requests()[0].body;
    for (field, want) in [
        ("max_completion_tokens", serde_json::json!(64)),
        ("temperature", serde_json::json!(0.25)),
        ("top_p", serde_json::json!(0.5)),
        ("stop", serde_json::json!(["END"])),
        ("seed", serde_json::json!(42)),
        ("tool_choice", serde_json::json!("required")),
        ("parallel_tool_calls", serde_json::json!(false)),
    ] {
        assert_eq!(body[field], want, "{field} in {body}");
    }
    for (choice, want) in [
        (ToolChoice::Auto, serde_json::json!("auto")),
        (ToolChoice::None, serde_json::json!("none")),
        (
            ToolChoice::Tool("read".into()),
            serde_json::json!({"type": "function", "function": {"name": "read"}}),
        ),
    ] {
        let settings = ModelSettings {
            tool_choice: Some(choice),
            ..ModelSettings::default()
        };
        model.request(&with(settings)).await.expect("answer");
        assert_eq!(
            fake.requests().last().expect("sent").body["tool_choice"],
            want
        );
    }
    // Without tools, `auto` means nothing and is left out; nothing else is set.
    let no_tools = Request {
        tools: Vec::new(),
        ..with(ModelSettings {
            tool_choice: Some(ToolChoice::Auto),
            parallel_tool_calls: Some(true),
            ..ModelSettings::default()
        })
    };
    model.request(&no_tools).await.expect("answer");
    let body = &fake.requests()[4].body;
    assert!(body.get("tool_choice").is_none() && body.get("parallel_tool_calls").is_none());
    for field in [
        "top_p",
        "stop",
        "seed",
        "max_completion_tokens",
        "temperature",
    ] {
        assert!(body.get(field).is_none(), "{field} in {body}");
    }

    // What the API would refuse fails before anything is sent.
    for (settings, complaint) in [
        (
            ModelSettings {
                temperature: Some(2.5),
                ..ModelSettings::default()
            },
            "openai: temperature 2.5 is out of range: this API takes 0 to 2",
        ),
        (
            ModelSettings {
                stop: vec!["s".into(); 5],
                ..ModelSettings::default()
            },
            "openai: 5 stop sequences given; this API takes at most 4",
        ),
        (
            ModelSettings {
                tool_choice: Some(ToolChoice::Tool("write".into())),
                ..ModelSettings::default()
            },
            "openai: the tool choice names \"write\", which is not among the 1 tools offered",
        ),
    ] {
        let error = model.request(&with(settings)).await.expect_err("refused");
        assert_eq!(error.to_string(), complaint);
    }
    assert_eq!(fake.requests().len(), 5, "none of them was sent");
}

#[tokio::test]
async fn an_answers_shape_is_sent_as_response_format() {
    let (fake, config) = serve(vec![Raw::json(200, COMPLETION)]);
    let shaped = Request {
        output: Some(golem_model::OutputSchema {
            name: "final_result".into(),
            schema: serde_json::value::RawValue::from_string(
                r#"{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}"#.into(),
            )
            .expect("json"),
            strict: true,
        }),
        ..request()
    };
    model(config).request(&shaped).await.expect("answer");
    let format = &fake.requests()[0].body["response_format"];
    assert_eq!(format["type"], "json_schema");
    assert_eq!(format["json_schema"]["name"], "final_result");
    assert_eq!(format["json_schema"]["strict"], true);
    assert_eq!(
        format["json_schema"]["schema"]["properties"]["city"]["type"],
        "string"
    );
}
