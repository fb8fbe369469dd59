//! Running the subcommands beyond tools (`resources`, `read`, `prompts`,
//! `prompt`, `complete`, `ping`) on an initialized client; what they print
//! is rendered in `render/`.

use std::io::Write as _;
use std::path::Path;

use golem_mcp::{Client, CompletionRef, ReadResourceResult};

use crate::failure::{Exit, Failure};
use crate::feedback::Feedback;
use crate::plan::features::{CompleteTarget, FeatureAction, Sink};
use crate::render::{prompts, resources, server};
use crate::run::emit;

/// Runs a subcommand of this module on an initialized client.
pub async fn run(
    client: &Client,
    action: &FeatureAction,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    match action {
        FeatureAction::Resources { templates: false } => {
            feedback.stage("listing resources");
            let resources = client.list_resources().await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => resources::resources_json(&resources),
                false => resources::resources_text(&resources),
            })?;
        }
        FeatureAction::Resources { templates: true } => {
            feedback.stage("listing resource templates");
            let templates = client.list_resource_templates().await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => resources::templates_json(&templates),
                false => resources::templates_text(&templates),
            })?;
        }
        FeatureAction::Read { uri, sink } => {
            feedback.stage(format!("reading {uri}"));
            let read = client.read_resource(uri).await.map_err(mcp)?;
            feedback.finish();
            match sink {
                Sink::Text if json => emit(&resources::read_json(&read))?,
                Sink::Text => emit(&resources::read_text(&read))?,
                Sink::Raw => write_stdout(&bytes(&read)?)?,
                Sink::File(path) => write_file(path, &bytes(&read)?)?,
            }
        }
        FeatureAction::Prompts => {
            feedback.stage("listing prompts");
            let listed = client.list_prompts().await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => prompts::prompts_json(&listed),
                false => prompts::prompts_text(&listed),
            })?;
        }
        FeatureAction::Prompt { name, arguments } => {
            feedback.stage(format!("getting prompt {name}"));
            let prompt = client.get_prompt(name, arguments).await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => prompts::prompt_json(&prompt),
                false => prompts::prompt_text(&prompt),
            })?;
        }
        FeatureAction::Complete {
            target,
            argument,
            value,
            context,
        } => {
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
                emit(&prompts::completion_json(&completion))?;
            } else {
                emit(&prompts::completion_text(&completion))?;
                if let Some(note) = prompts::completion_note(&completion) {
                    eprintln!("{note}");
                }
            }
        }
        FeatureAction::Ping => {
            feedback.stage("pinging");
            let started = std::time::Instant::now();
            client.ping().await.map_err(mcp)?;
            let millis = started.elapsed().as_secs_f64() * 1000.0;
            feedback.finish();
            emit(&match json {
                true => server::ping_json(millis),
                false => server::ping_text(millis),
            })?;
        }
    }
    Ok(Exit::Success)
}

/// Every item's bytes, blobs decoded.
fn bytes(read: &ReadResourceResult) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    for item in &read.contents {
        out.extend(item.decode().map_err(|error| Failure::from_mcp(&error))?);
    }
    Ok(out)
}

fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(error) => Err(Failure::new(
            Exit::Transport,
            format!("cannot write the contents to stdout: {error}"),
        )),
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes).map_err(|error| {
        Failure::usage(format!(
            "--output {}: cannot write it: {error}",
            path.display()
        ))
    })
}
