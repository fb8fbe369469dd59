//! A tool's images (ADR 0029): what a tool attaches to its context's
//! `images` travels with its tool message, for the provider to show the
//! model.

use std::sync::Arc;

use golem_agent::model::ToolCall;
use golem_agent::testmodel::{ScriptedModel, text_response, tool_calls_response};
use golem_agent::tool::Tool;
use golem_agent::{Agent, AgentConfig};

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments).expect("valid call")
}

#[tokio::test]
async fn a_tools_attached_images_travel_with_its_tool_message() {
    use golem_agent::model::Image;
    let shot = Tool::new(
        "shot",
        "A screenshot.",
        r#"{"type":"object"}"#,
        |ctx: golem_agent::tool::ToolContext<()>, _| async move {
            ctx.images
                .attach(Image::base64("image/png", "iVBORw0KGgo="));
            Ok("[image: image/png, 8 bytes, attached]".to_owned())
        },
    )
    .expect("valid tool");
    let model = ScriptedModel::new([
        tool_calls_response([call("c1", "shot", "{}")]),
        text_response("A logo."),
    ]);
    let agent = Agent::new(
        Arc::new(model.clone()),
        golem_agent::decode::text,
        AgentConfig {
            tools: vec![shot],
            ..AgentConfig::default()
        },
    )
    .expect("valid agent");
    let run = agent.run((), "Look").await.expect("the run succeeds");
    assert_eq!(
        run.messages[2].images,
        [Image::base64("image/png", "iVBORw0KGgo=")]
    );
    assert_eq!(model.requests()[1].messages[2].images.len(), 1);
}
