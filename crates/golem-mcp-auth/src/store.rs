//! Where tokens are kept between authorizations: the `TokenStore` trait,
//! the lock a refresh holds on one entry ([`EntryLock`]), and the
//! in-memory default.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::error::AuthError;
use crate::secret::Secret;
use crate::token::Tokens;

/// What is kept for one server: the tokens, the client they were issued
/// to (needed to refresh them), and the authorization server that issued
/// both.
///
/// A grant is bound to its issuer: its refresh token and client secret go
/// to that authorization server only. When discovery names another one,
/// the grant is not refreshed there; the provider registers and authorizes
/// anew (RFC 6749 §10.4, RFC 9700 §4.4, SEP-2352), and sets the old grant
/// aside for the day the server names its issuer again (see
/// [`TokenStore`]).
#[derive(Clone, PartialEq, Eq)]
pub struct StoredGrant {
    /// The tokens.
    pub tokens: Tokens,
    /// The client id they were issued to.
    pub client_id: String,
    /// That client's secret, if it has one (a dynamically registered
    /// confidential client).
    pub client_secret: Option<Secret>,
    /// The issuer identifier of the authorization server that issued them,
    /// as its metadata states it. `None` for a grant kept before grants
    /// were bound (or by a store that does not keep it): such a grant's
    /// access token is still sent to its server, but it is never
    /// refreshed; a new authorization replaces it.
    pub issuer: Option<String>,
}

impl fmt::Debug for StoredGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredGrant")
            .field("tokens", &self.tokens)
            .field("client_id", &self.client_id)
            .field("has_client_secret", &self.client_secret.is_some())
            .field("issuer", &self.issuer)
            .finish()
    }
}

/// Keeps the tokens of each server, by the server's canonical URL.
///
/// The provider also keeps, under `<canonical URL>#set-aside`, the grant
/// of the authorization server the server named before its current one
/// (one per server: a canonical URL has no fragment, so such a key never
/// names a server). That grant is never sent anywhere while another issuer
/// is named; it is used again, at its own issuer, if the server names that
/// issuer again. A store need do nothing special for it: it is one more
/// key, and `logout` removes it with the server's.
///
/// Methods are synchronous and called on the runtime's threads while an
/// authorization is under way: an implementation must be quick (a small
/// file, a keyring call), never wait on the network, nor on a lock that
/// another process may hold for long ([`try_lock_entry`] does not wait;
/// the provider does, between tries).
///
/// [`try_lock_entry`]: TokenStore::try_lock_entry
pub trait TokenStore: Send + Sync + 'static {
    /// The grant kept for `server`, if any.
    fn load(&self, server: &str) -> Result<Option<StoredGrant>, AuthError>;
    /// Keeps `grant` for `server`, replacing what was kept.
    fn save(&self, server: &str, grant: &StoredGrant) -> Result<(), AuthError>;
    /// Forgets what was kept for `server`.
    fn remove(&self, server: &str) -> Result<(), AuthError>;

    /// Takes the lock of `server`'s entry (its grant and the one set aside
    /// for it) if nobody holds it, without waiting: `Ok(None)` while
    /// another holder has it.
    ///
    /// [`OAuthProvider`](crate::OAuthProvider) holds it while it
    /// refreshes: from reading the entry again to keeping the new tokens.
    /// Authorization servers rotate refresh tokens and refuse one used
    /// twice, so two providers sharing a store (two processes on one token
    /// file) that both refreshed with the token they read would leave one
    /// of them with a refused refresh token, or the store with a rotated
    /// one that the other overwrote. With the lock, the second waits, then
    /// finds the first's tokens and uses them.
    ///
    /// The default locks nothing: right for a store that only one provider
    /// uses at a time, which the provider's own serialisation covers.
    /// [`FileTokenStore`](crate::FileTokenStore) locks across processes.
    fn try_lock_entry(&self, server: &str) -> Result<Option<EntryLock>, AuthError> {
        let _ = server;
        Ok(Some(EntryLock::unshared()))
    }
}

/// A held lock on one entry of a [`TokenStore`] (see
/// [`TokenStore::try_lock_entry`]), released when dropped.
#[must_use = "the entry is unlocked as soon as the lock is dropped"]
pub struct EntryLock {
    /// What keeps the lock held (a locked file), dropped with it; `None`
    /// for a store that locks nothing.
    _held: Option<Box<dyn Send + Sync>>,
}

impl EntryLock {
    /// A lock held for as long as `held` lives: dropping the lock drops
    /// `held` (e.g. closes a locked file), which releases it.
    pub fn new(held: impl Send + Sync + 'static) -> Self {
        EntryLock {
            _held: Some(Box::new(held)),
        }
    }

    /// A lock that holds nothing, for a store that needs none.
    pub fn unshared() -> Self {
        EntryLock { _held: None }
    }
}

impl fmt::Debug for EntryLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EntryLock").finish_non_exhaustive()
    }
}

/// The first pause between two tries of a held entry lock, doubled after
/// each try up to [`LOCK_PAUSE_MAX`].
const LOCK_PAUSE_MIN: Duration = Duration::from_millis(10);
/// The longest pause between two tries: a refresh takes a round trip to
/// the authorization server, so a waiter is late by a fraction of one.
const LOCK_PAUSE_MAX: Duration = Duration::from_millis(200);

/// Takes the lock of `server`'s entry in `store`, trying again while
/// another holder has it, for at most `bound`; then fails with an error
/// that says what holds it.
///
/// It tries rather than blocks: `flock` cannot be given a time limit, and
/// a thread blocked in it cannot be cancelled, so a holder that never lets
/// go (a stopped process) would keep one blocked thread per attempt.
///
/// Cancel safe: dropped while waiting, it holds nothing.
pub(crate) async fn lock_entry(
    store: &dyn TokenStore,
    server: &str,
    bound: Duration,
) -> Result<EntryLock, AuthError> {
    let deadline = tokio::time::Instant::now() + bound;
    let mut pause = LOCK_PAUSE_MIN;
    loop {
        if let Some(lock) = store.try_lock_entry(server)? {
            return Ok(lock);
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(AuthError::Store {
                detail: format!(
                    "the tokens of {server} stayed locked for {} s by another process \
                     (refreshing them, or stopped while it was); not refreshing them here",
                    bound.as_secs_f32()
                ),
            });
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(LOCK_PAUSE_MAX);
    }
}

/// A [`TokenStore`] in memory: tokens last as long as the store.
#[derive(Default)]
pub struct MemoryTokenStore {
    grants: Mutex<HashMap<String, StoredGrant>>,
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("MemoryTokenStore")
            .field("servers", &grants.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl TokenStore for MemoryTokenStore {
    fn load(&self, server: &str) -> Result<Option<StoredGrant>, AuthError> {
        let grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(grants.get(server).cloned())
    }

    fn save(&self, server: &str, grant: &StoredGrant) -> Result<(), AuthError> {
        let mut grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
        grants.insert(server.to_owned(), grant.clone());
        Ok(())
    }

    fn remove(&self, server: &str) -> Result<(), AuthError> {
        let mut grants = self.grants.lock().unwrap_or_else(PoisonError::into_inner);
        grants.remove(server);
        Ok(())
    }
}
