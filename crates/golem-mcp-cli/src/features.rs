//! The subcommands beyond tools: `resources`, `read`, `prompts`, `prompt`,
//! `complete` and `ping`: their command line, their checks (done before
//! any server is started), how they ask the server and what they print.
//! Also how `call` shows an embedded text resource.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};

use clap::Subcommand;
use golem_mcp::{CallResult, Client, CompletionRef, Content, ReadResourceResult, Role};
use serde::Serialize;
use serde_json::{Value, json};

use crate::failure::{Exit, Failure};
use crate::feedback::Feedback;
use crate::render;
use crate::run::emit;

/// The subcommands of this module, flattened into the command line's.
#[derive(Debug, Subcommand)]
pub enum FeatureCommand {
    /// List the server's resources, one `URI  NAME` per line (with
    /// --templates, its resource templates).
    Resources {
        /// List the resource templates instead (`URI_TEMPLATE  NAME`).
        #[arg(long)]
        templates: bool,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Read a resource: its text on stdout; binary contents only with
    /// --output FILE or --raw (never on a terminal), a placeholder line
    /// otherwise.
    Read {
        /// The resource's URI (expand a template's variables first).
        uri: String,
        /// Write the contents' bytes (blobs decoded) to FILE.
        #[arg(short, long, value_name = "FILE", conflicts_with_all = ["raw", "json"])]
        output: Option<PathBuf>,
        /// Write the contents' bytes (blobs decoded) to stdout, which must
        /// not be a terminal.
        #[arg(long, conflicts_with = "json")]
        raw: bool,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// List the server's prompts, one per line with their arguments.
    Prompts {
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Get a prompt and print its messages (missing required or unknown
    /// arguments are a usage error, found before the prompt is asked for).
    Prompt {
        /// The prompt's name.
        name: String,
        /// The arguments, a JSON object of strings ("-" reads it from stdin).
        #[arg(value_name = "ARGS_JSON", default_value = "{}")]
        args_json: String,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Ask the server to complete an argument of a prompt or a variable of a
    /// resource template; prints one value per line.
    Complete {
        /// Complete an argument of this prompt.
        #[arg(
            long,
            value_name = "NAME",
            conflicts_with = "template",
            required_unless_present = "template"
        )]
        prompt: Option<String>,
        /// Complete a variable of this resource template.
        #[arg(long, value_name = "URI_TEMPLATE")]
        template: Option<String>,
        /// The argument (or variable) to complete.
        argument: String,
        /// What has been typed of it so far.
        #[arg(allow_hyphen_values = true)]
        value: String,
        /// The arguments already chosen, a JSON object of strings.
        #[arg(long, value_name = "JSON")]
        context: Option<String>,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Check the server answers (`ping`) and print the round-trip time.
    Ping {
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
}

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
                true => pretty(&json!({ "resources": resources })),
                false => lines(resources.iter().map(|r| (r.uri.as_str(), r.name.as_str()))),
            })?;
        }
        FeatureAction::Resources { templates: true } => {
            feedback.stage("listing resource templates");
            let templates = client.list_resource_templates().await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => pretty(&json!({ "resourceTemplates": templates })),
                false => lines(
                    templates
                        .iter()
                        .map(|t| (t.uri_template.as_str(), t.name.as_str())),
                ),
            })?;
        }
        FeatureAction::Read { uri, sink } => {
            feedback.stage(format!("reading {uri}"));
            let read = client.read_resource(uri).await.map_err(mcp)?;
            feedback.finish();
            match sink {
                Sink::Text if json => emit(&pretty(&read))?,
                Sink::Text => emit(&read_text(&read))?,
                Sink::Raw => write_stdout(&bytes(&read)?)?,
                Sink::File(path) => write_file(path, &bytes(&read)?)?,
            }
        }
        FeatureAction::Prompts => {
            feedback.stage("listing prompts");
            let prompts = client.list_prompts().await.map_err(mcp)?;
            feedback.finish();
            emit(&match json {
                true => pretty(&json!({ "prompts": prompts })),
                false => prompts
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
                        if let Some(about) = prompt.title.as_ref().or(prompt.description.as_ref()) {
                            let _ = write!(line, "  ({about})");
                        }
                        line.push('\n');
                        line
                    })
                    .collect(),
            })?;
        }
        FeatureAction::Prompt { name, arguments } => {
            feedback.stage(format!("getting prompt {name}"));
            let prompt = client.get_prompt(name, arguments).await.map_err(mcp)?;
            feedback.finish();
            if json {
                let messages: Vec<Value> = prompt
                    .messages
                    .iter()
                    .map(|m| json!({"role": role(m.role), "content": content_json(&m.content)}))
                    .collect();
                let mut result = json!({ "messages": messages });
                if let Some(description) = &prompt.description {
                    result["description"] = json!(description);
                }
                emit(&pretty(&result))?;
            } else {
                let mut out = String::new();
                for message in &prompt.messages {
                    let _ = writeln!(out, "[{}]", role(message.role));
                    out.push_str(&render::line(&content_text(std::slice::from_ref(
                        &message.content,
                    ))));
                }
                emit(&out)?;
            }
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
                emit(&pretty(&json!({
                    "values": completion.values,
                    "total": completion.total,
                    "hasMore": completion.has_more,
                })))?;
            } else {
                let mut out = String::new();
                for value in &completion.values {
                    out.push_str(&render::line(value));
                }
                emit(&out)?;
                if completion.has_more {
                    match completion.total {
                        Some(total) => eprintln!(
                            "golem-mcp: {} of {total} values shown",
                            completion.values.len()
                        ),
                        None => eprintln!("golem-mcp: the server has more values"),
                    }
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
                true => pretty(&json!({ "ok": true, "milliseconds": millis })),
                false => format!("pong in {millis:.1} ms\n"),
            })?;
        }
    }
    Ok(Exit::Success)
}

fn pretty(value: &impl Serialize) -> String {
    // Serializing our own types and JSON values cannot fail.
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// `FIRST  SECOND` lines.
fn lines<'a>(rows: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut out = String::new();
    for (first, second) in rows {
        let _ = writeln!(out, "{first}  {second}");
    }
    out
}

fn role(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// `read` as text: every text item, and a placeholder line for each binary
/// one.
fn read_text(read: &ReadResourceResult) -> String {
    let mut out = String::new();
    for item in &read.contents {
        match item.text() {
            Some(text) => out.push_str(&render::line(text)),
            None => {
                let size = item.decode().map(|bytes| bytes.len());
                let _ = writeln!(
                    out,
                    "[binary contents: {} ({}), {} not shown; --output FILE or --raw writes them]",
                    item.uri(),
                    item.mime_type().unwrap_or("unknown type"),
                    match size {
                        Ok(size) => format!("{size} bytes"),
                        Err(_) => "invalid base64".to_owned(),
                    }
                );
            }
        }
    }
    out
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

/// Content items as `call` and `prompt` print them: text as is, an
/// embedded text resource under a one-line header naming its URI, anything
/// else as the placeholder line a model sees.
pub fn content_text(content: &[Content]) -> String {
    let mut out = String::new();
    for (index, item) in content.iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        match item {
            Content::Resource {
                uri,
                mime_type,
                text: Some(text),
                ..
            } => {
                let _ = write!(
                    out,
                    "[embedded resource: {uri} ({})]\n{text}",
                    mime_type.as_deref().unwrap_or("unknown type")
                );
            }
            other => out.push_str(&CallResult::new(vec![other.clone()]).text()),
        }
    }
    out
}

/// `call`'s text output.
pub fn call_text(result: &CallResult) -> String {
    content_text(&result.content)
}

/// A content item as the protocol writes it.
fn content_json(content: &Content) -> Value {
    match content {
        Content::Text { text } => json!({"type": "text", "text": text}),
        Content::Image { data, mime_type } => {
            json!({"type": "image", "data": data, "mimeType": mime_type})
        }
        Content::Audio { data, mime_type } => {
            json!({"type": "audio", "data": data, "mimeType": mime_type})
        }
        Content::ResourceLink {
            uri,
            name,
            mime_type,
            size,
        } => {
            let mut link = json!({"type": "resource_link", "uri": uri});
            if let Some(name) = name {
                link["name"] = json!(name);
            }
            if let Some(mime_type) = mime_type {
                link["mimeType"] = json!(mime_type);
            }
            if let Some(size) = size {
                link["size"] = json!(size);
            }
            link
        }
        Content::Resource {
            uri,
            mime_type,
            text,
            blob,
        } => {
            let mut resource = json!({"uri": uri});
            if let Some(mime_type) = mime_type {
                resource["mimeType"] = json!(mime_type);
            }
            if let Some(text) = text {
                resource["text"] = json!(text);
            }
            if let Some(blob) = blob {
                resource["blob"] = json!(blob);
            }
            json!({"type": "resource", "resource": resource})
        }
        Content::Other { kind } => json!({"type": kind}),
        _ => json!({"type": "unknown"}),
    }
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

    #[test]
    fn an_embedded_text_resource_is_shown_under_its_uri() {
        let shown = content_text(&[
            Content::Text {
                text: "before".into(),
            },
            Content::Resource {
                uri: "demo://a".into(),
                mime_type: Some("text/plain".into()),
                text: Some("the text\nof a".into()),
                blob: None,
            },
            Content::Resource {
                uri: "demo://b".into(),
                mime_type: None,
                text: None,
                blob: Some("AAEC".into()),
            },
        ]);
        assert_eq!(
            shown,
            "before\n[embedded resource: demo://a (text/plain)]\nthe text\nof a\n\
             [embedded resource: demo://b (unknown type), 3 bytes not shown]"
        );
    }
}
