//! What only the modern era (2026-07-28, stateless) has: the era's own
//! types and `_meta` entries (`era.rs`), the `server/discover` probe that
//! decides it (`probe.rs`, a pure classifier of the answer), requests that
//! take several round trips (`mrtr.rs`), results kept per TTL (`cache.rs`),
//! the `subscriptions/listen` stream (`listen.rs`) and the client's asks of
//! it (`subscribe.rs`).
//!
//! Architecture invariant: nothing here is used on a legacy connection; the
//! code that differs per era matches on
//! [`Era`](crate::session::protocol::Era) or on
//! [`Connection::modern`](crate::session::connection::Connection::modern) at
//! the call site.

pub(crate) mod cache;
pub(crate) mod era;
pub(crate) mod listen;
pub(crate) mod mrtr;
pub(crate) mod probe;
pub(crate) mod subscribe;
