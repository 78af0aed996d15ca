//! The soak: 64 clients reading and writing at once through the real binary, while CopyQ is
//! SIGKILLed and restarted once and the gateway is SIGKILLed and restarted once. Every write that
//! was acknowledged is in CopyQ exactly once afterwards; no answer is a 5xx other than 503; the
//! gateway's memory after the load is back near what it was idle. It runs for
//! `COPYQ_MCP_SOAK_SECS` (20 s in the test suite; `bench/soak.sh` runs 60 s) and writes its
//! figures (calls/s, p50/p99 latencies, errors by kind) to target/soak.json.

mod support;

#[path = "soak/crowd.rs"]
mod crowd;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

const CLIENTS: usize = 64;
const TAB: &str = "workspace/soak";
const UNLIMITED: &[(&str, &str)] = &[
    ("COPYQ_MCP__LIMITS__BURST", "100000"),
    ("COPYQ_MCP__LIMITS__REQUESTS_PER_MINUTE", "1000000"),
    ("COPYQ_MCP__LIMITS__MAX_CONCURRENT_COPYQ_CALLS", "4"),
];

/// What one call came to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Ok,
    /// A tool error, by its code (COPYQ_ERROR while CopyQ is down).
    ToolError(String),
    /// An HTTP status other than 200.
    Status(u16),
    /// No answer: the gateway was down (between its SIGKILL and its restart).
    NoAnswer,
}

#[derive(Default)]
struct Record {
    calls: Vec<(bool, Outcome, Duration)>,
    acked: Vec<String>,
}

async fn call(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    name: &str,
    args: Value,
) -> (Outcome, Option<String>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": args}});
    let sent = http
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
        .timeout(Duration::from_secs(20))
        .send()
        .await;
    let Ok(res) = sent else {
        return (Outcome::NoAnswer, None);
    };
    let status = res.status().as_u16();
    if status != 200 {
        return (Outcome::Status(status), None);
    }
    let Ok(v) = res.json::<Value>().await else {
        return (Outcome::NoAnswer, None);
    };
    let text = v["result"]["content"][0]["text"]
        .as_str()
        .map(str::to_owned);
    if v["result"]["isError"] == true {
        let code = text
            .as_deref()
            .and_then(|t| t.split('|').nth(1))
            .unwrap_or("?")
            .to_owned();
        return (Outcome::ToolError(code), text);
    }
    (Outcome::Ok, text)
}

fn issue_token(data: &std::path::Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_copyq-mcp"))
        .args([
            "token",
            "issue",
            "--role",
            "write",
            "--name",
            "soak",
            "--data-dir",
        ])
        .arg(data)
        .output()
        .expect("token issue");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

fn kill(mut child: Spawned) {
    let _ = child.kill();
    let _ = child.wait();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_clients_through_a_copyq_crash_and_a_gateway_crash() {
    let secs: u64 = std::env::var("COPYQ_MCP_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
        .clamp(6, 600);
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .eval("config('maxitems', 10000)", b"")
        .expect("maxitems");
    copyq
        .seed("mcp/workspace/soak", &items(&["seed"]))
        .expect("seed");
    let copyq = Arc::new(Mutex::new(copyq));
    let data = tempfile::tempdir().expect("data");
    let token = issue_token(data.path());
    let spawn = |copyq: &PrivateCopyq| spawn_serve(copyq, data.path(), UNLIMITED, Stdio::null());
    let (gateway, url) = spawn(&copyq.lock().expect("copyq"));
    let url = Arc::new(RwLock::new(url));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut clients = tokio::task::JoinSet::new();
    for n in 0..CLIENTS {
        let (url, token) = (url.clone(), token.clone());
        clients.spawn(async move {
            let http = reqwest::Client::new();
            let mut rec = Record::default();
            let mut m = 0;
            while Instant::now() < deadline {
                let url = url.read().map(|u| u.clone()).unwrap_or_default();
                let write = (n + m) % 3 == 0;
                let started = Instant::now();
                let (outcome, text) = if write {
                    let item = format!("soak-c{n}-{m}");
                    let r = call(
                        &http,
                        &url,
                        &token,
                        "mcp_write",
                        json!({"mode": "add", "tab": TAB, "text": item}),
                    )
                    .await;
                    if r.0 == Outcome::Ok && r.1.as_deref().is_some_and(|t| t.starts_with("ok|")) {
                        rec.acked.push(item);
                    }
                    r
                } else {
                    call(
                        &http,
                        &url,
                        &token,
                        "mcp_read",
                        json!({"mode": "list", "tab": TAB, "max_items": 5}),
                    )
                    .await
                };
                let _ = text;
                let failed = outcome != Outcome::Ok;
                rec.calls.push((write, outcome, started.elapsed()));
                m += 1;
                if failed {
                    // Down (CopyQ or the gateway): do not spin.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            rec
        });
    }
    // A third in: CopyQ crashes, and is back 2 s later.
    tokio::time::sleep(Duration::from_secs(secs / 3)).await;
    let c = copyq.clone();
    tokio::task::spawn_blocking(move || {
        let mut copyq = c.lock().expect("copyq");
        copyq.kill_server();
        std::thread::sleep(Duration::from_secs(2));
        copyq.start_server().expect("CopyQ restarts");
    })
    .await
    .expect("join");
    // Two thirds in: the gateway crashes, and a new one starts.
    tokio::time::sleep(Duration::from_secs(secs / 3)).await;
    kill(gateway);
    let (gateway, new_url) = spawn(&copyq.lock().expect("copyq"));
    let idle_kib = rss_kib(gateway.id());
    if let Ok(mut u) = url.write() {
        *u = new_url.clone();
    }
    let records = clients.join_all().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after_kib = rss_kib(gateway.id());

    // Every acknowledged write is in CopyQ exactly once.
    let script = "tab('mcp/workspace/soak'); var out = []; for (var i = 0; i < size(); ++i) out.push(str(read(i))); print(JSON.stringify(out))";
    let stored: Vec<String> = serde_json::from_str(
        &copyq
            .lock()
            .expect("copyq")
            .eval(script, b"")
            .expect("read the tab"),
    )
    .expect("json");
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for s in &stored {
        *counts.entry(s.as_str()).or_default() += 1;
    }
    let acked: Vec<&String> = records.iter().flat_map(|r| &r.acked).collect();
    for text in &acked {
        assert_eq!(
            counts.get(text.as_str()),
            Some(&1),
            "acknowledged write {text}"
        );
    }
    assert!(counts.values().all(|n| *n == 1), "a write was duplicated");

    // Errors by kind: no 5xx but 503 (CopyQ down), and the load really ran.
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for (write, outcome, took) in records.iter().flat_map(|r| &r.calls) {
        if *outcome == Outcome::Ok {
            if *write {
                writes.push(*took)
            } else {
                reads.push(*took)
            }
        } else {
            *kinds.entry(format!("{outcome:?}")).or_default() += 1;
        }
    }
    for kind in kinds.keys() {
        assert!(
            !kind.starts_with("Status(5") || kind == "Status(503)",
            "a 5xx other than 503: {kinds:?}"
        );
    }
    reads.sort();
    writes.sort();
    let calls: usize = records.iter().map(|r| r.calls.len()).sum();
    assert!(
        acked.len() > CLIENTS && reads.len() > CLIENTS,
        "the load did not run: {kinds:?}"
    );
    // Memory: back near idle once the load is over (allocator slack allowed).
    assert!(
        after_kib < idle_kib + 48 * 1024,
        "RSS {after_kib} KiB after the load, {idle_kib} KiB idle"
    );
    let figures = json!({
        "seconds": secs,
        "clients": CLIENTS,
        "calls": calls,
        "calls_per_second": calls as f64 / secs as f64,
        "acknowledged_writes": acked.len(),
        "read_ms": {"p50": percentile(&reads, 0.5), "p99": percentile(&reads, 0.99)},
        "write_ms": {"p50": percentile(&writes, 0.5), "p99": percentile(&writes, 0.99)},
        "errors": kinds,
        "rss_kib": {"idle": idle_kib, "after": after_kib},
    });
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/soak.json");
    let _ = std::fs::write(&out, format!("{figures:#}\n"));
    eprintln!("soak: {figures}");
    kill(gateway);
}
