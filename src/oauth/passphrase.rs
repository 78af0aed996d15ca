//! The owner's passphrase: stored only as an Argon2id hash, checked in constant time, with wrong
//! guesses slowed down (after a few failures each further try waits twice as long, up to 15 min).
//!
//! [`Guesses`] shapes the checks so that they cannot be raced or turned against the owner: a try
//! is counted as wrong *before* its hash is computed (32 parallel guesses get 5 checks, not 32);
//! few hashes run at once, in working memory allocated once ([`memory`]); and the backoff is kept
//! per client address and per consent request, so a stranger's wrong guesses do not lock the
//! owner out of their own consent page.
//!
//! Per-address backoff alone is lifted by whoever can choose their address: behind a tunnel on
//! 127.0.0.1 (a trusted proxy), any local process names a fresh `X-Forwarded-For` for each guess.
//! So hashes also have a ceiling an hour, in two buckets: the owner's (requests from 127.0.0.1 or
//! ::1 themselves, or from an address the passphrase was accepted from) and everyone else's, each
//! [`HASHES_PER_HOUR`] ([`HASH_BURST`] at once). Strangers using up theirs cannot touch the
//! owner's; the price is that under a sustained guessing attack a first approval from a new
//! address waits with the strangers, while the gateway's own machine and known addresses do not.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

mod memory;
pub use memory::Pool;

use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

/// Shortest passphrase accepted.
pub const MIN_CHARS: usize = 8;
const FREE_TRIES: u32 = 5;
const MAX_LOCKOUT: Duration = Duration::from_secs(15 * 60);

pub fn hash(passphrase: &str) -> Result<String, String> {
    if passphrase.chars().count() < MIN_CHARS {
        return Err(format!(
            "the passphrase must have at least {MIN_CHARS} characters"
        ));
    }
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    let salt = SaltString::encode_b64(&bytes).map_err(|e| e.to_string())?;
    Argon2::default()
        .hash_password(passphrase.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

pub fn verify(passphrase: &str, phc: &str) -> bool {
    PasswordHash::new(phc).is_ok_and(|h| {
        Argon2::default()
            .verify_password(passphrase.as_bytes(), &h)
            .is_ok()
    })
}

/// Consecutive wrong passphrases, and when trying is allowed again.
#[derive(Debug, Default)]
pub struct Limiter {
    failures: u32,
    blocked_until: Option<Instant>,
}

impl Limiter {
    /// How long to wait before the next try is allowed, if any.
    pub fn wait(&self, now: Instant) -> Option<Duration> {
        self.blocked_until
            .and_then(|t| t.checked_duration_since(now))
            .filter(|d| !d.is_zero())
    }

    pub fn failed(&mut self, now: Instant) {
        self.failures = self.failures.saturating_add(1);
        if self.failures >= FREE_TRIES {
            let exp = (self.failures - FREE_TRIES).min(16);
            let wait = Duration::from_secs(1u64 << exp).min(MAX_LOCKOUT);
            self.blocked_until = Some(now + wait);
        }
    }

    pub fn succeeded(&mut self) {
        *self = Self::default();
    }
}

/// Wrong passphrases one consent request may take before it is discarded.
pub const TRIES_PER_REQUEST: u32 = 5;
/// Passphrase hashes computed at once: bounds their memory to about 2 x 19 MiB.
const CONCURRENT_CHECKS: usize = 2;
/// Passphrase hashes an hour, for the owner and for everyone else (each its own bucket).
pub const HASHES_PER_HOUR: u32 = 60;
/// Of which at once.
pub const HASH_BURST: u32 = 20;
/// How long a try waits for a free hashing slot before the page says "busy".
const CHECK_QUEUE_WAIT: Duration = Duration::from_secs(10);
/// Backoff entries kept at most before forgiven ones are dropped.
const MAX_KEYS: usize = 10_000;

/// Backoff per key (`ip:...`, `req:...`), and the hashing slots.
#[derive(Debug)]
pub struct Guesses {
    keys: Mutex<HashMap<String, (Limiter, Instant)>>,
    checks: Arc<Semaphore>,
    /// The hourly ceiling: keys `owner` and `others`.
    hourly: crate::limit::RateLimiter,
    memory: Arc<Pool>,
}

impl Default for Guesses {
    fn default() -> Self {
        Self {
            keys: Mutex::new(HashMap::new()),
            checks: Arc::new(Semaphore::new(CONCURRENT_CHECKS)),
            hourly: crate::limit::RateLimiter::per_hour(HASHES_PER_HOUR, HASH_BURST),
            memory: Arc::default(),
        }
    }
}

/// Why a try was not made.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// Wait this long (backoff of this address or request).
    Wait(Duration),
    /// No hashing slot came free in time.
    Busy,
    /// The hourly ceiling of hashes is reached; wait this long.
    Ceiling(Duration),
}

/// A try in progress: counted as wrong until [`Try::succeeded`].
#[derive(Debug)]
pub struct Try<'a> {
    guesses: &'a Guesses,
    keys: Vec<String>,
    /// How many wrong tries each key has had, this one included.
    pub failures: u32,
    _slot: OwnedSemaphorePermit,
}

impl Guesses {
    fn keys(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Limiter, Instant)>> {
        self.keys.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The working memory the checks share.
    pub fn memory(&self) -> Arc<Pool> {
        self.memory.clone()
    }

    /// Start a try for `keys` (from the owner's address or not): refused while any of them backs
    /// off or the hourly ceiling is reached; else counted as a failure of each at once, then given
    /// a hashing slot.
    pub async fn begin(&self, keys: &[String], owner: bool) -> Result<Try<'_>, Refused> {
        let failures = {
            let now = Instant::now();
            let mut map = self.keys();
            if map.len() > MAX_KEYS {
                map.retain(|_, (l, last)| l.wait(now).is_some() || last.elapsed() < MAX_LOCKOUT);
            }
            if let Some(wait) = keys
                .iter()
                .filter_map(|k| map.get(k).and_then(|(l, _)| l.wait(now)))
                .max()
            {
                return Err(Refused::Wait(wait));
            }
            let bucket = if owner { "owner" } else { "others" };
            self.hourly.take(bucket, now).map_err(Refused::Ceiling)?;
            keys.iter()
                .map(|k| {
                    let (l, last) = map.entry(k.clone()).or_insert((Limiter::default(), now));
                    l.failed(now);
                    *last = now;
                    l.failures
                })
                .max()
                .unwrap_or(0)
        };
        let slot = tokio::time::timeout(CHECK_QUEUE_WAIT, self.checks.clone().acquire_owned())
            .await
            .ok()
            .and_then(Result::ok)
            .ok_or(Refused::Busy)?;
        Ok(Try {
            guesses: self,
            keys: keys.to_vec(),
            failures,
            _slot: slot,
        })
    }
}

impl Try<'_> {
    /// The passphrase was right: forget the failures of every key.
    pub fn succeeded(self) {
        let mut map = self.guesses.keys();
        for k in &self.keys {
            map.remove(k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_differ() {
        let h = hash("correct horse battery").unwrap();
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("correct horse battery", &h));
        assert!(!verify("correct horse batterY", &h));
        assert_ne!(h, hash("correct horse battery").unwrap(), "salted");
        assert_eq!(
            hash("short"),
            Err("the passphrase must have at least 8 characters".into())
        );
        assert!(!verify("x", "not a hash"));
    }

    #[test]
    fn wrong_guesses_back_off() {
        let mut l = Limiter::default();
        let t = Instant::now();
        for _ in 0..4 {
            l.failed(t);
            assert_eq!(l.wait(t), None);
        }
        l.failed(t);
        assert_eq!(l.wait(t), Some(Duration::from_secs(1)));
        l.failed(t);
        assert_eq!(l.wait(t), Some(Duration::from_secs(2)));
        for _ in 0..30 {
            l.failed(t);
        }
        assert_eq!(l.wait(t), Some(MAX_LOCKOUT));
        l.succeeded();
        assert_eq!(l.wait(t), None);
    }

    #[tokio::test]
    async fn a_try_counts_as_wrong_before_its_hash_is_checked() {
        let g = Guesses::default();
        let keys = ["ip:192.0.2.1".to_owned()];
        // Tries that are still running already count: the sixth is refused, without any check
        // having finished (as 32 parallel guesses would be).
        let mut running = Vec::new();
        for n in 1..=FREE_TRIES {
            match g.begin(&keys, false).await {
                Ok(t) => {
                    assert_eq!(t.failures, n);
                    running.push(t.failures);
                    drop(t);
                }
                Err(e) => panic!("try {n} refused: {e:?}"),
            }
        }
        assert!(matches!(g.begin(&keys, false).await, Err(Refused::Wait(_))));
        // Another address is not affected.
        assert!(g.begin(&["ip:192.0.2.2".to_owned()], false).await.is_ok());
    }

    #[tokio::test]
    async fn success_forgives_and_other_keys_stay_free() {
        let g = Guesses::default();
        let owner = ["ip:192.0.2.10".to_owned(), "req:owner".to_owned()];
        for _ in 0..3 {
            drop(g.begin(&owner, false).await.unwrap());
        }
        g.begin(&owner, false).await.unwrap().succeeded();
        assert_eq!(g.begin(&owner, false).await.unwrap().failures, 1);
        // A stranger locking their own address out leaves the owner's keys free.
        let stranger = ["ip:203.0.113.5".to_owned(), "req:stranger".to_owned()];
        for _ in 0..FREE_TRIES {
            drop(g.begin(&stranger, false).await.unwrap());
        }
        assert!(g.begin(&stranger, false).await.is_err());
        assert!(g.begin(&owner, false).await.is_ok());
    }

    #[tokio::test]
    async fn a_ceiling_an_hour_that_new_addresses_cannot_lift_and_that_spares_the_owner() {
        let g = Guesses::default();
        for i in 0..HASH_BURST {
            drop(
                g.begin(&[format!("ip:203.0.113.{i}")], false)
                    .await
                    .unwrap(),
            );
        }
        let refused = g.begin(&["ip:198.51.100.1".to_owned()], false).await;
        assert!(matches!(refused, Err(Refused::Ceiling(_))), "{refused:?}");
        assert!(g.begin(&["ip:127.0.0.1".to_owned()], true).await.is_ok());
    }

    #[tokio::test]
    async fn few_hashes_run_at_once() {
        let g = Guesses::default();
        let held: Vec<_> = futures_hold(&g, CONCURRENT_CHECKS).await;
        assert_eq!(g.checks.available_permits(), 0);
        drop(held);
        assert_eq!(g.checks.available_permits(), CONCURRENT_CHECKS);
    }

    async fn futures_hold(g: &Guesses, n: usize) -> Vec<Try<'_>> {
        let mut held = Vec::new();
        for i in 0..n {
            held.push(
                g.begin(&[format!("ip:198.51.100.{i}")], false)
                    .await
                    .unwrap(),
            );
        }
        held
    }
}
