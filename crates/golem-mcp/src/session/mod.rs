//! The session: one client's connection to one server. The request table
//! (ids, waiters, cancellation), the inbound driver that reads the server
//! all the time, the handshake, paging through lists, progress and the
//! notification stream, and `Client`, the handle applications hold.
//!
//! The session knows the protocol's framing and lifecycle, not its
//! features: it has no tools, resources or prompts of its own (the
//! `features/` layer adds those as `impl Client` blocks), and it runs the
//! server's requests through a contract the `server_requests/` layer
//! fulfils, without knowing sampling or elicitation.

pub(crate) mod cache;
pub(crate) mod client;
pub(crate) mod connection;
pub(crate) mod context;
pub(crate) mod era;
pub(crate) mod extensions;
pub(crate) mod inbound;
pub(crate) mod listen;
pub(crate) mod mrtr;
pub(crate) mod notifications;
pub(crate) mod paging;
pub(crate) mod probe;
pub(crate) mod progress;
pub(crate) mod protocol;
pub(crate) mod restart;
pub(crate) mod revive;
pub(crate) mod serving;
