//! Live changes of covered tabs: `resources/subscribe` (up to 2025-11-25) and
//! `subscriptions/listen` (2026-07-28). CopyQ's socket gives no change stream, so a subscription
//! polls its tab while it lives, and only then: every [`POLL`], one read of the tab's row count,
//! its newest rows and one deeper chunk in turn (a rolling sweep, see [`super::sweep`]), whole,
//! gives a fingerprint that is compared with the last one, and a change sends
//! `notifications/resources/updated`: within a poll for the newest rows and the count, within a
//! sweep of the tab for deeper rows (two polls for 200 rows).
//!
//! A subscription ends when its session (or listen request) ends, when its token expires or is
//! revoked (checked every [`TOKEN_CHECK`] polls), or on `resources/unsubscribe`; a token holds at
//! most [`MAX_PER_TOKEN`] at once, across its sessions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    InitializeResult, ProtocolVersion, ResourceUpdatedNotificationParam, SubscriptionFilter,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData as McpError, RoleServer};
use tokio_util::sync::CancellationToken;

use super::parse;
use super::registry::{Followed, MAX_PER_TOKEN};
use super::sweep::{HEAD, Sweep};
use crate::auth::Principal;
use crate::backend::TabRows;
use crate::mcp::ToolState;

/// How often a subscribed tab is looked at: a change in its head is told within this (plus one
/// read), one deeper within a sweep of the tab (see [`super::sweep`]).
pub const POLL: Duration = Duration::from_millis(400);
/// Polls between two checks that the token still holds (expiry, revocation).
const TOKEN_CHECK: u32 = 5;

/// The caller's principal and HTTP request parts on this request.
fn caller(ctx: &RequestContext<RoleServer>) -> Option<(&http::request::Parts, &Principal)> {
    let parts = ctx.extensions.get::<http::request::Parts>()?;
    Some((parts, parts.extensions.get::<Principal>()?))
}

fn session_of(parts: &http::request::Parts) -> Option<&str> {
    parts.headers.get("mcp-session-id")?.to_str().ok()
}

/// What decides whether the token behind a subscription still holds.
#[derive(Debug, Clone)]
struct TokenLife {
    jti: String,
    grant: Option<String>,
    /// The token's `exp`, as the bearer check verified it.
    exp: Option<u64>,
}

impl TokenLife {
    fn of(principal: &Principal) -> Self {
        Self {
            jti: principal.token_id.clone(),
            grant: principal.grant.clone(),
            exp: principal.expires,
        }
    }

    async fn holds(&self, tools: &ToolState) -> bool {
        self.holds_in(tools.audit.clone()).await
    }

    /// Whether the token holds by `store` (the gateway's; none without one): not expired, not
    /// revoked, its grant live. Asked as the bearer check asks it (the reader connection, and off
    /// the async workers when the database is busy); a store that cannot answer ends the
    /// subscription, as the bearer check refuses the request (it held it open before).
    async fn holds_in(&self, store: Option<Arc<crate::store::Store>>) -> bool {
        if self
            .exp
            .is_some_and(|exp| crate::store::now() >= exp as i64)
        {
            return false;
        }
        let Some(store) = store else {
            return true;
        };
        let (jti, grant) = (self.jti.clone(), self.grant.clone());
        let allowed = match store.token_allowed_now(&jti, grant.as_deref()) {
            Ok(Some(allowed)) => Ok(allowed),
            Ok(None) => {
                tokio::task::spawn_blocking(move || store.token_allowed(&jti, grant.as_deref()))
                    .await
                    .unwrap_or_else(|e| Err(crate::store::StoreError::Invalid(e.to_string())))
            }
            Err(e) => Err(e),
        };
        allowed.unwrap_or_else(|e| {
            tracing::error!(error = %e, "token store unavailable; a subscription ends");
            false
        })
    }
}

/// Where a change is told.
enum Notifier {
    Session(Peer<RoleServer>),
    Listen(SubscriptionSink),
}

impl Notifier {
    async fn send(&self, uri: &str) -> bool {
        match self {
            Self::Session(peer) => peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_ok(),
            Self::Listen(sink) => sink.notify_resource_updated(uri).await.is_ok(),
        }
    }

    fn closed(&self) -> bool {
        matches!(self, Self::Session(peer) if peer.is_transport_closed())
    }
}

/// The fingerprint of `tab` now (or from less than half a poll ago); `None` when CopyQ could not
/// be read (then nothing is told).
pub async fn fingerprint(tools: &ToolState, tab: &str) -> Option<u64> {
    // Half a poll: every subscriber of the tab polls once per POLL, one of them reads CopyQ.
    let _one_read = tools.watches.polling.lock().await;
    if let Some(known) = tools.watches.recent(tab, POLL / 2) {
        return known;
    }
    let mut sweep = tools.watches.sweep(tab);
    let fingerprint = read_fingerprint(tools, tab, &mut sweep).await;
    let followed = Followed {
        at: Instant::now(),
        fingerprint,
        sweep,
    };
    tools.watches.remember(tab, followed, POLL * 10);
    fingerprint
}

/// One read of `tab`'s head and `sweep`'s next chunk, whole, in one batch (one `copyq` process on
/// the CLI), taken into `sweep`.
async fn read_fingerprint(tools: &ToolState, tab: &str, sweep: &mut Sweep) -> Option<u64> {
    let (chunk, deep) = sweep.plan();
    let wanted = [TabRows {
        name: tab.to_owned(),
        rows: (0..HEAD).chain(deep).collect(),
    }];
    let pages = {
        let _shared = tools.writes.read().await;
        tools.backend.read_rows(&wanted).await.ok()?
    };
    let Some(page) = pages.into_iter().find(|p| p.name == tab) else {
        return Some(sweep.record(None, &[], (chunk, &[])));
    };
    let (head, deep) = page.items.split_at(HEAD.min(page.items.len()));
    Some(sweep.record(Some(page.total), head, (chunk, deep)))
}

/// The fingerprints of `watched` now: what [`follow`] compares the next ones with.
async fn baseline(tools: &ToolState, watched: &[(String, String)]) -> Vec<Option<u64>> {
    let mut out = Vec::with_capacity(watched.len());
    for (_, tab) in watched {
        out.push(fingerprint(tools, tab).await);
    }
    out
}

/// Polls `watched` (URI, tab), from the fingerprints `last`, until `stop`, the session ends or the token stops holding.
async fn follow(
    tools: &ToolState,
    watched: &[(String, String)],
    mut last: Vec<Option<u64>>,
    (notifier, stop, token): (&Notifier, &CancellationToken, &TokenLife),
) {
    for polls in 1u32.. {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(POLL) => {}
        }
        if notifier.closed() || (polls % TOKEN_CHECK == 0 && !token.holds(tools).await) {
            return;
        }
        for ((uri, tab), seen) in watched.iter().zip(last.iter_mut()) {
            let now = fingerprint(tools, tab).await;
            if now.is_some() && now != *seen {
                *seen = now;
                if !notifier.send(uri).await {
                    return;
                }
            }
        }
    }
}

/// `resources/subscribe`: the URI must name a tab (or item) the caller can read now.
pub async fn subscribe(
    tools: &Arc<ToolState>,
    uri: &str,
    ctx: &RequestContext<RoleServer>,
) -> Result<(), McpError> {
    let (parts, principal) =
        caller(ctx).ok_or_else(|| McpError::resource_not_found("Resource not found", None))?;
    let Some(session) = session_of(parts) else {
        return Err(McpError::invalid_request(
            "resources/subscribe needs a session",
            None,
        ));
    };
    super::read(tools, principal, uri).await?;
    let tab = parse(uri).map(|t| t.tab).unwrap_or_default();
    let key = (session.to_owned(), uri.to_owned());
    let Some((id, stop)) = tools.watches.add(&principal.token_id, key)? else {
        return Ok(());
    };
    let (tools, token) = (tools.clone(), TokenLife::of(principal));
    let notifier = Notifier::Session(ctx.peer.clone());
    let watched = vec![(uri.to_owned(), tab)];
    // Taken before the answer: a change the client makes once subscribed is always seen.
    let last = baseline(&tools, &watched).await;
    tokio::spawn(async move {
        follow(&tools, &watched, last, (&notifier, &stop, &token)).await;
        tools.watches.forget(&token.jti, id);
    });
    Ok(())
}

/// `resources/unsubscribe`: ends this session's subscription of `uri` (none: nothing to do).
pub fn unsubscribe(tools: &ToolState, uri: &str, ctx: &RequestContext<RoleServer>) {
    if let Some((parts, principal)) = caller(ctx)
        && let Some(session) = session_of(parts)
    {
        let key = (session.to_owned(), uri.to_owned());
        tools.watches.stop(&principal.token_id, &key);
    }
}

/// `resources.subscribe` kept in an `initialize` answer only where the negotiated version can
/// use it: with sessions (its notifications need the session's stream); 2026-07-28
/// (`subscriptions/listen`, one stream per request) needs none.
pub fn advertise(info: &mut InitializeResult, sessions: bool) {
    let modern = info.protocol_version.as_str() >= ProtocolVersion::V_2026_07_28.as_str();
    if let Some(resources) = info.capabilities.resources.as_mut()
        && !(sessions || modern)
    {
        resources.subscribe = None;
    }
}

/// What `subscriptions/listen` accepts before the caller is known: resource URIs of ours only.
/// Which of them the caller covers is decided in [`listen`], which follows those alone.
pub fn accepted(requested: &SubscriptionFilter) -> SubscriptionFilter {
    let uris: Vec<String> = requested
        .resource_subscriptions
        .iter()
        .flatten()
        .filter(|uri| parse(uri).is_some())
        .take(MAX_PER_TOKEN)
        .cloned()
        .collect();
    SubscriptionFilter::builder()
        .resource_subscriptions(uris)
        .build()
}

/// `subscriptions/listen`: follows the accepted URIs the caller can read, until the request ends.
pub async fn listen(tools: &Arc<ToolState>, context: SubscriptionContext) -> Result<(), McpError> {
    let ctx = context.request_context();
    let (_, principal) =
        caller(ctx).ok_or_else(|| McpError::resource_not_found("Resource not found", None))?;
    // Its own key, not the request's id: a listen needs no session, so every client's listen is
    // request 1 or so of its connection, and two of one token at once would be taken for one.
    let listen_id = tools.watches.listen_key();
    let mut watched = Vec::new();
    let mut ids = Vec::new();
    let stop = ctx.ct.clone();
    for uri in context.accepted().resource_subscriptions.iter().flatten() {
        let (Some(target), Ok(_)) = (parse(uri), super::read(tools, principal, uri).await) else {
            continue;
        };
        let key = (listen_id.clone(), uri.clone());
        let added = tools.watches.add(&principal.token_id, key);
        let registered = match added {
            Ok(added) => added,
            Err(e) => {
                ids.iter()
                    .for_each(|id| tools.watches.forget(&principal.token_id, *id));
                return Err(e);
            }
        };
        if let Some((id, _)) = registered {
            ids.push(id);
            watched.push((uri.clone(), target.tab));
        }
    }
    let token = TokenLife::of(principal);
    let notifier = Notifier::Listen(context.sink().clone());
    // rmcp acknowledged the subscription before this runs: a change in between is not seen.
    let last = baseline(tools, &watched).await;
    follow(tools, &watched, last, (&notifier, &stop, &token)).await;
    ids.iter()
        .for_each(|id| tools.watches.forget(&token.jti, *id));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn life(jti: &str) -> TokenLife {
        TokenLife {
            jti: jti.into(),
            grant: None,
            exp: None,
        }
    }

    /// A revoked token's subscription ends; one whose store cannot answer ends too (it was held
    /// open: an error counted as "still allowed").
    #[tokio::test]
    async fn a_token_holds_only_while_its_store_says_so() {
        let dir = tempfile::tempdir().expect("dir");
        let store = Arc::new(crate::store::Store::open(dir.path()).expect("store"));
        for jti in ["j1", "j2"] {
            let token = crate::store::TokenInfo {
                jti: jti.into(),
                subject: "script".into(),
                role: "read".into(),
                grant_id: None,
                created: 0,
                expires: None,
                revoked: false,
                tabs: None,
            };
            store.record_token(&token).expect("record");
        }
        assert!(life("j1").holds_in(Some(store.clone())).await);
        store.revoke_token("j1").expect("revoke");
        assert!(!life("j1").holds_in(Some(store.clone())).await);
        assert!(life("j2").holds_in(Some(store.clone())).await);
        let raw = rusqlite::Connection::open(dir.path().join(crate::store::FILE)).expect("db");
        raw.execute_batch("DROP TABLE tokens").expect("drop");
        assert!(!life("j2").holds_in(Some(store)).await);
        let expired = TokenLife {
            exp: Some(1),
            ..life("j3")
        };
        assert!(!expired.holds_in(None).await);
        assert!(life("j3").holds_in(None).await);
    }
}
