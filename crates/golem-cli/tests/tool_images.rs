//! A tool's image reaches the model (ADR 0029), from the real everything
//! server's `get-tiny-image`: Anthropic gets it as an image block in the
//! tool result, OpenAI (whose tool messages carry text only) in a user
//! message right after the tool results. The fake providers refuse what the
//! real APIs refuse.

use golem_fake_provider::{FakeProvider, Reply, last_tool_result};
use serde_json::{Value, json};

mod support;
use support::*;

fn everything(dir: &TempDir) -> std::path::PathBuf {
    dir.file(
        "everything.json",
        &json!({"mcpServers": {"everything": {"command": everything_server()}}}).to_string(),
    )
}

/// A model that asks for the tiny image, then answers.
fn looks() -> impl Fn(&Value) -> Reply {
    |body| match last_tool_result(body) {
        None => Reply::ToolCall {
            name: "get-tiny-image".into(),
            arguments: "{}".into(),
        },
        Some(_) => Reply::Text("I see the MCP logo.".into()),
    }
}

/// The body of the request after the tool call, `golem run` with `extra`
/// arguments on the fake OpenAI API.
fn second_openai_request(extra: &[&str]) -> Value {
    second_request(|provider| {
        let mut command = run_on(provider);
        command.args(extra);
        command
    })
}

/// The body of the request after the tool call, `golem run` as `command`
/// makes it for the fake provider.
fn second_request(command: impl Fn(&FakeProvider) -> assert_cmd::Command) -> Value {
    let dir = TempDir::new();
    let provider = FakeProvider::start_with(looks());
    let output = command(&provider)
        .arg("--config")
        .arg(everything(&dir))
        .arg("Show me the tiny image")
        .output()
        .expect("golem runs");
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    provider.requests()[1].body.clone()
}

#[test]
fn openai_gets_the_image_in_a_user_message_after_the_tool_results() {
    let body = second_openai_request(&[]);
    let messages = body["messages"].as_array().expect("messages");
    let tool = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    let said = tool["content"].as_str().expect("text");
    assert!(said.contains("[image: image/png, "), "{said}");
    assert!(said.contains(" bytes, attached]"), "{said}");
    let last = messages.last().expect("a message");
    assert_eq!(last["role"], "user");
    let url = last["content"][1]["image_url"]["url"]
        .as_str()
        .expect("an image part");
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url}"
    );
}

#[test]
fn anthropic_gets_the_image_in_the_tool_result() {
    let body = second_request(run_on_anthropic);
    let turn = body["messages"]
        .as_array()
        .expect("messages")
        .last()
        .expect("a turn");
    let result = &turn["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["content"][1]["type"], "image");
    assert_eq!(result["content"][1]["source"]["media_type"], "image/png");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains(" bytes, attached]")),
        "{result}"
    );
}

#[test]
fn no_tool_images_keeps_them_placeholder_lines() {
    let body = second_openai_request(&["--no-tool-images"]);
    let messages = body["messages"].as_array().expect("messages");
    let last = messages.last().expect("a message");
    assert_eq!(last["role"], "tool");
    let said = last["content"].as_str().expect("text");
    assert!(said.contains(" bytes not shown]"), "{said}");
}
