//! The owner's answer on the consent page (`POST /authorize`): the form, its CSRF check, the
//! passphrase within its limits, and the code that goes back to the app.

use std::sync::Arc;

use axum::extract::State;
use axum::extract::rejection::FormRejection;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Form};

use super::super::consent::{consent_page, csrf_cookie_name};
use super::super::passphrase::{self, Refused};
use super::super::{OAuthState, Pending};
use super::{back, back_error};
use crate::clipboard::Coverage;
use crate::http::HttpError;
use crate::limit::ClientAddr;
use crate::store::{CodeRecord, now, random_token};

/// A code is exchanged at once by a real client; a minute is plenty.
const CODE_TTL_SECS: i64 = 60;

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
            "list" => listed(&self.tab_list).map_err(|e| format!("Only these tabs: {e}.")),
            _ => Err("Choose which tabs the app may use.".into()),
        }
    }
}

/// "Only these tabs": each line is a tab, never one of the command line's words: `all` or
/// `managed` typed there is the tab of that name (the radio buttons above choose all or the
/// managed tabs). `mcp`, or `mcp/` and a path, is a managed subtree; any other line one external
/// tab by its exact name.
fn listed(typed: &str) -> Result<Coverage, String> {
    let lines: Vec<&str> = typed
        .lines()
        .map(|l| l.trim_end_matches('\r'))
        .filter(|l| !l.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return Err("no tabs given: type one tab per line, or choose all or managed tabs".into());
    }
    let (managed, exact): (Vec<&str>, Vec<&str>) = lines
        .into_iter()
        .partition(|l| *l == "mcp" || l.starts_with(crate::clipboard::MCP_PREFIX));
    let words: Vec<String> = managed.into_iter().map(str::to_owned).collect();
    let exact: Vec<String> = exact.into_iter().map(str::to_owned).collect();
    Coverage::from_flags(&words, &exact)
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
    let addr = addr.map_or(
        ClientAddr::new(std::net::Ipv4Addr::UNSPECIFIED.into()),
        |Extension(a)| a,
    );
    let (owner, addr) = (s.pending().is_owner(addr.ip, &addr.key()), addr.key());
    match check_passphrase(&s, &addr, owner, &d, &p).await {
        Ok(()) => {}
        Err(Refusal::Again(status, message)) => return again(status, &message),
        Err(Refusal::Page(page)) => return page.into_response(),
    }
    s.pending().remove(&d.request_id);
    s.pending().approved_from(&addr);
    match issue_code(&s, &p, chosen, &coverage) {
        Ok(code) => {
            tracing::info!(client = %crate::logging::field(p.client.name()), role = %chosen, tabs = %tabs_chosen, "access approved");
            back(&p, &[("code", &code)])
        }
        Err(IssueError::Full) => super::request::registry_full().into_response(),
        Err(IssueError::Store(e)) => {
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
    owner: bool,
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
    let attempt = match s.guesses.begin(&keys, owner).await {
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
        Err(Refused::Ceiling(wait)) => {
            tracing::warn!("passphrase try refused: the hourly ceiling of checks is reached");
            return Err(again(
                StatusCode::TOO_MANY_REQUESTS,
                &format!(
                    "The gateway has checked too many passphrases this hour. Wait {} min, then try again (or approve on the gateway's own machine).",
                    wait.as_secs().div_ceil(60).max(1)
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
    let memory = s.guesses.memory();
    let ok = tokio::task::spawn_blocking(move || memory.verify(&given, &phc))
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

/// Why no code was issued.
enum IssueError {
    /// A new metadata-document client, and no place left for it in `max_clients`.
    Full,
    Store(crate::store::StoreError),
}

impl From<crate::store::StoreError> for IssueError {
    fn from(e: crate::store::StoreError) -> Self {
        Self::Store(e)
    }
}

/// The grant and its code; a metadata-document client is recorded first, now that it is approved.
fn issue_code(
    s: &OAuthState,
    p: &Pending,
    role: &str,
    tabs: &Coverage,
) -> Result<String, IssueError> {
    if let Some(redirect_uris) = &p.document
        && s.store.client(&p.client_id)?.is_none()
    {
        if s.store.client_count()? >= s.max_clients {
            return Err(IssueError::Full);
        }
        s.store
            .save_document_client(&p.client_id, p.client.name(), redirect_uris)?;
    }
    s.unapproved.approved(&p.client_id);
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
