//! The protocol as data: JSON-RPC framing, the transport seam, and the
//! shapes several layers share (content items, a tool call's result, a
//! task's state and the options of running one, a prompt's description,
//! URI templates).
//!
//! Nothing here does I/O or keeps state between messages, and nothing here
//! knows a client, a session or a transport implementation: every other
//! layer builds on these types, and they build on nothing of the crate.

pub(crate) mod call_result;
pub(crate) mod content;
pub(crate) mod jsonrpc;
pub(crate) mod mcp_headers;
pub(crate) mod prompt;
pub(crate) mod result_type;
pub(crate) mod root;
pub(crate) mod task;
pub(crate) mod transport;
pub(crate) mod transport_error;
pub(crate) mod uri_template;
