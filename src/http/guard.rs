//! Request guards in front of every route: the Origin check against DNS rebinding and cross-site
//! requests (a browser page elsewhere must not drive the gateway), and the per-token rate limit.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use url::Url;

use crate::auth::Principal;
use crate::oauth::is_loopback;

/// Which `Origin` headers are accepted: loopback origins (any port), the gateway's own public
/// origin, and configured ones. Requests without `Origin` (non-browser clients) pass.
#[derive(Debug, Clone)]
pub struct OriginPolicy {
    allowed: Vec<String>,
    any: bool,
}

impl OriginPolicy {
    pub fn new(public_url: &str, configured: &[String]) -> Self {
        let mut allowed: Vec<String> = configured
            .iter()
            .filter(|o| *o != "*")
            .map(|o| o.trim_end_matches('/').to_owned())
            .collect();
        if let Ok(url) = Url::parse(public_url) {
            allowed.push(url.origin().ascii_serialization());
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
}

pub async fn check_origin(
    State(policy): State<Arc<OriginPolicy>>,
    req: Request,
    next: Next,
) -> Response {
    let refused = req
        .headers()
        .get(header::ORIGIN)
        .is_some_and(|o| !o.to_str().is_ok_and(|o| policy.allows(o)));
    if refused {
        tracing::warn!("request with a foreign Origin refused");
        return (StatusCode::FORBIDDEN, "Origin not allowed\n").into_response();
    }
    next.run(req).await
}

/// A token bucket per token id: `burst` requests at once, refilled at `per_minute`.
#[derive(Debug)]
pub struct RateLimiter {
    per_minute: f64,
    burst: f64,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimiter {
    pub fn new(per_minute: u32, burst: u32) -> Self {
        Self {
            per_minute: f64::from(per_minute),
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

/// After the bearer check: limit each token separately, so one busy client cannot starve others.
pub async fn rate_limit(
    State(limiter): State<Arc<RateLimiter>>,
    req: Request,
    next: Next,
) -> Response {
    let key = req
        .extensions()
        .get::<Principal>()
        .map(|p| p.token_id.clone())
        .unwrap_or_default();
    match limiter.take(&key, Instant::now()) {
        Ok(()) => next.run(req).await,
        Err(wait) => {
            let mut res = (StatusCode::TOO_MANY_REQUESTS, "Too many requests\n").into_response();
            let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
            if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
                res.headers_mut().insert(header::RETRY_AFTER, v);
            }
            res
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins() {
        let p = OriginPolicy::new(
            "https://copyq.example.com/",
            &["https://app.example".into()],
        );
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
        assert!(OriginPolicy::new("", &["*".into()]).allows("https://evil.example"));
    }

    #[test]
    fn buckets_are_per_token_and_refill() {
        let l = RateLimiter::new(60, 2);
        let t = Instant::now();
        assert!(l.take("a", t).is_ok() && l.take("a", t).is_ok());
        let wait = l.take("a", t).unwrap_err();
        assert!(wait <= Duration::from_secs(1) && wait > Duration::ZERO);
        assert!(l.take("b", t).is_ok(), "another token is not affected");
        assert!(l.take("a", t + Duration::from_secs(1)).is_ok(), "refilled");
    }
}
