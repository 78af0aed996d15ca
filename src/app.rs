//! Building the gateway from settings and running it: `Application::build` binds the listener
//! (port 0 works, for tests) and `run_until_stopped` serves until the shutdown token fires.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::backend::Backend;
use crate::config::Settings;
use crate::http::AuthState;
use crate::mcp::ToolState;
use crate::oauth::OAuthState;
use crate::public::PublicBase;
use crate::store::{Store, StoreError};

mod parts;
pub use parts::{backend, token_service};
use parts::{oauth_config, tls_for, tokens_for, tool_state};

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

/// How client-ID metadata documents are fetched under these settings, as a running gateway would
/// (for `doctor`, which fetches them to see whether it can).
pub(crate) fn document_fetch(settings: &Settings) -> crate::oauth::cimd::FetchOptions {
    let public = PublicBase::new(
        &settings.server.public_url,
        settings.tls_files().is_some(),
        settings.server.bind,
    );
    oauth_config(settings, &public).documents
}

/// The listener on `server.bind`, and the base URL(s) the gateway answers under.
async fn listen(settings: &Settings) -> Result<(TcpListener, PublicBase), StartError> {
    let addr = settings.server.bind;
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
    Ok((listener, public))
}

/// The routes with their layers (origin and proxy policy, rate limit), and the trusted proxies
/// the connection caps also need.
fn router(
    settings: &Settings,
    public: &PublicBase,
    tools: Arc<ToolState>,
    auth: AuthState,
    oauth: Option<Arc<OAuthState>>,
    shutdown: &CancellationToken,
) -> Result<(axum::Router, crate::http::TrustedProxies), StartError> {
    let origins = crate::http::OriginPolicy::new(public, &settings.server.allowed_origins);
    let proxies = crate::http::TrustedProxies::parse(&settings.server.trusted_proxies)
        .map_err(StartError::OAuth)?
        .with_v6_prefix(settings.limits.ipv6_prefix);
    let limiter =
        crate::http::RateLimiter::new(settings.limits.requests_per_minute, settings.limits.burst);
    let router = crate::http::router(crate::http::Surface {
        tools,
        auth,
        oauth: oauth.map(crate::oauth::router),
        origins,
        limiter,
        proxies: proxies.clone(),
        server: &settings.server,
        limits: &settings.limits,
        shutdown: shutdown.child_token(),
    });
    Ok((router, proxies))
}

pub struct Application {
    listener: TcpListener,
    router: axum::Router,
    shutdown: CancellationToken,
    tls: Option<axum_server::tls_rustls::RustlsConfig>,
    url: String,
    connections: Arc<crate::http::conn::ConnLimits>,
    header_timeout: std::time::Duration,
    max_streams: u32,
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

    /// The gateway over `backend` instead of the one `copyq.backend` names: the suites of the
    /// HTTP edge (OAuth, tokens, limits, TLS, CORS) pass the in-memory backend and run with no
    /// CopyQ. Only code calls this; no setting, variable or flag reaches it, so a configured
    /// gateway always talks to CopyQ.
    pub async fn with_backend(settings: &Settings, backend: Backend) -> Result<Self, StartError> {
        let store = Arc::new(Store::open(&settings.data_dir())?);
        store.set_audit_max_bytes(settings.audit.max_bytes);
        let tls = tls_for(settings).await?;
        let (listener, public) = listen(settings).await?;
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
        let writes = tools.writes.clone();
        let (router, proxies) = router(settings, &public, tools, auth, oauth, &shutdown)?;
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
            url: format!("{}/mcp", public.for_host(None)),
            connections: crate::http::conn::ConnLimits::new(
                l.max_connections,
                l.max_connections_per_address,
                proxies,
                std::time::Duration::from_millis(l.header_read_timeout_ms),
            ),
            header_timeout: std::time::Duration::from_millis(l.header_read_timeout_ms),
            max_streams: l.max_streams_per_connection,
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
    /// headers and an idle keep-alive connection), the connection caps and idle watchdog of
    /// [`crate::http::conn::Capped`] (HTTP/2 has no idle timeout of its own), and for HTTP/2 a
    /// cap on concurrent streams and keep-alive pings that drop a peer gone silent mid-request.
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
        server
            .http_builder()
            .http2()
            .timer(hyper_util::rt::TokioTimer::new())
            .max_concurrent_streams(self.max_streams)
            .keep_alive_interval(self.header_timeout)
            .keep_alive_timeout(self.header_timeout);
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
