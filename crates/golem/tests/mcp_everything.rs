//! End to end: the agent, the bridge and a real stdio MCP server nobody here
//! wrote, the reference `@modelcontextprotocol/server-everything` from npm.
//! Installed by `scripts/install-peers.sh` (the README's test command runs
//! it); a missing peer fails the test.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use golem_agent::mcp::{Client, StdioConfig, StdioTransport};
use golem_agent::model::{Model, ModelRetry, Request, Role, ToolCall};
use golem_agent::testmodel::{FunctionModel, ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::Tool;
use golem_agent::{Agent, AgentConfig, RunError};

mod support;
use support::{call, patiently};

fn server_everything() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/node_modules/.bin/mcp-server-everything");
    assert!(
        path.exists(),
        "{} is missing: run scripts/install-peers.sh (the README's test command does)",
        path.display()
    );
    path
}

/// A connected client and the server's tools, bridged.
async fn connect() -> (Client, Vec<Tool<()>>) {
    let transport = StdioTransport::spawn(StdioConfig {
        args: vec!["stdio".into()],
        ..StdioConfig::new(server_everything().to_string_lossy())
    })
    .expect("spawns server-everything");
    let client = Client::new(transport);
    patiently("initialize", client.initialize())
        .await
        .expect("initializes");
    let tools = golem_agent::mcp::as_tools::<()>(&client)
        .await
        .expect("bridges the tools");
    (client, tools)
}

fn agent(
    model: impl Model + 'static,
    tools: Vec<Tool<()>>,
    config: AgentConfig<()>,
) -> Agent<(), String> {
    Agent::new(
        Arc::new(model),
        golem_agent::decode::text,
        AgentConfig { tools, ..config },
    )
    .expect("a valid agent")
}

/// Answers with the last tool result once there is one; calls `call` before.
fn answer_from_tool(first: ToolCall) -> FunctionModel {
    FunctionModel::new(move |request: &Request| {
        Ok(match request.messages.last() {
            Some(last) if last.role == Role::Tool => {
                text_response(format!("The tool said: {}", last.content))
            }
            _ => tool_calls_response([first.clone()]),
        })
    })
}

#[tokio::test]
async fn the_model_calls_echo_and_the_output_contains_the_echo() {
    let (client, tools) = connect().await;
    let model = answer_from_tool(call("call_1", "echo", r#"{"message":"hello, agent"}"#));
    let agent = agent(model.clone(), tools, AgentConfig::default());

    let run = patiently("the run", agent.run((), "Echo something."))
        .await
        .expect("run succeeds");

    assert_eq!(run.output, "The tool said: Echo: hello, agent");
    assert_eq!(run.usage.requests, 2);
    let tool_message = &run.messages[2];
    assert_eq!(tool_message.tool_call_id.as_deref(), Some("call_1"));
    assert_eq!(tool_message.tool_name.as_deref(), Some("echo"));
    // The model was offered the server's tools, echo's schema as the server
    // wrote it (`$schema` and `type` first: not re-serialised, which would
    // sort the keys).
    let offered = &model.requests()[0].tools;
    let echo = offered
        .iter()
        .find(|spec| spec.name == "echo")
        .expect("echo offered");
    assert!(
        echo.input_schema
            .get()
            .starts_with(r#"{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"message""#),
        "{}",
        echo.input_schema.get()
    );
    let listed = client.list_tools().await.expect("lists");
    assert_eq!(offered.len(), listed.len());
    for (spec, info) in offered.iter().zip(&listed) {
        assert_eq!(spec.name, info.name);
        assert_eq!(
            Some(spec.input_schema.get()),
            info.input_schema.as_deref().map(|schema| schema.get())
        );
    }
    client.close().await.expect("closes");
}

/// Calls `get-sum` with a bad argument, then with good ones, then answers.
fn sum_script() -> ScriptedModel {
    ScriptedModel::new([
        tool_calls_response([call("c1", "get-sum", r#"{"a":"one","b":2}"#)]),
        tool_calls_response([call("c2", "get-sum", r#"{"a":1,"b":2}"#)]),
        text_response("3"),
    ])
}

#[tokio::test]
async fn by_default_a_rejected_call_is_corrected() {
    let (client, tools) = connect().await;
    let model = sum_script();
    let agent = agent(model.clone(), tools, AgentConfig::default());

    let run = patiently("the run", agent.run((), "Add one and two."))
        .await
        .expect("run succeeds");

    assert_eq!(run.output, "3");
    let results: Vec<&str> = run
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| message.content.as_str())
        .collect();
    assert_eq!(results.len(), 2);
    assert!(
        results[0].contains("rejected the arguments") && results[0].contains("expected number"),
        "the history shows the server's rejection: {}",
        results[0]
    );
    assert_eq!(results[1], "The sum of 1 and 2 is 3.");
    assert!(
        model.requests()[1]
            .messages
            .iter()
            .any(|m| m.content == results[0]),
        "the model saw the rejection"
    );
    client.close().await.expect("closes");
}

#[tokio::test]
async fn with_no_budget_a_rejected_call_fails_the_run_with_the_model_retry() {
    let (client, tools) = connect().await;
    let model = sum_script();
    let config = AgentConfig {
        tool_retries: 0,
        ..AgentConfig::default()
    };
    let agent = agent(model.clone(), tools, config);

    let error = patiently("the run", agent.run((), "Add one and two."))
        .await
        .expect_err("correction is off");

    assert!(
        matches!(&error, RunError::ToolRetriesExhausted { tool, attempts: 1, budget: 0, .. } if tool == "get-sum"),
        "{error:?}"
    );
    let retry = error
        .find::<ModelRetry>()
        .expect("the ModelRetry is reachable");
    assert!(retry.reason().contains("expected number"), "{retry}");
    assert_eq!(model.remaining(), 2, "the model was not asked again");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn a_timeout_cancels_the_call_and_the_next_run_on_the_same_client_succeeds() {
    let (client, tools) = connect().await;
    // Two runs on one agent (one client): the first calls an operation that
    // would take ten minutes, the second echoes.
    let model = ScriptedModel::new([
        tool_calls_response([call(
            "slow",
            "trigger-long-running-operation",
            r#"{"duration":600,"steps":1}"#,
        )]),
        tool_calls_response([call("fast", "echo", r#"{"message":"still here"}"#)]),
        text_response("done"),
    ]);
    let agent = agent(
        model,
        tools,
        AgentConfig {
            tool_timeout: Some(Duration::from_millis(500)),
            ..AgentConfig::default()
        },
    );

    let error = patiently(
        "the run (the tool timeout ends it)",
        agent.run((), "Take your time."),
    )
    .await
    .expect_err("timed out");
    assert!(
        matches!(&error, RunError::ToolTimeout { tool, .. } if tool == "trigger-long-running-operation"),
        "{error:?}"
    );

    let run = patiently("the run", agent.run((), "Echo."))
        .await
        .expect("the client is still usable");
    assert_eq!(run.messages[2].content, "Echo: still here");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn eight_calls_of_one_turn_through_one_client_get_their_own_results() {
    let (client, tools) = connect().await;
    let calls: Vec<ToolCall> = (0..8)
        .map(|i| {
            call(
                &format!("call_{i}"),
                "echo",
                &format!(r#"{{"message":"message {i}"}}"#),
            )
        })
        .collect();
    let model = ScriptedModel::new([tool_calls_response(calls), text_response("done")]);
    let agent = agent(model, tools, AgentConfig::default());

    let run = patiently("the run", agent.run((), "Echo eight times."))
        .await
        .expect("run succeeds");

    let results: Vec<(Option<&str>, &str)> = run
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| (message.tool_call_id.as_deref(), message.content.as_str()))
        .collect();
    let expected: Vec<(String, String)> = (0..8)
        .map(|i| (format!("call_{i}"), format!("Echo: message {i}")))
        .collect();
    assert_eq!(
        results,
        expected
            .iter()
            .map(|(id, text)| (Some(id.as_str()), text.as_str()))
            .collect::<Vec<_>>()
    );
    client.close().await.expect("closes");
}

/// How many calls the concurrency test makes in one turn, and how long each
/// takes on the server.
const CONCURRENT_CALLS: usize = 8;
const CALL_DURATION: Duration = Duration::from_millis(100);

#[tokio::test]
async fn eight_slow_calls_of_one_turn_run_concurrently_on_the_real_server() {
    let (client, tools) = connect().await;
    // Each call holds the server for 100 ms (one step, no progress token):
    // serialized, the turn takes 800 ms; concurrent, about 100 ms.
    let arguments = format!(
        r#"{{"duration":{},"steps":1}}"#,
        CALL_DURATION.as_secs_f64()
    );
    let calls: Vec<ToolCall> = (0..CONCURRENT_CALLS)
        .map(|i| {
            call(
                &format!("slow_{i}"),
                "trigger-long-running-operation",
                &arguments,
            )
        })
        .collect();
    let model = ScriptedModel::new([tool_calls_response(calls), text_response("all done")]);
    let agent = agent(model.clone(), tools, AgentConfig::default());

    // The model is scripted and answers at once: the run's time is the tool
    // stage's, plus microseconds.
    let started = Instant::now();
    let run = patiently("the run", agent.run((), "Run eight operations."))
        .await
        .expect("run succeeds");
    let took = started.elapsed();
    eprintln!("{CONCURRENT_CALLS} calls of {CALL_DURATION:?} each took {took:?} in all");

    assert_eq!(run.output, "all done");
    assert_eq!(run.usage.requests, 2);
    assert_eq!(model.remaining(), 0, "the model was asked exactly twice");
    let results: Vec<(Option<&str>, Option<&str>, &str)> = run
        .messages
        .iter()
        .filter(|message| message.role == Role::Tool)
        .map(|message| {
            (
                message.tool_call_id.as_deref(),
                message.tool_name.as_deref(),
                message.content.as_str(),
            )
        })
        .collect();
    let ids: Vec<String> = (0..CONCURRENT_CALLS).map(|i| format!("slow_{i}")).collect();
    let expected: Vec<(Option<&str>, Option<&str>, &str)> = ids
        .iter()
        .map(|id| {
            (
                Some(id.as_str()),
                Some("trigger-long-running-operation"),
                "Long running operation completed. Duration: 0.1 seconds, Steps: 1.",
            )
        })
        .collect();
    assert_eq!(results, expected, "one message per call, in call order");
    // Serialized calls take at least 800 ms; concurrent ones about 100 ms.
    // The bound leaves room for a loaded machine (a Node server on two
    // shared cores) and stays well below serial execution.
    assert!(
        took < Duration::from_millis(450),
        "the {CONCURRENT_CALLS} calls did not overlap: the turn took {took:?} \
         (serialized: at least {:?})",
        CALL_DURATION * CONCURRENT_CALLS as u32
    );
    // Each call really held the server for its duration: a turn faster than
    // one call would mean the tool did not run as asked.
    assert!(took >= CALL_DURATION, "the turn took only {took:?}");
    client.close().await.expect("closes");
}

#[tokio::test]
async fn a_servers_sampling_request_is_answered_by_a_model() {
    let sampler = Arc::new(ScriptedModel::new([text_response("the model's own words")]));
    let config = golem_agent::mcp::ClientConfig::default()
        .with_sampling(golem_agent::mcp::sampling_with_model(sampler.clone()));
    let transport = StdioTransport::spawn(StdioConfig {
        args: vec!["stdio".into()],
        ..StdioConfig::new(server_everything().to_string_lossy())
    })
    .expect("spawns server-everything");
    let client = Client::with_config(transport, config);
    patiently("initialize", client.initialize())
        .await
        .expect("initializes");
    let arguments = serde_json::value::RawValue::from_string(r#"{"prompt":"what is MCP?"}"#.into())
        .expect("JSON");
    let result = patiently(
        "the sampling call",
        client.call_tool("trigger-sampling-request", &arguments),
    )
    .await
    .expect("called");
    let text = result.text();
    assert!(text.contains("the model's own words"), "{text}");
    assert!(
        text.contains(sampler.name()),
        "the answer names the model: {text}"
    );
    let requests = sampler.requests();
    assert_eq!(requests.len(), 1, "one sampling request");
    assert_eq!(
        requests[0].instructions.as_deref(),
        Some("You are a helpful test server.")
    );
    assert_eq!(requests[0].messages.len(), 1);
    assert_eq!(requests[0].messages[0].role, Role::User);
    assert!(requests[0].messages[0].content.contains("what is MCP?"));
    client.close().await.expect("closes");
}

#[tokio::test]
async fn a_call_without_the_toolsets_prefix_is_corrected_and_the_prefixed_call_runs() {
    let (client, _) = connect().await;
    let toolset = patiently(
        "the toolset",
        golem_agent::mcp::McpToolset::<()>::new(
            &client,
            golem_agent::mcp::ToolsetConfig::default().with_prefix("everything"),
        ),
    )
    .await
    .expect("lists the tools");
    // A model that drops the prefix, then follows the correction.
    let model = FunctionModel::new(|request: &Request| {
        let last = request.messages.last().expect("a message");
        Ok(match last.role {
            Role::Tool if last.content.starts_with("There is no tool") => {
                let named = last
                    .content
                    .split('"')
                    .nth(3)
                    .expect("a suggested name")
                    .to_owned();
                tool_calls_response([call("c2", &named, r#"{"message":"found it"}"#)])
            }
            Role::Tool => text_response(format!("The tool said: {}", last.content)),
            _ => tool_calls_response([call("c1", "echo", r#"{"message":"lost"}"#)]),
        })
    });
    let agent = Agent::new(
        Arc::new(model.clone()),
        golem_agent::decode::text,
        AgentConfig {
            toolsets: vec![Arc::new(toolset)],
            ..AgentConfig::default()
        },
    )
    .expect("a valid agent");
    let mut events = Vec::new();
    let mut sink = |event: golem_agent::RunEvent| events.push(event);

    let run = patiently("the run", agent.run_stream((), "Echo.", &mut sink))
        .await
        .expect("the run succeeds after the correction");

    assert!(run.output.contains("found it"), "{}", run.output);
    let correction = &run.messages[2].content;
    assert!(
        correction.contains("Did you mean \"everything_echo\"?"),
        "{correction}"
    );
    assert!(
        events.iter().any(|event| matches!(event,
            golem_agent::RunEvent::UnknownTool { call, likely, .. }
                if call.name == "echo" && likely == &["everything_echo"])),
        "{events:?}"
    );
    assert_eq!(model.requests().len(), 3);
    client.close().await.expect("closes");
}
