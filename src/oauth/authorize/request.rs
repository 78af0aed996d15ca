//! Checking an authorization request before the consent page shows: which client it names,
//! where it may send the owner back to, and the rest of the request (response type, PKCE,
//! resource). Errors about the client or its redirect URI are pages; the rest go back to the app.

use axum::http::StatusCode;

use super::super::cimd::is_document_id;
use super::super::consent::ClientLabel;
use super::super::redirect;
use super::super::{OAuthState, Pending, is_this_resource};
use crate::http::HttpError;
use crate::store::{ClientInfo, now, secs};

/// The client a request names: a registered one, or one described by a metadata document, and
/// for a document not yet recorded, its redirect URIs (recorded only once the owner approves).
pub(super) async fn find_client(
    s: &OAuthState,
    client_id: &str,
    addr: &str,
) -> Result<(ClientInfo, ClientLabel, Option<Vec<String>>), HttpError> {
    if is_document_id(client_id) {
        return document_client(s, client_id, addr).await;
    }
    match s.store.client(client_id).map_err(unavailable)? {
        Some(c) => {
            let label = ClientLabel::SelfNamed {
                name: c.name.clone(),
            };
            Ok((c, label, None))
        }
        None => Err(HttpError::cannot_connect(
            StatusCode::BAD_REQUEST,
            "This app is not known to the gateway (unknown client_id): it may have been removed. \
             Remove the connector in the app and add it again.",
        )),
    }
}

fn unavailable(e: crate::store::StoreError) -> HttpError {
    tracing::error!(error = %e, "authorize: store unavailable");
    HttpError::cannot_connect(
        StatusCode::SERVICE_UNAVAILABLE,
        "The gateway's state database is unavailable. The owner can look at the gateway's log.",
    )
}

/// The registry is full: no new app until the owner removes some.
pub(in super::super) fn registry_full() -> HttpError {
    HttpError::cannot_connect(
        StatusCode::SERVICE_UNAVAILABLE,
        "The gateway holds its maximum number of apps. The owner can remove some with \
         `copyq-mcp clients purge` or `copyq-mcp clients revoke`.",
    )
}

/// A metadata-document client. One already recorded (approved before) gets its name and
/// redirect URIs refreshed; a new one is a registration: it draws on the address's
/// `registrations_per_hour` and needs a free place in `max_clients`, but takes that place only
/// when the owner approves it, so unanswered junk ids hold nothing.
async fn document_client(
    s: &OAuthState,
    client_id: &str,
    addr: &str,
) -> Result<(ClientInfo, ClientLabel, Option<Vec<String>>), HttpError> {
    let known = s.store.client(client_id).map_err(unavailable)?.is_some();
    if !known
        && s.registrations
            .take(addr, std::time::Instant::now())
            .is_err()
    {
        tracing::warn!(
            "authorize: new metadata-document client refused: too many from one address"
        );
        return Err(HttpError::Page {
            status: StatusCode::TOO_MANY_REQUESTS,
            title: "Too many requests",
            message: "Too many new apps were connected from your address. Wait an hour, then start again from the app.".into(),
        });
    }
    let doc = s
        .documents
        .resolve(client_id)
        .await
        .map_err(|e| document_refused(client_id, &e))?;
    let label = ClientLabel::Verified {
        host: doc.host.clone(),
    };
    if known {
        s.store
            .save_document_client(&doc.client_id, label.name(), &doc.redirect_uris)
            .map_err(unavailable)?;
    } else {
        s.store
            .expire_unapproved_clients(now() - secs(super::super::register::UNAPPROVED_TTL))
            .map_err(unavailable)?;
        if s.store.client_count().map_err(unavailable)? >= s.max_clients {
            return Err(registry_full());
        }
    }
    let client = ClientInfo {
        client_id: doc.client_id.clone(),
        name: label.name().to_owned(),
        redirect_uris: doc.redirect_uris.clone(),
        auth_method: "none".into(),
        secret_hash: None,
        created: now(),
    };
    Ok((client, label, (!known).then_some(doc.redirect_uris)))
}

/// A metadata document that could not be used, told to the owner on the page and in the log:
/// which URL, why, and what to do.
fn document_refused(client_id: &str, e: &super::super::cimd::CimdError) -> HttpError {
    let url = crate::logging::field(client_id);
    let cause = crate::logging::field_up_to(&e.to_string(), 400);
    tracing::warn!(url = %url, cause = %cause, remedy = e.remedy(), "authorize: client metadata document refused");
    let said = e.to_string();
    HttpError::cannot_connect(
        StatusCode::BAD_REQUEST,
        format!(
            "{}{} (its URL: {url}). What the owner can do: {}.",
            said.chars()
                .next()
                .map(|c| c.to_uppercase().to_string())
                .unwrap_or_default(),
            said.chars().skip(1).collect::<String>(),
            e.remedy()
        ),
    )
}

/// The redirect URI of the request: one the client registered (a loopback one on any port), or
/// its only one when the request names none; and at an origin the owner allows.
pub(super) fn redirect_uri(
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
        log_outside_origins(&why);
        return Err(HttpError::cannot_connect(
            StatusCode::BAD_REQUEST,
            "The app wants to send you back to an address the owner does not allow \
             (oauth.redirect_origins), so the request was stopped.",
        ));
    }
    Ok(uri)
}

/// `why` names a redirect URI, which a metadata document (a stranger) wrote: escaped to one line.
fn log_outside_origins(why: &str) {
    let why = crate::logging::field(why);
    tracing::warn!(%why, "authorize: redirect URI outside oauth.redirect_origins");
}

/// The rest of the request, once its redirect URI is known (errors go back to the app): the
/// response type, PKCE S256 (the challenge is kept in `pending`), and the resource.
pub(super) fn check_request<'a>(
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

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_documents_redirect_uri_cannot_forge_a_log_line() {
        let out = Captured::default();
        let writer = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            super::log_outside_origins(
                "redirect URI 'https://a.example/cb\nERROR forged: owner passphrase changed' is outside",
            );
        });
        let log = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(log.lines().count(), 1, "{log}");
        assert!(log.contains(r"cb\nERROR forged"), "{log}");
    }
}
