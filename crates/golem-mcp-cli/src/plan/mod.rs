//! Planning: `Plan::from_cli` turns the parsed command line (`args/`) into
//! a [`Plan`], everything needed to run and nothing started yet. Every
//! usage error is found here or in the files of this folder (the server
//! named zero or two times, `-e`/`-H` syntax, the config entry, `ARGS_JSON`
//! or stdin, the authorization options), before any server is started. It
//! knows nothing of the client's session or of output.

pub mod arguments;
mod entries;
pub mod features;
mod oauth;
pub mod pausing;
pub mod serve;
pub mod target;
pub mod typed;

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use golem_mcp::{LogLevel, Root, StderrMode};
use serde_json::value::RawValue;

use crate::args::{Cli, Command};
use crate::failure::Failure;
use arguments::read_arguments;
use features::FeatureAction;
use golem_elicit as elicit;
use pausing::ConsoleSlot;
use target::{Target, select_target};
use typed::Pair;

/// The default of `--timeout`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// What to ask the server.
/// How `info` names a revision pinned with `--protocol`.
const PINNED_WITH_OPTION: &str = "with --protocol";
/// How `info` names a revision pinned by the config entry's `"protocol"`.
const PINNED_IN_CONFIG: &str = "in the config";

#[derive(Debug)]
pub enum Action {
    /// `info`, and where a pinned revision was pinned (`with --protocol`,
    /// `in the config`), to say how it was chosen.
    Info {
        /// How `info` names the pin, when the revision is pinned.
        pinned: &'static str,
    },
    /// `list`, with or without `--long`.
    List {
        /// Descriptions and schemas too.
        long: bool,
    },
    /// `call`.
    Call {
        /// The tool.
        tool: String,
        /// Its arguments, a JSON object, sent verbatim unless `pairs`
        /// add to it.
        arguments: Box<RawValue>,
        /// `--arg key=value`, typed once the tool's schema is known.
        pairs: Vec<Pair>,
        /// `--task`: run it as a task.
        task: bool,
        /// `--output DIR`: where the result's binary items are written.
        output: Option<PathBuf>,
    },
    /// `resources`, `read`, `prompts`, `prompt`, `complete`, `ping`.
    Features(FeatureAction),
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
    /// The server as the user named it, which every prompt of its
    /// requests names first: its config entry (`--server`), else its
    /// `--url`, else its command (the program's file name and the
    /// arguments).
    pub server_name: String,
    /// The roots offered; `None` declares no roots capability.
    pub roots: Option<Vec<Root>>,
    /// `--log-level`.
    pub log_level: Option<LogLevel>,
    /// `--quiet`.
    pub quiet: bool,
    /// The revision pinned, if any: `--protocol`, else the config entry's
    /// `"protocol"`.
    pub protocol: Option<String>,
    /// The OAuth provider of an HTTP server, for `login` and `logout`.
    pub oauth: Option<std::sync::Arc<golem_mcp::auth::OAuthProvider>>,
    /// Where the command puts its console, which the provider pauses while
    /// the user authorizes in the browser.
    pub console: ConsoleSlot,
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
            Command::Features(command) => features::reads_stdin(command),
            _ => false,
        };
        let elicitation = elicitation_mode(
            options.on_elicitation,
            stdin_is_terminal,
            arguments_from_stdin,
        )?;
        let roots = roots(&options.roots)?;
        let (mut action, server_command) = match command {
            Command::Info { server_command } => (
                Action::Info {
                    pinned: PINNED_WITH_OPTION,
                },
                server_command,
            ),
            Command::List {
                long,
                server_command,
            } => (Action::List { long }, server_command),
            Command::Call {
                tool,
                args_json,
                arg,
                task,
                output,
                server_command,
            } => {
                if let Some(dir) = &output {
                    check_output_dir(dir)?;
                }
                let arguments = read_arguments(&args_json, stdin)?;
                let pairs = typed::parse_pairs(&arg)?;
                if tool.trim().is_empty() {
                    return Err(Failure::usage(
                        "the tool name is empty; `golem-mcp list` shows the server's tools",
                    ));
                }
                (
                    Action::Call {
                        tool,
                        arguments,
                        pairs,
                        task,
                        output,
                    },
                    server_command,
                )
            }
            Command::Features(command) => {
                let stdout_is_terminal = std::io::IsTerminal::is_terminal(&std::io::stdout());
                let (action, server_command) =
                    features::from_command(command, stdin, stdout_is_terminal)?;
                (Action::Features(action), server_command)
            }
            Command::Login => (Action::Login, Vec::new()),
            Command::Serve(_) => {
                return Err(Failure::usage(
                    "bridge, record and replay are planned by ServePlan::from_cli",
                ));
            }
            Command::Logout => (Action::Logout, Vec::new()),
        };
        let server_name = match (&options.server, &options.url) {
            (Some(entry), _) => entry.clone(),
            (None, Some(url)) => shown_url(url),
            (None, None) => command_name(&server_command),
        };
        let (mut target, entry) = select_target(&options, server_command)?;
        // The command line beats the file.
        let protocol = match (&options.protocol, entry.protocol) {
            (Some(version), _) => Some(version.clone()),
            (None, Some(version)) => {
                if let Action::Info { pinned } = &mut action {
                    *pinned = PINNED_IN_CONFIG;
                }
                Some(version.to_owned())
            }
            (None, None) => None,
        };
        let console = ConsoleSlot::default();
        let oauth = oauth::attach(&options.auth, entry.oauth, &mut target, &console)?;
        // `-v` prints the server's stderr lines as they come, prefixed and
        // escaped (`run/logs.rs`); their tail still goes in error messages.
        if let Target::Stdio(stdio) = &mut target
            && options.verbose
        {
            stdio.stderr = StderrMode::Lines {
                tail: StderrMode::DEFAULT_TAIL,
            };
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
            server_name,
            roots,
            log_level: options.log_level,
            quiet: options.quiet,
            protocol,
            oauth,
            console,
        })
    }
}

/// `--url` as prompts name the server: without credentials, query or
/// fragment, which may hold a secret (a URL that does not parse is shown
/// as given: the connection fails on it before anyone asks anything).
pub(crate) fn shown_url(given: &str) -> String {
    let Ok(mut url) = url::Url::parse(given) else {
        return given.to_owned();
    };
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.set_query(None);
    url.set_fragment(None);
    url.to_string()
}

/// `mcp-server-everything stdio` for `-- /a/b/mcp-server-everything stdio`:
/// the program's file name, then its arguments.
pub(crate) fn command_name(command: &[String]) -> String {
    let Some((program, args)) = command.split_first() else {
        return String::new();
    };
    let program = std::path::Path::new(program).file_name().map_or_else(
        || program.clone(),
        |name| name.to_string_lossy().into_owned(),
    );
    std::iter::once(program)
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
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

/// `call --output DIR`, before the server is started: a path that exists
/// must be a directory (a missing one is made when the result comes).
fn check_output_dir(dir: &std::path::Path) -> Result<(), Failure> {
    match std::fs::metadata(dir) {
        Ok(found) if !found.is_dir() => Err(Failure::usage(format!(
            "--output {} is not a directory; call --output names the directory the \
             result's images, audio and blobs are written to",
            dir.display()
        ))),
        _ => Ok(()),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::usage_message;

    #[test]
    fn a_url_names_its_server_without_credentials_query_or_fragment() {
        assert_eq!(
            shown_url("https://user:tok@host.example/mcp?key=s3cret#frag"),
            "https://host.example/mcp"
        );
        assert_eq!(
            command_name(&["/a/b/mcp-server-everything".into(), "stdio".into()]),
            "mcp-server-everything stdio"
        );
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
    fn call_output_must_be_a_directory_if_it_exists() {
        let file = std::env::temp_dir().join(format!("golem-mcp-output-{}", std::process::id()));
        std::fs::write(&file, b"x").expect("written");
        let message = usage_message(check_output_dir(&file));
        assert!(message.contains("is not a directory"), "{message}");
        assert!(check_output_dir(&file.with_extension("missing")).is_ok());
        assert!(check_output_dir(&std::env::temp_dir()).is_ok());
        let _ = std::fs::remove_file(&file);
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
