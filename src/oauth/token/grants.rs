//! The two grants `/token` takes, each checked before any token is issued: an authorization
//! code (single use, bound to its client and redirect URI, PKCE S256) and a refresh token (single
//! use, rotated; reuse revokes the grant). Both name this server as the resource, or none.

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::super::{OAuthState, error, is_this_resource};
use super::{Outcome, Request, invalid_grant, tokens_for, unavailable};
use crate::http::HttpError;
use crate::store::Taken;

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

pub(super) fn authorization_code(s: &OAuthState, t: &Request<'_>) -> Outcome {
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

pub(super) fn refresh(s: &OAuthState, t: &Request<'_>) -> Outcome {
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

fn pkce_ok(verifier: &str, challenge: &str) -> bool {
    let valid = (43..=128).contains(&verifier.len())
        && verifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~".contains(&b));
    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    valid && bool::from(computed.as_bytes().ct_eq(challenge.as_bytes()))
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
