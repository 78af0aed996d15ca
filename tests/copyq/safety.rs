//! No silent data loss, against a real CopyQ: a full tab is refused instead of evicting (also when
//! it fills between the plan and the write), a comma tag is refused instead of split, concurrent
//! writes neither lose nor duplicate, an acknowledged write survives a SIGKILL of CopyQ the moment
//! it is acknowledged, and odd text round-trips byte for byte.
//! Each test has its own CopyQ: some change its global options or kill it.

use crate::support::proxy::write_racing_an_add;
use crate::support::*;
use copyq_mcp::backend::Prepared;
use serde_json::{Value, json};

async fn w(c: &Client, args: Value) -> String {
    ok(c, "mcp_write", args).await
}

#[tokio::test]
async fn a_full_tab_is_refused_not_evicted() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq.eval("config('maxitems', 5)", b"").expect("maxitems");
    let full: Vec<String> = (0..5).map(|i| format!("kept {i}")).collect();
    copyq
        .seed(
            "mcp/workspace/full",
            &items(&full.iter().map(String::as_str).collect::<Vec<_>>()),
        )
        .expect("seed");
    copyq
        .seed("mcp/workspace/src", &items(&["to move"]))
        .expect("seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let message = "error|COPYQ_ERROR|Tab 'workspace/full' is full: CopyQ keeps at most 5 items per tab (option maxitems) and \
                   would silently drop the oldest one; nothing was changed. Delete or move items, or raise the limit (copyq config maxitems 1000)";
    assert_eq!(
        err(
            &c,
            "mcp_write",
            json!({"mode": "add", "tab": "workspace/full", "text": "one too many"})
        )
        .await,
        message
    );
    assert_eq!(
        err(
            &c,
            "mcp_write",
            json!({"mode": "move", "tab": "workspace/src", "index": 0, "to_tab": "workspace/full"})
        )
        .await,
        message
    );
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "write", "params": {"mode": "add", "tab": "workspace/full", "text": "x"}}),
    )
    .await;
    assert_eq!(got, format!("valid:false|errors:1\n{message}"));
    assert_eq!(tab_texts(&copyq, "mcp/workspace/full"), full);
    assert_eq!(tab_texts(&copyq, "mcp/workspace/src"), ["to move"]);
    // One slot free: the add goes through and nothing is evicted.
    w(
        &c,
        json!({"mode": "delete", "tab": "workspace/full", "index": 4}),
    )
    .await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/full", "text": "fits"}),
    )
    .await;
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/full"),
        ["fits", "kept 0", "kept 1", "kept 2", "kept 3"]
    );
}

/// The tab fills between the plan and the write: the write's own check, made just before anything
/// changes, refuses it rather than let CopyQ evict the tab's oldest item. The proxy adds the fifth
/// item when the write's check asks the target's length: for a move the second time (its plan
/// saw room), for an add the first (its plan reads only the tab list: the group's check is the
/// only room check an add gets).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_that_fills_after_the_plan_is_refused_by_the_write() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq.eval("config('maxitems', 5)", b"").expect("maxitems");
    let kept: Vec<String> = (0..4).map(|i| format!("kept {i}")).collect();
    let four: Vec<Item> = kept.iter().map(|t| Item::new(t, &[], "")).collect();
    copyq
        .seed("mcp/workspace/mover", &items(&["to move"]))
        .expect("seed");
    let cases = [
        (
            "filling-add",
            json!({"mode": "add", "tab": "workspace/filling-add", "text": "one too many"}),
            1,
        ),
        (
            "filling-move",
            json!({"mode": "move", "tab": "workspace/mover", "index": 0, "to_tab": "workspace/filling-move"}),
            2,
        ),
    ];
    for (name, write, nth) in cases {
        let tab = format!("mcp/workspace/{name}");
        copyq.seed(&tab, &four).expect("seed");
        let got = write_racing_an_add(&copyq, &tab, "filled meanwhile", write, nth).await;
        assert_eq!(
            got,
            format!(
                "error|COPYQ_ERROR|Tab 'workspace/{name}' is full: CopyQ keeps at most 5 items per tab (option maxitems) and \
                 would silently drop the oldest one; nothing was changed. Delete or move items, or raise the limit (copyq config maxitems 1000)"
            )
        );
        let mut want = vec!["filled meanwhile".to_owned()];
        want.extend(kept.iter().cloned());
        assert_eq!(tab_texts(&copyq, &tab), want, "{name}");
    }
    assert_eq!(tab_texts(&copyq, "mcp/workspace/mover"), ["to move"]);
}

/// The write's own room check, asked directly of the backend with the limit the plan would pass:
/// a tab holding `limit` items takes nothing more, by insert or by move, and is left as it was; one
/// holding `limit - 1` takes the item into its last slot.
#[tokio::test]
async fn the_backend_refuses_a_full_tab_and_fills_its_last_slot() {
    use copyq_mcp::backend::BackendError;
    let copyq = PrivateCopyq::start().expect("CopyQ");
    let three = items(&["a", "b", "c"]);
    copyq.seed("mcp/workspace/three", &three).expect("seed");
    copyq
        .seed("mcp/workspace/source", &items(&["moving"]))
        .expect("seed");
    let gw = gateway(&copyq).await;
    let backend = copyq_mcp::app::backend(&gw.settings).await;
    let extra = Item::new("extra", &[], "");
    let got = backend.insert("mcp/workspace/three", &extra, 3).await;
    assert!(
        matches!(got, Err(BackendError::TabFull { limit: 3 })),
        "{got:?}"
    );
    let moving = Item::new("moving", &[], "");
    let got = backend
        .move_item(
            "mcp/workspace/source",
            0,
            &moving,
            "mcp/workspace/three",
            3,
            Prepared::none(),
        )
        .await;
    assert!(
        matches!(got, Err(BackendError::TabFull { limit: 3 })),
        "{got:?}"
    );
    assert_eq!(tab_texts(&copyq, "mcp/workspace/three"), ["a", "b", "c"]);
    assert_eq!(tab_texts(&copyq, "mcp/workspace/source"), ["moving"]);

    let got = backend.insert("mcp/workspace/three", &extra, 4).await;
    assert!(
        matches!(
            got,
            Ok(copyq_mcp::backend::Landed {
                persisted: copyq_mcp::backend::Persisted::Unload,
                row: 0
            })
        ),
        "{got:?}"
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/three"),
        ["extra", "a", "b", "c"]
    );
}

#[tokio::test]
async fn concurrent_clients_lose_and_duplicate_nothing() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .eval("config('maxitems', 1000)", b"")
        .expect("maxitems");
    let (clients, each) = (4usize, 8usize);
    let seeded: Vec<String> = (0..clients * 2).map(|i| format!("delete me {i}")).collect();
    copyq
        .seed(
            "mcp/workspace/del",
            &seeded
                .iter()
                .map(|t| Item::new(t, &[], ""))
                .collect::<Vec<_>>(),
        )
        .expect("seed");
    let gw = gateway(&copyq).await;
    let mut tasks = Vec::new();
    for n in 0..clients {
        let (url, token) = (gw.url.clone(), gw.write.clone());
        tasks.push(tokio::spawn(async move {
            let c = client(&url, &token).await;
            let mut replies = Vec::new();
            for m in 0..each {
                replies.push(call(&c, "mcp_write", json!({"mode": "add", "tab": "workspace/conc", "text": format!("c{n}-m{m}")})).await);
                if m < 2 {
                    replies.push(call(&c, "mcp_write", json!({"mode": "delete", "tab": "workspace/del", "index": 0})).await);
                }
            }
            replies
        }));
    }
    for t in tasks {
        for (is_error, text) in t.await.expect("client task") {
            assert!(!is_error && text.starts_with("ok|"), "{text}");
        }
    }
    let mut got = tab_texts(&copyq, "mcp/workspace/conc");
    got.sort();
    let mut expected: Vec<String> = (0..clients)
        .flat_map(|n| (0..each).map(move |m| format!("c{n}-m{m}")))
        .collect();
    expected.sort();
    assert_eq!(got, expected, "every add exactly once");
    assert!(
        tab_texts(&copyq, "mcp/workspace/del").is_empty(),
        "each delete of index 0 removed one item"
    );
}

/// Adds made at once by 8 clients (group commit makes them together: one save of each tab, one
/// save-delay cycle for the tab open in CopyQ's window) each land exactly once, on disk when
/// acknowledged: a SIGKILL right after the last reply loses none. The adds to a tab with room for
/// one more item: one lands, every other is refused as full, and none of that fails its group.
#[tokio::test]
async fn concurrent_adds_each_land_once_on_disk_and_a_refused_one_fails_only_itself() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    copyq.eval("config('maxitems', 20)", b"").expect("maxitems");
    let room: Vec<String> = (0..19).map(|i| format!("kept {i}")).collect();
    copyq
        .seed(
            "mcp/workspace/room",
            &items(&room.iter().map(String::as_str).collect::<Vec<_>>()),
        )
        .expect("seed");
    pinned(&copyq, "mcp/workspace/open");
    copyq
        .seed("mcp/workspace/closed", &items(&["first"]))
        .expect("seed");
    let before = save_delays(&copyq);
    let gw = gateway(&copyq).await;
    // Eight clients, each sending its four adds at once once every client is connected.
    let tabs = ["open", "closed", "new", "room"];
    let all = at_once(&gw, 8, move |c, n| async move {
        let add = |tab: &str| {
            let args = json!({"mode": "add", "tab": format!("workspace/{tab}"), "text": format!("{tab} {n}")});
            call(&c, "mcp_write", args)
        };
        let got = tokio::join!(add(tabs[0]), add(tabs[1]), add(tabs[2]), add(tabs[3]));
        [got.0, got.1, got.2, got.3]
    })
    .await;
    let mut full = 0;
    for (n, replies) in all.into_iter().enumerate() {
        for (tab, (is_error, text)) in tabs.iter().zip(replies) {
            match is_error {
                false => assert!(text.starts_with("ok|mode:add|"), "{tab} {n}: {text}"),
                true => {
                    assert_eq!(*tab, "room", "{n}: {text}");
                    assert_eq!(
                        text,
                        "error|COPYQ_ERROR|Tab 'workspace/room' is full: CopyQ keeps at most 20 items per tab (option \
                         maxitems) and would silently drop the oldest one; nothing was changed. Delete or move items, or \
                         raise the limit (copyq config maxitems 1000)"
                    );
                    full += 1;
                }
            }
        }
    }
    assert_eq!(full, 7, "one add of eight took the last slot");
    assert_eq!(save_delays(&copyq), before, "the save delays are back");
    copyq.kill_server();
    copyq.start_server().expect("restart");
    for (tab, seeded) in [
        ("open", vec!["first"]),
        ("closed", vec!["first"]),
        ("new", vec![]),
    ] {
        let got = tab_texts(&copyq, &format!("mcp/workspace/{tab}"));
        let mut want: Vec<String> = (0..8).map(|n| format!("{tab} {n}")).collect();
        want.sort();
        let (added, kept) = got.split_at(got.len().saturating_sub(seeded.len()));
        let mut added = added.to_vec();
        added.sort();
        assert_eq!(added, want, "{tab}: every add exactly once");
        assert_eq!(kept, seeded, "{tab}");
    }
    let got = tab_texts(&copyq, "mcp/workspace/room");
    assert_eq!(got.len(), 20, "{got:?}");
    assert!(got[0].starts_with("room "), "{got:?}");
    assert_eq!(got[1..], room[..], "nothing evicted");
}

/// Write, SIGKILL CopyQ the moment the last write is acknowledged, restart it: the acknowledged
/// writes are there (each was saved before its `ok|`; CopyQ itself would save minutes later).
#[tokio::test]
async fn acknowledged_writes_survive_a_crash() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .seed(
            "mcp/workspace/crash",
            &items(&["will change", "will go", "will move"]),
        )
        .expect("seed");
    copyq
        .seed("mcp/workspace/crash-old", &items(&["old"]))
        .expect("seed");
    copyq.eval("unload()", b"").expect("save the seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    w(&c, json!({"mode": "update", "tab": "workspace/crash", "index": 0, "field": "text", "text": "changed"})).await;
    w(
        &c,
        json!({"mode": "delete", "tab": "workspace/crash", "index": 1}),
    )
    .await;
    w(&c, json!({"mode": "move", "tab": "workspace/crash", "index": 1, "to_tab": "workspace/crash-target"})).await;
    w(&c, json!({"mode": "add", "tab": "workspace/crash", "text": "added", "tags": ["t"], "note": "n"})).await;
    w(
        &c,
        json!({"mode": "tab_create", "path": "workspace/crash-created"}),
    )
    .await;
    w(
        &c,
        json!({"mode": "tab_delete", "path": "workspace/crash-old"}),
    )
    .await;
    copyq.kill_server();
    copyq.start_server().expect("restart");
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/crash"),
        ["added", "changed"]
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/crash-target"),
        ["will move"]
    );
    let tabs = copyq_tabs(&copyq);
    assert!(
        tabs.contains(&"mcp/workspace/crash-created".to_owned()),
        "{tabs:?}"
    );
    assert!(
        !tabs.contains(&"mcp/workspace/crash-old".to_owned()),
        "{tabs:?}"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "workspace/crash", "index": 0, "include_note": true}),
    )
    .await;
    assert!(got.ends_with("\ntext:added\ntags:[t]\nnote:n"), "{got}");
}

/// Updates and deletes sent at once by 8 clients, each to a tab of its own, one tab open in
/// CopyQ's window (its writes zero the save delays): through the socket they go beside each other,
/// and each is on disk when acknowledged all the same: a SIGKILL right after the last reply loses
/// none, puts none in another tab, and the save delays are as the owner set them. Each client's
/// update and delete of its own tab go one after the other, neither shifting the other's row.
#[tokio::test]
async fn updates_and_deletes_of_different_tabs_at_once_each_land_on_disk() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    for n in 0..8 {
        let tab = format!("mcp/workspace/own {n}");
        copyq
            .seed(
                &tab,
                &items(&[&format!("{n} a"), &format!("{n} b"), &format!("{n} c")]),
            )
            .expect("seed");
    }
    open_in_window(&copyq, "mcp/workspace/own 0");
    let before = save_delays(&copyq);
    let gw = gateway(&copyq).await;
    let all = at_once(&gw, 8, |c, n| async move {
        let tab = format!("workspace/own {n}");
        let update = json!({"mode": "update", "tab": tab, "index": 0, "field": "text",
            "edit_mode": "replace", "text": format!("{n} updated")});
        let delete = json!({"mode": "delete", "tab": tab, "index": 2});
        let got = tokio::join!(call(&c, "mcp_write", update), call(&c, "mcp_write", delete));
        [got.0, got.1]
    })
    .await;
    for (n, [(e1, updated), (e2, deleted)]) in all.into_iter().enumerate() {
        let tab = format!("workspace/own {n}");
        assert!(
            !e1 && updated.starts_with(&format!("ok|mode:update|tab:{tab}|")),
            "{updated}"
        );
        assert!(
            !e2 && deleted.starts_with(&format!("ok|mode:delete|tab:{tab}|")),
            "{deleted}"
        );
    }
    assert_eq!(save_delays(&copyq), before, "the save delays are back");
    copyq.kill_server();
    copyq.start_server().expect("restart");
    for n in 0..8 {
        let got = tab_texts(&copyq, &format!("mcp/workspace/own {n}"));
        assert_eq!(got, [format!("{n} updated"), format!("{n} b")], "own {n}");
    }
}

/// Install the owner's script command `cmd` in CopyQ (as its Commands dialog does).
fn owners_script(copyq: &PrivateCopyq, cmd: &str) {
    let commands = json!([{"name": "owner's script", "isScript": true, "cmd": cmd}]);
    copyq
        .eval(&format!("setCommands({commands})"), b"")
        .expect("setCommands");
}

/// `n` clients of `gw` with its write token, each doing `work(its client, its number)` once every
/// client is connected: what each did, in their order.
async fn at_once<T, F, Fut>(gw: &Gateway, n: usize, work: F) -> Vec<T>
where
    F: Fn(Client, usize) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = T> + Send,
    T: Send + 'static,
{
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(n));
    let mut tasks = Vec::new();
    for k in 0..n {
        let (url, token, start, work) = (
            gw.url.clone(),
            gw.write.clone(),
            start.clone(),
            work.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let c = client(&url, &token).await;
            start.wait().await;
            work(c, k).await
        }));
    }
    let mut done = Vec::new();
    for task in tasks {
        done.push(task.await.expect("client task"));
    }
    done
}

/// A delete of row `index` of `workspace/notes` through `c`, acknowledged.
async fn delete_note(c: &Client, index: usize) {
    let args = json!({"mode": "delete", "tab": "workspace/notes", "index": index});
    let got = w(c, args).await;
    assert!(
        got.starts_with("ok|mode:delete|tab:workspace/notes|"),
        "{got}"
    );
}

/// The owner keeps a recycle bin: a script CopyQ runs before each removal (`onItemsRemoved()`)
/// copies the items going to a tab of its own. CopyQ waits for it in a nested event loop, which
/// serves the calls sent after the removal first: the unload after a delete, sent with it, saved
/// the tab before the row was gone, and a SIGKILL right after the `ok|` brought the item back. The
/// delete is on disk when acknowledged, and the owner's script did its part. (CopyQ runs such
/// scripts from 8.0 on: 6.4 removes the item without it.)
#[tokio::test]
async fn a_delete_an_owners_script_waits_on_is_on_disk_when_acknowledged() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    owners_script(
        &copyq,
        "global.onItemsRemoved = function() { \
           var items = ItemSelection().current().items(); \
           tab('bin'); add(str(items[0][mimeText])); }",
    );
    copyq
        .seed("mcp/workspace/notes", &items(&["keep", "drop", "keep too"]))
        .expect("seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    delete_note(&c, 1).await;
    copyq.kill_server();
    copyq.start_server().expect("restart");
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/notes"),
        ["keep", "keep too"]
    );
    // The owner's script ran for the gateway's delete (its own tab is saved late: asked before
    // a crash, not after one).
    delete_note(&c, 0).await;
    let ran: &[&str] = match major(&copyq) {
        ..8 => &[],
        _ => &["keep"],
    };
    assert_eq!(
        tab_texts(&copyq, "bin"),
        ran,
        "the owner's script ran, from 8.0 on"
    );
    assert_eq!(tab_texts(&copyq, "mcp/workspace/notes"), ["keep too"]);
}

/// An owner's script that refuses removals (`onItemsRemoved()` failing): CopyQ answers the removal
/// with no error and keeps the item. The delete is refused, never `ok|`, saying so, and nothing is
/// changed.
/// (CopyQ 6.4 has no such scripts: it removes the item, and the delete says so.)
#[tokio::test]
async fn a_delete_an_owners_script_refuses_is_refused() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    owners_script(&copyq, "global.onItemsRemoved = global.fail");
    copyq
        .seed("mcp/workspace/notes", &items(&["keep", "protected"]))
        .expect("seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let args = json!({"mode": "delete", "tab": "workspace/notes", "index": 1});
    let (is_error, got) = call(&c, "mcp_write", args).await;
    let left = tab_texts(&copyq, "mcp/workspace/notes");
    if major(&copyq) < 8 {
        assert!(!is_error && got.starts_with("ok|mode:delete|"), "{got}");
        assert_eq!(left, ["keep"]);
        return;
    }
    assert!(is_error, "{got}");
    assert_eq!(
        got,
        "error|COPYQ_ERROR|CopyQ kept item 1 of 'workspace/notes': a script of CopyQ's \
         (onItemsRemoved) refused to remove it; nothing was changed"
    );
    assert_eq!(left, ["keep", "protected"]);
}

/// A tab open in CopyQ's window cannot be unloaded; the write must still survive a crash at once.
#[tokio::test]
async fn writes_to_a_tab_open_in_copyq_survive_a_crash() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .seed("mcp/workspace/pinned", &items(&["first"]))
        .expect("seed");
    copyq
        .eval("show('mcp/workspace/pinned')", b"")
        .expect("show the tab");
    let pinned = copyq
        .eval("print(JSON.stringify(unload('mcp/workspace/pinned')))", b"")
        .expect("unload");
    assert_eq!(
        pinned, "[]",
        "the tab is visible, so CopyQ refuses to unload it"
    );
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/pinned", "text": "while visible"}),
    )
    .await;
    let delays = copyq
        .eval("print(config('save_delay_ms_on_item_added'))", b"")
        .expect("config");
    assert_eq!(
        delays, "300000",
        "the save delay is restored after the write"
    );
    copyq.kill_server();
    copyq.start_server().expect("restart");
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/pinned"),
        ["while visible", "first"]
    );
}

/// A tab the owner opens in CopyQ's window while a write is under way (after the write's first
/// unload, before the unload after it) stays loaded, and CopyQ keeps the change in memory for its
/// save delay (5 minutes for a change, 10 for a removal): the write must survive a crash at once
/// all the same, and the save delays be as they were.
#[tokio::test]
async fn a_tab_opened_in_copyq_mid_write_survives_a_crash() {
    use copyq_mcp::backend::Persisted;
    let tab = "mcp/workspace/opened";
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    copyq.seed(tab, &items(&["first", "second"])).expect("seed");
    let delays = save_delays(&copyq);
    let gw = gateway(&copyq).await;
    let backend = copyq_mcp::app::backend(&gw.settings).await;
    // An update's first steps as the tool makes them: the unload in its plan's read.
    let request = copyq_mcp::backend::ReadRequest {
        tabs: copyq_mcp::backend::TabSelector::Names {
            names: vec![tab.to_owned()],
        },
        skip: 0,
        limit: Some(1),
        preview: None,
    };
    let (read, prepared) = backend
        .read_prepared(&request, &[tab])
        .await
        .expect("prepare");
    assert_eq!(read.pages[0].items[0].text, "first");
    open_in_window(&copyq, tab);
    let first = Item::new("first", &[], "");
    let changed = Item::new("changed", &[], "");
    let ready = copyq_mcp::backend::ready_now();
    let got = backend
        .change(tab, 0, &first, &changed, (prepared, ready))
        .await;
    assert!(matches!(got, Ok(Persisted::SaveDelay)), "{got:?}");
    assert_eq!(save_delays(&copyq), delays);
    copyq.kill_server();
    copyq.start_server().expect("restart");
    assert_eq!(tab_texts(&copyq, tab), ["changed", "second"]);

    // A backend of its own for the CopyQ started again.
    let backend = copyq_mcp::app::backend(&gw.settings).await;
    let prepared = backend.prepare_write(&[tab]).await.expect("prepare");
    open_in_window(&copyq, tab);
    let second = Item::new("second", &[], "");
    let ready = copyq_mcp::backend::ready_now();
    let got = backend.remove(tab, 1, &second, (prepared, ready)).await;
    assert!(matches!(got, Ok(Persisted::SaveDelay)), "{got:?}");
    assert_eq!(save_delays(&copyq), delays);
    copyq.kill_server();
    copyq.start_server().expect("restart");
    assert_eq!(tab_texts(&copyq, tab), ["changed"]);
}

/// CopyQ SIGKILLed and started again: its `mcp/` tabs then, in its order.
fn mcp_tabs_after_a_crash(copyq: &mut PrivateCopyq) -> Vec<String> {
    copyq.kill_server();
    copyq.start_server().expect("restart");
    copyq_tabs(copyq)
        .into_iter()
        .filter(|t| t.starts_with("mcp/"))
        .collect()
}

/// Tabs a write creates (by `tab_create`, and by adding to a tab that does not exist) come back,
/// in their order, with what was written into them, after a SIGKILL right after the last `ok|`
/// (CopyQ saves its tab list a second later on its own): `tab_create` saves the tab list.
#[tokio::test]
async fn tabs_a_write_creates_survive_a_crash_at_once() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    w(&c, json!({"mode": "tab_create", "path": "workspace/made"})).await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/made", "text": "into the created tab"}),
    )
    .await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/made-by-add", "text": "created by adding"}),
    )
    .await;
    w(
        &c,
        json!({"mode": "tab_create", "path": "workspace/made-empty"}),
    )
    .await;
    let tabs = mcp_tabs_after_a_crash(&mut copyq);
    assert_eq!(
        tabs,
        [
            "mcp/workspace/made",
            "mcp/workspace/made-by-add",
            "mcp/workspace/made-empty"
        ]
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/made"),
        ["into the created tab"]
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/made-by-add"),
        ["created by adding"]
    );
}

/// A tab an add creates is not flushed to CopyQ's tab list (the flush cost CopyQ's one thread about
/// 20 ms a time): an add into a new tab, the last write before a SIGKILL right after its `ok|`,
/// is there after the restart, in that tab, because CopyQ lists at start every tab whose data file
/// it finds and the write's unload wrote one. (Up to CopyQ 10 the tab list on disk does not name
/// the tab yet at the kill: CopyQ saves it a second after the change.)
#[tokio::test]
async fn a_tab_an_add_creates_survives_a_crash_before_its_tab_list_is_saved() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .seed("mcp/workspace/before", &items(&["already here"]))
        .expect("seed");
    copyq
        .eval("unload(); config('tabs')", b"")
        .expect("save the seed and the tab list");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    for text in ["first into the new tab", "second"] {
        w(
            &c,
            json!({"mode": "add", "tab": "workspace/by-add", "text": text}),
        )
        .await;
    }
    let moved = w(
        &c,
        json!({"mode": "move", "tab": "workspace/before", "index": 0, "to_tab": "workspace/by-move"}),
    )
    .await;
    assert!(moved.starts_with("ok|mode:move|"), "{moved}");
    let mut tabs = mcp_tabs_after_a_crash(&mut copyq);
    tabs.sort();
    assert_eq!(
        tabs,
        [
            "mcp/workspace/before",
            "mcp/workspace/by-add",
            "mcp/workspace/by-move"
        ]
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/by-add"),
        ["second", "first into the new tab"]
    );
    assert_eq!(tab_texts(&copyq, "mcp/workspace/by-move"), ["already here"]);
    assert!(tab_texts(&copyq, "mcp/workspace/before").is_empty());
}

/// Tabs `tab_delete` removes (a tab and the tabs under it) stay removed after a SIGKILL right after
/// the reply: CopyQ's tab list on disk no longer names them (it saves that list a second later on
/// its own).
#[tokio::test]
async fn removed_tabs_stay_removed_after_a_crash_at_once() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    for tab in [
        "mcp/workspace/gone",
        "mcp/workspace/gone/sub",
        "mcp/workspace/kept",
    ] {
        copyq.seed(tab, &items(&["an item"])).expect("seed");
    }
    // The tab list on disk must name the doomed tabs before the delete (config() saves it at
    // once): otherwise a restart could not bring them back anyway, and the test would pass with
    // the write's own flush taken out.
    copyq
        .eval("unload(); config('tabs')", b"")
        .expect("save the seed and the tab list");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let got = w(&c, json!({"mode": "tab_delete", "path": "workspace/gone"})).await;
    assert_eq!(
        got,
        "ok|mode:tab_delete|path:workspace/gone|full_path:mcp/workspace/gone|items_removed:2|tabs_removed:2"
    );
    let tabs = mcp_tabs_after_a_crash(&mut copyq);
    assert_eq!(tabs, ["mcp/workspace/kept"]);
    assert_eq!(tab_texts(&copyq, "mcp/workspace/kept"), ["an item"]);
}

/// An update, a delete and a move, each the last write to its tabs (closed ones: CopyQ unloads
/// them), are saved by the unload after each write: a SIGKILL right after the last `ok|` loses none.
/// (A later write to the same tab would save an earlier one by the unload before it.)
#[tokio::test]
async fn the_last_write_to_each_closed_tab_survives_a_crash_at_once() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    for (tab, texts) in [
        ("mcp/workspace/upd", &["to update", "stays"][..]),
        ("mcp/workspace/del", &["to delete", "stays"][..]),
        ("mcp/workspace/from", &["to move", "stays"][..]),
        ("mcp/workspace/to", &["there"][..]),
    ] {
        copyq.seed(tab, &items(texts)).expect("seed");
    }
    copyq.eval("unload()", b"").expect("save the seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    w(&c, json!({"mode": "update", "tab": "workspace/upd", "index": 0, "field": "text", "text": "updated"})).await;
    w(
        &c,
        json!({"mode": "delete", "tab": "workspace/del", "index": 0}),
    )
    .await;
    w(
        &c,
        json!({"mode": "move", "tab": "workspace/from", "index": 0, "to_tab": "workspace/to"}),
    )
    .await;
    copyq.kill_server();
    copyq.start_server().expect("restart");
    assert_eq!(tab_texts(&copyq, "mcp/workspace/upd"), ["updated", "stays"]);
    assert_eq!(tab_texts(&copyq, "mcp/workspace/del"), ["stays"]);
    assert_eq!(tab_texts(&copyq, "mcp/workspace/from"), ["stays"]);
    assert_eq!(tab_texts(&copyq, "mcp/workspace/to"), ["to move", "there"]);
}

/// Writes that change a tab open in CopyQ's window (a move into it, an update in it, a delete from
/// it) are saved by the save delays set to 0 for the write, and those delays are all back to what
/// they were when it is acknowledged: a SIGKILL right after loses nothing.
#[tokio::test]
async fn every_kind_of_write_to_a_tab_open_in_copyq_survives_a_crash_at_once() {
    let mut copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .seed(
            "mcp/workspace/shown",
            &items(&["to update", "to delete", "stays"]),
        )
        .expect("seed");
    copyq
        .seed("mcp/workspace/hidden", &items(&["to move in"]))
        .expect("seed");
    copyq
        .eval("show('mcp/workspace/shown')", b"")
        .expect("show the tab");
    let pinned = copyq
        .eval("print(JSON.stringify(unload('mcp/workspace/shown')))", b"")
        .expect("unload");
    assert_eq!(pinned, "[]", "the tab is visible, so CopyQ keeps it loaded");
    let before = save_delays(&copyq);
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    w(&c, json!({"mode": "update", "tab": "workspace/shown", "index": 0, "field": "text", "text": "updated"})).await;
    assert_eq!(save_delays(&copyq), before);
    w(
        &c,
        json!({"mode": "delete", "tab": "workspace/shown", "index": 1}),
    )
    .await;
    assert_eq!(save_delays(&copyq), before);
    w(
        &c,
        json!({"mode": "move", "tab": "workspace/hidden", "index": 0, "to_tab": "workspace/shown"}),
    )
    .await;
    assert_eq!(save_delays(&copyq), before);
    copyq.kill_server();
    copyq.start_server().expect("restart");
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/shown"),
        ["to move in", "updated", "stays"]
    );
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/hidden"),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn odd_text_round_trips_byte_for_byte() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let big: String = "Длинный текст | с \"кавычками\" и \\ обратной чертой 😀\n".repeat(2700);
    assert!(big.len() > 128 * 1024);
    let samples = [
        "pipe | pipe || end|".to_owned(),
        "line1\nline2\r\nline3\n\n".to_owned(),
        "quotes \" ' ` and backslashes \\ \\\\ \\n".to_owned(),
        "emoji 😀👍🏽 🇷🇺 and Cyrillic: Съешь же ещё этих мягких французских булок".to_owned(),
        "\ttabs\tand trailing spaces   ".to_owned(),
        "tags:[fake]\nnote:fake".to_owned(),
        big,
    ];
    for (i, text) in samples.iter().enumerate() {
        let tab = format!("workspace/rt{i}");
        let got = w(
            &c,
            json!({"mode": "add", "tab": tab, "text": text, "note": text}),
        )
        .await;
        assert!(
            got.contains(&format!("|text_len:{}|", text.chars().count())),
            "{got}"
        );
        let read = ok(
            &c,
            "mcp_read",
            json!({"mode": "item", "tab": tab, "index": 0, "include_note": true}),
        )
        .await;
        let header = format!("mode:item|tab:{tab}|full_path:mcp/{tab}|index:0\ntext:");
        assert_eq!(
            read,
            format!("{header}{text}\ntags:[]\nnote:{text}"),
            "sample {i}"
        );
        assert_eq!(
            tab_texts(&copyq, &format!("mcp/{tab}")),
            std::slice::from_ref(text),
            "CopyQ holds the same bytes"
        );
    }
}

#[tokio::test]
async fn a_comma_tag_is_refused_not_split() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/tags", "text": "x", "tags": ["ok", "a,b"]}),
    )
    .await;
    assert!(
        got.starts_with("error|INVALID_PARAM|Tag 'a,b' contains a comma"),
        "{got}"
    );
    assert!(
        !copyq_tabs(&copyq).contains(&"mcp/workspace/tags".to_owned()),
        "nothing was created"
    );
    w(&c, json!({"mode": "add", "tab": "workspace/tags", "text": "x", "tags": ["a b", "c;d", "deadline:2024-01"]})).await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "workspace/tags", "index": 0}),
    )
    .await;
    assert!(got.ends_with("\ntags:[a b,c;d,deadline:2024-01]"), "{got}");
}

/// The gateway caches CopyQ's maxitems (asking costs CopyQ ~20 ms), but only while CopyQ's options
/// file is unchanged: lowering the limit while the gateway runs still protects the next write.
#[tokio::test]
async fn a_lowered_limit_is_seen_at_once() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    copyq
        .seed("mcp/workspace/lim", &items(&["a", "b", "c"]))
        .expect("seed");
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.write).await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/lim", "text": "fits under the default"}),
    )
    .await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/lim", "text": "and the cached limit"}),
    )
    .await;
    copyq
        .eval("config('maxitems', 5)", b"")
        .expect("lower maxitems");
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/lim", "text": "one too many"}),
    )
    .await;
    assert!(got.contains("CopyQ keeps at most 5 items per tab"), "{got}");
    assert_eq!(
        tab_texts(&copyq, "mcp/workspace/lim"),
        [
            "and the cached limit",
            "fits under the default",
            "a",
            "b",
            "c"
        ]
    );
}

/// A tab the owner removes after the gateway read it, read again. Over the socket a list or tree
/// of tabs CopyQ listed last time asks the tab list in the batch of its rows, so it names the
/// tab before it learns the tab is gone, and CopyQ before 17.0 makes a tab a call names. The read
/// answers as for a tab that is not there, and CopyQ's tab list does not have the tab after it.
#[tokio::test]
async fn a_tab_the_owner_removed_is_not_made_again_by_reading_it() {
    let copyq = PrivateCopyq::start().expect("CopyQ");
    for tab in ["gone1", "gone2", "kept"] {
        copyq
            .seed(
                &format!("mcp/workspace/{tab}"),
                &items(&[&format!("in {tab}")]),
            )
            .expect("seed");
    }
    let gw = gateway(&copyq).await;
    let c = client(&gw.url, &gw.read).await;
    let list = json!({"mode": "list", "tab": "workspace/gone1"});
    let tree = json!({"mode": "tree", "scope": "mcp"});
    assert!(ok(&c, "mcp_read", list.clone()).await.contains("in gone1"));
    let before = ok(&c, "mcp_read", tree.clone()).await;
    assert!(before.contains("gone2"), "{before}");
    copyq
        .eval("removeTab('mcp/workspace/gone1')", b"")
        .expect("remove");
    assert_eq!(
        err(&c, "mcp_read", list).await,
        "error|TAB_NOT_FOUND|Tab not found: workspace/gone1"
    );
    let tabs = copyq_tabs(&copyq);
    assert!(!tabs.iter().any(|t| t == "mcp/workspace/gone1"), "{tabs:?}");
    copyq
        .eval("removeTab('mcp/workspace/gone2')", b"")
        .expect("remove");
    let after = ok(&c, "mcp_read", tree).await;
    assert!(
        !after.contains("gone2") && after.contains("kept"),
        "{after}"
    );
    assert_eq!(
        copyq_tabs(&copyq)
            .into_iter()
            .filter(|t| t.starts_with("mcp/"))
            .collect::<Vec<_>>(),
        ["mcp/workspace/kept"]
    );
}
