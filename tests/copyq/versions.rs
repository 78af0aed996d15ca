//! What differs between the CopyQ versions people run (6.4 to 17.0; tests/run.sh runs this suite
//! against each, with both backends): formats CopyQ keeps in files, tab creation, and CopyQ's
//! name matching that ignores `&`. Each test works in tabs of its own.

use crate::support::proxy::{Fault, Proxy, utf16};
use crate::support::*;
use serde_json::json;

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

/// Text over CopyQ's `item_data_threshold` (1 KiB): from 8.0 kept in a file, and sent over the
/// socket as a `DataFile` path instead of the content.
fn big(word: &str, n: usize) -> String {
    format!("{word} {} end", "абв".repeat(n))
}

/// The lines of `copyq-mcp audit` (the owner's command), or of `audit restore ID`.
/// The owner's command, its stdout and stderr together.
fn owner_said(gw: &Gateway, args: &[&str]) -> (bool, String) {
    let (done, out, err) = owner(gw, args);
    (done, out + &err)
}

/// Whether some file CopyQ keeps item data in (`.../items/...`) holds exactly `content`.
fn in_a_data_file(dir: &std::path::Path, content: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|e| {
        let path = e.path();
        if path.is_dir() {
            return in_a_data_file(&path, content);
        }
        path.components().any(|c| c.as_os_str() == "items")
            && std::fs::read(&path).is_ok_and(|b| b == content.as_bytes())
    })
}

fn texts(tab: &str) -> Vec<String> {
    tab_texts(copyq(), tab)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn items_kept_in_files_are_read_searched_moved_and_audited() {
    let cq = copyq();
    let text = big("needle", 700);
    let note = big("note", 500);
    cq.seed(
        "mcp/workspace/files-src",
        &[
            Item::new(&text, &["t1"], &note),
            Item::new("small", &[], ""),
        ],
    )
    .expect("seed");
    // Saved, the big formats go to files; loaded again, the tab holds DataFile values.
    cq.eval("unload('mcp/workspace/files-src')", b"")
        .expect("unload");
    if major(copyq()) >= 8 {
        assert!(
            in_a_data_file(cq.dir(), &text),
            "CopyQ 8.0+ keeps a format over 1 KiB in a file"
        );
    }
    let gw = gateway(cq).await;
    let c = client(&gw.url, &gw.write).await;
    let item =
        json!({"mode": "item", "tab": "workspace/files-src", "index": 0, "include_note": true});
    assert_eq!(
        ok(&c, "mcp_read", item).await,
        format!(
            "mode:item|tab:workspace/files-src|full_path:mcp/workspace/files-src|index:0\ntext:{text}\ntags:[t1]\nnote:{note}"
        )
    );
    let found = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "needle", "scope": "mcp"}),
    )
    .await;
    assert_eq!(
        found,
        format!(
            "mode:search|query:needle|scope:mcp|results:1\nworkspace/files-src[0]|\"needle {}а...\"|[t1]|match:text",
            "абв".repeat(23)
        )
    );
    let moved = ok(
        &c,
        "mcp_write",
        json!({"mode": "move", "tab": "workspace/files-src", "index": 0, "to_tab": "workspace/files-dst"}),
    )
    .await;
    assert_eq!(
        moved,
        "ok|mode:move|from:mcp/workspace/files-src|to:mcp/workspace/files-dst|new_index:0"
    );
    assert_eq!(texts("mcp/workspace/files-src"), ["small"]);
    assert_eq!(
        texts("mcp/workspace/files-dst"),
        std::slice::from_ref(&text)
    );
    let item =
        json!({"mode": "item", "tab": "workspace/files-dst", "index": 0, "include_note": true});
    assert!(
        ok(&c, "mcp_read", item)
            .await
            .ends_with(&format!("\ntext:{text}\ntags:[t1]\nnote:{note}")),
        "the moved item keeps its text, tags and note"
    );
    let deleted = ok(
        &c,
        "mcp_write",
        json!({"mode": "delete", "tab": "workspace/files-dst", "index": 0}),
    )
    .await;
    assert_eq!(
        deleted,
        "ok|mode:delete|tab:workspace/files-dst|full_path:mcp/workspace/files-dst|index:0"
    );
    // The audit log kept the deleted item's content, so the owner can bring it back.
    let (done, listing) = owner_said(&gw, &["audit", "--since", "1h"]);
    assert!(done, "{listing}");
    let line = listing
        .lines()
        .rev()
        .find(|l| l.contains("delete     mcp/workspace/files-dst[0]"))
        .unwrap_or_else(|| panic!("no delete entry: {listing}"));
    let id = line.trim_start_matches('#').split_whitespace().next();
    let (done, out) = owner_said(&gw, &["audit", "restore", id.unwrap_or_default()]);
    assert!(done, "{out}");
    assert_eq!(texts("mcp/workspace/files-dst"), [text]);
}

/// CopyQ takes an existing `&mcp/...` (or `m&cp/...`) tab for a missing `mcp/...` one: such a
/// write would leave mcp/. It is refused, naming the clash, and nothing changes anywhere.
#[tokio::test]
async fn a_tab_differing_only_by_ampersand_is_never_written() {
    let cq = copyq();
    cq.seed("&mcp/workspace/kh2", &items(&["owner's"]))
        .expect("seed");
    cq.seed("m&cp/workspace/kh3", &items(&["owner's too"]))
        .expect("seed");
    cq.seed("mcp/workspace/kh-src", &items(&["mine"]))
        .expect("seed");
    let gw = gateway(cq).await;
    let c = client(&gw.url, &gw.write).await;
    let refusal = |tab: &str, other: &str| {
        format!(
            "error|PERMISSION_DENIED|Tab '{tab}' does not exist, and CopyQ would write to its existing tab '{other}' \
             instead (CopyQ ignores '&' in tab names); nothing was changed. Rename that tab or use another name"
        )
    };
    for (tab, other) in [
        ("workspace/kh2", "&mcp/workspace/kh2"),
        ("workspace/kh3", "m&cp/workspace/kh3"),
    ] {
        let add = json!({"mode": "add", "tab": tab, "text": "x"});
        assert_eq!(err(&c, "mcp_write", add).await, refusal(tab, other));
        let create = json!({"mode": "tab_create", "path": tab});
        assert_eq!(err(&c, "mcp_write", create).await, refusal(tab, other));
        let mv = json!({"mode": "move", "tab": "workspace/kh-src", "index": 0, "to_tab": tab});
        assert_eq!(err(&c, "mcp_write", mv).await, refusal(tab, other));
        let preview = json!({"mode": "add", "tab": tab, "text": "x", "intent": "preview"});
        assert_eq!(err(&c, "mcp_write", preview).await, refusal(tab, other));
    }
    assert_eq!(texts("&mcp/workspace/kh2"), ["owner's"]);
    assert_eq!(texts("m&cp/workspace/kh3"), ["owner's too"]);
    assert_eq!(texts("mcp/workspace/kh-src"), ["mine"]);
    let tabs = copyq_tabs(cq);
    assert!(
        !tabs
            .iter()
            .any(|t| t == "mcp/workspace/kh2" || t == "mcp/workspace/kh3"),
        "{tabs:?}"
    );
}

/// Should such a tab appear between planning and writing, the backend sees the write land
/// elsewhere and says so: never "done", never "not applied".
#[tokio::test]
async fn a_write_that_landed_in_another_tab_is_reported_as_such() {
    let cq = copyq();
    cq.seed("&mcp/workspace/kh4", &items(&["owner's"]))
        .expect("seed");
    let gw = gateway(cq).await;
    let backend = copyq_mcp::app::backend(&gw.settings).await;
    let got = backend
        .insert("mcp/workspace/kh4", &Item::new("stray", &[], ""), 200)
        .await;
    assert!(
        matches!(&got, Err(copyq_mcp::backend::BackendError::Misdirected { tab }) if tab == "mcp/workspace/kh4"),
        "{got:?}"
    );
    assert_eq!(texts("&mcp/workspace/kh4"), ["stray", "owner's"]);
    let created = backend.create_tab("mcp/workspace/kh4").await;
    assert!(
        matches!(
            &created,
            Err(copyq_mcp::backend::BackendError::Misdirected { .. })
        ),
        "{created:?}"
    );
    assert!(!copyq_tabs(cq).iter().any(|t| t == "mcp/workspace/kh4"));
}

/// The same through the gateway: the look-alike tab appears just before the write's insert (the
/// proxy makes it). Where the insert itself creates the tab (the socket backend; the CLI on 17.0),
/// CopyQ puts the item in the look-alike, and the reply names where it went. Where the tab exists by
/// then (the CLI script on 6.4 to 10.0 creates it when it selects it), the insert goes where it was
/// asked, and the reply says so. The proxy's fault records which of the two it found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_add_racing_a_look_alike_tab_says_where_it_went() {
    let cq = copyq();
    let existed = std::sync::Arc::new(std::sync::Mutex::new(None));
    let mut make = cq.command();
    make.args([
        "eval",
        "--",
        "print(tab().indexOf('mcp/workspace/kh5') !== -1); tab('&mcp/workspace/kh5'); add('owner\\'s')",
    ]);
    let seen = existed.clone();
    let make = move || {
        let out = make.output().expect("copyq eval");
        assert!(out.status.success(), "make the look-alike");
        *seen.lock().expect("lock") = Some(String::from_utf8_lossy(&out.stdout).trim() == "true");
    };
    let proxy = Proxy::start(
        cq,
        &[b"browserInsert", &utf16("mcp/workspace/kh5")],
        1,
        Fault::Run(Box::new(make)),
    );
    let gw = gateway_with(cq, |s| proxy.configure(s)).await;
    let c = client(&gw.url, &gw.write).await;
    let got = call(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/kh5", "text": "stray"}),
    )
    .await;
    assert!(proxy.fired());
    let existed = existed.lock().expect("lock").expect("the fault ran");
    if existed {
        assert_eq!(
            got,
            (
                false,
                "ok|mode:add|tab:workspace/kh5|full_path:mcp/workspace/kh5|index:0|text_len:5|tags:0|note:False".to_owned()
            )
        );
        assert_eq!(texts("mcp/workspace/kh5"), ["stray"]);
        assert_eq!(texts("&mcp/workspace/kh5"), ["owner's"]);
        return;
    }
    assert_eq!(
        got,
        (
            true,
            "error|PERMISSION_DENIED|CopyQ made this write in its tab '&mcp/workspace/kh5' instead of 'mcp/workspace/kh5' \
             (CopyQ ignores '&' in tab names, and that tab appeared after the write was planned): the change was made there, \
             not in 'mcp/workspace/kh5'".to_owned()
        )
    );
    assert_eq!(texts("&mcp/workspace/kh5"), ["stray", "owner's"]);
    assert!(!copyq_tabs(cq).iter().any(|t| t == "mcp/workspace/kh5"));
}

/// Adds of texts over CopyQ's `item_data_threshold` (kept in files from 8.0, once saved), made at
/// once: a group's inserts and their verifies go in one round trip, and each lands once, whole,
/// answered as made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adds_of_items_kept_in_files_made_at_once_each_land_whole() {
    let cq = copyq();
    let gw = gateway(cq).await;
    let mut want: Vec<String> = (0..8).map(|n| big(&format!("at-once-{n}"), 600)).collect();
    // Eight clients, each sending its add once every client is connected.
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(want.len()));
    let mut tasks = Vec::new();
    for text in want.clone() {
        let (url, token, start) = (gw.url.clone(), gw.write.clone(), start.clone());
        tasks.push(tokio::spawn(async move {
            let c = client(&url, &token).await;
            start.wait().await;
            let args = json!({"mode": "add", "tab": "workspace/at-once", "text": text});
            call(&c, "mcp_write", args).await
        }));
    }
    for task in tasks {
        let (is_error, reply) = task.await.expect("client task");
        assert!(!is_error, "{reply}");
        assert!(
            reply.starts_with("ok|mode:add|tab:workspace/at-once|"),
            "{reply}"
        );
    }
    let mut got = texts("mcp/workspace/at-once");
    got.sort();
    want.sort();
    assert_eq!(got, want);
}
