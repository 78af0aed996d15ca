//! Limits shared by the HTTP guards and the OAuth endpoints: a token bucket per key, and the
//! address a request comes from (the key of the limits that protect unauthenticated routes).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The address of the client a request comes from: the TCP peer, or, when that peer is a trusted
/// proxy, the address the proxy names (`server.trusted_proxies`). Put on every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr {
    pub ip: IpAddr,
    /// The IPv6 prefix length that counts as one client (`limits.ipv6_prefix`).
    pub v6_prefix: u8,
}

/// One host commonly holds a whole /64: the default of `limits.ipv6_prefix`.
pub const DEFAULT_V6_PREFIX: u8 = 64;

impl ClientAddr {
    pub fn new(ip: IpAddr) -> Self {
        Self {
            ip,
            v6_prefix: DEFAULT_V6_PREFIX,
        }
    }

    /// Whether the client is on this machine: any loopback address, IPv4-mapped ones included.
    pub fn is_loopback(&self) -> bool {
        self.ip.to_canonical().is_loopback()
    }

    /// The key of per-address limits: an IPv6 client is keyed by its prefix (a /64 by default),
    /// since one host commonly holds a whole /64 and could otherwise be thousands of clients.
    pub fn key(&self) -> String {
        address_key(self.ip, self.v6_prefix)
    }
}

/// `ip` as the per-address limits count it: an IPv4 address itself, an IPv6 one by its first
/// `v6_prefix` bits (an IPv4-mapped one as the IPv4 address it carries).
pub fn address_key(ip: IpAddr, v6_prefix: u8) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let prefix = v6_prefix.min(128);
                let bits = u128::from(v6);
                let mask = u128::MAX.checked_shl(u32::from(128 - prefix)).unwrap_or(0);
                format!("{}/{prefix}", std::net::Ipv6Addr::from(bits & mask))
            }
        },
    }
}

/// Addresses or CIDRs (`server.trusted_proxies`) as networks; the error names the first bad one.
pub fn parse_nets(entries: &[String]) -> Result<Vec<ipnet::IpNet>, String> {
    entries
        .iter()
        .map(|e| {
            e.parse::<ipnet::IpNet>()
                .or_else(|_| e.parse::<IpAddr>().map(ipnet::IpNet::from))
                .map_err(|_| format!("'{e}' is not an address or CIDR"))
        })
        .collect()
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

    /// A bucket of bytes rather than requests: `per_hour` bytes an hour, `burst` at once.
    pub fn bytes_per_hour(per_hour: u64, burst: u64) -> Self {
        Self {
            per_minute: (per_hour.max(1) as f64) / 60.0,
            burst: (burst.max(1)) as f64,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// `Ok` to go ahead, or how long to wait.
    pub fn take(&self, key: &str, now: Instant) -> Result<(), Duration> {
        self.take_n(key, 1.0, now)
    }

    /// `n` units at once (at most a whole burst): `Ok`, or how long to wait for them.
    pub fn take_n(&self, key: &str, n: f64, now: Instant) -> Result<(), Duration> {
        let n = n.min(self.burst);
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
        if *tokens >= n {
            *tokens -= n;
            Ok(())
        } else {
            Err(Duration::from_secs_f64(
                (n - *tokens) * 60.0 / self.per_minute,
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
    fn byte_buckets() {
        let l = RateLimiter::bytes_per_hour(3600, 1000);
        let t = Instant::now();
        assert!(l.take_n("a", 600.0, t).is_ok());
        let wait = l.take_n("a", 600.0, t).unwrap_err();
        assert_eq!(wait.as_secs(), 200, "200 bytes short, at one a second");
        assert!(l.take_n("b", 600.0, t).is_ok(), "another key");
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
    fn ipv6_clients_are_keyed_by_their_prefix() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(ClientAddr::new(a).key(), ClientAddr::new(b).key());
        assert_eq!(ClientAddr::new(a).key(), "2001:db8:1:2::/64");
        assert_ne!(ClientAddr::new(a).key(), ClientAddr::new(c).key());
        assert_eq!(address_key(a, 48), address_key(c, 48));
        assert_eq!(address_key(a, 128), "2001:db8:1:2:aaaa::1/128");
        assert_eq!(
            ClientAddr::new("10.0.0.7".parse().unwrap()).key(),
            "10.0.0.7"
        );
        assert_eq!(
            address_key("::ffff:10.0.0.7".parse().unwrap(), 64),
            "10.0.0.7"
        );
    }
}
