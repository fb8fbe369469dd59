//! What `info`, `list` and `call` print on stdout, for people and (with
//! `--json`) for programs, and how a server's log message reads on stderr.

use std::fmt::Write as _;

use golem_mcp::{Icon, LogMessage, ServerInfo, Task, TaskSupport, ToolAnnotations, ToolInfo};
use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// `info` for people: identity, protocol, capabilities, instructions.
pub fn info_text(server: &ServerInfo) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(out, "server:       {} {}", server.name, server.version);
    if let Some(title) = server.title.as_deref().filter(|title| !title.is_empty()) {
        let _ = writeln!(out, "title:        {title}");
    }
    let _ = writeln!(out, "protocol:     {}", server.protocol_version);
    let _ = writeln!(
        out,
        "capabilities: {}",
        capabilities_summary(&server.capabilities)
    );
    match server.instructions.as_deref().map(str::trim_end) {
        Some(instructions) if !instructions.is_empty() => {
            out.push_str("instructions:\n");
            out.push_str(&indented(instructions));
        }
        _ => out.push_str("instructions: none\n"),
    }
    out
}

/// `info --json`: the `initialize` answer's fields, in its own shape.
pub fn info_json(server: &ServerInfo) -> String {
    let value = serde_json::json!({
        "serverInfo": {
            "name": server.name,
            "version": server.version,
            "title": server.title,
        },
        "protocolVersion": server.protocol_version,
        "capabilities": server.capabilities,
        "instructions": server.instructions,
    });
    pretty(&value)
}

/// `tools (listChanged), resources (subscribe)`: each capability with the
/// sub-capabilities it turns on.
pub fn capabilities_summary(capabilities: &Value) -> String {
    let Some(map) = capabilities.as_object().filter(|map| !map.is_empty()) else {
        return "none".to_owned();
    };
    let parts: Vec<String> = map
        .iter()
        .map(|(name, value)| {
            let enabled: Vec<&str> = value
                .as_object()
                .map(|details| {
                    details
                        .iter()
                        .filter(|(_, on)| on.as_bool() == Some(true) || on.is_object())
                        .map(|(detail, _)| detail.as_str())
                        .collect()
                })
                .unwrap_or_default();
            if enabled.is_empty() {
                name.clone()
            } else {
                format!("{name} ({})", enabled.join(", "))
            }
        })
        .collect();
    parts.join(", ")
}

/// `list`: one name per line; `--long` adds title, description, the
/// behaviour hints, task support, and the input and output schemas (the
/// server's bytes), with a blank line between tools.
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
        if let Some(description) = tool
            .description
            .as_deref()
            .map(str::trim)
            .filter(|text| !text.is_empty())
        {
            out.push_str(&indented(description));
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
            Some(schema) => out.push_str(&indented(&format!("input: {}", schema.get()))),
            None => out.push_str("  input: (no schema given)\n"),
        }
        if let Some(schema) = &tool.output_schema {
            out.push_str(&indented(&format!("output: {}", schema.get())));
        }
    }
    out
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

/// Text ending in exactly one newline (none added to an empty text).
pub fn line(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_owned()
    } else {
        format!("{text}\n")
    }
}

/// A server's log message as one line of stderr, e.g. `golem-mcp: server
/// log [warning] db: slow query`. Control characters (newlines, terminal
/// escapes) are shown escaped: the text is the server's, the terminal ours.
pub fn log_line(message: &LogMessage) -> String {
    let mut line = format!("golem-mcp: server log [{}] ", message.level);
    if let Some(logger) = message
        .logger
        .as_deref()
        .filter(|logger| !logger.is_empty())
    {
        push_escaped(&mut line, logger);
        line.push_str(": ");
    }
    push_escaped(&mut line, &message.text());
    line
}

/// A task's status as one line, e.g. `task 7f3a: working (Analyzing
/// content...)`; the server's text with control characters escaped.
pub fn task_status(task: &Task) -> String {
    let mut line = String::from("task ");
    push_escaped(&mut line, &task.task_id);
    line.push_str(&format!(": {}", task.status));
    if let Some(message) = task
        .status_message
        .as_deref()
        .filter(|message| !message.is_empty())
    {
        line.push_str(" (");
        push_escaped(&mut line, message);
        line.push(')');
    }
    line
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
}

fn indented(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for line in text.lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "  {line}");
        }
    }
    out
}

fn pretty(value: &impl Serialize) -> String {
    // Serializing values built from parsed JSON cannot fail; should it, the
    // compact form is just as valid.
    serde_json::to_string_pretty(value)
        .or_else(|_| serde_json::to_string(value))
        .map(|text| text + "\n")
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(capabilities: Value, instructions: Option<&str>) -> ServerInfo {
        let mut server = ServerInfo::new("demo", "1.2");
        server.title = Some("Demo Server".into());
        server.protocol_version = "2025-11-25".into();
        server.capabilities = capabilities;
        server.instructions = instructions.map(str::to_owned);
        server
    }

    fn tool(json: &str) -> ToolInfo {
        serde_json::from_str(json).expect("a tool")
    }

    #[test]
    fn info_shows_identity_protocol_capabilities_and_instructions() {
        let text = info_text(&server(
            serde_json::json!({"tools": {"listChanged": true}, "logging": {}, "resources": {"subscribe": false, "listChanged": true}}),
            Some("Use echo.\n\nBe kind.\n"),
        ));
        assert_eq!(
            text,
            "server:       demo 1.2\n\
             title:        Demo Server\n\
             protocol:     2025-11-25\n\
             capabilities: logging, resources (listChanged), tools (listChanged)\n\
             instructions:\n  Use echo.\n\n  Be kind.\n"
        );
        let bare = info_text(&server(serde_json::json!({}), None));
        assert!(bare.contains("capabilities: none\n"), "{bare}");
        assert!(bare.ends_with("instructions: none\n"), "{bare}");
        let json: Value =
            serde_json::from_str(&info_json(&server(serde_json::json!({"tools": {}}), None)))
                .expect("JSON");
        assert_eq!(json["serverInfo"]["name"], "demo");
        assert_eq!(json["protocolVersion"], "2025-11-25");
        assert_eq!(json["capabilities"], serde_json::json!({"tools": {}}));
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
            "echo (Echo)\n  Echoes.\n  Twice.\n  input: {\"type\":\"object\", \"properties\":{\"message\":{}}}\n\
             \n\
             bare\n  input: (no schema given)\n"
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
             input: {}\n  output: {\"type\":\"object\"}\n"
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
    fn a_task_status_is_one_line_with_its_message_escaped() {
        let task: Task = serde_json::from_value(serde_json::json!({
            "taskId": "t-1", "status": "input_required", "statusMessage": "Which one?\n\u{1b}[2J"
        }))
        .expect("a task");
        assert_eq!(
            task_status(&task),
            "task t-1: input_required (Which one?\\n\\u{1b}[2J)"
        );
        let bare: Task =
            serde_json::from_value(serde_json::json!({"taskId": "t-2", "status": "working"}))
                .expect("a task");
        assert_eq!(task_status(&bare), "task t-2: working");
    }

    #[test]
    fn a_log_message_is_one_line_with_level_and_logger() {
        use serde_json::json;
        let message =
            |value: Value| -> LogMessage { serde_json::from_value(value).expect("a log message") };
        assert_eq!(
            log_line(&message(
                json!({"level": "warning", "logger": "db", "data": "slow query"})
            )),
            "golem-mcp: server log [warning] db: slow query"
        );
        assert_eq!(
            log_line(&message(json!({"level": "error", "data": {"code": 7}}))),
            "golem-mcp: server log [error] {\"code\":7}"
        );
        assert_eq!(
            log_line(&message(
                json!({"level": "info", "data": "two\nlines \u{1b}[31mred"})
            )),
            "golem-mcp: server log [info] two\\nlines \\u{1b}[31mred"
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
