//! How a running gateway is told to stop: SIGINT or SIGTERM cancel its shutdown token, for a
//! graceful stop (used by `serve` and `demo`).

/// Cancel `token` on SIGINT or SIGTERM. The handlers are in place when this returns, so a signal
/// sent as soon as the listening line is out is not the default (a kill).
pub(crate) fn stop_on_signal(token: tokio_util::sync::CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let term = signal(SignalKind::terminate());
    let int = signal(SignalKind::interrupt());
    tokio::spawn(async move {
        let wait = |s: std::io::Result<tokio::signal::unix::Signal>| async move {
            match s {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = wait(int) => {}
            _ = wait(term) => {}
        }
        tracing::info!("stopping");
        token.cancel();
    });
}
