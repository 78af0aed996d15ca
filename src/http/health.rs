//! `GET /healthz`: whether the gateway is up and CopyQ answers, and through which backend and
//! which CopyQ (version or socket layout, when known). No auth, no other details.
//!
//! It needs no token, so it must cost an attacker's flood nothing: the answer comes from a probe
//! cached for [`FRESH_FOR`], at most one probe runs at a time (with the CLI backend a probe is a
//! `copyq` process), and each client address gets [`PER_MINUTE`] checks a minute.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{Value, json};

use super::HttpError;
use crate::backend::Health;
use crate::limit::{ClientAddr, RateLimiter};
use crate::mcp::ToolState;

/// A health check must answer quickly even when CopyQ hangs.
const PING_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one probe's answer is given out again.
pub const FRESH_FOR: Duration = Duration::from_secs(1);
/// What a down answer adds to where CopyQ was looked for (`tried`).
pub const DOWN_HELP: &str = "start CopyQ in the desktop session the gateway uses, or run `copyq-mcp doctor` where the gateway runs";
/// Checks per client address and minute (burst of 20).
pub const PER_MINUTE: u32 = 120;

/// The last probe and the lock that lets one probe run at a time.
pub struct HealthState {
    tools: Arc<ToolState>,
    last: tokio::sync::Mutex<Option<(Instant, Health)>>,
    limiter: RateLimiter,
}

impl HealthState {
    pub fn new(tools: Arc<ToolState>) -> Self {
        Self {
            tools,
            last: tokio::sync::Mutex::new(None),
            limiter: RateLimiter::new(PER_MINUTE, 20),
        }
    }

    /// CopyQ's health: the cached probe while fresh, else a new one. Callers arriving during a
    /// probe wait for it (the lock is held across the probe) and share its answer.
    pub(super) async fn health(&self) -> Health {
        let mut last = self.last.lock().await;
        if let Some((at, health)) = last.as_ref()
            && at.elapsed() < FRESH_FOR
        {
            return health.clone();
        }
        let backend = &self.tools.backend;
        let health = tokio::time::timeout(PING_TIMEOUT, backend.health())
            .await
            .unwrap_or_else(|_| Health {
                tried: Some(backend.target()),
                ..Health::down(backend.name())
            });
        let was_up = last.as_ref().map(|(_, h)| h.up);
        note_change(was_up, &health);
        *last = Some((Instant::now(), health.clone()));
        health
    }
}

/// One log line when CopyQ goes down or comes back, not one per probe: a poller checking every
/// second while CopyQ is down must not fill the log. The first probe logs only a down CopyQ.
fn note_change(was_up: Option<bool>, now: &Health) {
    match (was_up, now.up) {
        (Some(false), true) => {
            tracing::info!(backend = now.backend, "CopyQ answers again (/healthz: up)")
        }
        (Some(true) | None, false) => tracing::warn!(
            backend = now.backend,
            tried = %now.tried.as_deref().unwrap_or_default(),
            "CopyQ is not reachable (/healthz: down); `copyq-mcp doctor` shows what was tried"
        ),
        _ => {}
    }
}

pub async fn healthz(
    State(state): State<Arc<HealthState>>,
    addr: Option<Extension<ClientAddr>>,
) -> Response {
    let key = addr.map(|Extension(a)| a.key()).unwrap_or_default();
    if let Err(wait) = state.limiter.take(&key, Instant::now()) {
        return HttpError::TooManyRequests(wait).into_response();
    }
    let health = state.health().await;
    let (status, fields) = if health.up {
        (StatusCode::OK, json!({"status": "ok", "copyq": "up"}))
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "degraded", "copyq": "down", "help": DOWN_HELP}),
        )
    };
    let mut body = serde_json::to_value(&health).unwrap_or_default();
    if let (Value::Object(body), Value::Object(fields)) = (&mut body, fields) {
        body.extend(fields);
    }
    (status, Json(body)).into_response()
}
