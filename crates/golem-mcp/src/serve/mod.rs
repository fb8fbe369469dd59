//! The server face (feature `serve`): MCP served to a host, over this
//! process's stdin and stdout ([`serve_stdio`]) or streamable HTTP
//! ([`serve_http`], both eras, with the legacy HTTP+SSE endpoint beside
//! it), each host's session handed to a [`Service`]: a [`Proxy`] that
//! forwards it to a server through a client of this crate (what
//! `golem-mcp bridge` runs), or a recorded session answering in the
//! server's place ([`Service::replay`], `golem-mcp replay`). A service's
//! sessions can be recorded ([`Service::recorded`], `golem-mcp record`).
//!
//! Architecture invariant: the faces (`stdio.rs`, `http.rs`) move whole
//! messages between a host and a session and know no method; the services
//! (`proxy.rs` with `bridged.rs`, `modern.rs` and `modern_host.rs`;
//! `replayed.rs`) know no face. `host.rs` is all they share;
//! `service.rs` puts a service together.

mod bridged;
mod host;
mod http;
mod modern;
mod modern_host;
mod proxy;
mod replayed;
mod service;
mod stdio;
mod tool_filter;
mod upstream;

pub use http::{HttpServeConfig, serve_http};
pub use proxy::Proxy;
pub use service::{ServeError, Service};
pub use stdio::serve_stdio;
pub use tool_filter::ToolFilter;
pub use upstream::UpstreamSetup;
