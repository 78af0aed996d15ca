//! Secret redaction against a real CopyQ through a real MCP client: what `[privacy] redact`
//! masks in `list`, `item`, `tree`, `search` and `mcp_validate`, per mode, on both backends; and
//! items a password manager put in CopyQ (`x-kde-passwordManagerHint: secret`) never shown.

mod reads;
mod unseen;
mod writes;

use std::sync::Once;

use crate::support::*;
use copyq_mcp::privacy::Redact;
use serde_json::json;

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

const KEY: &str = "AKIAZ3MHQ7XWPLBV4KTN";
const CARD: &str = "4111 1111 1111 1111";
const MASKED: &str = "aws [redacted:aws-access-token] and card [redacted:card]";

fn seeded() -> &'static PrivateCopyq {
    static SEED: Once = Once::new();
    let c = copyq();
    SEED.call_once(|| {
        let text = format!("aws {KEY} and card {CARD}");
        c.seed("mcp/info", &[Item::new(&text, &[], "")])
            .expect("seed managed");
        c.seed(
            "clip",
            &[
                Item::new(&text, &["t"], &format!("note {KEY}")),
                Item::new("plain text, nothing secret", &[], ""),
            ],
        )
        .expect("seed external");
        // What KeePassXC and other password managers put on the clipboard, written as CopyQ
        // itself would store it: the text and the hint, in row 0.
        let out = c
            .command()
            .args(["tab", "clip", "write", "0", "text/plain", "hunter2"])
            .args(["x-kde-passwordManagerHint", "secret"])
            .output()
            .expect("copyq write");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    c
}

async fn session(mode: Redact, backend: &str) -> (Gateway, Client) {
    let backend = copyq_mcp::config::BackendKind::parse(backend).expect("socket or cli");
    let gw = gateway_with(seeded(), |s| {
        s.privacy.redact = mode;
        s.copyq.backend = backend;
    })
    .await;
    let c = client(&gw.url, &gw.read).await;
    (gw, c)
}

const BACKENDS: [&str; 2] = ["socket", "cli"];

#[tokio::test]
async fn external_mode_masks_external_tabs_only() {
    for backend in BACKENDS {
        let (_gw, c) = session(Redact::External, backend).await;
        let list = ok(
            &c,
            "mcp_read",
            json!({"mode": "list", "tab": "clip", "scope": "external", "include_note": true}),
        )
        .await;
        assert_eq!(
            list,
            format!(
                "mode:list|tab:clip|scope:external|total:3|showing:0-2\n\
                 0|\"[redacted:password-manager]\"|[]\n\
                 1|\"{MASKED}\"|[t]|note:note [redacted:aws-access-token]\n\
                 2|\"plain text, nothing secret\"|[]"
            ),
            "{backend}"
        );
        let item = ok(&c, "mcp_read", json!({"mode": "item", "tab": "clip", "scope": "external", "index": 1, "include_note": true})).await;
        assert_eq!(
            item,
            format!(
                "mode:item|tab:clip|scope:external|index:1\ntext:{MASKED}\ntags:[t]\nnote:note [redacted:aws-access-token]"
            ),
            "{backend}"
        );
        let tree = ok(&c, "mcp_read", json!({"mode": "tree", "scope": "all"})).await;
        assert!(
            tree.contains(&format!("0:|\"aws {KEY} and card {CARD}\"|[]")),
            "{backend}: {tree}"
        );
        assert!(
            tree.contains(&format!("1:|\"{MASKED}\"|[t]|+note")),
            "{backend}: {tree}"
        );
        // A query cannot find what is masked: the key is found in the managed tab only.
        let probe = ok(
            &c,
            "mcp_read",
            json!({"mode": "search", "query": "AKIAZ|4111|hunter", "scope": "all"}),
        )
        .await;
        assert_eq!(
            probe,
            format!(
                "mode:search|query:AKIAZ|4111|hunter|scope:all|results:1\ninfo[0]|\"aws {KEY} and card {CARD}\"|[]|match:text"
            ),
            "{backend}"
        );
        let valid = ok(&c, "mcp_validate", json!({"tool": "read", "params": {"mode": "item", "tab": "clip", "scope": "external", "index": 0}})).await;
        // 83 bytes: `mode:item|tab:clip|scope:external|index:0\ntext:[redacted:password-manager]\ntags:[]`.
        assert_eq!(
            valid, "valid:true|warnings:0|estimated_tokens:21",
            "{backend}"
        );
    }
}

#[tokio::test]
async fn all_mode_masks_managed_tabs_too() {
    for backend in BACKENDS {
        let (gw, c) = session(Redact::All, backend).await;
        // This suite's other tests seed and write tabs of their own in the same CopyQ meanwhile
        // (AWS keys among them, whose masks `access-token` matches): the searches of every tab
        // go through a token covering only the two tabs `seeded` made.
        let own = client(
            &gw.url,
            &token_covering(&gw, Role::Read, &["mcp/info", "clip"]),
        )
        .await;
        let item = ok(
            &c,
            "mcp_read",
            json!({"mode": "item", "tab": "info", "index": 0}),
        )
        .await;
        assert_eq!(
            item,
            format!("mode:item|tab:info|full_path:mcp/info|index:0\ntext:{MASKED}\ntags:[]"),
            "{backend}"
        );
        let probe = ok(
            &c,
            "mcp_read",
            json!({"mode": "search", "query": "AKIAZ", "scope": "all"}),
        )
        .await;
        assert_eq!(
            probe, "mode:search|query:AKIAZ|scope:all|results:0",
            "{backend}"
        );
        // The same hits whichever way a search goes: `and card` cannot match a mask, so only
        // the items it matches as read are masked, then matched again; `access-token` matches a
        // mask's text, so every item is masked before it is matched; `3MHQ and card` matches the
        // raw texts only, across the key.
        for (query, hits) in [
            ("and card", 2),
            ("access-token\\] and", 2),
            ("3MHQ7XWPLBV4KTN and card", 0),
        ] {
            let found = ok(
                &own,
                "mcp_read",
                json!({"mode": "search", "query": query, "scope": "all"}),
            )
            .await;
            let header = format!("mode:search|query:{query}|scope:all|results:{hits}");
            let lines = [
                format!("info[0]|\"{MASKED}\"|[]|match:text"),
                format!("clip[1]|\"{MASKED}\"|[t]|match:text|external"),
            ];
            let want = std::iter::once(header)
                .chain(lines.into_iter().take(hits))
                .collect::<Vec<_>>()
                .join("\n");
            assert_eq!(found, want, "{backend}: {query}");
        }
        // Words of the kinds a mask shows: `access-token` matches no raw text, only the key's
        // mask, which a text gains only if it holds a keyword of the AWS rule (`AKIA`): those
        // items are masked before the search replies, the rest after. `password` matches the
        // password manager's item, hidden whatever it holds.
        for (query, want) in [
            (
                "access-token",
                vec![
                    format!("info[0]|\"{MASKED}\"|[]|match:text"),
                    format!("clip[1]|\"{MASKED}\"|[t]|match:text,note|external"),
                ],
            ),
            (
                "password",
                vec!["clip[0]|\"[redacted:password-manager]\"|[]|match:text|external".to_owned()],
            ),
        ] {
            for round in ["first", "again"] {
                let found = ok(
                    &own,
                    "mcp_read",
                    json!({"mode": "search", "query": query, "scope": "all"}),
                )
                .await;
                let header = format!("mode:search|query:{query}|scope:all|results:{}", want.len());
                let want = std::iter::once(header)
                    .chain(want.iter().cloned())
                    .collect::<Vec<_>>()
                    .join("\n");
                assert_eq!(found, want, "{backend}: {query}, {round}");
            }
        }
        let list = ok(
            &c,
            "mcp_read",
            json!({"mode": "list", "tab": "clip", "scope": "external"}),
        )
        .await;
        assert!(
            list.contains(&format!("1|\"{MASKED}\"|[t]|+note")),
            "{backend}: {list}"
        );
    }
}

#[tokio::test]
async fn off_mode_masks_nothing_but_a_password_managers_items() {
    for backend in BACKENDS {
        let (_gw, c) = session(Redact::Off, backend).await;
        let list = ok(
            &c,
            "mcp_read",
            json!({"mode": "list", "tab": "clip", "scope": "external"}),
        )
        .await;
        assert_eq!(
            list,
            format!(
                "mode:list|tab:clip|scope:external|total:3|showing:0-2\n\
                 0|\"[redacted:password-manager]\"|[]\n\
                 1|\"aws {KEY} and card {CARD}\"|[t]|+note\n\
                 2|\"plain text, nothing secret\"|[]"
            ),
            "{backend}"
        );
        let pw = ok(
            &c,
            "mcp_read",
            json!({"mode": "search", "query": "hunter", "scope": "external"}),
        )
        .await;
        assert_eq!(
            pw, "mode:search|query:hunter|scope:external|results:0",
            "{backend}"
        );
    }
}
