//! The audit log: every executed write is recorded with its token's subject and role and sizes (no
//! new content), refused writes are not, and a delete, overwrite or tab deletion can be undone with
//! one command.

use crate::support::*;
use serde_json::json;

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

fn texts(tab: &str) -> Vec<String> {
    tab_texts(copyq(), tab)
}

/// The id of the newest audit entry whose line contains `needle`.
fn entry_id(listing: &str, needle: &str) -> String {
    let line = listing
        .lines()
        .rev()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no entry with {needle}: {listing}"));
    line.trim_start_matches('#')
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_write_is_audited_and_can_be_undone() {
    let gw = gateway(copyq()).await;
    let c = client(&gw.url, &gw.write).await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/audit", "text": "first", "tags": ["a"]}),
    )
    .await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/audit", "text": "second secret"}),
    )
    .await;
    ok(&c, "mcp_write", json!({"mode": "update", "tab": "workspace/audit", "index": 1, "field": "text", "text": "overwritten"})).await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "delete", "tab": "workspace/audit", "index": 0}),
    )
    .await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/audit-gone/sub", "text": "s1"}),
    )
    .await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/audit-gone/sub", "text": "s0"}),
    )
    .await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "tab_delete", "path": "workspace/audit-gone/sub"}),
    )
    .await;
    err(
        &c,
        "mcp_write",
        json!({"mode": "delete", "tab": "workspace/audit", "index": 99}),
    )
    .await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "delete", "tab": "workspace/audit", "index": 0, "intent": "preview"}),
    )
    .await;
    assert_eq!(texts("mcp/workspace/audit"), ["overwritten"]);

    let (ok_, listing, stderr) = owner(&gw, &["audit", "--since", "1h"]);
    assert!(ok_, "{stderr}");
    let mine: Vec<&str> = listing
        .lines()
        .filter(|l| l.contains("workspace/audit"))
        .collect();
    assert_eq!(
        mine.len(),
        7,
        "7 executed writes, no refused or previewed ones:\n{listing}"
    );
    assert!(
        mine.iter().all(|l| l.contains("test-write (write)")),
        "{listing}"
    );
    assert!(
        mine[0].contains("add") && mine[0].contains("text_len:5|tags:1|note_len:0"),
        "{listing}"
    );
    assert!(
        !listing.contains("second secret") && !listing.contains("overwritten"),
        "no clipboard content in the listing"
    );

    // Undo the delete, the overwrite and the tab deletion.
    let delete = entry_id(&listing, "delete     mcp/workspace/audit[0]");
    let (ok_, _, stderr) = owner(&gw, &["audit", "restore", &delete]);
    assert!(ok_, "{stderr}");
    assert_eq!(
        texts("mcp/workspace/audit"),
        ["second secret", "overwritten"],
        "the deleted item is back on top"
    );
    let update = entry_id(&listing, "update");
    assert!(owner(&gw, &["audit", "restore", &update]).0);
    assert_eq!(
        texts("mcp/workspace/audit"),
        ["first", "second secret", "overwritten"],
        "the overwritten text is back"
    );
    let tab_delete = entry_id(&listing, "tab_delete");
    assert!(owner(&gw, &["audit", "restore", &tab_delete]).0);
    assert_eq!(
        texts("mcp/workspace/audit-gone/sub"),
        ["s0", "s1"],
        "the tab is back in its order"
    );
    let add = entry_id(&listing, "add ");
    let (ok_, _, stderr) = owner(&gw, &["audit", "restore", &add]);
    assert!(!ok_ && stderr.contains("nothing to restore"), "{stderr}");
    let (_, listing, _) = owner(&gw, &["audit"]);
    assert_eq!(
        listing
            .lines()
            .filter(|l| l.contains("owner (write)  restore"))
            .count(),
        3,
        "{listing}"
    );
}

/// A move and a tab creation are writes too: each leaves its entry (tab, target, index). Its
/// tabs do not contain `workspace/audit`, which the test above counts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn moves_and_tab_creations_are_audited() {
    let gw = gateway(copyq()).await;
    let c = client(&gw.url, &gw.write).await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/mv-audited-a", "text": "to move"}),
    )
    .await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "move", "tab": "workspace/mv-audited-a", "index": 0, "to_tab": "workspace/mv-audited-b"}),
    )
    .await;
    ok(
        &c,
        "mcp_write",
        json!({"mode": "tab_create", "path": "workspace/created-audited"}),
    )
    .await;
    let store = copyq_mcp::store::Store::open(&gw.settings.data_dir()).expect("store");
    let entries = store.audit_since(0, 10_000).expect("audit");
    let moved: Vec<_> = entries
        .iter()
        .filter(|e| e.mode == "move" && e.tab == "mcp/workspace/mv-audited-a")
        .collect();
    assert_eq!(moved.len(), 1, "{entries:?}");
    assert_eq!(
        (moved[0].to_tab.as_deref(), moved[0].index),
        (Some("mcp/workspace/mv-audited-b"), Some(0))
    );
    assert_eq!(
        entries
            .iter()
            .filter(|e| e.mode == "tab_create" && e.tab == "mcp/workspace/created-audited")
            .count(),
        1,
        "{entries:?}"
    );
    assert_eq!(texts("mcp/workspace/mv-audited-b"), ["to move"]);
}
