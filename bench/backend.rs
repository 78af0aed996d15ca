//! The socket backend alone (a durable add, a tree's read of every tab), against the same work as
//! raw socket calls (the floor): no HTTP, no MCP, no audit log, so what is left is the backend's
//! round trips and decoding. Samples of the two alternate, so a machine busy with other work slows
//! both alike.

use std::time::Duration;

use copyq_mcp::backend::socket::path::SocketEnv;
use copyq_mcp::backend::{Item, ReadRequest, SocketBackend, SocketConfig, TabSelector};
use copyq_mcp::sandbox::PrivateCopyq;

use super::floors::Floors;
use super::{alternated, stats};

fn backend(copyq: &PrivateCopyq) -> SocketBackend {
    let env = SocketEnv {
        settings_path: Some(copyq.settings_path()),
        session: Some(copyq.session().to_owned()),
        ..SocketEnv::default()
    };
    SocketBackend::new(SocketConfig {
        path: env.socket_path().expect("socket path"),
        timeout: Duration::from_secs(30),
    })
}

/// The row of the tree's read (every tab, 20 rows of each) vs its floor, `n` alternating samples.
pub async fn tree_row(copyq: &PrivateCopyq, floor: &Floors, n: usize) -> String {
    let request = ReadRequest {
        tabs: TabSelector::All {},
        skip: 0,
        limit: Some(20),
        preview: Some(100),
    };
    let (floors, ours) = read_vs_floor(copyq, &request, floor, "tree scope:all", n).await;
    row("tree scope:all, backend alone", stats(floors), stats(ours))
}

/// The row of a search's read (every item of every `mcp/` tab, whole) vs the floor's whole search
/// (the same read, matched), `n` alternating samples: what the backend adds before any matching.
pub async fn search_row(copyq: &PrivateCopyq, floor: &Floors, n: usize) -> String {
    let request = ReadRequest {
        tabs: TabSelector::Prefix {
            prefix: "mcp/".into(),
            invert: false,
        },
        skip: 0,
        limit: None,
        preview: None,
    };
    let (floors, ours) = read_vs_floor(copyq, &request, floor, "search 10,000 items", n).await;
    row("search's read, backend alone", stats(floors), stats(ours))
}

/// `n` samples of the backend's `request` alternating with the floor's `op` (a first, warming
/// pair not counted): (floor, ours).
async fn read_vs_floor(
    copyq: &PrivateCopyq,
    request: &ReadRequest,
    floor: &Floors,
    op: &str,
    n: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let backend = backend(copyq);
    let (ours, floors) = alternated(
        n,
        || async {
            backend.read(request).await.expect("read");
        },
        || floor.socket_once(op),
    )
    .await;
    (floors, ours)
}

fn row(name: &str, f: (f64, f64), b: (f64, f64)) -> String {
    format!(
        "| {name} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2}x (+{:.2} ms) |",
        f.0,
        f.1,
        b.0,
        b.1,
        b.0 / f.0,
        b.0 - f.0
    )
}

/// The table's row: backend add vs floor add, `n` alternating samples of each.
pub async fn add_row(copyq: &PrivateCopyq, floor: &Floors, n: usize) -> String {
    let backend = backend(copyq);
    let item = Item::new("benchmark item", &[], "");
    let tab = "mcp/workspace/bench-add-backend";
    let (ours, floors) = alternated(
        n,
        || async {
            backend.insert(tab, &item, 100_000).await.expect("insert");
        },
        || floor.socket_add(),
    )
    .await;
    row("add, backend alone", stats(floors), stats(ours))
}
