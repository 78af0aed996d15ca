//! Discovery: protected-resource metadata (RFC 9728) for `/mcp`, and authorization-server metadata
//! (RFC 8414). Every URL is built from the issuer the request is answered as (the public URL, or
//! the loopback name the client used).

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde_json::{Value, json};

use super::grant_type::GrantType;
use super::{OAuthState, resource};

pub async fn protected_resource(
    State(s): State<Arc<OAuthState>>,
    headers: HeaderMap,
) -> Json<Value> {
    let issuer = s.issuer(&headers);
    Json(json!({
        "resource": resource(&issuer),
        "authorization_servers": [issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["read", "write"],
        "resource_name": "copyq-mcp",
    }))
}

pub async fn authorization_server(
    State(s): State<Arc<OAuthState>>,
    headers: HeaderMap,
) -> Json<Value> {
    let issuer = s.issuer(&headers);
    let url = |path: &str| format!("{issuer}{path}");
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": url("/authorize"),
        "token_endpoint": url("/token"),
        "registration_endpoint": url("/register"),
        "revocation_endpoint": url("/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": GrantType::ALL.map(GrantType::as_str),
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "scopes_supported": ["read", "write"],
        "authorization_response_iss_parameter_supported": true,
        // An https client_id is a client-ID metadata document, fetched and checked (cimd.rs).
        // Claude uses one only when this is true and `none` is an auth method above.
        "client_id_metadata_document_supported": true,
        "service_documentation": "https://github.com/copyq-mcp/copyq-mcp#readme",
    }))
}
