//! Limits shared by the HTTP guards and the OAuth endpoints: a token bucket per key, and the
//! address a request comes from (the key of the limits that protect unauthenticated routes).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The address of the client a request comes from: the TCP peer, or, when that peer is a trusted
/// proxy, the address the proxy names (`server.trusted_proxies`). Put on every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub IpAddr);

impl ClientAddr {
    /// The key of per-address limits: an IPv6 client is keyed by its /64, since one host
    /// commonly holds a whole /64.
    pub fn key(&self) -> String {
        match self.0 {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => {
                let s = v6.segments();
                format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        }
    }
}

/// A token bucket per key: `burst` requests at once, refilled at `per_minute`.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    pub fn new(per_minute: u32, burst: u32) -> Self {
        Self::with_rate(f64::from(per_minute), burst)
    }

    /// `per_hour` requests an hour, `burst` at once.
    pub fn per_hour(per_hour: u32, burst: u32) -> Self {
        Self::with_rate(f64::from(per_hour.max(1)) / 60.0, burst)
    }

    fn with_rate(per_minute: f64, burst: u32) -> Self {
        Self {
            per_minute,
            burst: f64::from(burst.max(1)),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// `Ok` to go ahead, or how long to wait.
    pub fn take(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() > 10_000 {
            // Forget buckets that have refilled completely: they hold no information.
            let full = self.burst / (self.per_minute / 60.0);
            buckets.retain(|_, (_, t)| now.duration_since(*t).as_secs_f64() < full);
        }
        let (tokens, last) = buckets.entry(key.to_owned()).or_insert((self.burst, now));
        let refill = now.duration_since(*last).as_secs_f64() * self.per_minute / 60.0;
        *tokens = (*tokens + refill).min(self.burst);
        *last = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (1.0 - *tokens) * 60.0 / self.per_minute,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_per_key_and_refill() {
        let l = RateLimiter::new(60, 2);
        let t = Instant::now();
        assert!(l.take("a", t).is_ok() && l.take("a", t).is_ok());
        let wait = l.take("a", t).unwrap_err();
        assert!(wait <= Duration::from_secs(1) && wait > Duration::ZERO);
        assert!(l.take("b", t).is_ok(), "another key is not affected");
        assert!(l.take("a", t + Duration::from_secs(1)).is_ok(), "refilled");
    }

    #[test]
    fn hourly_buckets() {
        let l = RateLimiter::per_hour(30, 2);
        let t = Instant::now();
        assert!(l.take("a", t).is_ok() && l.take("a", t).is_ok());
        let wait = l.take("a", t).unwrap_err();
        assert_eq!(wait.as_secs(), 120, "one registration every 2 minutes");
    }

    #[test]
    fn ipv6_clients_are_keyed_by_their_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(ClientAddr(a).key(), ClientAddr(b).key());
        assert_eq!(ClientAddr("10.0.0.7".parse().unwrap()).key(), "10.0.0.7");
    }
}
