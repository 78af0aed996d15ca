//! The socket backend's durable add alone, against the same add as raw socket calls (the floor):
//! no HTTP, no MCP, no audit log, so what is left is the backend's round trips. Samples of the
//! two alternate, so a machine busy with other work slows both alike.

use std::time::{Duration, Instant};

use copyq_mcp::backend::socket::path::SocketEnv;
use copyq_mcp::backend::{Item, SocketBackend, SocketConfig};
use copyq_mcp::sandbox::PrivateCopyq;

use super::floors::Floors;
use super::stats;

/// The table's row: backend add vs floor add, `n` alternating samples of each.
pub async fn add_row(copyq: &PrivateCopyq, floor: &Floors, n: usize) -> String {
    let env = SocketEnv {
        settings_path: Some(copyq.settings_path()),
        session: Some(copyq.session().to_owned()),
        ..SocketEnv::default()
    };
    let backend = SocketBackend::new(SocketConfig {
        path: env.socket_path().expect("socket path"),
        timeout: Duration::from_secs(30),
    });
    let item = Item::new("benchmark item", &[], "");
    let tab = "mcp/workspace/bench-add-backend";
    let (mut ours, mut floors) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..=n {
        let t = Instant::now();
        backend.insert(tab, &item, 100_000).await.expect("insert");
        let b = t.elapsed();
        let t = Instant::now();
        floor.socket_add().await;
        let f = t.elapsed();
        if i > 0 {
            ours.push(b);
            floors.push(f);
        }
    }
    let (b, f) = (stats(ours), stats(floors));
    format!(
        "| add, backend alone | {:.2} / {:.2} | {:.2} / {:.2} | {:.2}x (+{:.2} ms) |",
        f.0,
        f.1,
        b.0,
        b.1,
        b.0 / f.0,
        b.0 - f.0
    )
}
