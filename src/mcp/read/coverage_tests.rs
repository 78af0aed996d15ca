//! A caller who covers only some tabs sees exactly what it would see if the other tabs did not
//! exist: every mode, scope and error of `mcp_read` and `mcp_validate`, compared byte for byte
//! with the same call by an all-tabs caller against a CopyQ holding only the covered tabs.

use serde_json::{Map, Value, json};

use super::tests::data;
use crate::auth::{Principal, Role};
use crate::backend::{Backend, Item, MemoryBackend};
use crate::clipboard::{Coverage, Roots};
use crate::mcp::ToolState;

/// The tests' tabs, plus an external tab whose name is also a managed tab's shown name (with
/// scope all, a name that means both) and one whose name only differs by `&`.
fn tabs() -> Vec<(String, Vec<Item>)> {
    let mut tabs = data();
    tabs.push((
        "workspace/project1".into(),
        vec![Item::new("external twin", &[], "")],
    ));
    tabs.push(("&clipboard".into(), vec![Item::new("sk-secret", &[], "")]));
    tabs
}

fn tools_with(keep: impl Fn(&str) -> bool) -> ToolState {
    let tabs = tabs().into_iter().filter(|(n, _)| keep(n)).collect();
    ToolState::new(
        Backend::Memory(MemoryBackend::with_tabs(tabs)),
        Roots::default(),
    )
}

fn principal(tabs: Coverage) -> Principal {
    Principal {
        subject: "agent".into(),
        role: Role::Write,
        token_id: "j".into(),
        grant: None,
        tabs,
        expires: None,
    }
}

fn map(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

async fn read(tools: &ToolState, tabs: &Coverage, args: &Value) -> String {
    super::call(tools, tabs, &map(args))
        .await
        .map_or_else(|e| e.line(), |r| r.text)
}

async fn validate(tools: &ToolState, who: &Principal, args: &Value) -> String {
    crate::mcp::validate::call(tools, who, &map(&json!({"tool": "read", "params": args})))
        .await
        .unwrap_or_else(|e| e.line())
}

/// Every read worth asking: each mode in each scope, names inside and outside the coverage
/// (managed, external, the twin, missing ones), searches that would match hidden items.
fn reads() -> Vec<Value> {
    let mut out = Vec::new();
    for scope in ["mcp", "all", "external"] {
        out.push(json!({"mode": "tree", "scope": scope, "max_depth": 10, "max_items": 50}));
        for query in ["TODO", "secret", ".", "twin"] {
            out.push(json!({"mode": "search", "query": query, "scope": scope, "max_items": 50}));
        }
        for tab in [
            "info",
            "workspace",
            "workspace/project1",
            "workspace/project1/deep",
            "mcp/workspace/project1",
            "архив",
            "личное/проекты/web",
            "&clipboard",
            "clipboard",
            "missing",
        ] {
            out.push(json!({"mode": "list", "tab": tab, "scope": scope}));
            out.push(json!({"mode": "item", "tab": tab, "scope": scope, "index": 0}));
            out.push(json!({"mode": "item", "tab": tab, "scope": scope, "index": 7}));
        }
    }
    out
}

async fn same_as_without_the_rest(words: &[&str]) {
    let coverage = Coverage::parse(words.iter().copied()).expect("a coverage");
    let scoped = tools_with(|_| true);
    let only_covered = tools_with(|n| coverage.covers(n));
    let (who, everyone) = (principal(coverage.clone()), principal(Coverage::All));
    let mut differed_from_unscoped = 0;
    for args in reads() {
        let got = read(&scoped, &coverage, &args).await;
        let want = read(&only_covered, &Coverage::All, &args).await;
        assert_eq!(got, want, "{words:?} {args}");
        if got != read(&scoped, &Coverage::All, &args).await {
            differed_from_unscoped += 1;
        }
        assert_eq!(
            validate(&scoped, &who, &args).await,
            validate(&only_covered, &everyone, &args).await,
            "validate {words:?} {args}"
        );
    }
    // The comparison means something: the coverage did hide things.
    assert!(
        differed_from_unscoped > 10,
        "{words:?}: {differed_from_unscoped}"
    );
}

#[tokio::test]
async fn managed_only_hides_every_external_tab() {
    same_as_without_the_rest(&["managed"]).await;
}

#[tokio::test]
async fn a_subtree_and_an_external_tab() {
    same_as_without_the_rest(&["mcp/workspace/project1", "архив"]).await;
}

#[tokio::test]
async fn one_external_tab_only() {
    same_as_without_the_rest(&["workspace/project1"]).await;
}

#[tokio::test]
async fn a_deep_subtree_only() {
    same_as_without_the_rest(&["mcp/workspace/project1/deep", "&clipboard"]).await;
}

#[tokio::test]
async fn out_of_scope_names_are_not_found_like_missing_ones() {
    let tools = tools_with(|_| true);
    let managed = Coverage::managed();
    for (tab, scope) in [("&clipboard", "external"), ("архив", "all")] {
        assert_eq!(
            read(
                &tools,
                &managed,
                &json!({"mode": "list", "tab": tab, "scope": scope})
            )
            .await,
            format!("error|TAB_NOT_FOUND|Tab not found: {tab}"),
        );
    }
    assert_eq!(
        read(
            &tools,
            &managed,
            &json!({"mode": "list", "tab": "nope", "scope": "external"})
        )
        .await,
        "error|TAB_NOT_FOUND|Tab not found: nope"
    );
    assert_eq!(
        read(
            &tools,
            &managed,
            &json!({"mode": "tree", "scope": "external"})
        )
        .await,
        ""
    );
}
