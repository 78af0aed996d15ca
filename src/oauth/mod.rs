//! The gateway as its own OAuth 2.1 authorization server, so that Claude and ChatGPT connectors can
//! connect: discovery (RFC 9728, RFC 8414), dynamic client registration (RFC 7591), the
//! authorization-code flow with PKCE S256 and a consent page where the owner enters a passphrase and
//! picks the role, token issue with rotating refresh tokens, and revocation (RFC 7009). Access tokens
//! are the same role JWTs as the CLI issues, bound to the resource URL and to the grant.

mod authorize;
pub(crate) mod cimd;
mod consent;
mod grant_type;
mod metadata;
pub mod passphrase;
mod pending;
mod redirect;
mod register;
mod token;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};

pub(crate) use consent::ClientLabel;
use consent::Consent;
pub(crate) use pending::Pending;
use pending::Requests;
pub(crate) use redirect::RedirectPolicy;

use crate::auth::TokenService;
use crate::http::HttpError;
use crate::http::error::no_store;
use crate::limit::RateLimiter;
use crate::public::PublicBase;
use crate::store::Store;

#[derive(Debug)]
pub(crate) struct OAuthState {
    pub store: Arc<Store>,
    pub tokens: Arc<TokenService>,
    /// The issuer for a request: the public base URL, without a trailing slash.
    pub base: PublicBase,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    pub redirects: RedirectPolicy,
    pub max_clients: usize,
    /// `[privacy] redact`, which the consent page states.
    pub redact: crate::privacy::Redact,
    /// `[privacy] external_images`, which the consent page states too.
    pub external_images: bool,
    pending: Mutex<Requests>,
    documents: cimd::Fetcher,
    guesses: passphrase::Guesses,
    /// Registrations per client address (`/register` and new metadata-document clients).
    registrations: RateLimiter,
    /// Unapproved registered clients per client address.
    unapproved: register::Holdings,
    /// Consent requests opened per client address.
    openings: RateLimiter,
}

/// The settings an [`OAuthState`] is built from.
#[derive(Debug, Clone)]
pub(crate) struct OAuthConfig {
    pub base: PublicBase,
    pub access_ttl: Duration,
    pub refresh_ttl: Duration,
    pub redirects: RedirectPolicy,
    pub max_clients: usize,
    pub registrations_per_hour: u32,
    pub authorize_per_minute: u32,
    pub documents: cimd::FetchOptions,
    pub redact: crate::privacy::Redact,
    pub external_images: bool,
}

impl OAuthState {
    /// Fails only when the metadata-document client cannot be built (a bad extra CA file).
    pub fn new(
        store: Arc<Store>,
        tokens: Arc<TokenService>,
        c: OAuthConfig,
    ) -> Result<Self, String> {
        Ok(Self {
            store,
            tokens,
            base: c.base,
            access_ttl: c.access_ttl,
            refresh_ttl: c.refresh_ttl,
            redirects: c.redirects,
            max_clients: c.max_clients,
            redact: c.redact,
            external_images: c.external_images,
            pending: Mutex::new(Requests::default()),
            documents: cimd::Fetcher::new(&c.documents)?,
            guesses: passphrase::Guesses::default(),
            registrations: RateLimiter::per_hour(
                c.registrations_per_hour,
                c.registrations_per_hour.clamp(1, 10),
            ),
            unapproved: register::Holdings::default(),
            openings: RateLimiter::new(c.authorize_per_minute, c.authorize_per_minute.min(20)),
        })
    }

    /// The consent page for `p`, with `role` selected.
    fn consent<'a>(
        &self,
        p: &'a Pending,
        request_id: &'a str,
        role: &'a str,
        message: Option<&'a str>,
    ) -> Consent<'a> {
        Consent {
            request_id,
            csrf: &p.csrf,
            client: &p.client,
            redirect_uri: &p.redirect_uri,
            message,
            role,
            tabs: "all",
            tab_list: "",
            access_ttl: self.access_ttl,
            refresh_ttl: self.refresh_ttl,
            // Whatever base the page is answered under: a trusted proxy's https one too.
            secure: p.issuer.starts_with("https://"),
            redact: self.redact,
            external_images: self.external_images,
        }
    }

    fn pending(&self) -> MutexGuard<'_, Requests> {
        let mut requests = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        requests.expire();
        requests
    }

    /// The issuer a request is answered as: the public URL, or the loopback name it used.
    pub fn issuer(&self, headers: &HeaderMap) -> String {
        self.base.for_headers(headers)
    }
}

/// The protected resource under `issuer`.
fn resource(issuer: &str) -> String {
    format!("{issuer}/mcp")
}

/// Whether a `resource` parameter names this server (the resource or the issuer itself).
fn is_this_resource(given: &str, issuer: &str) -> bool {
    let given = given.trim_end_matches('/');
    given == resource(issuer) || given == issuer
}

/// An OAuth error (RFC 6749 5.2 / RFC 7591 3.2.2), answered as JSON, never cached.
fn error(
    status: StatusCode,
    code: &'static str,
    description: impl Into<std::borrow::Cow<'static, str>>,
) -> HttpError {
    HttpError::oauth(status, code, description)
}

pub(crate) fn router(state: Arc<OAuthState>) -> Router {
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
