//! `OpenAi` against an in-process fake that answers in the documented Chat Completions
//! wire format: scripted answers served in order, every request recorded.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response as HttpResponse;
use axum::routing::post;
use golem_model::{
    ApiKey, FinishReason, Message, Model, ProviderError, ProviderErrorKind, Request, RetryPolicy,
    StreamEvent, ToolCall, ToolSpec,
};
use golem_openai::{OpenAi, OpenAiConfig};
use serde_json::Value;

/// One scripted answer: status, headers, and the body in the chunks it is sent in.
struct Canned {
    status: u16,
    headers: Vec<(&'static str, String)>,
    chunks: Vec<Vec<u8>>,
}

fn json(status: u16, body: &str) -> Canned {
    Canned {
        status,
        headers: vec![("content-type", "application/json".into())],
        chunks: vec![body.as_bytes().to_vec()],
    }
}

fn sse(chunks: Vec<Vec<u8>>) -> Canned {
    Canned {
        status: 200,
        headers: vec![("content-type", "text/event-stream".into())],
        chunks,
    }
}

#[derive(Default)]
struct Fake {
    script: Mutex<VecDeque<Canned>>,
    /// (authorization header, body) of each request.
    seen: Mutex<Vec<(Option<String>, Value)>>,
}

async fn completions(
    State(fake): State<Arc<Fake>>,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResponse {
    let auth = headers
        .get("authorization")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    fake.seen.lock().expect("lock").push((auth, body));
    let canned = fake.script.lock().expect("lock").pop_front();
    let Some(canned) = canned else {
        return json_response(500, "{\"error\":{\"message\":\"script exhausted\"}}");
    };
    let mut response = HttpResponse::builder().status(canned.status);
    for (name, value) in canned.headers {
        response = response.header(name, value);
    }
    let chunks = canned.chunks.into_iter().map(Ok::<_, Infallible>);
    response
        .body(Body::from_stream(futures_util::stream::iter(chunks)))
        .expect("a valid response")
}

fn json_response(status: u16, body: &'static str) -> HttpResponse {
    HttpResponse::builder()
        .status(StatusCode::from_u16(status).expect("status"))
        .body(Body::from(body))
        .expect("a valid response")
}

async fn serve(script: Vec<Canned>) -> (Arc<Fake>, OpenAiConfig) {
    let fake = Arc::new(Fake {
        script: Mutex::new(script.into()),
        ..Fake::default()
    });
    let app = Router::new()
        .route("/v1/chat/completions", post(completions))
        .with_state(fake.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = OpenAiConfig {
        base_url: format!("http://{address}/v1"),
        api_key: Some(ApiKey::new("sk-test-secret")),
        retry: RetryPolicy {
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(40),
            ..RetryPolicy::default()
        },
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
    }
}

fn provider_error(error: &golem_model::ModelError) -> &ProviderError {
    std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<ProviderError>())
        .expect("a ProviderError source")
}

const COMPLETION: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"path\":  \"b\"}"}},{"id":"call_b","type":"function","function":{"name":"list","arguments":""}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39,"prompt_tokens_details":{"cached_tokens":10}}}"#;

#[tokio::test]
async fn sends_the_documented_request_and_maps_the_answer() {
    let (fake, config) = serve(vec![json(200, COMPLETION)]).await;
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

    let seen = fake.seen.lock().expect("lock");
    let (auth, body) = &seen[0];
    assert_eq!(auth.as_deref(), Some("Bearer sk-test-secret"));
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

/// A streamed answer with text and two parallel calls.
fn transcript() -> String {
    [
        r#"{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi "},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"content":"there"},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"read","arguments":"{\"pa"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"list","arguments":"{}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"th\":\"x\"}"}}]},"finish_reason":null}]}"#,
        r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
        r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}"#,
        "[DONE]",
    ]
    .iter()
    .map(|data| format!("data: {data}\n\n"))
    .collect()
}

#[tokio::test]
async fn streams_split_at_every_byte_over_http() {
    let bytes = transcript().into_bytes();
    let chunks = bytes.chunks(1).map(<[u8]>::to_vec).collect();
    let (fake, config) = serve(vec![sse(chunks)]).await;
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
    let text: String = events
        .iter()
        .filter_map(|event| match event {
            StreamEvent::Text(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Hi there");
    assert!(events.contains(&StreamEvent::ToolCallStarted {
        index: 1,
        id: "call_b".into(),
        name: "list".into()
    }));
    let seen = fake.seen.lock().expect("lock");
    assert_eq!(seen[0].1["stream"], true);
    assert_eq!(seen[0].1["stream_options"]["include_usage"], true);
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
        let (fake, config) = serve(vec![json(status, body)]).await;
        let error = model(config).request(&request()).await.expect_err("error");
        let provider = provider_error(&error);
        assert_eq!(provider.kind, ProviderErrorKind::Status);
        assert_eq!(provider.status, Some(status));
        assert_eq!(provider.error_type.as_deref(), error_type);
        assert_eq!(provider.retryable, retryable);
        assert!(!format!("{error:?} {error}").contains("sk-test-secret"));
        assert_eq!(fake.seen.lock().expect("lock").len(), 1, "not retried");
    }
    let (_, config) = serve(Vec::new()).await;
    assert!(!format!("{config:?} {:?}", model(config.clone())).contains("sk-test-secret"));
}

#[tokio::test]
async fn retries_429_after_its_retry_after_then_succeeds() {
    let mut limited = json(
        429,
        r#"{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}"#,
    );
    limited.headers.push(("retry-after", "1".into()));
    let (fake, config) = serve(vec![limited, json(200, COMPLETION)]).await;
    let started = Instant::now();
    let response = model(config).request(&request()).await.expect("answer");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "waited for Retry-After"
    );
    assert_eq!(response.tool_calls.len(), 2);
    assert_eq!(fake.seen.lock().expect("lock").len(), 2);
}

#[tokio::test]
async fn retries_500_twice_then_succeeds_and_gives_up_after_max_attempts() {
    let error = r#"{"error":{"message":"boom","type":"server_error","code":null}}"#;
    let (fake, config) = serve(vec![
        json(500, error),
        json(500, error),
        json(200, COMPLETION),
    ])
    .await;
    model(config)
        .request(&request())
        .await
        .expect("third time lucky");
    assert_eq!(fake.seen.lock().expect("lock").len(), 3);

    let script = (0..5).map(|_| json(503, error)).collect();
    let (fake, config) = serve(script).await;
    let failure = model(config)
        .request(&request())
        .await
        .expect_err("gives up");
    assert_eq!(provider_error(&failure).status, Some(503));
    assert_eq!(fake.seen.lock().expect("lock").len(), 4, "max_attempts");
}

#[tokio::test]
async fn a_stream_cut_mid_message_is_an_error_and_is_not_retried() {
    let full = transcript();
    let cut = full.find("th\\\"").expect("mid-arguments");
    let (fake, config) = serve(vec![
        sse(vec![full.as_bytes()[..cut].to_vec()]),
        json(200, COMPLETION),
    ])
    .await;
    let mut events = Vec::new();
    let error = model(config)
        .request_stream(&request(), &mut |event| events.push(event))
        .await
        .expect_err("cut");
    assert_eq!(provider_error(&error).kind, ProviderErrorKind::StreamCut);
    assert!(!events.is_empty(), "the start was delivered");
    assert_eq!(
        fake.seen.lock().expect("lock").len(),
        1,
        "not retried after delivery"
    );
}

#[tokio::test]
async fn connection_failures_are_retried_then_reported() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = listener.local_addr().expect("address");
    drop(listener);
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
    let (fake, config) = serve(vec![json(200, TEXT_COMPLETION)]).await;
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

    let seen = fake.seen.lock().expect("lock");
    let want: Value = serde_json::from_str(
        r#"[{"role":"user","content":[
            {"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},
            {"type":"image_url","image_url":{"url":"https://example.com/cat.jpg"}},
            {"type":"text","text":"What is this?"}]}]"#,
    )
    .expect("json");
    assert_eq!(seen[0].1["messages"], want);
}

#[tokio::test]
async fn images_outside_user_messages_are_refused_before_sending() {
    let (fake, config) = serve(vec![json(200, TEXT_COMPLETION)]).await;
    let mut tool = Message::tool_result("call_1", "shot", "a screenshot");
    tool.images
        .push(golem_model::Image::base64("image/png", "iVBORw0KGgo="));
    let request = Request {
        messages: vec![Message::user("Take one"), tool],
        ..Request::default()
    };
    let error = model(config).request(&request).await.expect_err("refused");
    assert!(
        error.to_string().contains("messages[1] has images"),
        "{error}"
    );
    assert!(
        fake.seen.lock().expect("lock").is_empty(),
        "nothing was sent"
    );
}
