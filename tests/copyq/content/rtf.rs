//! Items holding only RTF (`text/rtf` as LibreOffice and word processors copy, `application/rtf`)
//! read as their text: described, derived, searched and redacted like HTML-only items, on both
//! backends. The RTF was written by real producers (`tests/fixtures/rtf/`, from `secret.md`).

use std::sync::Once;

use copyq_mcp::privacy::Redact;
use serde_json::json;

use super::{Seeded, copyq, seed};
use crate::support::*;

const TAB: &str = "mcp/workspace/rtf";

/// The text both documents hold, as every tab shows it when `[privacy] redact = "all"`.
const MASKED: &str = "Deploy notes\n\
                      The deploy key [redacted:aws-access-token] was rotated today.\n\
                      Ёлки-палки, ключ — «новый».";
const PREVIEW: &str =
    "Deploy notes The deploy key [redacted:aws-access-token] was rotated today. Ёл...";

fn fixture(name: &str) -> Vec<u8> {
    let path = format!("{}/tests/fixtures/rtf/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Row 0: LibreOffice's RTF; row 1: pandoc's, as `application/rtf`; row 2: LibreOffice's of the
/// document with a logo first (its text 53 KB in, past what a listing reads of HTML).
fn items() -> [Seeded; 3] {
    [
        Seeded::one("text/rtf", fixture("libreoffice-secret.rtf")),
        Seeded::one("application/rtf", fixture("pandoc-secret.rtf")),
        Seeded::one("text/rtf", fixture("libreoffice-picture-first.rtf")),
    ]
}

async fn session(backend: &str, redact: Redact) -> (Gateway, Client) {
    static SEED: Once = Once::new();
    let c = copyq();
    SEED.call_once(|| seed(c, TAB, &items()));
    let backend = copyq_mcp::config::BackendKind::parse(backend).expect("socket or cli");
    let gw = gateway_with(c, |s| {
        s.copyq.backend = backend;
        s.privacy.redact = redact;
    })
    .await;
    let c = client(&gw.url, &gw.read).await;
    (gw, c)
}

fn descriptors() -> [String; 3] {
    let [lo, pandoc, picture] = items();
    [
        format!("rtf text/rtf {}B; text from text/rtf", lo.bytes("text/rtf")),
        format!(
            "rtf application/rtf {}B; text from application/rtf",
            pandoc.bytes("application/rtf")
        ),
        format!(
            "rtf text/rtf {}B; text from text/rtf",
            picture.bytes("text/rtf")
        ),
    ]
}

/// The tab listed.
async fn list(c: &Client) -> String {
    ok(
        c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/rtf"}),
    )
    .await
}

/// The listing of the tab's three items, described by `descriptors`, each previewed `preview`.
fn listing(descriptors: &[&String; 3], preview: &str) -> String {
    let rows: Vec<String> = descriptors
        .iter()
        .enumerate()
        .map(|(i, d)| format!("{i}|content:{d}|\"{preview}\"|[]"))
        .collect();
    format!(
        "mode:list|tab:workspace/rtf|full_path:{TAB}|total:3|showing:0-2\n{}",
        rows.join("\n")
    )
}

#[tokio::test]
async fn rtf_items_read_as_their_masked_text() {
    let [lo, pandoc, picture] = descriptors();
    for backend in ["socket", "cli"] {
        let (_gw, c) = session(backend, Redact::All).await;
        assert_eq!(
            list(&c).await,
            listing(&[&lo, &pandoc, &picture], PREVIEW),
            "{backend}"
        );
        for (index, descriptor) in [(0, &lo), (1, &pandoc), (2, &picture)] {
            let got = ok(
                &c,
                "mcp_read",
                json!({"mode": "item", "tab": "workspace/rtf", "index": index}),
            )
            .await;
            assert_eq!(
                got,
                format!(
                    "mode:item|tab:workspace/rtf|full_path:{TAB}|index:{index}\n\
                     content:{descriptor}\ntext:{MASKED}\ntags:[]"
                ),
                "{backend}"
            );
        }
        let got = ok(&c, "mcp_read", json!({"mode": "search", "query": "ключ"})).await;
        assert_eq!(
            got,
            format!(
                "mode:search|query:ключ|scope:mcp|results:3\n\
                 workspace/rtf[0]|content:{lo}|\"{PREVIEW}\"|[]|match:text\n\
                 workspace/rtf[1]|content:{pandoc}|\"{PREVIEW}\"|[]|match:text\n\
                 workspace/rtf[2]|content:{picture}|\"{PREVIEW}\"|[]|match:text"
            ),
            "{backend}"
        );
    }
}

#[tokio::test]
async fn a_listing_reads_past_the_header() {
    // Unmasked, nothing makes the gateway read the source again whole: the preview comes from what
    // the listing read, which must reach the text of row 2, 53 KB in.
    let [lo, pandoc, picture] = descriptors();
    let preview =
        "Deploy notes The deploy key AKIAZ3MHQ7XWPLBV4KTN was rotated today. Ёлки-палк...";
    for backend in ["socket", "cli"] {
        let (_gw, c) = session(backend, Redact::Off).await;
        assert_eq!(
            list(&c).await,
            listing(&[&lo, &pandoc, &picture], preview),
            "{backend}"
        );
    }
}
