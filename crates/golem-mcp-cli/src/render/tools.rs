//! What `list` prints: one name per line, or with `--long` each tool's
//! details; with `--json`, the tools as the server described them. And the
//! names an "unknown tool" message lists. It knows nothing of the client:
//! it is given the listed tools.

use std::fmt::Write as _;

use golem_mcp::{Icon, TaskSupport, ToolAnnotations, ToolInfo};
use serde::Serialize;
use serde_json::value::RawValue;

use crate::render::ordered::Json;
use crate::render::schema;
use crate::render::text::{dedented, indented, pretty};

/// `list`: one name per line; `--long` adds title, description, the
/// behaviour hints, task support, and a line per parameter of the input
/// and output schemas (`render/schema.rs`), with a blank line between
/// tools.
pub fn list_text(tools: &[ToolInfo], long: bool) -> String {
    let mut out = String::new();
    for (index, tool) in tools.iter().enumerate() {
        if !long {
            out.push_str(&tool.name);
            out.push('\n');
            continue;
        }
        if index > 0 {
            out.push('\n');
        }
        out.push_str(&tool.name);
        if let Some(title) = tool.title.as_deref().filter(|title| !title.is_empty()) {
            let _ = write!(out, " ({title})");
        }
        out.push('\n');
        let description = tool.description.as_deref().map(dedented);
        if let Some(description) = description.filter(|text| !text.is_empty()) {
            out.push_str(&indented(&description));
        }
        if let Some(hints) = tool.annotations.as_ref().map(hints_text) {
            out.push_str(&indented(&format!("hints: {hints}")));
        }
        if tool.task_support() != TaskSupport::Forbidden {
            out.push_str(&indented(&format!(
                "task: {}",
                tool.task_support().as_str()
            )));
        }
        match &tool.input_schema {
            Some(schema) => out.push_str(&schema_section("parameters", schema)),
            None => out.push_str("  parameters: (no input schema given)\n"),
        }
        if let Some(schema) = &tool.output_schema {
            out.push_str(&schema_section("output", schema));
        }
    }
    out
}

/// `  parameters:` (or `  output:`) and a line per property of `schema`
/// below it (`render/schema.rs`); a schema without properties on the same
/// line (`output: object`), one that is no JSON object as it came.
fn schema_section(label: &str, schema: &RawValue) -> String {
    let value: Json = match serde_json::from_str(schema.get()) {
        Ok(value @ Json::Object(_)) => value,
        _ => return indented(&format!("{label}: {}", schema.get())),
    };
    let has_properties = value
        .get("properties")
        .and_then(Json::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if !has_properties {
        return match label {
            "parameters" => "  parameters: none\n".to_owned(),
            _ => format!("  {label}: {}\n", schema::type_words(&value, &value)),
        };
    }
    format!("  {label}:\n{}", schema::parameters(&value, 4))
}

/// The behaviour hints as words, with the specification's defaults
/// applied: `read-only, idempotent, closed world`.
fn hints_text(hints: &ToolAnnotations) -> String {
    let mut words = Vec::new();
    if hints.read_only() {
        words.push("read-only");
    } else {
        words.push(if hints.destructive() {
            "destructive"
        } else {
            "not destructive"
        });
    }
    if hints.idempotent() {
        words.push("idempotent");
    }
    words.push(if hints.open_world() {
        "open world"
    } else {
        "closed world"
    });
    let mut text = words.join(", ");
    if let Some(title) = hints.title.as_deref().filter(|title| !title.is_empty()) {
        text.push_str(&format!(" (title {title:?})"));
    }
    text
}

/// One tool as `list --json` prints it: the fields this client reads, the
/// schemas and annotations verbatim.
#[derive(Serialize)]
struct ToolJson<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    #[serde(rename = "inputSchema", skip_serializing_if = "Option::is_none")]
    input_schema: Option<&'a RawValue>,
    #[serde(rename = "outputSchema", skip_serializing_if = "Option::is_none")]
    output_schema: Option<&'a RawValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    annotations: Option<&'a ToolAnnotations>,
    #[serde(skip_serializing_if = "<[Icon]>::is_empty")]
    icons: &'a [Icon],
    #[serde(skip_serializing_if = "Option::is_none")]
    execution: Option<Execution>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a RawValue>,
}

/// `execution`, when the tool says it may run as a task.
#[derive(Serialize)]
struct Execution {
    #[serde(rename = "taskSupport")]
    task_support: &'static str,
}

/// `list --json`: `{"tools": [...]}`, like a `tools/list` answer with every
/// page joined.
pub fn list_json(tools: &[ToolInfo]) -> String {
    let tools: Vec<ToolJson<'_>> = tools
        .iter()
        .map(|tool| ToolJson {
            name: &tool.name,
            title: tool.title.as_deref(),
            description: tool.description.as_deref(),
            input_schema: tool.input_schema.as_deref(),
            output_schema: tool.output_schema.as_deref(),
            annotations: tool.annotations.as_ref(),
            icons: &tool.icons,
            execution: (tool.task_support() != TaskSupport::Forbidden).then(|| Execution {
                task_support: tool.task_support().as_str(),
            }),
            meta: tool.meta.as_deref(),
        })
        .collect();
    #[derive(Serialize)]
    struct List<'a> {
        tools: Vec<ToolJson<'a>>,
    }
    pretty(&List { tools })
}

/// The names of the tools, for an "unknown tool" message: at most `limit`,
/// then how many more.
pub fn some_names(tools: &[ToolInfo], limit: usize) -> String {
    let mut names: Vec<&str> = tools.iter().take(limit).map(|t| t.name.as_str()).collect();
    let more = tools.len().saturating_sub(limit);
    let more_text = format!("and {more} more");
    if more > 0 {
        names.push(&more_text);
    }
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::text::line;
    use serde_json::Value;

    fn tool(json: &str) -> ToolInfo {
        serde_json::from_str(json).expect("a tool")
    }

    #[test]
    fn list_prints_names_or_details_with_schemas_verbatim() {
        let tools = [
            tool(
                r#"{"name":"echo","title":"Echo","description":"Echoes.\nTwice.","inputSchema":{"type":"object", "properties":{"message":{}}}}"#,
            ),
            tool(r#"{"name":"bare"}"#),
        ];
        assert_eq!(list_text(&tools, false), "echo\nbare\n");
        assert_eq!(
            list_text(&tools, true),
            "echo (Echo)\n  Echoes.\n  Twice.\n  parameters:\n    message: any, optional\n\
             \n\
             bare\n  parameters: (no input schema given)\n"
        );
        let json = list_json(&tools);
        assert!(
            json.contains(r#""inputSchema": {"type":"object", "properties":{"message":{}}}"#),
            "schema bytes kept: {json}"
        );
        let value: Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(value["tools"][1], serde_json::json!({"name": "bare"}));
    }

    #[test]
    fn list_long_shows_hints_task_support_and_output_schema() {
        let tools = [tool(
            r#"{"name":"weather","inputSchema":{},"outputSchema":{"type":"object"},
                "annotations":{"readOnlyHint":true,"openWorldHint":false,"title":"Weather"},
                "execution":{"taskSupport":"optional"},"icons":[{"src":"data:,x"}],"_meta":{"k":1}}"#,
        )];
        assert_eq!(
            list_text(&tools, true),
            "weather\n  hints: read-only, idempotent, closed world (title \"Weather\")\n  task: optional\n  \
             parameters: none\n  output: object\n"
        );
        let shaped = [tool(
            r#"{"name":"forecast","inputSchema":[1],"outputSchema":{"type":"object",
                "properties":{"celsius":{"type":"number"}},"required":["celsius"]}}"#,
        )];
        assert_eq!(
            list_text(&shaped, true),
            "forecast\n  parameters: [1]\n  output:\n    celsius: number, required\n"
        );
        let value: Value = serde_json::from_str(&list_json(&tools)).expect("valid JSON");
        assert_eq!(
            value["tools"][0]["annotations"],
            serde_json::json!({"title": "Weather", "readOnlyHint": true, "openWorldHint": false})
        );
        assert_eq!(value["tools"][0]["execution"]["taskSupport"], "optional");
        assert_eq!(value["tools"][0]["icons"][0]["src"], "data:,x");
        assert_eq!(value["tools"][0]["_meta"]["k"], 1);
        let destructive = [tool(r#"{"name":"rm","annotations":{}}"#)];
        assert!(
            list_text(&destructive, true).contains("hints: destructive, open world\n"),
            "{}",
            list_text(&destructive, true)
        );
    }

    #[test]
    fn names_are_cut_after_a_limit() {
        let tools: Vec<ToolInfo> = ["a", "b", "c"]
            .iter()
            .map(|name| tool(&format!(r#"{{"name":"{name}"}}"#)))
            .collect();
        assert_eq!(some_names(&tools, 5), "a, b, c");
        assert_eq!(some_names(&tools, 2), "a, b, and 1 more");
        assert_eq!(line("x"), "x\n");
        assert_eq!(line("x\n"), "x\n");
        assert_eq!(line(""), "");
    }
}
