//! Updates and deletes over the socket go beside each other, one tab at a time
//! ([`crate::mcp::ToolState::beside`]), against the stand-in server: an update of one tab is made
//! while another tab's write is under way, one of the same tab waits for it, a search's read and
//! an add wait for both, and two writes that zero the save delays at once leave them as the owner
//! set them.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};

use super::group_tests::write;

use crate::backend::socket::stand_in::Model;
use crate::backend::socket::stand_in::tests::started;
use crate::backend::{Backend, Item};
use crate::clipboard::{Coverage, Roots};
use crate::mcp::ToolState;

fn update(tab: &str, text: &str) -> Value {
    json!({"mode": "update", "tab": tab, "index": 0, "field": "text", "edit_mode": "replace", "text": text})
}

/// `fut`'s output if it is ready within `wait`.
async fn within<T>(wait: Duration, fut: impl std::future::Future<Output = T>) -> Option<T> {
    tokio::time::timeout(wait, fut).await.ok()
}

/// The socket backend on the stand-in in `dir` with one item in `workspace/a` and one in another
/// writable tab, whose lock is not `workspace/a`'s (the tab locks are keyed per process): its name.
async fn two_tabs(dir: &tempfile::TempDir) -> (Arc<ToolState>, Arc<Mutex<Model>>, String) {
    let (backend, _server, layout, model) = started(dir).await;
    layout.expect("the stand-in answers");
    let tools = ToolState::new(Backend::Socket(backend.clone()), Roots::default());
    let a = tools.tab_writes.of("mcp/workspace/a");
    let other = ('b'..='z')
        .map(|t| format!("workspace/{t}"))
        .find(|t| !Arc::ptr_eq(&a, &tools.tab_writes.of(&format!("mcp/{t}"))))
        .expect("64 locks: some other tab has another");
    for tab in ["workspace/a", other.as_str()] {
        backend
            .insert(&format!("mcp/{tab}"), &Item::new(tab, &[], ""), 200)
            .await
            .expect("seed");
    }
    (Arc::new(tools), model, other)
}

fn texts(model: &Mutex<Model>) -> Value {
    model
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .to_json()["tabs"]
        .clone()
}

/// With a write of `workspace/a` under way (its locks held), an update and a delete of another tab are
/// made and answered; before, every write took the write lock alone and waited.
#[tokio::test]
async fn a_write_of_another_tab_goes_beside_one_under_way() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (tools, model, other) = two_tabs(&dir).await;
    let under_way = tools.beside("mcp/workspace/a").await;
    let updated = within(
        Duration::from_secs(10),
        write(&tools, update(&other, "new")),
    )
    .await;
    let updated = updated.expect("the update waited for another tab's write");
    assert!(
        updated.starts_with(&format!("ok|mode:update|tab:{other}|")),
        "{updated}"
    );
    let delete = json!({"mode": "delete", "tab": other, "index": 0});
    let deleted = within(Duration::from_secs(10), write(&tools, delete)).await;
    let deleted = deleted.expect("the delete waited for another tab's write");
    assert!(
        deleted.starts_with(&format!("ok|mode:delete|tab:{other}|")),
        "{deleted}"
    );
    drop(under_way);
    let tabs = texts(&model);
    assert_eq!(
        tabs[0],
        json!({"name": "mcp/workspace/a", "items": ["workspace/a"]})
    );
    assert_eq!(
        tabs[1],
        json!({"name": format!("mcp/{other}"), "items": []})
    );
}

/// A write of the same tab waits for the one under way, then is made against what it left.
#[tokio::test]
async fn a_write_of_the_same_tab_waits_for_the_one_under_way() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (tools, model, _) = two_tabs(&dir).await;
    let under_way = tools.beside("mcp/workspace/a").await;
    let updating = write(&tools, update("workspace/a", "new"));
    tokio::pin!(updating);
    let waited = within(Duration::from_millis(300), &mut updating).await;
    assert_eq!(waited, None, "the update did not wait for its tab's write");
    drop(under_way);
    let updated = within(Duration::from_secs(10), updating).await;
    let updated = updated.expect("made once the tab's write is done");
    assert!(
        updated.starts_with("ok|mode:update|tab:workspace/a|"),
        "{updated}"
    );
    assert_eq!(
        texts(&model)[0],
        json!({"name": "mcp/workspace/a", "items": ["new"]})
    );
}

/// A search's read of CopyQ waits for the updates and deletes under way (their unloads would empty
/// its selections), and so does an add, which still goes alone; both are made once it is done.
#[tokio::test]
async fn a_search_and_an_add_wait_for_a_write_going_beside() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (tools, _model, other) = two_tabs(&dir).await;
    let under_way = tools.beside("mcp/workspace/a").await;
    let args = json!({"mode": "search", "query": "workspace/a"});
    let args = args.as_object().cloned().unwrap_or_default();
    let search = crate::mcp::read::call(&tools, &Coverage::All, &args);
    tokio::pin!(search);
    let waited = within(Duration::from_millis(300), &mut search).await;
    assert!(waited.is_none(), "the search read beside a write's unload");
    let add = write(
        &tools,
        json!({"mode": "add", "tab": other, "text": "added"}),
    );
    tokio::pin!(add);
    let waited = within(Duration::from_millis(300), &mut add).await;
    assert_eq!(waited, None, "the add did not wait for the write under way");
    drop(under_way);
    let found = within(Duration::from_secs(10), search).await;
    let found = found
        .expect("answered once the write is done")
        .expect("search");
    assert!(found.text.contains("results:1"), "{}", found.text);
    let added = within(Duration::from_secs(10), add).await;
    let added = added.expect("made once the write is done");
    assert!(
        added.starts_with(&format!("ok|mode:add|tab:{other}|")),
        "{added}"
    );
}

/// Two tabs open in CopyQ's window (kept loaded, so each write zeroes the save delays and puts
/// them back) updated at once, the second started once the first has made 0 to 7 round trips:
/// no write reads the other's zeros as the owner's delays, and they end as the owner set them.
/// (Without one cycle of the delays at a time, the second read the first's zeros and put those
/// back.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_writes_beside_each_other_put_the_owners_save_delays_back() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (tools, model, other) = two_tabs(&dir).await;
    let crate::backend::Backend::Socket(backend) = &tools.backend else {
        unreachable!("two_tabs serves through the socket")
    };
    let m = || model.lock().unwrap_or_else(PoisonError::into_inner);
    for k in crate::backend::protocol::SAVE_DELAYS {
        m().set_option(k, "300000");
    }
    m().open_after("mcp/workspace/a", 0);
    m().open_after(&format!("mcp/{other}"), 0);
    for round in 0..32 {
        let trips = backend.round_trips();
        let first = tokio::spawn({
            let tools = tools.clone();
            async move { write(&tools, update("workspace/a", &format!("a{round}"))).await }
        });
        while backend.round_trips() < trips + round % 8 && !first.is_finished() {
            tokio::task::yield_now().await;
        }
        let b = write(&tools, update(&other, &format!("b{round}"))).await;
        let a = first.await.expect("the first write's task");
        assert!(a.starts_with("ok|mode:update|tab:workspace/a|"), "{a}");
        assert!(
            b.starts_with(&format!("ok|mode:update|tab:{other}|")),
            "{b}"
        );
        for k in crate::backend::protocol::SAVE_DELAYS {
            assert_eq!(m().option(k), Some("300000"), "{k} after round {round}");
        }
    }
    assert_eq!(
        m().zeros_read(),
        0,
        "a write read another's zeros as the owner's delays"
    );
    let tabs = texts(&model);
    assert_eq!(tabs[0]["items"], json!(["a31"]));
    assert_eq!(tabs[1]["items"], json!(["b31"]));
}
