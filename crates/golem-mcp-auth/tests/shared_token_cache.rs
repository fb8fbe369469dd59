//! Two processes refreshing the tokens of one server in one token cache (a
//! `FileTokenStore`), at an authorization server that rotates refresh
//! tokens and refuses one used twice: one process refreshes, the other
//! waits for it and uses its rotated tokens, rather than spend the refresh
//! token both had read and be refused (or overwrite the rotated one).
//!
//! The processes are this test binary again, running only
//! [`refresh_in_a_child_process`] with the environment that names the
//! cache, the server and the step to take. The first process's refresh is
//! held at the authorization server until the second has read the cache
//! and either sent its own refresh (no lock) or found the entry locked:
//! the overlap is certain, with no timing involved.
//!
//! The servers are the fakes of `support`.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use golem_mcp_auth::{
    AuthError, AuthProvider, EntryLock, FileTokenStore, OAuthConfig, OAuthProvider, Refusal,
    Secret, StoredGrant, TokenStore, Tokens,
};
use reqwest::Url;
use support::{Approver, PATIENCE, Rotating, bounded, resource, rotating_authorization_server};

/// The name of the test that a child process runs.
const WORKER: &str = "refresh_in_a_child_process";
/// The token cache's path.
const CACHE: &str = "GOLEM_MCP_AUTH_TEST_CACHE";
/// The MCP server's URL.
const SERVER: &str = "GOLEM_MCP_AUTH_TEST_SERVER";
/// `host:port` of the authorization server, told of a locked entry.
const SIGNAL: &str = "GOLEM_MCP_AUTH_TEST_SIGNAL";
/// `prepare` (an expiring token, before a request) or `authorize` (after
/// a `401`).
const STEP: &str = "GOLEM_MCP_AUTH_TEST_STEP";

#[tokio::test]
async fn two_processes_refreshing_an_expiring_token_refresh_it_once() {
    both_refresh("prepare").await;
}

#[tokio::test]
async fn two_processes_refreshing_after_a_refusal_refresh_it_once() {
    both_refresh("authorize").await;
}

async fn both_refresh(step: &str) {
    let issuer = rotating_authorization_server("refresh-0").await;
    let resource_base = resource(Arc::new(Mutex::new(issuer.base()))).await;
    let server = format!("{resource_base}/mcp");
    let dir = std::env::temp_dir().join(format!(
        "golem-mcp-auth-shared-cache-{}-{step}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let cache = dir.join("tokens.json");
    let expiring = StoredGrant {
        tokens: Tokens {
            access_token: Secret::new("access-0"),
            refresh_token: Some(Secret::new("refresh-0")),
            expires_at: Some(SystemTime::now()),
            scope: None,
        },
        client_id: "client".to_owned(),
        client_secret: None,
        issuer: Some(issuer.base()),
    };
    FileTokenStore::new(&cache)
        .save(&server, &expiring)
        .expect("the cache is written");

    let first = worker(&cache, &server, &issuer, step);
    // The first process has read the cache and sent its refresh, which
    // the authorization server holds unanswered.
    bounded(issuer.holding.notified()).await;
    let second = worker(&cache, &server, &issuer, step);
    let (first, second) =
        bounded(async { tokio::join!(first.wait_with_output(), second.wait_with_output()) }).await;

    let refused = issuer.refused.lock().expect("lock").clone();
    for (name, output) in [("first", first), ("second", second)] {
        let output = output.expect("the child process ran");
        assert_eq!(
            said(&output),
            ["outcome: ok", "sends: Bearer access-1"],
            "the {name} process does not use the rotated token (refused: {refused:?})\n{}",
            shown(&output)
        );
    }
    assert!(
        refused.is_empty(),
        "a refresh token was spent twice: {refused:?}"
    );
    assert_eq!(*issuer.refreshes.lock().expect("lock"), ["refresh-0"]);
    assert_eq!(
        issuer.contended.load(Ordering::SeqCst),
        1,
        "the second process never found the entry locked"
    );
    let kept = FileTokenStore::new(&cache)
        .load(&server)
        .expect("readable")
        .expect("kept");
    assert_eq!(
        kept.tokens.refresh_token.as_ref().map(Secret::expose),
        Some("refresh-1"),
        "the cache lost the rotated refresh token"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs [`refresh_in_a_child_process`] in a new process of this test
/// binary.
fn worker(cache: &Path, server: &str, issuer: &Rotating, step: &str) -> tokio::process::Child {
    let signal = issuer.base().trim_start_matches("http://").to_owned();
    tokio::process::Command::new(std::env::current_exe().expect("this test binary"))
        .args([WORKER, "--exact", "--nocapture", "--test-threads=1"])
        .env(CACHE, cache)
        .env(SERVER, server)
        .env(SIGNAL, signal)
        .env(STEP, step)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("a child process")
}

/// What a worker reported, without the test harness's words (which start
/// its first line).
fn said(output: &Output) -> Vec<String> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split_once("worker ").map(|(_, said)| said.to_owned()))
        .collect()
}

fn shown(output: &Output) -> String {
    format!(
        "status: {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Not a test of its own: the child process of the tests above. Without
/// their environment (a plain `cargo test`) it does nothing.
///
/// It takes one step of a provider whose tokens are in the cache, then
/// prints how that went and the `Authorization` it would send now. It has
/// no user agent: an authorization anew would need a user, and fails.
#[tokio::test]
async fn refresh_in_a_child_process() {
    let Some(cache) = std::env::var_os(CACHE).map(PathBuf::from) else {
        return;
    };
    let var = |name: &str| std::env::var(name).expect("set by the parent test");
    let url = Url::parse(&var(SERVER)).expect("a URL");
    let mut config = OAuthConfig::new(Arc::new(Approver::default()));
    config.user_agent = None;
    config.store = Arc::new(Signalling {
        inner: FileTokenStore::new(cache),
        signal: var(SIGNAL),
        signalled: AtomicBool::new(false),
    });
    let provider = OAuthProvider::new(config).expect("a provider");
    let outcome = match var(STEP).as_str() {
        "prepare" => bounded(provider.prepare(&url)).await,
        _ => {
            let refusal = Refusal::new(url.clone(), 401, None, provider.authorization(&url));
            bounded(provider.authorize(&refusal)).await
        }
    };
    println!(
        "worker outcome: {}",
        outcome.map_or_else(|error: AuthError| error.to_string(), |()| "ok".to_owned())
    );
    println!(
        "worker sends: {}",
        provider
            .authorization(&url)
            .as_ref()
            .map_or("nothing", Secret::expose)
    );
}

/// A `FileTokenStore` that tells the authorization server the first time
/// it finds an entry locked: the moment the test waits for, as it waits
/// for the second refresh when there is no lock.
struct Signalling {
    inner: FileTokenStore,
    /// The authorization server's `host:port`.
    signal: String,
    signalled: AtomicBool,
}

impl TokenStore for Signalling {
    fn load(&self, server: &str) -> Result<Option<StoredGrant>, AuthError> {
        self.inner.load(server)
    }

    fn save(&self, server: &str, grant: &StoredGrant) -> Result<(), AuthError> {
        self.inner.save(server, grant)
    }

    fn remove(&self, server: &str) -> Result<(), AuthError> {
        self.inner.remove(server)
    }

    fn try_lock_entry(&self, server: &str) -> Result<Option<EntryLock>, AuthError> {
        let lock = self.inner.try_lock_entry(server)?;
        if lock.is_none() && !self.signalled.swap(true, Ordering::SeqCst) {
            contended(&self.signal);
        }
        Ok(lock)
    }
}

/// `POST /contended` to the authorization server at `address`, in plain
/// HTTP/1.1: the store's methods are synchronous.
fn contended(address: &str) {
    let mut stream = TcpStream::connect(address).expect("the authorization server");
    stream
        .set_read_timeout(Some(PATIENCE))
        .expect("a read timeout");
    write!(
        stream,
        "POST /contended HTTP/1.1\r\nHost: {address}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .expect("sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answered");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}
