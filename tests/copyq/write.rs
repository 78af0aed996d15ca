//! `mcp_write` and `mcp_validate` of writes against a real CopyQ through a real MCP client: every
//! mode and intent, the reference's replies byte for byte, and every error code. Each test works in
//! tabs of its own, so the tests can share one CopyQ.

use crate::support::*;
use serde_json::{Value, json};

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

async fn setup() -> (Gateway, Client) {
    let gw = gateway(copyq()).await;
    let c = client(&gw.url, &gw.write).await;
    (gw, c)
}

async fn w(c: &Client, args: Value) -> String {
    ok(c, "mcp_write", args).await
}

async fn item(c: &Client, tab: &str, index: i64) -> String {
    ok(
        c,
        "mcp_read",
        json!({"mode": "item", "tab": tab, "index": index, "include_note": true}),
    )
    .await
}

/// Every tab whose name starts with one of `prefixes`, with all formats of all its items, for
/// "nothing changed" checks (other tests write to other tabs meanwhile).
fn dump(prefixes: &[&str]) -> String {
    let script = "var p = JSON.parse(str(input())); var out = []; \
        tab().filter(function (t) { return p.some(function (x) { return t.indexOf(x) === 0; }); }).sort().forEach(function (t) { \
          out.push('tab ' + t); tab(t); for (var i = 0; i < size(); ++i) { var d = getItem(i); \
          out.push(i + '|' + JSON.stringify(Object.keys(d).sort().map(function (k) { return [k, str(d[k])]; }))); } }); \
        print(out.join('\\n'))";
    let out = copyq()
        .eval(script, json!(prefixes).to_string().as_bytes())
        .expect("dump");
    assert!(
        out.starts_with("tab "),
        "dump found nothing for {prefixes:?}"
    );
    out
}

#[tokio::test]
async fn add_like_the_reference() {
    let (_gw, c) = setup().await;
    let got = w(
        &c,
        json!({"mode": "add", "tab": "workspace/add-ref", "text": "Новая запись"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:add|tab:workspace/add-ref|full_path:mcp/workspace/add-ref|index:0|text_len:12|tags:0|note:False"
    );
    let args = json!({"mode": "add", "tab": "workspace/add-ref", "text": "Описание задачи",
                      "tags": ["task", "high-priority"], "note": "Срок: до конца недели"});
    let got = w(&c, args).await;
    assert_eq!(
        got,
        "ok|mode:add|tab:workspace/add-ref|full_path:mcp/workspace/add-ref|index:0|text_len:15|tags:2|note:True"
    );
    assert_eq!(
        item(&c, "workspace/add-ref", 0).await,
        "mode:item|tab:workspace/add-ref|full_path:mcp/workspace/add-ref|index:0\ntext:Описание задачи\ntags:[task,high-priority]\nnote:Срок: до конца недели"
    );
    assert!(
        item(&c, "workspace/add-ref", 1)
            .await
            .contains("\ntext:Новая запись\n"),
        "indices shift after add"
    );
}

#[tokio::test]
async fn previews_change_nothing() {
    let (_gw, c) = setup().await;
    w(&c, json!({"mode": "add", "tab": "workspace/pv", "text": "Текст удаляемого элемента", "tags": ["tag1", "tag2"], "note": "n"})).await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/pv/sub", "text": "x"}),
    )
    .await;
    let mine = ["mcp/workspace/pv"];
    let before = dump(&mine);
    let cases = [
        (
            json!({"mode": "add", "tab": "workspace/pv", "text": "Описание задачи", "tags": ["task", "high-priority"], "note": "Срок: до конца недели", "intent": "preview"}),
            "preview|mode:add\ntab:workspace/pv\nwill_add:\ntext:\"Описание задачи\"\ntags:[task,high-priority]\nnote:\"Срок: до конца недели\"",
        ),
        (
            json!({"mode": "add", "tab": "workspace/pv-new", "text": "Тест", "intent": "preview"}),
            "preview|mode:add\ntab:workspace/pv-new\nwill_add:\ntext:\"Тест\"\ntags:[]",
        ),
        (
            json!({"mode": "delete", "tab": "workspace/pv", "index": 0, "intent": "preview"}),
            "preview|mode:delete\ntab:workspace/pv|index:0\nwill_delete:\ntext:\"Текст удаляемого элемента\"\ntags:[tag1,tag2] +note",
        ),
        (
            json!({"mode": "update", "tab": "workspace/pv", "index": 0, "field": "tags", "tags": ["tag3"], "edit_mode": "append", "intent": "preview"}),
            "preview|mode:update\ntab:workspace/pv|index:0|field:tags|edit_mode:append\nbefore:[tag1,tag2]\nafter:[tag1,tag2,tag3]",
        ),
        (
            json!({"mode": "update", "tab": "workspace/pv", "index": 0, "field": "text", "text": "Новый", "match": "Текст", "edit_mode": "substitute", "intent": "preview"}),
            "preview|mode:update\ntab:workspace/pv|index:0|field:text|edit_mode:substitute\nbefore:\"Текст удаляемого элемента\"\nafter:\"Новый удаляемого элемента\"",
        ),
        (
            json!({"mode": "move", "tab": "workspace/pv", "index": 0, "to_tab": "workspace/pv-target", "intent": "preview"}),
            "preview|mode:move\nfrom:mcp/workspace/pv|index:0|to:mcp/workspace/pv-target|new_index:0\nwill_move:\ntext:\"Текст удаляемого элемента\"\ntags:[tag1,tag2] +note",
        ),
        (
            json!({"mode": "tab_create", "path": "workspace/pv-made", "intent": "preview"}),
            "preview|mode:tab_create\nwill_create:mcp/workspace/pv-made",
        ),
        (
            json!({"mode": "tab_create", "path": "workspace/pv", "intent": "preview"}),
            "preview|mode:tab_create\nalready_exists:mcp/workspace/pv",
        ),
        (
            json!({"mode": "tab_delete", "path": "workspace/pv", "intent": "preview"}),
            "preview|mode:tab_delete\nwill_delete:mcp/workspace/pv\nitems_count:1\nwill_delete:mcp/workspace/pv/sub\nitems_count:1",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(w(&c, args.clone()).await, expected, "{args}");
    }
    assert_eq!(dump(&mine), before, "a preview changed CopyQ");
    let tabs = copyq_tabs(copyq());
    assert!(
        !tabs
            .iter()
            .any(|t| t.contains("pv-new") || t.contains("pv-target") || t.contains("pv-made")),
        "{tabs:?}"
    );
}

#[tokio::test]
async fn update_every_allowed_field_and_mode() {
    let (_gw, c) = setup().await;
    let tab = "workspace/upd";
    w(&c, json!({"mode": "add", "tab": tab, "text": "TODO: fix TODO", "tags": ["a", "b"], "note": "старое"})).await;
    let steps = [
        (
            json!({"field": "text", "text": "\n\nДополнение", "edit_mode": "append"}),
            "text",
        ),
        (
            json!({"field": "text", "text": "> ", "edit_mode": "prepend"}),
            "text",
        ),
        (
            json!({"field": "text", "text": "DONE", "match": "TODO", "edit_mode": "substitute"}),
            "text",
        ),
        (
            json!({"field": "tags", "tags": ["b", "c"], "edit_mode": "append"}),
            "tags",
        ),
        (
            json!({"field": "tags", "tags": ["a"], "edit_mode": "remove"}),
            "tags",
        ),
        (
            json!({"field": "note", "note": "\n---\nДобавлено", "edit_mode": "append"}),
            "note",
        ),
        (
            json!({"field": "note", "note": "ПРОВЕРЕНО", "match": "старое", "edit_mode": "substitute"}),
            "note",
        ),
        (
            json!({"field": "note", "note": "» ", "edit_mode": "prepend"}),
            "note",
        ),
    ];
    for (mut args, field) in steps {
        args["mode"] = json!("update");
        args["tab"] = json!(tab);
        args["index"] = json!(0);
        assert_eq!(
            w(&c, args).await,
            format!("ok|mode:update|tab:{tab}|full_path:mcp/{tab}|index:0|field:{field}")
        );
    }
    assert_eq!(
        item(&c, tab, 0).await,
        format!(
            "mode:item|tab:{tab}|full_path:mcp/{tab}|index:0\ntext:> DONE: fix DONE\n\nДополнение\ntags:[b,c]\nnote:» ПРОВЕРЕНО\n---\nДобавлено"
        )
    );
    // Each update as the item then reads, whole: text, tags, note.
    let item_is = |text: &str, tags: &str, note: &str| {
        format!(
            "mode:item|tab:{tab}|full_path:mcp/{tab}|index:0\ntext:{text}\ntags:{tags}\nnote:{note}"
        )
    };
    let old_note = "» ПРОВЕРЕНО\n---\nДобавлено";
    for (args, expected) in [
        (
            json!({"field": "text", "text": "Новый текст"}),
            item_is("Новый текст", "[b,c]", old_note),
        ),
        (
            json!({"field": "tags", "tags": ["new-tag1", "new-tag2"], "edit_mode": "replace"}),
            item_is("Новый текст", "[new-tag1,new-tag2]", old_note),
        ),
        (
            json!({"field": "note", "note": "Новая заметка"}),
            item_is("Новый текст", "[new-tag1,new-tag2]", "Новая заметка"),
        ),
        (
            json!({"field": "tags", "tags": []}),
            item_is("Новый текст", "[]", "Новая заметка"),
        ),
        (
            json!({"field": "note", "note": ""}),
            item_is("Новый текст", "[]", ""),
        ),
    ] {
        let mut call = args.clone();
        call["mode"] = json!("update");
        call["tab"] = json!(tab);
        call["index"] = json!(0);
        w(&c, call).await;
        assert_eq!(item(&c, tab, 0).await, expected, "{args}");
    }
    // An empty note removes it: without include_note there is no `+note` marker.
    assert_eq!(
        ok(
            &c,
            "mcp_read",
            json!({"mode": "item", "tab": tab, "index": 0})
        )
        .await,
        format!("mode:item|tab:{tab}|full_path:mcp/{tab}|index:0\ntext:Новый текст\ntags:[]"),
        "an empty note removes it"
    );
}

#[tokio::test]
async fn delete_move_and_tabs() {
    let (_gw, c) = setup().await;
    for t in ["C", "B", "A"] {
        w(&c, json!({"mode": "add", "tab": "workspace/dm", "text": t})).await;
    }
    assert_eq!(
        w(
            &c,
            json!({"mode": "delete", "tab": "workspace/dm", "index": 1})
        )
        .await,
        "ok|mode:delete|tab:workspace/dm|full_path:mcp/workspace/dm|index:1"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/dm"}),
    )
    .await;
    assert_eq!(
        got,
        "mode:list|tab:workspace/dm|full_path:mcp/workspace/dm|total:2|showing:0-1\n0|\"A\"|[]\n1|\"C\"|[]"
    );
    let got = w(
        &c,
        json!({"mode": "move", "tab": "workspace/dm", "index": 1, "to_tab": "workspace/dm-target"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:move|from:mcp/workspace/dm|to:mcp/workspace/dm-target|new_index:0"
    );
    assert!(
        item(&c, "workspace/dm-target", 0)
            .await
            .contains("\ntext:C\n")
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/dm"}),
    )
    .await;
    assert_eq!(
        got,
        "mode:list|tab:workspace/dm|full_path:mcp/workspace/dm|total:1|showing:0-0\n0|\"A\"|[]"
    );

    let got = w(
        &c,
        json!({"mode": "tab_create", "path": "workspace/new-project"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:tab_create|path:workspace/new-project|full_path:mcp/workspace/new-project|status:created"
    );
    let got = w(
        &c,
        json!({"mode": "tab_create", "path": "workspace/new-project"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:tab_create|path:workspace/new-project|full_path:mcp/workspace/new-project|status:already_exists"
    );
    w(
        &c,
        json!({"mode": "tab_create", "path": "workspace/new-project/subtask"}),
    )
    .await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/new-project/subtask", "text": "s"}),
    )
    .await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/new-project", "text": "p1"}),
    )
    .await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/new-project", "text": "p2"}),
    )
    .await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/new-projectX", "text": "not a sub-tab"}),
    )
    .await;
    let got = w(
        &c,
        json!({"mode": "tab_delete", "path": "workspace/new-project"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:tab_delete|path:workspace/new-project|full_path:mcp/workspace/new-project|items_removed:3|tabs_removed:2"
    );
    let tabs = copyq_tabs(copyq());
    assert!(
        !tabs.iter().any(
            |t| t.starts_with("mcp/workspace/new-project/") || t == "mcp/workspace/new-project"
        ),
        "{tabs:?}"
    );
    assert!(
        tabs.contains(&"mcp/workspace/new-projectX".to_owned()),
        "a sibling with the same prefix stays"
    );
    let got = w(
        &c,
        json!({"mode": "tab_delete", "path": "workspace/new-projectX"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:tab_delete|path:workspace/new-projectX|full_path:mcp/workspace/new-projectX|items_removed:1"
    );
}

#[tokio::test]
async fn managed_roots_accept_writes() {
    let (_gw, c) = setup().await;
    let got = w(
        &c,
        json!({"mode": "add", "tab": "заметки", "text": "Заметка", "note": "n"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:add|tab:заметки|full_path:mcp/заметки|index:0|text_len:7|tags:0|note:True"
    );
    let got = w(
        &c,
        json!({"mode": "add", "tab": "info", "text": "Новая запись"}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:add|tab:info|full_path:mcp/info|index:0|text_len:12|tags:0|note:False"
    );
}

#[tokio::test]
async fn every_error_code_changes_nothing() {
    let (_gw, c) = setup().await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/err", "text": "keep TODO", "tags": ["t"]}),
    )
    .await;
    copyq()
        .seed("архив-err", &items(&["external item"]))
        .expect("seed");
    let mine = [
        "mcp/workspace/err",
        "mcp/workspace/nonexistent",
        "mcp/workspace/never-was",
        "архив-err",
        "mcp/other-root",
        "mcp/info/",
        "mcp/заметки/",
    ];
    let before = dump(&mine);
    let cases = [
        (
            json!({"mode": "update", "tab": "workspace/nonexistent", "index": 0, "field": "text", "text": "x"}),
            "error|TAB_NOT_FOUND|Tab not found: workspace/nonexistent",
        ),
        (
            json!({"mode": "delete", "tab": "workspace/err", "index": 100}),
            "error|INDEX_OUT_OF_BOUNDS|Index 100 out of bounds (count: 1)",
        ),
        (
            json!({"mode": "delete", "tab": "workspace/err", "index": -1}),
            "error|INDEX_OUT_OF_BOUNDS|Index -1 out of bounds (count: 1)",
        ),
        (
            json!({"mode": "rename"}),
            "error|INVALID_MODE|Invalid mode 'rename' (expected one of: add, update, delete, move, tab_create, tab_delete)",
        ),
        (
            json!({"mode": "add", "tab": "workspace/err", "text": ""}),
            "error|INVALID_PARAM|Parameter 'text' must not be empty for mode 'add'",
        ),
        (
            json!({"mode": "add", "tab": "workspace/err", "text": "x", "intent": "maybe"}),
            "error|INVALID_PARAM|Parameter 'intent' must be one of: execute, preview (got 'maybe')",
        ),
        (
            json!({"mode": "update", "tab": "workspace/err", "index": 0, "field": "text", "edit_mode": "remove", "text": "x"}),
            "error|INVALID_PARAM|edit_mode 'remove' is not allowed for field 'text' (allowed: replace, append, prepend, substitute)",
        ),
        (
            json!({"mode": "add", "tab": "workspace/err", "text": "x", "tags": ["a,b"]}),
            "error|INVALID_PARAM|Tag 'a,b' contains a comma: CopyQ stores tags comma-separated, so it would become several tags",
        ),
        (
            json!({"mode": "update", "tab": "workspace/err", "index": 0, "field": "tags", "edit_mode": "append", "tags": ["x,y"]}),
            "error|INVALID_PARAM|Tag 'x,y' contains a comma: CopyQ stores tags comma-separated, so it would become several tags",
        ),
        (
            json!({"mode": "add", "tab": "архив-err", "text": "x", "scope": "external"}),
            "error|PERMISSION_DENIED|Operation 'add' not allowed on 'архив-err'",
        ),
        (
            json!({"mode": "delete", "tab": "архив-err", "index": 0, "scope": "all"}),
            "error|PERMISSION_DENIED|Operation 'delete' not allowed on 'архив-err'",
        ),
        (
            json!({"mode": "move", "tab": "workspace/err", "index": 0, "to_tab": "архив-err"}),
            "error|PERMISSION_DENIED|Operation 'move' not allowed on 'архив-err'",
        ),
        (
            json!({"mode": "tab_create", "path": "info/subtab"}),
            "error|PERMISSION_DENIED|Operation 'tab_create' not allowed on 'info/subtab'",
        ),
        (
            json!({"mode": "tab_create", "path": "заметки/sub"}),
            "error|PERMISSION_DENIED|Operation 'tab_create' not allowed on 'заметки/sub'",
        ),
        (
            json!({"mode": "tab_delete", "path": "info"}),
            "error|PERMISSION_DENIED|Operation 'tab_delete' not allowed on 'info'",
        ),
        (
            json!({"mode": "add", "tab": "other-root", "text": "x"}),
            "error|PERMISSION_DENIED|Operation 'add' not allowed on 'other-root'",
        ),
        (
            json!({"mode": "list"}),
            "error|INVALID_MODE|Invalid mode 'list' (expected one of: add, update, delete, move, tab_create, tab_delete)",
        ),
        (
            json!({"mode": "add", "tab": "workspace/err"}),
            "error|MISSING_PARAM|Parameter 'text' required for mode 'add'",
        ),
        (
            json!({"mode": "update", "tab": "workspace/err", "index": 0}),
            "error|MISSING_PARAM|Parameter 'field' required for mode 'update'",
        ),
        (
            json!({"mode": "update", "tab": "workspace/err", "index": 0, "field": "tags"}),
            "error|MISSING_PARAM|Parameter 'tags' required for mode 'update'",
        ),
        (
            json!({"mode": "move", "tab": "workspace/err", "index": 0}),
            "error|MISSING_PARAM|Parameter 'to_tab' required for mode 'move'",
        ),
        (
            json!({"mode": "tab_create"}),
            "error|MISSING_PARAM|Parameter 'path' required for mode 'tab_create'",
        ),
        (
            json!({"mode": "update", "tab": "workspace/err", "index": 0, "field": "text", "text": "x", "match": "old text", "edit_mode": "substitute"}),
            "error|MATCH_NOT_FOUND|Match string not found: 'old text'",
        ),
        (
            json!({"mode": "tab_delete", "path": "workspace/never-was"}),
            "error|TAB_NOT_FOUND|Tab not found: workspace/never-was",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(err(&c, "mcp_write", args.clone()).await, expected, "{args}");
    }
    assert_eq!(dump(&mine), before, "a refused write changed CopyQ");
}

#[tokio::test]
async fn validate_writes() {
    let (_gw, c) = setup().await;
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/val", "text": "x"}),
    )
    .await;
    let mine = ["mcp/workspace/val", "mcp/workspace/nonexistent"];
    let before = dump(&mine);
    let params = json!({"mode": "add", "tab": "workspace/val", "text": "Тест"});
    let reply = "ok|mode:add|tab:workspace/val|full_path:mcp/workspace/val|index:0|text_len:4|tags:0|note:False";
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "write", "params": params}),
    )
    .await;
    assert_eq!(
        got,
        format!(
            "valid:true|warnings:0|estimated_tokens:{}",
            reply.len().div_ceil(4)
        )
    );
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "write", "params": {"mode": "delete", "tab": "workspace/val", "index": 3}}),
    )
    .await;
    assert_eq!(
        got,
        "valid:false|errors:1\nerror|INDEX_OUT_OF_BOUNDS|Index 3 out of bounds (count: 1)"
    );
    let got = ok(&c, "mcp_validate", json!({"tool": "write", "params": {"mode": "update", "tab": "nonexistent", "index": 0, "field": "note", "note": "x"}})).await;
    assert_eq!(
        got,
        "valid:false|errors:1\nerror|PERMISSION_DENIED|Operation 'update' not allowed on 'nonexistent'"
    );
    let got = ok(&c, "mcp_validate", json!({"tool": "write", "params": {"mode": "update", "tab": "workspace/nonexistent", "index": 0, "field": "note", "note": "x"}})).await;
    assert_eq!(
        got,
        "valid:false|errors:1\nerror|TAB_NOT_FOUND|Tab not found: workspace/nonexistent"
    );
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "write", "params": {"mode": "tab_create", "path": "workspace/val-new"}}),
    )
    .await;
    let reply =
        "ok|mode:tab_create|path:workspace/val-new|full_path:mcp/workspace/val-new|status:created";
    assert_eq!(
        got,
        format!(
            "valid:true|warnings:0|estimated_tokens:{}",
            reply.len().div_ceil(4)
        )
    );
    assert_eq!(dump(&mine), before, "validation changed CopyQ");
    assert!(!copyq_tabs(copyq()).contains(&"mcp/workspace/val-new".to_owned()));
}

/// Opt-in versions: a write addressed by index is refused when another write shifted the item the
/// agent read; without the parameters, replies stay exactly as the reference gives them.
#[tokio::test]
async fn versions_guard_against_shifted_indices() {
    let (_gw, c) = setup().await;
    for t in ["target", "other"] {
        w(
            &c,
            json!({"mode": "add", "tab": "workspace/ver", "text": t}),
        )
        .await;
    }
    let listing = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/ver", "with_version": true}),
    )
    .await;
    let line = listing
        .lines()
        .find(|l| l.contains("\"target\""))
        .expect("target listed");
    assert!(line.starts_with("1|\"target\"|[]|v:"), "{listing}");
    let version = line.rsplit("|v:").next().expect("version").to_owned();
    assert_eq!(version.len(), 8);
    let item = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "workspace/ver", "index": 1, "with_version": true}),
    )
    .await;
    assert!(
        item.starts_with(&format!(
            "mode:item|tab:workspace/ver|full_path:mcp/workspace/ver|index:1|version:{version}\n"
        )),
        "{item}"
    );

    // Another client adds an item: "target" moves to index 2.
    w(
        &c,
        json!({"mode": "add", "tab": "workspace/ver", "text": "newcomer"}),
    )
    .await;
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "delete", "tab": "workspace/ver", "index": 1, "expected_version": version}),
    )
    .await;
    assert!(
        got.starts_with(
            "error|VERSION_MISMATCH|Item 1 of 'workspace/ver' is not the version you read"
        ),
        "{got}"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/ver"}),
    )
    .await;
    assert_eq!(
        got,
        "mode:list|tab:workspace/ver|full_path:mcp/workspace/ver|total:3|showing:0-2\n0|\"newcomer\"|[]\n1|\"other\"|[]\n2|\"target\"|[]",
        "nothing changed, and no versions unless asked"
    );
    let got = w(
        &c,
        json!({"mode": "delete", "tab": "workspace/ver", "index": 2, "expected_version": version}),
    )
    .await;
    assert_eq!(
        got,
        "ok|mode:delete|tab:workspace/ver|full_path:mcp/workspace/ver|index:2"
    );
    let got = err(
        &c,
        "mcp_write",
        json!({"mode": "add", "tab": "workspace/ver", "text": "x", "expected_version": version}),
    )
    .await;
    assert_eq!(
        got,
        "error|INVALID_PARAM|Parameter 'expected_version' applies to modes update, delete and move"
    );
}

/// A write token that covers one managed subtree writes there as any write token does; every
/// write outside it, to a tab that exists or not, is refused with the words used for tabs outside
/// the roots, and CopyQ is left as it was.
#[tokio::test]
async fn a_scoped_write_token_writes_only_in_its_subtree() {
    let (gw, owner) = setup().await;
    w(
        &owner,
        json!({"mode": "add", "tab": "workspace/scope-in", "text": "in"}),
    )
    .await;
    w(
        &owner,
        json!({"mode": "add", "tab": "workspace/scope-out", "text": "out"}),
    )
    .await;
    let token = token_covering(&gw, Role::Write, &["mcp/workspace/scope-in"]);
    let agent = client(&gw.url, &token).await;
    assert_eq!(
        w(
            &agent,
            json!({"mode": "add", "tab": "workspace/scope-in/sub", "text": "deeper"})
        )
        .await,
        "ok|mode:add|tab:workspace/scope-in/sub|full_path:mcp/workspace/scope-in/sub|index:0|text_len:6|tags:0|note:False"
    );
    let before = dump(&["mcp/workspace/scope-out", "mcp/info"]);
    for (args, tab) in [
        (
            json!({"mode": "add", "tab": "workspace/scope-out", "text": "x"}),
            "workspace/scope-out",
        ),
        (
            json!({"mode": "add", "tab": "workspace/scope-none", "text": "x"}),
            "workspace/scope-none",
        ),
        (
            json!({"mode": "move", "tab": "workspace/scope-in", "index": 0, "to_tab": "workspace/scope-out"}),
            "workspace/scope-out",
        ),
        (
            json!({"mode": "delete", "tab": "workspace/scope-out", "index": 0}),
            "workspace/scope-out",
        ),
        (
            json!({"mode": "tab_delete", "path": "workspace/scope-out"}),
            "workspace/scope-out",
        ),
        (
            json!({"mode": "tab_create", "path": "workspace/scope-new"}),
            "workspace/scope-new",
        ),
    ] {
        let mode = args["mode"].as_str().unwrap_or_default().to_owned();
        assert_eq!(
            err(&agent, "mcp_write", args.clone()).await,
            format!("error|PERMISSION_DENIED|Operation '{mode}' not allowed on '{tab}'"),
            "{args}"
        );
    }
    assert_eq!(dump(&["mcp/workspace/scope-out", "mcp/info"]), before);
    assert_eq!(
        err(
            &agent,
            "mcp_read",
            json!({"mode": "item", "tab": "workspace/scope-out", "index": 0})
        )
        .await,
        "error|TAB_NOT_FOUND|Tab not found: workspace/scope-out"
    );
    assert!(
        !copyq_tabs(copyq())
            .iter()
            .any(|t| t == "mcp/workspace/scope-new" || t == "mcp/workspace/scope-none")
    );
}
