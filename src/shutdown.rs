//! How a running gateway is told to stop: SIGINT or SIGTERM cancel its shutdown token, for a
//! graceful stop (used by `serve` and `demo`). On Windows the same stop comes from Ctrl-C or
//! Ctrl-Break, the console window being closed, or the user logging off or the system shutting
//! down (the console control events tokio exposes).

/// The first event of a listener (`io::Result` of a tokio signal stream); never, when its handler
/// could not be installed. (A macro: each platform's streams are distinct types with no trait.)
macro_rules! first {
    ($listener:expr) => {
        async {
            match $listener {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        }
    };
}

/// Cancel `token` on SIGINT or SIGTERM. The handlers are in place when this returns, so a signal
/// sent as soon as the listening line is out is not the default (a kill).
#[cfg(unix)]
pub(crate) fn stop_on_signal(token: tokio_util::sync::CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    tokio::spawn(async move {
        tokio::select! {
            _ = first!(int) => {}
            _ = first!(term) => {}
        }
        tracing::info!("stopping");
        token.cancel();
    });
}

/// Cancel `token` on a console control event (see the module's doc). The handlers are in place
/// when this returns, as on Unix.
#[cfg(windows)]
pub(crate) fn stop_on_signal(token: tokio_util::sync::CancellationToken) {
    use tokio::signal::windows;
    let c = windows::ctrl_c();
    let brk = windows::ctrl_break();
    let close = windows::ctrl_close();
    let logoff = windows::ctrl_logoff();
    let shutdown = windows::ctrl_shutdown();
    tokio::spawn(async move {
        tokio::select! {
            _ = first!(c) => {}
            _ = first!(brk) => {}
            _ = first!(close) => {}
            _ = first!(logoff) => {}
            _ = first!(shutdown) => {}
        }
        tracing::info!("stopping");
        token.cancel();
    });
}

/// The "reload" signal (SIGHUP) the TLS watcher listens for; Windows has none, and relies on the
/// watcher's polling of the files alone.
pub(crate) struct Hangup(#[cfg(unix)] Option<tokio::signal::unix::Signal>);

impl Hangup {
    pub(crate) fn new() -> Self {
        #[cfg(unix)]
        return Self(tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()).ok());
        #[cfg(windows)]
        Self()
    }

    /// The next SIGHUP; never, when there is no handler (or no such signal).
    pub(crate) async fn recv(&mut self) {
        #[cfg(unix)]
        if let Some(s) = self.0.as_mut() {
            s.recv().await;
            return;
        }
        std::future::pending().await
    }
}
