//! The command line as clap parses it: `Cli`, its subcommands and its
//! options, with their help texts. Only types: every check that needs more
//! than clap (one server named once, `-e`/`-H` syntax, `ARGS_JSON`) is
//! planning's (`plan/`). It knows nothing of plans, servers or output.

pub mod auth;
pub mod features;
pub mod serve;
mod values;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use golem_mcp::LogLevel;

use golem_elicit as elicit;
use values::{parse_log_level, parse_protocol, parse_timeout};

const AFTER_HELP: &str = "\
SERVER is exactly one of:
  --url URL [-H 'Name: value']...                      a streamable-HTTP endpoint (or an
                                                       HTTP+SSE one, found by fallback;
                                                       --sse says so and skips the probe)
  [-e KEY=VALUE]... [--cwd DIR] -- COMMAND [ARGS...]   a stdio server to start
  --config FILE --server NAME                          an entry of an mcpServers JSON file
                                                       (-e/--cwd or -H add to it)

Options are accepted before or after the subcommand.

Requests from the server: golem-mcp answers elicitation (--on-elicitation) and, with
--root, roots/list. It declares no sampling capability (it has no model), so a server
cannot ask it for completions. The server's log messages are printed on stderr as
`golem-mcp: server log [LEVEL] LOGGER: TEXT` (--quiet hides them).

bridge serves the server to a host instead (--serve stdio, the default, or
--serve http://127.0.0.1:PORT/PATH), in the host's protocol era whatever the server's;
--tool/--exclude-tool PATTERN choose the tools offered. record --out FILE bridges and
writes every message to a JSON Lines file; replay FILE serves such a file in the
server's place. A desktop host's config line:
  {\"command\": \"golem-mcp\", \"args\": [\"bridge\", \"--url\", \"https://mcp.example.com/mcp\"]}

`call --task` runs the call as a task where the server and the tool offer it, showing
its status as it changes; a timeout cancels it on the server.
Authorization: an HTTP server that requires OAuth is authorized when it asks (the
browser opens; tokens are cached in $XDG_CONFIG_HOME/golem-mcp/tokens.json, mode 0600);
`login` authorizes ahead of time, `logout` forgets the tokens.

call --arg NAME=VALUE (repeatable) types each value by the tool's input schema
(3 is a number for an integer parameter, a string for a string one; arrays and
objects as JSON) and adds it to ARGS_JSON; a value that does not fit, or a name
the schema lacks, is a usage error naming the parameter.

call --output DIR writes each image, audio and embedded blob of the result, decoded,
to DIR/TOOL-INDEX.EXT (replacing a file there) and names the file in place of its
placeholder line.

A tool's result, a resource's text and a prompt's messages go to a pipe or a file
exactly as the server sent them, and escaped (\\u{1b}, \\r) on a terminal; listings,
info and stderr messages are always escaped; --json is always exact.

list --long shows each parameter on a line: name, type, required or optional,
default, allowed values, the first line of its description; nested objects
indented (each variant of a union under a line of its own); long schemas cut
after 40 lines (list --json has them whole).

--json: the answer as JSON on stdout; a failure as one object on stdout,
{\"error\": {\"kind\", \"exit\", \"message\", \"jsonrpc\": {...}, \"http\": {...}}}
(the last two when the server refused so), with the usual line on stderr.

Exit status: 0 success; 1 the tool answered isError (its text is still printed);
2 usage error (an unknown tool included); 3 JSON-RPC error; 4 transport, process or
HTTP failure; 5 timeout; 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP. After a timeout or a
signal the server is told, within 2 s: notifications/cancelled for the call in
flight, then the session's end (HTTP DELETE; a stdio server is stopped).

Examples:
  golem-mcp list -- npx -y @modelcontextprotocol/server-everything
  golem-mcp call echo '{\"message\":\"hi\"}' --url http://127.0.0.1:3001/mcp
  golem-mcp call get-sum --arg a=2 --arg b=40 -- npx -y @modelcontextprotocol/server-everything
  golem-mcp call get-tiny-image --output images -- npx -y @modelcontextprotocol/server-everything
  golem-mcp info --config servers.json --server everything
  golem-mcp bridge --url https://mcp.example.com/mcp
  golem-mcp bridge --serve http://127.0.0.1:8080/mcp -- npx -y @modelcontextprotocol/server-everything
  golem-mcp replay session.jsonl";

/// Inspect and call any Model Context Protocol server from a shell.
#[derive(Debug, Parser)]
#[command(
    name = "golem-mcp",
    version,
    after_help = AFTER_HELP,
    arg_required_else_help = true
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Options of every subcommand.
    #[command(flatten)]
    pub options: Options,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the server's identity, protocol version, capabilities and
    /// instructions.
    Info {
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// List the server's tools, one name per line.
    List {
        /// Add each tool's description, hints and parameters (a line each:
        /// name, type, required or optional, default, allowed values).
        #[arg(long)]
        long: bool,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Call a tool and print its result's text (with --json, the result as
    /// the server sent it).
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments, a JSON object ("-" reads it from stdin).
        #[arg(value_name = "ARGS_JSON", default_value = "{}")]
        args_json: String,
        /// One argument (repeatable), typed by the tool's input schema:
        /// `--arg count=3` sends 3 to an integer parameter and "3" to a
        /// string one; arrays and objects are given as JSON. Added to
        /// ARGS_JSON's object (an --arg wins over the same name there). A
        /// value that does not fit, or a name the schema does not have
        /// (unless it allows additionalProperties), is a usage error.
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        arg: Vec<String>,
        /// Run the call as a task (servers of 2025-11-25 that offer it
        /// for the tool; 2026-07-28 servers of the tasks extension, which
        /// decide themselves): its status is shown as it changes, and a
        /// timeout cancels it on the server.
        #[arg(long)]
        task: bool,
        /// Write each image, audio and embedded blob of the result, decoded,
        /// to a file in DIR (made if missing): TOOL-INDEX.EXT, INDEX being
        /// the item's place in the content list (from 0) and EXT the media
        /// type's extension (.bin if unknown). A file already there is
        /// replaced. The text names the files instead of the placeholders.
        #[arg(short, long, value_name = "DIR", conflicts_with = "json")]
        output: Option<PathBuf>,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Resources, prompts, completion and ping (`args/features.rs`).
    #[command(flatten)]
    Features(features::FeatureCommand),
    /// Bridge, record and replay (`args/serve.rs`).
    #[command(flatten)]
    Serve(serve::ServeCommand),
    /// Authorize with an HTTP server now (OAuth) and cache its tokens.
    Login,
    /// Forget the cached tokens of an HTTP server.
    Logout,
}

/// Options accepted before or after the subcommand.
#[derive(Debug, Args)]
pub struct Options {
    /// A streamable-HTTP MCP endpoint, e.g. http://127.0.0.1:3001/mcp (a
    /// server of the older HTTP+SSE transport is found there too).
    #[arg(long, global = true, value_name = "URL", help_heading = "Server")]
    pub url: Option<String>,
    /// --url is the event stream of an HTTP+SSE server (the deprecated
    /// transport of 2024-11-05, e.g. http://127.0.0.1:8000/sse): speak that
    /// transport from the start, without probing.
    #[arg(long, global = true, help_heading = "Server")]
    pub sse: bool,
    /// An HTTP header sent on every request (repeatable).
    #[arg(
        short = 'H',
        long = "header",
        global = true,
        value_name = "'Name: value'",
        help_heading = "Server"
    )]
    pub headers: Vec<String>,
    /// An environment variable for the stdio server (repeatable).
    #[arg(
        short = 'e',
        long = "env",
        global = true,
        value_name = "KEY=VALUE",
        help_heading = "Server"
    )]
    pub env: Vec<String>,
    /// The stdio server's working directory.
    #[arg(long, global = true, value_name = "DIR", help_heading = "Server")]
    pub cwd: Option<PathBuf>,
    /// An mcpServers JSON file (the format desktop MCP hosts use).
    #[arg(long, global = true, value_name = "FILE", help_heading = "Server")]
    pub config: Option<PathBuf>,
    /// The entry of the --config file to use.
    #[arg(long, global = true, value_name = "NAME", help_heading = "Server")]
    pub server: Option<String>,
    /// Bound the whole command, in seconds [default: 60]; time spent
    /// answering prompts or authorizing in the browser does not count.
    #[arg(long, global = true, value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Option<Duration>,
    /// Machine-readable output on stdout, failures included (one JSON
    /// object: kind, exit, message, the JSON-RPC error or HTTP status).
    #[arg(long, global = true)]
    pub json: bool,
    /// Show the server's stderr and a protocol trace on stderr.
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Speak exactly this protocol revision (e.g. 2026-07-28 or 2025-11-25)
    /// instead of finding the server's era with a server/discover probe
    /// [default: the config entry's "protocol", if any].
    #[arg(long, global = true, value_name = "VERSION", value_parser = parse_protocol, help_heading = "Server")]
    pub protocol: Option<String>,
    /// How to answer a server that asks the user for input: ask on the
    /// terminal, decline, or accept the form's defaults (declining a form
    /// with a required field that has none) [default: ask when stdin is a
    /// terminal, decline otherwise].
    #[arg(
        long,
        global = true,
        value_name = "MODE",
        value_enum,
        help_heading = "Server requests"
    )]
    pub on_elicitation: Option<elicit::Mode>,
    /// A directory the server may work in, offered as a file:// root
    /// (repeatable); declares the roots capability.
    #[arg(
        long = "root",
        global = true,
        value_name = "DIR",
        help_heading = "Server requests"
    )]
    pub roots: Vec<PathBuf>,
    /// Ask the server for log messages of LEVEL and above (logging/setLevel):
    /// debug, info, notice, warning, error, critical, alert or emergency.
    #[arg(long, global = true, value_name = "LEVEL", value_parser = parse_log_level, help_heading = "Server requests")]
    pub log_level: Option<LogLevel>,
    /// Do not print the server's log messages.
    #[arg(short, long, global = true, help_heading = "Server requests")]
    pub quiet: bool,
    /// How to authorize with servers that require OAuth.
    #[command(flatten)]
    pub auth: auth::AuthOptions,
}
