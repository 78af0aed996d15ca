//! Request guards in front of every route: the Host check and the Origin check against DNS
//! rebinding and cross-site requests (a browser page elsewhere must not drive the gateway), and
//! the per-token rate limit.
//!
//! The two checks split the work. The Host allowlist proves the request is for this gateway under
//! a name the owner chose, which a rebound DNS name is not. Given that, an `Origin` equal to the
//! request's own Host is the gateway's own page (same origin). The one request a browser may send
//! with `Origin: null` is the consent form's POST: under the Fetch standard a form sent from a
//! page with a privacy-preserving referrer policy carries `null`; that route needs no help from
//! `Origin`, since its CSRF token must match a `SameSite=Strict` cookie that a cross-site page
//! cannot make the browser send.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use url::Url;

use super::HttpError;
use crate::auth::Principal;
use crate::limit::RateLimiter;
use crate::logging::refusal::{self, Reason};
use crate::public::PublicBase;
use crate::public::is_loopback;

/// The route whose form carries its own CSRF protection, and so may come with `Origin: null`.
const CONSENT_PATH: &str = "/authorize";

/// Which `Host` headers are accepted: loopback names, configured names and a specific bind
/// address, any port; `None` accepts any.
#[derive(Debug, Clone)]
pub struct HostPolicy {
    names: Option<Vec<String>>,
}

impl HostPolicy {
    pub fn new(names: Option<Vec<String>>) -> Self {
        let names = names.map(|n| n.into_iter().map(|h| h.to_ascii_lowercase()).collect());
        Self { names }
    }

    pub fn allows(&self, host: &str) -> bool {
        let Some(names) = &self.names else {
            return true;
        };
        let name = host_name(host).to_ascii_lowercase();
        names
            .iter()
            .any(|n| *n == name || n.trim_start_matches('[').trim_end_matches(']') == name)
    }
}

/// The name part of a Host header (`name[:port]`, `[v6][:port]`), brackets removed.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default();
    }
    host.split(':').next().unwrap_or_default()
}

/// Which `Origin` headers are accepted: loopback origins (any port), the gateway's own public
/// origins, and configured ones. Requests without `Origin` (non-browser clients) pass.
#[derive(Debug, Clone)]
pub struct OriginPolicy {
    allowed: Vec<String>,
    any: bool,
}

impl OriginPolicy {
    pub fn new(base: &PublicBase, configured: &[String]) -> Self {
        let mut allowed: Vec<String> = configured
            .iter()
            .filter(|o| *o != "*")
            .map(|o| o.trim_end_matches('/').to_owned())
            .collect();
        for url in base.all() {
            if let Ok(url) = Url::parse(&url) {
                allowed.push(url.origin().ascii_serialization());
            }
        }
        Self {
            allowed,
            any: configured.iter().any(|o| o == "*"),
        }
    }

    pub fn allows(&self, origin: &str) -> bool {
        if self.any {
            return true;
        }
        match Url::parse(origin) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {
                is_loopback(&url)
                    || self
                        .allowed
                        .iter()
                        .any(|a| *a == url.origin().ascii_serialization())
            }
            _ => false,
        }
    }

    /// Whether a request with this `Origin` may go on: allowed, or the same origin as the (already
    /// checked) `Host`, or `null` on the consent form's POST.
    fn admits(&self, origin: &str, host: Option<&str>, method: &Method, path: &str) -> bool {
        if origin == "null" {
            return method == Method::POST && path == CONSENT_PATH;
        }
        let same_origin = host.is_some_and(|host| {
            Url::parse(origin).is_ok_and(|url| {
                let authority = match url.port() {
                    Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
                    None => url.host_str().unwrap_or_default().to_owned(),
                };
                matches!(url.scheme(), "http" | "https") && authority.eq_ignore_ascii_case(host)
            })
        });
        same_origin || self.allows(origin)
    }
}

/// A refusal a person may meet in the browser (on the consent page) is a page that says what to
/// do; other clients get one plain line.
fn refused(
    path: &str,
    title: &'static str,
    page_text: &'static str,
    line: &'static str,
) -> HttpError {
    if path == CONSENT_PATH {
        HttpError::Page {
            status: StatusCode::FORBIDDEN,
            title,
            message: page_text.into(),
        }
    } else {
        HttpError::Forbidden(line)
    }
}

/// A whole request gets `limit` to be answered; then 408.
pub async fn deadline(
    State(limit): State<std::time::Duration>,
    req: Request,
    next: Next,
) -> Response {
    tokio::time::timeout(limit, next.run(req))
        .await
        .unwrap_or_else(|_| HttpError::Timeout.into_response())
}

/// The request's Host header (HTTP/2's `:authority` was copied there by `client_addr`).
fn host_of(req: &Request) -> Option<&str> {
    req.headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
}

pub async fn check_host(
    State(policy): State<Arc<HostPolicy>>,
    req: Request,
    next: Next,
) -> Response {
    if host_of(&req).is_some_and(|h| policy.allows(h)) {
        return next.run(req).await;
    }
    refusal::refused(Reason::Host, Some(host_of(&req).unwrap_or("(none)")));
    refused(
        req.uri().path(),
        "Unknown address",
        "This gateway does not answer under the address in your browser's address bar. Open the \
         connector link from the app again; if you reach the gateway through a tunnel or proxy, the \
         owner adds its host name to server.allowed_hosts.",
        "Host header is not allowed\n",
    )
    .into_response()
}

pub async fn check_origin(
    State(policy): State<Arc<OriginPolicy>>,
    req: Request,
    next: Next,
) -> Response {
    let host = host_of(&req);
    let admitted = match req.headers().get(header::ORIGIN) {
        None => true,
        Some(origin) => origin
            .to_str()
            .is_ok_and(|o| policy.admits(o, host, req.method(), req.uri().path())),
    };
    if admitted {
        return next.run(req).await;
    }
    let origin = req
        .headers()
        .get(header::ORIGIN)
        .map(|o| String::from_utf8_lossy(o.as_bytes()).into_owned());
    refusal::refused(Reason::Origin, origin.as_deref());
    refused(
        req.uri().path(),
        "Request from another site",
        "The browser says this form was sent from another site, so it was not accepted. Open the \
         connector link from the app again. If you reach the gateway through a tunnel or proxy, \
         the owner sets server.public_url to the address shown in your browser's address bar.",
        "Origin not allowed\n",
    )
    .into_response()
}

/// What each caller of `/mcp` may do: requests, and bytes sent (`limits.mcp_bytes_per_hour`: a
/// write token adding and deleting large items again and again, each delete keeping the removed
/// text in the audit log, is held to it).
#[derive(Debug)]
pub struct CallerLimits {
    pub requests: RateLimiter,
    pub bytes: RateLimiter,
    /// What a request without a Content-Length is charged: the largest body it may have.
    pub max_body: u64,
}

/// After the bearer check: limit each token separately, so one busy client cannot starve others.
pub async fn rate_limit(
    State(limits): State<Arc<CallerLimits>>,
    req: Request,
    next: Next,
) -> Response {
    // By grant (an OAuth connection keeps its bucket across refreshes, which mint new token ids)
    // or, for tokens from the command line, by the name the owner gave them.
    let key = req
        .extensions()
        .get::<Principal>()
        .map(Principal::owner_key)
        .unwrap_or_default();
    let size = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(limits.max_body);
    let now = Instant::now();
    let allowed = limits
        .requests
        .take(&key, now)
        .and_then(|()| limits.bytes.take_n(&key, size as f64, now));
    match allowed {
        Ok(()) => next.run(req).await,
        Err(wait) => HttpError::TooManyRequests(wait).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let base = PublicBase::new(
            "https://copyq.example.com/",
            false,
            "127.0.0.1:8765".parse().unwrap(),
        );
        let p = OriginPolicy::new(&base, &["https://app.example".into()]);
        for ok in [
            "http://localhost:6274",
            "http://127.0.0.1:8765",
            "http://[::1]",
            "https://copyq.example.com",
            "https://app.example",
        ] {
            assert!(p.allows(ok), "{ok}");
        }
        for bad in [
            "https://evil.example",
            "http://evil.example.com",
            "null",
            "file://",
            "https://copyq.example.com.evil.example",
        ] {
            assert!(!p.allows(bad), "{bad}");
        }
        assert!(OriginPolicy::new(&base, &["*".into()]).allows("https://evil.example"));
    }

    #[test]
    fn same_origin_and_the_consent_form() {
        let base = PublicBase::new("", false, "127.0.0.1:8765".parse().unwrap());
        let p = OriginPolicy::new(&base, &[]);
        let post = Method::POST;
        // A LAN name the owner allowed: the page's own origin equals its Host.
        assert!(p.admits(
            "https://desk.lan:8765",
            Some("desk.lan:8765"),
            &post,
            "/mcp"
        ));
        assert!(p.admits("https://DESK.lan", Some("desk.lan"), &post, "/register"));
        assert!(!p.admits(
            "https://desk.lan:8766",
            Some("desk.lan:8765"),
            &post,
            "/mcp"
        ));
        assert!(!p.admits(
            "https://evil.example",
            Some("desk.lan"),
            &post,
            "/authorize"
        ));
        // `null` only for the consent form's POST, which its CSRF token protects.
        assert!(p.admits("null", Some("127.0.0.1:8765"), &post, "/authorize"));
        assert!(!p.admits("null", Some("127.0.0.1:8765"), &Method::GET, "/authorize"));
        assert!(!p.admits("null", Some("127.0.0.1:8765"), &post, "/token"));
        assert!(!p.admits("null", Some("127.0.0.1:8765"), &post, "/mcp"));
    }

    #[test]
    fn hosts() {
        let p = HostPolicy::new(Some(vec![
            "localhost".into(),
            "::1".into(),
            "Desk.LAN".into(),
        ]));
        for ok in ["localhost:8765", "LOCALHOST", "[::1]:8765", "desk.lan:443"] {
            assert!(p.allows(ok), "{ok}");
        }
        for bad in ["evil.example", "localhost.evil.example", "[::2]", ""] {
            assert!(!p.allows(bad), "{bad}");
        }
        assert!(HostPolicy::new(None).allows("anything"));
    }
}
