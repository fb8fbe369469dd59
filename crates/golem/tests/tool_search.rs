//! Tool search (ADR 0028): past the threshold the model gets the always
//! loaded tools and `search_tools`; what a search finds is offered from the
//! next request on, for the rest of the run and of a continued conversation.

use std::sync::Arc;

use golem_agent::model::{Message, Request, ToolCall};
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::Tool;
use golem_agent::{Agent, AgentConfig, OfferedTools, SEARCH_TOOL, ToolSearch};

/// `count` tools named `tool_N`, each saying what it does; `weather_forecast`
/// among them, and `clock` always loaded.
fn tools(count: usize) -> Vec<Tool<()>> {
    let mut tools: Vec<Tool<()>> = (0..count)
        .map(|n| {
            Tool::new(
                format!("tool_{n}"),
                format!("Does chore number {n} of the household."),
                r#"{"type":"object"}"#,
                move |_, _| async move { Ok(format!("chore {n} done")) },
            )
            .expect("valid tool")
        })
        .collect();
    tools.push(
        Tool::new(
            "weather_forecast",
            "The weather forecast for a city, by day.",
            r#"{"type":"object","properties":{"city":{"type":"string"}}}"#,
            |_, _| async { Ok("sunny".to_owned()) },
        )
        .expect("valid tool"),
    );
    tools.push(
        Tool::new("clock", "The time.", r#"{"type":"object"}"#, |_, _| async {
            Ok("noon".to_owned())
        })
        .expect("valid tool")
        .always_loaded(true),
    );
    tools
}

fn agent(model: &ScriptedModel, count: usize, search: ToolSearch) -> Agent<(), String> {
    Agent::new(
        Arc::new(model.clone()),
        golem_agent::decode::text,
        AgentConfig {
            tools: tools(count),
            tool_search: search,
            ..AgentConfig::default()
        },
    )
    .expect("valid agent")
}

fn offered(request: &Request) -> Vec<&str> {
    request
        .tools
        .iter()
        .map(|tool| tool.name.as_str())
        .collect()
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments).expect("valid call")
}

#[tokio::test]
async fn past_the_threshold_the_model_searches_and_the_matches_are_offered_from_then_on() {
    let model = ScriptedModel::new([
        tool_calls_response([call(
            "s1",
            SEARCH_TOOL,
            r#"{"query":"weather in a city","limit":2}"#,
        )]),
        tool_calls_response([call("w1", "weather_forecast", r#"{"city":"Lisbon"}"#)]),
        text_response("Sunny."),
    ]);
    let run = agent(&model, 40, ToolSearch::default())
        .run((), "Weather in Lisbon?")
        .await
        .expect("the run succeeds");
    assert_eq!(run.output, "Sunny.");
    let requests = model.requests();
    assert_eq!(offered(&requests[0]), ["clock", SEARCH_TOOL]);
    // Each line of the result begins with the exact name, best first.
    let found = &run.messages[2].content;
    let first = found.lines().next().expect("a match");
    assert_eq!(
        first,
        "weather_forecast: The weather forecast for a city, by day."
    );
    assert!(found.lines().count() <= 2, "{found}");
    assert!(offered(&requests[1]).contains(&"weather_forecast"));
    assert_eq!(offered(&requests[1]).len(), 2 + found.lines().count());
    // Still offered after it ran.
    assert!(offered(&requests[2]).contains(&"weather_forecast"));
    assert_eq!(run.messages[4].content, "sunny");
}

#[tokio::test]
async fn at_or_under_the_threshold_and_with_never_every_tool_is_offered() {
    for (count, search) in [(28, ToolSearch::default()), (200, ToolSearch::Never)] {
        let model = ScriptedModel::new([text_response("ok")]);
        agent(&model, count, search)
            .run((), "hi")
            .await
            .expect("the run succeeds");
        let names = offered(&model.requests()[0]).len();
        assert_eq!(names, count + 2);
        assert!(!offered(&model.requests()[0]).contains(&SEARCH_TOOL));
    }
    let model = ScriptedModel::new([text_response("ok")]);
    agent(&model, 0, ToolSearch::Always)
        .run((), "hi")
        .await
        .expect("the run succeeds");
    assert_eq!(offered(&model.requests()[0]), ["clock", SEARCH_TOOL]);
}

#[tokio::test]
async fn a_continued_conversation_keeps_what_it_found_and_a_tool_called_by_name_runs() {
    let model = ScriptedModel::new([
        tool_calls_response([call("s1", SEARCH_TOOL, r#"{"query":"forecast"}"#)]),
        text_response("Found it."),
        // Next message: a tool never found, called by its exact name.
        tool_calls_response([call("t7", "tool_7", "{}")]),
        text_response("Done."),
    ]);
    let agent = agent(&model, 40, ToolSearch::default());
    let first = agent
        .run((), "Find the forecast tool.")
        .await
        .expect("run 1");
    let OfferedTools { loaded, searchable } = agent.offered_tools(&first.messages).expect("view");
    assert_eq!(loaded, ["weather_forecast", "clock"]);
    assert_eq!(searchable.len(), 40);
    let second = agent
        .run_with_history((), first.messages, Message::user("Do chore 7."))
        .await
        .expect("run 2");
    assert_eq!(second.output, "Done.");
    let requests = model.requests();
    assert!(offered(&requests[2]).contains(&"weather_forecast"));
    assert!(!offered(&requests[2]).contains(&"tool_7"));
    assert!(offered(&requests[3]).contains(&"tool_7"));
    assert_eq!(second.messages.last().expect("answer").content, "Done.");
}

#[tokio::test]
async fn bad_search_arguments_and_unknown_names_are_corrections_that_point_at_search() {
    let model = ScriptedModel::new([
        tool_calls_response([
            call("s1", SEARCH_TOOL, r#"{"limit":0,"query":"x"}"#),
            call("u1", "forecast_weather", "{}"),
        ]),
        tool_calls_response([call("s2", SEARCH_TOOL, r#"{"query":"zzz qqq"}"#)]),
        text_response("Nothing."),
    ]);
    let run = agent(&model, 40, ToolSearch::default())
        .run((), "hi")
        .await
        .expect("the run succeeds within the budgets");
    let rejected = &run.messages[2].content;
    assert!(
        rejected.contains("limit must be an integer from 1 to 25"),
        "{rejected}"
    );
    let unknown = &run.messages[3].content;
    assert!(
        unknown.contains("There is no tool named \"forecast_weather\""),
        "{unknown}"
    );
    assert!(unknown.contains("\"clock\", \"search_tools\""), "{unknown}");
    assert!(
        !unknown.contains("tool_39"),
        "only offered tools are listed: {unknown}"
    );
    assert!(
        unknown.ends_with("Other tools can be found with \"search_tools\"."),
        "{unknown}"
    );
    assert!(
        run.messages[5]
            .content
            .starts_with("No tool matches \"zzz qqq\"")
    );
}

#[tokio::test]
async fn a_thousand_tools_are_indexed_and_the_best_match_ranks_first() {
    use golem_agent::tool::ToolIndex;
    let tools = tools(1000);
    let index = ToolIndex::new(tools.iter().map(|tool| (tool, "house")));
    let found = index.search("city weather forecast", 8);
    assert_eq!(found[0].name, "weather_forecast");
    assert_eq!(index.len(), 1002);
}

#[tokio::test]
async fn a_tool_of_the_same_name_keeps_it_and_the_agents_own_take_others() {
    use golem_agent::{READ_OUTPUT_TOOL_FALLBACK, SEARCH_TOOL_FALLBACK};
    let own = |name: &str, text: String| {
        Tool::new(
            name,
            "A server's tool of that name.",
            r#"{"type":"object"}"#,
            move |_, _| {
                let text = text.clone();
                async move { Ok(text) }
            },
        )
        .expect("valid tool")
        .always_loaded(true)
    };
    let mut tools = tools(40);
    tools.push(own(SEARCH_TOOL, "the server's search".into()));
    tools.push(own("read_tool_output", "x\n".repeat(40_000)));
    let model = ScriptedModel::new([
        tool_calls_response([call("s1", SEARCH_TOOL_FALLBACK, r#"{"query":"forecast"}"#)]),
        tool_calls_response([call("r1", "read_tool_output", "{}")]),
        text_response("Done."),
    ]);
    let agent = Agent::new(
        Arc::new(model.clone()),
        golem_agent::decode::text,
        AgentConfig {
            tools,
            ..AgentConfig::default()
        },
    )
    .expect("valid agent");
    let run = agent.run((), "hi").await.expect("the run succeeds");
    let first = model.requests()[0].clone();
    assert!(offered(&first).contains(&SEARCH_TOOL), "the server's");
    assert!(offered(&first).contains(&SEARCH_TOOL_FALLBACK), "ours");
    assert!(run.messages[2].content.starts_with("weather_forecast: "));
    // The server's read_tool_output is cut like any tool, and the note names ours.
    let cut = &run.messages[4].content;
    assert!(
        cut.contains(&format!("Read more with {READ_OUTPUT_TOOL_FALLBACK} {{")),
        "{}",
        &cut[cut.len().saturating_sub(300)..]
    );
    assert!(offered(&model.requests()[2]).contains(&READ_OUTPUT_TOOL_FALLBACK));
}
