//! Planning `bridge`, `record` and `replay`: the server reached (as any
//! subcommand reaches it, OAuth included), where the host is served, which
//! tools are offered, and the recording's file, all checked before
//! anything starts.

use std::net::SocketAddr;
use std::path::PathBuf;

use golem_mcp::StderrMode;
use golem_mcp::serve::ToolFilter;

use crate::args::Options;
use crate::args::serve::{ServeCommand, ServeOptions, ToolPatterns};
use crate::failure::Failure;
use crate::plan::oauth;
use crate::plan::pausing::ConsoleSlot;
use crate::plan::target::{Target, select_target};

/// Where the host is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Face {
    /// This process's stdin and stdout.
    Stdio,
    /// Streamable HTTP (and HTTP+SSE) on `address`, at `path`.
    Http {
        /// The address to listen on.
        address: SocketAddr,
        /// The streamable endpoint's path.
        path: String,
    },
}

/// What answers the host.
#[derive(Debug)]
pub enum Answerer {
    /// The server, through a client: `bridge` and `record`.
    Server {
        /// How it is reached (boxed: a configuration is large).
        target: Box<Target>,
        /// The revision pinned (`--protocol` or the config entry).
        protocol: Option<String>,
        /// The tools offered.
        tools: ToolFilter,
        /// Where sessions are recorded (`record --out`).
        record: Option<PathBuf>,
        /// What the recording says it is of.
        described: String,
    },
    /// A recorded session: `replay`.
    Recording(PathBuf),
}

/// A serving subcommand, ready to run.
#[derive(Debug)]
pub struct ServePlan {
    pub face: Face,
    pub answerer: Answerer,
    /// The bearer token every HTTP request must carry.
    pub bearer_token: Option<String>,
    /// How long an unused HTTP session is kept.
    pub idle_timeout: std::time::Duration,
    pub verbose: bool,
}

impl ServePlan {
    /// The plan of `command`, with the global `options`.
    pub fn from_cli(command: ServeCommand, options: Options) -> Result<ServePlan, Failure> {
        refuse_asking_options(&options)?;
        let (serve, answerer) = match command {
            ServeCommand::Bridge {
                serve,
                tools,
                server_command,
            } => (serve, server(&options, server_command, tools, None)?),
            ServeCommand::Record {
                out,
                serve,
                tools,
                server_command,
            } => (serve, server(&options, server_command, tools, Some(out))?),
            ServeCommand::Replay { file, serve } => {
                if !file.is_file() {
                    return Err(Failure::usage(format!(
                        "{} is not a file; replay serves a file `golem-mcp record --out` wrote",
                        file.display()
                    )));
                }
                (serve, Answerer::Recording(file))
            }
        };
        let face = face(&serve.serve)?;
        let bearer_token = bearer(&serve)?;
        let idle_timeout = std::time::Duration::try_from_secs_f64(serve.idle_timeout)
            .ok()
            .filter(|idle| !idle.is_zero())
            .ok_or_else(|| {
                Failure::usage(format!(
                    "--idle-timeout {}: give a number of seconds above 0",
                    serve.idle_timeout
                ))
            })?;
        if let Face::Http { address, .. } = &face
            && !address.ip().is_loopback()
            && bearer_token.is_none()
        {
            return Err(Failure::usage(format!(
                "--serve {}: {address} is reachable from other machines; serve on 127.0.0.1, or \
                 require a token with --bearer-env VAR",
                serve.serve
            )));
        }
        Ok(ServePlan {
            face,
            answerer,
            bearer_token,
            idle_timeout,
            verbose: options.verbose,
        })
    }
}

/// The options of the asking subcommands, which mean nothing to a served
/// one: the host asks, answers the server and bounds its own calls.
fn refuse_asking_options(options: &Options) -> Result<(), Failure> {
    let given = [
        ("--timeout", options.timeout.is_some()),
        ("--json", options.json),
        ("--on-elicitation", options.on_elicitation.is_some()),
        ("--root", !options.roots.is_empty()),
        ("--log-level", options.log_level.is_some()),
    ];
    match given.iter().find(|(_, given)| *given) {
        Some((option, _)) => Err(Failure::usage(format!(
            "{option} applies to the subcommands that ask a server; bridge, record and replay \
             serve a host, which asks, answers the server and bounds its own calls"
        ))),
        None => Ok(()),
    }
}

/// The server a bridge reaches, as every subcommand names it.
fn server(
    options: &Options,
    server_command: Vec<String>,
    patterns: ToolPatterns,
    record: Option<PathBuf>,
) -> Result<Answerer, Failure> {
    let described = match (&options.server, &options.url, server_command.first()) {
        (Some(entry), _, _) => format!("config entry {entry}"),
        (None, Some(url), _) => super::shown_url(url),
        (None, None, _) => super::command_name(&server_command),
    };
    let (mut target, entry) = select_target(options, server_command)?;
    // What a desktop host shows of its servers is their stderr.
    if let Target::Stdio(stdio) = &mut target {
        stdio.stderr = StderrMode::Inherit;
    }
    // Nobody is at a terminal to be asked: the browser opens for a login,
    // and the cache keeps its tokens.
    oauth::attach(
        &options.auth,
        entry.oauth,
        &mut target,
        &ConsoleSlot::default(),
    )?;
    let protocol = options
        .protocol
        .clone()
        .or_else(|| entry.protocol.map(str::to_owned));
    let mut tools = ToolFilter::default();
    for pattern in patterns.tool {
        tools = tools.include(pattern);
    }
    for pattern in patterns.exclude_tool {
        tools = tools.exclude(pattern);
    }
    if let Some(out) = &record
        && let Some(parent) = out.parent().filter(|parent| !parent.as_os_str().is_empty())
        && !parent.is_dir()
    {
        return Err(Failure::usage(format!(
            "--out {}: {} is not a directory",
            out.display(),
            parent.display()
        )));
    }
    Ok(Answerer::Server {
        target: Box::new(target),
        protocol,
        tools,
        record,
        described,
    })
}

/// `--serve`: `stdio`, or an `http://` URL with a literal address.
fn face(given: &str) -> Result<Face, Failure> {
    if given == "stdio" {
        return Ok(Face::Stdio);
    }
    let problem = |why: &str| {
        Failure::usage(format!(
            "--serve {given}: {why}; give stdio or http://127.0.0.1:PORT/PATH"
        ))
    };
    let url = url::Url::parse(given).map_err(|error| problem(&error.to_string()))?;
    if url.scheme() != "http" {
        return Err(problem("only http:// is served (put TLS in front of it)"));
    }
    let host = match url.host() {
        Some(url::Host::Ipv4(ip)) => std::net::IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => std::net::IpAddr::V6(ip),
        Some(url::Host::Domain("localhost")) => std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
        _ => return Err(problem("the host must be an IP address or localhost")),
    };
    let port = url.port().ok_or_else(|| problem("the port is missing"))?;
    let path = match url.path() {
        "" | "/" => "/mcp".to_owned(),
        path => path.to_owned(),
    };
    Ok(Face::Http {
        address: SocketAddr::new(host, port),
        path,
    })
}

/// The bearer token `--bearer-env` names.
fn bearer(serve: &ServeOptions) -> Result<Option<String>, Failure> {
    let Some(variable) = &serve.bearer_env else {
        return Ok(None);
    };
    match std::env::var(variable) {
        Ok(token) if !token.trim().is_empty() => Ok(Some(token.trim().to_owned())),
        _ => Err(Failure::usage(format!(
            "--bearer-env {variable}: the environment variable is not set (or empty)"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::failure::usage_message;

    #[test]
    fn serve_is_stdio_or_a_local_http_url() {
        assert_eq!(face("stdio").ok(), Some(Face::Stdio));
        assert_eq!(
            face("http://127.0.0.1:0/mcp").ok(),
            Some(Face::Http {
                address: "127.0.0.1:0".parse().expect("address"),
                path: "/mcp".into()
            })
        );
        assert_eq!(
            face("http://localhost:8080").ok().map(|face| match face {
                Face::Http { path, .. } => path,
                Face::Stdio => String::new(),
            }),
            Some("/mcp".into())
        );
        assert!(usage_message(face("https://127.0.0.1:1/mcp")).contains("only http://"));
        assert!(usage_message(face("http://example.com:1/mcp")).contains("IP address"));
        assert!(usage_message(face("http://127.0.0.1/mcp")).contains("port is missing"));
    }

    #[test]
    fn the_asking_options_are_refused() {
        use clap::Parser;
        let cli =
            crate::args::Cli::try_parse_from(["golem-mcp", "bridge", "--timeout", "5", "--", "x"])
                .expect("parses");
        let crate::args::Command::Serve(command) = cli.command else {
            panic!("a serving command");
        };
        let message = usage_message(ServePlan::from_cli(command, cli.options));
        assert!(
            message.starts_with("--timeout applies to the subcommands that ask"),
            "{message}"
        );
    }
}
