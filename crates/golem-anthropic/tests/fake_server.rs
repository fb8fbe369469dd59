//! `Anthropic` against an in-process fake that answers in the documented Messages wire
//! format: scripted answers served in order, every request recorded.

use std::time::{Duration, Instant};

use golem_anthropic::{Anthropic, AnthropicConfig, DEFAULT_MAX_TOKENS};
use golem_fake_provider::{
    FakeProvider, Raw, anthropic, provider_error, quick_retries, refused_address, streamed_text,
};
use golem_model::{
    ApiKey, FinishReason, Message, Model, ProviderErrorKind, Request, RetryPolicy, StreamEvent,
    ToolCall, ToolSpec, Usage,
};
use serde_json::Value;

const KEY: &str = "sk-ant-test-secret";

/// A fake serving `script` in order, and a config that reaches it with a key
/// and quick retries.
fn serve(script: Vec<Raw>) -> (FakeProvider, AnthropicConfig) {
    let fake = FakeProvider::start(script);
    let config = AnthropicConfig {
        base_url: fake.anthropic_base_url().to_owned(),
        api_key: Some(ApiKey::new(KEY)),
        retry: quick_retries(),
        ..AnthropicConfig::new("claude-test")
    };
    (fake, config)
}

fn model(config: AnthropicConfig) -> Anthropic {
    Anthropic::new(config).expect("valid config")
}

const SCHEMA: &str = r#"{"type":"object", "properties":{"path":{"type":"string"}}}"#;

fn request() -> Request {
    Request {
        instructions: Some("Be brief.".into()),
        messages: vec![
            Message::user("Read a"),
            Message::assistant_with_tool_calls(
                "Reading.",
                vec![ToolCall::new("toolu_1", "read", r#"{"path":  "a"}"#).expect("json")],
            ),
            Message::tool_result("toolu_1", "read", "contents"),
        ],
        tools: vec![ToolSpec {
            name: "read".into(),
            description: "Reads a file".into(),
            input_schema: serde_json::from_str(SCHEMA).expect("schema"),
        }],
        ..Request::default()
    }
}

/// A message with text and two tool calls, the first's input spaced oddly.
const MESSAGE: &str = r#"{"id":"msg_01","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"Reading b."},{"type":"tool_use","id":"toolu_a","name":"read","input":{"path":  "b", "n": 2.50}},{"type":"tool_use","id":"toolu_b","name":"list","input":{}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":30,"cache_creation_input_tokens":12,"cache_read_input_tokens":10,"output_tokens":9}}"#;

#[tokio::test]
async fn sends_the_documented_request_and_maps_the_answer() {
    let (fake, config) = serve(vec![Raw::json(200, MESSAGE)]);
    let response = model(config).request(&request()).await.expect("answer");

    assert_eq!(response.text, "Reading b.");
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(response.tool_calls[0].id, "toolu_a");
    assert_eq!(
        response.tool_calls[0].arguments.get(),
        r#"{"path":  "b", "n": 2.50}"#
    );
    assert_eq!(response.tool_calls[1].name, "list");
    assert_eq!(response.tool_calls[1].arguments.get(), "{}");
    assert_eq!(response.finish_reason, FinishReason::ToolCalls);
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 30,
            output_tokens: 9,
            requests: 1,
            cache_read_tokens: 10,
            cache_write_tokens: 12,
        }
    );

    let seen = fake.requests();
    let (raw, body) = (&seen[0].raw, &seen[0].body);
    let header = |name| seen[0].header(name);
    assert_eq!(header("x-api-key"), Some(KEY));
    assert_eq!(header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(header("content-type"), Some("application/json"));
    assert_eq!(header("authorization"), None);
    let want: Value = serde_json::from_str(
        r#"{"model":"claude-test","max_tokens":4096,"stream":false,"system":"Be brief.",
          "messages":[
            {"role":"user","content":[{"type":"text","text":"Read a"}]},
            {"role":"assistant","content":[{"type":"text","text":"Reading."},
              {"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a"}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"contents"}]}],
          "tools":[{"name":"read","description":"Reads a file","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]}"#,
    )
    .expect("json");
    assert_eq!(body, &want);
    let raw = String::from_utf8_lossy(raw);
    assert!(
        raw.contains(r#""input":{"path":  "a"}"#),
        "input verbatim: {raw}"
    );
    assert!(raw.contains(SCHEMA), "schema verbatim: {raw}");
}

#[tokio::test]
async fn max_tokens_and_version_are_configurable() {
    let (fake, config) = serve(vec![Raw::json(200, MESSAGE)]);
    let config = AnthropicConfig {
        max_tokens: 100,
        version: "2099-01-01".into(),
        temperature: Some(0.5),
        ..config
    };
    model(config).request(&request()).await.expect("answer");
    let seen = fake.requests();
    assert_eq!(seen[0].body["max_tokens"], 100);
    assert_eq!(seen[0].body["temperature"], 0.5);
    assert_eq!(seen[0].headers["anthropic-version"], "2099-01-01");
    assert_eq!(AnthropicConfig::new("m").max_tokens, DEFAULT_MAX_TOKENS);
}

#[tokio::test]
async fn a_requests_output_limit_replaces_the_configs_max_tokens() {
    let (fake, config) = serve(vec![Raw::json(200, MESSAGE)]);
    let limited = Request {
        settings: golem_model::ModelSettings {
            max_output_tokens: Some(50),
            ..Default::default()
        },
        ..request()
    };
    model(config).request(&limited).await.expect("answer");
    assert_eq!(fake.requests()[0].body["max_tokens"], 50);
}

const START: &str = r#"{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":20,"cache_creation_input_tokens":0,"cache_read_input_tokens":8,"output_tokens":1}}}"#;

/// A streamed answer with text and two tool calls.
fn transcript() -> String {
    anthropic::sse(&[
        START,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type": "ping"}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"there"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{}}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":""}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"pa"}}"#,
        r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"th\":\"x\"}"}}"#,
        r#"{"type":"content_block_stop","index":1}"#,
        r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_b","name":"list","input":{}}}"#,
        r#"{"type":"content_block_stop","index":2}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":6}}"#,
        r#"{"type":"message_stop"}"#,
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
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 20,
            output_tokens: 6,
            requests: 1,
            cache_read_tokens: 8,
            cache_write_tokens: 0,
        }
    );
    assert_eq!(streamed_text(&events), "Hi there");
    assert!(events.contains(&StreamEvent::ToolCallStarted {
        index: 1,
        id: "toolu_b".into(),
        name: "list".into()
    }));
    let seen = fake.requests();
    assert_eq!(seen[0].body["stream"], true);
    assert_eq!(seen[0].headers["accept"], "text/event-stream");
}

#[tokio::test]
async fn input_json_deltas_split_at_every_point_over_http() {
    let input = r#"{"path": "dir/é \"q\"", "n" : [1, 2.50]}"#;
    let cuts: Vec<usize> = (0..=input.len())
        .filter(|cut| input.is_char_boundary(*cut))
        .collect();
    let delta = |part: &str| {
        serde_json::json!({"type":"content_block_delta","index":0,
            "delta":{"type":"input_json_delta","partial_json":part}})
        .to_string()
    };
    let script = cuts
        .iter()
        .map(|&cut| {
            let (head, tail) = (delta(&input[..cut]), delta(&input[cut..]));
            let body = anthropic::sse(&[
                START,
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_a","name":"read","input":{}}}"#,
                &head,
                &tail,
                r#"{"type":"content_block_stop","index":0}"#,
                r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":6}}"#,
                r#"{"type":"message_stop"}"#,
            ]);
            // The network splits it too: between the two deltas' events.
            let middle = body.find(&tail).expect("second delta");
            Raw::sse(vec![
                body.as_bytes()[..middle].to_vec(),
                body.as_bytes()[middle..].to_vec(),
            ])
        })
        .collect();
    let (fake, config) = serve(script);
    let model = model(config);
    for cut in cuts {
        let mut fragments = String::new();
        let response = model
            .request_stream(&request(), &mut |event| {
                if let StreamEvent::ToolCallArguments { fragment, .. } = event {
                    fragments.push_str(&fragment);
                }
            })
            .await
            .expect("answer");
        assert_eq!(
            response.tool_calls[0].arguments.get(),
            input,
            "cut at {cut}"
        );
        assert_eq!(fragments, input, "cut at {cut}");
    }
    assert_eq!(fake.request_count(), input.chars().count() + 1);
}

#[tokio::test]
async fn error_bodies_of_each_kind_are_typed_and_the_key_never_shows() {
    let cases = [
        (400, "invalid_request_error", false),
        (401, "authentication_error", false),
        (402, "billing_error", false),
        (403, "permission_error", false),
        (404, "not_found_error", false),
        (413, "request_too_large", false),
        (429, "rate_limit_error", true),
        (500, "api_error", true),
        (504, "timeout_error", true),
        (529, "overloaded_error", true),
    ];
    for (status, kind, retryable) in cases {
        let body = anthropic::error_body(kind, "it went wrong");
        let (fake, config) = serve(vec![Raw::json(status, &body)]);
        let config = AnthropicConfig {
            retry: RetryPolicy::none(),
            ..config
        };
        let error = model(config).request(&request()).await.expect_err("error");
        let provider = provider_error(&error);
        assert_eq!(provider.kind, ProviderErrorKind::Status, "{status}");
        assert_eq!(provider.status, Some(status));
        assert_eq!(provider.error_type.as_deref(), Some(kind));
        assert_eq!(provider.message, "it went wrong");
        assert_eq!(provider.retryable, retryable, "{status}");
        assert_eq!(
            error.to_string(),
            format!("anthropic: HTTP {status}: {kind}: it went wrong")
        );
        assert!(!format!("{error:?} {error}").contains(KEY));
        assert_eq!(fake.request_count(), 1);
    }

    let (_fake, config) = serve(vec![Raw::json(502, "<html>Bad Gateway</html>")]);
    let config = AnthropicConfig {
        retry: RetryPolicy::none(),
        ..config
    };
    let error = model(config.clone())
        .request(&request())
        .await
        .expect_err("error");
    let provider = provider_error(&error);
    assert_eq!(
        (provider.error_type.as_deref(), provider.message.as_str()),
        (None, "<html>Bad Gateway</html>")
    );
    let debug = format!("{config:?} {:?}", model(config.clone()));
    assert!(!debug.contains(KEY), "{debug}");
}

#[tokio::test]
async fn retries_429_after_its_retry_after_then_succeeds() {
    let mut limited = Raw::json(429, &anthropic::error_body("rate_limit_error", "slow down"));
    limited.headers.push(("retry-after".into(), "1".into()));
    let (fake, config) = serve(vec![limited, Raw::json(200, MESSAGE)]);
    let started = Instant::now();
    let response = model(config).request(&request()).await.expect("answer");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited for retry-after"
    );
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(fake.request_count(), 2);
}

#[tokio::test]
async fn retries_529_twice_then_succeeds_and_gives_up_after_max_attempts() {
    let overloaded = || {
        Raw::json(
            529,
            &anthropic::error_body("overloaded_error", "Overloaded"),
        )
    };
    let (fake, config) = serve(vec![overloaded(), overloaded(), Raw::json(200, MESSAGE)]);
    model(config)
        .request(&request())
        .await
        .expect("third time lucky");
    assert_eq!(fake.request_count(), 3);

    let (fake, config) = serve((0..5).map(|_| overloaded()).collect());
    let failure = model(config)
        .request(&request())
        .await
        .expect_err("gives up");
    let provider = provider_error(&failure);
    assert_eq!(provider.status, Some(529));
    assert_eq!(provider.error_type.as_deref(), Some("overloaded_error"));
    assert_eq!(fake.request_count(), 4, "max_attempts");
}

#[tokio::test]
async fn an_overloaded_error_event_before_any_content_is_retried() {
    let failed = anthropic::sse(&[
        START,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ]);
    let (fake, config) = serve(vec![
        Raw::sse(vec![failed.into_bytes()]),
        Raw::sse(vec![transcript().into_bytes()]),
    ]);
    let mut events = Vec::new();
    let response = model(config)
        .request_stream(&request(), &mut |event| events.push(event))
        .await
        .expect("answer on the second attempt");
    assert_eq!(response.text, "Hi there");
    assert_eq!(fake.request_count(), 2);
    assert_eq!(events[0], StreamEvent::Text("Hi ".into()), "nothing twice");
}

#[tokio::test]
async fn an_error_event_after_content_is_reported_and_not_retried() {
    let full = transcript();
    let cut = full.find("event: content_block_stop").expect("after text");
    let mut body = full[..cut].to_owned();
    body.push_str(&anthropic::sse(&[
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    ]));
    let (fake, config) = serve(vec![
        Raw::sse(vec![body.into_bytes()]),
        Raw::json(200, MESSAGE),
    ]);
    let mut events = Vec::new();
    let error = model(config)
        .request_stream(&request(), &mut |event| events.push(event))
        .await
        .expect_err("error event");
    let provider = provider_error(&error);
    assert_eq!(provider.error_type.as_deref(), Some("overloaded_error"));
    assert_eq!(provider.message, "Overloaded");
    assert!(!events.is_empty());
    assert_eq!(fake.request_count(), 1, "not retried after delivery");
}

#[tokio::test]
async fn a_stream_cut_mid_message_is_an_error_and_is_not_retried() {
    let full = transcript();
    let cut = full.find("th\\\"").expect("mid-input");
    let (fake, config) = serve(vec![
        Raw::sse(vec![full.as_bytes()[..cut].to_vec()]),
        Raw::json(200, MESSAGE),
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
async fn a_slow_answer_times_out() {
    let mut slow = Raw::json(200, MESSAGE);
    slow.delay = Duration::from_secs(5);
    let (_fake, config) = serve(vec![slow]);
    let config = AnthropicConfig {
        request_timeout: Duration::from_millis(200),
        retry: RetryPolicy::none(),
        ..config
    };
    let started = Instant::now();
    let error = model(config)
        .request(&request())
        .await
        .expect_err("timeout");
    let provider = provider_error(&error);
    assert_eq!(provider.kind, ProviderErrorKind::Timeout);
    assert!(provider.retryable);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn answers_larger_than_the_bound_are_refused() {
    let (_fake, config) = serve(vec![
        Raw::json(200, MESSAGE),
        Raw::sse(vec![transcript().into_bytes()]),
    ]);
    let model = model(AnthropicConfig {
        max_response_bytes: 64,
        retry: RetryPolicy::none(),
        ..config
    });
    let error = model.request(&request()).await.expect_err("too large");
    assert_eq!(provider_error(&error).kind, ProviderErrorKind::TooLarge);
    let error = model
        .request_stream(&request(), &mut |_| {})
        .await
        .expect_err("too large");
    assert_eq!(provider_error(&error).kind, ProviderErrorKind::TooLarge);
}

#[tokio::test]
async fn connection_failures_are_retried_then_reported_with_the_url_without_the_key() {
    let address = refused_address();
    let config = AnthropicConfig {
        // Credentials in the URL are not shown.
        base_url: format!("http://golem:{KEY}@{address}"),
        api_key: Some(ApiKey::new(KEY)),
        retry: RetryPolicy {
            max_attempts: 2,
            initial_backoff: Duration::from_millis(1),
            ..RetryPolicy::default()
        },
        ..AnthropicConfig::new("m")
    };
    let error = model(config)
        .request(&request())
        .await
        .expect_err("refused");
    assert_eq!(provider_error(&error).kind, ProviderErrorKind::Connection);
    assert!(!format!("{error:?} {error}").contains(KEY));
    let message = error.to_string();
    assert!(
        message.starts_with(&format!(
            "anthropic: POST http://{address}/v1/messages: Connection refused"
        )),
        "{message}"
    );
}

#[tokio::test]
async fn a_bad_base_url_is_refused_with_the_fix() {
    let error = Anthropic::new(AnthropicConfig {
        base_url: "api.anthropic.com".into(),
        ..AnthropicConfig::new("m")
    })
    .expect_err("no scheme");
    assert!(
        error.to_string().contains("https://api.anthropic.com"),
        "{error}"
    );
}

#[tokio::test]
async fn a_key_that_cannot_be_a_header_is_refused_without_showing_it() {
    let error = Anthropic::new(AnthropicConfig {
        api_key: Some(ApiKey::new(format!("{KEY}\n"))),
        ..AnthropicConfig::new("m")
    })
    .expect_err("a line break");
    assert!(error.to_string().contains("api_key"), "{error}");
    assert!(!format!("{error:?} {error}").contains(KEY));
}

const TEXT_MESSAGE: &str = r#"{"id":"msg_02","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"A cat."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":80,"output_tokens":3}}"#;

#[tokio::test]
async fn user_images_are_sent_as_image_blocks() {
    let (fake, config) = serve(vec![Raw::json(200, TEXT_MESSAGE)]);
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
            {"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},
            {"type":"image","source":{"type":"url","url":"https://example.com/cat.jpg"}},
            {"type":"text","text":"What is this?"}]}]"#,
    )
    .expect("json");
    assert_eq!(seen[0].body["messages"], want);
}

#[tokio::test]
async fn images_outside_user_messages_are_refused_before_sending() {
    let (fake, config) = serve(vec![Raw::json(200, TEXT_MESSAGE)]);
    let mut assistant = Message::assistant("here");
    assistant
        .images
        .push(golem_model::Image::url("https://example.com/a.png"));
    let request = Request {
        messages: vec![Message::user("hi"), assistant],
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
async fn a_redirect_to_another_origin_is_not_followed_with_the_key_and_the_prompt() {
    // The default client follows redirects within the API's origin only
    // (ADR 0017): reqwest drops `Authorization` on a redirect to another
    // host, not `x-api-key`, and a 307 would send the prompt along too.
    let elsewhere = FakeProvider::start([Raw::json(200, MESSAGE)]);
    let mut redirect = Raw::json(307, "");
    redirect.headers.push((
        "location".into(),
        format!("{}/v1/messages", elsewhere.anthropic_base_url()),
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
        "another origin got the key and the prompt"
    );
}

#[tokio::test]
async fn a_schema_without_type_object_is_normalised_for_the_api() {
    let (fake, config) = serve(vec![Raw::json(200, MESSAGE)]);
    let mut request = request();
    // What an MCP server may list: the API would refuse it as it is.
    request.tools[0].input_schema = serde_json::from_str("{}").expect("schema");
    model(config).request(&request).await.expect("accepted");
    assert_eq!(
        fake.requests()[0].body["tools"][0]["input_schema"],
        serde_json::json!({"type": "object"})
    );
}

#[tokio::test]
async fn every_setting_reaches_the_body_and_a_seed_is_refused_before_sending() {
    use golem_model::{ModelSettings, ToolChoice};
    let (fake, config) = serve(vec![Raw::json(200, MESSAGE); 4]);
    let model = model(config);
    let with = |settings: ModelSettings| Request {
        settings,
        ..request()
    };
    let all = ModelSettings {
        max_output_tokens: Some(64),
        top_p: Some(0.5),
        stop: vec!["END".into()],
        tool_choice: Some(ToolChoice::Tool("read".into())),
        parallel_tool_calls: Some(false),
        ..ModelSettings::default()
    };
    model.request(&with(all)).await.expect("answer");
    let body = &fake.requests()[0].body;
    for (field, want) in [
        ("max_tokens", serde_json::json!(64)),
        ("top_p", serde_json::json!(0.5)),
        ("stop_sequences", serde_json::json!(["END"])),
        (
            "tool_choice",
            serde_json::json!({"type": "tool", "name": "read", "disable_parallel_tool_use": true}),
        ),
    ] {
        assert_eq!(body[field], want, "{field} in {body}");
    }
    for (choice, parallel, want) in [
        (
            Some(ToolChoice::Required),
            None,
            serde_json::json!({"type": "any"}),
        ),
        (
            Some(ToolChoice::None),
            None,
            serde_json::json!({"type": "none"}),
        ),
        (
            None,
            Some(false),
            serde_json::json!({"type": "auto", "disable_parallel_tool_use": true}),
        ),
    ] {
        let settings = ModelSettings {
            tool_choice: choice,
            parallel_tool_calls: parallel,
            ..ModelSettings::default()
        };
        model.request(&with(settings)).await.expect("answer");
        assert_eq!(
            fake.requests().last().expect("sent").body["tool_choice"],
            want
        );
    }

    for (settings, complaint) in [
        (
            ModelSettings {
                seed: Some(1),
                ..ModelSettings::default()
            },
            "anthropic: this API has no seed; leave it unset for this model",
        ),
        (
            ModelSettings {
                temperature: Some(1.5),
                ..ModelSettings::default()
            },
            "anthropic: temperature 1.5 is out of range: this API takes 0 to 1",
        ),
        (
            ModelSettings {
                temperature: Some(0.5),
                top_p: Some(0.5),
                ..ModelSettings::default()
            },
            "anthropic: temperature and top_p are both set; Claude models take one of them",
        ),
    ] {
        let error = model.request(&with(settings)).await.expect_err("refused");
        assert_eq!(error.to_string(), complaint);
    }
    let no_tools = Request {
        tools: Vec::new(),
        ..with(ModelSettings {
            tool_choice: Some(ToolChoice::Required),
            ..ModelSettings::default()
        })
    };
    let error = model.request(&no_tools).await.expect_err("refused");
    assert!(
        error.to_string().contains("no tools are offered"),
        "{error}"
    );
    assert_eq!(fake.requests().len(), 4, "none of them was sent");
}

/// An answer's shape as a request's output schema.
fn shaped(request: Request) -> Request {
    Request {
        output: Some(golem_model::OutputSchema {
            name: "final_result".into(),
            schema: serde_json::value::RawValue::from_string(
                r#"{"type":"object","properties":{"city":{"type":"string"}}}"#.into(),
            )
            .expect("json"),
            strict: false,
        }),
        ..request
    }
}

const ANSWERED: &str = r#"{"id":"msg_02","type":"message","role":"assistant","model":"claude-test","content":[{"type":"tool_use","id":"toolu_f","name":"final_result","input":{"city": "Oslo"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":30,"output_tokens":9}}"#;

#[tokio::test]
async fn an_answers_shape_is_a_tool_the_model_must_call_and_its_input_is_the_answer() {
    let streamed = anthropic::sse(&[
        START,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_f","name":"final_result","input":{}}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\": "}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"Oslo\"}"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":6}}"#,
        r#"{"type":"message_stop"}"#,
    ]);
    let (fake, config) = serve(vec![
        Raw::json(200, ANSWERED),
        Raw::json(200, ANSWERED),
        Raw::json(200, ANSWERED),
        Raw::json(200, ANSWERED),
        Raw::sse(vec![streamed.into_bytes()]),
    ]);
    let model = model(config);

    // With tools of its own: the output tool is one more, and some tool must be called.
    let answer = model.request(&shaped(request())).await.expect("answer");
    assert_eq!(answer.text, r#"{"city": "Oslo"}"#);
    assert!(answer.tool_calls.is_empty());
    assert_eq!(answer.finish_reason, FinishReason::Stop);
    let body = &fake.requests()[0].body;
    let tools = body["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 2);
    assert_eq!(tools[1]["name"], "final_result");
    assert_eq!(
        tools[1]["input_schema"]["properties"]["city"]["type"],
        "string"
    );
    assert_eq!(body["tool_choice"], serde_json::json!({"type": "any"}));

    // Without: that tool is the one to call.
    let alone = shaped(Request {
        tools: Vec::new(),
        ..request()
    });
    model.request(&alone).await.expect("answer");
    assert_eq!(
        fake.requests()[1].body["tool_choice"],
        serde_json::json!({"type": "tool", "name": "final_result"})
    );

    // A forced call of a real tool leaves the output tool out of that
    // request; `none` makes the answer the only tool to call.
    for (index, choice, want, offered) in [
        (
            2,
            golem_model::ToolChoice::Required,
            serde_json::json!({"type": "any"}),
            1,
        ),
        (
            3,
            golem_model::ToolChoice::None,
            serde_json::json!({"type": "tool", "name": "final_result"}),
            2,
        ),
    ] {
        let forced = Request {
            settings: golem_model::ModelSettings {
                tool_choice: Some(choice),
                ..Default::default()
            },
            ..shaped(request())
        };
        model.request(&forced).await.expect("answer");
        let body = &fake.requests()[index].body;
        assert_eq!(body["tool_choice"], want, "{body}");
        assert_eq!(
            body["tools"].as_array().map(Vec::len),
            Some(offered),
            "{body}"
        );
    }

    // Streamed: the answer arrives as text, never as a tool call.
    let mut events = Vec::new();
    let answer = model
        .request_stream(&alone, &mut |event| events.push(event))
        .await
        .expect("answer");
    assert_eq!(answer.text, r#"{"city": "Oslo"}"#);
    assert_eq!(
        events,
        [
            StreamEvent::Text("{\"city\": ".into()),
            StreamEvent::Text("\"Oslo\"}".into())
        ]
    );
}
