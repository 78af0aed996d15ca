//! The gateway's speed, measured side by side in one run (`bash bench/run.sh`): a private CopyQ with
//! a 10,000-item tab and a tab tree; the release gateway with each backend; each operation against
//! its floor (the same work by one `copyq eval`, and by raw socket calls); `tools/list` under 1, 8
//! and 64 concurrent clients against a reference MCP server from the Python SDK; resident memory;
//! 64 clients mixing reads and writes (the load test's workload) with each backend.
//! The operations and the mixed load run against the host's CopyQ and, when COPYQ_MCP_BENCH_CHROOT
//! names a chroot (tests/copyq-versions/chroot.sh), against that chroot's CopyQ too, side by side.
//! Results go to stdout and `bench/results.md`.

mod backend;
mod cold;
mod floors;
mod images;
mod load;
mod memory;
mod mixed;
mod redaction;
mod watch;
mod writers;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_copyq-mcp");
const BIG: &str = "mcp/workspace/big";

pub struct Gateway {
    child: Child,
    pub url: String,
    pub token: String,
    _data: tempfile::TempDir,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Gateway {
    fn start(copyq: &PrivateCopyq, backend: &str) -> Gateway {
        Self::start_with(copyq, backend, &[])
    }

    /// As [`Gateway::start`], with more `COPYQ_MCP__*` settings.
    pub fn start_with(copyq: &PrivateCopyq, backend: &str, env: &[(&str, &str)]) -> Gateway {
        Self::start_bin(BIN, copyq, backend, env)
    }

    /// As [`Gateway::start_with`], the gateway built at `bin` (another build, to compare with).
    pub fn start_bin(
        bin: &str,
        copyq: &PrivateCopyq,
        backend: &str,
        env: &[(&str, &str)],
    ) -> Gateway {
        let data = tempfile::tempdir().expect("tempdir");
        let out = Command::new(bin)
            .args([
                "token",
                "issue",
                "--role",
                "write",
                "--name",
                "bench",
                "--data-dir",
            ])
            .arg(data.path())
            .output()
            .expect("token");
        let token = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let mut child = wrapped(bin)
            .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
            .arg(data.path())
            .env("COPYQ_MCP__COPYQ__BACKEND", backend)
            .env("COPYQ_MCP__COPYQ__SESSION", copyq.session())
            .env("COPYQ_MCP__COPYQ__SETTINGS_PATH", copyq.settings_path())
            .env("COPYQ_MCP__COPYQ__COMMAND", copyq.cli_command())
            .env("COPYQ_MCP__LIMITS__REQUESTS_PER_MINUTE", "100000000")
            .env("COPYQ_MCP__LIMITS__BURST", "1000000")
            .env("COPYQ_MCP__LOG__LEVEL", "warn")
            .envs(env.iter().copied())
            .envs(gateway_env())
            .stdout(Stdio::piped())
            .stderr(stderr())
            .spawn()
            .expect("serve");
        let mut line = String::new();
        if let Some(out) = child.stdout.as_mut() {
            BufReader::new(out)
                .read_line(&mut line)
                .expect("listening line");
        }
        let url = line
            .split_whitespace()
            .last()
            .unwrap_or_default()
            .to_owned();
        Gateway {
            child,
            url,
            token,
            _data: data,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// `bin`, run under the command `COPYQ_MCP_BENCH_GATEWAY_WRAP` names (words split on spaces), e.g.
/// `valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p` to count a gateway's instructions
/// against a CopyQ of the bench's (dump them with `callgrind_control -d` while it runs).
fn wrapped(bin: &str) -> Command {
    let wrap = std::env::var("COPYQ_MCP_BENCH_GATEWAY_WRAP").unwrap_or_default();
    let mut words = wrap.split_whitespace();
    match words.next() {
        Some(first) => {
            let mut cmd = Command::new(first);
            cmd.args(words).arg(bin);
            cmd
        }
        None => Command::new(bin),
    }
}

/// `COPYQ_MCP_BENCH_GATEWAY_ENV`: `NAME=VALUE` pairs, space-separated, set for the gateways alone
/// (not the bench's own clients and floors), e.g. `GLIBC_TUNABLES=glibc.malloc.arena_max=1` to
/// compare allocator settings run against run with the floors measured alike.
fn gateway_env() -> Vec<(String, String)> {
    std::env::var("COPYQ_MCP_BENCH_GATEWAY_ENV")
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, value)| (name.to_owned(), value.to_owned()))
        .collect()
}

/// The gateways' log: appended to the file `COPYQ_MCP_BENCH_STDERR` names (with `RUST_LOG`, e.g.
/// `copyq_mcp=debug` for where a write group's time goes), else dropped.
fn stderr() -> Stdio {
    let file = std::env::var_os("COPYQ_MCP_BENCH_STDERR").and_then(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
    });
    file.map_or_else(Stdio::null, Stdio::from)
}

/// One stateless JSON-RPC POST; panics on anything but a successful result (so a fast error can
/// never pass for a fast answer).
pub async fn post(http: &reqwest::Client, url: &str, token: Option<&str>, body: &Value) -> Value {
    let mut req = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string());
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let res = req.send().await.expect("HTTP");
    assert!(res.status().is_success(), "HTTP {}", res.status());
    let v: Value = res.json().await.expect("JSON");
    assert!(
        v.get("error").is_none() && v["result"]["isError"] != json!(true),
        "failed: {v}"
    );
    v
}

fn tool_call(args: Value) -> Value {
    let name = if args["mode"] == "add" {
        "mcp_write"
    } else {
        "mcp_read"
    };
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

/// Median and p99 of `samples`, in ms.
pub fn stats(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1;
        samples[i].as_secs_f64() * 1000.0
    };
    (at(0.5), at(0.99))
}

pub async fn time<F, Fut>(n: usize, mut f: F) -> (f64, f64)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    f().await; // warm-up
    let mut samples = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        f().await;
        samples.push(t.elapsed());
    }
    stats(samples)
}

/// `n` samples of `ours` alternating with `floor` (a first, warming pair not counted): (ours,
/// floor). Alternated, not one block after the other, so whatever else the machine or CopyQ is
/// doing meanwhile (a tab saved after the CLI's calls, a busy core) falls on both alike: measured
/// in blocks, the same build's tree on CopyQ 17.0 moved from +0.35 to +1.49 ms over its floor
/// between runs minutes apart, and the tree on 6.4 once came out 1.5 ms faster than its floor.
pub async fn alternated<A, FA, B, FB>(
    n: usize,
    mut ours: A,
    mut floor: B,
) -> (Vec<Duration>, Vec<Duration>)
where
    A: FnMut() -> FA,
    FA: std::future::Future<Output = ()>,
    B: FnMut() -> FB,
    FB: std::future::Future<Output = ()>,
{
    let (mut a, mut b) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..=n {
        let t = Instant::now();
        ours().await;
        let ours_took = t.elapsed();
        let t = Instant::now();
        floor().await;
        let floor_took = t.elapsed();
        if i > 0 {
            a.push(ours_took);
            b.push(floor_took);
        }
    }
    (a, b)
}

/// The operations measured, each with its arguments and iterations (fewer where each is slow).
pub fn operations() -> Vec<(&'static str, Value, usize, usize)> {
    vec![
        (
            "list (20 items)",
            json!({"mode": "list", "tab": "workspace/big"}),
            30,
            300,
        ),
        (
            "item",
            json!({"mode": "item", "tab": "workspace/big", "index": 5000}),
            30,
            300,
        ),
        (
            "tree scope:all",
            json!({"mode": "tree", "scope": "all"}),
            20,
            100,
        ),
        (
            "search 10,000 items",
            json!({"mode": "search", "query": "needle \\d+", "scope": "mcp"}),
            10,
            30,
        ),
        (
            "add",
            json!({"mode": "add", "tab": "workspace/bench-add", "text": "benchmark item"}),
            20,
            100,
        ),
    ]
}

fn seed(copyq: &PrivateCopyq) {
    copyq
        .eval("config('maxitems', 10000)", b"")
        .expect("maxitems");
    let big = format!(
        "tab('{BIG}'); for (var i = 9999; i >= 0; --i) {{ var t = 'Item ' + i + ': ' + (i % 997 === 0 ? 'needle ' + i + ' ' : '') + \
         'lorem ipsum dolor sit amet, consectetur adipiscing elit, line two\\nand three of a clipboard entry'; \
         var args = [0, 'text/plain', t]; if (i % 10 === 0) args.push('application/x-copyq-tags', 'tag' + (i % 7) + ',bench'); \
         if (i % 50 === 0) args.push('application/x-copyq-item-notes', 'note ' + i); write.apply(this, args); }} unload()"
    );
    copyq.eval(&big, b"").expect("seed the big tab");
    let tree = "var tabs = ['mcp/info', 'mcp/заметки', 'mcp/workspace/p1', 'mcp/workspace/p2', 'mcp/workspace/p3', \
                'mcp/workspace/p3/sub', 'архив', 'личное/проекты/web', 'work/snippets']; \
                tabs.forEach(function (t) { tab(t); for (var i = 0; i < 30; ++i) add(t + ' item ' + i + ' with some text'); }); unload()";
    copyq.eval(tree, b"").expect("seed the tree");
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmRSS:")
                    .map(|v| v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0))
            })
        })
        .unwrap_or(0)
}

fn main() {
    // COPYQ_MCP_BENCH_ONLY=redaction-cold: the first search's redaction in process, no CopyQ.
    if std::env::var("COPYQ_MCP_BENCH_ONLY").as_deref() == Ok("redaction-cold") {
        cold::run();
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(run());
}

/// CopyQ's version line, e.g. `CopyQ 17.0.0 (Qt 6.11.2)`.
fn copyq_version(copyq: &PrivateCopyq) -> String {
    let out = copyq.eval("print(version())", b"").unwrap_or_default();
    let mut lines = out.lines();
    let version = lines
        .next()
        .and_then(|l| l.split_whitespace().last())
        .unwrap_or("?")
        .trim_start_matches('v')
        .to_owned();
    let qt = lines
        .find_map(|l| l.strip_prefix("Qt: "))
        .unwrap_or("?")
        .to_owned();
    format!("CopyQ {version} (Qt {qt})")
}

/// The operations table against `copyq`; the socket gateway is returned for the load test.
async fn operations_table(
    copyq: &PrivateCopyq,
    http: &reqwest::Client,
    report: &mut Vec<String>,
) -> Gateway {
    report.extend([
        format!("## Operations against {}: gateway vs floor, median / p99 ms", copyq_version(copyq)),
        String::new(),
        "| operation | CLI floor | gateway, cli backend | socket floor | gateway, socket backend | socket vs cli (median) | socket gateway / socket floor |".to_owned(),
        "|---|---|---|---|---|---|---|".to_owned(),
    ]);
    let cli = Gateway::start(copyq, "cli");
    let socket = Gateway::start(copyq, "socket");
    let floor = floors::Floors::connect(copyq).await;
    // COPYQ_MCP_BENCH_OPS=add,tree: only the operations whose names start so; COPYQ_MCP_BENCH_NO_CLI=1:
    // the socket columns only (the CLI columns read 0). For quick side-by-side runs while working.
    let only = std::env::var("COPYQ_MCP_BENCH_OPS").unwrap_or_default();
    let with_cli = std::env::var_os("COPYQ_MCP_BENCH_NO_CLI").is_none();
    let picked = operations()
        .into_iter()
        .filter(|(name, ..)| only.is_empty() || only.split(',').any(|o| name.starts_with(o)));
    for (name, args, n_cli, n_socket) in picked {
        let body = tool_call(args.clone());
        let n_cli = if with_cli { n_cli } else { 0 };
        let g_cli = match n_cli {
            0 => (0.0, 0.0),
            n => {
                time(n, || {
                    post(http, &cli.url, Some(&cli.token), &body).map_unit()
                })
                .await
            }
        };
        let f_cli = match n_cli {
            0 => (0.0, 0.0),
            n => floor.cli(copyq, name, n).await,
        };
        let (g_sock, f_sock) = alternated(
            n_socket,
            || post(http, &socket.url, Some(&socket.token), &body).map_unit(),
            || floor.socket_once(name),
        )
        .await;
        let (g_sock, f_sock) = (stats(g_sock), stats(f_sock));
        let row = format!(
            "| {name} | {:.1} / {:.1} | {:.1} / {:.1} | {:.2} / {:.2} | {:.2} / {:.2} | {:.1}x faster | {:.2}x (+{:.2} ms) |",
            f_cli.0,
            f_cli.1,
            g_cli.0,
            g_cli.1,
            f_sock.0,
            f_sock.1,
            g_sock.0,
            g_sock.1,
            g_cli.0 / g_sock.0,
            g_sock.0 / f_sock.0,
            g_sock.0 - f_sock.0
        );
        println!("{row}");
        report.push(row);
    }
    report.push(String::new());
    let wanted = |op: &str| only.is_empty() || only.split(',').any(|o| op.starts_with(o));
    report.extend([
        "| operation | socket floor | socket backend | backend / floor |".to_owned(),
        "|---|---|---|---|".to_owned(),
    ]);
    if wanted("tree") {
        report.push(backend::tree_row(copyq, &floor, 100).await);
    }
    if wanted("search") {
        report.push(backend::search_row(copyq, &floor, 30).await);
    }
    if wanted("add") {
        report.push(backend::add_row(copyq, &floor, 100).await);
    }
    report.push(String::new());
    socket
}

async fn run() {
    let http = reqwest::Client::new();
    let mut report = vec![
        "# copyq-mcp benchmark".to_owned(),
        String::new(),
        format!(
            "Machine: {} cores; private CopyQ (Xvfb); release build; `bash bench/run.sh`.",
            std::thread::available_parallelism().map_or(0, |n| n.get())
        ),
        String::new(),
    ];
    // COPYQ_MCP_BENCH_ON_CHROOT=1 with one of the modes below: against the chroot's CopyQ instead.
    let on_chroot = std::env::var_os("COPYQ_MCP_BENCH_ON_CHROOT").is_some();
    let home = match on_chroot {
        true => std::env::var_os("COPYQ_MCP_BENCH_CHROOT").map(Into::into),
        false => None,
    };
    let copyq = PrivateCopyq::start_in(home).expect("a private CopyQ (apt-get install copyq xvfb)");
    seed(&copyq);
    // COPYQ_MCP_BENCH_ONLY=redaction: that table alone, printed (bench/results.md is left as is).
    // COPYQ_MCP_BENCH_ONLY=mixed: the mixed load alone, likewise; =images: the images table.
    match std::env::var("COPYQ_MCP_BENCH_ONLY").as_deref() {
        Ok("redaction") => {
            let rows = redaction::table(&copyq, &http).await;
            println!("\n{}", rows.join("\n"));
            return;
        }
        Ok("images") => {
            let rows = images::table(&copyq, &http).await;
            println!("\n{}", rows.join("\n"));
            return;
        }
        // COPYQ_MCP_BENCH_ONLY=watch: what following a tab costs, likewise.
        Ok("watch") => {
            println!("\n{}", watch::table(&copyq, &http).await.join("\n"));
            return;
        }
        // COPYQ_MCP_BENCH_ONLY=memory: the gateway's memory step by step, likewise.
        Ok("memory") => {
            println!("\n{}", memory::table(&copyq, &http).await.join("\n"));
            return;
        }
        // COPYQ_MCP_BENCH_ONLY=writers: durable adds by 1, 8 and 64 writers, likewise.
        Ok("writers") => {
            println!("\n{}", writers::table(&copyq, &http).await.join("\n"));
            return;
        }
        // COPYQ_MCP_BENCH_ONLY=alone: each operation of the mix alone, CopyQ's CPU a call.
        Ok("alone") => {
            println!("\n{}", mixed::alone_table(&copyq).await.join("\n"));
            return;
        }
        // COPYQ_MCP_BENCH_ONLY=calls: CopyQ's CPU a call, by kind of call.
        Ok("calls") => {
            println!("\n{}", mixed::calls_table(&copyq).await.join("\n"));
            return;
        }
        Ok("mixed") => {
            let rows = mixed::table(&copyq).await;
            println!("\n{}", rows.join("\n"));
            return;
        }
        _ => {}
    }
    let socket = operations_table(&copyq, &http, &mut report).await;
    // COPYQ_MCP_BENCH_ONLY=ops: the operations tables alone, printed.
    let ops_only = std::env::var("COPYQ_MCP_BENCH_ONLY").as_deref() == Ok("ops");
    let mut mixed_other = Vec::new();
    if let Some(chroot) = std::env::var_os("COPYQ_MCP_BENCH_CHROOT").filter(|c| !c.is_empty()) {
        let other =
            PrivateCopyq::start_in(Some(chroot.into())).expect("a private CopyQ in the chroot");
        seed(&other);
        drop(operations_table(&other, &http, &mut report).await);
        // The mixed load against 17.0 too, while its CopyQ is up; its table goes after 6.4's.
        if !ops_only {
            mixed_other = mixed::table(&other).await;
        }
    }
    if ops_only {
        println!("\n{}", report.join("\n"));
        return;
    }
    report.extend(redaction::table(&copyq, &http).await);
    report.extend(images::table(&copyq, &http).await);
    report.extend(load::tools_list(&http, &socket, rss_kib).await);
    drop(socket);
    report.extend(mixed::table(&copyq).await);
    report.extend(mixed_other);
    report.extend(mixed::with_screenshots(&copyq).await);
    report.extend(watch::table(&copyq, &http).await);
    report.push(String::new());
    report.push(format!(
        "Iterations per operation (cli / socket): {}.",
        operations()
            .iter()
            .map(|(n, _, c, s)| format!("{n} {c}/{s}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    let text = report.join("\n") + "\n";
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/bench/results.md");
    std::fs::write(path, &text).expect("write bench/results.md");
    println!("\n{text}\nwritten to {path}");
}

trait MapUnit {
    fn map_unit(self) -> impl std::future::Future<Output = ()>;
}

impl<F: std::future::Future<Output = Value>> MapUnit for F {
    async fn map_unit(self) {
        self.await;
    }
}
