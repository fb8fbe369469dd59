//! `list` and `call`: the tools listed (and kept for the next run), or one
//! called with `Client::call_tool_raw` so that `--json` prints the server's
//! bytes (and `--output` writes its binary items to files: `save.rs`); on
//! a connection that mirrors `x-mcp-header` parameters, with the tool's
//! annotations known first (`know_header_parameters`).
//! After a refusal (`isError` or a JSON-RPC error) the tools are listed to
//! tell an unknown tool (a usage error, exit 2) from a failing one (exit 1
//! or 3). It knows nothing of tasks (`task.rs`) beyond lending them the
//! end of a call.

use std::path::Path;

use golem_mcp::{CallResult, Client, ToolInfo};
use serde_json::value::RawValue;

use crate::failure::{Exit, Failure, describe};
use crate::feedback::Feedback;
use crate::plan::typed::{Pair, typed_arguments};
use crate::render::content::{Saved, call_text};
use crate::render::text::line;
use crate::render::tools::{list_json, list_text, some_names};
use crate::run::kept::KeptTools;
use crate::run::output::{emit, emit_data, note_if_empty};
use crate::run::save::save_binaries;

/// How many tool names an "unknown tool" message lists.
pub const NAMES_SHOWN: usize = 20;

/// Where `call` puts its result: its text on stdout (with `--json`, the
/// server's bytes), and with `--output DIR` its binary items in files.
#[derive(Debug, Clone, Copy)]
pub struct ResultSink<'a> {
    /// `--json`.
    pub json: bool,
    /// `--output DIR`.
    pub save_to: Option<&'a Path>,
}

/// `list`: the tools, by name or (`--long`) in detail, or as JSON.
pub async fn list(
    client: &Client,
    long: bool,
    json: bool,
    kept: Option<&KeptTools>,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    feedback.stage("listing tools");
    let tools = client.list_tools().await.map_err(mcp)?;
    if let Some(kept) = kept {
        kept.keep(client, &tools);
    }
    let text = if json {
        list_json(&tools)
    } else {
        list_text(&tools, long)
    };
    feedback.finish();
    note_if_empty(&tools, "tools");
    emit(&text, json)?;
    Ok(Exit::Success)
}

/// `call` without `--task`: the call, with the server's progress reports
/// shown, and its result printed. With `--arg` pairs, the tools are listed
/// first, to type them by the tool's schema.
pub async fn call(
    client: &Client,
    tool: &str,
    (arguments, pairs): (&RawValue, &[Pair]),
    sink: ResultSink<'_>,
    kept: Option<&KeptTools>,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    let typed;
    let arguments = match pairs.is_empty() {
        true => {
            know_header_parameters(client, kept, feedback).await;
            arguments
        }
        false => {
            feedback.stage(format!("listing tools to find {tool}'s parameters"));
            let tools = client.list_tools().await.map_err(mcp)?;
            if let Some(kept) = kept {
                kept.keep(client, &tools);
            }
            let listed = find_tool(&tools, tool)?;
            typed = typed_arguments(tool, listed.input_schema.as_deref(), arguments, pairs)?;
            typed.as_ref()
        }
    };
    feedback.stage(format!("calling {tool}"));
    let mut on_progress = |report: golem_mcp::Progress| feedback.progress(&report);
    let raw = match client
        .call_tool_raw(tool, arguments, Some(&mut on_progress))
        .await
    {
        Ok(raw) => raw,
        Err(error) => {
            // Servers differ in how they refuse an unknown tool:
            // `isError` (below) or a JSON-RPC error such as -32602.
            // Either way, a name the server does not list is a
            // usage error naming the tools there are.
            if let Some(refusal) = error.protocol_error() {
                feedback.stage(format!("checking that {tool} exists"));
                check_tool_exists(client, tool, &refusal.message).await?;
            }
            return Err(mcp(error));
        }
    };
    finish_call(client, tool, raw, sink, feedback).await
}

/// Before a call on a connection that mirrors `x-mcp-header` parameters
/// into `Mcp-Param-*` headers (modern HTTP): the tools' annotations, from
/// a fresh kept list, else from a listing (kept for the next run), so that
/// the one `tools/call` carries its headers (a gateway may route by them).
/// A listing that fails only loses the headers: the call goes on, and a
/// server that needs them says so (`-32020`) and gets them on the resend.
async fn know_header_parameters(
    client: &Client,
    kept: Option<&KeptTools>,
    feedback: &mut Feedback,
) {
    if !client.mirrors_tool_headers() {
        return;
    }
    if let Some(tools) = kept.and_then(KeptTools::fresh) {
        client.adopt_tool_list(tools);
        return;
    }
    feedback.stage("listing tools for their header parameters");
    match client.list_tools().await {
        Ok(tools) => {
            if let Some(kept) = kept {
                kept.keep(client, &tools);
            }
        }
        Err(error) => {
            tracing::debug!(error = %describe(&error), "golem-mcp: cannot list tools for their header parameters");
        }
    }
}

/// The end of `call`: the result printed (its text, or with `--json` its
/// bytes; with `--output`, its binary items written to files first), and
/// the exit status it deserves.
pub async fn finish_call(
    client: &Client,
    tool: &str,
    raw: Box<RawValue>,
    sink: ResultSink<'_>,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let result: CallResult = serde_json::from_str(raw.get()).map_err(|error| {
        Failure::new(
            Exit::Transport,
            format!("tools/call {tool}: invalid answer from the server: {error}"),
        )
    })?;
    if result.is_error {
        feedback.stage(format!("checking that {tool} exists"));
        check_tool_exists(client, tool, &result.text()).await?;
    }
    feedback.finish();
    if sink.json {
        emit(&line(raw.get()), true)?;
    } else {
        let saved = match sink.save_to {
            Some(dir) => saved_to(dir, tool, &result)?,
            None => Vec::new(),
        };
        emit_data(&line(&call_text(&result, &saved)))?;
    }
    if result.is_error {
        eprintln!("golem-mcp: the tool {tool:?} answered with an error (isError)");
        Ok(Exit::ToolError)
    } else {
        Ok(Exit::Success)
    }
}

/// `--output DIR`: the result's binary items written there; a result with
/// none says so on stderr, lest an empty directory look like a failure.
fn saved_to(dir: &Path, tool: &str, result: &CallResult) -> Result<Vec<Saved>, Failure> {
    let saved = save_binaries(tool, &result.content, dir)?;
    if saved.is_empty() {
        eprintln!(
            "golem-mcp: the result has no image, audio or blob to write to {}",
            dir.display()
        );
    }
    Ok(saved)
}

/// The tool named `tool` among those listed, or a usage error naming the
/// tools there are.
pub fn find_tool<'t>(tools: &'t [ToolInfo], tool: &str) -> Result<&'t ToolInfo, Failure> {
    tools
        .iter()
        .find(|listed| listed.name == tool)
        .ok_or_else(|| {
            let offers = match tools.is_empty() {
                true => "it lists no tools".to_owned(),
                false => format!("it offers: {}", some_names(tools, NAMES_SHOWN)),
            };
            Failure::usage(format!("the server has no tool named {tool:?}; {offers}"))
        })
}

/// After a refused call (`isError`, which is how many servers report an
/// unknown tool, or a JSON-RPC error, which is how others do): if the
/// server does not list the tool, that is a usage error (exit 2) saying
/// which tools there are. If listing fails, the answer stands.
async fn check_tool_exists(client: &Client, tool: &str, answer: &str) -> Result<(), Failure> {
    let tools = match client.list_tools().await {
        Ok(tools) => tools,
        Err(error) => {
            tracing::debug!(error = %describe(&error), "golem-mcp: cannot list tools to check the name");
            return Ok(());
        }
    };
    if tools.iter().any(|listed| listed.name == tool) {
        return Ok(());
    }
    let answer = answer.lines().next().unwrap_or_default();
    let offers = if tools.is_empty() {
        "it lists no tools".to_owned()
    } else {
        format!("it offers: {}", some_names(&tools, NAMES_SHOWN))
    };
    Err(Failure::usage(format!(
        "the server has no tool named {tool:?} (it answered: {answer:?}); {offers}; \
         `golem-mcp list --long` with the same server options describes them"
    )))
}
