//! Building the gateway from settings and running it: `Application::build` binds the listener
//! (port 0 works, for tests) and `run_until_stopped` serves until the shutdown token fires.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::auth::{AuthState, TokenService, load_or_create_key};
use crate::backend::{AutoBackend, Backend, CliBackend, CliConfig, SocketBackend, SocketConfig};
use crate::clipboard::Roots;
use crate::config::{BackendKind, Settings};
use crate::mcp::ToolState;
use crate::oauth::cimd::FetchOptions;
use crate::oauth::{OAuthConfig, OAuthState, RedirectPolicy};
use crate::privacy::Privacy;
use crate::public::PublicBase;
use crate::store::{Store, StoreError};

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("signing key: {0}")]
    Key(std::io::Error),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("tokens: {0}")]
    Tokens(#[from] crate::auth::AuthError),
    #[error(
        "refusing to serve plain HTTP on {0}: tokens and clipboard contents would cross the network in the \
         clear. Configure [tls] (copyq-mcp tls generate), bind a loopback address, or set \
         server.allow_plain_http = true"
    )]
    PlainHttp(SocketAddr),
    #[error("{0}")]
    Tls(std::io::Error),
    #[error("{0}")]
    OAuth(String),
    #[error("privacy: {0}")]
    Privacy(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The signing key for these settings: inline, from a key file, or generated in the data dir.
fn signing_key(settings: &Settings) -> Result<Vec<u8>, StartError> {
    if settings.auth.signing_key.is_empty() {
        load_or_create_key(&settings.signing_key_path())
    } else {
        crate::auth::inline_key(&settings.auth.signing_key)
    }
    .map_err(StartError::Key)
}

/// The token service for tokens issued from the command line (audience `auth.audience`).
/// Tokens are tied to the epoch of the state database in the data dir (opened, or made, here).
/// The token service of a running gateway: tokens for scripts under the configured audience, and
/// OAuth access tokens bound to the resource under the name the client used.
fn tokens_for(
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
fn tool_state(
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
        .with_audit(store.clone()))
}

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
        tracing::info!("CopyQ is not reachable yet; its socket will be used once it is");
    }
    auto
}

fn cli_backend(settings: &Settings) -> CliBackend {
    let c = &settings.copyq;
    let non_empty = |s: &String| (!s.is_empty()).then(|| s.clone());
    CliBackend::new(CliConfig {
        command: PathBuf::from(&c.command),
        session: non_empty(&c.session),
        settings_path: non_empty(&c.settings_path).map(PathBuf::from),
        timeout: settings.copyq_timeout(),
        max_concurrent: settings.limits.max_concurrent_copyq_calls,
    })
}

/// Retention (store/retention.rs): at start, then every hour, off the async workers.
fn prune_hourly(
    store: Arc<Store>,
    audit_keep: Option<std::time::Duration>,
    refresh_ttl: std::time::Duration,
    stop: CancellationToken,
) {
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(3600));
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = every.tick() => {}
            }
            let store = store.clone();
            match tokio::task::spawn_blocking(move || store.prune(audit_keep, refresh_ttl)).await {
                Ok(Ok(pruned)) if pruned != crate::store::Pruned::default() => {
                    tracing::info!(?pruned, "pruned the state database")
                }
                Ok(Ok(_)) => {}
                Ok(Err(e)) => tracing::warn!(error = %e, "cannot prune the state database"),
                Err(e) => tracing::warn!(error = %e, "pruning stopped"),
            }
        }
    });
}

/// The built-in TLS config (with its files, for reloading), or none; plain HTTP beyond loopback
/// only when the owner said so.
async fn tls_for(
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
fn oauth_config(settings: &Settings, public: &PublicBase) -> OAuthConfig {
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
    }
}

pub struct Application {
    listener: TcpListener,
    router: axum::Router,
    shutdown: CancellationToken,
    tls: Option<axum_server::tls_rustls::RustlsConfig>,
    url: String,
    connections: Arc<crate::http::conn::ConnLimits>,
    header_timeout: std::time::Duration,
    /// The write lock: a stopping gateway waits for the write in progress (see [`WRITE_DRAIN`]).
    writes: Arc<tokio::sync::RwLock<()>>,
}

/// How long a stopping gateway waits for the write in progress to end. A write runs on after its
/// request is gone (client away, request deadline); stopped halfway it would leave CopyQ's save
/// delays at 0 or a move in both tabs.
const WRITE_DRAIN: std::time::Duration = std::time::Duration::from_secs(30);

impl Application {
    pub async fn build(settings: &Settings) -> Result<Self, StartError> {
        Self::with_backend(settings, backend(settings).await).await
    }

    pub(crate) async fn with_backend(
        settings: &Settings,
        backend: Backend,
    ) -> Result<Self, StartError> {
        let store = Arc::new(Store::open(&settings.data_dir())?);
        let addr = settings.server.bind;
        let tls = tls_for(settings).await?;
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Bind { addr, source })?;
        let bound = listener.local_addr().unwrap_or(addr);
        let public = PublicBase::new(
            &settings.server.public_url,
            settings.tls_files().is_some(),
            bound,
        )
        .with_forwarded_hosts(&settings.server.allowed_hosts);
        let base = public.for_host(None);
        let tokens = Arc::new(tokens_for(settings, &public, &store)?);
        let oauth = match settings.oauth.enabled {
            true => Some(Arc::new(
                OAuthState::new(
                    store.clone(),
                    tokens.clone(),
                    oauth_config(settings, &public),
                )
                .map_err(StartError::OAuth)?,
            )),
            false => None,
        };
        let auth = AuthState::new(
            tokens,
            store.clone(),
            oauth.as_ref().map(|_| public.clone()),
        );
        let tools = Arc::new(tool_state(settings, backend, &store)?);
        let shutdown = CancellationToken::new();
        auth.flush_last_use(shutdown.child_token());
        let origins = crate::http::OriginPolicy::new(&public, &settings.server.allowed_origins);
        let proxies = crate::http::TrustedProxies::parse(&settings.server.trusted_proxies)
            .map_err(StartError::OAuth)?;
        let limiter = crate::http::RateLimiter::new(
            settings.limits.requests_per_minute,
            settings.limits.burst,
        );
        let writes = tools.writes.clone();
        let router = crate::http::router(crate::http::Surface {
            tools,
            auth,
            oauth,
            origins,
            limiter,
            proxies: proxies.clone(),
            server: &settings.server,
            limits: &settings.limits,
            shutdown: shutdown.child_token(),
        });
        prune_hourly(
            store.clone(),
            settings.audit.keep,
            settings.oauth.refresh_token_ttl,
            shutdown.child_token(),
        );
        let tls = tls.map(|(config, files)| {
            crate::tls::watch(config.clone(), files, shutdown.child_token());
            config
        });
        let l = &settings.limits;
        Ok(Self {
            listener,
            router,
            shutdown,
            tls,
            url: format!("{base}/mcp"),
            connections: crate::http::conn::ConnLimits::new(
                l.max_connections,
                l.max_connections_per_address,
                proxies,
            ),
            header_timeout: std::time::Duration::from_millis(l.header_read_timeout_ms),
            writes,
        })
    }

    /// The MCP endpoint's URL, as clients reach it.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Cancelling this token stops the server gracefully.
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serve until the shutdown token fires (then up to 10 s for open requests to finish).
    ///
    /// Plain HTTP and TLS alike go through axum-server, with hyper's header-read timeout (it runs
    /// whenever a connection waits for a request head, so it closes both a client trickling its
    /// headers and an idle keep-alive connection) and the connection caps of
    /// [`crate::http::conn::Capped`].
    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        use crate::http::conn::Capped;
        use axum_server::accept::DefaultAcceptor;
        let handle = axum_server::Handle::new();
        let stopper = handle.clone();
        let shutdown = self.shutdown.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            stopper.graceful_shutdown(Some(std::time::Duration::from_secs(10)));
        });
        let service = self
            .router
            .into_make_service_with_connect_info::<SocketAddr>();
        let mut server = axum_server::from_tcp(self.listener.into_std()?)?.handle(handle);
        server
            .http_builder()
            .http1()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(self.header_timeout);
        let server = server.first_request_timeout(self.header_timeout);
        let capped = Capped::new(DefaultAcceptor::new(), self.connections);
        let served = match self.tls {
            None => server.acceptor(capped).serve(service).await,
            Some(tls) => {
                let tls = axum_server::tls_rustls::RustlsAcceptor::new(tls)
                    .handshake_timeout(self.header_timeout)
                    .acceptor(capped);
                server.acceptor(tls).serve(service).await
            }
        };
        if tokio::time::timeout(WRITE_DRAIN, self.writes.write())
            .await
            .is_err()
        {
            tracing::error!("stopping with a write still in progress");
        }
        served
    }
}
