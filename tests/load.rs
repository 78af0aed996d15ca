//! A bounded load test against a real CopyQ: 64 concurrent MCP clients, each its own rmcp client
//! over HTTP, mix reads and writes for about twelve seconds (at most 60 calls each). No call may
//! fail at the transport or with an unplanned tool error, every acknowledged write is in CopyQ
//! exactly once afterwards, and throughput and latency per operation are printed for the record.
//!
//! Each client adds to four shared tabs, and adds, updates and deletes only in a tab of its own:
//! indices there move only when the client itself writes, so it always knows which item an index
//! names, and its final content is known exactly. Its searches know how many of its items exist;
//! a search that finds fewer is counted and printed rather than failed, because of a known bug
//! shown by `searches_during_writes_see_every_item` (ignored until fixed).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use support::*;
use tokio::sync::Barrier;

const CLIENTS: usize = 64;
const RUN_FOR: Duration = Duration::from_secs(12);
const MAX_CALLS_PER_CLIENT: usize = 60;
const SHARED_TABS: usize = 4;
/// An index no tab here reaches: the error every client provokes now and then, on purpose.
const FAR: i64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Op {
    Tree,
    List,
    Search,
    Item,
    OutOfBounds,
    AddShared,
    AddOwn,
    Update,
    Delete,
}

/// How often each operation is picked, in percent.
const MIX: [(Op, u64); 9] = [
    (Op::Tree, 8),
    (Op::List, 12),
    (Op::Search, 10),
    (Op::Item, 12),
    (Op::OutOfBounds, 2),
    (Op::AddShared, 22),
    (Op::AddOwn, 14),
    (Op::Update, 10),
    (Op::Delete, 10),
];

fn shared_tab(k: usize) -> String {
    format!("workspace/load-{k}")
}

fn own_tab(n: usize) -> String {
    format!("workspace/load-own/c{n}")
}

/// A small deterministic generator (xorshift64*), so a failing run can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// A tool call that reports transport failures instead of panicking: (isError, text).
async fn try_call(c: &Client, tool: &str, args: Value) -> Result<(bool, String), String> {
    let args = args.as_object().cloned().unwrap_or_default();
    let result = c
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args))
        .await
        .map_err(|e| format!("transport: {e:?}"))?;
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("");
    Ok((result.is_error.unwrap_or(false), text))
}

/// The reply a call must get.
#[derive(Debug)]
enum Expect {
    Contains(String),
    Starts(String),
    Exact(String),
    /// A search header `head` with `results:` this count, each hit a text of the client's.
    Search {
        head: String,
        count: usize,
        mine: String,
    },
    /// A tool error starting with this.
    Error(String),
}

/// How a reply compares with what was expected.
#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Met,
    /// A search that found fewer of the client's items than it has: see
    /// `searches_during_writes_see_every_item`.
    Short,
    Wrong,
}

impl Expect {
    fn judge(&self, is_error: bool, text: &str) -> Verdict {
        let met = match self {
            Self::Error(start) => is_error && text.starts_with(start.as_str()),
            _ if is_error => false,
            Self::Contains(part) => text.contains(part.as_str()),
            Self::Starts(start) => text.starts_with(start.as_str()),
            Self::Exact(whole) => text == whole,
            Self::Search { head, count, mine } => return judge_search(text, head, *count, mine),
        };
        if met { Verdict::Met } else { Verdict::Wrong }
    }
}

fn judge_search(text: &str, head: &str, count: usize, mine: &str) -> Verdict {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let found: Option<usize> = first
        .strip_prefix(head)
        .and_then(|rest| rest.split('|').next())
        .and_then(|n| n.parse().ok());
    let hits_are_mine = lines.all(|l| l.contains(mine));
    match found {
        Some(n) if n == count && hits_are_mine => Verdict::Met,
        Some(n) if n < count && hits_are_mine => Verdict::Short,
        _ => Verdict::Wrong,
    }
}

/// One client and what it knows: its own tab (index 0 first), its acknowledged shared adds, the
/// texts it removed, and how long each call took.
struct Worker {
    n: usize,
    c: Client,
    rng: Rng,
    seq: usize,
    own: Vec<String>,
    own_touched: bool,
    shared: Vec<(usize, String)>,
    gone: Vec<String>,
    samples: Vec<(Op, Duration)>,
    provoked: usize,
    short_searches: usize,
}

impl Worker {
    fn pick(&mut self) -> Op {
        let mut r = self.rng.below(100) as u64;
        let op = MIX
            .iter()
            .find(|(_, w)| {
                let hit = r < *w;
                r = r.saturating_sub(*w);
                hit
            })
            .map_or(Op::Tree, |(op, _)| *op);
        match op {
            Op::Update | Op::Delete if self.own.is_empty() => Op::AddOwn,
            other => other,
        }
    }

    fn text(&mut self, kind: char) -> String {
        self.seq += 1;
        format!("load c{} {kind}{}", self.n, self.seq)
    }

    /// The call for `op`, and the reply it must get given what this client knows; the client's
    /// record is updated as if the call succeeds (a failure ends the client).
    fn plan(&mut self, op: Op) -> (&'static str, Value, Expect) {
        let own = own_tab(self.n);
        let k = self.rng.below(SHARED_TABS);
        let i = self.rng.below(self.own.len());
        let shared = shared_tab(k);
        match op {
            Op::Tree => (
                "mcp_read",
                json!({"mode": "tree", "max_items": 2}),
                Expect::Contains("workspace/load-0 [".into()),
            ),
            Op::List => (
                "mcp_read",
                json!({"mode": "list", "tab": shared, "max_items": 10}),
                Expect::Starts(format!(
                    "mode:list|tab:{shared}|full_path:mcp/{shared}|total:"
                )),
            ),
            Op::Search => {
                // Only this client writes texts starting "load cN ", and it waits for each
                // reply: the count is exact.
                let query = format!("^load c{} ", self.n);
                let expect = Expect::Search {
                    head: format!("mode:search|query:{query}|scope:mcp|results:"),
                    count: self.shared.len() + self.own.len(),
                    mine: format!("|\"load c{} ", self.n),
                };
                let args =
                    json!({"mode": "search", "query": query, "search_in": "text", "max_items": 5});
                ("mcp_read", args, expect)
            }
            Op::Item if self.own.is_empty() => (
                "mcp_read",
                json!({"mode": "item", "tab": shared, "index": 0}),
                Expect::Starts(format!(
                    "mode:item|tab:{shared}|full_path:mcp/{shared}|index:0\ntext:"
                )),
            ),
            Op::Item => (
                "mcp_read",
                json!({"mode": "item", "tab": own, "index": i}),
                Expect::Exact(format!(
                    "mode:item|tab:{own}|full_path:mcp/{own}|index:{i}\ntext:{}\ntags:[]",
                    self.own[i]
                )),
            ),
            Op::OutOfBounds => (
                "mcp_read",
                json!({"mode": "item", "tab": shared, "index": FAR}),
                Expect::Error(format!(
                    "error|INDEX_OUT_OF_BOUNDS|Index {FAR} out of bounds (count: "
                )),
            ),
            Op::AddShared => {
                let text = self.text('s');
                self.shared.push((k, text.clone()));
                (
                    "mcp_write",
                    json!({"mode": "add", "tab": shared, "text": text}),
                    Expect::Starts(format!(
                        "ok|mode:add|tab:{shared}|full_path:mcp/{shared}|index:0|"
                    )),
                )
            }
            Op::AddOwn => {
                let text = self.text('o');
                self.own.insert(0, text.clone());
                self.own_touched = true;
                (
                    "mcp_write",
                    json!({"mode": "add", "tab": own, "text": text}),
                    Expect::Starts(format!(
                        "ok|mode:add|tab:{own}|full_path:mcp/{own}|index:0|"
                    )),
                )
            }
            Op::Update => {
                let text = self.text('u');
                self.gone
                    .push(std::mem::replace(&mut self.own[i], text.clone()));
                (
                    "mcp_write",
                    json!({"mode": "update", "tab": own, "index": i, "field": "text", "text": text}),
                    Expect::Exact(format!(
                        "ok|mode:update|tab:{own}|full_path:mcp/{own}|index:{i}|field:text"
                    )),
                )
            }
            Op::Delete => {
                self.gone.push(self.own.remove(i));
                (
                    "mcp_write",
                    json!({"mode": "delete", "tab": own, "index": i}),
                    Expect::Exact(format!(
                        "ok|mode:delete|tab:{own}|full_path:mcp/{own}|index:{i}"
                    )),
                )
            }
        }
    }

    /// One call: picked, sent, timed and checked.
    async fn step(&mut self) -> Result<(), String> {
        let op = self.pick();
        let (tool, args, expect) = self.plan(op);
        let started = Instant::now();
        let (is_error, text) = try_call(&self.c, tool, args.clone())
            .await
            .map_err(|e| format!("client {} {op:?} {args}: {e}", self.n))?;
        self.samples.push((op, started.elapsed()));
        match expect.judge(is_error, &text) {
            Verdict::Met => {}
            Verdict::Short => self.short_searches += 1,
            Verdict::Wrong => {
                return Err(format!(
                    "client {} {op:?} {args}: unexpected reply {text:?}, expected {expect:?}",
                    self.n
                ));
            }
        }
        if op == Op::OutOfBounds {
            self.provoked += 1;
        }
        Ok(())
    }
}

/// Every `mcp/workspace/load*` tab and its texts, straight from CopyQ.
fn load_tabs(copyq: &PrivateCopyq) -> BTreeMap<String, Vec<String>> {
    let script = "var out = {}; tab().filter(function (t) { return t.indexOf('mcp/workspace/load') === 0; })\
                  .forEach(function (t) { tab(t); var a = []; for (var i = 0; i < size(); ++i) \
                  a.push(str(read(i))); out[t] = a; }); print(JSON.stringify(out))";
    serde_json::from_str(&copyq.eval(script, b"").expect("read CopyQ")).expect("json")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len().saturating_sub(1)) as f64 * p).round() as usize;
    sorted.get(at).copied().unwrap_or_default()
}

fn report(workers: &[Worker], elapsed: Duration) {
    let mut by_op: BTreeMap<Op, Vec<Duration>> = BTreeMap::new();
    for (op, d) in workers.iter().flat_map(|w| &w.samples) {
        by_op.entry(*op).or_default().push(*d);
    }
    let total: usize = by_op.values().map(Vec::len).sum();
    eprintln!(
        "load: {CLIENTS} clients, {total} calls in {:.1} s = {:.1} calls/s",
        elapsed.as_secs_f64(),
        total as f64 / elapsed.as_secs_f64()
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    for (op, mut ds) in by_op {
        ds.sort();
        eprintln!(
            "load: {:<12} n={:<4} {:>5.1}/s  p50={:>7.1} ms  p90={:>7.1} ms  p99={:>7.1} ms  max={:>7.1} ms",
            format!("{op:?}"),
            ds.len(),
            ds.len() as f64 / elapsed.as_secs_f64(),
            ms(percentile(&ds, 0.50)),
            ms(percentile(&ds, 0.90)),
            ms(percentile(&ds, 0.99)),
            ms(ds[ds.len() - 1]),
        );
    }
}

/// A client's run: its record, or the first failure (after which its own tab is no longer known).
async fn run_worker(
    n: usize,
    url: String,
    token: String,
    start: Arc<Barrier>,
) -> Result<Worker, String> {
    let c = client(&url, &token).await;
    let mut w = Worker {
        n,
        c,
        rng: Rng(0x9e37_79b9_7f4a_7c15 ^ (n as u64 + 1).wrapping_mul(0x1000_0000_01b3)),
        seq: 0,
        own: Vec::new(),
        own_touched: false,
        shared: Vec::new(),
        gone: Vec::new(),
        samples: Vec::new(),
        provoked: 0,
        short_searches: 0,
    };
    start.wait().await;
    let began = Instant::now();
    while began.elapsed() < RUN_FOR && w.samples.len() < MAX_CALLS_PER_CLIENT {
        w.step().await?;
    }
    Ok(w)
}

fn check_copyq(copyq: &PrivateCopyq, workers: &[Worker]) {
    let tabs = load_tabs(copyq);
    let mut expected_tabs = BTreeSet::new();
    for k in 0..SHARED_TABS {
        let full = format!("mcp/{}", shared_tab(k));
        let mut expected: Vec<String> = workers
            .iter()
            .flat_map(|w| &w.shared)
            .filter(|(tab, _)| *tab == k)
            .map(|(_, t)| t.clone())
            .chain([format!("seed load-{k}")])
            .collect();
        expected.sort();
        let mut got = tabs.get(&full).cloned().unwrap_or_default();
        got.sort();
        assert_eq!(got, expected, "{full}: every acknowledged add exactly once");
        expected_tabs.insert(full);
    }
    for w in workers.iter().filter(|w| w.own_touched) {
        let full = format!("mcp/{}", own_tab(w.n));
        assert_eq!(
            tabs.get(&full),
            Some(&w.own),
            "{full}: exactly as its client left it"
        );
        expected_tabs.insert(full);
    }
    let found: BTreeSet<String> = tabs.keys().cloned().collect();
    assert_eq!(found, expected_tabs, "no other tab appeared");
    let all: BTreeSet<&String> = tabs.values().flatten().collect();
    for gone in workers.iter().flat_map(|w| &w.gone) {
        assert!(
            !all.contains(gone),
            "{gone:?} was deleted or replaced, yet is in CopyQ"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixty_four_clients_lose_nothing() {
    let cq = copyq();
    cq.eval("config('maxitems', 10000)", b"").expect("maxitems");
    for k in 0..SHARED_TABS {
        cq.seed(
            &format!("mcp/{}", shared_tab(k)),
            &items(&[&format!("seed load-{k}")]),
        )
        .expect("seed");
    }
    let gw = gateway_with(cq, |s| {
        s.copyq.timeout_ms = 120_000;
        s.limits.request_timeout_ms = 120_000;
        s.limits.requests_per_minute = 1_000_000;
        s.limits.burst = 100_000;
    })
    .await;
    let start = Arc::new(Barrier::new(CLIENTS + 1));
    let tasks: Vec<_> = (0..CLIENTS)
        .map(|n| {
            tokio::spawn(run_worker(
                n,
                gw.url.clone(),
                gw.write.clone(),
                start.clone(),
            ))
        })
        .collect();
    start.wait().await;
    let began = Instant::now();
    let mut workers = Vec::new();
    let mut failures = Vec::new();
    for t in tasks {
        match t.await.expect("client task") {
            Ok(w) => workers.push(w),
            Err(e) => failures.push(e),
        }
    }
    let elapsed = began.elapsed();
    assert!(
        failures.is_empty(),
        "{} clients failed: {failures:#?}",
        failures.len()
    );
    report(&workers, elapsed);
    let calls: usize = workers.iter().map(|w| w.samples.len()).sum();
    let writes = workers
        .iter()
        .flat_map(|w| &w.samples)
        .filter(|(op, _)| *op >= Op::AddShared)
        .count();
    assert!(
        calls >= CLIENTS && writes >= CLIENTS / 4,
        "too little load: {calls} calls, {writes} writes"
    );
    let provoked: usize = workers.iter().map(|w| w.provoked).sum();
    let short: usize = workers.iter().map(|w| w.short_searches).sum();
    assert_eq!(
        short, 0,
        "searches that missed some of their client's items"
    );
    eprintln!(
        "load: {writes} writes; tool errors: {provoked}, all provoked on purpose; transport errors: 0"
    );
    check_copyq(cq, &workers);
}

/// A search reads whole tabs, and every write ends by unloading the tab it changed (so that CopyQ
/// saves it at once). A search that reads a tab while a write unloads it sees the tab empty, and
/// silently misses items that were there all along: `results:0` for ten items nobody touched.
/// Seen with both backends (socket: about one search in ten under this load; CLI: rarely).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_during_writes_see_every_item() {
    let cq = copyq();
    cq.eval("config('maxitems', 10000)", b"").expect("maxitems");
    let stable: Vec<String> = (0..10).map(|i| format!("stable {i}")).collect();
    let refs: Vec<&str> = stable.iter().map(String::as_str).collect();
    cq.seed("mcp/workspace/stable", &items(&refs))
        .expect("seed");
    let gw = gateway_with(cq, |s| {
        s.limits.requests_per_minute = 1_000_000;
        s.limits.burst = 100_000;
    })
    .await;
    let tasks: Vec<_> = (0..8)
        .map(|n| {
            let (url, token) = (gw.url.clone(), gw.write.clone());
            tokio::spawn(async move {
                let c = client(&url, &token).await;
                let (began, mut searches, mut short) = (Instant::now(), 0, Vec::new());
                while began.elapsed() < Duration::from_secs(6) {
                    if n % 2 == 0 {
                        let add = json!({"mode": "add", "tab": "workspace/stable", "text": format!("probe w{n} {searches}")});
                        let (is_error, text) = try_call(&c, "mcp_write", add).await.expect("write");
                        assert!(!is_error, "{text}");
                        searches += 1;
                        continue;
                    }
                    let search = json!({"mode": "search", "query": "^stable ", "max_items": 1});
                    let (is_error, text) = try_call(&c, "mcp_read", search).await.expect("search");
                    assert!(!is_error, "{text}");
                    searches += 1;
                    let first = text.lines().next().unwrap_or_default();
                    if !first.ends_with("|results:10|showing:0-0") {
                        short.push(first.to_owned());
                    }
                }
                (if n % 2 == 0 { 0 } else { searches }, short)
            })
        })
        .collect();
    let (mut searches, mut short) = (0, Vec::new());
    for t in tasks {
        let (n, s) = t.await.expect("task");
        searches += n;
        short.extend(s);
    }
    assert!(
        short.is_empty(),
        "{} of {searches} searches missed items: {:?}",
        short.len(),
        &short[..short.len().min(3)]
    );
}
