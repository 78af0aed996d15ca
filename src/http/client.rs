//! Who a request comes from: the TCP peer, or, when that peer is one of `server.trusted_proxies`,
//! the client the proxy names in `X-Forwarded-For`. Only a trusted proxy's word is taken: anyone
//! else could put any address there and escape every per-address limit. It also gives an HTTP/2
//! request the Host header its `:authority` stands for.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, header};

use crate::public::FORWARDED_BASE;
use axum::middleware::Next;
use axum::response::Response;
use ipnet::IpNet;

use crate::limit::ClientAddr;

/// The proxies believed, and how many leading bits of an IPv6 address name one client.
#[derive(Debug, Clone)]
pub struct TrustedProxies {
    nets: Vec<IpNet>,
    v6_prefix: u8,
}

impl Default for TrustedProxies {
    fn default() -> Self {
        Self {
            nets: Vec::new(),
            v6_prefix: crate::limit::DEFAULT_V6_PREFIX,
        }
    }
}

impl TrustedProxies {
    /// Count IPv6 clients by their first `bits` bits (`limits.ipv6_prefix`).
    pub fn with_v6_prefix(mut self, bits: u8) -> Self {
        self.v6_prefix = bits;
        self
    }

    /// `ip` as one client of the per-address limits (see [`crate::limit::address_key`]).
    pub fn client_key(&self, ip: IpAddr) -> String {
        crate::limit::address_key(ip, self.v6_prefix)
    }

    /// `entries`: addresses or CIDRs; the error names the first bad one.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        crate::limit::parse_nets(entries).map(|nets| Self {
            nets,
            ..Self::default()
        })
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.nets.iter().any(|net| net.contains(&ip))
    }

    /// The client behind `peer`: walking `X-Forwarded-For` from the right (the entry the nearest
    /// proxy added), the first address that is not itself a trusted proxy.
    pub fn client(&self, peer: IpAddr, forwarded_for: &[&str]) -> IpAddr {
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        for entry in forwarded_for
            .iter()
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .rev()
        {
            match entry.parse::<IpAddr>() {
                Ok(ip) if self.trusts(ip) => client = ip,
                Ok(ip) => return ip,
                Err(_) => return client,
            }
        }
        client
    }
}

pub async fn client_addr(
    State(proxies): State<Arc<TrustedProxies>>,
    mut req: Request,
    next: Next,
) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip())
        .unwrap_or(IpAddr::from([127, 0, 0, 1]));
    let forwarded: Vec<&str> = req
        .headers()
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let client = proxies.client(peer, &forwarded);
    tracing::Span::current().record("client", tracing::field::display(client));
    req.extensions_mut().insert(ClientAddr {
        ip: client,
        v6_prefix: proxies.v6_prefix,
    });
    // The base a trusted proxy was reached under (crate::public): nobody else's word.
    let base = proxies
        .trusts(peer)
        .then(|| forwarded_base(req.headers()))
        .flatten();
    req.headers_mut().remove(FORWARDED_BASE);
    if let Some(value) = base.and_then(|b| HeaderValue::from_str(&b).ok()) {
        req.headers_mut().insert(FORWARDED_BASE, value);
    }
    // HTTP/2 names the host in `:authority`, not in a Host header: give every layer after this
    // one the same place to look (the Host and Origin checks, the issuer a request is answered as).
    if !req.headers().contains_key(header::HOST)
        && let Some(value) = req
            .uri()
            .authority()
            .and_then(|a| HeaderValue::from_str(a.as_str()).ok())
    {
        req.headers_mut().insert(header::HOST, value);
    }
    next.run(req).await
}

/// `proto://host` from a proxy's `X-Forwarded-Proto` and `X-Forwarded-Host` (else `Host`): the
/// first value of each, as the nearest proxy set it.
fn forwarded_base(headers: &HeaderMap) -> Option<String> {
    let first = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(',').next())
            .map(|v| v.trim().to_owned())
    };
    let proto = first("x-forwarded-proto")?.to_ascii_lowercase();
    let host = first("x-forwarded-host").or_else(|| first(header::HOST.as_str()))?;
    let host = match (proto.as_str(), host.rsplit_once(':')) {
        ("https", Some((name, "443"))) | ("http", Some((name, "80"))) => name.to_owned(),
        _ => host,
    };
    matches!(proto.as_str(), "http" | "https").then(|| format!("{proto}://{host}"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_proxys_base_is_its_proto_and_host() {
        let h = |pairs: &[(&'static str, &str)]| {
            let mut m = HeaderMap::new();
            for (k, v) in pairs {
                m.insert(*k, v.parse().unwrap());
            }
            m
        };
        assert_eq!(
            forwarded_base(&h(&[
                ("x-forwarded-proto", "https"),
                ("x-forwarded-host", "a.example, b")
            ])),
            Some("https://a.example".into())
        );
        assert_eq!(
            forwarded_base(&h(&[
                ("x-forwarded-proto", "https"),
                ("host", "a.example:443")
            ])),
            Some("https://a.example".into())
        );
        assert_eq!(
            forwarded_base(&h(&[("host", "a.example")])),
            None,
            "no proto"
        );
        assert_eq!(
            forwarded_base(&h(&[("x-forwarded-proto", "gopher"), ("host", "a")])),
            None
        );
    }

    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_proxy_is_believed() {
        let p = TrustedProxies::parse(&["127.0.0.1".into(), "10.1.0.0/16".into()]).unwrap();
        assert_eq!(
            p.client(ip("127.0.0.1"), &["203.0.113.9"]),
            ip("203.0.113.9")
        );
        // Anyone else's header is ignored.
        assert_eq!(p.client(ip("192.0.2.1"), &["203.0.113.9"]), ip("192.0.2.1"));
        // A chain: the rightmost address that is not a proxy; what the client itself wrote to the
        // left of it is not believed.
        assert_eq!(
            p.client(ip("127.0.0.1"), &["6.6.6.6, 203.0.113.9", "10.1.2.3"]),
            ip("203.0.113.9")
        );
        assert_eq!(p.client(ip("127.0.0.1"), &[]), ip("127.0.0.1"));
        assert_eq!(p.client(ip("127.0.0.1"), &["garbage"]), ip("127.0.0.1"));
        assert!(TrustedProxies::parse(&["nope".into()]).is_err());
        assert_eq!(
            TrustedProxies::default().client(ip("127.0.0.1"), &["1.2.3.4"]),
            ip("127.0.0.1")
        );
    }
}
