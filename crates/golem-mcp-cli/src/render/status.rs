//! The one-line stderr texts of what happens meanwhile: a server's log
//! message and a task's status, the server's text escaped. It knows
//! nothing of the console that writes them.

use golem_mcp::{LogMessage, Task};

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
    line.push_str(&golem_terminal::one_line(&message.text()));
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
}
