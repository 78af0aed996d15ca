//! The gateway as its own OAuth 2.1 authorization server, so that Claude and ChatGPT connectors can
//! connect: discovery (RFC 9728, RFC 8414), dynamic client registration (RFC 7591), the
//! authorization-code flow with PKCE S256 and a consent page where the owner enters a passphrase and
//! picks the role, token issue with rotating refresh tokens, and revocation (RFC 7009). Access tokens
//! are the same role JWTs as the CLI issues, bound to the resource URL and to the grant.

// Handlers return `Result<_, Response>`: the error is the HTTP answer itself, built once per request.
#![allow(clippy::result_large_err)]

mod authorize;
mod consent;
mod metadata;
pub mod passphrase;
mod redirect;
mod register;
mod token;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

pub use redirect::{RedirectPolicy, is_loopback};

use crate::auth::TokenService;
use crate::store::Store;

/// An authorization request waiting for the owner's consent (in memory: a restart just means the
/// owner starts again from the app).
#[derive(Debug, Clone)]
pub struct Pending {
    pub client_id: String,
    pub client_name: String,
    pub redirect_uri: String,
    pub state: Option<String>,
    pub challenge: String,
    pub csrf: String,
    pub created: std::time::Instant,
}

/// How long a consent page stays valid.
const PENDING_TTL: Duration = Duration::from_secs(10 * 60);
const MAX_PENDING: usize = 256;

#[derive(Debug)]
pub struct OAuthState {
    pub store: Arc<Store>,
    pub tokens: Arc<TokenService>,
    /// The issuer: the public base URL, without a trailing slash.
    pub issuer: String,
    /// The protected resource: `<issuer>/mcp`.
    pub resource: String,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    pub redirects: RedirectPolicy,
    pub max_clients: usize,
    pending: Mutex<HashMap<String, Pending>>,
    limiter: Mutex<passphrase::Limiter>,
}

impl OAuthState {
    #[allow(clippy::too_many_arguments)] // plain settings, named at the one call site
    pub fn new(
        store: Arc<Store>,
        tokens: Arc<TokenService>,
        issuer: String,
        access_ttl: Duration,
        refresh_ttl: Duration,
        redirects: RedirectPolicy,
        max_clients: usize,
    ) -> Self {
        let issuer = issuer.trim_end_matches('/').to_owned();
        Self {
            store,
            tokens,
            resource: format!("{issuer}/mcp"),
            issuer,
            access_ttl,
            refresh_ttl,
            redirects,
            max_clients,
            pending: Mutex::new(HashMap::new()),
            limiter: Mutex::new(passphrase::Limiter::default()),
        }
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<String, Pending>> {
        let mut map = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, p| p.created.elapsed() < PENDING_TTL);
        map
    }

    fn limiter(&self) -> MutexGuard<'_, passphrase::Limiter> {
        self.limiter.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the protected-resource metadata of `/mcp` lives (for `WWW-Authenticate`).
    pub fn resource_metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.issuer)
    }
}

/// An OAuth error response (RFC 6749 5.2 / RFC 7591 3.2.2), never cached.
fn error(status: StatusCode, code: &str, description: &str) -> Response {
    let mut res = (
        status,
        axum::Json(json!({"error": code, "error_description": description})),
    )
        .into_response();
    no_store(&mut res);
    res
}

fn no_store(res: &mut Response) {
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res.headers_mut()
        .insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
}

pub fn router(state: Arc<OAuthState>) -> Router {
    Router::new()
        .route(
            "/.well-known/oauth-protected-resource",
            get(metadata::protected_resource),
        )
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(metadata::protected_resource),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(metadata::authorization_server),
        )
        .route("/register", post(register::register))
        .route("/authorize", get(authorize::show).post(authorize::decide))
        .route("/token", post(token::token))
        .route("/revoke", post(token::revoke))
        .with_state(state)
}
