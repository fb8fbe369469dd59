//! One field of an elicitation form on the terminal: how it is described
//! (title, description, type, choices, default) and how a typed answer is
//! read into a value that fits it. It knows nothing of the form's other
//! fields or of where the text comes from.

use std::io::Write;

use golem_mcp::{Choice, Field, FieldKind};
use serde_json::Value;

pub fn describe_field(
    field: &Field,
    number: usize,
    count: usize,
    output: &mut impl Write,
) -> std::io::Result<()> {
    let title = golem_terminal::one_line(field.title.as_deref().unwrap_or(&field.name));
    let required = if field.required { ", required" } else { "" };
    writeln!(
        output,
        "[{number}/{count}] {title} ({}{required})",
        golem_terminal::one_line(&field.name)
    )?;
    if let Some(description) = &field.description {
        writeln!(output, "  {}", golem_terminal::message(description))?;
    }
    writeln!(output, "  type: {}", describe_kind(&field.kind))?;
    if let FieldKind::Choice { choices } | FieldKind::MultiChoice { choices, .. } = &field.kind {
        for (index, choice) in choices.iter().enumerate() {
            let value = golem_terminal::one_line(&choice.value);
            match &choice.title {
                Some(title) if title != &choice.value => {
                    let title = golem_terminal::one_line(title);
                    writeln!(output, "    {}) {value} ({title})", index + 1)?;
                }
                _ => writeln!(output, "    {}) {value}", index + 1)?,
            }
        }
    }
    match &field.default {
        Some(default) => writeln!(
            output,
            "  default (Enter): {}",
            golem_terminal::one_line(&shown(default))
        )?,
        None if !field.required => writeln!(output, "  Enter leaves it out")?,
        None => {}
    }
    Ok(())
}

fn describe_kind(kind: &FieldKind) -> String {
    let bounds = |low: Option<String>, high: Option<String>, unit: &str| match (low, high) {
        (Some(low), Some(high)) => format!(", {low} to {high}{unit}"),
        (Some(low), None) => format!(", at least {low}{unit}"),
        (None, Some(high)) => format!(", at most {high}{unit}"),
        (None, None) => String::new(),
    };
    match kind {
        FieldKind::String {
            min_length,
            max_length,
            format,
        } => {
            let format = format
                .as_deref()
                .map(|format| format!(" ({format})"))
                .unwrap_or_default();
            let length = bounds(
                min_length.map(|n| n.to_string()),
                max_length.map(|n| n.to_string()),
                " characters",
            );
            format!("text{format}{length}")
        }
        FieldKind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let name = if *integer { "integer" } else { "number" };
            let range = bounds(
                minimum.map(|n| n.to_string()),
                maximum.map(|n| n.to_string()),
                "",
            );
            format!("{name}{range}")
        }
        FieldKind::Boolean => "yes or no (y/n)".into(),
        FieldKind::Choice { .. } => "one of these (its value, number or title)".into(),
        FieldKind::MultiChoice {
            min_items,
            max_items,
            ..
        } => {
            let count = bounds(
                min_items.map(|n| n.to_string()),
                max_items.map(|n| n.to_string()),
                " of them",
            );
            format!("some of these, separated by commas{count}")
        }
        _ => "a value".into(),
    }
}

/// A default as the user would type it.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Bool(true) => "yes".into(),
        Value::Bool(false) => "no".into(),
        Value::Array(items) => items.iter().map(shown).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// Reads one answer: `Ok(None)` for Enter on a field with a default or an
/// optional one (the library fills in the default), the value if it fits
/// the field, or why not.
pub fn read_value(field: &Field, text: &str) -> Result<Option<Value>, String> {
    if text.is_empty() {
        if field.default.is_some() || !field.required {
            return Ok(None);
        }
        return Err("this field is required".into());
    }
    let value = match &field.kind {
        FieldKind::String { .. } => Value::String(text.to_owned()),
        FieldKind::Number { integer, .. } => {
            if let Ok(whole) = text.parse::<i64>() {
                Value::from(whole)
            } else if *integer {
                return Err(format!("{text:?} is not a whole number"));
            } else {
                let number: f64 = text
                    .parse()
                    .map_err(|_| format!("{text:?} is not a number"))?;
                serde_json::Number::from_f64(number)
                    .map(Value::Number)
                    .ok_or_else(|| format!("{text:?} is not a finite number"))?
            }
        }
        FieldKind::Boolean => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" | "1" => Value::Bool(true),
            "n" | "no" | "false" | "0" => Value::Bool(false),
            _ => return Err(format!("{text:?} is neither yes nor no")),
        },
        FieldKind::Choice { choices } => Value::String(pick(choices, text)?),
        FieldKind::MultiChoice { choices, .. } => Value::Array(
            text.split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(|item| pick(choices, item).map(Value::String))
                .collect::<Result<_, _>>()?,
        ),
        _ => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned())),
    };
    field.check(&value)?;
    Ok(Some(value))
}

/// A choice by its value, its number in the list, or its title (any case).
fn pick(choices: &[Choice], text: &str) -> Result<String, String> {
    if let Some(choice) = choices.iter().find(|choice| choice.value == text) {
        return Ok(choice.value.clone());
    }
    if let Ok(number) = text.parse::<usize>()
        && let Some(choice) = number.checked_sub(1).and_then(|index| choices.get(index))
    {
        return Ok(choice.value.clone());
    }
    choices
        .iter()
        .find(|choice| {
            choice
                .title
                .as_deref()
                .is_some_and(|title| title.eq_ignore_ascii_case(text))
                || choice.value.eq_ignore_ascii_case(text)
        })
        .map(|choice| choice.value.clone())
        .ok_or_else(|| {
            format!(
                "{text:?} is not one of the choices (1 to {}, or a value)",
                choices.len()
            )
        })
}
