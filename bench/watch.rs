//! What following a tab costs an idle CopyQ: the gateway (sessions on) holding 0, 1 and 16
//! `resources/subscribe` subscriptions of the 10,000-item tab, nothing changing, CPU time of the
//! gateway (with its `copyq` children on the CLI backend) and of the CopyQ server over a window,
//! per backend. `COPYQ_MCP_BENCH_ONLY=watch` runs this table alone; with `COPYQ_MCP_BENCH_BEFORE`
//! naming another build of the gateway (the code before a change), each row is measured for that
//! build too, right before this one's, and both are shown.

use std::time::Duration;

use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::json;

use super::{BIG, Gateway};

/// The window each row is measured over: `COPYQ_MCP_BENCH_WATCH_SECS`, 10 s by default (CPU time
/// is counted in 10 ms ticks, so a longer window resolves smaller costs).
fn window() -> Duration {
    let secs = std::env::var("COPYQ_MCP_BENCH_WATCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    Duration::from_secs(secs)
}

/// utime + stime (+ cutime + cstime when `children`) of `pid`, in ms (100 ticks a second).
fn cpu_ms(pid: u32, children: bool) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<u64> = stat
        .rsplit_once(") ")
        .map(|(_, rest)| rest.split(' ').filter_map(|f| f.parse().ok()).collect())
        .unwrap_or_default();
    // After the state field: fields 14..17 of stat(5) are at 10..13 here.
    let take = if children { 4 } else { 2 };
    fields.iter().skip(10).take(take).sum::<u64>() * 10
}

/// The CopyQ server of `copyq`'s session: a `copyq` process without arguments whose
/// environment names that session (its clients carry arguments).
fn copyq_server(copyq: &PrivateCopyq) -> Option<u32> {
    let wanted = format!("COPYQ_SESSION_NAME={}", copyq.session());
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<&[u8]> = cmdline
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .collect();
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            let server = args.len() == 1
                && args[0].ends_with(b"copyq")
                && environ.split(|b| *b == 0).any(|v| v == wanted.as_bytes());
            server.then_some(pid)
        })
}

/// A session holding `n` subscriptions of the big tab (rows 0..n as items of it).
async fn subscribe(http: &reqwest::Client, gw: &Gateway, n: usize) -> Option<String> {
    if n == 0 {
        return None;
    }
    let send = |session: Option<&str>, body: serde_json::Value| {
        let mut req = http
            .post(&gw.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("authorization", format!("Bearer {}", gw.token))
            .body(body.to_string());
        if let Some(s) = session {
            req = req.header("mcp-session-id", s);
        }
        req.send()
    };
    let hello = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}});
    let res = send(None, hello).await.expect("initialize");
    let session = res
        .headers()
        .get("mcp-session-id")?
        .to_str()
        .ok()?
        .to_owned();
    drop(res.bytes().await);
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    drop(
        send(Some(&session), initialized)
            .await
            .expect("initialized"),
    );
    // BIG is plain ASCII without reserved characters: its URI is its name.
    let tab = format!("copyq://tab/{BIG}");
    for i in 0..n {
        let uri = format!("{tab}?index={i}");
        let body = json!({"jsonrpc": "2.0", "id": i + 1, "method": "resources/subscribe", "params": {"uri": uri}});
        let res = send(Some(&session), body).await.expect("subscribe");
        let text = res.text().await.unwrap_or_default();
        assert!(!text.contains("\"error\""), "subscribe refused: {text}");
    }
    Some(session)
}

pub async fn table(copyq: &PrivateCopyq, http: &reqwest::Client) -> Vec<String> {
    let mut rows = vec![
        String::new(),
        format!(
            "## Following a tab on an idle CopyQ: CPU ms per second over {}s",
            window().as_secs()
        ),
        String::new(),
        "| backend | subscriptions | gateway | CopyQ server |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    let server = copyq_server(copyq).expect("the CopyQ server's pid");
    let before = std::env::var("COPYQ_MCP_BENCH_BEFORE").ok();
    let builds: Vec<(Option<&str>, &str)> = match &before {
        Some(bin) => vec![(Some(bin.as_str()), " (before)"), (None, "")],
        None => vec![(None, "")],
    };
    let env = [("COPYQ_MCP__SERVER__SESSIONS", "true")];
    for backend in ["socket", "cli"] {
        for n in [0, 1, 16] {
            for (bin, label) in &builds {
                let gw = match bin {
                    Some(bin) => Gateway::start_bin(bin, copyq, backend, &env),
                    None => Gateway::start_with(copyq, backend, &env),
                };
                let _session = subscribe(http, &gw, n).await;
                tokio::time::sleep(Duration::from_secs(1)).await;
                let pid = gw.child.id();
                let (g0, c0) = (cpu_ms(pid, true), cpu_ms(server, false));
                tokio::time::sleep(window()).await;
                let (g1, c1) = (cpu_ms(pid, true), cpu_ms(server, false));
                let per_s = |a: u64, b: u64| (b - a) as f64 / window().as_secs_f64();
                rows.push(format!(
                    "| {backend}{label} | {n} | {:.1} | {:.1} |",
                    per_s(g0, g1),
                    per_s(c0, c1)
                ));
            }
        }
    }
    rows
}
