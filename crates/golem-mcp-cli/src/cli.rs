//! The checks that turn the command line (`args/`) into a [`Plan`] before
//! any server is started.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use golem_mcp::config::{self, OAuthSettings, ServerConfig};
use golem_mcp::{HttpConfig, LogLevel, Root, StderrMode, StdioConfig};
use serde_json::value::RawValue;

use crate::args::{Cli, Command, Options};
use crate::elicit;
use crate::failure::Failure;
use crate::features;

/// The default of `--timeout`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// Which server.
#[derive(Debug)]
pub enum Target {
    /// A stdio server to start.
    Stdio(StdioConfig),
    /// A streamable-HTTP endpoint.
    Http(HttpConfig),
}

/// What to ask the server.
#[derive(Debug)]
pub enum Action {
    /// `info`.
    Info,
    /// `list`, with or without `--long`.
    List {
        /// Descriptions and schemas too.
        long: bool,
    },
    /// `call`.
    Call {
        /// The tool.
        tool: String,
        /// Its arguments, a JSON object, sent verbatim.
        arguments: Box<RawValue>,
        /// `--task`: run it as a task.
        task: bool,
    },
    /// `resources`, `read`, `prompts`, `prompt`, `complete`, `ping`.
    Features(features::FeatureAction),
    /// `login`.
    Login,
    /// `logout`.
    Logout,
}

/// A checked command line: everything needed to run, nothing started yet.
#[derive(Debug)]
pub struct Plan {
    /// The server.
    pub target: Target,
    /// What to ask it.
    pub action: Action,
    /// Bounds the whole command.
    pub timeout: Duration,
    /// `--json`.
    pub json: bool,
    /// `-v`.
    pub verbose: bool,
    /// How elicitation requests are answered.
    pub elicitation: elicit::Mode,
    /// The roots offered; `None` declares no roots capability.
    pub roots: Option<Vec<Root>>,
    /// `--log-level`.
    pub log_level: Option<LogLevel>,
    /// `--quiet`.
    pub quiet: bool,
    /// The OAuth provider of an HTTP server, for `login` and `logout`.
    pub oauth: Option<std::sync::Arc<golem_mcp::auth::OAuthProvider>>,
    /// Where the command puts its console, which the provider pauses while
    /// the user authorizes in the browser.
    pub console: crate::auth::ConsoleSlot,
}

impl Plan {
    /// Checks the command line, reads the config file and the arguments
    /// (from stdin for `-`): every usage error is found here, before any
    /// server is started. `stdin_is_terminal` picks the default of
    /// `--on-elicitation`.
    pub fn from_cli(cli: Cli, stdin: impl Read, stdin_is_terminal: bool) -> Result<Plan, Failure> {
        let Cli { command, options } = cli;
        let arguments_from_stdin = match &command {
            Command::Call { args_json, .. } => args_json == "-",
            Command::Features(command) => command.reads_stdin(),
            _ => false,
        };
        let elicitation = elicitation_mode(
            options.on_elicitation,
            stdin_is_terminal,
            arguments_from_stdin,
        )?;
        let roots = roots(&options.roots)?;
        let (action, server_command) = match command {
            Command::Info { server_command } => (Action::Info, server_command),
            Command::List {
                long,
                server_command,
            } => (Action::List { long }, server_command),
            Command::Call {
                tool,
                args_json,
                task,
                server_command,
            } => {
                let arguments = read_arguments(&args_json, stdin)?;
                if tool.trim().is_empty() {
                    return Err(Failure::usage(
                        "the tool name is empty; `golem-mcp list` shows the server's tools",
                    ));
                }
                (
                    Action::Call {
                        tool,
                        arguments,
                        task,
                    },
                    server_command,
                )
            }
            Command::Features(command) => {
                let stdout_is_terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
                let (action, server_command) = command.plan(stdin, stdout_is_terminal)?;
                (Action::Features(action), server_command)
            }
            Command::Login => (Action::Login, Vec::new()),
            Command::Logout => (Action::Logout, Vec::new()),
        };
        let (mut target, settings) = select_target(&options, server_command)?;
        let console = crate::auth::ConsoleSlot::default();
        let oauth = crate::auth::attach(&options.auth, settings, &mut target, &console)?;
        if let Target::Stdio(stdio) = &mut target
            && options.verbose
        {
            stdio.stderr = StderrMode::Inherit;
        }
        Ok(Plan {
            target,
            action,
            timeout: options
                .timeout
                .unwrap_or(Duration::from_secs(DEFAULT_TIMEOUT_SECS)),
            json: options.json,
            verbose: options.verbose,
            elicitation,
            roots,
            log_level: options.log_level,
            quiet: options.quiet,
            oauth,
            console,
        })
    }
}

/// `--on-elicitation`, or its default: `ask` needs stdin for the answers.
fn elicitation_mode(
    given: Option<elicit::Mode>,
    stdin_is_terminal: bool,
    arguments_from_stdin: bool,
) -> Result<elicit::Mode, Failure> {
    match given {
        Some(elicit::Mode::Ask) if arguments_from_stdin => Err(Failure::usage(
            "--on-elicitation ask reads the answers from stdin, which ARGS_JSON \"-\" already \
             reads; give ARGS_JSON on the command line, or choose --on-elicitation decline or \
             defaults",
        )),
        Some(mode) => Ok(mode),
        None if stdin_is_terminal && !arguments_from_stdin => Ok(elicit::Mode::Ask),
        None => Ok(elicit::Mode::Decline),
    }
}

/// `--root DIR` entries as `file://` roots; relative paths are taken from
/// the directory golem-mcp runs in. `None` when there are none.
fn roots(dirs: &[PathBuf]) -> Result<Option<Vec<Root>>, Failure> {
    if dirs.is_empty() {
        return Ok(None);
    }
    dirs.iter()
        .map(|dir| {
            let absolute = std::path::absolute(dir)
                .map_err(|error| Failure::usage(format!("--root {}: {error}", dir.display())))?;
            Root::directory(&absolute)
                .map_err(|problem| Failure::usage(format!("--root {}: {problem}", dir.display())))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

const NAME_A_SERVER: &str = "name the server with --url URL, with --config FILE --server NAME, \
                             or with -- COMMAND [ARGS...] at the end to start one";

/// Exactly one way of naming the server, with the options that belong to it,
/// and the `"oauth"` settings of its config entry, if any.
fn select_target(
    options: &Options,
    server_command: Vec<String>,
) -> Result<(Target, Option<OAuthSettings>), Failure> {
    let mut named = Vec::new();
    if options.url.is_some() {
        named.push("--url");
    }
    if options.config.is_some() {
        named.push("--config");
    }
    if !server_command.is_empty() {
        named.push("-- COMMAND");
    }
    if named.len() > 1 {
        return Err(Failure::usage(format!(
            "{} name the server twice; {NAME_A_SERVER}, only one of them",
            named.join(" and ")
        )));
    }
    if options.server.is_some() && options.config.is_none() {
        return Err(Failure::usage(
            "--server names an entry of a config file; add --config FILE",
        ));
    }
    let env = parse_env(&options.env)?;
    let headers = parse_headers(&options.headers)?;
    let mut settings = None;
    let target = if let Some(url) = &options.url {
        Target::Http(HttpConfig::new(url.clone()))
    } else if let Some(path) = &options.config {
        let (target, oauth) = from_config(path, options.server.as_deref())?;
        settings = oauth;
        target
    } else if let Some((command, args)) = server_command.split_first() {
        Target::Stdio(StdioConfig {
            args: args.to_vec(),
            ..StdioConfig::new(command.clone())
        })
    } else {
        return Err(Failure::usage(format!("no server given; {NAME_A_SERVER}")));
    };
    match target {
        Target::Stdio(mut stdio) => {
            if !headers.is_empty() {
                return Err(Failure::usage(
                    "-H applies to HTTP servers (--url), not to a server started over stdio",
                ));
            }
            stdio.env.extend(env);
            if let Some(dir) = &options.cwd {
                stdio.dir = Some(dir.clone());
            }
            Ok((Target::Stdio(stdio), settings))
        }
        Target::Http(mut http) => {
            if !env.is_empty() || options.cwd.is_some() {
                return Err(Failure::usage(
                    "-e and --cwd apply to a server started over stdio (-- COMMAND), not to an \
                     HTTP server",
                ));
            }
            http.headers.extend(headers);
            Ok((Target::Http(http), settings))
        }
    }
}

fn from_config(
    path: &std::path::Path,
    server: Option<&str>,
) -> Result<(Target, Option<OAuthSettings>), Failure> {
    let servers = config::load(path).map_err(|error| Failure::usage(describe_config(&error)))?;
    let Some(name) = server else {
        let names: Vec<&str> = servers.names().collect();
        return Err(Failure::usage(if names.is_empty() {
            format!(
                "--config needs --server NAME, but {} defines no server",
                path.display()
            )
        } else {
            format!(
                "--config needs --server NAME; {} defines: {}",
                path.display(),
                names.join(", ")
            )
        }));
    };
    let oauth = servers.oauth(name).cloned();
    match servers.get(name) {
        Ok(ServerConfig::Stdio(stdio)) => Ok((Target::Stdio(stdio), oauth)),
        Ok(ServerConfig::Http(http)) => Ok((Target::Http(http), oauth)),
        // Not printed: a configuration may hold secrets.
        Ok(_) => Err(Failure::usage(format!(
            "the server {name:?} uses a transport this version of golem-mcp cannot use"
        ))),
        Err(error) => Err(Failure::usage(describe_config(&error))),
    }
}

fn describe_config(error: &config::ConfigError) -> String {
    let message = error.to_string();
    message
        .strip_prefix("mcp: ")
        .map(str::to_owned)
        .unwrap_or(message)
}

/// `-e KEY=VALUE` entries.
pub fn parse_env(entries: &[String]) -> Result<Vec<(String, String)>, Failure> {
    entries
        .iter()
        .map(|entry| match entry.split_once('=') {
            Some((key, value)) if is_env_name(key) => Ok((key.to_owned(), value.to_owned())),
            // The entry is not echoed: its value may be a secret.
            _ => Err(Failure::usage(format!(
                "-e {}: expected KEY=VALUE with a name of letters, digits and '_', \
                 e.g. -e API_KEY=secret",
                shown_name(entry, '=')
            ))),
        })
        .collect()
}

/// How a malformed `-e`/`-H` entry is named in an error: by the part before
/// `separator` (the name), never by its value, which may be a secret.
fn shown_name(entry: &str, separator: char) -> String {
    match entry.split_once(separator) {
        Some((name, _)) => format!("{:?} (value not shown)", name.trim()),
        None => format!(
            "entry of {} characters (not shown: it may hold a secret)",
            entry.chars().count()
        ),
    }
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// `-H 'Name: value'` entries.
pub fn parse_headers(entries: &[String]) -> Result<Vec<(String, String)>, Failure> {
    entries
        .iter()
        .map(|entry| {
            // The entry is not echoed: its value may be a secret.
            let malformed = |why: &str| {
                Failure::usage(format!(
                    "-H {}: {why}; write it as 'Name: value', e.g. -H 'Authorization: \
                     Bearer TOKEN'",
                    shown_name(entry, ':')
                ))
            };
            let Some((name, value)) = entry.split_once(':') else {
                return Err(malformed("no ':' between the name and the value"));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(malformed("the header name is empty"));
            }
            if !name.bytes().all(is_token_byte) {
                return Err(malformed(
                    "the header name may hold only letters, digits and !#$%&'*+-.^_`|~",
                ));
            }
            let value = value.trim();
            if value.chars().any(|c| c.is_control() && c != '\t') {
                return Err(malformed("the value contains control characters"));
            }
            Ok((name.to_owned(), value.to_owned()))
        })
        .collect()
}

/// A character allowed in an HTTP header name (RFC 9110 `tchar`).
fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte)
}

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
    use crate::failure::Exit;

    fn usage_message<T: std::fmt::Debug>(result: Result<T, Failure>) -> String {
        let failure = result.expect_err("a usage error");
        assert_eq!(failure.exit, Exit::Usage, "{failure:?}");
        failure.message
    }

    #[test]
    fn env_entries_need_a_name_and_an_equals_sign() {
        assert_eq!(
            parse_env(&["A=1".into(), "B_2=x=y".into(), "EMPTY=".into()]).expect("valid"),
            [
                ("A".into(), "1".into()),
                ("B_2".into(), "x=y".into()),
                ("EMPTY".into(), String::new())
            ]
        );
        for bad in ["NOVALUE", "=1", "1A=x", "A B=x"] {
            let message = usage_message(parse_env(&[bad.into()]));
            assert!(message.contains("expected KEY=VALUE"), "{bad}: {message}");
        }
    }

    #[test]
    fn headers_need_a_valid_name_and_a_colon() {
        assert_eq!(
            parse_headers(&["Authorization:  Bearer a:b ".into(), "X-Empty:".into()])
                .expect("valid"),
            [
                ("Authorization".into(), "Bearer a:b".into()),
                ("X-Empty".into(), String::new())
            ]
        );
        for (bad, why) in [
            ("Authorization Bearer x", "no ':'"),
            (": x", "name is empty"),
            ("Bad Name: x", "may hold only"),
            ("X: a\u{1}b", "control characters"),
        ] {
            let message = usage_message(parse_headers(&[bad.into()]));
            assert!(message.contains(why), "{bad}: {message}");
            assert!(message.contains("'Name: value'"), "{message}");
        }
    }

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

    #[test]
    fn ask_is_the_default_on_a_terminal_unless_stdin_holds_the_arguments() {
        use elicit::Mode;
        assert_eq!(elicitation_mode(None, true, false).ok(), Some(Mode::Ask));
        assert_eq!(
            elicitation_mode(None, false, false).ok(),
            Some(Mode::Decline)
        );
        assert_eq!(elicitation_mode(None, true, true).ok(), Some(Mode::Decline));
        assert_eq!(
            elicitation_mode(Some(Mode::Defaults), true, true).ok(),
            Some(Mode::Defaults)
        );
        assert!(
            usage_message(elicitation_mode(Some(Mode::Ask), true, true))
                .contains("ARGS_JSON \"-\"")
        );
    }

    #[test]
    fn roots_are_directories_given_as_file_uris() {
        assert_eq!(roots(&[]).ok(), Some(None));
        let here = std::env::current_dir().expect("a working directory");
        let listed = roots(&[PathBuf::from(".")])
            .expect("a directory")
            .expect("some");
        assert_eq!(listed.len(), 1);
        assert!(listed[0].uri.starts_with("file:///"), "{:?}", listed[0]);
        assert_eq!(
            listed[0].name,
            here.file_name().and_then(|n| n.to_str()).map(str::to_owned)
        );
        let message = usage_message(roots(&[PathBuf::from("no/such/dir")]));
        assert!(message.starts_with("--root no/such/dir: "), "{message}");
        assert!(message.contains("is not a directory"), "{message}");
    }
}
