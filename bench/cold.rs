//! The first search's redaction cost, in process and without CopyQ, so that it can be counted
//! exactly: `COPYQ_MCP_BENCH_ONLY=redaction-cold` masks what the bench's first search reads (the
//! 10,000-item tab's texts, tags and notes, the tab tree, then the 100 items holding secrets) with
//! a redactor just built, then the secrets again; then all of them read again as a warm search
//! looks them up, one lock a text (the code before) and all under one lock ([`Redactor::recall`]).
//! Before the first pass, the read's texts are looked up all at once and all miss, as the gateway's
//! first search does ([`Redactor::recall`]). Each phase is a function of its own, so
//! `valgrind --tool=callgrind --collect-atstart=no --toggle-collect='*cold*phase*'` counts its
//! instructions alone (the bodies differ, so that the compiler does not merge two phases into one
//! function and count them as one); the wall times printed are for a quiet look only.

use std::hint::black_box;
use std::time::Instant;

use copyq_mcp::privacy::Redactor;
use serde_json::Value;

const CORPUS: &str = include_str!("../tests/fixtures/secrets/clipboard.jsonl");

/// What the bench's search reads besides the secrets: `seed` in gateway.rs, as CopyQ returns it.
fn plain() -> Vec<String> {
    let mut out = Vec::new();
    for i in (0..10_000).rev() {
        let needle = if i % 997 == 0 {
            format!("needle {i} ")
        } else {
            String::new()
        };
        out.push(format!(
            "Item {i}: {needle}lorem ipsum dolor sit amet, consectetur adipiscing elit, line two\nand three of a clipboard entry"
        ));
        if i % 10 == 0 {
            out.extend([format!("tag{}", i % 7), "bench".to_owned()]);
        }
        if i % 50 == 0 {
            out.push(format!("note {i}"));
        }
    }
    let tree = [
        "mcp/info",
        "mcp/заметки",
        "mcp/workspace/p1",
        "mcp/workspace/p2",
        "mcp/workspace/p3",
        "mcp/workspace/p3/sub",
    ];
    for t in tree {
        for i in 0..30 {
            out.push(format!("{t} item {i} with some text"));
        }
    }
    out
}

fn secrets() -> Vec<String> {
    CORPUS
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|it| it["secrets"].as_array().is_some_and(|s| !s.is_empty()))
        .filter_map(|it| it["text"].as_str().map(str::to_owned))
        .take(100)
        .collect()
}

#[inline(never)]
fn cold_build_phase() -> Redactor {
    Redactor::new(&[]).expect("the rules build")
}

#[inline(never)]
fn cold_miss_phase(r: &Redactor, texts: &[String]) -> usize {
    let mut recall = r.recall();
    texts.iter().filter(|t| recall.get(t).is_none()).count()
}

#[inline(never)]
fn cold_plain_phase(r: &Redactor, texts: &[String]) -> usize {
    texts.iter().map(|t| r.redact_remembered(t).len()).sum()
}

#[inline(never)]
fn cold_secrets_phase(r: &Redactor, texts: &[String]) -> usize {
    // Masked texts counted apart (a body of its own: see the module's note).
    texts
        .iter()
        .map(|t| match r.redact_remembered(t) {
            std::borrow::Cow::Owned(m) => m.len() << 32,
            std::borrow::Cow::Borrowed(t) => t.len(),
        })
        .sum()
}

#[inline(never)]
fn cold_again_phase(r: &Redactor, texts: &[String]) -> usize {
    texts.iter().map(|t| r.redact(t).len()).sum()
}

#[inline(never)]
fn cold_warm_each_phase(r: &Redactor, texts: &[String]) -> usize {
    // Counts (the first pass sums lengths), so the compiler does not fold the two into one.
    texts
        .iter()
        .filter(|t| matches!(r.redact_remembered(t), std::borrow::Cow::Owned(_)))
        .count()
}

#[inline(never)]
fn cold_warm_recall_phase(r: &Redactor, texts: &[String]) -> usize {
    let mut recall = r.recall();
    texts
        .iter()
        .filter(|t| matches!(recall.get(t), Some(Some(_))))
        .count()
}

pub fn run() {
    let (plain, secrets) = (plain(), secrets());
    let t = Instant::now();
    let r = cold_build_phase();
    let build = t.elapsed();
    let all: Vec<String> = plain.iter().chain(&secrets).cloned().collect();
    let t = Instant::now();
    black_box(cold_miss_phase(&r, &all));
    let miss = t.elapsed();
    let t = Instant::now();
    black_box(cold_plain_phase(&r, &plain));
    let first = t.elapsed();
    let t = Instant::now();
    black_box(cold_secrets_phase(&r, &secrets));
    let second = t.elapsed();
    let t = Instant::now();
    black_box(cold_again_phase(&r, &secrets));
    let again = t.elapsed();
    let t = Instant::now();
    black_box(cold_warm_each_phase(&r, &all));
    let each = t.elapsed();
    let t = Instant::now();
    black_box(cold_warm_recall_phase(&r, &all));
    let recall = t.elapsed();
    println!(
        "build {build:?}; lookups that miss {miss:?}; {} plain texts {first:?}; {} with secrets {second:?}; again {again:?}; \
         warm, a lock a text {each:?}, one lock {recall:?}",
        plain.len(),
        secrets.len()
    );
}
