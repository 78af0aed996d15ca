//! What a read token sees under the default mode: a listing masks first and cuts after (a cut
//! never leaves part of a secret in view), and external tabs' names are masked like text.

use serde_json::json;

use super::{BACKENDS, session};
use copyq_mcp::privacy::Redact;

use super::copyq;
use crate::support::*;

/// A private key block of `len` characters.
fn private_key(len: usize) -> String {
    let head = "-----BEGIN RSA PRIVATE KEY-----\n";
    let foot = "\n-----END RSA PRIVATE KEY-----";
    let body: String = "MIIEpAIBAAKCAQEAx4Gd"
        .chars()
        .cycle()
        .take(len - head.len() - foot.len())
        .collect();
    format!("{head}{body}{foot}")
}

#[tokio::test]
async fn a_listing_masks_before_it_cuts() {
    // A tree's read is cut at 320 UTF-16 units, a masked tab's listing at 4,096: each text's key
    // after the private block straddles one of the cuts.
    let key = "AKIAQYLPMN5HTIQR7WDG";
    for (tab, len, at) in [("masks-cut", 305, 310), ("masks-cut-long", 4_081, 4_086)] {
        let text = format!("{} key {key} and more text", private_key(len));
        assert_eq!(text.find(key), Some(at));
        copyq()
            .seed(tab, &[Item::new(&text, &[], "")])
            .expect("seed");
        let shown = "\"[redacted:private-key] key [redacted:aws-access-token] and more text\"";
        for backend in BACKENDS {
            let (_gw, c) = session(Redact::External, backend).await;
            let list = ok(
                &c,
                "mcp_read",
                json!({"mode": "list", "tab": tab, "scope": "external"}),
            )
            .await;
            assert_eq!(
                list,
                format!("mode:list|tab:{tab}|scope:external|total:1|showing:0-0\n0|{shown}|[]"),
                "{backend}"
            );
            let tree = ok(&c, "mcp_read", json!({"mode": "tree", "scope": "external"})).await;
            assert!(
                tree.contains(&format!("{tab} [1] [external]\n0:|{shown}|[]")),
                "{backend}: {tree}"
            );
            assert!(!tree.contains("AKIAQ"), "{backend}: {tree}");
        }
    }
}

/// Only the rows whose previews a mask made unsure are read again whole (by their row in the
/// tab, past `skip`); the other rows keep the first read's cut.
#[tokio::test]
async fn a_listing_reads_again_only_the_rows_it_must() {
    let key = "AKIAQYLPMN5HTIQR7WDG";
    // Past the 4,096 UTF-16 units a masked tab's listing reads, as a preview's 320 would be.
    let keyed = |n: usize| format!("{} key {key} and more {n}", private_key(4_081));
    let long = format!("plain {}", "words ".repeat(80));
    copyq()
        .seed(
            "masks-rows",
            &items(&["zero", "one", &keyed(2), &long, &keyed(4), "five"]),
        )
        .expect("seed");
    let shown = |n: usize| {
        format!("\"[redacted:private-key] key [redacted:aws-access-token] and more {n}\"")
    };
    // The preview of an unmasked cut text: its first 77 characters and an ellipsis.
    let preview = format!("{}...", &long[..77]);
    for backend in BACKENDS {
        let (_gw, c) = session(Redact::External, backend).await;
        let list = ok(
            &c,
            "mcp_read",
            json!({"mode": "list", "tab": "masks-rows", "scope": "external", "skip": 1, "max_items": 4}),
        )
        .await;
        assert_eq!(
            list,
            format!(
                "mode:list|tab:masks-rows|scope:external|total:6|showing:1-4\n1|\"one\"|[]\n2|{}|[]\n3|\"{}\"|[]\n4|{}|[]",
                shown(2),
                preview,
                shown(4)
            ),
            "{backend}"
        );
    }
}

#[tokio::test]
async fn an_external_tab_named_after_a_token_is_masked_and_cannot_be_named() {
    let token = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R";
    copyq()
        .seed(token, &items(&["in a tab named after a token"]))
        .expect("seed");
    for backend in BACKENDS {
        let (_gw, c) = session(Redact::External, backend).await;
        let tree = ok(&c, "mcp_read", json!({"mode": "tree", "scope": "external"})).await;
        assert!(
            tree.contains(
                "[redacted:github-pat] [1] [external]\n0:|\"in a tab named after a token\"|[]"
            ),
            "{backend}: {tree}"
        );
        let hits = ok(
            &c,
            "mcp_read",
            json!({"mode": "search", "query": "named after a token", "scope": "all"}),
        )
        .await;
        assert_eq!(
            hits,
            "mode:search|query:named after a token|scope:all|results:1\n\
             [redacted:github-pat][0]|\"in a tab named after a token\"|[]|match:text|external",
            "{backend}"
        );
        for mode in ["list", "item"] {
            let got = err(
                &c,
                "mcp_read",
                json!({"mode": mode, "tab": token, "scope": "external", "index": 0}),
            )
            .await;
            assert_eq!(
                got,
                format!("error|TAB_NOT_FOUND|Tab not found: {token}"),
                "{backend}"
            );
        }
        assert!(!tree.contains("ghp_"), "{backend}: {tree}");
    }
}

/// A search whose pattern may match across a mask's edge (`\S` holds the brackets), asked through
/// the literals its matches hold: a secret after `key=` is a hit, masked; a password that gains
/// `[redacted:password]` is a hit of `redacted:\S+`, though its raw text holds no such literal
/// (its rule's gate, `-p`, opens); a search for the raw password finds nothing; the raw secret
/// never shows.
#[tokio::test]
async fn a_search_across_a_masks_edge_finds_its_hits_masked() {
    let token = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R";
    copyq()
        .seed(
            "edges",
            &items(&[
                &format!("api_key={token}"),
                "mysql -u root -pS3cr3tPw1 app",
                "no such word here",
                "KEY=plain",
            ]),
        )
        .expect("seed");
    for backend in BACKENDS {
        let (_gw, c) = session(Redact::External, backend).await;
        // This tab's hits (other tests' external tabs hold secrets too).
        let search = async |query: &str| {
            let got = ok(
                &c,
                "mcp_read",
                json!({"mode": "search", "query": query, "scope": "external"}),
            )
            .await;
            let edges: Vec<&str> = got.lines().filter(|l| l.starts_with("edges[")).collect();
            (edges.join("\n"), got)
        };
        let (got, _) = search("key=\\S+").await;
        assert_eq!(
            got,
            "edges[0]|\"api_key=[redacted:github-pat]\"|[]|match:text|external\n\
             edges[3]|\"KEY=plain\"|[]|match:text|external",
            "{backend}"
        );
        let (got, whole) = search("redacted:\\S+").await;
        assert_eq!(
            got,
            "edges[0]|\"api_key=[redacted:github-pat]\"|[]|match:text|external\n\
             edges[1]|\"mysql -u root -p[redacted:password] app\"|[]|match:text|external",
            "{backend}"
        );
        assert!(
            !whole.contains("S3cr3t") && !whole.contains("ghp_"),
            "{backend}: {whole}"
        );
        // A search for the raw password, inside any text: held as read, gone once masked.
        let (got, whole) = search(".*s3cr3t.*").await;
        assert_eq!(got, "", "{backend}: {whole}");
        assert!(!whole.contains("S3cr3t"), "{backend}: {whole}");
    }
}
