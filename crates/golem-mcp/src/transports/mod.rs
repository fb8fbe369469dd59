//! The transports: `StdioTransport` (a server as a child process),
//! `HttpTransport` (streamable HTTP, feature `http`), `SseTransport` (the
//! deprecated HTTP+SSE transport of 2024-11-05, feature `http`; the
//! streamable one falls back to it), the in-memory pair for tests and
//! examples, and `Observed`, a wrapper that shows every message.
//!
//! Each one moves whole encoded messages behind the `Transport` trait of
//! `wire/`. Transports never parse outgoing JSON (an `Outgoing` says what
//! it is), never match replies to requests and know nothing of the
//! handshake, tools or handlers: that is the session's work.

#[cfg(feature = "http")]
pub(crate) mod http;
pub mod memory;
pub(crate) mod observe;
pub mod replay;
#[cfg(feature = "http")]
pub(crate) mod sse;
pub(crate) mod stdio;
