//! The add tool's groups over the socket backend, against the stand-in server: what an add asks
//! of CopyQ, and a look-alike tab refused by the group's own tab list.

use std::sync::{Arc, PoisonError};

use serde_json::{Map, Value, json};

use crate::auth::{Principal, Role};
use crate::backend::socket::stand_in::tests::started;
use crate::backend::{Backend, Item};
use crate::clipboard::Roots;
use crate::mcp::ToolState;

pub(super) fn owner() -> Principal {
    Principal {
        subject: "test".into(),
        role: Role::Write,
        token_id: "j".into(),
        grant: None,
        tabs: Default::default(),
        expires: None,
    }
}

async fn add(tools: &Arc<ToolState>, tab: &str, text: &str) -> String {
    let args: Map<String, Value> = json!({"mode": "add", "tab": tab, "text": text})
        .as_object()
        .cloned()
        .unwrap_or_default();
    match super::call(tools, &owner(), &args).await {
        Ok(reply) => reply,
        Err(e) => e.line(),
    }
}

/// An add asks CopyQ for the tab list twice: the group's, under the write lock (the tab's name
/// and room checked there), and the insert's verify (it landed in a tab of that name). Its plan
/// asks nothing once `maxitems` is known: the plan's own tab list was a round trip of four,
/// older than the group's by the time the group wrote (issue 22, stop 53).
#[tokio::test]
async fn an_add_asks_for_the_tab_list_in_its_group_and_its_verify_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (backend, _server, layout, model) = started(&dir).await;
    layout.expect("the stand-in answers");
    let tools = Arc::new(ToolState::new(Backend::Socket(backend), Roots::default()));
    let lists = || {
        model
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tab_lists()
    };
    // The first into a new tab, the others into it.
    for text in ["one", "two", "three"] {
        let before = lists();
        let got = add(&tools, "workspace/a", text).await;
        assert!(got.starts_with("ok|mode:add|tab:workspace/a|"), "{got}");
        assert_eq!(lists() - before, 2, "add {text}");
    }
    let texts = model
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .to_json();
    assert_eq!(
        texts["tabs"][0]["items"],
        json!(["three", "two", "one"]),
        "{texts}"
    );
}

/// A look-alike tab (`&mcp/...`, which CopyQ would take for a missing `mcp/...`) is found by the
/// group's tab list: that add is refused, naming it, with nothing written anywhere; an add of the
/// same group to another tab is made.
#[tokio::test]
async fn a_group_refuses_an_add_copyq_would_make_in_a_look_alike_tab() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (backend, _server, layout, model) = started(&dir).await;
    layout.expect("the stand-in answers");
    backend
        .insert("&mcp/workspace/kh", &Item::new("owner's", &[], ""), 200)
        .await
        .expect("seed");
    let tools = Arc::new(ToolState::new(Backend::Socket(backend), Roots::default()));
    // Both queued before their group's leader takes the write lock (held here), so one group.
    let held = tools.writes.clone().write_owned().await;
    let (refused, made, ()) = tokio::join!(
        add(&tools, "workspace/kh", "x"),
        add(&tools, "workspace/other", "y"),
        async {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            drop(held);
        }
    );
    assert_eq!(
        refused,
        "error|PERMISSION_DENIED|Tab 'workspace/kh' does not exist, and CopyQ would write to its existing tab \
         '&mcp/workspace/kh' instead (CopyQ ignores '&' in tab names); nothing was changed. Rename that tab or \
         use another name"
    );
    assert!(
        made.starts_with("ok|mode:add|tab:workspace/other|"),
        "{made}"
    );
    let texts = model
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .to_json();
    assert_eq!(
        texts,
        json!({"tabs": [
            {"name": "&mcp/workspace/kh", "items": ["owner's"]},
            {"name": "mcp/workspace/other", "items": ["y"]},
        ]})
    );
}

pub(super) async fn write(tools: &Arc<ToolState>, args: Value) -> String {
    let args = args.as_object().cloned().unwrap_or_default();
    match super::call(tools, &owner(), &args).await {
        Ok(reply) => reply,
        Err(e) => e.line(),
    }
}

fn update(index: usize, text: &str) -> Value {
    json!({"mode": "update", "tab": "workspace/u", "index": index, "field": "text",
           "edit_mode": "replace", "text": text})
}

/// An update makes three round trips: the plan's read (the tab list, the unload and the row), the
/// check (the tab list and the row: the plan just listed the tab), and the change with its
/// verify and the unload after. Each tab list was a round trip of its own before (five, issue
/// 22, stop 60). A delete makes four: its removal goes alone, its verify (the tab's length) with
/// the unload after (an `onItemsRemoved()` script of CopyQ's served the unload sent with it
/// first, stop 56); and with an audit log, a row of text, tags and note alone is not read again
/// for its entry (it was: two round trips more, eight in all).
#[tokio::test]
async fn an_update_makes_three_round_trips_and_a_delete_four() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (backend, _server, layout, model) = started(&dir).await;
    layout.expect("the stand-in answers");
    let trips = backend.clone();
    let data = tempfile::tempdir().expect("data dir");
    let store = Arc::new(crate::store::Store::open(data.path()).expect("store"));
    let tools = Arc::new(
        ToolState::new(Backend::Socket(backend), Roots::default()).with_audit(store.clone()),
    );
    for text in ["a", "b", "c"] {
        add(&tools, "workspace/u", text).await;
    }
    let loads = || model.lock().unwrap_or_else(PoisonError::into_inner).loads();
    let (before, loaded) = (trips.round_trips(), loads());
    let got = write(&tools, update(1, "B")).await;
    assert_eq!(
        got,
        "ok|mode:update|tab:workspace/u|full_path:mcp/workspace/u|index:1|field:text"
    );
    assert_eq!(trips.round_trips() - before, 3, "an update's round trips");
    // The tab is loaded once, by the plan's read, for the check and the change too.
    assert_eq!(loads() - loaded, 1, "loads of the tab by an update");
    let before = trips.round_trips();
    let got = write(
        &tools,
        json!({"mode": "delete", "tab": "workspace/u", "index": 0}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:delete|tab:workspace/u|full_path:mcp/workspace/u|index:0"
    );
    assert_eq!(trips.round_trips() - before, 4, "a delete's round trips");
    let texts = model
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .to_json();
    assert_eq!(texts["tabs"][0]["items"], json!(["B", "a"]), "{texts}");
    // The delete's entry keeps the item it removed, whole: a restore puts back "c".
    let entries = store.audit_since(0, 100).expect("audit");
    let deleted = entries.last().expect("the delete's entry");
    assert_eq!(deleted.mode, "delete");
    assert_eq!(
        deleted.previous[0].1,
        [crate::backend::Item::new("c", &[], "")]
    );
}

/// An update's check of its row goes to CopyQ while its audit entry is being recorded (the
/// sync to disk and CopyQ's work overlap, as an add group's do), and nothing changes before the
/// entry is on disk: with the audit log locked, the check is made and the item is as it was;
/// once the lock is gone, the update is made and recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_updates_check_overlaps_its_audit_entry_and_nothing_changes_before_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (backend, _server, layout, model) = started(&dir).await;
    layout.expect("the stand-in answers");
    let data = tempfile::tempdir().expect("data dir");
    let store = Arc::new(crate::store::Store::open(data.path()).expect("store"));
    let tools = Arc::new(
        ToolState::new(Backend::Socket(backend), Roots::default()).with_audit(store.clone()),
    );
    add(&tools, "workspace/u", "a").await;
    let recorded = store.audit_since(0, 100).expect("audit").len();
    let lists = || {
        model
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .tab_lists()
    };
    let items = || {
        model
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .to_json()["tabs"][0]["items"]
            .clone()
    };
    let db = rusqlite::Connection::open(data.path().join(crate::store::FILE)).expect("db");
    db.execute_batch("BEGIN EXCLUSIVE").expect("lock");
    let before = lists();
    let updating = tokio::spawn({
        let tools = tools.clone();
        async move { write(&tools, update(0, "A")).await }
    });
    // The plan's tab list, then the check's: the check is made while the entry waits.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while lists() - before < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the update's check waited for its audit entry"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(items(), json!(["a"]), "changed before its audit entry");
    assert!(!updating.is_finished());
    db.execute_batch("COMMIT").expect("unlock");
    let got = updating.await.expect("update");
    assert_eq!(
        got,
        "ok|mode:update|tab:workspace/u|full_path:mcp/workspace/u|index:0|field:text"
    );
    assert_eq!(items(), json!(["A"]));
    assert_eq!(
        store.audit_since(0, 100).expect("audit").len(),
        recorded + 1
    );
}
