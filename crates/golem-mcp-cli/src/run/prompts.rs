//! `prompts`, `prompt` and `complete`: the list (an empty one said so on
//! stderr), one prompt got with its arguments (its messages are data:
//! exact unless stdout is a terminal), and an argument completed. It knows nothing of the checks
//! made on the arguments (`plan/features.rs`).

use std::collections::BTreeMap;

use golem_mcp::{Client, CompletionRef};

use crate::failure::{Exit, Failure};
use crate::feedback::Feedback;
use crate::plan::features::CompleteTarget;
use crate::render::prompts::{
    completion_json, completion_note, completion_text, prompt_json, prompt_text, prompts_json,
    prompts_text,
};
use crate::run::output::{emit, emit_data, note_if_empty};

/// `prompts`: the server's prompts.
pub async fn list(client: &Client, json: bool, feedback: &mut Feedback) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage("listing prompts");
    let listed = client.list_prompts().await.map_err(mcp)?;
    feedback.finish();
    note_if_empty(&listed, "prompts");
    emit(
        &match json {
            true => prompts_json(&listed),
            false => prompts_text(&listed),
        },
        json,
    )?;
    Ok(Exit::Success)
}

/// `prompt NAME`: its messages.
pub async fn get(
    client: &Client,
    name: &str,
    arguments: &BTreeMap<String, String>,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage(format!("getting prompt {name}"));
    let prompt = client.get_prompt(name, arguments).await.map_err(mcp)?;
    feedback.finish();
    match json {
        true => emit(&prompt_json(&prompt), json)?,
        false => emit_data(&prompt_text(&prompt))?,
    }
    Ok(Exit::Success)
}

/// `complete`: the values for `argument` (typed so far: `value`), one per
/// line, and a note on stderr when the server has more.
pub async fn complete(
    client: &Client,
    target: &CompleteTarget,
    (argument, value): (&str, &str),
    context: &BTreeMap<String, String>,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage(format!("completing {argument}"));
    let reference = match target {
        CompleteTarget::Prompt(name) => CompletionRef::Prompt(name),
        CompleteTarget::Template(template) => CompletionRef::ResourceTemplate(template),
    };
    let completion = client
        .complete(reference, argument, value, context)
        .await
        .map_err(mcp)?;
    feedback.finish();
    if json {
        emit(&completion_json(&completion), json)?;
    } else {
        emit(&completion_text(&completion), json)?;
        if let Some(note) = completion_note(&completion) {
            eprintln!("{note}");
        }
    }
    Ok(Exit::Success)
}
