//! A fake model provider for tests: an HTTP server on 127.0.0.1, on a thread
//! of its own, that answers `POST /v1/chat/completions` as the OpenAI Chat
//! Completions API documents it and `POST /v1/messages` as the Anthropic
//! Messages API does, streamed (`"stream": true`) or not, from a script the
//! test writes, and records every request it receives.
//!
//! The one fake of the workspace's provider tests (`golem-openai`,
//! `golem-anthropic`) and of the `golem` command's (`golem-cli`).
//!
//! Like the real APIs, it refuses (400, their messages) a request whose
//! tools have a name other than letters, digits, `_` and `-` up to 64
//! characters, or an input schema whose top level is not
//! `"type": "object"`, or whose output token limit is not a whole number of
//! at least 1 (Anthropic's `max_tokens` is required; OpenAI's reasoning
//! models take `max_completion_tokens`, not `max_tokens`), before the
//! script is asked.
//!
//! Architecture invariant: it knows HTTP and the two wire formats, not how a
//! provider builds its requests; the only golem crate it uses is
//! `golem-model`, for the checks of [`provider_error`] and its neighbours.
//!
//! Entry points: [`FakeProvider::start`] (scripted answers, served in order)
//! or [`FakeProvider::start_with`] (an answer decided from each request);
//! [`Reply`] says what to answer, in the endpoint's own format ([`Reply::Text`],
//! [`Reply::ToolCall`], [`Reply::Error`]) or to the byte ([`Raw`]: status,
//! headers such as `retry-after`, body chunks, a delay); [`Recorded`] is what
//! it saw. [`openai`] and [`anthropic`] frame streams as each API does.
//!
//! ```
//! use std::io::{Read, Write};
//! use golem_fake_provider::{FakeProvider, Reply};
//!
//! let fake = FakeProvider::start([Reply::Text("Hello.".into())]);
//! let body = r#"{"model":"m","messages":[{"role":"user","content":"Hi"}]}"#;
//! let mut http = std::net::TcpStream::connect(fake.address())?;
//! write!(
//!     http,
//!     "POST /v1/chat/completions HTTP/1.1\r\nhost: fake\r\nconnection: close\r\n\
//!      content-length: {}\r\n\r\n{body}",
//!     body.len()
//! )?;
//! let mut answer = String::new();
//! http.read_to_string(&mut answer)?;
//! assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
//! assert!(answer.contains(r#""content":"Hello.""#), "{answer}");
//! assert_eq!(fake.requests()[0].body["messages"][0]["content"], "Hi");
//! # Ok::<(), std::io::Error>(())
//! ```

pub mod anthropic;
mod helpers;
pub mod openai;
mod reply;
mod request;
mod rules;
mod server;

pub use helpers::{provider_error, quick_retries, refused_address, streamed_text};
pub use reply::{Raw, Reply};
pub use request::{Recorded, last_tool_result, messages, tool_names};
pub use server::FakeProvider;
