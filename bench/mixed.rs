//! 64 MCP clients (rmcp, Streamable HTTP) mixing reads and writes at once, the workload of the load
//! test (tests/support/mix.rs), against the release gateway with each backend in turn: calls/s
//! and each operation's median and p99. Every reply is still checked as the load test checks it,
//! so a fast wrong answer cannot pass for a fast answer. Its floor, measured in the same run: the
//! same mix as raw socket calls by 64 clients of their own (see [`floor`]); and under each, how
//! busy CopyQ's server was and its CPU time a call, from `/proc` (where a ratio below 1 comes
//! from: CopyQ left idle, or more of its work a call).

use std::sync::Arc;
use std::time::{Duration, Instant};

use copyq_mcp::sandbox::PrivateCopyq;
use mix::Op;
use tokio::sync::Barrier;

use super::Gateway;
use super::floors::Floors;
#[path = "../tests/support/mix.rs"]
#[allow(dead_code)] // the load test's checks of the final state are not needed here
mod mix;

const CLIENTS: usize = 64;
const RUN_FOR: Duration = Duration::from_secs(10);

struct Run {
    workers: Vec<mix::Worker>,
    failures: Vec<String>,
    elapsed: Duration,
    /// CPU time the run took: CopyQ's server (and its helpers), and the gateway's process.
    copyq: Duration,
    gateway: Duration,
    /// The machine's cores across the run: all of it, and the bench's own process (its clients).
    cores: Cores,
}

/// Where the machine's CPU went across a run, from `/proc/stat` and `/proc/self/stat`.
#[derive(Clone, Copy, Default)]
struct Cores {
    /// Every core's time, busy or not.
    total: Duration,
    /// Every core's time not idle (nor waiting on I/O).
    busy: Duration,
    /// The bench's own process: its clients (the gateway's or the floor's).
    bench: Duration,
}

impl Cores {
    fn now() -> Cores {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let fields: Vec<u64> = stat
            .lines()
            .next()
            .filter(|l| l.starts_with("cpu "))
            .map(|l| {
                l.split_whitespace()
                    .skip(1)
                    .filter_map(|f| f.parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        // user nice system idle iowait irq softirq steal (guest time is inside user).
        let total: u64 = fields.iter().take(8).sum();
        let idle: u64 = fields.iter().skip(3).take(2).sum();
        let tick = |t: u64| Duration::from_secs_f64(t as f64 / ticks_per_s() as f64);
        Cores {
            total: tick(total),
            busy: tick(total.saturating_sub(idle)),
            bench: cpu_of(|p, _| p == std::process::id()),
        }
    }

    fn since(self, before: Cores) -> Cores {
        Cores {
            total: self.total.saturating_sub(before.total),
            busy: self.busy.saturating_sub(before.busy),
            bench: self.bench.saturating_sub(before.bench),
        }
    }

    /// `d` as a share of the cores' time, in cores (2.0: both cores all the time).
    fn cores(self, d: Duration, cores: usize) -> f64 {
        cores as f64 * d.as_secs_f64() / self.total.as_secs_f64().max(f64::MIN_POSITIVE)
    }
}

impl Run {
    /// The calls its clients made.
    fn calls(&self) -> usize {
        self.workers.iter().map(|w| w.samples.len()).sum()
    }
}

/// Clock ticks a second, as `/proc/PID/stat` counts CPU time (asked once).
fn ticks_per_s() -> u64 {
    static TICKS: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| {
                String::from_utf8_lossy(&o.stdout)
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .filter(|t| *t > 0)
            .unwrap_or(100)
    })
}

/// CPU time (user and system) of the processes `pick` takes by (pid, process group), read from
/// `/proc`: a process that ended meanwhile is not counted, so measure only across a run in which
/// the processes picked live throughout.
fn cpu_of(pick: impl Fn(u32, u32) -> bool) -> Duration {
    let mut ticks = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command's closing parenthesis: state, ppid, pgrp, ..., utime (12th), stime.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
        if let (Some(group), Some(user), Some(system)) = (field(2), field(11), field(12))
            && pick(pid, u32::try_from(group).unwrap_or(0))
        {
            ticks += user + system;
        }
    }
    Duration::from_secs_f64(ticks as f64 / ticks_per_s() as f64)
}

/// CopyQ's server and its helpers (its own process group).
fn copyq_cpu(copyq: &PrivateCopyq) -> Duration {
    let server = copyq.server_pid().unwrap_or(0);
    cpu_of(|_, group| group == server)
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
            // 64 clients on one address, each with its own HTTP client (a POST and a stream
            // open at once): above the default per-address cap of 64, which closed some of
            // them as they connected.
            ("COPYQ_MCP__LIMITS__MAX_CONNECTIONS_PER_ADDRESS", "1024"),
        ],
    );
    // Every client connects before any waits at the barrier, as in the load test: one that
    // could not connect left the others (and this run) waiting at it for ever.
    let connecting: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (url, token) = (gw.url.clone(), gw.token.clone());
            tokio::spawn(async move { mix::connect(&url, &token).await })
        })
        .collect();
    let (mut clients, mut failures) = (Vec::new(), Vec::new());
    for (n, c) in connecting.into_iter().enumerate() {
        match c.await {
            Ok(Ok(c)) => clients.push((n, c)),
            Ok(Err(e)) => failures.push(format!("client {n}: {e}")),
            Err(e) => failures.push(format!("client {n}: {e}")),
        }
    }
    let start = Arc::new(Barrier::new(clients.len() + 1));
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|(n, c)| {
            let start = start.clone();
            tokio::spawn(mix::run_worker(n, c, start, (RUN_FOR, usize::MAX)))
        })
        .collect();
    let (copyq_before, gateway_before) = (copyq_cpu(copyq), cpu_of(|p, _| p == gw.pid()));
    let cores_before = Cores::now();
    start.wait().await;
    let began = Instant::now();
    let mut workers = Vec::new();
    for t in tasks {
        match t.await {
            Ok(Ok(w)) => workers.push(w),
            Ok(Err(e)) => failures.push(e),
            Err(e) => failures.push(e.to_string()),
        }
    }
    // Progress on stderr: a run that stops short says where.
    eprintln!(
        "mixed: {backend} backend done, {} clients ran, {} failed",
        workers.len(),
        failures.len()
    );
    let elapsed = began.elapsed();
    Run {
        workers,
        failures,
        elapsed,
        copyq: copyq_cpu(copyq).saturating_sub(copyq_before),
        gateway: cpu_of(|p, _| p == gw.pid()).saturating_sub(gateway_before),
        cores: Cores::now().since(cores_before),
    }
}

/// The floor of the mix: 64 clients, each with its own connection to CopyQ's socket, make for
/// each operation the calls the gateway's socket backend makes (reads pipelined; a write as the
/// change and the unload that saves the tab), in the same pseudo-random order as the gateway's
/// client of the same number, for the same time. Nothing around them: no HTTP, MCP, tokens,
/// audit, redaction, save-delay handling or checks of the replies.
async fn floor(copyq: &PrivateCopyq) -> (Vec<(Op, Duration)>, Duration, Duration, Cores) {
    reset(copyq);
    let start = Arc::new(Barrier::new(CLIENTS + 1));
    let mut tasks = Vec::with_capacity(CLIENTS);
    // COPYQ_MCP_BENCH_FLOOR_CONNECTIONS=1: the 64 clients share one connection, as the gateway's
    // calls do (what one connection costs CopyQ's throughput).
    let one = match std::env::var("COPYQ_MCP_BENCH_FLOOR_CONNECTIONS").as_deref() {
        Ok("1") => Some(Floors::connect(copyq).await),
        _ => None,
    };
    for n in 0..CLIENTS {
        let f = match &one {
            Some(f) => f.share(),
            None => Floors::connect(copyq).await,
        };
        tasks.push(tokio::spawn(floor_client(n, f, start.clone())));
    }
    let copyq_before = copyq_cpu(copyq);
    let cores_before = Cores::now();
    start.wait().await;
    let began = Instant::now();
    let mut samples = Vec::new();
    for t in tasks {
        samples.extend(t.await.expect("a floor client"));
    }
    let elapsed = began.elapsed();
    (
        samples,
        elapsed,
        copyq_cpu(copyq).saturating_sub(copyq_before),
        Cores::now().since(cores_before),
    )
}

/// One floor client: draws from its generator exactly as `mix::Worker` does (the operation, then
/// a shared tab, then an index into its own tab), so both runs issue the same sequence.
async fn floor_client(n: usize, f: Floors, start: Arc<Barrier>) -> Vec<(Op, Duration)> {
    let mut c = FloorClient::new(n, f);
    start.wait().await;
    let began = Instant::now();
    while began.elapsed() < RUN_FOR {
        let op = mix::pick(&mut c.rng, c.own_len == 0);
        c.step_op(op).await;
    }
    c.samples
}

/// A floor client's state: what `mix::Worker` knows, as far as its calls need it.
struct FloorClient {
    n: usize,
    f: Floors,
    rng: mix::Rng,
    own: String,
    own_len: usize,
    seq: usize,
    samples: Vec<(Op, Duration)>,
}

impl FloorClient {
    fn new(n: usize, f: Floors) -> FloorClient {
        FloorClient {
            n,
            f,
            rng: mix::Rng::for_client(n),
            own: format!("mcp/{}", mix::own_tab(n)),
            own_len: 0,
            seq: 0,
            samples: Vec::new(),
        }
    }

    /// The calls of `op` (not drawn), timed; draws the shared tab and the index as the worker does.
    async fn step_op(&mut self, op: Op) {
        let (f, own, n) = (&self.f, &self.own, self.n);
        let shared = format!("mcp/{}", mix::shared_tab(self.rng.below(mix::SHARED_TABS)));
        let i = self.rng.below(self.own_len) as i32;
        self.seq += 1;
        let text = format!("load c{n} {}", self.seq);
        let t = Instant::now();
        match op {
            Op::Tree => f.tree("mcp/", 2).await,
            Op::List => f.rows(&shared, 0..10).await,
            Op::Search => drop(f.search(&format!("^load c{n} ")).await),
            Op::Item if self.own_len == 0 => f.rows(&shared, 0..1).await,
            Op::Item => f.rows(own, i..i + 1).await,
            Op::OutOfBounds => f.rows(&shared, 0..0).await,
            Op::AddShared => f.add(&shared, &text).await,
            Op::AddOwn => {
                f.add(own, &text).await;
                self.own_len += 1;
            }
            Op::Update => f.update(own, i, &text).await,
            Op::Delete => {
                f.delete(own, i).await;
                self.own_len -= 1;
            }
        }
        self.samples.push((op, t.elapsed()));
    }
}

/// One client, one operation at a time, each kind in a row of its own (adds to its own tab first,
/// so that items, updates and deletes have rows): CopyQ's CPU time a call of each kind under the
/// gateway and under the floor, nothing else running. Which operations make CopyQ work more than
/// the same operation's raw calls do, apart from the mix's contention and spread.
const ALONE: [(Op, usize); 9] = [
    (Op::AddOwn, 200),
    (Op::Item, 200),
    (Op::Update, 200),
    (Op::Delete, 200),
    (Op::AddShared, 200),
    (Op::List, 200),
    (Op::OutOfBounds, 200),
    (Op::Tree, 200),
    (Op::Search, 20),
];

/// For each of [`ALONE`]: CopyQ's CPU a call and the median latency, under the socket gateway and
/// under the floor.
async fn alone(copyq: &PrivateCopyq) -> Vec<((Duration, Duration), (Duration, Duration))> {
    // The gateway's client.
    reset(copyq);
    let gw = Gateway::start_with(copyq, "socket", &[]);
    let client = mix::connect(&gw.url, &gw.token)
        .await
        .expect("a client of the gateway");
    let mut w = mix::Worker::new(0, client);
    let mut ours = Vec::new();
    for (op, count) in ALONE {
        let (before, from) = (copyq_cpu(copyq), w.samples.len());
        for _ in 0..count {
            w.step_op(op).await.expect("a call alone");
        }
        ours.push(figures(copyq, before, &w.samples[from..]));
    }
    drop(gw);
    // The floor's, the same sequence.
    reset(copyq);
    let mut c = FloorClient::new(0, Floors::connect(copyq).await);
    let mut out = Vec::new();
    for ((op, count), ours) in ALONE.into_iter().zip(ours) {
        let (before, from) = (copyq_cpu(copyq), c.samples.len());
        for _ in 0..count {
            c.step_op(op).await;
        }
        out.push((ours, figures(copyq, before, &c.samples[from..])));
    }
    out
}

/// CopyQ's CPU a call across `samples` (the calls just made; its CPU was `before` when they
/// began), and their median latency.
fn figures(
    copyq: &PrivateCopyq,
    before: Duration,
    samples: &[(Op, Duration)],
) -> (Duration, Duration) {
    let calls = u32::try_from(samples.len()).unwrap_or(u32::MAX).max(1);
    let cpu = copyq_cpu(copyq).saturating_sub(before) / calls;
    let mut ds: Vec<Duration> = samples.iter().map(|(_, d)| *d).collect();
    ds.sort();
    (cpu, mix::percentile(&ds, 0.5))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

pub async fn table(copyq: &PrivateCopyq) -> Vec<String> {
    let cli = run(copyq, "cli").await;
    let socket = run(copyq, "socket").await;
    let (floor_samples, floor_elapsed, floor_copyq, floor_cores) = floor(copyq).await;
    let mut lines = vec![
        String::new(),
        format!(
            "## {CLIENTS} clients mixing reads and writes for {} s (the load test's workload) against {}, per backend",
            RUN_FOR.as_secs(),
            super::copyq_version(copyq)
        ),
        String::new(),
        "| operation | cli: calls, median / p99 ms | socket: calls, median / p99 ms | floor (raw socket): calls, median / p99 ms |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    let samples = |r: &Run| mix::by_op(r.workers.iter().flat_map(|w| &w.samples));
    let (a, b, f) = (samples(&cli), samples(&socket), mix::by_op(&floor_samples));
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
        .chain(f.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        let line = format!(
            "| {op:?} | {} | {} | {} |",
            cell(a.get(op)),
            cell(b.get(op)),
            cell(f.get(op))
        );
        println!("{line}");
        lines.push(line);
    }
    let total = |r: &Run| {
        let calls = r.calls();
        let short: usize = r.workers.iter().map(|w| w.short_searches).sum();
        format!(
            "{calls} calls, {:.0} calls/s, {} clients failed, {short} short searches",
            calls as f64 / r.elapsed.as_secs_f64(),
            r.failures.len()
        )
    };
    let rate = |calls: usize, elapsed: Duration| calls as f64 / elapsed.as_secs_f64();
    let socket_calls = socket.calls();
    let socket_rate = rate(socket_calls, socket.elapsed);
    let floor_rate = rate(floor_samples.len(), floor_elapsed);
    lines.push(String::new());
    lines.push(format!(
        "In all: cli {}; socket {}; floor {} calls, {floor_rate:.0} calls/s.",
        total(&cli),
        total(&socket),
        floor_samples.len()
    ));
    lines.push(format!(
        "The socket gateway's throughput is {:.2}x its floor's (target >= 0.8x).",
        socket_rate / floor_rate
    ));
    // Where the difference is: how busy CopyQ's server was, and its CPU time a call (its thread
    // runs the calls one at a time), against the floor's; and the gateway's own CPU a call.
    let busy = |cpu: Duration, elapsed: Duration| 100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64();
    let per_call = |cpu: Duration, calls: usize| ms(cpu) / calls.max(1) as f64;
    let (ours, theirs) = (
        per_call(socket.copyq, socket_calls),
        per_call(floor_copyq, floor_samples.len()),
    );
    lines.push(format!(
        "CopyQ's server busy {:.0}% under the socket gateway, {:.0}% under the floor; its CPU a call \
         {ours:.2} ms against {theirs:.2} ms ({:.2}x); the gateway's own CPU a call {:.2} ms.",
        busy(socket.copyq, socket.elapsed),
        busy(floor_copyq, floor_elapsed),
        ours / theirs.max(f64::MIN_POSITIVE),
        per_call(socket.gateway, socket_calls)
    ));
    // Whether the machine had CPU to spare: on 2 cores the gateway's clients, the gateway and
    // CopyQ share them, where the floor's clients are light.
    let n = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let (c, g) = (socket.cores, floor_cores);
    lines.push(format!(
        "The machine's {n} cores, in cores used: under the socket gateway {:.2} busy (CopyQ {:.2}, \
         the gateway {:.2}, its {CLIENTS} clients {:.2}, the rest {:.2}); under the floor {:.2} \
         busy (CopyQ {:.2}, its clients {:.2}, the rest {:.2}).",
        c.cores(c.busy, n),
        c.cores(socket.copyq, n),
        c.cores(socket.gateway, n),
        c.cores(c.bench, n),
        c.cores(
            c.busy
                .saturating_sub(socket.copyq + socket.gateway + c.bench),
            n
        ),
        g.cores(g.busy, n),
        g.cores(floor_copyq, n),
        g.cores(g.bench, n),
        g.cores(g.busy.saturating_sub(floor_copyq + g.bench), n),
    ));
    for f in cli.failures.iter().chain(&socket.failures).take(3) {
        lines.push(format!("A failure: {f}"));
    }
    lines.extend(alone_table(copyq).await);
    lines
}

/// The socket gateway's mix and its floor's once more, with the images table's 100 screenshots
/// under `mcp/` (a clipboard that holds screenshots): a search then reads them whole (357 KB each
/// on CopyQ 6.4), and searches weigh most. The tab is removed after.
pub async fn with_screenshots(copyq: &PrivateCopyq) -> Vec<String> {
    super::images::seed_screenshots(copyq);
    let socket = run(copyq, "socket").await;
    let (floor_samples, floor_elapsed, floor_copyq, _) = floor(copyq).await;
    super::images::remove_screenshots(copyq);
    let rate = |calls: usize, elapsed: Duration| calls as f64 / elapsed.as_secs_f64();
    let (ours, theirs) = (
        rate(socket.calls(), socket.elapsed),
        rate(floor_samples.len(), floor_elapsed),
    );
    let busy = |cpu: Duration, elapsed: Duration| 100.0 * cpu.as_secs_f64() / elapsed.as_secs_f64();
    let line = format!(
        "The same mix with the images table's 100 screenshots under `mcp/` as well (searches read \
         them): socket gateway {} calls, {ours:.0} calls/s, {} clients failed; floor {} calls, \
         {theirs:.0} calls/s; **{:.2}x its floor**; CopyQ busy {:.0}% / {:.0}%.",
        socket.calls(),
        socket.failures.len(),
        floor_samples.len(),
        ours / theirs.max(f64::MIN_POSITIVE),
        busy(socket.copyq, socket.elapsed),
        busy(floor_copyq, floor_elapsed),
    );
    println!("{line}");
    vec![String::new(), line]
}

/// [`alone`]'s figures as a table.
pub async fn alone_table(copyq: &PrivateCopyq) -> Vec<String> {
    let mut lines = vec![
        String::new(),
        "One client, one operation at a time (each kind in a row of its own), socket backend: \
         CopyQ's CPU a call, and the median latency"
            .to_owned(),
        String::new(),
        "| operation | calls | CopyQ CPU a call, gateway / floor | median ms, gateway / floor |"
            .to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    for ((op, count), ((cpu, median), (floor_cpu, floor_median))) in
        ALONE.into_iter().zip(alone(copyq).await)
    {
        let line = format!(
            "| {op:?} | {count} | {:.2} / {:.2} ms ({:.2}x) | {:.2} / {:.2} |",
            ms(cpu),
            ms(floor_cpu),
            ms(cpu) / ms(floor_cpu).max(f64::MIN_POSITIVE),
            ms(median),
            ms(floor_median)
        );
        println!("{line}");
        lines.push(line);
    }
    lines
}

/// CopyQ's CPU a call for each kind of call the socket backend makes, on one of the mix's shared
/// tabs (one item, then 200), 1,000 times each, one at a time (as a write's steps go) and in
/// batches of 20 (as a read's go): what each call the gateway makes beyond the floor's costs
/// CopyQ. A kind of several round trips (`;`) is measured one round trip after the other.
pub async fn calls_table(copyq: &PrivateCopyq) -> Vec<String> {
    use copyq_mcp::backend::socket::{Call, slots};
    reset(copyq);
    let f = Floors::connect(copyq).await;
    let tab = format!("mcp/{}", mix::shared_tab(0));
    let length = || slots::browser_length(&tab);
    let unload = || slots::unload_tabs(&[&tab]);
    let kinds: Vec<(&str, Vec<Vec<Call>>)> = vec![
        ("tabs()", vec![vec![slots::tabs()]]),
        ("browserLength, tab loaded", vec![vec![length()]]),
        (
            "browserItemData, tab loaded",
            vec![vec![slots::browser_item_data(&tab, 0)]],
        ),
        ("unloadTabs of a tab not loaded", vec![vec![unload()]]),
        (
            "browserLength then unloadTabs (a load and an unload), one round trip",
            vec![vec![length(), unload()]],
        ),
        (
            "browserLength; unloadTabs (a load and an unload), two round trips",
            vec![vec![length()], vec![unload()]],
        ),
        (
            "browserLength; tabs(); tabs(); unloadTabs (loaded across four round trips)",
            vec![
                vec![length()],
                vec![slots::tabs()],
                vec![slots::tabs()],
                vec![unload()],
            ],
        ),
        ("config(maxitems)", vec![vec![slots::config("maxitems")]]),
    ];
    let mut lines = vec![
        String::new(),
        "CopyQ's CPU a call, by kind of call (1,000 each; a tab of 1 item, then of 200)".to_owned(),
        String::new(),
        "| call | items | one at a time | in batches of 20 |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ];
    const N: usize = 1000;
    for items in [1, 200] {
        if items > 1 {
            let script = format!(
                "tab('{tab}'); for (var i = 1; i < {items}; ++i) add('row ' + i + ' of a tab of the mix, some text to lay out'); unload()"
            );
            copyq.eval(&script, b"").expect("fill the tab");
        }
        for (name, trips) in &kinds {
            if name.starts_with("config") && items > 1 {
                continue;
            }
            // The state each kind needs: loaded for the reads, unloaded for the unload.
            for calls in trips {
                f.raw(calls).await;
            }
            let before = copyq_cpu(copyq);
            for _ in 0..N {
                for calls in trips {
                    f.raw(calls).await;
                }
            }
            let one = copyq_cpu(copyq).saturating_sub(before);
            let batches: Vec<Vec<Call>> = trips
                .iter()
                .map(|calls| {
                    calls
                        .iter()
                        .cycle()
                        .take(20 * calls.len())
                        .cloned()
                        .collect()
                })
                .collect();
            let before = copyq_cpu(copyq);
            for _ in 0..N / 20 {
                for batch in &batches {
                    f.raw(batch).await;
                }
            }
            let many = copyq_cpu(copyq).saturating_sub(before);
            let line = format!(
                "| {name} | {items} | {:.3} ms | {:.3} ms |",
                ms(one) / N as f64,
                ms(many) / N as f64
            );
            println!("{line}");
            lines.push(line);
        }
    }
    lines
}
