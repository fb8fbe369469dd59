//! `--on-elicitation`: how the command answers a server that asks the user
//! for input (`elicitation/create`). `ask` prompts on the terminal, field by
//! field; `decline` says no; `defaults` accepts with the server's defaults.

use std::io::{BufRead, Write};
use std::process::Stdio;
use std::sync::Arc;

use golem_mcp::{
    Choice, ElicitationHandler, ElicitationRequest, ElicitationResponse, Field, FieldKind, Form,
    HandlerError, HandlerFuture, RequestContext,
};
use serde_json::{Map, Value};

use crate::feedback::Console;

/// The value of `--on-elicitation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Prompt on the terminal for each field (forms), or show the URL and
    /// wait for Enter (URL mode).
    Ask,
    /// Decline every request.
    Decline,
    /// Accept forms with the server's defaults; decline a form with a
    /// required field that has none.
    Defaults,
}

/// The elicitation handler the command registers.
#[derive(Debug, Clone)]
pub struct Elicitor {
    mode: Mode,
    console: Console,
    /// One prompt at a time on the terminal.
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl Elicitor {
    /// Answers as `mode` says; notes and prompts go through `console`.
    pub fn new(mode: Mode, console: Console) -> Self {
        Elicitor {
            mode,
            console,
            turn: Arc::default(),
        }
    }
}

impl ElicitationHandler for Elicitor {
    fn elicit(
        &self,
        request: ElicitationRequest,
        _context: RequestContext,
    ) -> HandlerFuture<ElicitationResponse> {
        let this = self.clone();
        Box::pin(async move {
            match this.mode {
                Mode::Decline => {
                    this.console.line(format!(
                        "golem-mcp: declined the server's request for input ({}); \
                         --on-elicitation ask or defaults answers it",
                        quoted_message(&request)
                    ));
                    Ok(ElicitationResponse::Decline)
                }
                Mode::Defaults => {
                    let (response, note) = with_defaults(&request);
                    if let Some(note) = note {
                        this.console.line(note);
                    }
                    Ok(response)
                }
                Mode::Ask => {
                    let _turn = this.turn.lock().await;
                    let console = this.console.clone();
                    tokio::task::spawn_blocking(move || {
                        let _paused = console.pause();
                        let stdin = std::io::stdin();
                        let mut input = stdin.lock();
                        let mut output = std::io::stderr().lock();
                        match &request {
                            ElicitationRequest::Form { message, form } => {
                                ask_form(message, form, &mut input, &mut output)
                            }
                            ElicitationRequest::Url { message, url, .. } => {
                                ask_url(message, url, &mut input, &mut output, open_in_browser)
                            }
                            // A mode this version does not know: say no.
                            _ => Ok(ElicitationResponse::Decline),
                        }
                    })
                    .await
                    .map_err(|error| HandlerError::internal(format!("the prompt failed: {error}")))?
                    .map_err(|error| {
                        HandlerError::internal(format!("cannot prompt on the terminal: {error}"))
                    })
                }
            }
        })
    }

    /// Only a person at a terminal can visit a URL.
    fn supports_url(&self) -> bool {
        self.mode == Mode::Ask
    }
}

fn quoted_message(request: &ElicitationRequest) -> String {
    match request {
        ElicitationRequest::Form { message, .. } => format!("a form: {:?}", message),
        ElicitationRequest::Url { message, url, .. } => format!("{message:?}, at {url}"),
        _ => "of a kind this version does not know".into(),
    }
}

/// `--on-elicitation defaults`: accept with no values (the library fills in
/// every default), unless a required field has no default; then decline,
/// with a note naming the fields.
pub fn with_defaults(request: &ElicitationRequest) -> (ElicitationResponse, Option<String>) {
    let ElicitationRequest::Form { message, form } = request else {
        return (
            ElicitationResponse::Decline,
            Some(format!(
                "golem-mcp: declined the server's request ({}): --on-elicitation defaults \
                 does not visit URLs",
                quoted_message(request)
            )),
        );
    };
    let missing: Vec<String> = form
        .fields
        .iter()
        .filter(|field| field.required && field.default.is_none())
        .map(|field| format!("{:?}", field.name))
        .collect();
    if missing.is_empty() {
        return (ElicitationResponse::Accept(Map::new()), None);
    }
    (
        ElicitationResponse::Decline,
        Some(format!(
            "golem-mcp: declined the server's form ({message:?}): --on-elicitation defaults \
             cannot fill the required field{} {}, which {} no default; --on-elicitation ask \
             prompts for {}",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "has" } else { "have" },
            if missing.len() == 1 { "it" } else { "them" },
        )),
    )
}

/// Prompts for each field of `form`: its title, description, type, choices
/// and default; Enter takes the default (or leaves an optional field out).
/// Each answer is checked with [`Field::check`] and asked again if it does
/// not fit. "n" at the first question declines; end of input cancels.
pub fn ask_form(
    message: &str,
    form: &Form,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> std::io::Result<ElicitationResponse> {
    writeln!(output, "\nThe server asks: {message}")?;
    write!(
        output,
        "Fill in its form of {} field{}? [Y/n] (Ctrl-D cancels) ",
        form.fields.len(),
        if form.fields.len() == 1 { "" } else { "s" }
    )?;
    output.flush()?;
    let Some(answer) = read_line(input)? else {
        writeln!(output)?;
        return Ok(ElicitationResponse::Cancel);
    };
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "n" | "no") {
        return Ok(ElicitationResponse::Decline);
    }
    let mut content = Map::new();
    for (index, field) in form.fields.iter().enumerate() {
        writeln!(output)?;
        describe_field(field, index + 1, form.fields.len(), output)?;
        loop {
            write!(output, "{}> ", field.name)?;
            output.flush()?;
            let Some(text) = read_line(input)? else {
                writeln!(output)?;
                return Ok(ElicitationResponse::Cancel);
            };
            match read_value(field, text.trim()) {
                Ok(Some(value)) => {
                    content.insert(field.name.clone(), value);
                    break;
                }
                Ok(None) => break,
                Err(problem) => writeln!(output, "  {problem}; try again")?,
            }
        }
    }
    Ok(ElicitationResponse::Accept(content))
}

/// Shows the URL, opens it with `open` (`$BROWSER`), and waits for Enter
/// (accept) or the end of input (decline).
pub fn ask_url(
    message: &str,
    url: &str,
    input: &mut impl BufRead,
    output: &mut impl Write,
    open: impl FnOnce(&str) -> Option<String>,
) -> std::io::Result<ElicitationResponse> {
    writeln!(output, "\nThe server asks you to open a URL: {message}")?;
    writeln!(output, "  {url}")?;
    // The library refuses any other scheme before we see it; checked again
    // because this is what runs a program.
    let web = url.starts_with("https://") || url.starts_with("http://");
    if web && let Some(opened) = open(url) {
        writeln!(output, "  ({opened})")?;
    }
    write!(
        output,
        "Press Enter once you have opened it, or Ctrl-D to decline. "
    )?;
    output.flush()?;
    match read_line(input)? {
        Some(_) => Ok(ElicitationResponse::Accept(Map::new())),
        None => {
            writeln!(output)?;
            Ok(ElicitationResponse::Decline)
        }
    }
}

/// Opens `url` with `$BROWSER` (a program and its arguments, split on
/// spaces), when set; says what happened.
fn open_in_browser(url: &str) -> Option<String> {
    let browser = std::env::var("BROWSER").ok()?;
    let mut words = browser.split_whitespace();
    let program = words.next()?;
    let started = std::process::Command::new(program)
        .args(words)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    Some(match started {
        Ok(_) => format!("opened with $BROWSER ({program})"),
        Err(error) => format!("$BROWSER ({program}) could not be started: {error}"),
    })
}

/// A line of input without its line ending; `None` at the end of input.
fn read_line(input: &mut impl BufRead) -> std::io::Result<Option<String>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
}

fn describe_field(
    field: &Field,
    number: usize,
    count: usize,
    output: &mut impl Write,
) -> std::io::Result<()> {
    let title = field.title.as_deref().unwrap_or(&field.name);
    let required = if field.required { ", required" } else { "" };
    writeln!(
        output,
        "[{number}/{count}] {title} ({}{required})",
        field.name
    )?;
    if let Some(description) = &field.description {
        writeln!(output, "  {description}")?;
    }
    writeln!(output, "  type: {}", describe_kind(&field.kind))?;
    if let FieldKind::Choice { choices } | FieldKind::MultiChoice { choices, .. } = &field.kind {
        for (index, choice) in choices.iter().enumerate() {
            match &choice.title {
                Some(title) if title != &choice.value => {
                    writeln!(output, "    {}) {} ({title})", index + 1, choice.value)?;
                }
                _ => writeln!(output, "    {}) {}", index + 1, choice.value)?,
            }
        }
    }
    match &field.default {
        Some(default) => writeln!(output, "  default (Enter): {}", shown(default))?,
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
fn read_value(field: &Field, text: &str) -> Result<Option<Value>, String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use golem_mcp::memory::memory_pair;
    use golem_mcp::{Client, ClientConfig, LATEST_PROTOCOL_VERSION};
    use serde_json::json;

    /// The request a client's handler receives for `params`: the library
    /// offers no other way to build a `Form` (its types are non-exhaustive).
    fn received(params: &str) -> ElicitationRequest {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
            let config = ClientConfig::default().with_elicitation(
                move |request: ElicitationRequest, _: RequestContext| {
                    let _ = sender.send(request);
                    async { Ok(ElicitationResponse::Decline) }
                },
            );
            let (transport, mut peer) = memory_pair();
            let client = Client::with_config(transport, config);
            let script = async {
                let initialize = peer.recv().await.expect("initialize");
                peer.send(&json!({"jsonrpc": "2.0", "id": initialize["id"], "result": {
                    "protocolVersion": LATEST_PROTOCOL_VERSION, "capabilities": {},
                    "serverInfo": {"name": "scripted", "version": "1"}}}));
                peer.recv().await.expect("initialized");
            };
            let (initialized, ()) = tokio::join!(client.initialize(), script);
            initialized.expect("initialized");
            peer.send_raw(format!(
                r#"{{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {params}}}"#
            ));
            receiver.recv().await.expect("the handler ran")
        })
    }

    fn form(schema: &str) -> Form {
        match received(&format!(
            r#"{{"message": "m", "requestedSchema": {schema}}}"#
        )) {
            ElicitationRequest::Form { form, .. } => form,
            other => panic!("not a form: {other:?}"),
        }
    }

    const EVERY_KIND: &str = r#"{"type": "object", "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your full name", "minLength": 2},
        "age": {"type": "integer", "minimum": 0, "maximum": 150, "default": 30},
        "agree": {"type": "boolean"},
        "hero": {"type": "string", "oneOf": [{"const": "h1", "title": "Superman"}, {"const": "h2", "title": "Batman"}], "default": "h1"},
        "tools": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "minItems": 1, "default": ["a"]}
    }, "required": ["name", "agree"]}"#;

    fn answer(form: &Form, typed: &str) -> (ElicitationResponse, String) {
        let mut output = Vec::new();
        let response =
            ask_form("Who are you?", form, &mut typed.as_bytes(), &mut output).expect("prompted");
        (response, String::from_utf8(output).expect("UTF-8"))
    }

    #[test]
    fn each_field_is_shown_and_enter_takes_the_default() {
        let form = form(EVERY_KIND);
        let (response, shown) = answer(&form, "\nAda\n\ny\n\n\n");
        let ElicitationResponse::Accept(mut content) = response else {
            panic!("accepted: {response:?}");
        };
        // Defaults are left for the library to fill in.
        assert_eq!(
            Value::Object(content.clone()),
            json!({"name": "Ada", "agree": true})
        );
        form.complete(&mut content).expect("fits");
        assert_eq!(content["age"], json!(30));
        for expected in [
            "The server asks: Who are you?",
            "[1/5] Name (name, required)",
            "  Your full name",
            "  type: text, at least 2 characters",
            "  type: integer, 0 to 150",
            "  default (Enter): 30",
            "  type: yes or no (y/n)",
            "    1) h1 (Superman)",
            "  default (Enter): a",
        ] {
            assert!(shown.contains(expected), "{expected:?} not in:\n{shown}");
        }
    }

    #[test]
    fn a_value_that_does_not_fit_is_asked_again() {
        let form = form(EVERY_KIND);
        // Too short a name, a required field left empty, an age out of
        // range, a choice by title, choices by number and value.
        let (response, shown) = answer(&form, "y\nA\n\nAda\n200\n41\nmaybe\nno\nbatman\n3, b\n");
        assert_eq!(
            response,
            ElicitationResponse::Accept(
                json!({"name": "Ada", "age": 41, "agree": false, "hero": "h2", "tools": ["c", "b"]})
                    .as_object()
                    .expect("an object")
                    .clone()
            )
        );
        for expected in [
            "at least 2 characters; try again",
            "this field is required; try again",
            "between 0 and 150; try again",
            "\"maybe\" is neither yes nor no; try again",
        ] {
            assert!(shown.contains(expected), "{expected:?} not in:\n{shown}");
        }
    }

    #[test]
    fn no_declines_and_the_end_of_input_cancels() {
        let form = form(EVERY_KIND);
        assert_eq!(answer(&form, "n\n").0, ElicitationResponse::Decline);
        assert_eq!(answer(&form, "").0, ElicitationResponse::Cancel);
        assert_eq!(answer(&form, "y\nAda\n").0, ElicitationResponse::Cancel);
    }

    #[test]
    fn a_url_is_shown_opened_and_accepted_with_enter() {
        let mut opened = None;
        let mut output = Vec::new();
        let response = ask_url(
            "Sign in",
            "https://example.com/auth",
            &mut &b"\n"[..],
            &mut output,
            |url| {
                opened = Some(url.to_owned());
                Some("opened".into())
            },
        )
        .expect("prompted");
        assert_eq!(response, ElicitationResponse::Accept(Map::new()));
        assert_eq!(opened.as_deref(), Some("https://example.com/auth"));
        let shown = String::from_utf8(output).expect("UTF-8");
        assert!(shown.contains("  https://example.com/auth\n"), "{shown}");
        let declined = ask_url(
            "Sign in",
            "https://example.com/auth",
            &mut &b""[..],
            &mut Vec::new(),
            |_| None,
        )
        .expect("prompted");
        assert_eq!(declined, ElicitationResponse::Decline);
        // Never handed to a program, whatever reaches this far.
        let never = ask_url(
            "x",
            "file:///etc/passwd",
            &mut &b"\n"[..],
            &mut Vec::new(),
            |url| panic!("opened {url}"),
        );
        assert!(never.is_ok());
    }

    #[test]
    fn defaults_accept_unless_a_required_field_has_none() {
        let all_defaulted = received(
            r#"{"message": "m", "requestedSchema": {"type": "object", "properties": {
                "line": {"type": "string", "default": "It was a dark and stormy night."}},
                "required": ["line"]}}"#,
        );
        assert_eq!(
            with_defaults(&all_defaulted),
            (ElicitationResponse::Accept(Map::new()), None)
        );
        let (response, note) = with_defaults(&ElicitationRequest::Form {
            message: "Who?".into(),
            form: form(EVERY_KIND),
        });
        assert_eq!(response, ElicitationResponse::Decline);
        let note = note.expect("a note");
        assert!(
            note.contains(
                r#"cannot fill the required fields "name", "agree", which have no default"#
            ),
            "{note}"
        );
    }
}
