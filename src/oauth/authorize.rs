//! `/authorize`: GET validates the request and shows the consent page; POST takes the owner's
//! decision. Errors about the client or its redirect URI are shown on the page, never redirected;
//! everything else goes back to the client with `error`, `state` and `iss` (RFC 9207).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::Form;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use url::Url;

use super::consent::{CSRF_COOKIE, Consent, consent_page, error_page};
use super::{OAuthState, Pending, passphrase};
use crate::store::{CodeRecord, now, random_token};

/// A code is exchanged at once by a real client; a minute is plenty.
const CODE_TTL_SECS: i64 = 60;

/// A redirect back to the client: `303 See Other` with `params`, `state` and `iss` added.
fn back(
    redirect_uri: &str,
    params: &[(&str, &str)],
    state: Option<&str>,
    issuer: &str,
) -> Response {
    let Ok(mut url) = Url::parse(redirect_uri) else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "The app's redirect address is not valid.",
        );
    };
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in params {
            q.append_pair(k, v);
        }
        if let Some(state) = state {
            q.append_pair("state", state);
        }
        q.append_pair("iss", issuer);
    }
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(url.as_str()) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn back_error(p: &Pending, error: &str, description: &str, issuer: &str) -> Response {
    back(
        &p.redirect_uri,
        &[("error", error), ("error_description", description)],
        p.state.as_deref(),
        issuer,
    )
}

pub async fn show(
    State(s): State<Arc<OAuthState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let get = |k: &str| q.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let client = match get("client_id").map(|id| s.store.client(id)) {
        Some(Ok(Some(c))) => c,
        Some(Err(e)) => {
            tracing::error!(error = %e, "authorize: store unavailable");
            return error_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "The gateway's state database is unavailable.",
            );
        }
        _ => {
            return error_page(
                StatusCode::BAD_REQUEST,
                "Unknown app (client_id). Remove and add the connector again.",
            );
        }
    };
    let redirect_uri = match get("redirect_uri") {
        Some(uri) if client.redirect_uris.iter().any(|r| r == uri) => uri.to_owned(),
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        _ => {
            return error_page(
                StatusCode::BAD_REQUEST,
                "The redirect address does not match the one the app registered.",
            );
        }
    };
    let mut pending = Pending {
        client_id: client.client_id.clone(),
        client_name: client.name.clone(),
        redirect_uri,
        state: get("state").map(str::to_owned),
        challenge: String::new(),
        csrf: random_token(),
        created: Instant::now(),
    };
    if get("response_type") != Some("code") {
        return back_error(
            &pending,
            "unsupported_response_type",
            "response_type must be code",
            &s.issuer,
        );
    }
    match (get("code_challenge"), get("code_challenge_method")) {
        (Some(c), Some("S256")) if (43..=128).contains(&c.len()) => {
            pending.challenge = c.to_owned()
        }
        _ => {
            return back_error(
                &pending,
                "invalid_request",
                "PKCE with code_challenge_method S256 is required",
                &s.issuer,
            );
        }
    }
    if let Some(resource) = get("resource").map(|r| r.trim_end_matches('/'))
        && resource != s.resource
        && resource != s.issuer
    {
        return back_error(
            &pending,
            "invalid_target",
            "resource is not this server",
            &s.issuer,
        );
    }
    let request_id = random_token();
    let page = Consent {
        request_id: &request_id,
        csrf: &pending.csrf,
        client_name: &pending.client_name,
        redirect_uri: &pending.redirect_uri,
        message: None,
    };
    let res = consent_page(StatusCode::OK, &page);
    let mut map = s.pending();
    if map.len() >= super::MAX_PENDING
        && let Some(oldest) = map
            .iter()
            .min_by_key(|(_, p)| p.created)
            .map(|(k, _)| k.clone())
    {
        map.remove(&oldest);
    }
    map.insert(request_id, pending);
    res
}

#[derive(serde::Deserialize)]
pub struct Decision {
    request_id: String,
    csrf: String,
    #[serde(default)]
    passphrase: String,
    #[serde(default)]
    role: String,
    #[serde(default)]
    action: String,
}

fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_owned())
}

pub async fn decide(
    State(s): State<Arc<OAuthState>>,
    headers: HeaderMap,
    Form(d): Form<Decision>,
) -> Response {
    let Some(p) = s.pending().get(&d.request_id).cloned() else {
        return error_page(
            StatusCode::BAD_REQUEST,
            "This request has expired. Start again from the app.",
        );
    };
    let csrf_ok = cookie(&headers, CSRF_COOKIE).is_some_and(|c| c == d.csrf) && d.csrf == p.csrf;
    if !csrf_ok {
        return error_page(
            StatusCode::FORBIDDEN,
            "This form was not submitted from the consent page. Start again from the app.",
        );
    }
    let again = |status, message: &str| {
        let page = Consent {
            request_id: &d.request_id,
            csrf: &p.csrf,
            client_name: &p.client_name,
            redirect_uri: &p.redirect_uri,
            message: Some(message),
        };
        consent_page(status, &page)
    };
    if d.action == "deny" {
        s.pending().remove(&d.request_id);
        return back_error(&p, "access_denied", "the owner denied access", &s.issuer);
    }
    if let Some(wait) = s.limiter().wait(Instant::now()) {
        return again(
            StatusCode::TOO_MANY_REQUESTS,
            &format!(
                "Too many wrong passphrases. Try again in {} s.",
                wait.as_secs().max(1)
            ),
        );
    }
    let role = match d.role.as_str() {
        "read" | "write" => d.role.clone(),
        _ => return again(StatusCode::BAD_REQUEST, "Choose read or write."),
    };
    let phc = match s.store.passphrase_hash() {
        Ok(Some(phc)) => phc,
        Ok(None) => {
            return again(
                StatusCode::SERVICE_UNAVAILABLE,
                "No owner passphrase is set. Run `copyq-mcp passphrase set` on the gateway's machine.",
            );
        }
        Err(e) => {
            tracing::error!(error = %e, "authorize: store unavailable");
            return error_page(
                StatusCode::SERVICE_UNAVAILABLE,
                "The gateway's state database is unavailable.",
            );
        }
    };
    let given = d.passphrase.clone();
    let ok = tokio::task::spawn_blocking(move || passphrase::verify(&given, &phc))
        .await
        .unwrap_or(false);
    if !ok {
        s.limiter().failed(Instant::now());
        tracing::warn!(client = %p.client_name, "wrong passphrase on the consent page");
        return again(StatusCode::UNAUTHORIZED, "Wrong passphrase.");
    }
    s.limiter().succeeded();
    s.pending().remove(&d.request_id);
    match issue_code(&s, &p, &role) {
        Ok(code) => {
            tracing::info!(client = %p.client_name, %role, "access approved");
            back(
                &p.redirect_uri,
                &[("code", &code)],
                p.state.as_deref(),
                &s.issuer,
            )
        }
        Err(e) => {
            tracing::error!(error = %e, "authorize: cannot store the grant");
            back_error(
                &p,
                "server_error",
                "the gateway could not record the approval",
                &s.issuer,
            )
        }
    }
}

fn issue_code(s: &OAuthState, p: &Pending, role: &str) -> Result<String, crate::store::StoreError> {
    let grant_id = s.store.create_grant(&p.client_id, role)?;
    let code = random_token();
    let record = CodeRecord {
        grant_id,
        client_id: p.client_id.clone(),
        redirect_uri: p.redirect_uri.clone(),
        challenge: p.challenge.clone(),
    };
    s.store.save_code(&code, &record, now() + CODE_TTL_SECS)?;
    Ok(code)
}
