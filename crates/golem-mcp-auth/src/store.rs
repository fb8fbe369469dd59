//! Where tokens are kept between authorizations: the `TokenStore` trait
//! and the in-memory default.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, PoisonError};

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
/// file, a keyring call), never wait on the network.
pub trait TokenStore: Send + Sync + 'static {
    /// The grant kept for `server`, if any.
    fn load(&self, server: &str) -> Result<Option<StoredGrant>, AuthError>;
    /// Keeps `grant` for `server`, replacing what was kept.
    fn save(&self, server: &str, grant: &StoredGrant) -> Result<(), AuthError>;
    /// Forgets what was kept for `server`.
    fn remove(&self, server: &str) -> Result<(), AuthError>;
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
