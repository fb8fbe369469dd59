//! The agent bridge: a server's tools as `golem_tool::Tool`s. `as_tools`
//! takes a snapshot of `tools/list`; `McpToolset` keeps the tools current
//! as the server changes them; `manifest` keeps a listing between runs and
//! `lazy` offers it before the server is started; `links` reads linked
//! resources inline when asked; `names` makes the names a model is offered
//! ones every provider accepts.
//!
//! The bridge uses the client's methods (and the tools feature's output
//! check): it knows the agent's tool types and the client's API, never the
//! session's inside or a transport.

pub(crate) mod as_tools;
pub(crate) mod lazy;
pub(crate) mod links;
pub(crate) mod manifest;
pub(crate) mod names;
pub(crate) mod toolset;
