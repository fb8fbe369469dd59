//! The subcommands beyond tools: `resources`, `read`, `prompts`, `prompt`,
//! `complete` and `ping`: their command line, their checks (done before
//! any server is started) and how they ask the server; what they print is
//! rendered in `render/`.

use std::collections::BTreeMap;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};

use golem_mcp::{Client, CompletionRef, ReadResourceResult};
use serde_json::Value;

use crate::args::features::FeatureCommand;
use crate::failure::{Exit, Failure};
use crate::feedback::Feedback;
use crate::render::{prompts, resources, server};
use crate::run::emit;

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

impl FeatureCommand {
    /// Whether the subcommand reads stdin (`prompt NAME -`).
    pub fn reads_stdin(&self) -> bool {
        matches!(self, FeatureCommand::Prompt { args_json, .. } if args_json == "-")
    }

    /// Checks the subcommand; returns it and the stdio server command.
    pub fn plan(
        self,
        stdin: impl Read,
        stdout_is_terminal: bool,
    ) -> Result<(FeatureAction, Vec<String>), Failure> {
        Ok(match self {
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

/// Runs a subcommand of this module on an initialized client.
pub async fn run(
    client: &Client,
    action: &FeatureAction,
    json: bool,
    feedback: &mut Feedback,
) -> Result<Exit, Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    match action {
        FeatureAction::Resources { templates: false } => {
            feedback.stage("listing resources");
            let resources = client.list_resources().await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => resources::resources_json(&resources),
                false => resources::resources_text(&resources),
            })?;
        }
        FeatureAction::Resources { templates: true } => {
            feedback.stage("listing resource templates");
            let templates = client.list_resource_templates().await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => resources::templates_json(&templates),
                false => resources::templates_text(&templates),
            })?;
        }
        FeatureAction::Read { uri, sink } => {
            feedback.stage(format!("reading {uri}"));
            let read = client.read_resource(uri).await.map_err(mcp)?;
            feedback.finish();
            match sink {
                Sink::Text if json => emit(&resources::read_json(&read))?,
                Sink::Text => emit(&resources::read_text(&read))?,
                Sink::Raw => write_stdout(&bytes(&read)?)?,
                Sink::File(path) => write_file(path, &bytes(&read)?)?,
            }
        }
        FeatureAction::Prompts => {
            feedback.stage("listing prompts");
            let listed = client.list_prompts().await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => prompts::prompts_json(&listed),
                false => prompts::prompts_text(&listed),
            })?;
        }
        FeatureAction::Prompt { name, arguments } => {
            feedback.stage(format!("getting prompt {name}"));
            let prompt = client.get_prompt(name, arguments).await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => prompts::prompt_json(&prompt),
                false => prompts::prompt_text(&prompt),
            })?;
        }
        FeatureAction::Complete {
            target,
            argument,
            value,
            context,
        } => {
            feedback.stage(format!("completing {argument}"));
            let reference = match target {
                CompleteTarget::Prompt(name) => CompletionRef::Prompt(name),
                CompleteTarget::Template(template) => CompletionRef::ResourceTemplate(template),
            };
            let completion = client
                .complete(reference, argument, value, context)
                .await
                .map_err(mcp)?;
            feedback.finish();
            if json {
                emit(&prompts::completion_json(&completion))?;
            } else {
                emit(&prompts::completion_text(&completion))?;
                if let Some(note) = prompts::completion_note(&completion) {
                    eprintln!("{note}");
                }
            }
        }
        FeatureAction::Ping => {
            feedback.stage("pinging");
            let started = std::time::Instant::now();
            client.ping().await.map_err(mcp)?;
            let millis = started.elapsed().as_secs_f64() * 1000.0;
            feedback.finish();
            emit(&match json {
                true => server::ping_json(millis),
                false => server::ping_text(millis),
            })?;
        }
    }
    Ok(Exit::Success)
}

/// Every item's bytes, blobs decoded.
fn bytes(read: &ReadResourceResult) -> Result<Vec<u8>, Failure> {
    let mut out = Vec::new();
    for item in &read.contents {
        out.extend(item.decode().map_err(|error| Failure::from_mcp(&error))?);
    }
    Ok(out)
}

fn write_stdout(bytes: &[u8]) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(error) => Err(Failure::new(
            Exit::Transport,
            format!("cannot write the contents to stdout: {error}"),
        )),
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    std::fs::write(path, bytes).map_err(|error| {
        Failure::usage(format!(
            "--output {}: cannot write it: {error}",
            path.display()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(command: FeatureCommand, terminal: bool) -> Result<FeatureAction, Failure> {
        command
            .plan(std::io::empty(), terminal)
            .map(|(action, _)| action)
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
