//! Which writes an `mcp_read` waits for ([`crate::mcp::ToolState::read_lock`]): over the socket,
//! a tree, list or item waits only for those that remove or create a tab; a search, and every read
//! through another backend, waits for every write. Driven through the socket backend against the
//! stand-in server (the real CopyQ runs in tests/load.rs and tests/copyq/content/images.rs).

use std::time::Duration;

use serde_json::json;

use crate::backend::socket::stand_in::tests::started;
use crate::backend::{Backend, Item, MemoryBackend};
use crate::clipboard::{Coverage, Roots};
use crate::mcp::ToolState;

/// A `list` of `mcp/a` through `tools`, if answered within `wait`.
async fn list_within(tools: &ToolState, wait: Duration) -> Option<String> {
    let args = json!({"mode": "list", "tab": "a"});
    let map = args.as_object().cloned().unwrap_or_default();
    let read = super::call(tools, &Coverage::All, &map);
    match tokio::time::timeout(wait, read).await {
        Ok(Ok(reply)) => Some(reply.text),
        Ok(Err(e)) => Some(e.line()),
        Err(_) => None,
    }
}

/// A search for `one` through `tools`: its reply's text, or its error line.
async fn search_one(tools: &ToolState) -> String {
    let args = json!({"mode": "search", "query": "one"});
    let map = args.as_object().cloned().unwrap_or_default();
    super::call(tools, &Coverage::All, &map)
        .await
        .map(|r| r.text)
        .unwrap_or_else(|e| e.line())
}

/// The socket backend on a stand-in server in `dir`, holding one item in `mcp/a`.
async fn socket_tools(dir: &tempfile::TempDir) -> ToolState {
    let (backend, _server, layout, _model) = started(dir).await;
    layout.expect("the stand-in answers");
    backend
        .insert("mcp/a", &Item::new("one", &[], ""), 200)
        .await
        .expect("seed");
    ToolState::new(Backend::Socket(backend), Roots::default())
}

/// A list through `tools` waits while `held` is held, and is answered once it is dropped.
async fn waits_for(tools: &ToolState, held: tokio::sync::OwnedRwLockWriteGuard<()>) {
    assert_eq!(list_within(tools, Duration::from_millis(300)).await, None);
    drop(held);
    let got = list_within(tools, Duration::from_secs(10)).await;
    assert!(got.is_some_and(|g| g.contains("\"one\"")));
}

/// Over the socket a read goes beside a write in progress (the write lock held): CopyQ is not
/// left idle between the write's round trips while reads queue.
#[tokio::test]
async fn a_socket_read_is_answered_while_a_write_holds_the_write_lock() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = socket_tools(&dir).await;
    let _write = tools.writes.clone().write_owned().await;
    let got = list_within(&tools, Duration::from_secs(10)).await;
    let got = got.expect("the read waited for the write");
    assert!(got.contains("\"one\""), "{got}");
}

/// A write that removes or creates a tab holds the tab-list lock too: a read waits for it, so
/// that it never names a tab removed between its tab list and its next call (CopyQ would make the
/// tab again), and answers once the write is done.
#[tokio::test]
async fn a_socket_read_waits_for_a_tab_removal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = socket_tools(&dir).await;
    let removal = tools.tab_list.clone().write_owned().await;
    waits_for(&tools, removal).await;
}

/// Other backends' reads wait for every write, as before (a CLI read's whole-tab selection, emptied
/// by a write's unload, would miss items unseen).
#[tokio::test]
async fn a_memory_read_waits_for_a_write() {
    let mem = MemoryBackend::with_tabs(vec![("mcp/a".into(), vec![Item::new("one", &[], "")])]);
    let tools = ToolState::new(Backend::Memory(mem), Roots::default());
    let write = tools.writes.clone().write_owned().await;
    waits_for(&tools, write).await;
}

/// A search reads whole tabs through selections, which a write's unload empties mid-read: it
/// waits for writes over the socket too.
#[tokio::test]
async fn a_socket_search_waits_for_a_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tools = socket_tools(&dir).await;
    let write = tools.writes.clone().write_owned().await;
    let search = search_one(&tools);
    tokio::pin!(search);
    let waited = tokio::time::timeout(Duration::from_millis(300), &mut search).await;
    assert!(waited.is_err(), "the search did not wait for the write");
    drop(write);
    let got = tokio::time::timeout(Duration::from_secs(10), search).await;
    let got = got.expect("answered once the write is done");
    assert!(got.contains("results:1"), "{got}");
}

/// A search holds the write lock for its read of CopyQ alone: read, and waiting for its turn to
/// mask and match (every turn taken), it lets a write in.
#[tokio::test]
async fn a_search_lets_writes_in_once_it_has_read() {
    let mem = MemoryBackend::with_tabs(vec![("mcp/a".into(), vec![Item::new("one", &[], "")])]);
    let tools = ToolState::new(Backend::Memory(mem), Roots::default());
    let turns = u32::try_from(crate::mcp::WHOLE_READS).expect("a few turns");
    let taken = tools
        .whole_reads
        .clone()
        .try_acquire_many_owned(turns)
        .expect("every turn free");
    let search = search_one(&tools);
    tokio::pin!(search);
    let waited = tokio::time::timeout(Duration::from_millis(300), &mut search).await;
    assert!(waited.is_err(), "the search went on without a turn");
    let write = tools.writes.clone().try_write_owned();
    assert!(
        write.is_ok(),
        "the search held the write lock past its read"
    );
    drop((write, taken));
    let got = tokio::time::timeout(Duration::from_secs(10), search).await;
    let got = got.expect("answered once it has a turn");
    assert!(got.contains("results:1"), "{got}");
}
