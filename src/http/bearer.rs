//! The bearer check in front of `/mcp`. A valid, unrevoked token puts a [`Principal`] on the
//! request; anything else is a 401 with `WWW-Authenticate` (pointing OAuth clients at the
//! protected-resource metadata) that says nothing about why.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::HttpError;
use crate::auth::{Principal, TokenService};
use crate::logging::refusal::{Reason, refused};
use crate::public::PublicBase;
use crate::store::Store;

/// What the bearer check needs.
#[derive(Debug, Clone)]
pub struct AuthState {
    pub tokens: Arc<TokenService>,
    pub store: Arc<Store>,
    /// When OAuth is on: the base URLs its protected-resource metadata lives under.
    pub oauth: Option<PublicBase>,
    /// Grants used since the last flush, with when: written in batches, off the request path.
    last_use: Arc<Mutex<HashMap<String, i64>>>,
}

/// How often the grants' last use is written.
const LAST_USE_FLUSH: Duration = Duration::from_secs(30);

impl AuthState {
    pub fn new(tokens: Arc<TokenService>, store: Arc<Store>, oauth: Option<PublicBase>) -> Self {
        Self {
            tokens,
            store,
            oauth,
            last_use: Arc::default(),
        }
    }

    /// Write the grants' last use every 30 s, and once more when `stop` fires. The
    /// write uses a connection of its own: while another process holds the database's write lock
    /// it may wait, and no request waits with it.
    pub fn flush_last_use(&self, stop: tokio_util::sync::CancellationToken) {
        let (store, last_use) = (self.store.clone(), self.last_use.clone());
        tokio::spawn(async move {
            let mut every = tokio::time::interval(LAST_USE_FLUSH);
            loop {
                let stopping = tokio::select! {
                    _ = stop.cancelled() => true,
                    _ = every.tick() => false,
                };
                let batch: Vec<(String, i64)> = {
                    let mut map = last_use.lock().unwrap_or_else(|e| e.into_inner());
                    map.drain().collect()
                };
                if !batch.is_empty() {
                    let store = store.clone();
                    match tokio::task::spawn_blocking(move || store.touch_grants_apart(&batch))
                        .await
                    {
                        Ok(Ok(())) => {}
                        Ok(Err(e)) => {
                            tracing::warn!(error = %e, "cannot record the grants' last use")
                        }
                        Err(e) => {
                            tracing::warn!(error = %e, "recording the grants' last use stopped")
                        }
                    }
                }
                if stopping {
                    return;
                }
            }
        });
    }

    /// `WWW-Authenticate` for a request (`invalid`: it had a bad token), pointing OAuth clients
    /// at the metadata under the base URL they used.
    fn challenge(&self, headers: &HeaderMap, invalid: bool) -> HeaderValue {
        let mut value = match &self.oauth {
            Some(base) => format!(
                r#"Bearer resource_metadata="{}/.well-known/oauth-protected-resource/mcp""#,
                base.for_headers(headers)
            ),
            None => r#"Bearer realm="copyq-mcp""#.to_owned(),
        };
        if invalid {
            value.push_str(r#", error="invalid_token""#);
        }
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static("Bearer"))
    }

    /// The caller of a request with this bearer token, if the token is valid and not revoked. The
    /// error is the 503 answer itself.
    #[allow(clippy::result_large_err)]
    async fn principal(&self, token: &str) -> Result<Option<Principal>, Response> {
        let principal = match self.tokens.verify_why(token) {
            Ok(principal) => principal,
            Err(reason) => {
                refused(reason, None);
                return Ok(None);
            }
        };
        // Asked here, through the store's reader connection, which never waits behind a write;
        // when the database is busy, off the async workers through the first connection.
        let allowed = match self
            .store
            .token_allowed_now(&principal.token_id, principal.grant.as_deref())
        {
            Ok(Some(allowed)) => Ok(allowed),
            Ok(None) => {
                let (store, jti, grant) = (
                    self.store.clone(),
                    principal.token_id.clone(),
                    principal.grant.clone(),
                );
                tokio::task::spawn_blocking(move || store.token_allowed(&jti, grant.as_deref()))
                    .await
                    .unwrap_or_else(|e| Err(crate::store::StoreError::Invalid(e.to_string())))
            }
            Err(e) => Err(e),
        };
        match allowed {
            Ok(true) => {
                if let Some(grant) = &principal.grant {
                    let mut map = self.last_use.lock().unwrap_or_else(|e| e.into_inner());
                    map.insert(grant.clone(), crate::store::now());
                }
                Ok(Some(principal))
            }
            Ok(false) => {
                refused(Reason::Revoked, Some(&principal.subject));
                Ok(None)
            }
            Err(e) => {
                tracing::error!(error = %e, "token store unavailable");
                Err(HttpError::Unavailable("Token store unavailable\n").into_response())
            }
        }
    }
}

/// The token from `Authorization: Bearer <token>` (scheme case-insensitive). Several
/// `Authorization` headers are malformed (RFC 9110): a proxy reading another one than we do would
/// see another caller.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let mut all = headers.get_all(header::AUTHORIZATION).iter();
    let value = all.next()?.to_str().ok()?;
    if all.next().is_some() {
        return None;
    }
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn unauthorized(challenge: HeaderValue) -> Response {
    HttpError::Unauthorized(challenge).into_response()
}

impl AuthState {
    /// The bearer check alone, for a route outside `/mcp` (`/metrics`): the caller, or the
    /// answer that refuses it (401, or 503 when the token store is unavailable).
    #[allow(clippy::result_large_err)]
    pub async fn check(&self, headers: &HeaderMap) -> Result<Principal, Response> {
        let Some(token) = bearer(headers) else {
            refused(Reason::NoToken, None);
            return Err(unauthorized(self.challenge(headers, false)));
        };
        match self.principal(token).await? {
            Some(principal) => Ok(principal),
            None => Err(unauthorized(self.challenge(headers, true))),
        }
    }
}

pub async fn require_bearer(
    State(auth): State<AuthState>,
    mut req: Request,
    next: Next,
) -> Response {
    let Some(token) = bearer(req.headers()) else {
        refused(Reason::NoToken, None);
        return unauthorized(auth.challenge(req.headers(), false));
    };
    match auth.principal(token).await {
        Ok(Some(principal)) => {
            req.extensions_mut().insert(principal);
            next.run(req).await
        }
        Ok(None) => unauthorized(auth.challenge(req.headers(), true)),
        Err(response) => response,
    }
}
