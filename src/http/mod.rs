//! The HTTP surface: `/mcp` (rmcp's Streamable HTTP service behind the bearer check),
//! `/healthz` (no auth) and, when enabled, the OAuth endpoints. Nothing else answers.

mod bearer;
mod client;
pub mod conn;
mod cors;
mod direct;
pub mod error;
mod guard;
mod health;
mod metrics;
pub mod page;
mod sessions;
mod unread;

pub use crate::limit::RateLimiter;
pub use bearer::AuthState;
use bearer::require_bearer;
pub use client::TrustedProxies;
pub use error::HttpError;
pub use guard::{HostPolicy, OriginPolicy};

use std::net::IpAddr;
use std::sync::Arc;

use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower::ServiceBuilder;
use tower_http::trace::TraceLayer;

use crate::config::{LimitSettings, ServerSettings};
use crate::mcp::{CopyqMcp, ToolState};

const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The Host names every route accepts: loopback, the configured names, the public URL's host, and
/// a specific bind address.
pub fn allowed_hosts(server: &ServerSettings) -> Option<Vec<String>> {
    if server.allowed_hosts.iter().any(|h| h == "*") {
        return None;
    }
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    hosts.extend(server.allowed_hosts.iter().cloned());
    if let Some(host) = url::Url::parse(&server.public_url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.trim_matches(['[', ']']).to_owned()))
    {
        hosts.push(host);
    }
    let ip = server.bind.ip();
    if !ip.is_unspecified() && !ip.is_loopback() {
        hosts.push(match ip {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => v6.to_string(),
        });
    }
    Some(hosts)
}

/// Everything the HTTP surface is built from.
pub struct Surface<'a> {
    pub tools: Arc<ToolState>,
    pub auth: AuthState,
    /// The OAuth routes, when OAuth is on: served behind the same layers as the rest.
    pub oauth: Option<Router>,
    pub origins: OriginPolicy,
    pub limiter: RateLimiter,
    pub proxies: TrustedProxies,
    pub server: &'a ServerSettings,
    pub limits: &'a LimitSettings,
    pub shutdown: CancellationToken,
}

/// rmcp's Streamable HTTP service, serving `/mcp` as `[server]` says (sessions, body size, the
/// hosts it answers for).
fn mcp_service(
    tools: &Arc<ToolState>,
    server: &ServerSettings,
    hosts: Option<Vec<String>>,
    shutdown: CancellationToken,
) -> StreamableHttpService<CopyqMcp, LocalSessionManager> {
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(server.sessions)
        .with_json_response(true)
        .with_max_request_body_bytes(server.max_body_bytes)
        .with_cancellation_token(shutdown);
    let config = match hosts {
        Some(hosts) => config.with_allowed_hosts(hosts),
        None => config.disable_allowed_hosts(),
    };
    let handler_tools = tools.clone();
    let sessions = server.sessions;
    StreamableHttpService::new(
        move || Ok(CopyqMcp::new(handler_tools.clone()).with_sessions(sessions)),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

pub fn router(surface: Surface<'_>) -> Router {
    let Surface {
        tools,
        auth,
        oauth,
        origins,
        limiter,
        proxies,
        server,
        limits,
        shutdown,
    } = surface;
    let hosts = allowed_hosts(server);
    let mcp = mcp_service(&tools, server, hosts.clone(), shutdown);
    // Layers run outside-in: the bearer check first, then the per-caller rate limit, then (with
    // sessions on) the check that a session is the caller's own, or (without) the direct
    // answer to a tool call.
    let mut protected = Router::new().route_service("/mcp", mcp);
    protected = if server.sessions {
        protected.route_layer(from_fn_with_state(
            Arc::new(sessions::SessionOwners::default()),
            sessions::bind_sessions,
        ))
    } else {
        protected.route_layer(from_fn_with_state(
            Arc::new(direct::Direct {
                mcp: CopyqMcp::new(tools.clone()),
                max_body: server.max_body_bytes,
            }),
            direct::tool_call,
        ))
    };
    let auth_for_metrics = auth.clone();
    let protected = protected
        .route_layer(from_fn_with_state(
            Arc::new(guard::CallerLimits {
                requests: limiter,
                bytes: RateLimiter::bytes_per_hour(
                    limits.mcp_bytes_per_hour,
                    // A quarter of the hour at once, and always one largest body.
                    (limits.mcp_bytes_per_hour / 4).max(server.max_body_bytes as u64),
                ),
                max_body: server.max_body_bytes as u64,
            }),
            guard::rate_limit,
        ))
        .route_layer(from_fn_with_state(auth, require_bearer));
    let health = Arc::new(health::HealthState::new(tools.clone()));
    let mut app = Router::new()
        .route("/healthz", get(health::healthz))
        .with_state(health.clone())
        .merge(protected);
    if let Some(registry) = &tools.metrics {
        let state = metrics::MetricsState {
            metrics: registry.clone(),
            health,
            auth: auth_for_metrics,
        };
        app = app.merge(
            Router::new()
                .route("/metrics", get(metrics::metrics))
                .with_state(Arc::new(state)),
        );
    }
    if let Some(oauth) = oauth {
        app = app.merge(oauth.layer(DefaultBodyLimit::max(limits.max_form_bytes)));
    }
    // The layers every request goes through wrap the routes once, as one service, behind a
    // router of nothing but it: `Router::layer` boxes each layer around each route, and each
    // `from_fn` layer clones what it wraps per request, so a request made about 56 boxed clones
    // of the stack (113K of a ping's 324K instructions).
    // Outermost first: the request span, the deadline, who the client is, the count (outside
    // the Host and Origin checks, so that their refusals count too), the Host check, then Origin
    // (which relies on the Host being checked), then CORS.
    let layered = ServiceBuilder::new()
        // The request span names the method, the path and the client (recorded by
        // `client_addr`: the forwarded address behind a trusted proxy) only: a query may hold a
        // token (a client trying `?access_token=`), and the path is escaped to one bounded line.
        // It is at info so that every info line of a request (a tool call, a refusal) says whose
        // it was. A 5xx is logged where it is made, once (a 503 `/healthz` while CopyQ is down is
        // not an error line per probe): the layer's own failure line is debug.
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(|req: &axum::http::Request<_>| {
                    tracing::info_span!(
                        "request",
                        method = %req.method(),
                        path = %crate::logging::field(req.uri().path()),
                        client = tracing::field::Empty,
                    )
                })
                .on_failure(
                    tower_http::trace::DefaultOnFailure::new().level(tracing::Level::DEBUG),
                ),
        )
        .layer(from_fn_with_state(
            Duration::from_millis(limits.request_timeout_ms),
            guard::deadline,
        ))
        .layer(from_fn_with_state(Arc::new(proxies), client::client_addr))
        .layer(axum::middleware::from_fn(unread::close_if_unread))
        .option_layer(
            tools
                .metrics
                .as_ref()
                .map(|registry| from_fn_with_state(registry.clone(), metrics::record)),
        )
        .layer(from_fn_with_state(
            Arc::new(HostPolicy::new(hosts)),
            guard::check_host,
        ))
        .layer(from_fn_with_state(Arc::new(origins), guard::check_origin))
        .option_layer(cors::layer(&server.allowed_origins))
        .service(app);
    Router::new().fallback_service(layered)
}
