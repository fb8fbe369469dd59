//! The provided user agent: a loopback redirect receiver (RFC 8252 §7.3)
//! and a browser opener.

use std::fmt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::error::AuthError;
use crate::provider::AuthFuture;
use crate::user_agent::OwnedAuthFuture;
use crate::user_agent::{PendingRedirect, UserAgent};

/// The longest request line and headers read from the browser.
const MAX_REQUEST_BYTES: usize = 16 * 1024;
/// How long one browser connection may take to send its request.
const REQUEST_TIME: Duration = Duration::from_secs(10);
/// How many connections are served at once: a browser opens a few (the
/// redirect, a favicon, a speculative one), and one that sends nothing
/// must not hold up the redirect behind it.
const MAX_CONNECTIONS: usize = 32;

/// Opens a URL for the user; the default is [`open_in_browser`].
pub type Opener = Arc<dyn Fn(&Url) -> std::io::Result<()> + Send + Sync>;

/// How the loopback receiver works.
#[derive(Clone)]
#[non_exhaustive]
pub struct LoopbackConfig {
    /// The port to listen on; `0` (the default) takes an ephemeral one.
    /// Give a fixed one for an authorization server that does not accept
    /// any port on loopback redirect URIs.
    pub port: u16,
    /// The path of the redirect URI.
    pub path: String,
    /// How long to wait for the user to come back.
    pub timeout: Duration,
    /// Shows the authorization URL to the user.
    pub open: Opener,
}

impl Default for LoopbackConfig {
    /// An ephemeral port, `/callback`, five minutes, [`open_in_browser`].
    fn default() -> Self {
        LoopbackConfig {
            port: 0,
            path: "/callback".to_owned(),
            timeout: Duration::from_secs(300),
            open: Arc::new(open_in_browser),
        }
    }
}

impl fmt::Debug for LoopbackConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackConfig")
            .field("port", &self.port)
            .field("path", &self.path)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// A [`UserAgent`] that opens the authorization URL in the user's browser
/// and receives the redirect on `http://127.0.0.1:PORT/callback`.
///
/// Each authorization binds a fresh listener on the loopback interface
/// only, serves its connections at once, and accepts exactly one redirect
/// with the expected `state`: anything else (a redirect with another
/// `state`, a favicon, a probe) is answered and refused while the wait goes
/// on; the listener is closed once the redirect came, so a second one finds
/// nobody. The redirect is answered with a short page saying the tab can be
/// closed; the wait gives up after the timeout.
#[derive(Debug, Clone, Default)]
pub struct LoopbackRedirect {
    config: LoopbackConfig,
}

impl LoopbackRedirect {
    /// A receiver configured by `config`.
    pub fn new(config: LoopbackConfig) -> Self {
        LoopbackRedirect { config }
    }
}

impl UserAgent for LoopbackRedirect {
    fn prepare(&self) -> AuthFuture<'_, Box<dyn PendingRedirect>> {
        Box::pin(async move {
            let listener = TcpListener::bind(("127.0.0.1", self.config.port))
                .await
                .map_err(|error| AuthError::UserAgent {
                    detail: format!("cannot listen on 127.0.0.1:{} ({error})", self.config.port),
                })?;
            let port = listener
                .local_addr()
                .map_err(|error| AuthError::UserAgent {
                    detail: format!("cannot read the listening port ({error})"),
                })?
                .port();
            let redirect_uri = format!("http://127.0.0.1:{port}{}", self.config.path);
            let pending: Box<dyn PendingRedirect> = Box::new(Pending {
                listener,
                redirect_uri,
                config: self.config.clone(),
            });
            Ok(pending)
        })
    }
}

struct Pending {
    listener: TcpListener,
    redirect_uri: String,
    config: LoopbackConfig,
}

impl PendingRedirect for Pending {
    fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    fn wait(self: Box<Self>, authorization_url: Url, state: String) -> OwnedAuthFuture<Url> {
        Box::pin(async move {
            (self.config.open)(&authorization_url).map_err(|error| AuthError::UserAgent {
                detail: format!("cannot show the authorization URL ({error})"),
            })?;
            let timeout = self.config.timeout;
            tokio::time::timeout(timeout, self.receive(&state))
                .await
                .map_err(|_| AuthError::UserAgent {
                    detail: format!("no redirect came back within {timeout:?}"),
                })?
        })
    }
}

impl Pending {
    /// Serves connections, several at once, until one brings the redirect
    /// with the expected `state`. Anything else (a favicon, a probe, a
    /// forged or stale redirect, a connection that sends nothing) is
    /// answered or dropped and the wait goes on, within the caller's
    /// overall timeout: no stray request can end the authorization.
    async fn receive(self, state: &str) -> Result<Url, AuthError> {
        let base = Url::parse(&self.redirect_uri).map_err(|error| AuthError::UserAgent {
            detail: format!("invalid redirect URI ({error})"),
        })?;
        let mut connections = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept(), if connections.len() < MAX_CONNECTIONS => {
                    let (stream, _) = accepted.map_err(|error| AuthError::UserAgent {
                        detail: format!("accepting the redirect failed ({error})"),
                    })?;
                    connections.spawn(serve(stream, base.clone(), state.to_owned()));
                }
                Some(served) = connections.join_next(), if !connections.is_empty() => {
                    if let Ok(Some(redirect)) = served {
                        return Ok(redirect); // the other connections are dropped
                    }
                }
            }
        }
    }
}

/// Serves one connection: the redirect (its URL, once answered), or
/// anything else (`None`, answered with what it is).
async fn serve(mut stream: TcpStream, base: Url, state: String) -> Option<Url> {
    let Ok(target) = tokio::time::timeout(REQUEST_TIME, read_target(&mut stream)).await else {
        return None; // sent nothing in time
    };
    let Some(url) = target.and_then(|target| base.join(&target).ok()) else {
        respond(&mut stream, "400 Bad Request", "Not a redirect.").await;
        return None;
    };
    if url.path() != base.path() {
        respond(&mut stream, "404 Not Found", "Not found.").await;
        return None;
    }
    if let Err(error) = crate::pkce::check_state(&url, &state) {
        tracing::debug!(%error, "mcp: refused a redirect with another state; still waiting");
        respond(
            &mut stream,
            "400 Bad Request",
            "This authorization response was not expected, and was refused.",
        )
        .await;
        return None;
    }
    respond(
        &mut stream,
        "200 OK",
        "Authorization received. You can close this tab and return to the application.",
    )
    .await;
    Some(url)
}

/// Reads an HTTP request's head and returns its target (`/callback?...`),
/// `None` if it is not a `GET` or does not fit.
async fn read_target(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buffer = [0u8; 2048];
    while !head.windows(4).any(|window| window == b"\r\n\r\n") {
        let read = stream.read(&mut buffer).await.ok()?;
        if read == 0 || head.len() + read > MAX_REQUEST_BYTES {
            return None;
        }
        head.extend_from_slice(&buffer[..read]);
    }
    let line = head.split(|&b| b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split(' ');
    match (parts.next(), parts.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    }
}

async fn respond(stream: &mut TcpStream, status: &str, message: &str) {
    let body = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Authorization</title></head><body><p>{message}</p></body></html>"
    );
    let response = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Opens `url` for the user: with `$BROWSER` when set (the URL its one
/// argument, no shell), else the desktop's opener (`xdg-open`, `open` on
/// macOS), else by printing it on stderr for the user to open. Only
/// `http` and `https` URLs are opened.
pub fn open_in_browser(url: &Url) -> std::io::Result<()> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "only http and https URLs are opened",
        ));
    }
    let opened = match std::env::var("BROWSER") {
        Ok(browser) if !browser.trim().is_empty() => spawn(browser.trim(), url),
        _ => spawn(
            if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            },
            url,
        ),
    };
    if opened.is_err() {
        eprintln!("Open this URL in a browser to authorize:\n\n    {url}\n");
    }
    Ok(())
}

fn spawn(program: &str, url: &Url) -> std::io::Result<()> {
    Command::new(program)
        .arg(url.as_str())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map(drop)
}
