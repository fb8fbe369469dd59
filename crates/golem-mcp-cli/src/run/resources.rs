//! `resources` (and `--templates`) and `read`: the lists (an empty one
//! said so on stderr), and a resource read to stdout as text (data: exact
//! unless stdout is a terminal), or its bytes (blobs decoded) to stdout
//! (`--raw`) or a file (`--output`). It knows nothing of the checks made
//! on the sink (`plan/features.rs`).

use golem_mcp::{Client, ReadResourceResult};

use crate::failure::{Exit, Failure};
use crate::feedback::Feedback;
use crate::plan::features::Sink;
use crate::render::resources::{
    read_json, read_text, resources_json, resources_text, templates_json, templates_text,
};
use crate::run::output::{emit, emit_data, note_if_empty, write_file, write_stdout};

/// `resources`: the server's resources.
pub async fn list(client: &Client, json: bool, feedback: &mut Feedback) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage("listing resources");
    let resources = client.list_resources().await.map_err(mcp)?;
    feedback.finish();
    note_if_empty(&resources, "resources");
    emit(
        &match json {
            true => resources_json(&resources),
            false => resources_text(&resources),
        },
        json,
    )?;
    Ok(Exit::Success)
}

/// `resources --templates`: the server's resource templates.
pub async fn templates(
    client: &Client,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage("listing resource templates");
    let templates = client.list_resource_templates().await.map_err(mcp)?;
    feedback.finish();
    note_if_empty(&templates, "resource templates");
    emit(
        &match json {
            true => templates_json(&templates),
            false => templates_text(&templates),
        },
        json,
    )?;
    Ok(Exit::Success)
}

/// `read URI`: the contents, where `sink` says.
pub async fn read(
    client: &Client,
    uri: &str,
    sink: &Sink,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage(format!("reading {uri}"));
    let read = client.read_resource(uri).await.map_err(mcp)?;
    feedback.finish();
    match sink {
        Sink::Text if json => emit(&read_json(&read), json)?,
        Sink::Text => emit_data(&read_text(&read))?,
        Sink::Raw => write_stdout(&bytes(&read)?)?,
        Sink::File(path) => write_file(path, &bytes(&read)?)?,
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
