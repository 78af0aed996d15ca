//! The bearer check in front of `/mcp`. A valid token puts a [`Principal`](super::Principal) on the
//! request; anything else is a 401 with `WWW-Authenticate` that says nothing about why.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::TokenService;

/// The token from `Authorization: Bearer <token>` (scheme case-insensitive).
fn bearer(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn unauthorized(challenge: &'static str) -> Response {
    let mut res = (StatusCode::UNAUTHORIZED, "Unauthorized\n").into_response();
    res.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    res
}

pub async fn require_bearer(
    State(tokens): State<Arc<TokenService>>,
    mut req: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer(&req) else {
        return unauthorized(r#"Bearer realm="copyq-mcp""#);
    };
    match tokens.verify(token) {
        Ok(principal) => {
            req.extensions_mut().insert(principal);
            next.run(req).await
        }
        Err(_) => unauthorized(r#"Bearer realm="copyq-mcp", error="invalid_token""#),
    }
}
