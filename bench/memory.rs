//! Resident memory of the socket gateway, step by step (`COPYQ_MCP_BENCH_ONLY=memory`): started,
//! after its first calls, after searches of the 10,000-item tab, and under 64 concurrent clients
//! searching; each as the anonymous memory (heap, stacks) and the mapped files (the binary's pages
//! touched), from `/proc/PID/smaps_rollup`, so a growth says which of the two it is.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::json;

use super::{Gateway, post};

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

fn row(step: &str, (rss, anon): (u64, u64)) -> String {
    let mib = |k: u64| k as f64 / 1024.0;
    let line = format!(
        "| {step} | {:.1} | {:.1} | {:.1} |",
        mib(rss),
        mib(anon),
        mib(rss.saturating_sub(anon))
    );
    println!("{line}");
    line
}

fn call(args: serde_json::Value) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mcp_read", "arguments": args}})
}

pub async fn table(copyq: &PrivateCopyq, http: &reqwest::Client) -> Vec<String> {
    // 64 clients on one address: above the default per-address connection cap.
    let g = Gateway::start_with(
        copyq,
        "socket",
        &[("COPYQ_MCP__LIMITS__MAX_CONNECTIONS_PER_ADDRESS", "1024")],
    );
    let mut rows = vec![
        String::new(),
        "## Resident memory of the socket gateway, MiB".to_owned(),
        String::new(),
        "| step | RSS | anonymous (heap, stacks) | files (binary) |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    tokio::time::sleep(Duration::from_millis(500)).await;
    rows.push(row("started, no call yet", rollup(g.pid())));
    let tree = call(json!({"mode": "tree", "scope": "all"}));
    post(http, &g.url, Some(&g.token), &tree).await;
    rows.push(row("after one tree", rollup(g.pid())));
    let search = call(json!({"mode": "search", "query": "needle \\d+", "scope": "mcp"}));
    post(http, &g.url, Some(&g.token), &search).await;
    rows.push(row("after one search of 10,000 items", rollup(g.pid())));
    for _ in 0..30 {
        post(http, &g.url, Some(&g.token), &search).await;
    }
    rows.push(row("after 31 searches (idle)", rollup(g.pid())));
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
    rows.push(format!(
        "| peak under 64 clients (16 searching, 48 reading trees, 3 calls each) | {:.1} | | |",
        peak.load(Ordering::Relaxed) as f64 / 1024.0
    ));
    tokio::time::sleep(Duration::from_secs(1)).await;
    rows.push(row("idle again, 1 s later", rollup(g.pid())));
    rows
}
