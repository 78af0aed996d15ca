//! Items the owner pinned in CopyQ (its "Pin" command; the pinned-items plugin of `copyq-plugins`,
//! which Debian's `apt install copyq` brings): CopyQ keeps a pinned row where it is, refuses to
//! remove it, and puts an item inserted above it below it. An add or a move into a tab whose first
//! rows are pinned answers the row the item is at and says so in the audit log; a delete or move
//! of a pinned item is refused before anything changes. Before this, such an add was made but
//! answered `error|COPYQ_ERROR|CopyQ failed to answer` with no audit entry, a delete of a pinned
//! item said the same, and a move of one copied it and reported a partial move.
//! Each test has its own CopyQ.

use crate::support::*;
use copyq_mcp::store::{AuditEntry, Store};
use serde_json::{Value, json};

/// Pin row `row` of `tab`, as CopyQ's "Pin" command does.
fn pin(copyq: &PrivateCopyq, tab: &str, row: usize) {
    let script = format!(
        "tab(str(input())); change({row}, '{}', '')",
        copyq_mcp::backend::protocol::MIME_PINNED
    );
    copyq.eval(&script, tab.as_bytes()).expect("pin");
}

/// Whether row `row` of `tab` is pinned.
fn pinned(copyq: &PrivateCopyq, tab: &str, row: usize) -> bool {
    let script = format!(
        "tab(str(input())); print(getItem({row})['{}'] !== undefined)",
        copyq_mcp::backend::protocol::MIME_PINNED
    );
    copyq.eval(&script, tab.as_bytes()).expect("pinned?") == "true"
}

/// A private CopyQ whose `mcp/workspace/pins` holds `texts`, its first `k` rows pinned; with the
/// pinned-items plugin at work (a test that ran without it would prove nothing).
fn pinned_tab(texts: &[&str], k: usize) -> PrivateCopyq {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .seed("mcp/workspace/pins", &items(texts))
        .expect("seed");
    for row in 0..k {
        pin(&copyq, "mcp/workspace/pins", row);
    }
    plugin_at_work(&copyq);
    copyq
}

/// CopyQ's pinned-items plugin is at work: an item added above a pinned row goes below it.
fn plugin_at_work(copyq: &PrivateCopyq) {
    copyq
        .seed("scratch", &items(&["stays on top"]))
        .expect("seed");
    pin(copyq, "scratch", 0);
    let top = copyq
        .eval("tab('scratch'); add('added'); print(str(read(0)))", b"")
        .expect("plugin check");
    assert_eq!(
        top, "stays on top",
        "CopyQ's pinned-items plugin (Debian: copyq-plugins) is not at work"
    );
}

fn entries(gw: &Gateway) -> Vec<AuditEntry> {
    let store = Store::open(&gw.settings.data_dir()).expect("store");
    store.audit_since(0, 10_000).expect("audit")
}

async fn write(c: &Client, args: Value) -> (bool, String) {
    call(c, "mcp_write", args).await
}

#[tokio::test]
async fn an_add_lands_below_the_pinned_rows_and_says_where() {
    let copyq = pinned_tab(&["pinned one", "pinned two", "old"], 2);
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let got = ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/pins", "text": "new"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:add|tab:workspace/pins|full_path:mcp/workspace/pins|index:2|text_len:3|tags:0|note:False"
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/pins"),
        ["pinned one", "pinned two", "new", "old"]
    );
    assert!(pinned(&copyq, "mcp/workspace/pins", 0) && pinned(&copyq, "mcp/workspace/pins", 1));
    // Read back where the answer says.
    let item = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "workspace/pins", "index": 2}),
    )
    .await;
    assert_eq!(
        item,
        "mode:item|tab:workspace/pins|full_path:mcp/workspace/pins|index:2\ntext:new\ntags:[]"
    );
    // The audit log says it was made, and where.
    let adds: Vec<_> = entries(&gw)
        .into_iter()
        .filter(|e| e.mode == "add" && e.tab == "mcp/workspace/pins")
        .collect();
    assert_eq!(adds.len(), 1, "{adds:?}");
    assert_eq!(
        (
            adds[0].outcome.as_str(),
            adds[0].index,
            adds[0].note.as_str()
        ),
        (
            copyq_mcp::store::DONE,
            Some(2),
            "made at row 2, below the rows pinned at the top of the tab"
        )
    );
    // Adds made together (one group over the socket) each land below the pinned rows.
    let (x, y) = tokio::join!(
        ok(
            &c,
            "mcp_write",
            json!({"mode": "add", "tab": "workspace/pins", "text": "x"})
        ),
        ok(
            &c,
            "mcp_write",
            json!({"mode": "add", "tab": "workspace/pins", "text": "y"})
        ),
    );
    for got in [&x, &y] {
        assert!(got.contains("|index:2|"), "{got}");
    }
    let mut texts = tab_texts(&copyq, "mcp/workspace/pins");
    assert_eq!(texts[..2], ["pinned one", "pinned two"]);
    assert_eq!(texts[4..], ["new", "old"]);
    texts[2..4].sort();
    assert_eq!(texts[2..4], ["x", "y"]);
    // A tab whose first row is not pinned: row 0, as always (a pinned row further down stays).
    let got = ok(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/other", "text": "plain"}),
    )
    .await;
    assert!(got.contains("|index:0|"), "{got}");
}

#[tokio::test]
async fn a_pinned_item_is_not_deleted_nor_moved_and_nothing_changes() {
    let copyq = pinned_tab(&["pinned", "loose"], 1);
    copyq
        .seed("mcp/workspace/elsewhere", &items(&["there"]))
        .expect("seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let refusal = "error|COPYQ_ERROR|Item 0 of 'workspace/pins' is pinned in CopyQ, which does not \
                   let a pinned item be removed or moved; nothing was changed. The owner can unpin \
                   it in CopyQ";
    let (is_error, got) = write(
        &c,
        json!({"mode": "delete", "tab": "workspace/pins", "index": 0}),
    )
    .await;
    assert!(is_error, "{got}");
    assert_eq!(got, refusal);
    // mcp_validate and a preview say so too: the plan knows the item is pinned.
    let validated = ok(
        &c,
        "mcp_validate",
        json!({"tool": "write", "params": {"mode": "delete", "tab": "workspace/pins", "index": 0}}),
    )
    .await;
    assert_eq!(validated, format!("valid:false|errors:1\n{refusal}"));
    let (is_error, got) = write(
        &c,
        json!({"mode": "delete", "tab": "workspace/pins", "index": 0, "intent": "preview"}),
    )
    .await;
    assert!(is_error, "{got}");
    assert_eq!(got, refusal);
    let (is_error, got) = write(
        &c,
        json!({"mode": "move", "tab": "workspace/pins", "index": 0, "to_tab": "workspace/elsewhere"}),
    )
    .await;
    assert!(is_error, "{got}");
    assert_eq!(got, refusal);
    assert_eq!(tab_texts(&copyq, "mcp/workspace/pins"), ["pinned", "loose"]);
    assert!(pinned(&copyq, "mcp/workspace/pins", 0));
    assert_eq!(tab_texts(&copyq, "mcp/workspace/elsewhere"), ["there"]);
    // Refused before anything changed: no entry stays in the audit log.
    let left = entries(&gw);
    assert!(left.is_empty(), "{left:?}");
    // The item below it can go; the pinned one stays where it is.
    let got = ok(
        &c,
        "mcp_write",
        json!({"mode": "delete", "tab": "workspace/pins", "index": 1}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:delete|tab:workspace/pins|full_path:mcp/workspace/pins|index:1"
    );
    assert_eq!(tab_texts(&copyq, "mcp/workspace/pins"), ["pinned"]);
}

#[tokio::test]
async fn a_move_into_a_tab_with_pinned_rows_says_where_it_landed() {
    let copyq = pinned_tab(&["pinned", "old"], 1);
    copyq
        .seed("mcp/workspace/from", &items(&["mover", "stays"]))
        .expect("seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let got = ok(
        &c,
        "mcp_write",
        json!({"mode": "move", "tab": "workspace/from", "index": 0, "to_tab": "workspace/pins"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:move|from:mcp/workspace/from|to:mcp/workspace/pins|new_index:1"
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/pins"),
        ["pinned", "mover", "old"]
    );
    assert_eq!(tab_texts(&copyq, "mcp/workspace/from"), ["stays"]);
    let moves: Vec<_> = entries(&gw)
        .into_iter()
        .filter(|e| e.mode == "move")
        .collect();
    assert_eq!(moves.len(), 1, "{moves:?}");
    assert_eq!(
        (
            moves[0].outcome.as_str(),
            moves[0].index,
            moves[0].note.as_str()
        ),
        (
            copyq_mcp::store::DONE,
            Some(0),
            "moved to row 1 of the target, below the rows pinned at its top"
        )
    );
}

/// A tab of pinned items holding more than text (rich copies, kept whole by the audit entry) that
/// an agent deleted comes back whole and in its order with `audit restore`, unpinned. Restored
/// pinned, from the bottom up, CopyQ kept the first one restored in place above the next: the
/// order came back wrong and the restore failed halfway.
#[tokio::test]
async fn a_deleted_tab_of_pinned_rich_items_is_restored_in_order() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .eval(
            "tab('mcp/workspace/rich'); \
             write(0, 'text/plain', 'second', 'text/html', '<b>second</b>'); \
             write(0, 'text/plain', 'first', 'text/html', '<b>first</b>')",
            b"",
        )
        .expect("seed");
    pin(&copyq, "mcp/workspace/rich", 0);
    pin(&copyq, "mcp/workspace/rich", 1);
    plugin_at_work(&copyq);
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let got = ok(
        &c,
        "mcp_write",
        json!({"mode": "tab_delete", "path": "workspace/rich"}),
    )
    .await;
    assert!(got.contains("|items_removed:2"), "{got}");
    assert!(tab_texts(&copyq, "mcp/workspace/rich").is_empty());
    let id = entries(&gw)
        .into_iter()
        .find(|e| e.mode == "tab_delete")
        .expect("the tab deletion's entry")
        .id;
    let (restored, _, stderr) = owner(&gw, &["audit", "restore", &id.to_string()]);
    assert!(restored, "{stderr}");
    assert_eq!(tab_texts(&copyq, "mcp/workspace/rich"), ["first", "second"]);
    let html = copyq
        .eval(
            "tab('mcp/workspace/rich'); print(str(read('text/html', 0)) + '|' + str(read('text/html', 1)))",
            b"",
        )
        .expect("html");
    assert_eq!(html, "<b>first</b>|<b>second</b>");
    assert!(!pinned(&copyq, "mcp/workspace/rich", 0) && !pinned(&copyq, "mcp/workspace/rich", 1));
}

/// The backend's own guard, for an item pinned after the write was planned: a delete or move of
/// it is refused before anything changes (CopyQ would refuse the removal; a move would have
/// copied it to its target first), both backends.
#[tokio::test]
async fn the_backend_refuses_to_remove_an_item_pinned_after_the_plan() {
    use copyq_mcp::backend::{BackendError, Item, Prepared};
    let copyq = pinned_tab(&["pinned", "loose"], 1);
    let gw = gateway(&copyq).await;
    let backend = copyq_mcp::app::backend(&gw.settings).await;
    let item = Item::new("pinned", &[], "");
    let ready = copyq_mcp::backend::ready_now();
    let got = backend
        .remove("mcp/workspace/pins", 0, &item, (Prepared::none(), ready))
        .await;
    assert!(matches!(got, Err(BackendError::Pinned)), "{got:?}");
    let got = backend
        .move_item(
            "mcp/workspace/pins",
            0,
            &item,
            "mcp/workspace/target",
            200,
            Prepared::none(),
        )
        .await;
    assert!(matches!(got, Err(BackendError::Pinned)), "{got:?}");
    assert_eq!(tab_texts(&copyq, "mcp/workspace/pins"), ["pinned", "loose"]);
    assert!(pinned(&copyq, "mcp/workspace/pins", 0));
    assert!(tab_texts(&copyq, "mcp/workspace/target").is_empty());
}
