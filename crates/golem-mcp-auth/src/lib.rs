//! OAuth 2.1 authorization for streamable-HTTP MCP servers (what
//! `golem-mcp`'s feature `http` brings in, as `golem_mcp::auth`), per the
//! MCP authorization specification (revision 2025-11-25, with the
//! 2025-03-26 fallbacks, and 2026-07-28's binding of credentials to the
//! authorization server that issued them).
//!
//! The transport asks an [`AuthProvider`] (set in `golem-mcp`'s
//! `HttpConfig::auth`) what `Authorization` to
//! send; when the server refuses a request (`401`, or `403` with
//! `insufficient_scope`), it asks the provider to authorize and sends the
//! request again. [`BearerToken`] is a fixed token; [`OAuthProvider`] runs
//! the whole flow: discovery, client identity, the authorization code with
//! PKCE through a [`UserAgent`] (or the client-credentials grant, or
//! cross-app access), refresh,
//! step-up, and a [`TokenStore`]. ADR 0014 says why it is shaped this way.
//!
//! It knows nothing of JSON-RPC, sessions or transports: it sees URLs,
//! HTTP answers and [`Refusal`]s.
//!
//! Module map: `provider.rs` is the seam ([`AuthProvider`], [`Refusal`],
//! [`BearerToken`]); `challenge.rs` reads `WWW-Authenticate`; `discovery.rs`
//! finds the metadata; `registration.rs` the client's identity; `pkce.rs`
//! the verifier and `state`; `jwt.rs` the `private_key_jwt` assertions;
//! `token.rs` the token endpoint; `cross_app.rs` the identity-assertion
//! exchange of cross-app access (SEP-990); `flow.rs` ties them into
//! [`OAuthProvider`]; `store.rs` keeps tokens, with the [`EntryLock`] a
//! refresh holds so that processes sharing a store refresh once, ADR 0033
//! (`file_store.rs`: in a file only its owner can read, locked with
//! `flock`; `binding.rs`: which grant serves the
//! authorization server named now, and where the one it replaces goes); `user_agent.rs` and
//! `redirect.rs` are the user-agent step; `http.rs` bounds every OAuth
//! request. Each module imports from the one that defines a name, never
//! through this file.

mod binding;
mod challenge;
mod cross_app;
mod discovery;
mod error;
mod file_store;
mod flow;
mod http;
mod jwt;
mod pkce;
mod provider;
mod redirect;
mod registration;
mod secret;
mod store;
mod token;
mod user_agent;

pub use challenge::Challenge;
pub use cross_app::CrossAppAccess;
pub use error::AuthError;
pub use file_store::FileTokenStore;
pub use flow::{Grant, OAuthConfig, OAuthProvider};
pub use jwt::{SigningAlgorithm, SigningKey};
pub use provider::{AuthFuture, AuthProvider, BearerToken, Refusal};
pub use redirect::{LoopbackConfig, LoopbackRedirect, open_in_browser};
pub use registration::ClientAuth;
pub use secret::Secret;
pub use store::{EntryLock, MemoryTokenStore, StoredGrant, TokenStore};
pub use token::Tokens;
pub use user_agent::{OwnedAuthFuture, PendingRedirect, RedirectFollower, UserAgent};
