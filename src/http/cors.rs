//! CORS for browser-based MCP clients, opt-in: only the origins in `server.allowed_origins` get
//! CORS headers (`*` there gives `Access-Control-Allow-Origin: *`, never with credentials: the
//! gateway takes its token in `Authorization`, not in cookies, so it never needs them). Preflights
//! are answered here, before the bearer check, since a browser sends them without a token.

use axum::http::{HeaderName, HeaderValue, Method, header};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The headers an MCP client sends (Streamable HTTP, the 2026-07-28 headers, OAuth).
const ALLOW_HEADERS: [&str; 8] = [
    "authorization",
    "content-type",
    "accept",
    "mcp-protocol-version",
    "mcp-session-id",
    "mcp-method",
    "mcp-name",
    "last-event-id",
];

/// The layer for these configured origins; `None` when no origin is configured.
pub fn layer(configured: &[String]) -> Option<CorsLayer> {
    if configured.is_empty() {
        return None;
    }
    let origin = if configured.iter().any(|o| o == "*") {
        AllowOrigin::any()
    } else {
        let list: Vec<HeaderValue> = configured
            .iter()
            .filter_map(|o| HeaderValue::from_str(o.trim_end_matches('/')).ok())
            .collect();
        AllowOrigin::list(list)
    };
    Some(
        CorsLayer::new()
            .allow_origin(origin)
            .allow_methods([Method::GET, Method::POST, Method::DELETE])
            .allow_headers(ALLOW_HEADERS.map(HeaderName::from_static))
            .expose_headers([
                header::WWW_AUTHENTICATE,
                HeaderName::from_static("mcp-session-id"),
            ])
            .max_age(std::time::Duration::from_secs(600)),
    )
}
