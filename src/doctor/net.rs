//! The doctor's look at how the gateway meets the network: the public URL against the bind
//! address, allowed hosts and trusted proxies; the TLS certificate and its expiry; and whether
//! the client-ID metadata documents Claude's and ChatGPT's connectors send can be fetched from
//! here (name resolution, a route to port 443, the fetch itself), each within a few seconds.

use std::time::Duration;

use url::Url;

use super::Check;
use crate::config::Settings;

/// Claude's connector document, and ChatGPT's host (its document lives under it).
const DEFAULT_DOCUMENTS: &[&str] = &[
    "https://claude.ai/oauth/mcp-oauth-client-metadata",
    "https://chatgpt.com/",
];
/// Longest each network step may take.
const STEP: Duration = Duration::from_secs(3);

/// Whether the public URL, bind address, allowed hosts and trusted proxies fit together.
pub(super) fn public_url(settings: &Settings) -> Vec<Check> {
    let s = &settings.server;
    let mut out = Vec::new();
    for host in &s.allowed_hosts {
        if host == "*" {
            out.push(Check::warn(
                "allowed-hosts",
                "[\"*\"] accepts any Host header (no DNS-rebinding defence)",
                "list the host names clients use instead",
            ));
        } else if host.contains("://") || host.contains('/') {
            out.push(Check::problem(
                "allowed-hosts",
                format!("'{host}' is a URL, not a host name: it never matches"),
                "write the host name alone, e.g. \"copyq.example.com\"",
            ));
        }
    }
    if s.public_url.is_empty() {
        out.push(Check::ok(
            "public-url",
            format!("not set: clients use http://{} (this machine)", s.bind),
        ));
        return out;
    }
    let Ok(url) = Url::parse(&s.public_url) else {
        return out;
    };
    let host = url.host_str().unwrap_or_default();
    let tls = settings.tls_files().is_some();
    let bind_loopback = s.bind.ip().is_loopback();
    let mut found = Vec::new();
    if url.scheme() == "http" && !crate::public::is_loopback_host(host) {
        found.push(Check::problem(
            "public-url",
            format!(
                "{} is plain http on a non-loopback host: Claude and ChatGPT need https",
                s.public_url
            ),
            "use the https URL your tunnel or reverse proxy serves",
        ));
    }
    if crate::public::is_loopback_host(host)
        && url.port_or_known_default() != Some(s.bind.port())
        && s.bind.port() != 0
    {
        found.push(Check::problem(
            "public-url",
            format!(
                "{} is on this machine but at another port than server.bind {}: OAuth metadata would send clients there",
                s.public_url, s.bind
            ),
            "make the port of server.public_url that of server.bind, or leave public_url empty",
        ));
    }
    if url.scheme() == "http" && tls && !bind_loopback {
        found.push(Check::problem(
            "public-url",
            format!(
                "{} is http but the gateway serves https ([tls])",
                s.public_url
            ),
            "write the public URL with https",
        ));
    }
    if !crate::public::is_loopback_host(host) && bind_loopback && s.trusted_proxies.is_empty() {
        found.push(Check::warn(
            "trusted-proxies",
            format!(
                "{} is reached through a tunnel or proxy (the gateway binds loopback) but server.trusted_proxies is empty: every client shares the proxy's limits and address in the log",
                s.public_url
            ),
            "server.trusted_proxies = [\"127.0.0.1\"] for a tunnel or proxy on this machine",
        ));
    }
    if found.is_empty() {
        found.push(Check::ok(
            "public-url",
            format!("{} (host {host} allowed; bind {})", s.public_url, s.bind),
        ));
    }
    out.extend(found);
    out
}

/// The built-in TLS certificate: readable, and how long until it expires.
pub(super) fn tls(settings: &Settings) -> Check {
    let Some(files) = settings.tls_files() else {
        return Check::ok("tls", "not configured (plain HTTP)");
    };
    let path = files.cert.display().to_string();
    let pem = match std::fs::read(&files.cert) {
        Ok(pem) => pem,
        Err(e) => {
            return Check::problem(
                "tls",
                format!("cannot read {path}: {e}"),
                "fix tls.cert, or make one: copyq-mcp tls generate",
            );
        }
    };
    let parsed = x509_parser::pem::parse_x509_pem(&pem)
        .map_err(|e| e.to_string())
        .and_then(|(_, pem)| {
            pem.parse_x509()
                .map(|cert| cert.validity().not_after.timestamp())
                .map_err(|e| e.to_string())
        });
    let not_after = match parsed {
        Ok(t) => t,
        Err(e) => {
            return Check::problem(
                "tls",
                format!("{path} is not a PEM certificate: {e}"),
                "fix tls.cert, or make one: copyq-mcp tls generate",
            );
        }
    };
    let days = (not_after - crate::store::now()) / 86_400;
    if days < 0 {
        Check::problem(
            "tls",
            format!("{path} expired {} day(s) ago", -days),
            "renew it (copyq-mcp tls generate makes a new self-signed one)",
        )
    } else if days < 14 {
        Check::warn(
            "tls",
            format!("{path} expires in {days} day(s)"),
            "renew it soon (copyq-mcp tls generate)",
        )
    } else {
        Check::ok("tls", format!("{path} valid for {days} more day(s)"))
    }
}

/// Whether each client-ID metadata document (or the host it lives on) can be reached from here.
pub(super) async fn metadata_documents(settings: &Settings, urls: &[String]) -> Vec<Check> {
    if !settings.oauth.enabled {
        return vec![Check::ok("metadata-docs", "OAuth is off: nothing to fetch")];
    }
    let defaults: Vec<String> = DEFAULT_DOCUMENTS.iter().map(|u| u.to_string()).collect();
    let urls = if urls.is_empty() { &defaults } else { urls };
    let mut out = Vec::new();
    for url in urls {
        out.push(match reach(settings, url).await {
            Ok(what) => Check::ok("metadata-docs", format!("{url}: {what}")),
            Err(cause) => Check::warn(
                "metadata-docs",
                format!("{url} cannot be fetched from here: {cause}"),
                fetch_fix(),
            ),
        });
    }
    out
}

fn fetch_fix() -> String {
    let proxy = ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()).map(|_| *v));
    let proxy = match proxy {
        Some(var) => format!(" ({var} is set: the gateway must honour it to go through)"),
        None => String::new(),
    };
    format!(
        "connectors that identify by such a document cannot connect until this machine reaches it{proxy}; \
         meanwhile use a bearer token, or a registered client (dynamic registration)"
    )
}

/// DNS, then a TCP route to port 443, then (for a document) the fetch the gateway makes.
async fn reach(settings: &Settings, url: &str) -> Result<String, String> {
    let parsed = Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    let host = parsed.host_str().ok_or("no host")?.to_owned();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addrs: Vec<std::net::SocketAddr> =
        match tokio::time::timeout(STEP, tokio::net::lookup_host((host.as_str(), port))).await {
            Ok(Ok(addrs)) => addrs.collect(),
            Ok(Err(e)) => return Err(format!("DNS: cannot resolve {host}: {e}")),
            Err(_) => return Err(format!("DNS: resolving {host} took over {STEP:?}")),
        };
    let first = addrs.first().ok_or(format!("DNS: no address for {host}"))?;
    match tokio::time::timeout(STEP, tokio::net::TcpStream::connect(first)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(format!("route: cannot connect to {first}: {e}")),
        Err(_) => return Err(format!("route: connecting to {first} took over {STEP:?}")),
    }
    if parsed.path() == "/" {
        return Ok(format!("{host} reachable ({first})"));
    }
    let fetcher = crate::oauth::cimd::Fetcher::new(&crate::app::document_fetch(settings))?;
    fetcher
        .resolve(url)
        .await
        .map(|doc| {
            format!(
                "fetched ({first}), {} redirect URI(s)",
                doc.redirect_uris.len()
            )
        })
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(toml_tweak: impl FnOnce(&mut Settings)) -> Vec<Check> {
        let mut s = Settings::defaults().unwrap();
        toml_tweak(&mut s);
        public_url(&s)
    }

    #[test]
    fn public_url_problems_are_found() {
        use super::super::Status;
        let statuses = |c: Vec<Check>| c.iter().map(|c| c.status).collect::<Vec<_>>();
        assert_eq!(statuses(with(|_| {})), [Status::Ok]);
        let c = with(|s| s.server.public_url = "http://copyq.example.com".into());
        assert!(
            c.iter()
                .any(|c| c.status == Status::Problem && c.detail.contains("plain http")),
            "{c:?}"
        );
        let c = with(|s| s.server.public_url = "http://127.0.0.1:9999".into());
        assert!(c.iter().any(|c| c.detail.contains("another port")), "{c:?}");
        let c = with(|s| s.server.public_url = "https://copyq.example.com".into());
        assert_eq!(statuses(c), [Status::Warn], "no trusted proxy");
        let c = with(|s| {
            s.server.public_url = "https://copyq.example.com".into();
            s.server.trusted_proxies = vec!["127.0.0.1".into()];
        });
        assert_eq!(statuses(c), [Status::Ok]);
        let c = with(|s| s.server.allowed_hosts = vec!["https://x.example".into()]);
        assert_eq!(c[0].status, Status::Problem);
    }
}
