//! Reaching the server: a stdio server started (keeping a handle on its
//! stderr for messages) or an HTTP transport (streamable, or HTTP+SSE)
//! prepared, wrapped in `-v`'s
//! trace, under a client. Nothing is sent yet; it knows nothing of the
//! subcommand.

use golem_mcp::{
    Client, ClientConfig, HttpTransport, ServerStderr, SseFallback, SseTransport, StdioTransport,
};

use crate::failure::Failure;
use crate::plan::target::Target;
use crate::trace::traced;

/// What carries the session, for `info`: known once the handshake ran,
/// since a streamable-HTTP URL may turn out to be an HTTP+SSE server's.
#[derive(Debug, Clone)]
pub enum Carrier {
    /// A stdio server.
    Stdio,
    /// Streamable HTTP, or HTTP+SSE if the server refused it.
    Http(SseFallback),
    /// HTTP+SSE, as asked (`--sse`, `"type": "sse"`).
    Sse,
}

/// Starts the stdio server (keeping a handle on its stderr for messages)
/// or prepares the HTTP transport. Nothing is sent yet.
pub fn connect(
    target: Target,
    config: ClientConfig,
    verbose: bool,
) -> Result<(Client, Option<ServerStderr>, Carrier), Failure> {
    let mcp = |error: golem_mcp::Error| Failure::from_mcp(&error);
    Ok(match target {
        Target::Stdio(stdio) => {
            let transport = StdioTransport::spawn(stdio).map_err(mcp)?;
            let stderr = transport.stderr();
            let client = if verbose {
                Client::with_config(traced(transport), config)
            } else {
                Client::with_config(transport, config)
            };
            (client, Some(stderr), Carrier::Stdio)
        }
        Target::Http(http) => {
            let transport = HttpTransport::new(http).map_err(mcp)?;
            let fallback = transport.fallback();
            let client = if verbose {
                Client::with_config(traced(transport), config)
            } else {
                Client::with_config(transport, config)
            };
            (client, None, Carrier::Http(fallback))
        }
        Target::Sse(http) => {
            let transport = SseTransport::new(http).map_err(mcp)?;
            let client = if verbose {
                Client::with_config(traced(transport), config)
            } else {
                Client::with_config(transport, config)
            };
            (client, None, Carrier::Sse)
        }
    })
}
