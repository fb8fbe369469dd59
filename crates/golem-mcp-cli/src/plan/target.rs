//! Which server: `Target`, and `select_target`, which finds it named
//! exactly once (`--url`, `--config FILE --server NAME` or `-- COMMAND`)
//! with the options that belong to it (`-e`, `--cwd`, `-H` or `--sse`), reading the
//! config file's entry. It knows nothing of the subcommand or of OAuth
//! beyond handing on the entry's `"oauth"` settings and `"protocol"`.

use golem_mcp::config::{self, OAuthSettings, ServerConfig};
use golem_mcp::{HttpConfig, StdioConfig};

use crate::args::Options;
use crate::failure::Failure;
use crate::plan::entries::{parse_env, parse_headers};

/// Which server.
#[derive(Debug)]
pub enum Target {
    /// A stdio server to start.
    Stdio(StdioConfig),
    /// A streamable-HTTP endpoint (or an HTTP+SSE one the transport falls
    /// back to).
    Http(HttpConfig),
    /// The event stream of an HTTP+SSE server (2024-11-05): `--sse`, or a
    /// config entry's `"type": "sse"`.
    Sse(HttpConfig),
}

impl Target {
    /// The HTTP configuration, for either HTTP transport.
    pub fn http(&self) -> Option<&HttpConfig> {
        match self {
            Target::Http(http) | Target::Sse(http) => Some(http),
            Target::Stdio(_) => None,
        }
    }

    /// The HTTP configuration, to change, for either HTTP transport.
    pub fn http_mut(&mut self) -> Option<&mut HttpConfig> {
        match self {
            Target::Http(http) | Target::Sse(http) => Some(http),
            Target::Stdio(_) => None,
        }
    }
}

const NAME_A_SERVER: &str = "name the server with --url URL, with --config FILE --server NAME, \
                             or with -- COMMAND [ARGS...] at the end to start one";

/// What a config entry says of its server beyond how to reach it.
#[derive(Debug, Default)]
pub struct EntrySettings {
    /// Its `"oauth"` settings.
    pub oauth: Option<OAuthSettings>,
    /// The revision its `"protocol"` pins.
    pub protocol: Option<&'static str>,
}

/// Exactly one way of naming the server, with the options that belong to it,
/// and what its config entry says beyond that (nothing for `--url` or a
/// command).
pub fn select_target(
    options: &Options,
    server_command: Vec<String>,
) -> Result<(Target, EntrySettings), Failure> {
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
    let mut settings = EntrySettings::default();
    if options.sse && options.url.is_none() {
        return Err(Failure::usage(
            "--sse says that --url is an HTTP+SSE event stream; add --url URL (a config entry \
             says \"type\": \"sse\" instead)",
        ));
    }
    let target = if let Some(url) = &options.url {
        match options.sse {
            true => Target::Sse(HttpConfig::new(url.clone())),
            false => Target::Http(HttpConfig::new(url.clone())),
        }
    } else if let Some(path) = &options.config {
        let (target, entry) = from_config(path, options.server.as_deref())?;
        settings = entry;
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
        mut target => {
            if !env.is_empty() || options.cwd.is_some() {
                return Err(Failure::usage(
                    "-e and --cwd apply to a server started over stdio (-- COMMAND), not to an \
                     HTTP server",
                ));
            }
            if let Some(http) = target.http_mut() {
                http.headers.extend(headers);
            }
            Ok((target, settings))
        }
    }
}

fn from_config(
    path: &std::path::Path,
    server: Option<&str>,
) -> Result<(Target, EntrySettings), Failure> {
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
    let entry = EntrySettings {
        oauth: servers.oauth(name).cloned(),
        protocol: servers.protocol(name),
    };
    match servers.get(name) {
        Ok(ServerConfig::Stdio(stdio)) => Ok((Target::Stdio(stdio), entry)),
        Ok(ServerConfig::Http(http)) => Ok((Target::Http(http), entry)),
        Ok(ServerConfig::Sse(http)) => Ok((Target::Sse(http), entry)),
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
