//! `GET /healthz`: whether the gateway is up and CopyQ answers, and through which backend and
//! which CopyQ (version or socket layout, when known). No auth, no other details.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::backend::Health;
use crate::mcp::Tools;

/// A health check must answer quickly even when CopyQ hangs.
const PING_TIMEOUT: Duration = Duration::from_secs(3);

pub async fn healthz(State(tools): State<Arc<Tools>>) -> (StatusCode, Json<Value>) {
    let health = tokio::time::timeout(PING_TIMEOUT, tools.backend.health())
        .await
        .unwrap_or_else(|_| Health::down(tools.backend.name()));
    let (status, fields) = if health.up {
        (StatusCode::OK, json!({"status": "ok", "copyq": "up"}))
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            json!({"status": "degraded", "copyq": "down"}),
        )
    };
    let mut body = serde_json::to_value(&health).unwrap_or_default();
    if let (Value::Object(body), Value::Object(fields)) = (&mut body, fields) {
        body.extend(fields);
    }
    (status, Json(body))
}
