//! The one-line stderr texts of what happens meanwhile: a server's log
//! message, a stdio server's stderr line (`-v`) and a task's status, the
//! server's text escaped. It knows
//! nothing of the console that writes them.

use golem_mcp::{LogMessage, StderrEvent, StderrLines, Task};
use serde_json::{Map, Value};

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
        line.push_str(&golem_terminal::one_line(logger));
        line.push_str(": ");
    }
    line.push_str(&golem_terminal::one_line(&log_text(&message.data)));
    line
}

/// A log message's data as text: a string as it is; an object that
/// carries its text under `msg` or `message` (fastmcp sends `{"msg": ...,
/// "extra": {...}}`) as that text followed by its other fields, `(key=value,
/// ...)`, with `extra`'s fields in place of `extra` and nulls left out; any
/// other object as its fields; anything else as compact JSON.
pub fn log_text(data: &Value) -> String {
    let Value::Object(object) = data else {
        return match data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
    };
    let text_key = ["msg", "message"]
        .into_iter()
        .find(|key| object.get(*key).is_some_and(Value::is_string));
    let mut fields: Vec<String> = Vec::new();
    let mut add = |object: &Map<String, Value>, skip: Option<&str>| {
        for (key, value) in object {
            if Some(key.as_str()) == skip || value.is_null() {
                continue;
            }
            let shown = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            fields.push(format!("{key}={shown}"));
        }
    };
    let Some(text_key) = text_key else {
        add(object, None);
        return match fields.is_empty() {
            true => data.to_string(),
            false => fields.join(", "),
        };
    };
    let rest: Map<String, Value> = object
        .iter()
        .filter(|(key, _)| *key != "extra")
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    add(&rest, Some(text_key));
    if let Some(Value::Object(extra)) = object.get("extra") {
        add(extra, None);
    } else if let Some(extra) = object.get("extra").filter(|extra| !extra.is_null()) {
        fields.push(format!("extra={extra}"));
    }
    let text = object[text_key].as_str().unwrap_or_default();
    match fields.is_empty() {
        true => text.to_owned(),
        false => format!("{text} ({})", fields.join(", ")),
    }
}

/// A line of a stdio server's stderr as `-v` shows it, e.g. `golem-mcp:
/// server stderr: listening on port 3000`: the server's text with control
/// characters escaped, like a log message's (its stderr is its log too).
/// A cut line and lines dropped say so.
pub fn stderr_line(event: &StderrEvent) -> String {
    let mut line = String::from("golem-mcp: server stderr:");
    match event {
        StderrEvent::Line { text, cut } => {
            if !text.is_empty() {
                line.push(' ');
                line.push_str(&golem_terminal::one_line(text));
            }
            if *cut {
                line.push_str(&format!("… (cut at {} bytes)", StderrLines::MAX_LINE_BYTES));
            }
        }
        StderrEvent::Dropped { lines } => line.push_str(&format!(
            " ({lines} line(s) not shown: the server wrote them faster than they were printed)"
        )),
        // A kind of event this version does not know: nothing to show.
        _ => {}
    }
    line
}

/// A task's status as one line, e.g. `task 7f3a: working (Analyzing
/// content...)`; the server's text with control characters escaped.
pub fn task_status(task: &Task) -> String {
    let mut line = String::from("task ");
    line.push_str(&golem_terminal::one_line(&task.task_id));
    line.push_str(&format!(": {}", task.status));
    if let Some(message) = task
        .status_message
        .as_deref()
        .filter(|message| !message.is_empty())
    {
        line.push_str(" (");
        line.push_str(&golem_terminal::one_line(message));
        line.push(')');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn a_server_stderr_line_is_prefixed_and_escaped() {
        let line = |text: &str, cut| StderrEvent::Line {
            text: text.into(),
            cut,
        };
        assert_eq!(
            stderr_line(&line("\u{1b}[31mred\u{1b}[0m\tok", false)),
            "golem-mcp: server stderr: \\u{1b}[31mred\\u{1b}[0m\tok"
        );
        assert_eq!(stderr_line(&line("", false)), "golem-mcp: server stderr:");
        assert_eq!(
            stderr_line(&line("long", true)),
            format!(
                "golem-mcp: server stderr: long… (cut at {} bytes)",
                StderrLines::MAX_LINE_BYTES
            )
        );
        assert!(
            stderr_line(&StderrEvent::Dropped { lines: 3 })
                .starts_with("golem-mcp: server stderr: (3 line(s) not shown")
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
    fn structured_log_data_reads_as_its_text_and_fields() {
        use serde_json::json;
        assert_eq!(
            log_text(&json!({"msg": "starting", "extra": null})),
            "starting"
        );
        assert_eq!(
            log_text(
                &json!({"msg": "disk almost full", "extra": {"free_mb": 12, "volume": "/data"}})
            ),
            "disk almost full (free_mb=12, volume=/data)"
        );
        assert_eq!(
            log_text(&json!({"message": "done", "took_ms": 5, "tags": ["a"]})),
            "done (tags=[\"a\"], took_ms=5)"
        );
        assert_eq!(log_text(&json!({"msg": "x", "extra": 3})), "x (extra=3)");
        assert_eq!(
            log_text(&json!({"msg": 1, "level": "hi"})),
            "level=hi, msg=1"
        );
        assert_eq!(log_text(&json!({})), "{}");
        assert_eq!(log_text(&json!(null)), "null");
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
            "golem-mcp: server log [error] code=7"
        );
        assert_eq!(
            log_line(&message(json!({"level": "error", "data": [1, 2]}))),
            "golem-mcp: server log [error] [1,2]"
        );
        assert_eq!(
            log_line(&message(
                json!({"level": "info", "data": "two\nlines \u{1b}[31mred"})
            )),
            "golem-mcp: server log [info] two\\nlines \\u{1b}[31mred"
        );
    }
}
