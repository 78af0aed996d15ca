//! What secret redaction costs: the same reads through two socket-backend gateways in one run,
//! `[privacy] redact = "off"` and `"all"` (so the managed tabs measured are redacted), calls
//! interleaved so both see the same machine. A tab of 100 items with secrets in them is added first
//! (both gateways read it), so the search also pays for masking, not only for finding nothing.

use copyq_mcp::sandbox::PrivateCopyq;
use serde_json::json;

use super::{Gateway, MapUnit, operations, post, time, tool_call};

const SECRETS: &str = "mcp/workspace/secrets";

fn seed_secrets(copyq: &PrivateCopyq) {
    let script = format!(
        "tab('{SECRETS}'); for (var i = 0; i < 100; ++i) add('deploy key ' + i + ': AKIAZ3MHQ7XWPLBV' + \
         (1000 + i) + ' and Authorization: Bearer q8ZfV2kL0pXw7RtY4mNb9sDc3HjE' + i); unload()"
    );
    copyq.eval(&script, b"").expect("seed the secrets tab");
}

pub async fn table(copyq: &PrivateCopyq, http: &reqwest::Client) -> Vec<String> {
    seed_secrets(copyq);
    let off = Gateway::start_with(copyq, "socket", &[("COPYQ_MCP__PRIVACY__REDACT", "off")]);
    let on = Gateway::start_with(copyq, "socket", &[("COPYQ_MCP__PRIVACY__REDACT", "all")]);
    let mut rows = vec![
        "## Secret redaction: socket backend, redact off vs all, median / p99 ms".to_owned(),
        String::new(),
        "| operation | redact = off | redact = all | added (median) | ratio |".to_owned(),
        "|---|---|---|---|---|".to_owned(),
    ];
    let reads = operations()
        .into_iter()
        .filter(|(name, ..)| !name.starts_with("add") && !name.starts_with("tree"))
        .chain([(
            "list (100 items with secrets)",
            json!({"mode": "list", "tab": "workspace/secrets", "max_items": 100}),
            0,
            100,
        )]);
    for (name, args, _, n) in reads {
        let body = tool_call(args);
        // Warm both, then alternate rounds so drift hits both columns alike.
        let (mut a, mut b) = (Vec::new(), Vec::new());
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
        }
        let median = |v: &mut Vec<(f64, f64)>| {
            v.sort_by(|x, y| x.0.total_cmp(&y.0));
            v[v.len() / 2]
        };
        let (a, b) = (median(&mut a), median(&mut b));
        let row = format!(
            "| {name} | {:.2} / {:.2} | {:.2} / {:.2} | +{:.2} ms | {:.2}x |",
            a.0,
            a.1,
            b.0,
            b.1,
            b.0 - a.0,
            b.0 / a.0
        );
        println!("{row}");
        rows.push(row);
    }
    rows.push(String::new());
    rows
}
