//! Registering again from this machine. A local app reconnecting (Codex's `--oauth-client-
//! registration dcr`, an MCP SDK, a test run) registers anew each time, often with a new loopback
//! callback port; counted, an afternoon of trials would hit the per-address registration limit.
//!
//! So a registration from a loopback address that repeats an earlier one never approved (same
//! name, same authentication method, same redirect URIs once loopback ports are set aside) takes
//! that client over: same client id, the new redirect URIs added to the ones it had (so two
//! copies of an app connecting at once both keep their callback; the newest [`KEPT_URIS`]), a new
//! secret for a confidential client, its hour until it is forgotten started again; and it is not
//! counted. The registry does not grow, so nothing is gained by repeating it. Only loopback peers get this (behind a
//! trusted proxy the forwarded address counts, so a remote client through a tunnel does not); a
//! client that has been approved is never taken over.

use url::Url;

use super::super::OAuthState;
use super::Metadata;
use crate::public::is_loopback;
use crate::store::{ClientInfo, random_token};

/// Redirect URIs a taken-over client keeps, newest first.
const KEPT_URIS: usize = 8;

/// The earlier unapproved twin of this registration, renewed: (its client id, the new secret).
/// `None` when there is none, or the store fails (the registration then goes the counted way).
pub(super) fn take_over(s: &OAuthState, m: &Metadata) -> Option<(String, Option<String>)> {
    let twins = s.store.unapproved_named(&m.name, &m.method).ok()?;
    let wanted = portless(&m.redirect_uris);
    let twin: &ClientInfo = twins
        .iter()
        .find(|c| portless(&c.redirect_uris) == wanted)?;
    let mut uris = m.redirect_uris.clone();
    for old in &twin.redirect_uris {
        if !uris.contains(old) {
            uris.push(old.clone());
        }
    }
    uris.truncate(KEPT_URIS.max(m.redirect_uris.len()));
    let secret = (m.method != "none").then(random_token);
    let renewed = s
        .store
        .renew_unapproved_client(&twin.client_id, &uris, secret.as_deref())
        .ok()?;
    renewed.then(|| (twin.client_id.clone(), secret))
}

/// Redirect URIs with the port of loopback `http` ones taken out, sorted: what stays the same
/// when a native app reconnects on another port.
fn portless(uris: &[String]) -> Vec<String> {
    let mut out: Vec<String> = uris
        .iter()
        .map(|u| match Url::parse(u) {
            Ok(mut url) if url.scheme() == "http" && is_loopback(&url) => {
                let _ = url.set_port(None);
                url.to_string()
            }
            _ => u.clone(),
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_ports_are_set_aside() {
        let a = portless(&["http://127.0.0.1:5555/callback".into()]);
        assert_eq!(a, portless(&["http://127.0.0.1:6666/callback".into()]));
        assert_ne!(a, portless(&["http://127.0.0.1:6666/other".into()]));
        assert_ne!(a, portless(&["http://localhost:5555/callback".into()]));
        let https = |p: &str| portless(&[format!("https://app.example:{p}/cb")]);
        assert_ne!(https("1"), https("2"), "only loopback http ports vary");
    }
}
