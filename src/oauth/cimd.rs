//! Client-ID metadata documents (SEP-991, the MCP authorization spec from 2025-11): a `client_id`
//! that is an `https` URL names a JSON document at that URL describing the client. Claude, Claude
//! Code and ChatGPT use them instead of registering.
//!
//! The gateway fetches that URL on behalf of whoever sent it, so the fetch is built not to be a
//! way into the owner's network (SSRF): https only; every address the name resolves to must be
//! public (no loopback, private, link-local, CGNAT, multicast or mapped forms of them), checked
//! in the resolver itself, so the address connected to is the one checked; IP literals likewise;
//! redirects only to the same host, at most 3; a size cap, a timeout; no proxy. Documents are
//! cached as long as their `Cache-Control` allows (5 min without one, a day at most).
//!
//! A document is accepted only when its `client_id` is exactly its URL, it lists redirect URIs,
//! and it asks for no client secret; the authorize request's redirect URI must be one of them
//! exactly. The consent page then names the client by the host that served the document.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;
use url::{Host, Url};

/// Largest document read; the spec's examples are well under 1 KiB.
pub const MAX_DOCUMENT_BYTES: usize = 16 * 1024;
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
const DEFAULT_TTL: Duration = Duration::from_secs(5 * 60);
const MAX_TTL: Duration = Duration::from_secs(24 * 3600);
const MAX_CACHED: usize = 256;
const MAX_REDIRECTS: usize = 3;

/// A client as its metadata document describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// The document's URL, which is the client id.
    pub client_id: String,
    /// The host that served it: what the consent page names.
    pub host: String,
    /// The `client_name` it gives itself (shown only beside the host).
    pub name: Option<String>,
    pub redirect_uris: Vec<String>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CimdError {
    /// The client id is not a URL a document may live at.
    #[error("client_id is not a valid metadata document URL: {0}")]
    BadUrl(&'static str),
    /// The fetch failed or was refused (address, redirect, size, time, status).
    #[error("the client's metadata document could not be fetched: {0}")]
    Fetch(String),
    /// The document is not a valid description of this client.
    #[error("the client's metadata document is not valid: {0}")]
    Invalid(String),
}

/// Whether `client_id` is meant as a metadata document URL (rather than a registered id).
pub fn is_document_id(client_id: &str) -> bool {
    client_id.starts_with("https://")
}

type Https = hyper_rustls::HttpsConnector<HttpConnector<PublicOnly>>;

/// The fetcher and its cache.
pub struct Fetcher {
    http: Client<Https, Empty<Bytes>>,
    allow_private: bool,
    cache: Mutex<HashMap<String, (Document, Instant)>>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("allow_private", &self.allow_private)
            .finish_non_exhaustive()
    }
}

/// Options of the fetch, from `[oauth]`.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Allow documents on loopback and private addresses: for tests, and for a LAN-only client.
    pub allow_private: bool,
    /// A PEM file of extra root certificates to trust besides the system's.
    pub extra_roots: Option<std::path::PathBuf>,
}

impl Fetcher {
    pub fn new(options: &FetchOptions) -> Result<Self, String> {
        let tls = tls_config(options.extra_roots.as_deref())?;
        let mut http = HttpConnector::new_with_resolver(PublicOnly {
            allow_private: options.allow_private,
        });
        http.enforce_http(false);
        http.set_connect_timeout(Some(FETCH_TIMEOUT));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_only()
            .enable_http1()
            .wrap_connector(http);
        Ok(Self {
            http: Client::builder(TokioExecutor::new()).build(https),
            allow_private: options.allow_private,
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The document `client_id` names: from the cache while fresh, else fetched and checked.
    pub async fn resolve(&self, client_id: &str) -> Result<Document, CimdError> {
        let url = document_url(client_id)?;
        if let Some(doc) = self.cached(client_id) {
            return Ok(doc);
        }
        let (body, ttl) = tokio::time::timeout(FETCH_TIMEOUT, self.fetch(url.clone()))
            .await
            .map_err(|_| CimdError::Fetch("it took too long".into()))??;
        let doc = parse(&url, &body)?;
        if let Some(ttl) = ttl {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            cache.retain(|_, (_, until)| *until > Instant::now());
            if cache.len() < MAX_CACHED {
                cache.insert(client_id.to_owned(), (doc.clone(), Instant::now() + ttl));
            }
        }
        Ok(doc)
    }

    fn cached(&self, client_id: &str) -> Option<Document> {
        let cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get(client_id)
            .filter(|(_, until)| *until > Instant::now())
            .map(|(doc, _)| doc.clone())
    }

    /// An IP-literal host must be public too (the resolver never sees it).
    fn check_literal(&self, url: &Url) -> Result<(), CimdError> {
        let ip = match url.host() {
            Some(Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(Host::Ipv6(ip)) => IpAddr::V6(ip),
            _ => return Ok(()),
        };
        if self.allow_private || is_public(ip) {
            Ok(())
        } else {
            Err(CimdError::Fetch("its address is not public".into()))
        }
    }

    /// The body (at most [`MAX_DOCUMENT_BYTES`]) and how long it may be cached, following at
    /// most [`MAX_REDIRECTS`] redirects on the same host.
    async fn fetch(&self, mut url: Url) -> Result<(Vec<u8>, Option<Duration>), CimdError> {
        let fetch_err = |why: &str| CimdError::Fetch(why.to_owned());
        let host = url.host_str().map(str::to_owned);
        for _ in 0..=MAX_REDIRECTS {
            self.check_literal(&url)?;
            let req = hyper::Request::get(url.as_str())
                .header(hyper::header::ACCEPT, "application/json")
                .header(
                    hyper::header::USER_AGENT,
                    concat!("copyq-mcp/", env!("CARGO_PKG_VERSION")),
                )
                .body(Empty::<Bytes>::new())
                .map_err(|_| fetch_err("bad request"))?;
            let res = self.http.request(req).await.map_err(|e| {
                tracing::debug!(error = %e, "metadata document fetch failed");
                fetch_err("cannot connect to a public address of its host over https")
            })?;
            let status = res.status();
            if status.is_redirection() {
                let next = res
                    .headers()
                    .get(hyper::header::LOCATION)
                    .and_then(|l| l.to_str().ok())
                    .and_then(|l| url.join(l).ok())
                    .ok_or_else(|| fetch_err("it redirects nowhere"))?;
                if next.scheme() != "https" || next.host_str().map(str::to_owned) != host {
                    return Err(fetch_err("it redirects to another host"));
                }
                url = next;
                continue;
            }
            if !status.is_success() {
                return Err(CimdError::Fetch(format!("it answered {status}")));
            }
            let ttl = cache_ttl(res.headers());
            let mut body = res.into_body();
            let mut bytes = Vec::new();
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|_| fetch_err("the connection broke"))?;
                if let Some(chunk) = frame.data_ref() {
                    if bytes.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                        return Err(fetch_err("it is too large"));
                    }
                    bytes.extend_from_slice(chunk);
                }
            }
            return Ok((bytes, ttl));
        }
        Err(fetch_err("too many redirects"))
    }
}

fn tls_config(extra_roots: Option<&Path>) -> Result<rustls::ClientConfig, String> {
    use rustls_pki_types::CertificateDer;
    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    let (added, _) = roots.add_parsable_certificates(native.certs);
    if let Some(path) = extra_roots {
        let certs = CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("oauth.metadata_document_ca_file {}: {e}", path.display()))?;
        for cert in certs {
            roots
                .add(cert)
                .map_err(|e| format!("oauth.metadata_document_ca_file {}: {e}", path.display()))?;
        }
    } else if added == 0 {
        tracing::warn!(
            "no system root certificates found: client metadata documents cannot be fetched"
        );
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map(|b| b.with_root_certificates(roots).with_no_client_auth())
        .map_err(|e| e.to_string())
}

/// Checks the client id's form: `https`, a host, a path other than `/`, no fragment, no user
/// info, no dot segments.
fn document_url(client_id: &str) -> Result<Url, CimdError> {
    let url = Url::parse(client_id).map_err(|_| CimdError::BadUrl("not a URL"))?;
    if url.scheme() != "https" {
        return Err(CimdError::BadUrl("it must be https"));
    }
    if url.host().is_none() {
        return Err(CimdError::BadUrl("it has no host"));
    }
    if url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(CimdError::BadUrl("it has a fragment or user info"));
    }
    if url.path() == "/" {
        return Err(CimdError::BadUrl("it has no path"));
    }
    // The parser removes dot segments: a URL that changed by parsing had some.
    if url.as_str() != client_id {
        return Err(CimdError::BadUrl("it is not in normal form"));
    }
    Ok(url)
}

fn parse(url: &Url, body: &[u8]) -> Result<Document, CimdError> {
    let bad = |why: &str| CimdError::Invalid(why.to_owned());
    let v: Value = serde_json::from_slice(body).map_err(|_| bad("not JSON"))?;
    if v.get("client_id").and_then(Value::as_str) != Some(url.as_str()) {
        return Err(bad("its client_id is not its own URL"));
    }
    let redirect_uris: Vec<String> = match v.get("redirect_uris") {
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|i| i.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| bad("redirect_uris must be strings"))?,
        _ => return Err(bad("it lists no redirect_uris")),
    };
    match v.get("token_endpoint_auth_method").and_then(Value::as_str) {
        None | Some("none") => {}
        Some(_) => {
            return Err(bad(
                "only public clients (token_endpoint_auth_method none) are supported",
            ));
        }
    }
    if v.get("client_secret").is_some() {
        return Err(bad("a metadata document must not hold a client_secret"));
    }
    let name = v
        .get("client_name")
        .and_then(Value::as_str)
        .map(super::register::clean_name)
        .transpose()
        .map_err(|why| bad(&why))?;
    Ok(Document {
        client_id: url.as_str().to_owned(),
        host: url.host_str().unwrap_or_default().to_owned(),
        name,
        redirect_uris,
    })
}

/// How long a response may be cached: `None` for `no-store`/`no-cache`/`max-age=0`.
fn cache_ttl(headers: &hyper::HeaderMap) -> Option<Duration> {
    let Some(cc) = headers
        .get(hyper::header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
    else {
        return Some(DEFAULT_TTL);
    };
    let mut ttl = DEFAULT_TTL;
    for directive in cc.split(',').map(|d| d.trim().to_ascii_lowercase()) {
        if directive == "no-store" || directive == "no-cache" || directive == "private" {
            return None;
        }
        if let Some(age) = directive.strip_prefix("max-age=") {
            match age.trim_matches('"').parse::<u64>() {
                Ok(0) | Err(_) => return None,
                Ok(secs) => ttl = Duration::from_secs(secs).min(MAX_TTL),
            }
        }
    }
    Some(ttl)
}

/// Resolves names to public addresses only, so that the address checked is the one connected to.
#[derive(Debug, Clone)]
struct PublicOnly {
    allow_private: bool,
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

/// Whether `ip` is a public unicast address: none of loopback, private, link-local, CGNAT,
/// documentation, benchmarking, multicast, reserved, unspecified, nor an IPv6 form of those.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_documentation()
        || ip.is_multicast()
        || a == 0
        || a >= 240
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b)))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_public_v4(v4);
    }
    let s = ip.segments();
    // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address.
    if s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0, 0, 0, 0] {
        return is_public_v4(Ipv4Addr::new(
            (s[6] >> 8) as u8,
            s[6] as u8,
            (s[7] >> 8) as u8,
            s[7] as u8,
        ));
    }
    if s[0] == 0x2002 {
        return is_public_v4(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (s[0] & 0xfe00) == 0xfc00 // unique local
        || (s[0] & 0xffc0) == 0xfe80 // link-local
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || s[0] == 0 // IPv4-compatible and other reserved forms
        || s[0] == 0x100) // discard-only
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        for public in ["1.1.1.1", "8.8.8.8", "2606:4700::1111", "160.79.104.10"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "198.18.0.1",
            "192.0.0.8",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "::127.0.0.1",
            "ff02::1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
    }

    #[test]
    fn document_urls() {
        assert!(document_url("https://claude.ai/oauth/mcp-oauth-client-metadata").is_ok());
        for bad in [
            "http://claude.ai/oauth/x",
            "https://claude.ai/",
            "https://claude.ai",
            "https://claude.ai/a/../b",
            "https://claude.ai/x#frag",
            "https://user@claude.ai/x",
            "https:///x",
            "not a url",
        ] {
            assert!(document_url(bad).is_err(), "{bad}");
        }
    }

    fn url() -> Url {
        Url::parse("https://claude.ai/oauth/mcp-oauth-client-metadata").unwrap()
    }

    #[test]
    fn documents() {
        let good = br#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata","client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none"}"#;
        assert_eq!(
            parse(&url(), good),
            Ok(Document {
                client_id: url().to_string(),
                host: "claude.ai".into(),
                name: Some("Claude".into()),
                redirect_uris: vec!["https://claude.ai/api/mcp/auth_callback".into()],
            })
        );
        let cases: [(&[u8], &str); 6] = [
            (
                br#"{"client_id":"https://evil.example/x","redirect_uris":["https://a/cb"]}"#,
                "its client_id is not its own URL",
            ),
            (
                br#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata"}"#,
                "it lists no redirect_uris",
            ),
            (
                br#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata","redirect_uris":["https://a/cb"],"token_endpoint_auth_method":"client_secret_basic"}"#,
                "only public clients (token_endpoint_auth_method none) are supported",
            ),
            (
                br#"{"client_id":"https://claude.ai/oauth/mcp-oauth-client-metadata","redirect_uris":[1]}"#,
                "redirect_uris must be strings",
            ),
            (
                "{\"client_id\":\"https://claude.ai/oauth/mcp-oauth-client-metadata\",\"redirect_uris\":[\"https://a/cb\"],\"client_name\":\"Cla\u{202e}ude\"}".as_bytes(),
                "client_name holds an invisible or direction-changing character (U+202E)",
            ),
            (b"[]", "its client_id is not its own URL"),
        ];
        for (body, why) in cases {
            assert_eq!(
                parse(&url(), body),
                Err(CimdError::Invalid(why.into())),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn cache_headers() {
        let h = |v: &str| {
            let mut m = hyper::HeaderMap::new();
            m.insert(hyper::header::CACHE_CONTROL, v.parse().unwrap());
            m
        };
        assert_eq!(cache_ttl(&hyper::HeaderMap::new()), Some(DEFAULT_TTL));
        assert_eq!(
            cache_ttl(&h("public, max-age=600")),
            Some(Duration::from_secs(600))
        );
        assert_eq!(cache_ttl(&h("max-age=99999999")), Some(MAX_TTL));
        assert_eq!(cache_ttl(&h("no-store")), None);
        assert_eq!(cache_ttl(&h("max-age=0")), None);
        assert_eq!(cache_ttl(&h("no-cache")), None);
    }
}
