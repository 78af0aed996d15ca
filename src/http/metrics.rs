//! `GET /metrics` (Prometheus text) when `[metrics] enabled`, and the layer that counts and times
//! every HTTP request for it. The metrics name no client, token or tab, but they say how the
//! gateway is used, so they are answered to loopback clients (the forwarded address when a
//! trusted proxy relays: a tunnel does not make the world loopback) and to others only with a
//! valid bearer token; anyone else gets the same 401 as `/mcp`.

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::AuthState;
use super::health::HealthState;
use crate::limit::ClientAddr;
use crate::metrics::Metrics;

/// What `/metrics` needs: the registry, the cached CopyQ probe, and the bearer check.
pub struct MetricsState {
    pub metrics: Arc<Metrics>,
    pub health: Arc<HealthState>,
    pub auth: AuthState,
}

const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub async fn metrics(
    State(state): State<Arc<MetricsState>>,
    addr: Option<Extension<ClientAddr>>,
    headers: HeaderMap,
) -> Response {
    let loopback = addr.is_some_and(|Extension(a)| a.is_loopback());
    if !loopback && let Err(refusal) = state.auth.check(&headers).await {
        return refusal;
    }
    let health = state.health.health().await;
    let mut res = state
        .metrics
        .render(health.up, health.backend)
        .into_response();
    res.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
    res
}

/// Count and time every request (its route, method and status).
pub async fn record(State(metrics): State<Arc<Metrics>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let res = next.run(req).await;
    metrics.request(
        &path,
        method.as_str(),
        res.status().as_u16(),
        started.elapsed(),
    );
    res
}
