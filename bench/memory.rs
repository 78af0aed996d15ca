//! Resident memory of the socket gateway, step by step (`COPYQ_MCP_BENCH_ONLY=memory`): started,
//! after its first calls, after searches of the 10,000-item tab, and under 64 concurrent clients
//! searching; each as the anonymous memory (heap, stacks) and the mapped files (the binary's pages
//! touched), from `/proc/PID/smaps_rollup`, so a growth says which of the two it is.
//! With `COPYQ_MCP_BENCH_BEFORE` naming other builds of the gateway (one path, or several joined
//! as in `PATH`), each is taken through the same steps after this one, and the table has a column
//! for each build.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::json;

use super::{BIN, Gateway, post};

/// An external tab holding the realistic clipboard corpus (3,000 items, secrets of every kind it
/// has), made and listed whole last: what a gateway holds once its owner's clipboard has needed
/// the rules (compiled when a text first holds a keyword of theirs) and filled the redactor's
/// seen-texts cache.
const CLIPBOARD: &str = "history";
const CORPUS: &str = include_str!("../tests/fixtures/secrets/clipboard.jsonl");

/// The steps, in the order taken.
const STEPS: [&str; 9] = [
    "started, no call yet",
    "after one tree",
    "after one search of 10,000 items",
    "after 31 searches (idle)",
    "the same, 5 s later",
    "peak under 64 clients (16 searching, 48 reading trees, 3 calls each)",
    "idle again, 1 s later",
    "idle again, 5 s later",
    "5 s after listing the 3,000 items of the realistic clipboard corpus (an external tab)",
];

/// `(rss, anonymous)` KiB of `pid`.
fn rollup(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("Rss:"), field("Anonymous:"))
}

/// One reading as "RSS (anonymous + files)" MiB; the peak has the RSS alone (`anon` is `None`).
fn cell(rss: u64, anon: Option<u64>) -> String {
    let mib = |k: u64| k as f64 / 1024.0;
    match anon {
        Some(anon) => format!(
            "{:.1} ({:.1} + {:.1})",
            mib(rss),
            mib(anon),
            mib(rss.saturating_sub(anon))
        ),
        None => format!("{:.1}", mib(rss)),
    }
}

fn call(args: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_read", "arguments": args}})
}

pub async fn table(copyq: &PrivateCopyq, http: &reqwest::Client) -> Vec<String> {
    let mut builds = vec![BIN.to_owned()];
    if let Some(others) = std::env::var_os("COPYQ_MCP_BENCH_BEFORE") {
        builds.extend(std::env::split_paths(&others).map(|p| p.display().to_string()));
    }
    let mut columns = Vec::new();
    for bin in &builds {
        columns.push(steps(bin, copyq, http).await);
    }
    let mut rows = vec![
        String::new(),
        "## Resident memory of the socket gateway, MiB: RSS (anonymous: heap, stacks + files: the binary)"
            .to_owned(),
        String::new(),
        format!("| step | {} |", builds.join(" | ")),
        format!("|---|{}", "---|".repeat(builds.len())),
    ];
    for (i, step) in STEPS.iter().enumerate() {
        let cells: Vec<&str> = columns.iter().map(|c| c[i].as_str()).collect();
        rows.push(format!("| {step} | {} |", cells.join(" | ")));
    }
    rows
}

/// The gateway built at `bin` through [`STEPS`], a cell for each.
async fn steps(bin: &str, copyq: &PrivateCopyq, http: &reqwest::Client) -> Vec<String> {
    // 64 clients on one address: above the default per-address connection cap.
    let g = Gateway::start_bin(
        bin,
        copyq,
        "socket",
        &[("COPYQ_MCP__LIMITS__MAX_CONNECTIONS_PER_ADDRESS", "1024")],
    );
    let read = |pid| {
        let (rss, anon) = rollup(pid);
        let cell = cell(rss, Some(anon));
        println!("{bin}: {cell}");
        cell
    };
    let mut cells = Vec::new();
    tokio::time::sleep(Duration::from_millis(500)).await;
    cells.push(read(g.pid()));
    let tree = call(json!({"mode": "tree", "scope": "all"}));
    post(http, &g.url, Some(&g.token), &tree).await;
    cells.push(read(g.pid()));
    let search = call(json!({"mode": "search", "query": "needle \\d+", "scope": "mcp"}));
    post(http, &g.url, Some(&g.token), &search).await;
    cells.push(read(g.pid()));
    for _ in 0..30 {
        post(http, &g.url, Some(&g.token), &search).await;
    }
    cells.push(read(g.pid()));
    // An idle gateway is one nobody calls: what it holds a few seconds on, once an allocator that
    // gives memory back on a delay has done so.
    tokio::time::sleep(Duration::from_secs(5)).await;
    cells.push(read(g.pid()));
    let peak = Arc::new(AtomicU64::new(0));
    let (pid, peak2) = (g.pid(), peak.clone());
    let sampler = tokio::spawn(async move {
        loop {
            peak2.fetch_max(rollup(pid).0, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    let mut clients = Vec::new();
    for i in 0..64 {
        let (http, url, token) = (http.clone(), g.url.clone(), g.token.clone());
        let body = if i % 4 == 0 {
            search.clone()
        } else {
            tree.clone()
        };
        clients.push(tokio::spawn(async move {
            for _ in 0..3 {
                post(&http, &url, Some(&token), &body).await;
            }
        }));
    }
    for c in clients {
        c.await.expect("client");
    }
    sampler.abort();
    cells.push(cell(peak.load(Ordering::Relaxed), None));
    tokio::time::sleep(Duration::from_secs(1)).await;
    cells.push(read(g.pid()));
    tokio::time::sleep(Duration::from_secs(4)).await;
    cells.push(read(g.pid()));
    // Made only now, and removed after, so that the steps before stay those of earlier runs.
    seed_clipboard(copyq);
    for skip in (0..3000).step_by(100) {
        let list = json!({"mode": "list", "tab": CLIPBOARD, "scope": "external", "max_items": 100, "skip": skip});
        let reply = post(http, &g.url, Some(&g.token), &call(list)).await;
        if skip == 0 {
            assert!(reply.to_string().contains("[redacted:"), "{reply}");
        }
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    cells.push(read(g.pid()));
    copyq
        .eval(&format!("removeTab('{CLIPBOARD}')"), b"")
        .expect("remove the clipboard tab");
    cells
}

fn seed_clipboard(copyq: &PrivateCopyq) {
    let texts: Vec<serde_json::Value> = CORPUS
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|it| it["text"].clone())
        .collect();
    let script = format!(
        "tab('{CLIPBOARD}'); var xs = JSON.parse(str(input())); \
         for (var i = xs.length - 1; i >= 0; --i) add(xs[i]); unload()"
    );
    let json = serde_json::to_vec(&texts).expect("JSON");
    copyq.eval(&script, &json).expect("seed the clipboard tab");
}
