//! `tools/call` answered without rmcp's per-request machinery, for the stateless POSTs that
//! make up nearly all of the traffic.
//!
//! Why: for every stateless request rmcp builds a peer and its channels, spawns a task to run a
//! one-message service, which spawns another for the handler, and hands the answer back through
//! two channels; for a tool call that reads one item from CopyQ's socket that was about 0.15 ms
//! of the gateway's 0.4 ms (issue 22's "+0.5 ms over the floor"). Here the call runs in the
//! request's own task and its answer is written straight back.
//!
//! It answers only what it can answer exactly as rmcp would, and hands everything else to rmcp
//! unchanged (the body it read goes with it): a POST whose `Accept` names `application/json` and
//! `text/event-stream` with no parameters, whose `Content-Type` is `application/json`, with a
//! `Content-Length` no larger than `[server] max_body_bytes`, an `MCP-Protocol-Version` that is
//! absent or a version rmcp knows from before 2026-07-28 (the ones with per-request metadata and
//! standard headers to check), and a body that is one JSON-RPC `tools/call` request without a
//! protocol version in its `_meta`. For such a request rmcp's checks all pass and its answer is
//! the handler's result or error as a `200 application/json` JSON-RPC message: the same
//! [`CopyqMcp::call`] makes it here, serialised from the same types. With `[server] sessions` on
//! this layer is not installed.
//!
//! Cancellation: the call runs in the request's task, so a request dropped (client gone, the
//! deadline) stops a read where it is, which the socket backend is built for (a cancelled caller
//! never leaves half a frame). A write does not stop: it runs to its end in a task of its own
//! ([`crate::mcp`]'s write path), as it does under rmcp.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, GetMeta, ProtocolVersion, ServerJsonRpcMessage,
    ServerResult,
};

use crate::auth::Principal;
use crate::mcp::CopyqMcp;

const JSON: &str = "application/json";
const EVENT_STREAM: &str = "text/event-stream";
const PROTOCOL_VERSION: &str = "mcp-protocol-version";

/// What the layer needs: the handler and the largest body rmcp would take.
pub struct Direct {
    pub mcp: CopyqMcp,
    pub max_body: usize,
}

/// The layer: see the module's comment.
pub async fn tool_call(State(direct): State<Arc<Direct>>, req: Request, next: Next) -> Response {
    let Some(version) = eligible(req.headers(), direct.max_body) else {
        return next.run(req).await;
    };
    let (parts, body) = req.into_parts();
    let bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        // What rmcp answers when it cannot read a body.
        Err(e) => {
            return (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Failed to read request body: {e}"),
            )
                .into_response();
        }
    };
    let Some((id, params)) = call_of(&bytes) else {
        return next
            .run(Request::from_parts(parts, Body::from(bytes)))
            .await;
    };
    let principal = parts.extensions.get::<Principal>();
    let structured = direct.mcp.structured_at(&version);
    let message = match direct.mcp.call(params, principal, structured).await {
        Ok(response) => {
            // What rmcp's handler does to every result for a peer before 2026-07-28.
            let mut result = ServerResult::from(response);
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            ServerJsonRpcMessage::response(result, id)
        }
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    };
    match serde_json::to_vec(&message) {
        Ok(body) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, HeaderValue::from_static(JSON))],
            body,
        )
            .into_response(),
        Err(e) => {
            // rmcp's answer and log line for it, word for word; a result that cannot be
            // serialised is a bug.
            tracing::error!("Internal server error when serialize json response: {e}");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Encounter an error when serialize json response: {e}"),
            )
                .into_response()
        }
    }
}

/// The protocol version a request is answered at when its headers are ones this path answers
/// exactly as rmcp would (see the module's comment); `None` sends it to rmcp.
fn eligible(headers: &HeaderMap, max_body: usize) -> Option<ProtocolVersion> {
    if !accepts_both(headers) || !is_json(headers) {
        return None;
    }
    let length = headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse::<usize>()
        .ok()?;
    if length > max_body {
        return None;
    }
    let mut versions = headers.get_all(PROTOCOL_VERSION).iter();
    let version = match (versions.next(), versions.next()) {
        (None, _) => return Some(ProtocolVersion::V_2025_03_26),
        (Some(value), None) => value.to_str().ok()?,
        (Some(_), Some(_)) => return None,
    };
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|known| known.as_str() == version)
        .filter(|known| known.as_str() < ProtocolVersion::STANDARD_HEADERS.as_str())
        .cloned()
}

/// `Accept` names both media types, and nothing in it carries a parameter (a `q=0` would refuse
/// a type: rmcp weighs those, this path does not).
fn accepts_both(headers: &HeaderMap) -> bool {
    let (mut json, mut events) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for entry in value.split(',') {
            let entry = entry.trim();
            if entry.contains(['"', ';']) {
                return false;
            }
            json |= entry.eq_ignore_ascii_case(JSON);
            events |= entry.eq_ignore_ascii_case(EVENT_STREAM);
        }
    }
    json && events
}

fn is_json(headers: &HeaderMap) -> bool {
    let mut types = headers.get_all(header::CONTENT_TYPE).iter();
    let (Some(value), None) = (types.next(), types.next()) else {
        return false;
    };
    value.to_str().is_ok_and(|value| {
        let essence = value.split_once(';').map_or(value, |(essence, _)| essence);
        essence.trim().eq_ignore_ascii_case(JSON)
    })
}

/// The id and parameters of a body that is one `tools/call` request without a protocol version
/// in its `_meta`.
fn call_of(bytes: &Bytes) -> Option<(rmcp::model::RequestId, rmcp::model::CallToolRequestParams)> {
    // Most bodies that are not a tool call are turned away before a parse.
    if !bytes.windows(10).any(|w| w == b"tools/call") {
        return None;
    }
    let message = serde_json::from_slice::<ClientJsonRpcMessage>(bytes).ok()?;
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    if request.request.get_meta().protocol_version().is_some() {
        return None;
    }
    match request.request {
        ClientRequest::CallToolRequest(call) => Some((request.id, call.params)),
        _ => None,
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
