//! `ARGS_JSON` (or stdin for `-`), read as a JSON object kept byte for
//! byte, and the tip for a server command given without `--` before it,
//! where clap refused the word or JSON was expected. It knows nothing of
//! the tool the arguments go to.

use std::io::Read;

use serde_json::value::RawValue;

use crate::failure::Failure;

/// Whether a word given where JSON was expected looks like a program name
/// or path (`npx`, `./server`, `uvx`) rather than mistyped JSON.
fn looks_like_a_command(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "./_-@:".contains(c))
        && !matches!(text, "true" | "false" | "null")
        && text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '.' || c == '/')
}

/// For a command line clap refused because of an unexpected word, when it
/// has no `--`: the server's command was probably meant, and belongs after
/// `--` (`golem-mcp list npx -y server` → `golem-mcp list -- npx -y server`).
pub fn missing_separator_tip(
    error: &clap::Error,
    args: impl IntoIterator<Item = String>,
) -> Option<String> {
    use clap::error::ErrorKind;
    if !matches!(
        error.kind(),
        ErrorKind::UnknownArgument | ErrorKind::InvalidSubcommand
    ) {
        return None;
    }
    let args: Vec<String> = args.into_iter().skip(1).collect();
    if args.iter().any(|arg| arg == "--") {
        return None;
    }
    Some(
        "tip: the server's command goes last, after --, e.g. \
         golem-mcp list -- npx -y @modelcontextprotocol/server-everything"
            .to_owned(),
    )
}

/// Whether a command line clap refused asks for `--json` (before `--`,
/// after which the words are the server's).
pub fn asks_for_json(args: impl IntoIterator<Item = String>) -> bool {
    args.into_iter()
        .skip(1)
        .take_while(|arg| arg != "--")
        .any(|arg| arg == "--json")
}

/// `ARGS_JSON`, or stdin for `-`: a JSON object, kept byte for byte.
pub fn read_arguments(args_json: &str, mut stdin: impl Read) -> Result<Box<RawValue>, Failure> {
    let (text, from) = if args_json == "-" {
        let mut text = String::new();
        stdin.read_to_string(&mut text).map_err(|error| {
            Failure::usage(format!(
                "ARGS_JSON is \"-\", but stdin could not be read as UTF-8 text: {error}"
            ))
        })?;
        (text, "ARGS_JSON from stdin")
    } else {
        (args_json.to_owned(), "ARGS_JSON")
    };
    let text = text.trim();
    if text.is_empty() {
        return Err(Failure::usage(format!(
            "{from} is empty; give a JSON object, e.g. '{{\"message\": \"hi\"}}', or leave it \
             out for {{}}"
        )));
    }
    let arguments = RawValue::from_string(text.to_owned()).map_err(|error| {
        let mut message = format!(
            "{from} is not valid JSON ({error}); give an object in single quotes, e.g. \
             '{{\"message\": \"hi\"}}'"
        );
        if looks_like_a_command(text) {
            message.push_str(&format!(
                "; if {text:?} is the server's command, put -- before it: \
                 golem-mcp call TOOL [ARGS_JSON] -- {text} ..."
            ));
        }
        Failure::usage(message)
    })?;
    if !arguments.get().starts_with('{') {
        return Err(Failure::usage(format!(
            "{from} must be a JSON object of the tool's arguments, e.g. '{{\"message\": \"hi\"}}', \
             not {}",
            arguments.get()
        )));
    }
    Ok(arguments)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::usage_message;

    #[test]
    fn arguments_must_be_a_json_object_kept_verbatim() {
        let arguments = read_arguments(r#" {"b": 1, "a": [2]} "#, std::io::empty()).expect("ok");
        assert_eq!(arguments.get(), r#"{"b": 1, "a": [2]}"#);
        let from_stdin =
            read_arguments("-", &b"{\"message\":\"stdin\"}\n"[..]).expect("read from stdin");
        assert_eq!(from_stdin.get(), r#"{"message":"stdin"}"#);
        assert!(
            usage_message(read_arguments("{oops}", std::io::empty())).contains("not valid JSON")
        );
        assert!(
            usage_message(read_arguments("[1]", std::io::empty()))
                .contains("must be a JSON object")
        );
        assert!(usage_message(read_arguments("-", &b"  "[..])).contains("from stdin is empty"));
    }
}
