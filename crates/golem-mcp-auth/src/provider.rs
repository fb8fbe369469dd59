//! The seam: [`AuthProvider`], what a transport asks for the
//! `Authorization` of its requests and calls on a refusal ([`Refusal`]),
//! and [`BearerToken`], the provider of a fixed token.

use std::future::Future;
use std::pin::Pin;

use reqwest::Url;

use crate::challenge::Challenge;
use crate::error::AuthError;
use crate::secret::Secret;

/// The future an [`AuthProvider`] or [`UserAgent`](crate::UserAgent) method returns.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, AuthError>> + Send + 'a>>;

/// A request the server refused for want of authorization.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Refusal {
    /// The URL that refused (the MCP endpoint).
    pub url: Url,
    /// `401` or `403`.
    pub status: u16,
    /// The `Bearer` challenge of its `WWW-Authenticate` header, if any.
    pub challenge: Option<Challenge>,
    /// The `Authorization` value the refused request carried, if any: a
    /// provider compares it with what it has now, so that requests refused
    /// together are authorized once.
    pub sent: Option<Secret>,
}

impl Refusal {
    /// The refusal a transport reports to its provider: `url` answered
    /// `status`, with `challenge` parsed from its `WWW-Authenticate`, to a
    /// request that carried `sent`. For `golem-mcp`'s HTTP transport, which
    /// lives in another crate; not a stable API (the type may gain fields).
    #[doc(hidden)]
    pub fn new(url: Url, status: u16, challenge: Option<Challenge>, sent: Option<Secret>) -> Self {
        Refusal {
            url,
            status,
            challenge,
            sent,
        }
    }

    /// Whether this is a `403` with `error="insufficient_scope"`: the token
    /// is valid but lacks scopes.
    pub fn is_insufficient_scope(&self) -> bool {
        self.status == 403
            && self
                .challenge
                .as_ref()
                .is_some_and(Challenge::is_insufficient_scope)
    }
}

/// Supplies the `Authorization` of the requests to one MCP server, and
/// obtains it when the server refuses them.
///
/// The transport calls [`authorization`](AuthProvider::authorization) for
/// every request it makes, [`prepare`](AuthProvider::prepare) before each
/// message it posts, each event stream it opens or resumes, and the
/// `DELETE` that ends the session, and [`authorize`](AuthProvider::authorize) when the
/// server answers `401`, or `403` with `error="insufficient_scope"`; then
/// it sends the refused request again, at most twice per request (a `401`
/// then a step-up).
pub trait AuthProvider: Send + Sync + 'static {
    /// The `Authorization` header value to send to `url` now (e.g.
    /// `Bearer ...`), or `None`. Synchronous and cheap: no I/O beyond a
    /// token store's quick read.
    fn authorization(&self, url: &Url) -> Option<Secret>;

    /// Called before a message is posted to `url`: a provider may refresh
    /// an expired token here. The default does nothing.
    ///
    /// Cancel safe as long as the implementation is (the default is).
    fn prepare<'a>(&'a self, url: &'a Url) -> AuthFuture<'a, ()> {
        let _ = url;
        Box::pin(async { Ok(()) })
    }

    /// Obtains new authorization after `refusal`; once it returns `Ok`,
    /// [`authorization`](AuthProvider::authorization) has something to
    /// send that may succeed. An error fails the refused request.
    ///
    /// Cancel safety is the implementation's to state; see
    /// [`OAuthProvider::authorize`](crate::OAuthProvider#method.authorize).
    fn authorize<'a>(&'a self, refusal: &'a Refusal) -> AuthFuture<'a, ()>;
}

/// A fixed bearer token: sent on every request, and never renewed (a
/// refusal fails the request).
///
/// ```
/// use golem_mcp_auth::{AuthProvider, BearerToken};
///
/// let token = BearerToken::new("secret-token");
/// let url = "https://mcp.example.com/mcp".parse().expect("a valid URL");
/// let header = token.authorization(&url).expect("always a header");
/// assert_eq!(header.expose(), "Bearer secret-token");
/// assert!(!format!("{token:?}").contains("secret-token"));
/// ```
///
/// In `golem-mcp` it goes into `HttpConfig::auth` as
/// `Some(Arc::new(BearerToken::new(token)))`.
#[derive(Debug, Clone)]
pub struct BearerToken {
    header: Secret,
}

impl BearerToken {
    /// A provider sending `Authorization: Bearer <token>`.
    pub fn new(token: impl Into<Secret>) -> Self {
        let token: Secret = token.into();
        BearerToken {
            header: Secret::new(format!("Bearer {}", token.expose())),
        }
    }
}

impl AuthProvider for BearerToken {
    fn authorization(&self, _url: &Url) -> Option<Secret> {
        Some(self.header.clone())
    }

    fn authorize<'a>(&'a self, refusal: &'a Refusal) -> AuthFuture<'a, ()> {
        Box::pin(async move {
            Err(AuthError::Refused {
                status: refusal.status,
                detail: "the configured bearer token was refused; it cannot be renewed".to_owned(),
            })
        })
    }
}
