//! What secret redaction costs: the same reads through two socket-backend gateways in one run,
//! `[privacy] redact = "off"` and `"all"` (so the managed tabs measured are redacted), calls
//! interleaved so both see the same machine. A tab of 100 items with secrets in them is added first
//! (both gateways read it): the first 100 items of the realistic clipboard corpus that hold one
//! (passwords in configs and chat, keys, cards, cookies...), so the search also pays for masking,
//! not only for finding nothing. The first search after start is measured apart: each round
//! starts both gateways afresh, and times the first call of each. Last, the listing and tree of
//! the secrets tab through two CLI-backend gateways, where the longer cut of a masked read costs
//! transfer.

use std::time::Instant;

use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::{Value, json};

use super::{Gateway, MapUnit, operations, post, stats, time, tool_call};

const SECRETS: &str = "mcp/workspace/secrets";
const CORPUS: &str = include_str!("../tests/fixtures/secrets/clipboard.jsonl");
/// Rounds of the first search after start (each starts two gateways).
const COLD_ROUNDS: usize = 7;

fn seed_secrets(copyq: &PrivateCopyq) {
    let texts: Vec<Value> = CORPUS
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|it| it["secrets"].as_array().is_some_and(|s| !s.is_empty()))
        .map(|it| it["text"].clone())
        .take(100)
        .collect();
    let script = format!(
        "tab('{SECRETS}'); var xs = JSON.parse(str(input())); \
         for (var i = 0; i < xs.length; ++i) add(xs[i]); unload()"
    );
    let json = serde_json::to_vec(&texts).expect("JSON");
    copyq.eval(&script, &json).expect("seed the secrets tab");
}

/// The first search of a gateway just started, off and on alike, over `COPYQ_MCP_BENCH_ROUNDS`
/// rounds (default 7). With `COPYQ_MCP_BENCH_BEFORE` naming another build of the gateway (the code
/// before a change), each round also starts that one with redaction on, and a second row compares
/// it with the same rounds' "off". The warm reads of [`table`] then time it too, beside the others.
async fn first_search(
    copyq: &PrivateCopyq,
    http: &reqwest::Client,
    (what, body): (&str, &Value),
) -> Vec<String> {
    let rounds = std::env::var("COPYQ_MCP_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(COLD_ROUNDS);
    let before = std::env::var("COPYQ_MCP_BENCH_BEFORE").ok();
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let mut runs = vec![(None, "off", &mut a), (None, "all", &mut b)];
        if let Some(bin) = &before {
            runs.push((Some(bin.as_str()), "all", &mut c));
        }
        for (bin, mode, out) in runs {
            let env = [("COPYQ_MCP__PRIVACY__REDACT", mode)];
            let g = match bin {
                Some(bin) => Gateway::start_bin(bin, copyq, "socket", &env),
                None => Gateway::start_with(copyq, "socket", &env),
            };
            let t = Instant::now();
            post(http, &g.url, Some(&g.token), body).await;
            out.push(t.elapsed());
        }
    }
    let a = stats(a);
    let row = |from: &str, b: (f64, f64)| {
        table_row(
            &format!("{what}, first after start ({rounds} starts){from}"),
            a,
            b,
        )
    };
    let mut rows = vec![row("", stats(b))];
    if !c.is_empty() {
        rows.push(row(", \"all\" from COPYQ_MCP_BENCH_BEFORE", stats(c)));
    }
    rows
}

pub async fn table(copyq: &PrivateCopyq, http: &reqwest::Client) -> Vec<String> {
    seed_secrets(copyq);
    let off = Gateway::start_with(copyq, "socket", &[("COPYQ_MCP__PRIVACY__REDACT", "off")]);
    let on = Gateway::start_with(copyq, "socket", &[("COPYQ_MCP__PRIVACY__REDACT", "all")]);
    // The code before a change, redacting too: its warm reads are timed in the same rounds.
    let before = std::env::var("COPYQ_MCP_BENCH_BEFORE").ok().map(|bin| {
        Gateway::start_bin(
            &bin,
            copyq,
            "socket",
            &[("COPYQ_MCP__PRIVACY__REDACT", "all")],
        )
    });
    let mut rows = vec![
        "## Secret redaction: socket backend, redact off vs all, median / p99 ms".to_owned(),
        String::new(),
        "| operation | redact = off | redact = all | added (median) | ratio |".to_owned(),
        "|---|---|---|---|---|".to_owned(),
    ];
    let search = operations()
        .into_iter()
        .find(|(name, ..)| name.starts_with("search"))
        .map(|(_, args, ..)| tool_call(args))
        .expect("the search operation");
    // `needle \d+` matches no mask's text: "all" masks only the items it matches as read. A
    // word of a mask's kinds (`password`, which people search for) matches masks: then the
    // items holding a word of those kinds' rules too. `key=\S+` may match across a mask's edge
    // (`\S` matches a bracket): then the items holding `key=` as read (every match starts with
    // it, and no mask's text holds it).
    let mut masks = search.clone();
    masks["params"]["arguments"]["query"] = json!("password");
    let mut edge = search.clone();
    edge["params"]["arguments"]["query"] = json!("key=\\S+");
    // `.*password.*`: no prefix or suffix, the word inside; and a mask's word.
    let mut inside = search.clone();
    inside["params"]["arguments"]["query"] = json!(".*password.*");
    let searches = [
        ("search 10,000 items (`needle \\d+`)", &search),
        ("search 10,000 items (`password`, a mask's word)", &masks),
        (
            "search 10,000 items (`key=\\S+`, across a mask's edge)",
            &edge,
        ),
        (
            "search 10,000 items (`.*password.*`, a word inside)",
            &inside,
        ),
    ];
    for what in searches {
        for row in first_search(copyq, http, what).await {
            println!("{row}");
            rows.push(row);
        }
    }
    let reads: Vec<_> = operations()
        .into_iter()
        .filter(|(name, ..)| !name.starts_with("add"))
        .chain([
            (
                "search 10,000 items (`password`, a mask's word)",
                json!({"mode": "search", "query": "password", "scope": "mcp"}),
                10,
                30,
            ),
            (
                "search 10,000 items (`key=\\S+`, across a mask's edge)",
                json!({"mode": "search", "query": "key=\\S+", "scope": "mcp"}),
                10,
                30,
            ),
            (
                "search 10,000 items (`.*password.*`, a word inside)",
                json!({"mode": "search", "query": ".*password.*", "scope": "mcp"}),
                10,
                30,
            ),
            (
                "list (100 items with secrets)",
                json!({"mode": "list", "tab": "workspace/secrets", "max_items": 100}),
                0,
                100,
            ),
        ])
        .collect();
    rows.extend(warm(http, [&off, &on], before.as_ref(), &reads, "").await);
    drop((off, on, before));
    // The CLI backend reads what the cut asks for (a masked tab's listing and tree: 4,096 UTF-16
    // units a text, 320 unmasked): the listing and tree of the secrets tab, where 8 texts are
    // longer than 320 units, off vs all on that backend.
    let cli = |mode| Gateway::start_with(copyq, "cli", &[("COPYQ_MCP__PRIVACY__REDACT", mode)]);
    let (off, on) = (cli("off"), cli("all"));
    let before = std::env::var("COPYQ_MCP_BENCH_BEFORE").ok().map(|bin| {
        Gateway::start_bin(&bin, copyq, "cli", &[("COPYQ_MCP__PRIVACY__REDACT", "all")])
    });
    let secrets = [
        (
            "list (100 items with secrets)",
            json!({"mode": "list", "tab": "workspace/secrets", "max_items": 100}),
            0,
            30,
        ),
        (
            "tree scope:mcp (20 items a tab, the secrets tab among them)",
            json!({"mode": "tree", "scope": "mcp", "max_depth": 3}),
            0,
            30,
        ),
    ];
    rows.extend(
        warm(
            http,
            [&off, &on],
            before.as_ref(),
            &secrets,
            ", cli backend",
        )
        .await,
    );
    rows.push(String::new());
    rows
}

/// Rows for `reads` (name, arguments, calls) through `off` and `on` (and the code before's "all"
/// gateway, if any): warmed, then rounds alternated so drift hits the columns alike.
async fn warm(
    http: &reqwest::Client,
    [off, on]: [&Gateway; 2],
    before: Option<&Gateway>,
    reads: &[(&str, Value, usize, usize)],
    label: &str,
) -> Vec<String> {
    let mut rows = Vec::new();
    for (name, args, _, n) in reads {
        let body = tool_call(args.clone());
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..5 {
            a.push(
                time(n / 5, || {
                    post(http, &off.url, Some(&off.token), &body).map_unit()
                })
                .await,
            );
            b.push(
                time(n / 5, || {
                    post(http, &on.url, Some(&on.token), &body).map_unit()
                })
                .await,
            );
            if let Some(g) = before {
                c.push(
                    time(n / 5, || {
                        post(http, &g.url, Some(&g.token), &body).map_unit()
                    })
                    .await,
                );
            }
        }
        let median = |v: &mut Vec<(f64, f64)>| {
            v.sort_by(|x, y| x.0.total_cmp(&y.0));
            v[v.len() / 2]
        };
        let (a, b) = (median(&mut a), median(&mut b));
        let row = table_row(&format!("{name}{label}"), a, b);
        println!("{row}");
        rows.push(row);
        if !c.is_empty() {
            let row = table_row(
                &format!("{name}{label}, \"all\" from COPYQ_MCP_BENCH_BEFORE"),
                a,
                median(&mut c),
            );
            println!("{row}");
            rows.push(row);
        }
    }
    rows
}

/// A table row: `name`, "off" and "all" (median / p99, ms), what "all" adds and the ratio.
fn table_row(name: &str, a: (f64, f64), b: (f64, f64)) -> String {
    format!(
        "| {name} | {:.2} / {:.2} | {:.2} / {:.2} | {:+.2} ms | {:.2}x |",
        a.0,
        a.1,
        b.0,
        b.1,
        b.0 - a.0,
        b.0 / a.0
    )
}
