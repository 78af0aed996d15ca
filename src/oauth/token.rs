//! `/token` (authorization code with PKCE, and rotating refresh tokens) and `/revoke` (RFC 7009).
//! Clients authenticate with HTTP Basic, form fields, or, for public clients, their id alone; an
//! unknown client is `invalid_client`, which makes Claude register again. Each grant type is
//! checked in [`grants`]; the tokens a good one earns are issued here.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use subtle::ConstantTimeEq;

use super::grant_type::GrantType;
use super::{OAuthState, error, no_store, resource};
use crate::auth::{Role, TokenSpec};
use crate::clipboard::Coverage;
use crate::http::HttpError;
use crate::store::{ClientInfo, LiveGrant, StoreError, TokenInfo, hash, now, random_token, secs};

mod grants;
use grants::{authorization_code, refresh};

type Outcome = Result<Response, HttpError>;

fn form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn unavailable(e: StoreError) -> HttpError {
    tracing::error!(error = %e, "token endpoint: store unavailable");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "temporarily_unavailable",
        "the gateway's state database is unavailable",
    )
}

fn invalid_client() -> HttpError {
    error(
        StatusCode::UNAUTHORIZED,
        "invalid_client",
        "unknown client or bad client credentials",
    )
}

fn invalid_grant(description: &'static str) -> HttpError {
    error(StatusCode::BAD_REQUEST, "invalid_grant", description)
}

/// The client making the request, from HTTP Basic or the form.
fn client(
    s: &OAuthState,
    headers: &HeaderMap,
    f: &HashMap<String, String>,
) -> Result<ClientInfo, HttpError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Basic ")
                .or_else(|| v.strip_prefix("basic "))
        })
        .and_then(|b| STANDARD.decode(b.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok());
    let (id, secret) = match &basic {
        Some(pair) => {
            let (id, secret) = pair.split_once(':').ok_or_else(invalid_client)?;
            let decode = |s: &str| {
                url::form_urlencoded::parse(format!("x={s}").as_bytes())
                    .next()
                    .map(|(_, v)| v.into_owned())
            };
            (decode(id).ok_or_else(invalid_client)?, decode(secret))
        }
        None => (
            f.get("client_id").cloned().ok_or_else(invalid_client)?,
            f.get("client_secret").cloned(),
        ),
    };
    let client = s
        .store
        .client(&id)
        .map_err(unavailable)?
        .ok_or_else(invalid_client)?;
    match (&client.secret_hash, secret) {
        (None, _) => Ok(client),
        (Some(expected), Some(given))
            if bool::from(hash(&given).as_bytes().ct_eq(expected.as_bytes())) =>
        {
            Ok(client)
        }
        _ => Err(invalid_client()),
    }
}

/// A fresh access token and refresh token for a live grant: its role and the tabs it covers.
fn tokens_for(s: &OAuthState, t: &Request<'_>, grant_id: &str, grant: &LiveGrant) -> Outcome {
    let client = t.client;
    let resource = resource(&t.issuer);
    let role = grant.role.as_str();
    let role_value =
        Role::parse(role).ok_or_else(|| invalid_grant("the grant has no valid role"))?;
    let tabs = Coverage::from_stored(grant.tabs.as_deref()).map_err(|e| {
        tracing::error!(error = %e, "a grant's tab coverage is unreadable; no token issued");
        invalid_grant("the grant is damaged; approve the connector again")
    })?;
    let spec = TokenSpec {
        subject: &client.name,
        role: role_value,
        ttl: Some(s.access_ttl),
        audience: Some(&resource),
        grant: Some(grant_id),
        tabs: &tabs,
    };
    let issued = s.tokens.issue_spec(&spec).map_err(|e| {
        tracing::error!(error = %e, "cannot sign an access token");
        error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            "cannot issue a token",
        )
    })?;
    let info = TokenInfo {
        jti: issued.jti.clone(),
        subject: client.name.clone(),
        role: role.to_owned(),
        grant_id: Some(grant_id.to_owned()),
        created: now(),
        expires: issued.exp.and_then(|e| i64::try_from(e).ok()),
        revoked: false,
        tabs: tabs.to_stored(),
    };
    s.store.record_token(&info).map_err(unavailable)?;
    let refresh = random_token();
    s.store
        .save_refresh(&refresh, grant_id, now() + secs(s.refresh_ttl))
        .map_err(unavailable)?;
    let mut res = axum::Json(json!({
        "access_token": issued.token,
        "token_type": "Bearer",
        "expires_in": s.access_ttl.as_secs(),
        "refresh_token": refresh,
        "scope": role,
    }))
    .into_response();
    no_store(&mut res);
    Ok(res)
}

/// One call of the token endpoint: who calls, under which issuer, with which form.
struct Request<'a> {
    client: &'a ClientInfo,
    issuer: String,
    form: &'a HashMap<String, String>,
}

pub async fn token(
    State(s): State<Arc<OAuthState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Ok(body) = body else {
        return HttpError::TooLarge.into_response();
    };
    let f = form(&body);
    let issuer = s.issuer(&headers);
    let outcome = client(&s, &headers, &f).and_then(|c| {
        let t = Request {
            client: &c,
            issuer,
            form: &f,
        };
        match f.get("grant_type").and_then(|g| GrantType::parse(g)) {
            Some(GrantType::AuthorizationCode) => authorization_code(&s, &t),
            Some(GrantType::RefreshToken) => refresh(&s, &t),
            None => Err(error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                format!("grant_type must be {}", GrantType::listed(" or ")),
            )),
        }
    });
    outcome.unwrap_or_else(IntoResponse::into_response)
}

/// RFC 7009: a refresh token revokes its grant; an access token is revoked by its id. Always 200
/// for an authenticated client, whatever the token was.
pub async fn revoke(
    State(s): State<Arc<OAuthState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let Ok(body) = body else {
        return HttpError::TooLarge.into_response();
    };
    let f = form(&body);
    let client = match client(&s, &headers, &f) {
        Ok(c) => c,
        Err(e) => return e.into_response(),
    };
    if let Some(token) = f.get("token") {
        let result = match s.store.refresh_grant(token) {
            Ok(Some(grant)) => s.store.live_grant(&grant).and_then(|g| match g {
                Some(g) if g.client_id == client.client_id => {
                    s.store.revoke_grant(&grant).map(|_| ())
                }
                _ => Ok(()),
            }),
            Ok(None) => match s.tokens.verify(token) {
                Ok(p)
                    if p.grant.as_deref().is_some_and(|g| {
                        s.store
                            .live_grant(g)
                            .ok()
                            .flatten()
                            .is_some_and(|g| g.client_id == client.client_id)
                    }) =>
                {
                    s.store.revoke_token(&p.token_id).map(|_| ())
                }
                _ => Ok(()),
            },
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            return unavailable(e).into_response();
        }
    }
    let mut res = StatusCode::OK.into_response();
    no_store(&mut res);
    res
}
