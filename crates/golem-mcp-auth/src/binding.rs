//! Grants across a change of authorization server (SEP-2352): which grant
//! serves the issuer that discovery names now, and where the one it
//! replaces goes.
//!
//! A server has one grant in use, kept under its canonical URL. When the
//! server's protected-resource metadata names another authorization
//! server, that grant is of no use there (its tokens were not issued
//! there, its refresh token and client secret must not go there), but it
//! is not thrown away either: a server that moves back (a migration rolled
//! back, a tenant switched back) would otherwise cost the user another
//! login for a grant that was still good. So the replaced grant is set
//! aside, in one slot per server, and comes back if its issuer is named
//! again. One slot bounds what a server that keeps changing issuers can
//! leave in the token cache, and lets `logout` find everything it must
//! forget; a third issuer's grant pushes out the oldest.

use crate::error::AuthError;
use crate::store::{StoredGrant, TokenStore};

/// The key of `server`'s set-aside slot: the server's key with a fragment.
/// A canonical server URL has no fragment, so the key never names a
/// server.
pub(crate) fn set_aside_key(server: &str) -> String {
    format!("{server}#set-aside")
}

/// The grant that serves `issuer`, and the one in use that it would
/// replace.
#[derive(Debug)]
pub(crate) struct Chosen {
    /// The grant for `issuer`: the one in use if that issuer issued it (or
    /// if its issuer is unknown: a grant stored before grants were bound,
    /// used as before), else the one set aside for `issuer`, if any.
    pub(crate) grant: Option<StoredGrant>,
    /// The grant in use when another issuer issued it: to be set aside once
    /// a grant for `issuer` replaces it.
    pub(crate) replaced: Option<StoredGrant>,
}

/// Chooses the grant for `issuer` between `active` (the server's grant in
/// use) and the one set aside for `server`; `own` says whether a grant is
/// this client's to use at all (a store may hold another client's).
pub(crate) fn choose(
    store: &dyn TokenStore,
    server: &str,
    active: Option<StoredGrant>,
    issuer: &str,
    own: impl Fn(&StoredGrant) -> bool,
) -> Chosen {
    let Some(active) = active else {
        return Chosen {
            grant: None,
            replaced: None,
        };
    };
    let Some(issued_by) = active.issuer.as_deref() else {
        return Chosen {
            grant: Some(active),
            replaced: None,
        };
    };
    if issued_by == issuer {
        return Chosen {
            grant: Some(active),
            replaced: None,
        };
    }
    tracing::info!(
        from = issued_by,
        to = issuer,
        "mcp: the server names another authorization server than the one that issued its tokens; \
         those are set aside, not used there"
    );
    let set_aside = match store.load(&set_aside_key(server)) {
        Ok(grant) => grant.filter(|grant| grant.issuer.as_deref() == Some(issuer) && own(grant)),
        Err(error) => {
            tracing::warn!(%error, "mcp: could not read the token store");
            None
        }
    };
    Chosen {
        grant: set_aside,
        replaced: Some(active),
    }
}

/// Keeps `grant` as `server`'s grant in use, setting `replaced` aside (a
/// grant of another issuer that `grant` replaces). A set-aside grant of
/// `grant`'s own issuer is dropped: `grant` supersedes it (it is that grant
/// come back and refreshed, or a new authorization at that issuer).
pub(crate) fn keep(
    store: &dyn TokenStore,
    server: &str,
    grant: &StoredGrant,
    replaced: Option<&StoredGrant>,
) -> Result<(), AuthError> {
    let slot = set_aside_key(server);
    match replaced {
        Some(replaced) => {
            if let Ok(Some(pushed_out)) = store.load(&slot)
                && pushed_out.issuer != grant.issuer
            {
                tracing::debug!(
                    issuer = pushed_out.issuer.as_deref().unwrap_or("unknown"),
                    "mcp: forgetting the grant set aside for a third authorization server"
                );
            }
            // Written first: should the second write fail, the replaced
            // grant is both in use and set aside, and only the new grant
            // is lost.
            store.save(&slot, replaced)?;
        }
        None => {
            let superseded = store
                .load(&slot)
                .ok()
                .flatten()
                .is_some_and(|kept| kept.issuer.is_some() && kept.issuer == grant.issuer);
            if superseded {
                store.remove(&slot)?;
            }
        }
    }
    store.save(server, grant)
}

/// Forgets `server`'s grant in use and the one set aside.
pub(crate) fn forget(store: &dyn TokenStore, server: &str) -> Result<(), AuthError> {
    store.remove(&set_aside_key(server))?;
    store.remove(server)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::Secret;
    use crate::store::MemoryTokenStore;
    use crate::token::Tokens;

    const SERVER: &str = "https://mcp.example/mcp";

    fn grant(issuer: Option<&str>, token: &str) -> StoredGrant {
        StoredGrant {
            tokens: Tokens {
                access_token: Secret::new(token),
                refresh_token: None,
                expires_at: None,
                scope: None,
            },
            client_id: format!("client-of-{}", issuer.unwrap_or("nobody")),
            client_secret: None,
            issuer: issuer.map(str::to_owned),
        }
    }

    fn token(chosen: &Option<StoredGrant>) -> Option<&str> {
        chosen
            .as_ref()
            .map(|grant| grant.tokens.access_token.expose())
    }

    #[test]
    fn a_grant_of_another_issuer_is_never_chosen_and_is_set_aside_when_replaced() {
        let store = MemoryTokenStore::new();
        let first = grant(Some("https://as1.example"), "t1");
        store.save(SERVER, &first).expect("saved");

        let chosen = choose(
            &store,
            SERVER,
            Some(first.clone()),
            "https://as2.example",
            |_| true,
        );
        assert_eq!(token(&chosen.grant), None);
        assert_eq!(token(&chosen.replaced), Some("t1"));

        let second = grant(Some("https://as2.example"), "t2");
        keep(&store, SERVER, &second, chosen.replaced.as_ref()).expect("kept");
        assert_eq!(token(&store.load(SERVER).expect("read")), Some("t2"));
        assert_eq!(
            token(&store.load(&set_aside_key(SERVER)).expect("read")),
            Some("t1")
        );

        // Back to the first: its grant comes back, the second's goes aside.
        let chosen = choose(&store, SERVER, Some(second), "https://as1.example", |_| {
            true
        });
        assert_eq!(token(&chosen.grant), Some("t1"));
        let refreshed = grant(Some("https://as1.example"), "t1-refreshed");
        keep(&store, SERVER, &refreshed, chosen.replaced.as_ref()).expect("kept");
        assert_eq!(
            token(&store.load(SERVER).expect("read")),
            Some("t1-refreshed")
        );
        assert_eq!(
            token(&store.load(&set_aside_key(SERVER)).expect("read")),
            Some("t2")
        );

        forget(&store, SERVER).expect("forgotten");
        assert_eq!(store.load(SERVER).expect("read"), None);
        assert_eq!(store.load(&set_aside_key(SERVER)).expect("read"), None);
    }

    #[test]
    fn a_set_aside_grant_is_chosen_only_for_its_own_issuer_and_client() {
        let store = MemoryTokenStore::new();
        let active = grant(Some("https://as2.example"), "t2");
        store
            .save(
                &set_aside_key(SERVER),
                &grant(Some("https://as1.example"), "t1"),
            )
            .expect("saved");
        let third = choose(
            &store,
            SERVER,
            Some(active.clone()),
            "https://as3.example",
            |_| true,
        );
        assert_eq!(token(&third.grant), None, "another issuer's grant");
        let not_ours = choose(&store, SERVER, Some(active), "https://as1.example", |_| {
            false
        });
        assert_eq!(token(&not_ours.grant), None, "another client's grant");
    }

    #[test]
    fn a_grant_of_an_unknown_issuer_is_used_as_before_and_not_set_aside() {
        let store = MemoryTokenStore::new();
        let legacy = grant(None, "old");
        let chosen = choose(&store, SERVER, Some(legacy), "https://as.example", |_| true);
        assert_eq!(token(&chosen.grant), Some("old"));
        assert!(chosen.replaced.is_none());
    }

    #[test]
    fn a_new_grant_at_the_set_aside_issuer_supersedes_the_set_aside_one() {
        let store = MemoryTokenStore::new();
        store
            .save(
                &set_aside_key(SERVER),
                &grant(Some("https://as1.example"), "t1"),
            )
            .expect("saved");
        keep(
            &store,
            SERVER,
            &grant(Some("https://as1.example"), "new"),
            None,
        )
        .expect("kept");
        assert_eq!(store.load(&set_aside_key(SERVER)).expect("read"), None);
        // Another issuer's set-aside grant stays.
        store
            .save(
                &set_aside_key(SERVER),
                &grant(Some("https://as2.example"), "t2"),
            )
            .expect("saved");
        keep(
            &store,
            SERVER,
            &grant(Some("https://as1.example"), "newer"),
            None,
        )
        .expect("kept");
        assert_eq!(
            token(&store.load(&set_aside_key(SERVER)).expect("read")),
            Some("t2")
        );
    }
}
