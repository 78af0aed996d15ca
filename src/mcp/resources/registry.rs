//! The live resource subscriptions, by token: how many each token holds (at most
//! [`MAX_PER_TOKEN`], across its sessions), and the switch that stops each.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rmcp::ErrorData as McpError;
use tokio_util::sync::CancellationToken;

use super::sweep::Sweep;

/// Subscriptions one token may hold at once.
pub const MAX_PER_TOKEN: usize = 16;

/// The subscriptions alive now, by token id.
#[derive(Debug, Default)]
pub struct Registry {
    live: Mutex<HashMap<String, Vec<Entry>>>,
    next: AtomicU64,
    /// Each followed tab's sweep, its last fingerprint and when it was taken: subscriptions of
    /// one tab (its items, other sessions) share a poll instead of each reading CopyQ.
    recent: Mutex<HashMap<String, Followed>>,
    /// Held while a fingerprint is read: subscribers polling at once wait for one read and take
    /// its result, rather than all reading CopyQ (each read is a `copyq` process on the CLI).
    pub(super) polling: tokio::sync::Mutex<()>,
}

/// A followed tab: where its sweep is, and its last fingerprint (`None`: CopyQ was not read).
#[derive(Debug, Clone)]
pub(super) struct Followed {
    pub at: Instant,
    pub fingerprint: Option<u64>,
    pub sweep: Sweep,
}

#[derive(Debug)]
struct Entry {
    id: u64,
    /// The session (or listen request) and the URI it follows.
    key: (String, String),
    /// The tab that URI names, parsed once here rather than at every poll.
    tab: Option<String>,
    stop: CancellationToken,
}

impl Registry {
    /// A new subscription of `key` for `token`, or `None` when that session already follows
    /// that URI; refused past [`MAX_PER_TOKEN`].
    pub(super) fn add(
        &self,
        token: &str,
        key: (String, String),
    ) -> Result<Option<(u64, CancellationToken)>, McpError> {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        let entries = live.entry(token.to_owned()).or_default();
        if entries.iter().any(|e| e.key == key) {
            return Ok(None);
        }
        if entries.len() >= MAX_PER_TOKEN {
            return Err(McpError::invalid_request(
                format!("Too many subscriptions for this token (at most {MAX_PER_TOKEN})"),
                None,
            ));
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let stop = CancellationToken::new();
        entries.push(Entry {
            id,
            tab: super::parse(&key.1).map(|t| t.tab),
            key,
            stop: stop.clone(),
        });
        Ok(Some((id, stop)))
    }

    /// A key of its own for one `subscriptions/listen` request, never given twice: what a
    /// session's id is to `resources/subscribe`.
    pub(super) fn listen_key(&self) -> String {
        format!("listen:{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Stops and forgets `key`'s subscription, if there is one.
    pub(super) fn stop(&self, token: &str, key: &(String, String)) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entries) = live.get_mut(token) {
            entries.retain(|e| {
                let hit = &e.key == key;
                if hit {
                    e.stop.cancel();
                }
                !hit
            });
        }
    }

    /// `tab`'s fingerprint if one was taken less than `fresh` ago.
    pub(super) fn recent(&self, tab: &str, fresh: Duration) -> Option<Option<u64>> {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent
            .get(tab)
            .filter(|f| f.at.elapsed() < fresh)
            .map(|f| f.fingerprint)
    }

    /// `tab`'s sweep as the last poll left it (a new one for a tab not followed lately).
    pub(super) fn sweep(&self, tab: &str) -> Sweep {
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.get(tab).map(|f| f.sweep.clone()).unwrap_or_default()
    }

    /// Keeps `tab`'s sweep and fingerprint, dropping those of tabs that no subscription follows
    /// any more and no poll has asked for within `keep`. A followed tab is never dropped, however
    /// long since its last poll: a subscription polls its tabs one after another, so with many
    /// tabs on a slow backend a round can outlast `keep`, and a sweep begun again would take a
    /// deep change made meanwhile for the tab's first state and never tell it.
    pub(super) fn remember(&self, tab: &str, followed: Followed, keep: Duration) {
        let live = self.followed_tabs();
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.retain(|t, f| f.at.elapsed() < keep || live.contains(t));
        recent.insert(tab.to_owned(), followed);
    }

    /// The tabs the live subscriptions follow.
    fn followed_tabs(&self) -> HashSet<String> {
        let live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        live.values()
            .flatten()
            .filter_map(|e| e.tab.clone())
            .collect()
    }

    pub(super) fn forget(&self, token: &str, id: u64) {
        let mut live = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entries) = live.get_mut(token) {
            entries.retain(|e| e.id != id);
            if entries.is_empty() {
                live.remove(token);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(session: &str, uri: &str) -> (String, String) {
        (session.into(), uri.into())
    }

    fn followed(fingerprint: u64) -> Followed {
        Followed {
            at: Instant::now(),
            fingerprint: Some(fingerprint),
            sweep: Sweep::default(),
        }
    }

    #[test]
    fn a_followed_tab_keeps_its_sweep_however_long_since_its_last_poll() {
        let registry = Registry::default();
        let (id, _) = registry
            .add("t", key("s", &super::super::tab_uri("mcp/a")))
            .expect("under the bound")
            .expect("new");
        // A `keep` of zero: every entry is older than it, as after a slow round of polls.
        registry.remember("mcp/a", followed(1), Duration::ZERO);
        registry.remember("mcp/b", followed(2), Duration::ZERO);
        assert_eq!(registry.recent("mcp/a", Duration::MAX), Some(Some(1)));
        registry.remember("mcp/a", followed(3), Duration::ZERO);
        assert_eq!(
            registry.recent("mcp/b", Duration::MAX),
            None,
            "a tab nothing follows is dropped once not polled within keep"
        );
        registry.forget("t", id);
        registry.remember("mcp/b", followed(4), Duration::ZERO);
        assert_eq!(
            registry.recent("mcp/a", Duration::MAX),
            None,
            "once its subscription ends, the tab is dropped too"
        );
        assert_eq!(registry.recent("mcp/b", Duration::MAX), Some(Some(4)));
    }

    #[test]
    fn a_token_holds_at_most_the_bound_across_sessions_and_gets_them_back() {
        let registry = Registry::default();
        let mut ids = Vec::new();
        for i in 0..MAX_PER_TOKEN {
            let session = if i % 2 == 0 { "s1" } else { "s2" };
            let added = registry
                .add("t", key(session, &format!("u{i}")))
                .expect("under the bound");
            ids.push(added.expect("new").0);
        }
        let refused = registry
            .add("t", key("s3", "u"))
            .expect_err("over the bound");
        assert_eq!(
            refused.message,
            format!("Too many subscriptions for this token (at most {MAX_PER_TOKEN})")
        );
        // Another token is not bounded by this one's; the same subscription again is no new one.
        assert!(
            registry
                .add("other", key("s3", "u"))
                .expect("own bound")
                .is_some()
        );
        assert!(registry.add("t", key("s1", "u0")).expect("known").is_none());
        registry.forget("t", ids[0]);
        assert!(
            registry
                .add("t", key("s3", "u"))
                .expect("one freed")
                .is_some()
        );
    }

    #[test]
    fn two_listens_of_one_uri_by_one_token_are_two_subscriptions() {
        let registry = Registry::default();
        let uri = super::super::tab_uri("mcp/a");
        let (one, two) = (registry.listen_key(), registry.listen_key());
        assert_ne!(one, two);
        assert!(registry.add("t", key(&one, &uri)).expect("add").is_some());
        assert!(registry.add("t", key(&two, &uri)).expect("add").is_some());
    }

    #[test]
    fn stop_cancels_that_subscription_alone() {
        let registry = Registry::default();
        let (_, first) = registry.add("t", key("s", "a")).expect("add").expect("new");
        let (_, second) = registry.add("t", key("s", "b")).expect("add").expect("new");
        registry.stop("t", &key("s", "a"));
        assert!(first.is_cancelled() && !second.is_cancelled());
    }
}
