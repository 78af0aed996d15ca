//! With `server.sessions = true`: an MCP session belongs to the caller that opened it (its grant,
//! or its token's name, [`Principal::owner_key`]). Any other token naming that session id, to use
//! it or to `DELETE` it, gets the same 404 as an unknown session, so a read token cannot ride on
//! or end a write client's session.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::HttpError;
use crate::auth::Principal;

const SESSION_HEADER: &str = "mcp-session-id";
/// Sessions remembered at most; the oldest beyond it are forgotten (and so refused).
const MAX_SESSIONS: usize = 10_000;

#[derive(Debug, Default)]
pub struct SessionOwners {
    inner: Mutex<(HashMap<String, String>, VecDeque<String>)>,
}

impl SessionOwners {
    fn owner(&self, id: &str) -> Option<String> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner.0.get(id).cloned()
    }

    fn insert(&self, id: String, owner: String) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *inner;
        if map.insert(id.clone(), owner).is_none() {
            order.push_back(id);
        }
        while order.len() > MAX_SESSIONS {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
    }

    fn remove(&self, id: &str) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let (map, order) = &mut *inner;
        map.remove(id);
        order.retain(|s| s != id);
    }
}

/// After the bearer check, before rmcp: a session id must be the caller's own.
pub async fn bind_sessions(
    State(owners): State<Arc<SessionOwners>>,
    req: Request,
    next: Next,
) -> Response {
    let Some(caller) = req
        .extensions()
        .get::<Principal>()
        .map(Principal::owner_key)
    else {
        return next.run(req).await;
    };
    let named = req
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    if let Some(id) = &named
        && owners.owner(id).as_deref() != Some(caller.as_str())
    {
        tracing::warn!("a session id used by another caller than the one that opened it");
        return HttpError::NoSession.into_response();
    }
    let ends = req.method() == Method::DELETE;
    let res = next.run(req).await;
    if let Some(opened) = res
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|_| named.is_none())
    {
        owners.insert(opened.to_owned(), caller);
    }
    if ends
        && res.status().is_success()
        && let Some(id) = &named
    {
        owners.remove(id);
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_are_bounded_and_forgotten_on_delete() {
        let o = SessionOwners::default();
        o.insert("s1".into(), "grant:a".into());
        assert_eq!(o.owner("s1").as_deref(), Some("grant:a"));
        o.remove("s1");
        assert_eq!(o.owner("s1"), None);
        for i in 0..=MAX_SESSIONS {
            o.insert(format!("s{i}"), "sub:x".into());
        }
        assert_eq!(o.owner("s0"), None, "the oldest is forgotten");
        assert!(o.owner(&format!("s{MAX_SESSIONS}")).is_some());
    }
}
