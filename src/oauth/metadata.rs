//! Discovery: protected-resource metadata (RFC 9728) for `/mcp`, and authorization-server metadata
//! (RFC 8414). Every URL is built from the configured public base URL.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use serde_json::{Value, json};

use super::OAuthState;

pub async fn protected_resource(State(s): State<Arc<OAuthState>>) -> Json<Value> {
    Json(json!({
        "resource": s.resource,
        "authorization_servers": [s.issuer],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["read", "write"],
        "resource_name": "copyq-mcp",
    }))
}

pub async fn authorization_server(State(s): State<Arc<OAuthState>>) -> Json<Value> {
    let url = |path: &str| format!("{}{path}", s.issuer);
    Json(json!({
        "issuer": s.issuer,
        "authorization_endpoint": url("/authorize"),
        "token_endpoint": url("/token"),
        "registration_endpoint": url("/register"),
        "revocation_endpoint": url("/revoke"),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
        "scopes_supported": ["read", "write"],
        "authorization_response_iss_parameter_supported": true,
        "service_documentation": "https://github.com/copyq-mcp/copyq-mcp#readme",
    }))
}
