//! What `prompts`, `prompt` and `complete` print: a prompt per line with
//! its arguments, a prompt's messages under their roles, completion values
//! one per line (and the note on stderr when there are more); with
//! `--json`, the answers in the protocol's shape. It knows nothing of the
//! client or of stdout.

use std::fmt::Write as _;

use golem_mcp::{Completion, GetPromptResult, Prompt, Role};
use serde_json::{Value, json};

use crate::render::content::{content_json, content_text};
use crate::render::text::{line, pretty};

/// `prompts`: one line per prompt, its name, its arguments (optional ones
/// in brackets) and its title or description.
pub fn prompts_text(prompts: &[Prompt]) -> String {
    prompts
        .iter()
        .map(|prompt| {
            let arguments: Vec<String> = prompt
                .arguments
                .iter()
                .map(|a| match a.required {
                    true => a.name.clone(),
                    false => format!("[{}]", a.name),
                })
                .collect();
            let mut line = prompt.name.clone();
            if !arguments.is_empty() {
                let _ = write!(line, " {}", arguments.join(" "));
            }
            // The SDKs send an empty description for a prompt without one.
            if let Some(about) = [&prompt.title, &prompt.description]
                .into_iter()
                .flatten()
                .find(|about| !about.trim().is_empty())
            {
                let _ = write!(line, "  ({about})");
            }
            line.push('\n');
            line
        })
        .collect()
}

/// `prompts --json`: `{"prompts": [...]}`.
pub fn prompts_json(prompts: &[Prompt]) -> String {
    pretty(&json!({ "prompts": prompts }))
}

/// `prompt`: each message's role in brackets, then its content as `call`
/// shows it.
pub fn prompt_text(prompt: &GetPromptResult) -> String {
    let mut out = String::new();
    for message in &prompt.messages {
        let _ = writeln!(out, "[{}]", role(message.role));
        out.push_str(&line(&content_text(std::slice::from_ref(&message.content))));
    }
    out
}

/// `prompt --json`: the messages (and the description, when given), each
/// content item as the protocol writes it.
pub fn prompt_json(prompt: &GetPromptResult) -> String {
    let messages: Vec<Value> = prompt
        .messages
        .iter()
        .map(|m| json!({"role": role(m.role), "content": content_json(&m.content)}))
        .collect();
    let mut result = json!({ "messages": messages });
    if let Some(description) = &prompt.description {
        result["description"] = json!(description);
    }
    pretty(&result)
}

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// `complete`: one value per line.
pub fn completion_text(completion: &Completion) -> String {
    let mut out = String::new();
    for value in &completion.values {
        out.push_str(&line(value));
    }
    out
}

/// `complete --json`: `{"values": [...], "total": ..., "hasMore": ...}`.
pub fn completion_json(completion: &Completion) -> String {
    pretty(&json!({
        "values": completion.values,
        "total": completion.total,
        "hasMore": completion.has_more,
    }))
}

/// The stderr line of a completion with more values than it sent, if so.
pub fn completion_note(completion: &Completion) -> Option<String> {
    if !completion.has_more {
        return None;
    }
    Some(match completion.total {
        Some(total) => format!(
            "golem-mcp: {} of {total} values shown",
            completion.values.len()
        ),
        None => "golem-mcp: the server has more values".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_is_shown_with_its_arguments_and_a_title_or_description_if_any() {
        let prompts: Vec<Prompt> = serde_json::from_str(
            r#"[{"name": "greet", "description": "Says hi",
                 "arguments": [{"name": "who", "required": true}, {"name": "tone"}]},
                {"name": "bare", "description": ""},
                {"name": "titled", "title": "Titled", "description": "unused"}]"#,
        )
        .expect("prompts");
        assert_eq!(
            prompts_text(&prompts),
            "greet who [tone]  (Says hi)\nbare\ntitled  (Titled)\n"
        );
    }
}
