//! Gateways with no CopyQ behind them, for the suites of the HTTP edge (OAuth, bearer tokens,
//! limits, TLS, CORS) that never assert what CopyQ holds: in process over the in-memory backend,
//! or a spawned `serve` whose CopyQ socket and command lead nowhere. No Xvfb and no CopyQ
//! process; the gateway is still served over real HTTP on a loopback port.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use copyq_mcp::backend::{Backend, MemoryBackend};
use copyq_mcp::config::Settings;

use super::{Gateway, launch, loopback_settings};

/// This test binary's dir for edge gateways, made on first use.
fn edge_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::Builder::new()
            .prefix("copyq-mcp-edge-")
            .tempdir()
            .expect("tempdir")
            .keep();
        // Its statics, this dir's owner, are never dropped: removed once the binary is gone.
        copyq_mcp::sandbox::remove_when_gone(&dir).expect("spawn the dir's watchdog");
        dir
    })
}

/// Settings that reach no CopyQ: a socket and a `copyq` command that do not exist, a session of
/// no CopyQ (never the desktop's). The data dir is shared by the binary's edge gateways, as those
/// of one private CopyQ share its `gateway` dir; a suite that needs its own sets `data_dir`.
pub fn point_nowhere(settings: &mut Settings) {
    let dir = edge_dir();
    settings.data_dir = dir.join("gateway").display().to_string();
    settings.copyq.socket = dir.join("no-copyq.sock").display().to_string();
    settings.copyq.command = dir.join("no-copyq").display().to_string();
    settings.copyq.session = "copyq-mcp-edge".into();
}

/// The environment that points a spawned `copyq-mcp serve` nowhere, as [`point_nowhere`]: the
/// socket backend (so no `copyq` process is ever tried) on a socket that does not exist.
pub fn nowhere_env() -> Vec<(&'static str, String)> {
    let mut s = Settings::defaults().expect("default settings");
    point_nowhere(&mut s);
    vec![
        ("COPYQ_MCP__COPYQ__BACKEND", "socket".into()),
        ("COPYQ_MCP__COPYQ__SOCKET", s.copyq.socket),
        ("COPYQ_MCP__COPYQ__COMMAND", s.copyq.command),
        ("COPYQ_MCP__COPYQ__SESSION", s.copyq.session),
    ]
}

/// A gateway on 127.0.0.1:0 over `memory` instead of CopyQ, with settings changed by `tweak`.
pub async fn edge_gateway_over(
    memory: MemoryBackend,
    tweak: impl FnOnce(&mut Settings),
) -> Gateway {
    let mut settings = loopback_settings();
    point_nowhere(&mut settings);
    tweak(&mut settings);
    launch(settings, Some(Backend::Memory(memory))).await
}

/// A gateway on 127.0.0.1:0 over an empty in-memory backend, with settings changed by `tweak`.
pub async fn edge_gateway_with(tweak: impl FnOnce(&mut Settings)) -> Gateway {
    edge_gateway_over(MemoryBackend::default(), tweak).await
}

/// A gateway on 127.0.0.1:0 over an empty in-memory backend, with the default settings.
pub async fn edge_gateway() -> Gateway {
    edge_gateway_with(|_| {}).await
}
