//! Client-ID metadata documents (SEP-991, the MCP authorization spec from 2025-11): a `client_id`
//! that is an `https` URL names a JSON document at that URL describing the client. Claude, Claude
//! Code and ChatGPT use them instead of registering.
//!
//! The gateway fetches that URL on behalf of whoever sent it, so the fetch is built not to be a
//! way into the owner's network (SSRF): https only; every address the name resolves to must be
//! public (no loopback, private, link-local, CGNAT, multicast or mapped forms of them), checked
//! in the resolver itself, so the address connected to is the one checked; IP literals likewise;
//! redirects only to the same host and port, at most 3; a size cap, a timeout. Through the owner's
//! proxy (`HTTPS_PROXY`, `NO_PROXY`) what is checked differs: see [`proxy`]. Documents are cached as
//! long as their `Cache-Control` allows (5 min without one, a day at most). A failure names its
//! cause and what the owner can do ([`cause`]).
//!
//! A document is accepted only when its `client_id` is exactly its URL, it lists redirect URIs,
//! and it asks for no client secret; the authorize request's redirect URI must be one of them
//! exactly. The consent page then names the client by the host that served the document.

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use url::{Host, Url};

mod cause;
mod document;
mod proxy;
mod public;
use document::{cache_ttl, document_url, parse};
use public::{PublicOnly, is_public};

/// Largest document read; the spec's examples are well under 1 KiB.
pub const MAX_DOCUMENT_BYTES: usize = 16 * 1024;
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
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
    /// The fetch was answered but refused (redirect, size, status).
    #[error("the client's metadata document could not be fetched: {0}")]
    Fetch(String),
    /// No answer came: DNS, connection, TLS, the proxy, or time.
    #[error("the client's metadata document could not be fetched: {0}")]
    Unreachable(String),
    /// Its host's address is not public.
    #[error("the client's metadata document could not be fetched: {0}")]
    NotPublic(String),
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
    tls: rustls::ClientConfig,
    proxies: proxy::Proxies,
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
            .with_tls_config(tls.clone())
            .https_only()
            .enable_http1()
            .wrap_connector(http);
        Ok(Self {
            http: Client::builder(TokioExecutor::new()).build(https),
            tls,
            proxies: proxy::Proxies::from_env(),
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
            .map_err(|_| CimdError::Unreachable("it took too long (5 s)".into()))??;
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
            Err(CimdError::NotPublic("its address is not public".into()))
        }
    }

    /// The body (at most [`MAX_DOCUMENT_BYTES`]) and how long it may be cached, following at
    /// most [`MAX_REDIRECTS`] redirects on the same host.
    async fn fetch(&self, mut url: Url) -> Result<(Vec<u8>, Option<Duration>), CimdError> {
        let fetch_err = |why: &str| CimdError::Fetch(why.to_owned());
        let host = url.host_str().map(str::to_owned);
        let port = url.port_or_known_default();
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
            let route = self
                .proxies
                .route(&url, &self.tls, self.allow_private, FETCH_TIMEOUT)?;
            let (res, proxy) = match route {
                Some(r) => (r.client.request(req).await, Some(r.proxy)),
                None => (self.http.request(req).await, None),
            };
            let res = res.map_err(|e| {
                let host = match url.port() {
                    Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
                    None => url.host_str().unwrap_or_default().to_owned(),
                };
                cause::connect_failure(&e, &host, proxy.as_deref())
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
                // Another port of the same host is another service (an admin port, a local proxy).
                if next.port_or_known_default() != port {
                    return Err(fetch_err("it redirects to another port"));
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
