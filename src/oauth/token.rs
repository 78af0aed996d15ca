//! `/token` (authorization code with PKCE, and rotating refresh tokens) and `/revoke` (RFC 7009).
//! Clients authenticate with HTTP Basic, form fields, or, for public clients, their id alone; an
//! unknown client is `invalid_client`, which makes Claude register again.

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::{OAuthState, error, is_this_resource, no_store, resource};
use crate::auth::{Role, TokenSpec};
use crate::clipboard::Coverage;
use crate::http::HttpError;
use crate::store::{
    ClientInfo, LiveGrant, StoreError, Taken, TokenInfo, hash, now, random_token, secs,
};

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

fn pkce_ok(verifier: &str, challenge: &str) -> bool {
    let valid = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    valid && bool::from(computed.as_bytes().ct_eq(challenge.as_bytes()))
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

fn check_resource(t: &Request<'_>) -> Result<(), HttpError> {
    match t.form.get("resource") {
        Some(r) if !is_this_resource(r, &t.issuer) => Err(error(
            StatusCode::BAD_REQUEST,
            "invalid_target",
            "resource is not this server",
        )),
        _ => Ok(()),
    }
}

fn authorization_code(s: &OAuthState, t: &Request<'_>) -> Outcome {
    let (client, f) = (t.client, t.form);
    let code = f.get("code").ok_or_else(|| {
        error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "code is required",
        )
    })?;
    check_resource(t)?;
    let record = match s.store.take_code(code).map_err(unavailable)? {
        Taken::Valid(r) => r,
        Taken::Reused => {
            tracing::warn!(client = %crate::logging::field(&client.name), "authorization code reused: its grant is revoked");
            return Err(invalid_grant(
                "the code was already used; everything it issued is revoked",
            ));
        }
        Taken::Expired => return Err(invalid_grant("the code has expired")),
        Taken::Unknown => return Err(invalid_grant("unknown code")),
    };
    let revoke = |why: &'static str| {
        let _ = s.store.revoke_grant(&record.grant_id);
        invalid_grant(why)
    };
    if record.client_id != client.client_id {
        return Err(revoke("the code was issued to another client"));
    }
    if f.get("redirect_uri") != Some(&record.redirect_uri) {
        return Err(revoke(
            "redirect_uri does not match the authorization request",
        ));
    }
    if !f
        .get("code_verifier")
        .is_some_and(|v| pkce_ok(v, &record.challenge))
    {
        return Err(revoke("code_verifier does not match the code challenge"));
    }
    let grant = s
        .store
        .live_grant(&record.grant_id)
        .map_err(unavailable)?
        .ok_or_else(|| invalid_grant("the grant was revoked"))?;
    tokens_for(s, t, &record.grant_id, &grant)
}

fn refresh(s: &OAuthState, t: &Request<'_>) -> Outcome {
    let (client, f) = (t.client, t.form);
    let token = f.get("refresh_token").ok_or_else(|| {
        error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "refresh_token is required",
        )
    })?;
    check_resource(t)?;
    let grant_id = match s.store.take_refresh(token).map_err(unavailable)? {
        Taken::Valid(g) => g,
        Taken::Reused => {
            tracing::warn!(client = %crate::logging::field(&client.name), "refresh token reused: the whole grant is revoked");
            return Err(invalid_grant(
                "the refresh token was already used; the grant is revoked",
            ));
        }
        Taken::Expired => return Err(invalid_grant("the refresh token has expired")),
        Taken::Unknown => return Err(invalid_grant("unknown refresh token")),
    };
    match s.store.live_grant(&grant_id).map_err(unavailable)? {
        Some(grant) if grant.client_id == client.client_id => tokens_for(s, t, &grant_id, &grant),
        Some(_) => Err(invalid_grant("the refresh token belongs to another client")),
        None => Err(invalid_grant("the grant was revoked")),
    }
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
        match f.get("grant_type").map(String::as_str) {
            Some("authorization_code") => authorization_code(&s, &t),
            Some("refresh_token") => refresh(&s, &t),
            _ => Err(error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "grant_type must be authorization_code or refresh_token",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pkce_s256() {
        // RFC 7636 appendix B.
        let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        assert!(pkce_ok(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        ));
        assert!(!pkce_ok(
            verifier,
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cN"
        ));
        assert!(!pkce_ok("short", "x"));
    }
}
