//! `--on-elicitation ask` on the terminal: a form asked field by field
//! (each answer checked and asked again when it does not fit), or a URL
//! shown, opened with `$BROWSER` and confirmed with Enter. It reads and
//! writes the streams it is given and knows nothing of the console or the
//! spinner, which its caller pauses.

use std::io::{BufRead, Write};
use std::process::Stdio;

use golem_mcp::{ElicitationResponse, Form};
use serde_json::Map;

use crate::fields::{describe_field, read_value};

/// Prompts for each field of `form`: its title, description, type, choices
/// and default; Enter takes the default (or leaves an optional field out).
/// Each answer is checked with [`Field::check`](golem_mcp::Field::check) and asked again if it does
/// not fit. "n" at the first question declines; end of input cancels. The
/// first line names the `server` that asks ([`server_label`](crate::server_label)).
pub fn ask_form(
    server: &str,
    message: &str,
    form: &Form,
    input: &mut impl BufRead,
    output: &mut impl Write,
) -> std::io::Result<ElicitationResponse> {
    writeln!(
        output,
        "\nThe server {server} asks: {}",
        golem_terminal::message(message)
    )?;
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
            write!(output, "{}> ", golem_terminal::one_line(&field.name))?;
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

/// Shows the URL (its terminal controls escaped) and asks first: only a
/// yes opens it with `open` (`$BROWSER`); then Enter accepts, and the end
/// of input declines. A no declines without opening anything (the
/// specification asks for the user's consent before any navigation). A
/// URL with control characters (an escape, a newline, a bidi override:
/// none belongs in a URL, where they are percent-encoded) is never opened:
/// after the yes, a note says why and the request is declined. The first
/// line names the `server` that asks ([`server_label`](crate::server_label)).
pub fn ask_url(
    server: &str,
    message: &str,
    url: &str,
    input: &mut impl BufRead,
    output: &mut impl Write,
    open: impl FnOnce(&str) -> Option<String>,
) -> std::io::Result<ElicitationResponse> {
    writeln!(
        output,
        "\nThe server {server} asks you to open a URL: {}",
        golem_terminal::message(message)
    )?;
    writeln!(output, "  {}", golem_terminal::one_line(url))?;
    write!(output, "Open it? [y/N] (Ctrl-D declines) ")?;
    output.flush()?;
    let Some(answer) = read_line(input)? else {
        writeln!(output)?;
        return Ok(ElicitationResponse::Decline);
    };
    if !matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        return Ok(ElicitationResponse::Decline);
    }
    if has_controls(url) {
        writeln!(
            output,
            "  Not opened: the URL holds control characters (shown escaped above), which a \
             URL never needs; declined."
        )?;
        return Ok(ElicitationResponse::Decline);
    }
    // The library refuses any other scheme before we see it; checked again
    // because this is what runs a program.
    let web = url.starts_with("https://") || url.starts_with("http://");
    if web && let Some(opened) = open(url) {
        writeln!(output, "  ({opened})")?;
    }
    write!(
        output,
        "Press Enter once you are done there, or Ctrl-D to decline. "
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
/// spaces), when set; says what happened. A URL with control characters
/// is not handed to it.
pub fn open_in_browser(url: &str) -> Option<String> {
    open_with(&std::env::var("BROWSER").ok()?, url)
}

/// [`open_in_browser`] with `browser` for `$BROWSER`.
fn open_with(browser: &str, url: &str) -> Option<String> {
    if has_controls(url) {
        return Some("not opened: the URL holds control characters".into());
    }
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

/// Whether `url` holds a character that controls a terminal (the C0 and C1
/// controls, DEL, the bidi controls): exactly what `golem_terminal` would
/// escape, since it borrows its input back when there is nothing to.
fn has_controls(url: &str) -> bool {
    // `one_line` keeps a tab, which no URL holds either.
    url.contains('\t') || matches!(golem_terminal::one_line(url), std::borrow::Cow::Owned(_))
}

/// A line of input without its line ending; `None` at the end of input.
fn read_line(input: &mut impl BufRead) -> std::io::Result<Option<String>> {
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    Ok(Some(line.trim_end_matches(['\n', '\r']).to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{EVERY_KIND, form};
    use serde_json::{Value, json};

    /// The server that asks, as `server_label` names it.
    const WHO: &str = r#""srv" (scripted 1)"#;

    fn answer(form: &Form, typed: &str) -> (ElicitationResponse, String) {
        let mut output = Vec::new();
        let response = ask_form(
            WHO,
            "Who are you?",
            form,
            &mut typed.as_bytes(),
            &mut output,
        )
        .expect("prompted");
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
            "\nThe server \"srv\" (scripted 1) asks: Who are you?\n",
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
    fn a_url_is_shown_then_opened_only_after_a_yes_and_accepted_with_enter() {
        let mut opened = None;
        let mut output = Vec::new();
        let response = ask_url(
            WHO,
            "Sign in",
            "https://example.com/auth",
            &mut &b"y\n\n"[..],
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
        assert!(
            shown
                .starts_with("\nThe server \"srv\" (scripted 1) asks you to open a URL: Sign in\n"),
            "{shown}"
        );
        assert!(shown.contains("  https://example.com/auth\n"), "{shown}");
        assert!(shown.contains("Open it? [y/N]"), "{shown}");
        // No, Enter alone (the default is no), or the end of input: declined,
        // and nothing is opened.
        for answer in [&b"n\n"[..], &b"\n"[..], &b""[..]] {
            let declined = ask_url(
                WHO,
                "Sign in",
                "https://example.com/auth",
                &mut &answer[..],
                &mut Vec::new(),
                |url| panic!("opened {url} without consent"),
            )
            .expect("prompted");
            assert_eq!(declined, ElicitationResponse::Decline);
        }
        // Never handed to a program, whatever reaches this far.
        let never = ask_url(
            WHO,
            "x",
            "file:///etc/passwd",
            &mut &b"y\n\n"[..],
            &mut Vec::new(),
            |url| panic!("opened {url}"),
        );
        assert!(never.is_ok());
    }

    #[test]
    fn a_url_with_control_characters_is_never_opened_even_after_a_yes() {
        for url in [
            "https://example.com/\x1b]8;;https://evil\x1b\\",
            "https://example.com/a\nb",
            "https://example.com/\u{202e}gpj.exe",
            "https://example.com/\u{9b}2J",
            "https://example.com/a\tb",
        ] {
            let mut output = Vec::new();
            let response = ask_url(
                WHO,
                "Sign in",
                url,
                &mut &b"y\n\n"[..],
                &mut output,
                |url| panic!("opened {url:?}"),
            )
            .expect("prompted");
            assert_eq!(response, ElicitationResponse::Decline, "{url:?}");
            let shown = String::from_utf8(output).expect("UTF-8");
            assert!(shown.contains("Open it? [y/N]"), "consent first: {shown}");
            assert!(
                shown.contains("  Not opened: the URL holds control characters"),
                "{shown}"
            );
        }
        // $BROWSER is never handed one either.
        assert_eq!(
            open_with("/nonexistent/browser", "https://example.com/\x1b[2J").as_deref(),
            Some("not opened: the URL holds control characters")
        );
    }

    #[test]
    fn what_the_server_wrote_cannot_drive_the_terminal() {
        let mut output = Vec::new();
        let _ = ask_url(
            WHO,
            "Sign in\x1b]52;c;aGk=\x07\ngolem-mcp: forged",
            "https://example.com/\x1b[2J",
            &mut &b"n\n"[..],
            &mut output,
            |url| panic!("opened {url}"),
        )
        .expect("prompted");
        let shown = String::from_utf8(output).expect("UTF-8");
        assert!(
            !shown.contains('\x1b') && !shown.contains('\x07'),
            "{shown:?}"
        );
        assert!(!shown.contains("\ngolem-mcp: forged"), "{shown}");
        assert!(shown.contains("\\u{1b}[2J"), "{shown}");
    }
}
