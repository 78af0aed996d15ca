//! 64 MCP clients (rmcp, Streamable HTTP) mixing reads and writes at once, the workload of the load
//! test (tests/support/mix.rs), against the release gateway with each backend in turn: calls/s
//! and each operation's median and p99. Every reply is still checked as the load test checks it,
//! so a fast wrong answer cannot pass for a fast answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use copyq_mcp::sandbox::PrivateCopyq;
use tokio::sync::Barrier;

use super::Gateway;
#[path = "../tests/support/mix.rs"]
#[allow(dead_code)] // the load test's checks of the final state are not needed here
mod mix;

const CLIENTS: usize = 64;
const RUN_FOR: Duration = Duration::from_secs(10);

struct Run {
    workers: Vec<mix::Worker>,
    failures: Vec<String>,
    elapsed: Duration,
}

/// Remove the tabs a run made, and seed the shared tabs afresh, so every run starts alike.
fn reset(copyq: &PrivateCopyq) {
    let shared = mix::SHARED_TABS;
    let script = format!(
        "tab().filter(function (t) {{ return t.indexOf('mcp/workspace/load') === 0; }})\
         .forEach(function (t) {{ removeTab(t); }}); \
         for (var k = 0; k < {shared}; ++k) {{ tab('mcp/workspace/load-' + k); add('seed load-' + k); }} unload()"
    );
    copyq.eval(&script, b"").expect("reset the load tabs");
}

async fn run(copyq: &PrivateCopyq, backend: &str) -> Run {
    reset(copyq);
    let gw = Gateway::start_with(
        copyq,
        backend,
        &[
            ("COPYQ_MCP__COPYQ__TIMEOUT_MS", "120000"),
            ("COPYQ_MCP__LIMITS__REQUEST_TIMEOUT_MS", "120000"),
        ],
    );
    let start = Arc::new(Barrier::new(CLIENTS + 1));
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let (url, token, start) = (gw.url.clone(), gw.token.clone(), start.clone());
            tokio::spawn(async move {
                let c = mix::connect(&url, &token).await?;
                mix::run_worker(n, c, start, (RUN_FOR, usize::MAX)).await
            })
        })
        .collect();
    start.wait().await;
    let began = Instant::now();
    let (mut workers, mut failures) = (Vec::new(), Vec::new());
    for t in tasks {
        match t.await {
            Ok(Ok(w)) => workers.push(w),
            Ok(Err(e)) => failures.push(e),
            Err(e) => failures.push(e.to_string()),
        }
    }
    Run {
        workers,
        failures,
        elapsed: began.elapsed(),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub async fn table(copyq: &PrivateCopyq) -> Vec<String> {
    let cli = run(copyq, "cli").await;
    let socket = run(copyq, "socket").await;
    let mut lines = vec![
        String::new(),
        format!(
            "## {CLIENTS} clients mixing reads and writes for {} s (the load test's workload), per backend",
            RUN_FOR.as_secs()
        ),
        String::new(),
        "| operation | cli: calls, median / p99 ms | socket: calls, median / p99 ms |".to_owned(),
        "|---|---|---|".to_owned(),
    ];
    let (a, b) = (mix::by_op(&cli.workers), mix::by_op(&socket.workers));
    let cell = |ds: Option<&Vec<Duration>>| match ds {
        Some(ds) if !ds.is_empty() => format!(
            "{}, {:.1} / {:.1}",
            ds.len(),
            ms(mix::percentile(ds, 0.5)),
            ms(mix::percentile(ds, 0.99))
        ),
        _ => "-".to_owned(),
    };
    for op in a
        .keys()
        .chain(b.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let line = format!("| {op:?} | {} | {} |", cell(a.get(op)), cell(b.get(op)));
        println!("{line}");
        lines.push(line);
    }
    let total = |r: &Run| {
        let calls: usize = r.workers.iter().map(|w| w.samples.len()).sum();
        let short: usize = r.workers.iter().map(|w| w.short_searches).sum();
        format!(
            "{calls} calls, {:.0} calls/s, {} clients failed, {short} short searches",
            calls as f64 / r.elapsed.as_secs_f64(),
            r.failures.len()
        )
    };
    lines.push(String::new());
    lines.push(format!(
        "In all: cli {}; socket {}.",
        total(&cli),
        total(&socket)
    ));
    for f in cli.failures.iter().chain(&socket.failures).take(3) {
        lines.push(format!("A failure: {f}"));
    }
    lines
}
