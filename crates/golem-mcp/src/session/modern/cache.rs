//! The modern era's result cache (2026-07-28, ADR 0024): the results of
//! `server/discover`, the four lists and `resources/read`, kept while the
//! server's `ttlMs` says they are fresh.
//!
//! An entry is the reply's bytes, keyed by the method and the parameters
//! that change the result (the JSON text of the request's own parameters:
//! a list page's cursor, a read's URI; never the `_meta` the session adds).
//! A hit is decoded as a fresh reply would be: the caller cannot tell the
//! difference, except that nothing was sent. What is never kept: a reply
//! whose TTL is missing, zero or negative; an error; the answer to a
//! multi-round-trip retry (it depends on answers outside the key); an
//! `input_required` answer (the caller never gets one to keep). A
//! list-changed notification drops its list's entries, and a resource
//! update its URI's reads, at once; a reply that was on its way while such
//! a notification arrived is not kept either (its request went out before
//! the change).
//!
//! `cacheScope` is read but both scopes are kept: the cache belongs to one
//! [`Client`](crate::Client), which is one connection with one transport
//! and one authorization (its auth provider), so a `"private"` result is
//! only ever served back to the authorization context that fetched it.
//! Nothing is shared between clients, so `"public"` grants nothing more.
//!
//! Bounded: at most [`MAX_ENTRIES`] entries and [`MAX_BYTES`] bytes in all;
//! a reply larger than [`MAX_ENTRY_BYTES`] is not kept, and when the cache
//! is full, expired entries are dropped first and a reply that still does
//! not fit is not kept.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::Deserialize;

use crate::session::notifications::ServerNotification;

/// The most entries kept at once.
pub(crate) const MAX_ENTRIES: usize = 256;
/// The most bytes of replies kept at once.
pub(crate) const MAX_BYTES: usize = 16 * 1024 * 1024;
/// The largest reply kept.
pub(crate) const MAX_ENTRY_BYTES: usize = 1024 * 1024;
/// The longest a result is kept, whatever its TTL says (a day): a server's
/// mistaken TTL must not pin a result for the life of an agent.
const MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// What invalidates an entry: the notification that says its result
/// changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Invalidation {
    /// `server/discover`: its TTL only.
    Discovery,
    Tools,
    Prompts,
    /// `resources/list` and `resources/templates/list`.
    ResourceLists,
    /// `resources/read`: an update of its URI.
    Reads,
}

impl Invalidation {
    fn of(method: &str) -> Option<Invalidation> {
        Some(match method {
            "server/discover" => Invalidation::Discovery,
            "tools/list" => Invalidation::Tools,
            "prompts/list" => Invalidation::Prompts,
            "resources/list" | "resources/templates/list" => Invalidation::ResourceLists,
            "resources/read" => Invalidation::Reads,
            _ => return None,
        })
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Whether results of `method` may be cached at all.
pub(crate) fn cacheable(method: &str) -> bool {
    Invalidation::of(method).is_some()
}

/// One kept reply.
struct Entry {
    reply: Bytes,
    fresh_until: Instant,
    /// The resource URI of a read, for its updates.
    uri: Option<String>,
}

#[derive(Default)]
struct State {
    entries: HashMap<(&'static str, String), Entry>,
    bytes: usize,
    /// How often each kind was invalidated: a reply is kept only if its
    /// kind's count did not move while it was on its way.
    generations: [u64; 5],
}

/// One client's cache (see the module's documentation).
#[derive(Default)]
pub(crate) struct ResultCache {
    state: Mutex<State>,
}

/// What a request that may be cached takes before it is sent, and gives
/// back with its reply: the invalidations seen so far.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ticket {
    kind: Invalidation,
    method: &'static str,
    generation: u64,
}

/// The caching hints of a result (2026-07-28).
#[derive(Deserialize)]
struct Hints {
    #[serde(rename = "ttlMs", default)]
    ttl_ms: Option<f64>,
}

#[derive(Deserialize)]
struct Response {
    #[serde(default)]
    result: Option<Hints>,
}

impl ResultCache {
    fn state(&self) -> MutexGuard<'_, State> {
        // Consistent after every statement.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The fresh reply kept for `method` with `params` (their JSON text),
    /// if there is one; a stale one is dropped.
    pub(crate) fn get(&self, method: &'static str, params: &str) -> Option<Bytes> {
        let mut state = self.state();
        let key = (method, params.to_owned());
        let entry = state.entries.get(&key)?;
        if Instant::now() < entry.fresh_until {
            return Some(entry.reply.clone());
        }
        if let Some(stale) = state.entries.remove(&key) {
            state.bytes -= stale.reply.len();
        }
        None
    }

    /// The ticket of a request of `method` about to be sent; `None` when
    /// its results are never cached.
    pub(crate) fn ticket(&self, method: &'static str) -> Option<Ticket> {
        let kind = Invalidation::of(method)?;
        let generation = self.state().generations[kind.index()];
        Some(Ticket {
            kind,
            method,
            generation,
        })
    }

    /// Keeps `reply` to the request of `ticket` with `params` for as long
    /// as its `ttlMs` says, unless the TTL is missing, zero or negative, it
    /// is no result, its kind was invalidated meanwhile, or it does not fit.
    pub(crate) fn store(&self, ticket: Ticket, params: &str, uri: Option<&str>, reply: &Bytes) {
        let Some(ttl) = ttl_of(reply) else {
            return;
        };
        if reply.len() > MAX_ENTRY_BYTES {
            return;
        }
        let now = Instant::now();
        let mut state = self.state();
        if state.generations[ticket.kind.index()] != ticket.generation {
            return; // the result changed while this reply was on its way
        }
        let key = (ticket.method, params.to_owned());
        if let Some(old) = state.entries.remove(&key) {
            state.bytes -= old.reply.len();
        }
        if state.entries.len() >= MAX_ENTRIES || state.bytes + reply.len() > MAX_BYTES {
            state.drop_expired(now);
        }
        if state.entries.len() >= MAX_ENTRIES || state.bytes + reply.len() > MAX_BYTES {
            tracing::debug!(
                method = ticket.method,
                "mcp: the result cache is full; not keeping a result"
            );
            return;
        }
        state.bytes += reply.len();
        state.entries.insert(
            key,
            Entry {
                reply: reply.clone(),
                fresh_until: now + ttl,
                uri: uri.map(str::to_owned),
            },
        );
    }

    /// Drops what `notification` says has changed.
    pub(crate) fn invalidate(&self, notification: &ServerNotification) {
        let (kind, uri) = match notification {
            ServerNotification::ToolsListChanged => (Invalidation::Tools, None),
            ServerNotification::PromptsListChanged => (Invalidation::Prompts, None),
            ServerNotification::ResourcesListChanged => (Invalidation::ResourceLists, None),
            ServerNotification::ResourceUpdated { uri } => {
                (Invalidation::Reads, Some(uri.as_str()))
            }
            _ => return,
        };
        let mut state = self.state();
        state.generations[kind.index()] += 1;
        let before = state.entries.len();
        let mut freed = 0;
        state.entries.retain(|(method, _), entry| {
            let keep = Invalidation::of(method) != Some(kind)
                || (uri.is_some() && entry.uri.as_deref() != uri);
            if !keep {
                freed += entry.reply.len();
            }
            keep
        });
        state.bytes -= freed;
        if state.entries.len() != before {
            tracing::debug!(?kind, "mcp: a change notification dropped cached results");
        }
    }

    /// Drops everything kept: the server was restarted, and what the old
    /// one answered says nothing of the new one.
    pub(crate) fn clear(&self) {
        let mut state = self.state();
        for generation in &mut state.generations {
            *generation += 1;
        }
        state.entries.clear();
        state.bytes = 0;
    }

    /// Until when every kept page of list `method` is fresh: the earliest
    /// expiry among them; `None` when none is kept (the server gave no TTL,
    /// the list changed, or it was never fetched).
    pub(crate) fn fresh_until(&self, method: &str) -> Option<Instant> {
        let state = self.state();
        state
            .entries
            .iter()
            .filter(|((kept, _), _)| *kept == method)
            .map(|(_, entry)| entry.fresh_until)
            .min()
    }
}

impl State {
    fn drop_expired(&mut self, now: Instant) {
        let mut freed = 0;
        self.entries.retain(|_, entry| {
            let fresh = now < entry.fresh_until;
            if !fresh {
                freed += entry.reply.len();
            }
            fresh
        });
        self.bytes -= freed;
    }
}

/// How long a reply says its result is fresh: `None` for no, zero or a
/// negative TTL (all "immediately stale"), or a reply that is no result.
fn ttl_of(reply: &[u8]) -> Option<Duration> {
    let Ok(Response {
        result: Some(Hints {
            ttl_ms: Some(ttl_ms),
        }),
    }) = serde_json::from_slice::<Response>(reply)
    else {
        return None;
    };
    if !(ttl_ms.is_finite() && ttl_ms >= 1.0) {
        return None;
    }
    Some(Duration::from_millis(ttl_ms as u64).min(MAX_TTL))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(ttl: &str) -> Bytes {
        Bytes::from(format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[],"ttlMs":{ttl},"cacheScope":"private"}}}}"#
        ))
    }

    fn stored(cache: &ResultCache, method: &'static str, params: &str, ttl: &str) {
        let ticket = cache.ticket(method).expect("cacheable");
        cache.store(ticket, params, None, &reply(ttl));
    }

    #[test]
    fn a_positive_ttl_keeps_a_result_and_none_zero_or_negative_does_not() {
        let cache = ResultCache::default();
        stored(&cache, "tools/list", "{}", "60000");
        assert!(cache.get("tools/list", "{}").is_some());
        for ttl in ["0", "-5", "null", "0.5"] {
            stored(&cache, "prompts/list", ttl, ttl);
            assert!(cache.get("prompts/list", ttl).is_none(), "{ttl}");
        }
        let ticket = cache.ticket("tools/list").expect("cacheable");
        cache.store(
            ticket,
            "no-ttl",
            None,
            &Bytes::from_static(br#"{"id":1,"result":{}}"#),
        );
        assert!(cache.get("tools/list", "no-ttl").is_none());
        let ticket = cache.ticket("tools/list").expect("cacheable");
        cache.store(
            ticket,
            "error",
            None,
            &Bytes::from_static(br#"{"id":1,"error":{"code":1,"message":"x","ttlMs":5000}}"#),
        );
        assert!(cache.get("tools/list", "error").is_none());
    }

    #[test]
    fn the_key_is_the_method_and_its_parameters() {
        let cache = ResultCache::default();
        stored(&cache, "tools/list", r#"{"cursor":"b"}"#, "60000");
        assert!(cache.get("tools/list", "{}").is_none());
        assert!(cache.get("prompts/list", r#"{"cursor":"b"}"#).is_none());
        assert!(cache.get("tools/list", r#"{"cursor":"b"}"#).is_some());
        assert!(cache.ticket("tools/call").is_none());
    }

    #[test]
    fn a_notification_drops_its_kind_only_and_a_reply_on_its_way_is_not_kept() {
        let cache = ResultCache::default();
        stored(&cache, "tools/list", "{}", "60000");
        stored(&cache, "prompts/list", "{}", "60000");
        let ticket = cache.ticket("resources/read").expect("cacheable");
        cache.store(ticket, "a", Some("x:a"), &reply("60000"));
        let ticket = cache.ticket("resources/read").expect("cacheable");
        cache.store(ticket, "b", Some("x:b"), &reply("60000"));
        let in_flight = cache.ticket("tools/list").expect("cacheable");
        cache.invalidate(&ServerNotification::ToolsListChanged);
        assert!(cache.get("tools/list", "{}").is_none());
        assert!(cache.get("prompts/list", "{}").is_some());
        cache.store(in_flight, "{}", None, &reply("60000"));
        assert!(
            cache.get("tools/list", "{}").is_none(),
            "sent before the change"
        );
        cache.invalidate(&ServerNotification::ResourceUpdated { uri: "x:a".into() });
        assert!(cache.get("resources/read", "a").is_none());
        assert!(cache.get("resources/read", "b").is_some());
    }

    #[test]
    fn the_cache_is_bounded_in_entries_and_bytes() {
        let cache = ResultCache::default();
        for index in 0..MAX_ENTRIES + 10 {
            stored(&cache, "resources/read", &index.to_string(), "60000");
        }
        assert_eq!(cache.state().entries.len(), MAX_ENTRIES);
        let big = Bytes::from(format!(
            r#"{{"result":{{"ttlMs":60000,"x":"{}"}}}}"#,
            "a".repeat(MAX_ENTRY_BYTES)
        ));
        let ticket = cache.ticket("tools/list").expect("cacheable");
        cache.store(ticket, "big", None, &big);
        assert!(cache.get("tools/list", "big").is_none());
        assert!(cache.state().bytes <= MAX_BYTES);
    }
}
