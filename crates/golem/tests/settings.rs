//! `AgentConfig::settings` and `Agent::run_with_settings`: the model
//! settings reach every request, a run's win where set, and a tool choice
//! that forces a call holds only until the model has called a tool.

use std::sync::Arc;

use golem_agent::model::{Message, ModelSettings, ToolChoice};
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::{Agent, AgentConfig};

mod support;
use support::{bounded, call, constant};

fn agent(model: &ScriptedModel, settings: ModelSettings) -> Agent<(), String> {
    let config = AgentConfig {
        tools: vec![constant("clock", "12:00")],
        settings,
        ..AgentConfig::default()
    };
    Agent::new(Arc::new(model.clone()), golem_agent::decode::text, config).expect("valid")
}

#[tokio::test]
async fn the_runs_settings_win_over_the_agents_on_every_request() {
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "clock", "{}")]),
        text_response("Noon."),
    ]);
    let agent = agent(
        &model,
        ModelSettings {
            temperature: Some(0.7),
            seed: Some(1),
            stop: vec!["END".into()],
            ..ModelSettings::default()
        },
    );
    let run_settings = ModelSettings {
        temperature: Some(0.0),
        max_output_tokens: Some(100),
        ..ModelSettings::default()
    };

    let run = bounded(
        "the run",
        agent.run_with_settings((), Vec::new(), Message::user("Time?"), &run_settings, None),
    )
    .await
    .expect("runs");

    assert_eq!(run.output, "Noon.");
    let want = ModelSettings {
        temperature: Some(0.0),
        seed: Some(1),
        stop: vec!["END".into()],
        max_output_tokens: Some(100),
        ..ModelSettings::default()
    };
    for request in model.requests() {
        assert_eq!(request.settings, want);
    }
}

#[tokio::test]
async fn a_run_that_sets_none_has_the_agents() {
    let model = ScriptedModel::new([text_response("Hi.")]);
    let settings = ModelSettings {
        temperature: Some(0.7),
        ..ModelSettings::default()
    };
    let agent = agent(&model, settings.clone());

    bounded("the run", agent.run((), "Hi")).await.expect("runs");

    assert_eq!(model.requests()[0].settings, settings);
}

#[tokio::test]
async fn a_forced_tool_choice_holds_until_the_model_has_called_a_tool() {
    for forced in [ToolChoice::Required, ToolChoice::Tool("clock".into())] {
        let model = ScriptedModel::new([
            tool_calls_response([call("c1", "clock", "{}")]),
            text_response("Noon."),
        ]);
        let agent = agent(
            &model,
            ModelSettings {
                tool_choice: Some(forced.clone()),
                temperature: Some(0.5),
                ..ModelSettings::default()
            },
        );

        let run = bounded("the run", agent.run((), "Time?"))
            .await
            .expect("runs");

        assert_eq!(run.output, "Noon.");
        let requests = model.requests();
        assert_eq!(requests[0].settings.tool_choice, Some(forced.clone()));
        assert_eq!(
            requests[1].settings.tool_choice, None,
            "after a call the model may answer"
        );
        assert_eq!(
            requests[1].settings.temperature,
            Some(0.5),
            "the rest holds"
        );
    }
    // `none` and `auto` hold throughout.
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "clock", "{}")]),
        text_response("Noon."),
    ]);
    let agent = agent(
        &model,
        ModelSettings {
            tool_choice: Some(ToolChoice::Auto),
            ..ModelSettings::default()
        },
    );
    bounded("the run", agent.run((), "Time?"))
        .await
        .expect("runs");
    assert!(
        model
            .requests()
            .iter()
            .all(|request| request.settings.tool_choice == Some(ToolChoice::Auto))
    );
}

#[tokio::test]
async fn a_forced_tool_is_offered_under_tool_search_and_search_does_not_meet_the_force() {
    use golem_agent::{SEARCH_TOOL, ToolSearch};
    let tools: Vec<_> = (0..40)
        .map(|index| constant(&format!("t{index}"), "done"))
        .collect();
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", SEARCH_TOOL, r#"{"query":"t3"}"#)]),
        tool_calls_response([call("c2", "t3", "{}")]),
        text_response("Done."),
    ]);
    let config = AgentConfig {
        tools,
        tool_search: ToolSearch::Always,
        settings: ModelSettings {
            tool_choice: Some(ToolChoice::Tool("t3".into())),
            ..ModelSettings::default()
        },
        ..AgentConfig::default()
    };
    let agent: Agent<(), String> =
        Agent::new(Arc::new(model.clone()), golem_agent::decode::text, config).expect("valid");

    bounded("the run", agent.run((), "Go")).await.expect("runs");

    let requests = model.requests();
    assert!(
        requests[0].tools.iter().any(|tool| tool.name == "t3"),
        "the forced tool is offered from the first request"
    );
    let choices: Vec<_> = requests
        .iter()
        .map(|request| request.settings.tool_choice.clone())
        .collect();
    let forced = Some(ToolChoice::Tool("t3".into()));
    assert_eq!(
        choices,
        [forced.clone(), forced, None],
        "a search is not the call"
    );
}
