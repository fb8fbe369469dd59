//! Recorded sessions: the JSON Lines format `golem-mcp record` writes, and
//! their replay as a server (`ReplayTransport`, `golem-mcp replay`).
//!
//! # The format
//!
//! One JSON object per line. The first is a header:
//!
//! ```text
//! {"golem_mcp_recording":1,"started":"2026-01-02T03:04:05Z","target":"stdio: mcp-server-everything"}
//! ```
//!
//! (`started` in RFC 3339, UTC, to the second; `target` the recorder's
//! description of the server). Then one line per message, in the order
//! they passed:
//!
//! ```text
//! {"t_ms":12.5,"from":"client","message":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}
//! {"t_ms":14.0,"from":"server","message":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}
//! ```
//!
//! `t_ms` counts milliseconds since the recording started; `from` says
//! who sent it; `message` is the JSON-RPC message as it was sent.
//! [`RecordWriter`] writes it; [`Recording`] reads it (at most
//! [`MAX_RECORDING_BYTES`]).
//!
//! # The replay
//!
//! [`Replayer`] holds the rules: which recorded request a live one
//! matches, and what is sent back. [`ReplayTransport`] puts it behind the
//! [`Transport`](crate::Transport) trait, so that
//! `Client::connect(ReplayTransport::open(path)?)` talks to a recorded
//! session in-process. Times are not replayed: answers come at once.
//!
//! # The era over a replay
//!
//! The client decides the protocol era by probing with `server/discover`
//! unless the transport says it is [`legacy_only`](crate::Transport::legacy_only).
//! A recording whose server answered the probe with a result is of the
//! 2026-07-28 era: the transport lets the client probe, and the recorded
//! answer decides as the server's did. Any other recording (a legacy
//! server that refused the probe or left it unanswered, or a client that
//! never probed) is of the initialize era: the transport says it is
//! legacy-only, so the client sends `initialize` at once instead of a
//! probe that might match nothing and wait out the probe's timeout, and a
//! client pinned to a modern revision is refused at once, as it would be
//! by an HTTP+SSE server.
//!
//! Architecture invariant: like every transport, nothing here knows the
//! session: the replay reads JSON-RPC messages, never the client's state.

mod closest;
mod matcher;
mod messages;
mod recording;
mod transport;
mod writer;

pub use matcher::Replayer;
pub use recording::{Direction, MAX_RECORDING_BYTES, RecordedMessage, Recording, RecordingError};
pub use transport::ReplayTransport;
pub use writer::{RecordWriter, session_path};
