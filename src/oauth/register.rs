//! Dynamic client registration (RFC 7591): public clients (`none`) and confidential ones
//! (`client_secret_post` / `client_secret_basic`), with validated redirect URIs.
//!
//! Registration is open to anyone who reaches the gateway, so it is limited per client address
//! (`registrations_per_hour`, a budget metadata-document clients draw on too), one address holds
//! at most [`Holdings::share`] of `max_clients` in clients never approved, and those are forgotten
//! after [`UNAPPROVED_TTL`]: junk registrations cannot fill the registry and lock real apps out.
//! A local app registering again takes over its earlier registration instead of counting
//! ([`again`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use std::time::{Duration, Instant};

use axum::Extension;
use axum::body::Bytes;
use axum::extract::State;
use axum::extract::rejection::BytesRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::grant_type::GrantType;
use super::{OAuthState, error, no_store};
use crate::http::HttpError;
use crate::limit::ClientAddr;
use crate::store::{NewClient, now, random_token, secs};
use crate::text::{code_point, deceptive_char};

mod again;

const METHODS: [&str; 3] = ["none", "client_secret_post", "client_secret_basic"];
const MAX_NAME_CHARS: usize = 200;
/// How long a registered client that was never approved is kept.
pub const UNAPPROVED_TTL: Duration = Duration::from_secs(3600);

/// A client's self-given name as it may be shown: at most [`MAX_NAME_CHARS`], and refused when
/// it holds characters that hide or reorder text (so it cannot pass for another name).
pub fn clean_name(name: &str) -> Result<String, String> {
    if let Some(c) = deceptive_char(name) {
        return Err(format!(
            "client_name holds an invisible or direction-changing character ({})",
            code_point(c)
        ));
    }
    Ok(name.trim().chars().take(MAX_NAME_CHARS).collect())
}

/// The unapproved clients each address registered, in memory (a restart forgets them; they still
/// expire with [`UNAPPROVED_TTL`] and count in `max_clients`).
#[derive(Debug, Default)]
pub struct Holdings(Mutex<HashMap<String, Vec<(String, Instant)>>>);

impl Holdings {
    /// Unapproved clients one address may hold: 5% of `max_clients`, at least 2.
    pub fn share(max_clients: usize) -> usize {
        (max_clients / 20).max(2)
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<(String, Instant)>>> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.retain(|_, held| {
            held.retain(|(_, t)| t.elapsed() < UNAPPROVED_TTL);
            !held.is_empty()
        });
        map
    }

    /// How many unapproved clients `addr` holds.
    pub fn held(&self, addr: &str) -> usize {
        self.map().get(addr).map_or(0, Vec::len)
    }

    pub fn add(&self, addr: &str, client_id: &str) {
        self.map()
            .entry(addr.to_owned())
            .or_default()
            .push((client_id.to_owned(), Instant::now()));
    }

    /// The owner approved `client_id`: it no longer counts against its address.
    pub fn approved(&self, client_id: &str) {
        for held in self.map().values_mut() {
            held.retain(|(id, _)| id != client_id);
        }
    }
}

fn bad(description: impl Into<std::borrow::Cow<'static, str>>) -> HttpError {
    error(
        StatusCode::BAD_REQUEST,
        "invalid_client_metadata",
        description,
    )
}

fn strings(v: &Value, key: &str) -> Result<Option<Vec<String>>, HttpError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad(format!("{key} must be an array of strings")))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(bad(format!("{key} must be an array of strings"))),
    }
}

pub async fn register(
    State(s): State<Arc<OAuthState>>,
    client: Option<Extension<ClientAddr>>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let from_here = client.as_ref().is_some_and(|Extension(c)| c.is_loopback());
    let again = match &body {
        Ok(body) if from_here => register_again(&s, body),
        _ => None,
    };
    if let Some(res) = again {
        return res;
    }
    let key = client.map(|Extension(c)| c.key()).unwrap_or_default();
    if let Err(wait) = s.registrations.take(&key, Instant::now()) {
        tracing::warn!("registration refused: too many from one address");
        return HttpError::OAuth {
            status: StatusCode::TOO_MANY_REQUESTS,
            code: "temporarily_unavailable",
            description: "too many registrations from this address; try again later".into(),
            retry_after: Some(wait),
        }
        .into_response();
    }
    let Ok(body) = body else {
        return HttpError::TooLarge.into_response();
    };
    register_inner(&s, &key, &body).unwrap_or_else(IntoResponse::into_response)
}

/// A registration from this machine that repeats one never approved: that client, renewed,
/// answered as a new registration would be (with the redirect URIs asked for, all of which it
/// holds), and not counted (see [`again`]).
fn register_again(s: &OAuthState, body: &[u8]) -> Option<Response> {
    let m = metadata(s, body).ok()?;
    let (client_id, secret) = again::take_over(s, &m)?;
    tracing::info!(client = %crate::logging::field(&m.name), "client registered again from this machine: its earlier registration, never approved, is reused");
    Some(reply(&client_id, m, secret))
}

/// What a registration asks for, checked (RFC 7591 2).
struct Metadata {
    redirect_uris: Vec<String>,
    method: String,
    grant_types: Vec<GrantType>,
    response_types: Vec<String>,
    name: String,
}

fn metadata(s: &OAuthState, body: &[u8]) -> Result<Metadata, HttpError> {
    let meta: Value =
        serde_json::from_slice(body).map_err(|_| bad("the body must be a JSON object"))?;
    if !meta.is_object() {
        return Err(bad("the body must be a JSON object"));
    }
    let redirect_uris = strings(&meta, "redirect_uris")?.unwrap_or_default();
    if redirect_uris.is_empty() {
        return Err(error(
            StatusCode::BAD_REQUEST,
            "invalid_redirect_uri",
            "redirect_uris is required",
        ));
    }
    for uri in &redirect_uris {
        s.redirects
            .check(uri)
            .map_err(|why| error(StatusCode::BAD_REQUEST, "invalid_redirect_uri", why))?;
    }
    let method = match meta.get("token_endpoint_auth_method") {
        None | Some(Value::Null) => "client_secret_basic".to_owned(),
        Some(Value::String(m)) if METHODS.contains(&m.as_str()) => m.clone(),
        Some(_) => {
            return Err(bad(
                "token_endpoint_auth_method must be none, client_secret_post or client_secret_basic",
            ));
        }
    };
    let grant_types = match strings(&meta, "grant_types")? {
        None => vec![GrantType::AuthorizationCode],
        Some(names) => names
            .iter()
            .map(|g| GrantType::parse(g))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                bad(format!(
                    "grant_types may only hold {}",
                    GrantType::listed(" and ")
                ))
            })?,
    };
    let response_types = strings(&meta, "response_types")?.unwrap_or_else(|| vec!["code".into()]);
    if response_types.iter().any(|r| r != "code") {
        return Err(bad("response_types may only hold code"));
    }
    let name = match meta.get("client_name") {
        Some(Value::String(n)) if !n.trim().is_empty() => clean_name(n).map_err(bad)?,
        _ => "Unnamed client".to_owned(),
    };
    Ok(Metadata {
        redirect_uris,
        method,
        grant_types,
        response_types,
        name,
    })
}

fn register_inner(s: &OAuthState, addr: &str, body: &[u8]) -> Result<Response, HttpError> {
    let Metadata {
        redirect_uris,
        method,
        grant_types,
        response_types,
        name,
    } = metadata(s, body)?;
    let store_err = |e: crate::store::StoreError| {
        tracing::error!(error = %e, "registration failed");
        error(
            StatusCode::SERVICE_UNAVAILABLE,
            "temporarily_unavailable",
            "the gateway's state database is unavailable",
        )
    };
    s.store
        .expire_unapproved_clients(now() - secs(UNAPPROVED_TTL))
        .map_err(store_err)?;
    if s.store.client_count().map_err(store_err)? >= s.max_clients {
        return Err(bad(
            "the gateway holds its maximum number of clients; the owner can remove some with `copyq-mcp clients revoke`",
        ));
    }
    if s.unapproved.held(addr) >= Holdings::share(s.max_clients) {
        tracing::warn!("registration refused: one address holds its share of unapproved clients");
        return Err(HttpError::OAuth {
            status: StatusCode::TOO_MANY_REQUESTS,
            code: "temporarily_unavailable",
            description: "this address holds too many clients not yet approved; approve or wait for them to expire (an hour)".into(),
            retry_after: Some(UNAPPROVED_TTL),
        });
    }
    let secret = (method != "none").then(random_token);
    let client = NewClient {
        name: name.clone(),
        redirect_uris: redirect_uris.clone(),
        auth_method: method.clone(),
        secret: secret.clone(),
    };
    let client_id = s.store.register_client(&client).map_err(store_err)?;
    s.unapproved.add(addr, &client_id);
    tracing::info!(client = %crate::logging::field(&name), method = %method, "client registered");
    Ok(reply(
        &client_id,
        Metadata {
            redirect_uris,
            method,
            grant_types,
            response_types,
            name,
        },
        secret,
    ))
}

/// The registration's answer (RFC 7591 3.2.1).
fn reply(client_id: &str, m: Metadata, secret: Option<String>) -> Response {
    let Metadata {
        redirect_uris,
        method,
        grant_types,
        response_types,
        name,
    } = m;
    let mut reply = json!({
        "client_id": client_id,
        "client_id_issued_at": now(),
        "client_name": name,
        "redirect_uris": redirect_uris,
        "grant_types": grant_types.iter().map(|g| g.as_str()).collect::<Vec<_>>(),
        "response_types": response_types,
        "token_endpoint_auth_method": method,
    });
    if let Some(secret) = secret {
        reply["client_secret"] = json!(secret);
        reply["client_secret_expires_at"] = json!(0);
    }
    let mut res = (StatusCode::CREATED, axum::Json(reply)).into_response();
    no_store(&mut res);
    res
}
