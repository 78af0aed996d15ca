//! `tools/list` throughput and latency at 1, 8 and 64 concurrent clients, against the gateway and
//! against a reference MCP server from the Python SDK, in the same run; and resident memory.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Gateway, stats};

const SECONDS: u64 = 3;
const LEVELS: [usize; 3] = [1, 8, 64];

struct Result {
    rate: f64,
    p50: f64,
    p99: f64,
    errors: usize,
}

async fn hammer(http: &reqwest::Client, url: &str, token: Option<&str>, clients: usize) -> Result {
    let deadline = Instant::now() + Duration::from_secs(SECONDS);
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (http, url, token) = (http.clone(), url.to_owned(), token.map(str::to_owned));
        tasks.push(tokio::spawn(async move {
            let (mut ok, mut errors) = (Vec::new(), 0usize);
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
            while Instant::now() < deadline {
                let t = Instant::now();
                let mut req = http
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .body(body.clone());
                if let Some(t) = &token {
                    req = req.header("authorization", format!("Bearer {t}"));
                }
                let good = match req.send().await {
                    Ok(res) if res.status().is_success() => {
                        res.text().await.is_ok_and(|b| b.contains("\"tools\""))
                    }
                    _ => false,
                };
                if good {
                    ok.push(t.elapsed());
                } else {
                    errors += 1;
                }
            }
            (ok, errors)
        }));
    }
    let (mut all, mut errors) = (Vec::new(), 0);
    for t in tasks {
        let (ok, e) = t.await.expect("client task");
        all.extend(ok);
        errors += e;
    }
    let rate = all.len() as f64 / SECONDS as f64;
    let (p50, p99) = if all.is_empty() {
        (0.0, 0.0)
    } else {
        stats(all)
    };
    Result {
        rate,
        p50,
        p99,
        errors,
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_or(0, |a| a.port())
}

pub async fn tools_list(
    http: &reqwest::Client,
    gateway: &Gateway,
    rss: fn(u32) -> u64,
) -> Vec<String> {
    let python = concat!(env!("CARGO_MANIFEST_DIR"), "/target/clients/py2/bin/python");
    let port = free_port();
    let mut reference = Command::new(python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/bench/reference_server.py"
        ))
        .arg(port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the Python reference server (bash tests/clients/install.sh)");
    let ref_url = format!("http://127.0.0.1:{port}/mcp");
    let started = Instant::now();
    while hammer_once(http, &ref_url).await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the reference server did not start"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let idle = rss(gateway.pid());
    let mut lines = vec![
        String::new(),
        format!(
            "## tools/list, {SECONDS} s per level (rust-sdk gateway vs Python SDK reference server)"
        ),
        String::new(),
        "| server | concurrent clients | requests/s | p50 ms | p99 ms | errors |".to_owned(),
        "|---|---|---|---|---|---|".to_owned(),
    ];
    let peak = Arc::new(AtomicU64::new(idle));
    for clients in LEVELS {
        let (pid, peak2) = (gateway.pid(), peak.clone());
        let sampler = tokio::spawn(async move {
            loop {
                peak2.fetch_max(rss(pid), Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        });
        let g = hammer(http, &gateway.url, Some(&gateway.token), clients).await;
        sampler.abort();
        let r = hammer(http, &ref_url, None, clients).await;
        for (name, x) in [("copyq-mcp", g), ("Python SDK reference", r)] {
            let line = format!(
                "| {name} | {clients} | {:.0} | {:.2} | {:.2} | {} |",
                x.rate, x.p50, x.p99, x.errors
            );
            println!("{line}");
            lines.push(line);
        }
    }
    let ref_rss = rss(reference.id());
    let _ = reference.kill();
    let _ = reference.wait();
    lines.push(String::new());
    lines.push(format!(
        "Resident memory of the gateway (socket backend): {:.1} MiB idle, {:.1} MiB peak under the loads above (reference server after its loads: {:.1} MiB).",
        idle as f64 / 1024.0,
        peak.load(Ordering::Relaxed) as f64 / 1024.0,
        ref_rss as f64 / 1024.0
    ));
    lines
}

async fn hammer_once(http: &reqwest::Client, url: &str) -> std::result::Result<(), ()> {
    let res = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .send()
        .await
        .map_err(|_| ())?;
    if res.status().is_success() {
        Ok(())
    } else {
        Err(())
    }
}
