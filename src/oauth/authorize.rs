//! `/authorize`: GET validates the request and shows the consent page; POST takes the owner's
//! decision. Errors about the client or its redirect URI are shown on the page, never redirected;
//! everything else goes back to the client with `error`, `state` and `iss` (RFC 9207).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use axum::extract::rejection::FormRejection;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};
use url::Url;

use super::cimd::is_document_id;
use super::consent::{ClientLabel, consent_page, csrf_cookie_name};
use super::passphrase::{self, Refused};
use super::redirect;
use super::{OAuthState, Pending, is_this_resource};
use crate::clipboard::Coverage;
use crate::http::HttpError;
use crate::limit::ClientAddr;
use crate::store::{ClientInfo, CodeRecord, now, random_token, secs};

/// A code is exchanged at once by a real client; a minute is plenty.
const CODE_TTL_SECS: i64 = 60;

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

/// The client a request names: a registered one, or one described by a metadata document (then
/// recorded, so that `/token`, grants and `clients list` treat it like any other).
async fn find_client(
    s: &OAuthState,
    client_id: &str,
) -> Result<(ClientInfo, ClientLabel), HttpError> {
    let unavailable = |e: crate::store::StoreError| {
        tracing::error!(error = %e, "authorize: store unavailable");
        HttpError::cannot_connect(
            StatusCode::SERVICE_UNAVAILABLE,
            "The gateway's state database is unavailable. The owner can look at the gateway's log.",
        )
    };
    if is_document_id(client_id) {
        let doc = s.documents.resolve(client_id).await.map_err(|e| {
            tracing::warn!(error = %e, "authorize: client metadata document refused");
            HttpError::cannot_connect(
                StatusCode::BAD_REQUEST,
                format!("{e}. The app cannot connect this way; tell its developers."),
            )
        })?;
        let label = ClientLabel::Verified {
            host: doc.host.clone(),
        };
        // A document client is recorded like a registration, and bounded like one: junk ids
        // (any https URL on a stranger's host) cannot fill the registry either.
        s.store
            .expire_unapproved_clients(now() - secs(super::register::UNAPPROVED_TTL))
            .map_err(unavailable)?;
        let known = s
            .store
            .client(&doc.client_id)
            .map_err(unavailable)?
            .is_some();
        if !known && s.store.client_count().map_err(unavailable)? >= s.max_clients {
            return Err(HttpError::cannot_connect(
                StatusCode::SERVICE_UNAVAILABLE,
                "The gateway holds its maximum number of apps. The owner can remove some with \
                 `copyq-mcp clients purge` or `copyq-mcp clients revoke`.",
            ));
        }
        s.store
            .save_document_client(&doc.client_id, label.name(), &doc.redirect_uris)
            .map_err(unavailable)?;
        let client = s
            .store
            .client(&doc.client_id)
            .map_err(unavailable)?
            .ok_or_else(|| {
                unavailable(crate::store::StoreError::Invalid("client vanished".into()))
            })?;
        return Ok((client, label));
    }
    match s.store.client(client_id).map_err(unavailable)? {
        Some(c) => {
            let label = ClientLabel::SelfNamed {
                name: c.name.clone(),
            };
            Ok((c, label))
        }
        None => Err(HttpError::cannot_connect(
            StatusCode::BAD_REQUEST,
            "This app is not known to the gateway (unknown client_id): it may have been removed. \
             Remove the connector in the app and add it again.",
        )),
    }
}

/// The redirect URI of the request: one the client registered (a loopback one on any port), or
/// its only one when the request names none; and at an origin the owner allows.
fn redirect_uri(
    s: &OAuthState,
    client: &ClientInfo,
    asked: Option<&str>,
) -> Result<String, HttpError> {
    let uri = match asked {
        Some(uri)
            if client
                .redirect_uris
                .iter()
                .any(|r| redirect::registered(r, uri)) =>
        {
            uri.to_owned()
        }
        None if client.redirect_uris.len() == 1 => client.redirect_uris[0].clone(),
        _ => {
            return Err(HttpError::cannot_connect(
                StatusCode::BAD_REQUEST,
                "The address this app wants to send you back to is not one it registered, so the \
                 request was stopped. Start again from the app; if this keeps happening, remove and add the connector again.",
            ));
        }
    };
    if let Err(why) = s.redirects.check(&uri) {
        tracing::warn!(%why, "authorize: redirect URI outside oauth.redirect_origins");
        return Err(HttpError::cannot_connect(
            StatusCode::BAD_REQUEST,
            "The app wants to send you back to an address the owner does not allow \
             (oauth.redirect_origins), so the request was stopped.",
        ));
    }
    Ok(uri)
}

/// The rest of the request, once its redirect URI is known (errors go back to the app): the
/// response type, PKCE S256 (the challenge is kept in `pending`), and the resource.
fn check_request<'a>(
    get: &impl Fn(&str) -> Option<&'a str>,
    pending: &mut Pending,
) -> Result<(), (&'static str, &'static str)> {
    if get("response_type") != Some("code") {
        return Err(("unsupported_response_type", "response_type must be code"));
    }
    match (get("code_challenge"), get("code_challenge_method")) {
        (Some(c), Some("S256")) if (43..=128).contains(&c.len()) => {
            pending.challenge = c.to_owned()
        }
        _ => {
            return Err((
                "invalid_request",
                "PKCE with code_challenge_method S256 is required",
            ));
        }
    }
    match get("resource") {
        Some(resource) if !is_this_resource(resource, &pending.issuer) => {
            Err(("invalid_target", "resource is not this server"))
        }
        _ => Ok(()),
    }
}

pub async fn show(
    State(s): State<Arc<OAuthState>>,
    headers: HeaderMap,
    addr: Option<Extension<ClientAddr>>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let addr = addr.map(|Extension(a)| a.key()).unwrap_or_default();
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
    let (client, label) = match find_client(&s, client_id).await {
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
    };
    if let Err((error, description)) = check_request(&get, &mut pending) {
        return back_error(&pending, error, description);
    }
    let request_id = random_token();
    let res = consent_page(
        StatusCode::OK,
        &s.consent(&pending, &request_id, "read", None),
    );
    if !s.open(request_id, pending) {
        return refusal(
            StatusCode::SERVICE_UNAVAILABLE,
            "Too many open requests",
            "The gateway holds too many unanswered connection requests. Wait a few minutes, then start again from the app.",
        ).into_response();
    }
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
    /// `all` (also when absent), `managed` or `list`.
    #[serde(default)]
    tabs: String,
    /// With `list`: the tabs, one per line.
    #[serde(default)]
    tab_list: String,
    #[serde(default)]
    action: String,
}

impl Decision {
    /// The tabs chosen, or the sentence the form shows again.
    fn coverage(&self) -> Result<Coverage, String> {
        match self.tabs.as_str() {
            "" | "all" => Ok(Coverage::All),
            "managed" => Ok(Coverage::managed()),
            "list" => Coverage::parse(
                self.tab_list
                    .lines()
                    .map(|l| l.trim_end_matches('\r'))
                    .filter(|l| !l.trim().is_empty()),
            )
            .map_err(|e| format!("Only these tabs: {e}.")),
            _ => Err("Choose which tabs the app may use.".into()),
        }
    }
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

/// The form came back unreadable: show a page, not a bare rejection.
fn unreadable(_: FormRejection) -> Response {
    HttpError::cannot_connect(
        StatusCode::BAD_REQUEST,
        "The form could not be read. Start again from the app.",
    )
    .into_response()
}

pub async fn decide(
    State(s): State<Arc<OAuthState>>,
    headers: HeaderMap,
    addr: Option<Extension<ClientAddr>>,
    form: Result<Form<Decision>, FormRejection>,
) -> Response {
    let d = match form {
        Ok(Form(d)) => d,
        Err(e) => return unreadable(e),
    };
    let Some(p) = s.pending().get(&d.request_id).cloned() else {
        return HttpError::cannot_connect(
            StatusCode::BAD_REQUEST,
            "This request has expired (a consent page is valid for 10 minutes) or was already \
             answered. Go back to the app and connect again.",
        )
        .into_response();
    };
    let csrf_ok = cookie(&headers, &csrf_cookie_name(&d.request_id)).is_some_and(|c| c == d.csrf)
        && d.csrf == p.csrf;
    if !csrf_ok {
        return HttpError::cannot_connect(
            StatusCode::FORBIDDEN,
            "This form was not sent from the consent page the gateway showed (its security \
             cookie is missing or does not match; cookies may be blocked). Start again from the app.",
        ).into_response();
    }
    if d.action == "deny" {
        s.pending().remove(&d.request_id);
        return back_error(&p, "access_denied", "the owner denied access");
    }
    let chosen = if d.role == "write" { "write" } else { "read" };
    let tabs_chosen = match d.tabs.as_str() {
        "managed" | "list" => d.tabs.as_str(),
        _ => "all",
    };
    let again = |status, message: &str| {
        let mut c = s.consent(&p, &d.request_id, chosen, Some(message));
        c.tabs = tabs_chosen;
        c.tab_list = &d.tab_list;
        consent_page(status, &c)
    };
    if !matches!(d.role.as_str(), "read" | "write") {
        return again(StatusCode::BAD_REQUEST, "Choose Read or Write.");
    }
    let coverage = match d.coverage() {
        Ok(c) => c,
        Err(message) => return again(StatusCode::BAD_REQUEST, &message),
    };
    let addr = addr.map(|Extension(a)| a.key()).unwrap_or_default();
    match check_passphrase(&s, &addr, &d, &p).await {
        Ok(()) => {}
        Err(Refusal::Again(status, message)) => return again(status, &message),
        Err(Refusal::Page(page)) => return page.into_response(),
    }
    s.pending().remove(&d.request_id);
    match issue_code(&s, &p, chosen, &coverage) {
        Ok(code) => {
            tracing::info!(client = %crate::logging::field(p.client.name()), role = %chosen, tabs = %tabs_chosen, "access approved");
            back(&p, &[("code", &code)])
        }
        Err(e) => {
            tracing::error!(error = %e, "authorize: cannot store the grant");
            back_error(
                &p,
                "server_error",
                "the gateway could not record the approval",
            )
        }
    }
}

/// Why the passphrase step did not pass: the form again with a message, or a page.
enum Refusal {
    Again(StatusCode, String),
    Page(HttpError),
}

/// The owner's passphrase, checked within the limits of [`passphrase::Guesses`] (per address and
/// per request; the fifth wrong one cancels the request).
async fn check_passphrase(
    s: &OAuthState,
    addr: &str,
    d: &Decision,
    p: &Pending,
) -> Result<(), Refusal> {
    let again = |status, message: &str| Refusal::Again(status, message.to_owned());
    let phc = match s.store.passphrase_hash() {
        Ok(Some(phc)) => phc,
        Ok(None) => {
            return Err(again(
                StatusCode::SERVICE_UNAVAILABLE,
                "No owner passphrase is set. Run `copyq-mcp passphrase set` on the gateway's machine, then press Approve again.",
            ));
        }
        Err(e) => {
            tracing::error!(error = %e, "authorize: store unavailable");
            return Err(Refusal::Page(HttpError::cannot_connect(
                StatusCode::SERVICE_UNAVAILABLE,
                "The gateway's state database is unavailable. The owner can look at the gateway's log.",
            )));
        }
    };
    let keys = [format!("ip:{addr}"), format!("req:{}", d.request_id)];
    let attempt = match s.guesses.begin(&keys).await {
        Ok(attempt) => attempt,
        Err(Refused::Wait(wait)) => {
            return Err(again(
                StatusCode::TOO_MANY_REQUESTS,
                &format!(
                    "Too many wrong passphrases. Wait {} s, then try again.",
                    wait.as_secs().max(1)
                ),
            ));
        }
        Err(Refused::Busy) => {
            return Err(again(
                StatusCode::SERVICE_UNAVAILABLE,
                "The gateway is busy checking other passphrases. Try again in a moment.",
            ));
        }
    };
    let given = d.passphrase.clone();
    let ok = tokio::task::spawn_blocking(move || passphrase::verify(&given, &phc))
        .await
        .unwrap_or(false);
    if ok {
        attempt.succeeded();
        return Ok(());
    }
    tracing::warn!(client = %crate::logging::field(p.client.name()), "wrong passphrase on the consent page");
    if attempt.failures >= passphrase::TRIES_PER_REQUEST {
        s.pending().remove(&d.request_id);
        return Err(Refusal::Page(HttpError::cannot_connect(
            StatusCode::UNAUTHORIZED,
            "Too many wrong passphrases for this request, so it was cancelled. Start again from the app.",
        )));
    }
    Err(again(
        StatusCode::UNAUTHORIZED,
        "Wrong passphrase. Try again.",
    ))
}

fn issue_code(
    s: &OAuthState,
    p: &Pending,
    role: &str,
    tabs: &Coverage,
) -> Result<String, crate::store::StoreError> {
    let grant_id =
        s.store
            .create_grant_covering(&p.client_id, role, tabs.to_stored().as_deref())?;
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

/// A page titled `title`, saying `message`.
fn refusal(status: StatusCode, title: &'static str, message: &'static str) -> HttpError {
    HttpError::Page {
        status,
        title,
        message: message.into(),
    }
}
