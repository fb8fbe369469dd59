//! The user-agent step of the authorization-code flow: show the user the
//! authorization URL and receive the redirect. The application's to
//! provide; `redirect.rs` has the loopback receiver, and
//! [`RedirectFollower`] does it without a user.

use std::future::Future;
use std::pin::Pin;

use reqwest::Url;

use crate::error::AuthError;
use crate::http::OAuthHttp;
use crate::provider::AuthFuture;

/// A future that owns what it uses.
pub type OwnedAuthFuture<T> = Pin<Box<dyn Future<Output = Result<T, AuthError>> + Send>>;

/// Takes the user to the authorization server and brings back its answer.
///
/// One authorization is two steps: [`prepare`](UserAgent::prepare) gets
/// ready to receive one redirect and says where the authorization server
/// must send it (the client registers that `redirect_uri`), then
/// [`PendingRedirect::wait`] shows the authorization URL and waits for the
/// redirect.
pub trait UserAgent: Send + Sync + 'static {
    /// Gets ready to receive one redirect (e.g. binds a loopback port).
    ///
    /// Cancel safe: dropping the future releases what it took.
    fn prepare(&self) -> AuthFuture<'_, Box<dyn PendingRedirect>>;
}

/// One redirect being waited for.
pub trait PendingRedirect: Send {
    /// Where the authorization server must send the user back.
    fn redirect_uri(&self) -> &str;

    /// Shows `authorization_url` to the user and waits for the redirect
    /// carrying `state`; returns the URL the user was sent back to (with
    /// its `code`, or its `error`). A redirect with another `state` is
    /// refused.
    ///
    /// Cancel safe: dropping the future abandons the authorization; a
    /// redirect that comes later is not accepted.
    fn wait(self: Box<Self>, authorization_url: Url, state: String) -> OwnedAuthFuture<Url>;
}

/// A user agent without a user: it requests the authorization URL itself
/// and reads the redirect's `Location` without following it.
///
/// Only an authorization server that approves without asking anyone
/// answers that way (test servers, the MCP conformance suite, automation
/// set up for it); against a real one the redirect never comes and
/// [`PendingRedirect::wait`] fails. The redirect URI is never visited.
#[derive(Debug, Clone)]
pub struct RedirectFollower {
    redirect_uri: String,
    http: OAuthHttp,
}

impl RedirectFollower {
    /// A follower announcing `redirect_uri` (e.g.
    /// `http://localhost/callback`), each request bounded by `timeout`.
    pub fn new(
        redirect_uri: impl Into<String>,
        timeout: std::time::Duration,
    ) -> Result<Self, AuthError> {
        Ok(RedirectFollower {
            redirect_uri: redirect_uri.into(),
            http: OAuthHttp::new(timeout)?,
        })
    }
}

impl UserAgent for RedirectFollower {
    fn prepare(&self) -> AuthFuture<'_, Box<dyn PendingRedirect>> {
        let pending: Box<dyn PendingRedirect> = Box::new(self.clone());
        Box::pin(async move { Ok(pending) })
    }
}

impl PendingRedirect for RedirectFollower {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn wait(self: Box<Self>, authorization_url: Url, state: String) -> OwnedAuthFuture<Url> {
        Box::pin(async move {
            let location = self.http.location(&authorization_url).await?;
            let redirect =
                authorization_url
                    .join(&location)
                    .map_err(|error| AuthError::UserAgent {
                        detail: format!(
                            "the authorization server redirected to an invalid URL ({error})"
                        ),
                    })?;
            if !is_redirect_uri(&redirect, &self.redirect_uri) {
                return Err(AuthError::UserAgent {
                    detail:
                        "the authorization server redirected somewhere other than the redirect URI"
                            .to_owned(),
                });
            }
            crate::pkce::check_state(&redirect, &state)?;
            Ok(redirect)
        })
    }
}

/// Whether `redirect` goes to `redirect_uri`: the same origin and the same
/// path, whatever the query (a string prefix would take `/callbackx` or a
/// longer port for it).
fn is_redirect_uri(redirect: &Url, redirect_uri: &str) -> bool {
    // By its parts: an opaque origin (a private scheme's) equals nothing.
    Url::parse(redirect_uri).is_ok_and(|expected| {
        expected.scheme() == redirect.scheme()
            && expected.host() == redirect.host()
            && expected.port_or_known_default() == redirect.port_or_known_default()
            && expected.path() == redirect.path()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_redirect_uri_itself_is_the_redirect() {
        let uri = "http://127.0.0.1:3000/callback";
        let url = |text: &str| Url::parse(text).expect("valid test input");
        assert!(is_redirect_uri(
            &url("http://127.0.0.1:3000/callback?code=c&state=s"),
            uri
        ));
        for other in [
            "http://127.0.0.1:3000/callbackx?code=c",
            "http://127.0.0.1:30001/callback?code=c",
            "http://127.0.0.1:3000/callback/more?code=c",
            "https://127.0.0.1:3000/callback?code=c",
        ] {
            assert!(!is_redirect_uri(&url(other), uri), "{other}");
        }
        let private = "com.example.app:/oauth";
        assert!(is_redirect_uri(
            &url("com.example.app:/oauth?code=c"),
            private
        ));
        assert!(!is_redirect_uri(
            &url("com.example.app:/other?code=c"),
            private
        ));
    }
}
