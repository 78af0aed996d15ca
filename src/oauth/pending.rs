//! Open consent requests, kept in memory (a restart just means the owner starts again from the
//! app), and shared so that nobody can crowd the owner out:
//!
//! - one address holds at most [`MAX_PER_ADDRESS`] of the [`MAX_PENDING`] places, and one app at
//!   most [`MAX_PER_CLIENT`] of them from one address; past either, that address's own oldest
//!   request goes (never someone else's);
//! - when every place is taken, a stranger's new request is refused, but the owner's is never:
//!   it takes the place of the oldest request of the address holding the most. The owner is a
//!   request from `127.0.0.1` or `::1` (a browser on the gateway's machine) or from an address
//!   the owner's passphrase was accepted from within [`OWNER_MEMORY`].
//!
//! So strangers need [`MAX_PENDING`] / [`MAX_PER_ADDRESS`] addresses to fill the places, and even
//! then cannot make the owner's request fail. What no rule can tell apart is a stranger on the
//! owner's own address (another local process on 127.0.0.1): it shares that address's places.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use super::ClientLabel;

/// An authorization request waiting for the owner's consent.
#[derive(Debug, Clone)]
pub(crate) struct Pending {
    pub client_id: String,
    pub client: ClientLabel,
    /// The base URL the client used (the issuer it was shown, the `iss` it gets back).
    pub issuer: String,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub challenge: String,
    pub csrf: String,
    pub created: Instant,
    /// The per-address key of the client that opened it.
    pub addr: String,
    /// For a metadata-document client not yet recorded: its redirect URIs, recorded with it only
    /// once the owner approves.
    pub document: Option<Vec<String>>,
}

/// How long a consent page stays valid.
pub const PENDING_TTL: Duration = Duration::from_secs(10 * 60);
/// Open consent requests at most.
pub const MAX_PENDING: usize = 1024;
/// Open consent requests one address may hold: 1/64 of [`MAX_PENDING`].
pub const MAX_PER_ADDRESS: usize = 16;
/// Open consent requests one app may hold from one address.
pub const MAX_PER_CLIENT: usize = 4;
/// How long an address the owner approved from counts as the owner's.
pub const OWNER_MEMORY: Duration = Duration::from_secs(30 * 24 * 3600);
/// Owner addresses remembered at most (the oldest is forgotten first).
const MAX_OWNER_ADDRESSES: usize = 32;

/// The open requests by id, and the addresses the owner approved from.
#[derive(Debug, Default)]
pub(crate) struct Requests {
    open: HashMap<String, Pending>,
    owners: HashMap<String, Instant>,
}

impl Requests {
    /// Forget requests past [`PENDING_TTL`].
    pub fn expire(&mut self) {
        self.open.retain(|_, p| p.created.elapsed() < PENDING_TTL);
    }

    pub fn get(&self, id: &str) -> Option<&Pending> {
        self.open.get(id)
    }

    pub fn remove(&mut self, id: &str) -> Option<Pending> {
        self.open.remove(id)
    }

    /// Whether a request from `ip` (keyed `key`) is the owner's.
    pub fn is_owner(&self, ip: IpAddr, key: &str) -> bool {
        let local =
            ip == IpAddr::from([127, 0, 0, 1]) || ip == IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]);
        local
            || self
                .owners
                .get(key)
                .is_some_and(|t| t.elapsed() < OWNER_MEMORY)
    }

    /// The owner's passphrase was accepted from `key`.
    pub fn approved_from(&mut self, key: &str) {
        self.owners.insert(key.to_owned(), Instant::now());
        if self.owners.len() > MAX_OWNER_ADDRESSES
            && let Some(oldest) = self
                .owners
                .iter()
                .min_by_key(|(_, t)| **t)
                .map(|(k, _)| k.clone())
        {
            self.owners.remove(&oldest);
        }
    }

    /// Keep `p` under `id`, within the shares above; `false` when it was refused (a stranger's
    /// request with every place taken).
    pub fn open(&mut self, id: String, p: Pending, owner: bool) -> bool {
        self.expire();
        self.drop_oldest_beyond(MAX_PER_CLIENT, |q| {
            q.addr == p.addr && q.client_id == p.client_id
        });
        self.drop_oldest_beyond(MAX_PER_ADDRESS, |q| q.addr == p.addr);
        if self.open.len() >= MAX_PENDING {
            if !owner {
                return false;
            }
            self.make_room();
        }
        self.open.insert(id, p);
        true
    }

    /// Drop the oldest of the requests matching `mine` until one more fits under `cap`.
    fn drop_oldest_beyond(&mut self, cap: usize, mine: impl Fn(&Pending) -> bool) {
        let mut matching: Vec<(String, Instant)> = self
            .open
            .iter()
            .filter(|(_, q)| mine(q))
            .map(|(k, q)| (k.clone(), q.created))
            .collect();
        matching.sort_by_key(|(_, created)| *created);
        let excess = (matching.len() + 1).saturating_sub(cap);
        for (k, _) in matching.into_iter().take(excess) {
            self.open.remove(&k);
        }
    }

    /// One place for the owner: the oldest request of the address holding the most goes.
    fn make_room(&mut self) {
        let mut held: HashMap<&str, usize> = HashMap::new();
        for q in self.open.values() {
            *held.entry(q.addr.as_str()).or_default() += 1;
        }
        let Some((biggest, n)) = held
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(a, n)| (a.to_owned(), n))
        else {
            return;
        };
        // Room for one more of `biggest` under `n` means one of its own goes.
        self.drop_oldest_beyond(n, |q| q.addr == biggest);
    }

    #[cfg(test)]
    fn held_by(&self, addr: &str) -> usize {
        self.open.values().filter(|q| q.addr == addr).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(addr: &str, client: &str) -> Pending {
        Pending {
            client_id: client.into(),
            client: ClientLabel::SelfNamed { name: "x".into() },
            issuer: String::new(),
            redirect_uri: String::new(),
            state: None,
            challenge: String::new(),
            csrf: String::new(),
            created: Instant::now(),
            addr: addr.into(),
            document: None,
        }
    }

    #[test]
    fn one_address_holds_a_share_and_loses_only_its_own() {
        let mut r = Requests::default();
        assert!(r.open("first".into(), request("192.0.2.1", "a"), false));
        for i in 0..100 {
            let client = format!("c{i}");
            assert!(r.open(format!("s{i}"), request("203.0.113.9", &client), false));
        }
        assert_eq!(r.held_by("203.0.113.9"), MAX_PER_ADDRESS);
        assert!(
            r.get("first").is_some(),
            "another address keeps its request"
        );
        // One app from one address: its own oldest goes; the same app elsewhere is untouched.
        for i in 0..10 {
            assert!(r.open(format!("a{i}"), request("203.0.113.7", "a"), false));
        }
        assert_eq!(r.held_by("203.0.113.7"), MAX_PER_CLIENT);
        assert!(r.get("first").is_some());
    }

    #[test]
    fn the_owner_is_never_refused_when_strangers_hold_every_place() {
        let mut r = Requests::default();
        let mut n = 0;
        for a in 0..(MAX_PENDING / MAX_PER_ADDRESS + 10) {
            for c in 0..MAX_PER_ADDRESS {
                n += 1;
                r.open(
                    format!("{n}"),
                    request(&format!("10.0.{a}.1"), &format!("c{c}")),
                    false,
                );
            }
        }
        assert_eq!(r.open.len(), MAX_PENDING);
        assert!(
            !r.open("late".into(), request("10.9.9.9", "c"), false),
            "a stranger"
        );
        let loopback = IpAddr::from([127, 0, 0, 1]);
        assert!(r.is_owner(loopback, "127.0.0.1"));
        assert!(!r.is_owner(IpAddr::from([127, 0, 0, 2]), "127.0.0.2"));
        assert!(r.open("owner".into(), request("127.0.0.1", "c"), true));
        assert!(r.get("owner").is_some());
        assert_eq!(r.open.len(), MAX_PENDING);
        // An address the owner approved from is the owner's too.
        let away: IpAddr = "198.51.100.4".parse().unwrap();
        assert!(!r.is_owner(away, "198.51.100.4"));
        r.approved_from("198.51.100.4");
        assert!(r.is_owner(away, "198.51.100.4"));
        assert!(r.open("away".into(), request("198.51.100.4", "c"), true));
        assert!(r.get("owner").is_some() && r.get("away").is_some());
    }
}
