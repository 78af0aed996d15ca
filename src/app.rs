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
use crate::config::Settings;
use crate::mcp::Tools;
use crate::oauth::{OAuthState, RedirectPolicy};
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
pub fn token_service(settings: &Settings) -> Result<TokenService, StartError> {
    let key = signing_key(settings)?;
    Ok(TokenService::new(
        &key,
        &settings.auth.issuer,
        &settings.auth.audience,
    )?)
}

/// The backend `copyq.backend` asks for. `auto` takes the socket whenever it can serve and the CLI
/// when CopyQ's socket speaks a layout this gateway does not know, decided again on every new
/// connection (see [`crate::backend::AutoBackend`]).
pub async fn backend(settings: &Settings) -> Backend {
    let mode = settings.copyq.backend.as_str();
    if mode == "cli" {
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
    if mode == "socket" {
        return Backend::Socket(socket);
    }
    let auto = Backend::Auto(AutoBackend::new(socket, cli_backend(settings)));
    let health = auto.health().await;
    if !health.up {
        tracing::info!("CopyQ is not reachable yet; its socket will be used once it is");
    }
    auto
}

/// CopyQ's options file, beside its socket: `<settings>/copyq[-session]/copyq[-session].ini`.
fn copyq_options_file(settings: &Settings) -> Option<PathBuf> {
    let socket = settings.copyq_socket().ok()?;
    let dir = socket.parent()?;
    let name = dir.file_name()?.to_str()?;
    Some(dir.join(format!("{name}.ini")))
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

pub struct Application {
    listener: TcpListener,
    router: axum::Router,
    shutdown: CancellationToken,
    tls: Option<axum_server::tls_rustls::RustlsConfig>,
    url: String,
}

impl Application {
    pub async fn build(settings: &Settings) -> Result<Self, StartError> {
        Self::with_backend(settings, backend(settings).await).await
    }

    pub async fn with_backend(settings: &Settings, backend: Backend) -> Result<Self, StartError> {
        let store = Arc::new(Store::open(&settings.data_dir())?);
        let addr = settings.server.bind;
        let tls = match settings.tls_files() {
            Some(files) => Some((
                crate::tls::load(&files).await.map_err(StartError::Tls)?,
                files,
            )),
            None if addr.ip().is_loopback() => None,
            None if settings.server.allow_plain_http => {
                tracing::warn!(%addr, "serving plain HTTP beyond loopback: tokens and clipboard contents cross the network in the clear");
                None
            }
            None => return Err(StartError::PlainHttp(addr)),
        };
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| StartError::Bind { addr, source })?;
        let base = settings.public_url(listener.local_addr().unwrap_or(addr));
        let resource = format!("{base}/mcp");
        let key = signing_key(settings)?;
        let tokens = Arc::new(TokenService::with_audiences(
            &key,
            &settings.auth.issuer,
            &settings.auth.audience,
            &[&resource],
        )?);
        let oauth = settings.oauth.enabled.then(|| {
            Arc::new(OAuthState::new(
                store.clone(),
                tokens.clone(),
                base.clone(),
                settings.access_token_ttl(),
                settings.refresh_token_ttl(),
                RedirectPolicy::new(settings.oauth.redirect_origins.clone()),
                settings.oauth.max_clients,
            ))
        });
        let metadata = oauth.as_ref().map(|o| o.resource_metadata_url());
        let auth = AuthState::new(tokens, store.clone(), metadata.as_deref());
        let roots = Roots::new(
            settings.clipboard.roots.clone(),
            settings.clipboard.nested_roots.clone(),
        );
        let tools = Arc::new(
            Tools::new(backend, roots)
                .with_audit(store.clone())
                .with_options_file(copyq_options_file(settings)),
        );
        let shutdown = CancellationToken::new();
        let origins = crate::http::OriginPolicy::new(&base, &settings.server.allowed_origins);
        let limiter = crate::http::RateLimiter::new(
            settings.limits.requests_per_minute,
            settings.limits.burst,
        );
        let router = crate::http::router(crate::http::Surface {
            tools,
            auth,
            oauth,
            origins,
            limiter,
            server: &settings.server,
            limits: &settings.limits,
            shutdown: shutdown.child_token(),
        });
        let tls = tls.map(|(config, files)| {
            crate::tls::watch(config.clone(), files, shutdown.child_token());
            config
        });
        Ok(Self {
            listener,
            router,
            shutdown,
            tls,
            url: format!("{base}/mcp"),
        })
    }

    /// The MCP endpoint's URL, as clients reach it.
    pub fn url(&self) -> &str {
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

    pub async fn run_until_stopped(self) -> std::io::Result<()> {
        let shutdown = self.shutdown.clone();
        let Some(tls) = self.tls else {
            return axum::serve(self.listener, self.router)
                .with_graceful_shutdown(async move { shutdown.cancelled().await })
                .await;
        };
        let handle = axum_server::Handle::new();
        let stopper = handle.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            stopper.graceful_shutdown(Some(std::time::Duration::from_secs(10)));
        });
        axum_server::from_tcp_rustls(self.listener.into_std()?, tls)?
            .handle(handle)
            .serve(self.router.into_make_service())
            .await
    }
}
