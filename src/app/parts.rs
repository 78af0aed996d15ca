//! The gateway's parts, each built from its section of the settings: the signing key and token
//! service, the tools' shared state, the CopyQ backend, built-in TLS and the authorization server.
//! [`super::Application`] puts them together.

use std::path::PathBuf;
use std::sync::Arc;

use crate::auth::{TokenService, load_or_create_key};
use crate::backend::{AutoBackend, Backend, CliBackend, CliConfig, SocketBackend, SocketConfig};
use crate::clipboard::Roots;
use crate::config::{BackendKind, Settings};
use crate::mcp::ToolState;
use crate::oauth::cimd::FetchOptions;
use crate::oauth::{OAuthConfig, RedirectPolicy};
use crate::privacy::Privacy;
use crate::public::PublicBase;
use crate::store::Store;

use super::StartError;

/// The signing key for these settings: inline, from a key file, or generated in the data dir.
fn signing_key(settings: &Settings) -> Result<Vec<u8>, StartError> {
    if settings.auth.signing_key.is_empty() {
        load_or_create_key(&settings.signing_key_path())
    } else {
        crate::auth::inline_key(&settings.auth.signing_key)
    }
    .map_err(StartError::Key)
}

/// The token service of a running gateway: tokens for scripts under the configured audience, and
/// OAuth access tokens bound to the resource under the name the client used.
pub(super) fn tokens_for(
    settings: &Settings,
    public: &PublicBase,
    store: &Store,
) -> Result<TokenService, StartError> {
    let resources: Vec<String> = public.all().iter().map(|b| format!("{b}/mcp")).collect();
    let key = signing_key(settings)?;
    Ok(TokenService::with_audiences(
        &key,
        &settings.auth.issuer,
        &settings.auth.audience,
        &resources.iter().map(String::as_str).collect::<Vec<_>>(),
    )?
    .with_epoch(store.epoch()))
}

/// What every tool call shares: the backend, the roots, redaction, the audit log.
pub(super) fn tool_state(
    settings: &Settings,
    backend: Backend,
    store: &Arc<Store>,
) -> Result<ToolState, StartError> {
    let privacy = Privacy::new(settings.privacy.redact, &settings.privacy.patterns)
        .map_err(|e| StartError::Privacy(e.to_string()))?;
    let roots = Roots::new(
        settings.clipboard.roots.clone(),
        settings.clipboard.nested_roots.clone(),
    );
    Ok(ToolState::new(backend, roots)
        .with_privacy(privacy)
        .with_images(crate::mcp::ImagePolicy {
            limits: crate::mcp::ImageLimits {
                max_edge: settings.images.max_edge,
                max_bytes: settings.images.max_bytes,
            },
            external: settings.privacy.external_images,
        })
        .with_audit(store.clone())
        .with_metrics(settings.metrics.enabled)
        .with_surface(settings.mcp))
}

/// The token service for tokens issued from the command line (audience `auth.audience`).
/// Tokens are tied to the epoch of the state database in the data dir (opened, or made, here).
pub fn token_service(settings: &Settings) -> Result<TokenService, StartError> {
    let key = signing_key(settings)?;
    let epoch = Store::open(&settings.data_dir())?.epoch();
    Ok(TokenService::new(&key, &settings.auth.issuer, &settings.auth.audience)?.with_epoch(epoch))
}

/// The backend `copyq.backend` asks for. `auto` takes the socket whenever it can serve and the CLI
/// when CopyQ's socket speaks a layout this gateway does not know, decided again on every new
/// connection (see [`crate::backend::AutoBackend`]).
pub async fn backend(settings: &Settings) -> Backend {
    let mode = settings.copyq.backend;
    if mode == BackendKind::Cli {
        return Backend::Cli(cli_backend(settings));
    }
    let path = match settings.copyq_socket() {
        Ok(path) => path,
        Err(why) => {
            tracing::warn!(%why, "no CopyQ socket path; using the copyq CLI");
            return Backend::Cli(cli_backend(settings));
        }
    };
    let socket = SocketBackend::new(SocketConfig {
        path,
        timeout: settings.copyq_timeout(),
    });
    if mode == BackendKind::Socket {
        return Backend::Socket(socket);
    }
    let auto = Backend::Auto(AutoBackend::new(socket, cli_backend(settings)));
    let health = auto.health().await;
    if !health.up {
        tracing::info!(tried = %auto.target(), "CopyQ is not reachable yet; its socket will be used once it is (`copyq-mcp doctor` shows what was tried)");
    }
    auto
}

fn cli_backend(settings: &Settings) -> CliBackend {
    let c = &settings.copyq;
    let non_empty = |s: &String| (!s.is_empty()).then(|| s.clone());
    CliBackend::new(CliConfig {
        command: crate::backend::cli_program(&c.command),
        session: non_empty(&c.session),
        settings_path: non_empty(&c.settings_path).map(PathBuf::from),
        timeout: settings.copyq_timeout(),
        max_concurrent: settings.limits.max_concurrent_copyq_calls,
    })
}

/// The built-in TLS config (with its files, for reloading), or none; plain HTTP beyond loopback
/// only when the owner said so.
pub(super) async fn tls_for(
    settings: &Settings,
) -> Result<Option<(axum_server::tls_rustls::RustlsConfig, crate::tls::TlsFiles)>, StartError> {
    let addr = settings.server.bind;
    match settings.tls_files() {
        Some(files) => Ok(Some((
            crate::tls::load(&files).await.map_err(StartError::Tls)?,
            files,
        ))),
        None if addr.ip().is_loopback() => Ok(None),
        None if settings.server.allow_plain_http => {
            tracing::warn!(%addr, "serving plain HTTP beyond loopback: tokens and clipboard contents cross the network in the clear");
            Ok(None)
        }
        None => Err(StartError::PlainHttp(addr)),
    }
}

/// The authorization server's settings, from `[oauth]`.
pub(super) fn oauth_config(settings: &Settings, public: &PublicBase) -> OAuthConfig {
    let o = &settings.oauth;
    OAuthConfig {
        base: public.clone(),
        access_ttl: o.access_token_ttl,
        refresh_ttl: o.refresh_token_ttl,
        redirects: RedirectPolicy::new(o.redirect_origins.clone()),
        max_clients: o.max_clients,
        registrations_per_hour: o.registrations_per_hour,
        authorize_per_minute: o.authorize_per_minute,
        documents: FetchOptions {
            allow_private: o.metadata_document_allow_private,
            extra_roots: (!o.metadata_document_ca_file.is_empty())
                .then(|| PathBuf::from(&o.metadata_document_ca_file)),
        },
        redact: settings.privacy.redact,
        external_images: settings.privacy.external_images,
    }
}
