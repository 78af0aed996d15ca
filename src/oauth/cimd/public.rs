//! The SSRF guard of the document fetch: a resolver that hands the connector public addresses
//! only, and what "public" means for IPv4 and IPv6 (with the IPv6 forms that carry an IPv4
//! address judged by that address).

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};

use hyper_util::client::legacy::connect::dns::Name;

/// Resolves names to public addresses only, so that the address checked is the one connected to.
#[derive(Debug, Clone)]
pub(super) struct PublicOnly {
    pub(super) allow_private: bool,
}

type Resolving =
    Pin<Box<dyn Future<Output = std::io::Result<std::vec::IntoIter<SocketAddr>>> + Send>>;

impl tower::Service<Name> for PublicOnly {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Resolving;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 443))
                .await?
                .collect();
            let public: Vec<SocketAddr> = found
                .into_iter()
                .filter(|a| allow_private || is_public(a.ip()))
                .collect();
            if public.is_empty() {
                return Err(std::io::Error::other(
                    "the name resolves to no public address",
                ));
            }
            Ok(public.into_iter())
        })
    }
}

/// The IANA IPv4 Special-Purpose Address Registry (RFC 6890 and its updates, as of 2025), with
/// multicast (224.0.0.0/4, the multicast registry) and limited broadcast: none of these serves a
/// client's document. The few entries the registry marks globally reachable (anycast services
/// such as AS112 and AMT relays) are refused too: they host no documents.
const SPECIAL_V4: &[(&str, &str)] = &[
    ("0.0.0.0/8", "this network"),
    ("10.0.0.0/8", "private use"),
    ("100.64.0.0/10", "shared address space (CGNAT)"),
    ("127.0.0.0/8", "loopback"),
    ("169.254.0.0/16", "link local"),
    ("172.16.0.0/12", "private use"),
    ("192.0.0.0/24", "IETF protocol assignments"),
    ("192.0.2.0/24", "documentation (TEST-NET-1)"),
    ("192.31.196.0/24", "AS112-v4"),
    ("192.52.193.0/24", "AMT"),
    ("192.88.99.0/24", "deprecated 6to4 relay anycast"),
    ("192.168.0.0/16", "private use"),
    ("192.175.48.0/24", "direct delegation AS112 service"),
    ("198.18.0.0/15", "benchmarking"),
    ("198.51.100.0/24", "documentation (TEST-NET-2)"),
    ("203.0.113.0/24", "documentation (TEST-NET-3)"),
    ("224.0.0.0/4", "multicast"),
    ("240.0.0.0/4", "reserved"),
    ("255.255.255.255/32", "limited broadcast"),
];

/// The IANA IPv6 Special-Purpose Address Registry (as of 2025), with what the IPv6 address space
/// registry does not assign to global unicast: only 2000::/3 is public at all, so everything
/// outside it (loopback, unspecified, IPv4-compatible, discard-only 100::/64, 5f00::/16 SRv6,
/// unique local fc00::/7, site-local fec0::/10, link-local fe80::/10, multicast ff00::/8, the
/// local-use translation prefix 64:ff9b:1::/48) is refused by that rule; these are the special
/// ranges inside 2000::/3. The forms that carry an IPv4 address (mapped, NAT64 64:ff9b::/96,
/// 6to4 2002::/16) are judged by that address instead.
const SPECIAL_V6: &[(&str, &str)] = &[
    (
        "2001::/23",
        "IETF protocol assignments (Teredo, ORCHID, benchmarking, AMT, AS112, ...)",
    ),
    ("2001:db8::/32", "documentation"),
    ("2620:4f:8000::/48", "direct delegation AS112 service"),
    ("3fff::/20", "documentation"),
];

fn nets<N: std::str::FromStr>(table: &[(&str, &str)]) -> Vec<N> {
    table
        .iter()
        .filter_map(|(net, _)| net.parse().ok())
        .collect()
}

fn special_v4() -> &'static [ipnet::Ipv4Net] {
    static NETS: std::sync::LazyLock<Vec<ipnet::Ipv4Net>> =
        std::sync::LazyLock::new(|| nets(SPECIAL_V4));
    &NETS
}

fn special_v6() -> &'static [ipnet::Ipv6Net] {
    static NETS: std::sync::LazyLock<Vec<ipnet::Ipv6Net>> =
        std::sync::LazyLock::new(|| nets(SPECIAL_V6));
    &NETS
}

/// Whether `ip` is a public unicast address: in none of the IANA special-purpose ranges (see
/// [`SPECIAL_V4`], [`SPECIAL_V6`]), nor an IPv6 form of one.
pub(super) fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    !special_v4().iter().any(|net| net.contains(&ip))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    let carried = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return is_public_v4(carried(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return is_public_v4(carried(s[1], s[2]));
    }
    let global_unicast = (s[0] & 0xe000) == 0x2000;
    global_unicast && !special_v6().iter().any(|net| net.contains(&ip))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An address inside each range, by the range's first address and its last.
    fn ends<N: std::str::FromStr + Copy>(table: &[(&str, &str)]) -> Vec<(String, N)> {
        table
            .iter()
            .filter_map(|(n, _)| n.parse().ok().map(|p| (n.to_string(), p)))
            .collect()
    }

    #[test]
    fn every_special_purpose_range_is_refused() {
        assert_eq!(special_v4().len(), SPECIAL_V4.len(), "every entry parses");
        assert_eq!(special_v6().len(), SPECIAL_V6.len(), "every entry parses");
        for (name, net) in ends::<ipnet::Ipv4Net>(SPECIAL_V4) {
            for ip in [net.network(), net.broadcast()] {
                assert!(!is_public(ip.into()), "{name}: {ip}");
            }
        }
        for (name, net) in ends::<ipnet::Ipv6Net>(SPECIAL_V6) {
            for ip in [net.network(), net.broadcast()] {
                assert!(!is_public(ip.into()), "{name}: {ip}");
            }
        }
    }

    #[test]
    fn ipv6_outside_global_unicast_and_carried_ipv4_forms() {
        for private in [
            "::1",
            "::",
            "::127.0.0.1",
            "100::1",
            "100:0:0:1::1",
            "5f00::1",
            "fc00::1",
            "fd00::1",
            "fec0::1",
            "feff::1",
            "fe80::1",
            "ff02::1",
            "64:ff9b:1::a00:1",
            "64:ff9b:1:ffff::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b::c0a8:1",
            "2002:7f00:1::",
            "2002:a00:1::",
            "2001:0:4136:e378::1",
            "2001:2::1",
            "2001:20::1",
            "2001:1::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for public in [
            "2606:4700::1111",
            "2a00:1450:4001::1",
            "64:ff9b::808:808",
            "2002:808:808::1",
            "::ffff:8.8.8.8",
            "2001:200::1",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn public_ipv4_next_to_the_ranges() {
        for public in [
            "1.1.1.1",
            "8.8.8.8",
            "160.79.104.10",
            "11.0.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "172.32.0.1",
            "192.0.1.1",
            "198.20.0.1",
            "223.255.255.254",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }
}
