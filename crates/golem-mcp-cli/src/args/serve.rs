//! The serving subcommands' options: `bridge`, `record` and `replay`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// The subcommands that serve MCP to a host instead of asking a server.
#[derive(Debug, Subcommand)]
pub enum ServeCommand {
    /// Serve the server to a host: over stdio (what a desktop host
    /// spawns) or HTTP, in the host's protocol era, whatever the server's.
    Bridge {
        #[command(flatten)]
        serve: ServeOptions,
        #[command(flatten)]
        tools: ToolPatterns,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Bridge as `bridge` does, and write every message of each host's
    /// session, with its direction and time, to a JSON Lines file
    /// (credentials never written).
    Record {
        /// The file of the first session; later ones (HTTP) get -2, -3, …
        /// before the extension.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        #[command(flatten)]
        serve: ServeOptions,
        #[command(flatten)]
        tools: ToolPatterns,
        /// A stdio server to start: `-- COMMAND [ARGS...]`.
        #[arg(last = true, value_name = "COMMAND")]
        server_command: Vec<String>,
    },
    /// Serve a recorded session in the server's place: requests matched
    /// to recorded ones by method and parameters, in any order.
    Replay {
        /// A file `golem-mcp record` wrote.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        serve: ServeOptions,
    },
}

/// How a serving subcommand is reached.
#[derive(Debug, Args)]
pub struct ServeOptions {
    /// `stdio` (this process's stdin and stdout, the default) or
    /// `http://127.0.0.1:PORT/PATH` (streamable HTTP in both eras, and
    /// HTTP+SSE at /sse; PORT 0 picks a free one, printed on stderr).
    #[arg(long = "serve", value_name = "stdio|URL", default_value = "stdio")]
    pub serve: String,
    /// Require `Authorization: Bearer <the value of this environment
    /// variable>` of every HTTP request (needed to serve on an address
    /// other than loopback).
    #[arg(long = "bearer-env", value_name = "VAR")]
    pub bearer_env: Option<String>,
    /// End an HTTP session nobody has used for SECS seconds, with no
    /// request or stream open (its server stopped): a host that went
    /// without DELETE leaves nothing behind. Keep it above 600 s when
    /// 2026-07-28 hosts may take that long to answer a question.
    #[arg(long = "idle-timeout", value_name = "SECS", default_value_t = 1800.0)]
    pub idle_timeout: f64,
}

/// Which tools a bridge offers.
#[derive(Debug, Args)]
pub struct ToolPatterns {
    /// Offer only the tools matching PATTERN (repeatable; `*` matches any
    /// run of characters).
    #[arg(long = "tool", value_name = "PATTERN")]
    pub tool: Vec<String>,
    /// Hide the tools matching PATTERN (repeatable), even if --tool
    /// matches them.
    #[arg(long = "exclude-tool", value_name = "PATTERN")]
    pub exclude_tool: Vec<String>,
}
