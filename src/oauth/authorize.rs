//! `/authorize`: GET validates the request ([`request`]) and shows the consent page; POST takes
//! the owner's decision ([`decision`]). Errors about the client or its redirect URI are shown on
//! the page, never redirected; everything else goes back to the client with `error`, `state` and
//! `iss` (RFC 9207).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use url::Url;

use super::consent::consent_page;
use super::{OAuthState, Pending};
use crate::http::HttpError;
use crate::limit::ClientAddr;
use crate::store::random_token;

mod decision;
mod request;
pub(super) use decision::decide;
use request::{check_request, find_client, redirect_uri};

/// A redirect back to the client: `303 See Other` with `params`, `state` and `iss` added.
fn back(p: &Pending, params: &[(&str, &str)]) -> Response {
    let Ok(mut url) = Url::parse(&p.redirect_uri) else {
        return HttpError::cannot_connect(
            StatusCode::BAD_REQUEST,
            "The app's redirect address is not valid.",
        )
        .into_response();
    };
    {
        let mut q = url.query_pairs_mut();
        for (k, v) in params {
            q.append_pair(k, v);
        }
        if let Some(state) = &p.state {
            q.append_pair("state", state);
        }
        q.append_pair("iss", &p.issuer);
    }
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(url.as_str()) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

fn back_error(p: &Pending, error: &str, description: &str) -> Response {
    back(p, &[("error", error), ("error_description", description)])
}

pub async fn show(
    State(s): State<Arc<OAuthState>>,
    headers: HeaderMap,
    addr: Option<Extension<ClientAddr>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let addr = addr.map_or(
        ClientAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into()),
        |Extension(a)| a,
    );
    let (ip, addr) = (addr.ip, addr.key());
    if s.openings.take(&addr, Instant::now()).is_err() {
        return refusal(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many requests",
            "Too many connection requests came from your address. Wait a minute, then start again from the app.",
        ).into_response();
    }
    let get = |k: &str| q.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let Some(client_id) = get("client_id") else {
        return HttpError::cannot_connect(
            StatusCode::BAD_REQUEST,
            "The link names no app (client_id is missing). Start again from the app.",
        )
        .into_response();
    };
    let (client, label, document) = match find_client(&s, client_id, &addr).await {
        Ok(found) => found,
        Err(page) => return page.into_response(),
    };
    let redirect_uri = match redirect_uri(&s, &client, get("redirect_uri")) {
        Ok(uri) => uri,
        Err(page) => return page.into_response(),
    };
    let issuer = s.issuer(&headers);
    let mut pending = Pending {
        client_id: client.client_id.clone(),
        client: label,
        issuer,
        redirect_uri,
        state: get("state").map(str::to_owned),
        challenge: String::new(),
        csrf: random_token(),
        created: Instant::now(),
        addr,
        document,
    };
    if let Err((error, description)) = check_request(&get, &mut pending) {
        return back_error(&pending, error, description);
    }
    let request_id = random_token();
    let res = consent_page(
        StatusCode::OK,
        &s.consent(&pending, &request_id, "read", None),
    );
    let mut requests = s.pending();
    let owner = requests.is_owner(ip, &pending.addr);
    if !requests.open(request_id, pending, owner) {
        tracing::warn!("consent request refused: every place is taken");
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "Too many open requests",
            "The gateway holds too many unanswered connection requests. Wait a few minutes, then start again from the app.",
        ).into_response();
    }
    res
}

/// A page titled `title`, saying `message`.
fn refusal(status: StatusCode, title: &'static str, message: &'static str) -> HttpError {
    HttpError::Page {
        status,
        title,
        message: message.into(),
    }
}
