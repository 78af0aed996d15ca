//! The owner's passphrase: stored only as an Argon2id hash, checked in constant time, with wrong
//! guesses slowed down (after a few failures each further try waits twice as long, up to 15 min).

use std::time::{Duration, Instant};

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
        assert!(hash("short").is_err());
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
}
