//! `GET /healthz`: whether the gateway is up and CopyQ answers. No auth, no details beyond that.

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::mcp::Tools;

/// A health check must answer quickly even when CopyQ hangs.
const PING_TIMEOUT: Duration = Duration::from_secs(3);

pub async fn healthz(State(tools): State<Arc<Tools>>) -> (StatusCode, Json<Value>) {
    let up = matches!(
        tokio::time::timeout(PING_TIMEOUT, tools.backend.ping()).await,
        Ok(Ok(()))
    );
    if up {
        (StatusCode::OK, Json(json!({"status": "ok", "copyq": "up"})))
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "degraded", "copyq": "down"})),
        )
    }
}
