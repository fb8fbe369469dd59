//! The checks of the subcommands beyond tools (`args/features.rs`), done
//! before any server is started: a `read` URI and where its bytes go
//! (`--raw` never to a terminal), a prompt's arguments and `complete`'s
//! context as objects of strings. `FeatureAction` is what they become. It
//! knows nothing of the client or of output.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::PathBuf;

use serde_json::Value;

use crate::args::features::FeatureCommand;
use crate::failure::Failure;

/// A checked subcommand of this module.
#[derive(Debug)]
pub enum FeatureAction {
    /// `resources`.
    Resources {
        /// `--templates`.
        templates: bool,
    },
    /// `read`.
    Read {
        /// The URI.
        uri: String,
        /// Where the bytes go.
        sink: Sink,
    },
    /// `prompts`.
    Prompts,
    /// `prompt`.
    Prompt {
        /// The prompt.
        name: String,
        /// Its arguments.
        arguments: BTreeMap<String, String>,
    },
    /// `complete`.
    Complete {
        /// A prompt name or a URI template.
        target: CompleteTarget,
        /// The argument.
        argument: String,
        /// Its value so far.
        value: String,
        /// The arguments already chosen.
        context: BTreeMap<String, String>,
    },
    /// `ping`.
    Ping,
}

/// What `complete` completes.
#[derive(Debug)]
pub enum CompleteTarget {
    /// `--prompt NAME`.
    Prompt(String),
    /// `--template URI_TEMPLATE`.
    Template(String),
}

/// Where `read` writes the contents.
#[derive(Debug, PartialEq, Eq)]
pub enum Sink {
    /// Text on stdout, placeholders for binary contents.
    Text,
    /// Every item's bytes to stdout (`--raw`).
    Raw,
    /// Every item's bytes to this file (`--output`).
    File(PathBuf),
}

/// Whether the subcommand reads stdin (`prompt NAME -`).
pub fn reads_stdin(command: &FeatureCommand) -> bool {
    matches!(command, FeatureCommand::Prompt { args_json, .. } if args_json == "-")
}

/// Checks the subcommand; returns it and the stdio server command.
pub fn from_command(
    command: FeatureCommand,
    stdin: impl Read,
    stdout_is_terminal: bool,
) -> Result<(FeatureAction, Vec<String>), Failure> {
    Ok(match command {
        FeatureCommand::Resources {
            templates,
            server_command,
        } => (FeatureAction::Resources { templates }, server_command),
        FeatureCommand::Read {
            uri,
            output,
            raw,
            server_command,
        } => {
            if uri.trim().is_empty() {
                return Err(Failure::usage(
                    "the URI is empty; `golem-mcp resources` shows the server's resources",
                ));
            }
            let sink = match (output, raw) {
                (Some(path), _) => Sink::File(path),
                (None, true) if stdout_is_terminal => {
                    return Err(Failure::usage(
                        "--raw writes the resource's bytes to stdout, which is a terminal; \
                         redirect stdout to a file or a pipe, or use --output FILE",
                    ));
                }
                (None, true) => Sink::Raw,
                (None, false) => Sink::Text,
            };
            (FeatureAction::Read { uri, sink }, server_command)
        }
        FeatureCommand::Prompts { server_command } => (FeatureAction::Prompts, server_command),
        FeatureCommand::Prompt {
            name,
            args_json,
            server_command,
        } => {
            if name.trim().is_empty() {
                return Err(Failure::usage(
                    "the prompt name is empty; `golem-mcp prompts` shows the server's prompts",
                ));
            }
            let text = match args_json.as_str() {
                "-" => {
                    let mut text = String::new();
                    let mut stdin = stdin;
                    stdin.read_to_string(&mut text).map_err(|error| {
                        Failure::usage(format!(
                            "ARGS_JSON is \"-\", but stdin could not be read as UTF-8 text: {error}"
                        ))
                    })?;
                    text
                }
                _ => args_json,
            };
            let arguments = string_object(&text, "ARGS_JSON")?;
            (FeatureAction::Prompt { name, arguments }, server_command)
        }
        FeatureCommand::Complete {
            prompt,
            template,
            argument,
            value,
            context,
            server_command,
        } => {
            let target = match (prompt, template) {
                (Some(name), None) => CompleteTarget::Prompt(name),
                (None, Some(template)) => CompleteTarget::Template(template),
                // clap allows exactly one.
                _ => {
                    return Err(Failure::usage(
                        "give exactly one of --prompt NAME and --template URI_TEMPLATE",
                    ));
                }
            };
            let context = match context {
                Some(text) => string_object(&text, "--context")?,
                None => BTreeMap::new(),
            };
            let action = FeatureAction::Complete {
                target,
                argument,
                value,
                context,
            };
            (action, server_command)
        }
        FeatureCommand::Ping { server_command } => (FeatureAction::Ping, server_command),
    })
}

/// A JSON object whose values are strings (prompt arguments, completion
/// context).
fn string_object(text: &str, what: &str) -> Result<BTreeMap<String, String>, Failure> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(BTreeMap::new());
    }
    let value: Value = serde_json::from_str(text).map_err(|error| {
        Failure::usage(format!(
            "{what} is not valid JSON ({error}); give an object of strings in single quotes, \
             e.g. '{{\"city\": \"Paris\"}}'"
        ))
    })?;
    let Value::Object(object) = value else {
        return Err(Failure::usage(format!(
            "{what} must be a JSON object of strings, e.g. '{{\"city\": \"Paris\"}}', not {value}"
        )));
    };
    object
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(text) => Ok((key, text)),
            other => Err(Failure::usage(format!(
                "{what}: the value of {key:?} is {other}, but prompt arguments are strings; \
                 write \"{}\"",
                other.to_string().replace('"', "\\\"")
            ))),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::Exit;

    fn plan(command: FeatureCommand, terminal: bool) -> Result<FeatureAction, Failure> {
        from_command(command, std::io::empty(), terminal).map(|(action, _)| action)
    }

    fn read(raw: bool, output: Option<&str>) -> FeatureCommand {
        FeatureCommand::Read {
            uri: "x:a".into(),
            output: output.map(PathBuf::from),
            raw,
            server_command: vec![],
        }
    }

    #[test]
    fn raw_bytes_never_go_to_a_terminal() {
        let refused = plan(read(true, None), true).expect_err("a terminal");
        assert_eq!(refused.exit, Exit::Usage);
        assert!(refused.message.contains("terminal"), "{}", refused.message);
        assert!(matches!(
            plan(read(true, None), false),
            Ok(FeatureAction::Read {
                sink: Sink::Raw,
                ..
            })
        ));
        assert!(matches!(
            plan(read(false, Some("out.bin")), true),
            Ok(FeatureAction::Read {
                sink: Sink::File(_),
                ..
            })
        ));
        assert!(matches!(
            plan(read(false, None), true),
            Ok(FeatureAction::Read {
                sink: Sink::Text,
                ..
            })
        ));
    }

    #[test]
    fn prompt_arguments_are_an_object_of_strings() {
        let args = |text: &str| {
            plan(
                FeatureCommand::Prompt {
                    name: "p".into(),
                    args_json: text.into(),
                    server_command: vec![],
                },
                false,
            )
        };
        match args(r#"{"city": "Paris"}"#) {
            Ok(FeatureAction::Prompt { arguments, .. }) => {
                assert_eq!(arguments.get("city").map(String::as_str), Some("Paris"));
            }
            other => panic!("{other:?}"),
        }
        for (text, says) in [
            (r#"{"n": 3}"#, r#"write "3""#),
            ("[1]", "must be a JSON object"),
            ("{", "not valid JSON"),
        ] {
            let failure = args(text).expect_err(text);
            assert_eq!(failure.exit, Exit::Usage);
            assert!(failure.message.contains(says), "{}", failure.message);
        }
    }
}
