//! The mixed workload of many MCP clients at once, shared by the load test (tests/copyq/load.rs:
//! nothing lost or wrong) and the benchmark (bench/mixed.rs: calls/s and latency per operation).
//!
//! Each client adds to four shared tabs, and adds, updates and deletes only in a tab of its own:
//! indices there move only when the client itself writes, so it always knows which item an index
//! names, and its final content is known exactly. Its searches know how many of its items exist.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::Barrier;

pub type Client = RunningService<RoleClient, ()>;

/// A real MCP client session over Streamable HTTP with `token`.
pub async fn connect(url: &str, token: &str) -> Result<Client, String> {
    let config = StreamableHttpClientTransportConfig::with_uri(url).auth_header(token);
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    ().serve(transport)
        .await
        .map_err(|e| format!("connect: {e:?}"))
}

pub const SHARED_TABS: usize = 4;
/// An index no tab here reaches: the error every client provokes now and then, on purpose.
const FAR: i64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Op {
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

pub fn shared_tab(k: usize) -> String {
    format!("workspace/load-{k}")
}

pub fn own_tab(n: usize) -> String {
    format!("workspace/load-own/c{n}")
}

/// A small deterministic generator (xorshift64*), so a failing run can be replayed.
pub struct Rng(u64);

impl Rng {
    /// Client `n`'s generator: the same sequence for the gateway's clients and the floor's.
    pub fn for_client(n: usize) -> Rng {
        Rng(0x9e37_79b9_7f4a_7c15 ^ (n as u64 + 1).wrapping_mul(0x1000_0000_01b3))
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// A tool call that reports transport failures instead of panicking: (isError, text).
pub async fn try_call(c: &Client, tool: &str, args: Value) -> Result<(bool, String), String> {
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
    /// `load::searches_during_writes_see_every_item` in tests/copyq.
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
pub struct Worker {
    pub n: usize,
    c: Client,
    rng: Rng,
    seq: usize,
    pub own: Vec<String>,
    pub own_touched: bool,
    pub shared: Vec<(usize, String)>,
    pub gone: Vec<String>,
    pub samples: Vec<(Op, Duration)>,
    pub provoked: usize,
    pub short_searches: usize,
}

/// The next operation by the weights of [`MIX`]; with nothing in its own tab, a client adds there
/// instead of updating or deleting.
pub fn pick(rng: &mut Rng, own_empty: bool) -> Op {
    let mut r = rng.below(100) as u64;
    let op = MIX
        .iter()
        .find(|(_, w)| {
            let hit = r < *w;
            r = r.saturating_sub(*w);
            hit
        })
        .map_or(Op::Tree, |(op, _)| *op);
    match op {
        Op::Update | Op::Delete if own_empty => Op::AddOwn,
        other => other,
    }
}

impl Worker {
    fn pick(&mut self) -> Op {
        pick(&mut self.rng, self.own.is_empty())
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
        self.step_op(op).await
    }

    /// A call of `op` (not drawn), sent, timed and checked. An update or delete needs an item in
    /// the client's own tab.
    pub async fn step_op(&mut self, op: Op) -> Result<(), String> {
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

pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len().saturating_sub(1)) as f64 * p).round() as usize;
    sorted.get(at).copied().unwrap_or_default()
}

/// Each operation's latencies over all `samples`, sorted.
pub fn by_op<'a>(
    samples: impl IntoIterator<Item = &'a (Op, Duration)>,
) -> BTreeMap<Op, Vec<Duration>> {
    let mut by_op: BTreeMap<Op, Vec<Duration>> = BTreeMap::new();
    for (op, d) in samples {
        by_op.entry(*op).or_default().push(*d);
    }
    for ds in by_op.values_mut() {
        ds.sort();
    }
    by_op
}

/// A client's run: its record, or the first failure (after which its own tab is no longer known).
pub async fn run_worker(
    n: usize,
    c: Client,
    start: Arc<Barrier>,
    (run_for, max_calls): (Duration, usize),
) -> Result<Worker, String> {
    let mut w = Worker::new(n, c);
    start.wait().await;
    let began = Instant::now();
    while began.elapsed() < run_for && w.samples.len() < max_calls {
        w.step().await?;
    }
    Ok(w)
}

impl Worker {
    /// Client `n`, knowing nothing yet (its generator as [`Rng::for_client`]).
    pub fn new(n: usize, c: Client) -> Worker {
        Worker {
            n,
            c,
            rng: Rng::for_client(n),
            seq: 0,
            own: Vec::new(),
            own_touched: false,
            shared: Vec::new(),
            gone: Vec::new(),
            samples: Vec::new(),
            provoked: 0,
            short_searches: 0,
        }
    }
}
