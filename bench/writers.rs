//! Durable adds at 1, 8 and 64 concurrent writers (`COPYQ_MCP_BENCH_ONLY=writers`, socket backend):
//! throughput and latency of `mcp_write add`, each acknowledged once on disk. With
//! `COPYQ_MCP_BENCH_BEFORE` naming other builds of the gateway (one path, or `label=path,...`),
//! each runs each level too, right after this one, so all share the machine's load.

use std::time::{Duration, Instant};

use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::json;

use super::{Gateway, post, stats};

const LEVELS: [usize; 3] = [1, 8, 64];

/// Adds per second, median and p99 ms of `writers` clients adding to one fresh tab for `secs`,
/// and the p99 without each writer's first add (which opens its connection, all at once).
async fn hammer(
    http: &reqwest::Client,
    g: &Gateway,
    tab: &str,
    writers: usize,
    secs: u64,
) -> (f64, f64, f64, f64) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for w in 0..writers {
        let (http, url, token, tab) =
            (http.clone(), g.url.clone(), g.token.clone(), tab.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut took = Vec::new();
            let mut n = 0;
            while Instant::now() < deadline {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "mcp_write",
                    "arguments": {"mode": "add", "tab": tab, "text": format!("w{w} {n}")}}});
                let t = Instant::now();
                post(&http, &url, Some(&token), &body).await;
                took.push(t.elapsed());
                n += 1;
            }
            took
        }));
    }
    let started = Instant::now();
    let (mut all, mut warm) = (Vec::new(), Vec::new());
    for t in tasks {
        let took = t.await.expect("writer task");
        warm.extend(took.iter().skip(1));
        all.extend(took);
    }
    let rate = all.len() as f64 / started.elapsed().as_secs_f64();
    let (p50, p99) = stats(all);
    let (_, warm_p99) = stats(warm);
    (rate, p50, p99, warm_p99)
}

pub async fn table(copyq: &PrivateCopyq, http: &reqwest::Client) -> Vec<String> {
    copyq
        .eval("config('maxitems', 100000)", b"")
        .expect("maxitems");
    let secs = std::env::var("COPYQ_MCP_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    // COPYQ_MCP_BENCH_BEFORE: one build, or several as `label=path,label=path`.
    let before = std::env::var("COPYQ_MCP_BENCH_BEFORE").unwrap_or_default();
    let mut builds = vec![("this build".to_owned(), None)];
    for build in before.split(',').filter(|b| !b.is_empty()) {
        builds.push(match build.split_once('=') {
            Some((label, bin)) => (label.to_owned(), Some(bin)),
            None => ("before (COPYQ_MCP_BENCH_BEFORE)".to_owned(), Some(build)),
        });
    }
    let mut rows = vec![
        format!("## Durable adds by concurrent writers, {secs} s per level (socket backend)"),
        String::new(),
        "| writers | code | adds/s | median ms | p99 ms | p99 ms, first add left out |".to_owned(),
        "|---|---|---|---|---|---|".to_owned(),
    ];
    for writers in LEVELS {
        for (i, (code, bin)) in builds.iter().enumerate() {
            let g = match bin {
                Some(bin) => Gateway::start_bin(bin, copyq, "socket", &[]),
                None => Gateway::start_with(copyq, "socket", &[]),
            };
            // A fresh tab each time: saving a tab costs more the more it holds.
            let tab = format!("workspace/writers-{writers}-{i}");
            let (rate, p50, p99, warm) = hammer(http, &g, &tab, writers, secs).await;
            let row =
                format!("| {writers} | {code} | {rate:.0} | {p50:.2} | {p99:.2} | {warm:.2} |");
            println!("{row}");
            rows.push(row);
        }
    }
    rows
}
