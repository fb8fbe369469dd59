//! The session: one client's connection to one server, whatever the era.
//!
//! The era-neutral core: [`Client`](handle::Client), the handle applications
//! hold (`handle.rs`), and its request path (`requests.rs`); the handshake
//! that decides the era once per connection (`handshake.rs`); the
//! generation of a connection (`generation.rs`: one connection, its inbound
//! task and its handshake's state); the request table (`connection.rs`);
//! the inbound driver that reads the server all the time (`inbound.rs`);
//! serving the server's requests (`serving.rs`); paging, progress and the
//! notification stream. What only the modern era (2026-07-28) has lives in
//! `modern/`; starting over with a lost server in `restart/`.
//!
//! Architecture invariant: the session knows the protocol's framing and
//! lifecycle, not its features: it has no tools, resources or prompts of
//! its own (the `features/` layer adds those as `impl Client` blocks, and
//! keeps its per-client state in [`FeatureState`](feature_state::FeatureState),
//! which the session holds but never reads), and it runs the server's
//! requests through a contract the `server_requests/` layer fulfils, without
//! knowing sampling or elicitation.

pub(crate) mod connection;
pub(crate) mod context;
pub(crate) mod feature_state;
pub(crate) mod generation;
pub(crate) mod handle;
pub(crate) mod handshake;
pub(crate) mod inbound;
pub(crate) mod modern;
pub(crate) mod notifications;
pub(crate) mod operation;
pub(crate) mod paging;
pub(crate) mod progress;
pub(crate) mod protocol;
pub(crate) mod requests;
pub(crate) mod restart;
pub(crate) mod serving;
pub(crate) mod telemetry;
#[cfg(feature = "otel")]
pub(crate) mod trace_context;
