//! Writes by a caller who covers only some tabs: outside its coverage every write is refused with
//! the words used for tabs outside the writable roots, whether or not the tab exists, before
//! anything is read or changed; inside it, writes work as for anyone.

use serde_json::{Map, Value, json};

use crate::auth::{Principal, Role};
use crate::backend::{Backend, Item, MemoryBackend, ReadRequest, TabSelector};
use crate::clipboard::{Coverage, Roots};
use crate::mcp::ToolState;

fn setup() -> (std::sync::Arc<ToolState>, MemoryBackend) {
    let mem = MemoryBackend::with_tabs(vec![
        ("mcp/info".into(), vec![Item::new("i", &[], "")]),
        ("mcp/workspace/p".into(), vec![Item::new("p0", &[], "")]),
        ("mcp/workspace/q".into(), vec![Item::new("q0", &[], "")]),
        ("&mcp/workspace/p/kh".into(), vec![]),
        ("&mcp/workspace/r".into(), vec![]),
    ]);
    (
        std::sync::Arc::new(ToolState::new(
            Backend::Memory(mem.clone()),
            Roots::default(),
        )),
        mem,
    )
}

fn agent(words: &[&str]) -> Principal {
    Principal {
        subject: "agent".into(),
        role: Role::Write,
        token_id: "j".into(),
        grant: None,
        tabs: Coverage::parse(words.iter().copied()).expect("a coverage"),
        expires: None,
    }
}

fn map(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

async fn write(tools: &std::sync::Arc<ToolState>, who: &Principal, args: Value) -> String {
    super::call(tools, who, &map(args))
        .await
        .unwrap_or_else(|e| e.line())
}

async fn validate(tools: &ToolState, who: &Principal, args: Value) -> String {
    crate::mcp::validate::call(tools, who, &map(json!({"tool": "write", "params": args})))
        .await
        .unwrap_or_else(|e| e.line())
}

fn everything(mem: &MemoryBackend) -> Vec<(String, Vec<String>)> {
    let all = ReadRequest {
        tabs: TabSelector::All {},
        skip: 0,
        limit: None,
        preview: None,
    };
    let mut tabs: Vec<_> = mem
        .read(&all)
        .expect("read")
        .pages
        .into_iter()
        .map(|p| (p.name, p.items.into_iter().map(|i| i.text).collect()))
        .collect();
    tabs.sort();
    tabs
}

#[tokio::test]
async fn writes_outside_the_subtree_are_denied_whether_or_not_the_tab_exists() {
    let (tools, mem) = setup();
    let before = everything(&mem);
    let who = agent(&["mcp/workspace/p"]);
    for (args, tab, mode) in [
        (
            json!({"mode": "add", "tab": "info", "text": "x"}),
            "info",
            "add",
        ),
        (
            json!({"mode": "add", "tab": "workspace/q", "text": "x"}),
            "workspace/q",
            "add",
        ),
        (
            json!({"mode": "add", "tab": "workspace/none", "text": "x"}),
            "workspace/none",
            "add",
        ),
        (
            json!({"mode": "delete", "tab": "workspace/q", "index": 0}),
            "workspace/q",
            "delete",
        ),
        (
            json!({"mode": "delete", "tab": "workspace/none", "index": 0}),
            "workspace/none",
            "delete",
        ),
        (
            json!({"mode": "update", "tab": "info", "index": 0, "field": "text", "edit_mode": "replace", "text": "y"}),
            "info",
            "update",
        ),
        (
            json!({"mode": "move", "tab": "workspace/p", "index": 0, "to_tab": "workspace/q"}),
            "workspace/q",
            "move",
        ),
        (
            json!({"mode": "move", "tab": "workspace/q", "index": 0, "to_tab": "workspace/p"}),
            "workspace/q",
            "move",
        ),
        (
            json!({"mode": "tab_create", "path": "workspace/new"}),
            "workspace/new",
            "tab_create",
        ),
        (
            json!({"mode": "tab_delete", "path": "workspace/q"}),
            "workspace/q",
            "tab_delete",
        ),
        (
            json!({"mode": "tab_delete", "path": "workspace/none"}),
            "workspace/none",
            "tab_delete",
        ),
        (
            json!({"mode": "add", "tab": "workspace/q", "text": "x", "intent": "preview"}),
            "workspace/q",
            "add",
        ),
    ] {
        let want = format!("error|PERMISSION_DENIED|Operation '{mode}' not allowed on '{tab}'");
        assert_eq!(write(&tools, &who, args.clone()).await, want, "{args}");
        assert_eq!(
            validate(&tools, &who, args.clone()).await,
            format!("valid:false|errors:1\n{want}"),
            "{args}"
        );
    }
    assert_eq!(everything(&mem), before, "nothing changed");
}

#[tokio::test]
async fn writes_inside_work_as_for_anyone() {
    let (tools, mem) = setup();
    let who = agent(&["mcp/workspace/p"]);
    let everyone = agent(&["all"]);
    let ok = write(
        &tools,
        &who,
        json!({"mode": "add", "tab": "workspace/p", "text": "new"}),
    )
    .await;
    assert!(ok.starts_with("ok|"), "{ok}");
    assert_eq!(
        write(
            &tools,
            &who,
            json!({"mode": "tab_create", "path": "workspace/p/sub"})
        )
        .await,
        "ok|mode:tab_create|path:workspace/p/sub|full_path:mcp/workspace/p/sub|status:created"
    );
    // The same call by an all-tabs caller now finds it made.
    assert_eq!(
        write(
            &tools,
            &everyone,
            json!({"mode": "tab_create", "path": "workspace/p/sub"})
        )
        .await,
        "ok|mode:tab_create|path:workspace/p/sub|full_path:mcp/workspace/p/sub|status:already_exists"
    );
    assert!(
        everything(&mem).contains(&("mcp/workspace/p".into(), vec!["new".into(), "p0".into()]))
    );
    assert!(
        everything(&mem)
            .iter()
            .any(|(n, _)| n == "mcp/workspace/p/sub")
    );
}

#[tokio::test]
async fn a_tab_outside_the_coverage_is_not_named_in_a_clash() {
    let (tools, mem) = setup();
    let before = everything(&mem);
    // "&mcp/workspace/p/kh" is external, outside this agent's coverage.
    assert_eq!(
        write(
            &tools,
            &agent(&["mcp/workspace/p"]),
            json!({"mode": "add", "tab": "workspace/p/kh", "text": "x"})
        )
        .await,
        "error|PERMISSION_DENIED|Tab 'workspace/p/kh' does not exist, and CopyQ would write to another existing \
         tab instead (CopyQ ignores '&' in tab names); nothing was changed. Use another name"
    );
    // Covered, it is named as before.
    assert_eq!(
        write(
            &tools,
            &agent(&["mcp/workspace/p", "&mcp/workspace/p/kh"]),
            json!({"mode": "add", "tab": "workspace/p/kh", "text": "x"})
        )
        .await,
        "error|PERMISSION_DENIED|Tab 'workspace/p/kh' does not exist, and CopyQ would write to its existing tab \
         '&mcp/workspace/p/kh' instead (CopyQ ignores '&' in tab names); nothing was changed. Rename that tab or use another name"
    );
    assert_eq!(everything(&mem), before);
}
