//! The base URL clients see, from which the OAuth issuer, the protected resource (`<base>/mcp`),
//! the metadata URLs and the redirect's `iss` are all built.
//!
//! A configured `server.public_url` is authoritative (a tunnel or reverse proxy: whatever Host it
//! forwards, the apps know the gateway by that URL). Without one, the gateway is reached on
//! loopback, and there it follows the loopback name the client itself used: a client given
//! `http://localhost:8765/mcp` must be told the resource `http://localhost:8765/mcp`, since SDKs
//! refuse a resource metadata document naming another URL than the one they were given.
//!
//! Behind a proxy in `server.trusted_proxies` (Caddy, cloudflared) and without a public URL, the
//! base is the one the proxy was reached under: its `X-Forwarded-Proto` and `X-Forwarded-Host`
//! (else `Host`), taken only from such a proxy (`crate::http::client` vouches for them in
//! [`FORWARDED_BASE`]) and only for a host name in `server.allowed_hosts`, without a port.

use std::net::{IpAddr, SocketAddr};

use axum::http::{HeaderMap, header};

/// The three names a loopback client may use for this machine, as they appear in a URL.
const LOOPBACK_NAMES: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

/// The header `crate::http::client` sets (and strips from every request first) to the base a
/// trusted proxy says it was reached under: `https://name`.
pub const FORWARDED_BASE: &str = "x-copyq-mcp-forwarded-base";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PublicBase {
    /// `server.public_url`, without a trailing slash.
    Fixed(String),
    /// No public URL: `scheme://<name>:port` for the loopback name in `Host`, a trusted proxy's
    /// base for one of `forwarded` (lowercase host names), else `default`.
    Bound {
        scheme: &'static str,
        port: u16,
        default: String,
        forwarded: Vec<String>,
    },
}

impl PublicBase {
    /// `configured`: `server.public_url` (may be empty); `tls`: whether the gateway serves HTTPS
    /// itself; `bound`: the address it listens on.
    pub fn new(configured: &str, tls: bool, bound: SocketAddr) -> Self {
        if !configured.is_empty() {
            return Self::Fixed(configured.trim_end_matches('/').to_owned());
        }
        let scheme = if tls { "https" } else { "http" };
        let ip = match bound.ip() {
            ip if ip.is_unspecified() => IpAddr::from([127, 0, 0, 1]),
            ip => ip,
        };
        Self::Bound {
            scheme,
            port: bound.port(),
            default: format!("{scheme}://{}", SocketAddr::new(ip, bound.port())),
            forwarded: Vec::new(),
        }
    }

    /// Host names (`server.allowed_hosts`) a trusted proxy may say it was reached under.
    pub fn with_forwarded_hosts(mut self, hosts: &[String]) -> Self {
        if let Self::Bound { forwarded, .. } = &mut self {
            *forwarded = hosts
                .iter()
                .filter(|h| h.as_str() != "*")
                .map(|h| h.to_ascii_lowercase())
                .collect();
        }
        self
    }

    /// The base for a request that came with this `Host` header.
    pub fn for_host(&self, host: Option<&str>) -> String {
        match self {
            Self::Fixed(base) => base.clone(),
            Self::Bound {
                scheme,
                port,
                default,
                ..
            } => host
                .and_then(|h| loopback_name(h, *port, if *scheme == "https" { 443 } else { 80 }))
                .map(|name| format!("{scheme}://{name}:{port}"))
                .unwrap_or_else(|| default.clone()),
        }
    }

    pub fn for_headers(&self, headers: &HeaderMap) -> String {
        if let Some(base) = headers
            .get(FORWARDED_BASE)
            .and_then(|v| v.to_str().ok())
            .and_then(|b| self.forwarded(b))
        {
            return base;
        }
        self.for_host(headers.get(header::HOST).and_then(|h| h.to_str().ok()))
    }

    /// `base` (`scheme://host`, from a trusted proxy) if it names one of the forwarded hosts.
    fn forwarded(&self, base: &str) -> Option<String> {
        let Self::Bound { forwarded, .. } = self else {
            return None;
        };
        let (scheme, host) = base.split_once("://")?;
        let host = host.to_ascii_lowercase();
        let ok = matches!(scheme, "http" | "https") && forwarded.contains(&host);
        ok.then(|| format!("{scheme}://{host}"))
    }

    /// Every base a request can be given: the resources an access token may be bound to.
    pub fn all(&self) -> Vec<String> {
        match self {
            Self::Fixed(base) => vec![base.clone()],
            Self::Bound {
                scheme,
                port,
                default,
                forwarded,
            } => {
                let mut all: Vec<String> = LOOPBACK_NAMES
                    .iter()
                    .map(|n| format!("{scheme}://{n}:{port}"))
                    .collect();
                if !all.contains(default) {
                    all.push(default.clone());
                }
                for host in forwarded {
                    all.push(format!("https://{host}"));
                    all.push(format!("http://{host}"));
                }
                all
            }
        }
    }
}

/// The loopback name of `host` (a Host header: `name[:port]`, the port being `default_port` when
/// left out), when it is one and names `port`.
fn loopback_name(host: &str, port: u16, default_port: u16) -> Option<&'static str> {
    let (name, given_port) = match host.rsplit_once(':') {
        Some((n, p)) if !n.is_empty() && !p.contains(']') => (n, Some(p)),
        _ => (host, None),
    };
    let given = match given_port {
        Some(p) => p.parse::<u16>().ok(),
        None => Some(default_port),
    };
    if given != Some(port) {
        return None;
    }
    LOOPBACK_NAMES
        .iter()
        .find(|n| n.eq_ignore_ascii_case(name))
        .copied()
}

/// Whether `url`'s host is `localhost` or a loopback address.
pub fn is_loopback(url: &url::Url) -> bool {
    url.host_str().is_some_and(is_loopback_host)
}

/// Whether a host (`localhost`, an address, `[::1]`) is this machine: the one list of loopback
/// names the redirect, Origin and doctor checks share.
pub fn is_loopback_host(host: &str) -> bool {
    let host = host.trim_matches(['[', ']']);
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_this_machine_only() {
        for url in [
            "http://localhost:3000/cb",
            "http://LOCALHOST",
            "http://127.0.0.1/",
            "http://127.9.0.1:1",
            "http://[::1]:8080/",
        ] {
            assert!(is_loopback(&url::Url::parse(url).expect("url")), "{url}");
        }
        for url in [
            "http://localhost.evil.example/",
            "http://127.0.0.1.nip.io/",
            "http://[::2]/",
            "https://claude.ai/",
        ] {
            assert!(!is_loopback(&url::Url::parse(url).expect("url")), "{url}");
        }
    }

    fn bound() -> PublicBase {
        PublicBase::new("", false, "127.0.0.1:8765".parse().unwrap())
    }

    #[test]
    fn loopback_hosts_are_followed() {
        let b = bound();
        assert_eq!(b.for_host(Some("localhost:8765")), "http://localhost:8765");
        assert_eq!(b.for_host(Some("LOCALHOST:8765")), "http://localhost:8765");
        assert_eq!(b.for_host(Some("[::1]:8765")), "http://[::1]:8765");
        assert_eq!(b.for_host(Some("127.0.0.1:8765")), "http://127.0.0.1:8765");
    }

    #[test]
    fn a_trusted_proxys_base_is_taken_for_an_allowed_host_only() {
        let b = bound().with_forwarded_hosts(&["Copyq.Example.com".into(), "*".into()]);
        let headers = |base: &str| {
            let mut h = HeaderMap::new();
            h.insert(FORWARDED_BASE, base.parse().unwrap());
            h.insert(header::HOST, "copyq.example.com".parse().unwrap());
            h
        };
        assert_eq!(
            b.for_headers(&headers("https://copyq.example.com")),
            "https://copyq.example.com"
        );
        for refused in [
            "https://evil.example",
            "https://copyq.example.com:8443",
            "ftp://copyq.example.com",
            "https://copyq.example.com/x",
            "garbage",
        ] {
            assert_eq!(
                b.for_headers(&headers(refused)),
                "http://127.0.0.1:8765",
                "{refused}"
            );
        }
        assert!(b.all().contains(&"https://copyq.example.com".to_owned()));
        // Without allowed hosts, or with a public URL, no proxy's word changes the base.
        assert_eq!(
            bound().for_headers(&headers("https://copyq.example.com")),
            "http://127.0.0.1:8765"
        );
        let fixed = PublicBase::new("https://pub.example", false, "127.0.0.1:1".parse().unwrap())
            .with_forwarded_hosts(&["copyq.example.com".into()]);
        assert_eq!(
            fixed.for_headers(&headers("https://copyq.example.com")),
            "https://pub.example"
        );
    }

    #[test]
    fn anything_else_gets_the_bound_address() {
        let b = bound();
        for host in [
            None,
            Some("evil.example:8765"),
            Some("localhost:9999"),
            Some("localhost.evil.example:8765"),
            Some("[::1]"),
            Some(""),
        ] {
            assert_eq!(b.for_host(host), "http://127.0.0.1:8765", "{host:?}");
        }
        let any = PublicBase::new("", true, "0.0.0.0:443".parse().unwrap());
        assert_eq!(any.for_host(Some("desk.lan")), "https://127.0.0.1:443");
    }

    #[test]
    fn a_public_url_is_authoritative() {
        let b = PublicBase::new(
            "https://copyq.example.com/",
            false,
            "127.0.0.1:8765".parse().unwrap(),
        );
        assert_eq!(
            b.for_host(Some("localhost:8765")),
            "https://copyq.example.com"
        );
        assert_eq!(b.all(), ["https://copyq.example.com"]);
    }

    #[test]
    fn all_bases_cover_every_loopback_name() {
        assert_eq!(
            bound().all(),
            [
                "http://127.0.0.1:8765",
                "http://localhost:8765",
                "http://[::1]:8765"
            ]
        );
        let lan = PublicBase::new("", true, "192.168.1.5:8765".parse().unwrap());
        assert_eq!(lan.all().last().unwrap(), "https://192.168.1.5:8765");
    }
}
