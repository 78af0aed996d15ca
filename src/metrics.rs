//! Prometheus metrics (`[metrics] enabled`), kept with `prometheus-client` in a registry of this
//! gateway's own (not a process-wide recorder: tests run several gateways in one process). Every
//! label takes values from a fixed set, whatever a client sends: a mode the tools do not know is
//! `other`, a route is one of the gateway's own, an outcome is `ok` or an error code.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Modes the tools know; any other is counted as `other`.
const MODES: &[&str] = &[
    "tree",
    "list",
    "item",
    "search",
    "add",
    "update",
    "delete",
    "move",
    "tab_create",
    "tab_delete",
];
/// Routes counted by their path; any other path is `other`.
const ROUTES: &[&str] = &[
    "/mcp",
    "/healthz",
    "/metrics",
    "/register",
    "/authorize",
    "/token",
    "/revoke",
];
/// The OAuth endpoints among [`ROUTES`].
const OAUTH: &[&str] = &["/register", "/authorize", "/token", "/revoke"];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Request {
    route: &'static str,
    method: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Route {
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ToolCall {
    tool: &'static str,
    mode: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Tool {
    tool: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct Backend {
    backend: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OAuthEvent {
    endpoint: &'static str,
    outcome: &'static str,
}

/// Latency buckets from 0.5 ms to about 16 s.
fn seconds() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 2.0, 16))
}

type Seconds<L> = Family<L, Histogram, fn() -> Histogram>;

/// The gateway's metrics and the registry they are encoded from.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    requests: Family<Request, Counter>,
    request_seconds: Seconds<Route>,
    tool_calls: Family<ToolCall, Counter>,
    tool_seconds: Seconds<Tool>,
    copyq_up: Gauge,
    backend: Family<Backend, Gauge>,
    oauth: Family<OAuthEvent, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("copyq_mcp");
        let requests = Family::<Request, Counter>::default();
        let request_seconds = Seconds::<Route>::new_with_constructor(seconds as fn() -> Histogram);
        let tool_calls = Family::<ToolCall, Counter>::default();
        let tool_seconds = Seconds::<Tool>::new_with_constructor(seconds as fn() -> Histogram);
        let copyq_up = Gauge::default();
        let backend = Family::<Backend, Gauge>::default();
        let oauth = Family::<OAuthEvent, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request",
            request_seconds.clone(),
        );
        registry.register("tool_calls", "MCP tool calls", tool_calls.clone());
        registry.register(
            "tool_call_duration_seconds",
            "Time to run an MCP tool call",
            tool_seconds.clone(),
        );
        registry.register(
            "copyq_up",
            "Whether CopyQ answers (1) or not (0)",
            copyq_up.clone(),
        );
        registry.register(
            "backend",
            "The backend serving CopyQ calls (1 for the one in use)",
            backend.clone(),
        );
        registry.register("oauth_events", "OAuth endpoint answers", oauth.clone());
        Self {
            registry,
            requests,
            request_seconds,
            tool_calls,
            tool_seconds,
            copyq_up,
            backend,
            oauth,
        }
    }

    /// One HTTP request, answered with `status` after `took`.
    pub fn request(&self, path: &str, method: &str, status: u16, took: Duration) {
        let route = ROUTES
            .iter()
            .find(|r| **r == path || path.strip_prefix(**r).is_some_and(|p| p.starts_with('/')))
            .copied()
            .unwrap_or(if path.starts_with("/.well-known/") {
                "/.well-known"
            } else {
                "other"
            });
        let method = match method {
            "GET" | "POST" | "DELETE" | "OPTIONS" | "HEAD" => method,
            _ => "other",
        };
        self.requests
            .get_or_create(&Request {
                route,
                method: method.to_owned(),
                status,
            })
            .inc();
        self.request_seconds
            .get_or_create(&Route { route })
            .observe(took.as_secs_f64());
        if OAUTH.contains(&route) {
            let outcome = match status {
                200..=399 => "ok",
                400..=499 => "refused",
                _ => "error",
            };
            self.oauth
                .get_or_create(&OAuthEvent {
                    endpoint: route,
                    outcome,
                })
                .inc();
        }
    }

    /// One tool call: `outcome` is `ok` or the error's code.
    pub fn tool_call(&self, tool: &str, mode: &str, outcome: &'static str, took: Duration) {
        let tool = match tool {
            "mcp_read" => "mcp_read",
            "mcp_write" => "mcp_write",
            "mcp_validate" => "mcp_validate",
            _ => "other",
        };
        let mode = MODES
            .iter()
            .find(|m| **m == mode)
            .copied()
            .unwrap_or("other");
        self.tool_calls
            .get_or_create(&ToolCall {
                tool,
                mode,
                outcome,
            })
            .inc();
        self.tool_seconds
            .get_or_create(&Tool { tool })
            .observe(took.as_secs_f64());
    }

    /// The text exposition, with CopyQ's state as the last probe found it.
    pub fn render(&self, copyq_up: bool, backend: &'static str) -> String {
        self.copyq_up.set(i64::from(copyq_up));
        for name in ["socket", "cli", "memory"] {
            self.backend
                .get_or_create(&Backend { backend: name })
                .set(i64::from(name == backend));
        }
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::warn!(error = %e, "cannot encode the metrics");
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_stay_in_their_sets() {
        let m = Metrics::new();
        m.tool_call("mcp_read", "list", "ok", Duration::from_millis(2));
        m.tool_call("mcp_read", "list\n{evil}", "ok", Duration::from_millis(2));
        m.request("/mcp", "POST", 200, Duration::from_millis(3));
        m.request("/no/such/../path", "BREW", 404, Duration::from_millis(1));
        m.request("/token", "POST", 400, Duration::from_millis(1));
        let text = m.render(true, "socket");
        assert!(
            text.contains(
                r#"copyq_mcp_tool_calls_total{tool="mcp_read",mode="list",outcome="ok"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"copyq_mcp_tool_calls_total{tool="mcp_read",mode="other",outcome="ok"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(
                r#"copyq_mcp_http_requests_total{route="other",method="other",status="404"} 1"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"copyq_mcp_oauth_events_total{endpoint="/token",outcome="refused"} 1"#),
            "{text}"
        );
        assert!(text.contains("copyq_mcp_copyq_up 1"), "{text}");
        assert!(
            text.contains(r#"copyq_mcp_backend{backend="socket"} 1"#),
            "{text}"
        );
        assert!(!text.contains("evil"), "{text}");
    }
}
