//! Writes that fail halfway, and reads that race writes, against a real CopyQ with faults injected
//! at one exact step (tests/support/proxy.rs): what changed is said and audited, CopyQ's save
//! delays are put back whatever happens to the request, and a whole-tab read re-read row by row
//! reads the tab as it is now.

mod delays;
mod stderr;

use crate::support::proxy::{Fault, Proxy, eval_later, utf16, write_racing_an_add};
use crate::support::*;
use serde_json::json;

/// This suite's own private CopyQ, started on first use (its tests pause and stop it).
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

/// A search reads whole tabs through selections; a tab CopyQ unloads meanwhile comes back short and
/// is read again row by row. An item added in between must not push the oldest row out of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_tab_read_again_reads_the_tab_as_it_is_now() {
    let copyq = copyq();
    copyq
        .seed("mcp/workspace/fb", &items(&["newer", "older", "oldest-fb"]))
        .expect("seed");
    let add = eval_later(copyq, "tab('mcp/workspace/fb'); add('added meanwhile')");
    let proxy = Proxy::start(copyq, &[b"createSelection"], 1, Fault::Run(Box::new(add)));
    let gw = gateway_with(copyq, |s| proxy.configure(s)).await;
    let c = client(&gw.url, &gw.read).await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "oldest-fb", "scope": "all"}),
    )
    .await;
    assert!(proxy.fired(), "the read used no selection");
    assert_eq!(
        got,
        "mode:search|query:oldest-fb|scope:all|results:1\nworkspace/fb[3]|\"oldest-fb\"|[]|match:text"
    );
}

/// An item added in CopyQ between the plan of an index-addressed write and the write itself moves
/// the planned item down: the write's own check of the row sees another item there and refuses,
/// so no other item is updated, deleted or moved. The proxy adds the item when the gateway asks
/// the tab's length the second time (the plan asked first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_item_that_moved_after_the_plan_is_not_written() {
    let copyq = copyq();
    let cases = [
        (
            "cf-update",
            json!({"mode": "update", "tab": "workspace/cf-update", "index": 0, "field": "text", "text": "updated"}),
        ),
        (
            "cf-delete",
            json!({"mode": "delete", "tab": "workspace/cf-delete", "index": 0}),
        ),
        (
            "cf-move",
            json!({"mode": "move", "tab": "workspace/cf-move", "index": 0, "to_tab": "workspace/cf-target"}),
        ),
    ];
    for (name, write) in cases {
        let tab = format!("mcp/workspace/{name}");
        copyq
            .seed(&tab, &items(&["planned", "older"]))
            .expect("seed");
        let got = write_racing_an_add(copyq, &tab, "added meanwhile", write, 2).await;
        assert_eq!(
            got,
            format!(
                "error|COPYQ_ERROR|Item 0 of 'workspace/{name}' changed in CopyQ while this write was being made; \
                 nothing was changed. Read it again and retry"
            )
        );
        assert_eq!(
            tab_texts(copyq, &tab),
            ["added meanwhile", "planned", "older"],
            "{name}"
        );
    }
    assert_eq!(
        tab_texts(copyq, "mcp/workspace/cf-target"),
        Vec::<String>::new()
    );
}

/// A move whose removal from the source fails (CopyQ gone at that call) has put the item in its
/// target: the reply says so, the audit log keeps the entry as partial, and `audit restore` removes
/// the copy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_left_in_both_tabs_is_partial_audited_and_restorable() {
    let copyq = copyq();
    copyq
        .seed("mcp/workspace/mv-src", &items(&["stays", "moving"]))
        .expect("seed");
    copyq
        .seed("mcp/workspace/mv-dst", &items(&["there"]))
        .expect("seed");
    let proxy = Proxy::start(
        copyq,
        &[b"browserRemoveRows", &utf16("mcp/workspace/mv-src")],
        1,
        Fault::Close,
    );
    let gw = gateway_with(copyq, |s| proxy.configure(s)).await;
    let c = client(&gw.url, &gw.write).await;
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "move", "tab": "workspace/mv-src", "index": 1, "to_tab": "workspace/mv-dst"}),
    )
    .await;
    assert!(proxy.fired());
    let start = "error|COPYQ_ERROR|This move was partly made: the item was copied to 'workspace/mv-dst' but not \
                 removed from 'workspace/mv-src' (";
    assert!(got.starts_with(start), "{got}");
    let end = "), so it is in both tabs now. The audit log keeps it as entry #";
    let id = got
        .split_once(end)
        .and_then(|(_, rest)| rest.strip_suffix(", marked partial"))
        .unwrap_or_else(|| panic!("{got}"))
        .to_owned();
    assert_eq!(
        tab_texts(copyq, "mcp/workspace/mv-src"),
        ["stays", "moving"]
    );
    assert_eq!(
        tab_texts(copyq, "mcp/workspace/mv-dst"),
        ["moving", "there"]
    );
    let (ok_, listing, stderr) = owner(&gw, &["audit"]);
    assert!(ok_, "{stderr}");
    let line = listing
        .lines()
        .find(|l| l.starts_with(&format!("#{id} ")))
        .unwrap_or_else(|| panic!("no entry #{id}: {listing}"));
    assert!(
        line.contains("move       mcp/workspace/mv-src[1] -> mcp/workspace/mv-dst")
            && line.contains("  PARTIAL: copied to the target, not removed from the source: ")
            && line.ends_with("restorable: 1 item(s)"),
        "{line}"
    );
    let (ok_, _, stderr) = owner(&gw, &["audit", "restore", &id]);
    assert!(ok_, "{stderr}");
    assert_eq!(tab_texts(copyq, "mcp/workspace/mv-dst"), ["there"]);
    assert_eq!(
        tab_texts(copyq, "mcp/workspace/mv-src"),
        ["stays", "moving"]
    );
}

/// A write whose save afterwards fails (CopyQ gone at the unload that saves it) was made: the reply
/// says so and the audit log keeps it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_whose_save_fails_is_partial_and_audited() {
    let copyq = copyq();
    copyq
        .seed("mcp/workspace/unsaved", &items(&["old"]))
        .expect("seed");
    let proxy = Proxy::start(
        copyq,
        &[b"unloadTabs", &utf16("mcp/workspace/unsaved")],
        2,
        Fault::Close,
    );
    // Its own database: the test reads it while the other tests' gateways use theirs.
    let data = tempfile::tempdir().expect("data dir");
    let gw = gateway_with(copyq, |s| {
        proxy.configure(s);
        s.data_dir = data.path().display().to_string();
    })
    .await;
    let c = client(&gw.url, &gw.write).await;
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/unsaved", "text": "made"}),
    )
    .await;
    assert!(proxy.fired());
    let start = "error|COPYQ_ERROR|This write was made in 'workspace/unsaved', but a step after it failed (";
    let end = "): CopyQ may not have saved it yet, or may keep its save delays at 0. The audit log keeps it as entry #";
    assert!(got.starts_with(start) && got.contains(end), "{got}");
    assert_eq!(tab_texts(copyq, "mcp/workspace/unsaved"), ["made", "old"]);
    let store = copyq_mcp::store::Store::open(&gw.settings.data_dir()).expect("store");
    let entries = store.audit_since(0, 100).expect("audit");
    let entry = entries
        .iter()
        .find(|e| e.tab == "mcp/workspace/unsaved")
        .expect("the entry is kept");
    assert_eq!(entry.outcome, "partial");
    assert!(
        entry
            .note
            .starts_with("made, then a step saving it failed: "),
        "{}",
        entry.note
    );
}
