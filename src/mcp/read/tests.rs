//! `mcp_read` over the in-memory backend: every mode and scope, search paging and field choice,
//! and the errors, with the replies the reference fixes. A place to start from for a bug in the
//! read path, without CopyQ. The data is a copy of what tests/copyq/read.rs seeds into a real
//! CopyQ, kept in step by hand; that suite also has a `regex-stress` tab and CopyQ's own clipboard
//! tab, so its replies over external tabs differ, and its tests are its own.

use serde_json::{Value, json};

use crate::backend::{Backend, Item, MemoryBackend};
use crate::clipboard::{Coverage, Roots};
use crate::mcp::ToolState;

const LONG: &str = "Long: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
const SPECIAL: &str = "pipe | and \"quotes\" \\ backslash 😀";

/// The tabs of these tests, by CopyQ name (tests/copyq/read.rs seeds a copy, plus one tab).
pub(super) fn data() -> Vec<(String, Vec<Item>)> {
    let mut info = vec![
        Item::new(
            "Первый элемент текст\nвторая строка",
            &["important", "task"],
            "Заметка к элементу.\nВторая строка.",
        ),
        Item::new(LONG, &[], ""),
        Item::new(SPECIAL, &[], ""),
    ];
    info.extend((3..25).map(|i| Item::new(&format!("item {i}"), &[], "")));
    vec![
        ("mcp/info".into(), info),
        (
            "mcp/заметки".into(),
            vec![Item::new(
                "Заметка о встрече TODO",
                &[],
                "встреча в пятницу",
            )],
        ),
        (
            "mcp/workspace".into(),
            vec![Item::new("Проект Alpha", &["project", "active"], "")],
        ),
        (
            "mcp/workspace/project1".into(),
            vec![
                Item::new("TODO: исправить баг", &["bug", "todo"], ""),
                Item::new("Описание проекта", &["doc"], ""),
            ],
        ),
        (
            "mcp/workspace/project1/deep".into(),
            vec![Item::new("deep item", &[], "")],
        ),
        (
            "архив".into(),
            vec![
                Item::new("Старые данные", &["2023"], ""),
                Item::new("Важный документ TODO", &[], "n"),
            ],
        ),
        (
            "личное/проекты/web".into(),
            vec![Item::new("web TODO", &["web"], "")],
        ),
    ]
}

fn tools() -> ToolState {
    ToolState::new(
        Backend::Memory(MemoryBackend::with_tabs(data())),
        Roots::default(),
    )
}

/// The reply of `mcp_read` with `args`: the text, or the error line.
async fn read(args: Value) -> String {
    read_covering(&Coverage::All, args).await
}

/// The same for a caller who covers only `tabs`.
async fn read_covering(tabs: &Coverage, args: Value) -> String {
    let map = args.as_object().cloned().unwrap_or_default();
    match super::call(&tools(), tabs, &map).await {
        Ok(reply) => reply.text,
        Err(e) => e.line(),
    }
}

fn item_lines(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|i| format!("{i}|\"item {i}\"|[]")).collect()
}

#[tokio::test]
async fn tree_of_managed_tabs_by_default() {
    let got = read(json!({"mode": "tree"})).await;
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines[0], "info [25]");
    assert_eq!(
        lines[1],
        "0:|\"Первый элемент текст вторая строка\"|[important,task]|+note"
    );
    assert_eq!(lines[20], "19:|\"item 19\"|[]");
    assert_eq!(
        lines[21..].join("\n"),
        "workspace [1]\n0:|\"Проект Alpha\"|[project,active]\nworkspace/project1 [2]\n0:|\"TODO: исправить баг\"|[bug,todo]\n1:|\"Описание проекта\"|[doc]\nзаметки [1]\n0:|\"Заметка о встрече TODO\"|[]|+note"
    );
}

#[tokio::test]
async fn tree_scopes_depth_and_structure_only() {
    assert_eq!(
        read(json!({"mode": "tree", "max_items": 0, "max_depth": 1})).await,
        "info [25]\nworkspace [1]\nзаметки [1]"
    );
    assert_eq!(
        read(json!({"mode": "tree", "scope": "external", "include_text": false, "max_items": 0, "max_depth": 10})).await,
        "архив [2] [external]\nличное/проекты/web [1] [external]"
    );
    let all = read(json!({"mode": "tree", "scope": "all", "max_depth": 5, "max_items": 1})).await;
    let headers: Vec<&str> = all.lines().filter(|l| l.contains(" [")).collect();
    assert_eq!(
        headers,
        [
            "info [25]",
            "workspace [1]",
            "workspace/project1 [2]",
            "workspace/project1/deep [1]",
            "заметки [1]",
            "архив [2] [external]",
            "личное/проекты/web [1] [external]"
        ]
    );
}

#[tokio::test]
async fn list_pages_and_bounds() {
    let mut first = vec![
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:0-19".to_owned(),
        "0|\"Первый элемент текст вторая строка\"|[important,task]|+note".into(),
        format!("1|\"{}...\"|[]", &LONG[..77]),
        format!("2|\"{SPECIAL}\"|[]"),
    ];
    first.extend(item_lines(3..20));
    assert_eq!(
        read(json!({"mode": "list", "tab": "info"})).await,
        first.join("\n")
    );
    let mut last = vec!["mode:list|tab:info|full_path:mcp/info|total:25|showing:20-24".to_owned()];
    last.extend(item_lines(20..25));
    assert_eq!(
        read(json!({"mode": "list", "tab": "info", "skip": 20, "max_items": 10})).await,
        last.join("\n")
    );
    assert_eq!(
        read(json!({"mode": "list", "tab": "info", "skip": 30})).await,
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:none"
    );
    assert_eq!(
        read(json!({"mode": "list", "tab": "info", "skip": "3", "max_items": "1"})).await,
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:3-3\n3|\"item 3\"|[]"
    );
}

#[tokio::test]
async fn list_parts_and_external_tabs() {
    assert_eq!(
        read(json!({"mode": "list", "tab": "info", "max_items": 1, "include_note": true})).await,
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:0-0\n0|\"Первый элемент текст вторая строка\"|[important,task]|note:Заметка к элементу. Вторая строка."
    );
    assert_eq!(
        read(json!({"mode": "list", "tab": "info", "max_items": 1, "include_text": false, "include_tags": false})).await,
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:0-0\n0|+note"
    );
    let archive = "mode:list|tab:архив|scope:external|total:2|showing:0-1\n0|\"Старые данные\"|[2023]\n1|\"Важный документ TODO\"|[]|+note";
    for scope in ["external", "all"] {
        assert_eq!(
            read(json!({"mode": "list", "tab": "архив", "scope": scope})).await,
            archive,
            "{scope}"
        );
    }
    // Scope mcp never reaches an external tab (but says that one exists), and scope external
    // never a managed one.
    assert_eq!(
        read(json!({"mode": "list", "tab": "архив"})).await,
        "error|TAB_NOT_FOUND|Tab not found: архив (under mcp/; an external tab 'архив' exists: pass scope: \"external\" or \"all\" to read it)"
    );
    assert!(
        read(json!({"mode": "list", "tab": "info", "scope": "external"}))
            .await
            .starts_with("error|")
    );
}

#[tokio::test]
async fn item_with_and_without_its_note() {
    assert_eq!(
        read(json!({"mode": "item", "tab": "info", "index": 0, "include_note": true})).await,
        "mode:item|tab:info|full_path:mcp/info|index:0\ntext:Первый элемент текст\nвторая строка\ntags:[important,task]\nnote:Заметка к элементу.\nВторая строка."
    );
    assert_eq!(
        read(json!({"mode": "item", "tab": "info", "index": 0})).await,
        "mode:item|tab:info|full_path:mcp/info|index:0\ntext:Первый элемент текст\nвторая строка\ntags:[important,task]\n+note"
    );
    assert_eq!(
        read(json!({"mode": "item", "tab": "архив", "index": 1, "scope": "external", "include_note": true})).await,
        "mode:item|tab:архив|scope:external|index:1\ntext:Важный документ TODO\ntags:[]\nnote:n"
    );
    for (index, line) in [
        (
            25,
            "error|INDEX_OUT_OF_BOUNDS|Index 25 out of bounds (count: 25)",
        ),
        (
            -1,
            "error|INDEX_OUT_OF_BOUNDS|Index -1 out of bounds (count: 25)",
        ),
    ] {
        assert_eq!(
            read(json!({"mode": "item", "tab": "info", "index": index})).await,
            line
        );
    }
    assert_eq!(
        read(json!({"mode": "item", "tab": "workspace/ghost", "index": 0})).await,
        "error|TAB_NOT_FOUND|Tab not found: workspace/ghost"
    );
}

#[tokio::test]
async fn search_scopes_and_paging() {
    assert_eq!(
        read(json!({"mode": "search", "query": "TODO"})).await,
        "mode:search|query:TODO|scope:mcp|results:2\nworkspace/project1[0]|\"TODO: исправить баг\"|[bug,todo]|match:text,tags\nзаметки[0]|\"Заметка о встрече TODO\"|[]|match:text"
    );
    assert_eq!(
        read(json!({"mode": "search", "query": "todo", "scope": "all"})).await,
        [
            "mode:search|query:todo|scope:all|results:4",
            "workspace/project1[0]|\"TODO: исправить баг\"|[bug,todo]|match:text,tags",
            "заметки[0]|\"Заметка о встрече TODO\"|[]|match:text",
            "архив[1]|\"Важный документ TODO\"|[]|match:text|external",
            "личное/проекты/web[0]|\"web TODO\"|[web]|match:text|external",
        ]
        .join("\n")
    );
    assert_eq!(
        read(json!({"mode": "search", "query": "todo", "scope": "external", "max_items": 1, "skip": 1})).await,
        "mode:search|query:todo|scope:external|results:2|showing:1-1\nличное/проекты/web[0]|\"web TODO\"|[web]|match:text|external"
    );
    assert_eq!(
        read(json!({"mode": "search", "query": "todo", "scope": "all", "skip": 10})).await,
        "mode:search|query:todo|scope:all|results:4|showing:none"
    );
}

#[tokio::test]
async fn search_in_one_field_and_bad_patterns() {
    assert_eq!(
        read(json!({"mode": "search", "query": "^todo$", "search_in": "tags"})).await,
        "mode:search|query:^todo$|scope:mcp|results:1\nworkspace/project1[0]|\"TODO: исправить баг\"|[bug,todo]|match:tags"
    );
    assert_eq!(
        read(json!({"mode": "search", "query": "ВСТРЕЧА В", "search_in": "note"})).await,
        "mode:search|query:ВСТРЕЧА В|scope:mcp|results:1\nзаметки[0]|\"Заметка о встрече TODO\"|[]|match:note"
    );
    assert_eq!(
        read(json!({"mode": "search", "query": "error|warning", "scope": "all"})).await,
        "mode:search|query:error|warning|scope:all|results:0"
    );
    assert_eq!(
        read(json!({"mode": "search", "query": ""})).await,
        "error|INVALID_PARAM|Parameter 'query' must not be empty"
    );
    assert!(
        read(json!({"mode": "search", "query": "("}))
            .await
            .starts_with("error|INVALID_PARAM|Invalid regex '(':")
    );
}

#[tokio::test]
async fn bad_modes_and_parameters() {
    assert_eq!(
        read(json!({"mode": "grep"})).await,
        "error|INVALID_MODE|Invalid mode 'grep' (expected one of: tree, list, item, search)"
    );
    assert_eq!(
        read(json!({"mode": "list"})).await,
        "error|MISSING_PARAM|Parameter 'tab' required for mode 'list'"
    );
    assert_eq!(
        read(json!({"mode": "tree", "max_depth": 0})).await,
        "error|INVALID_PARAM|Parameter 'max_depth' must be between 1 and 10 (got 0)"
    );
}

#[tokio::test]
async fn a_search_waits_its_turn_while_the_whole_reads_are_taken() {
    use std::time::Duration;
    let tools = tools();
    let taken = tools
        .whole_reads
        .clone()
        .try_acquire_many_owned(crate::mcp::WHOLE_READS as u32)
        .expect("every turn free");
    let args = |v: Value| v.as_object().cloned().unwrap_or_default();
    // A listing reads a window of one tab: it never waits for a turn.
    let list = args(json!({"mode": "list", "tab": "info", "max_items": 1}));
    let listed = tokio::time::timeout(
        Duration::from_secs(5),
        super::call(&tools, &Coverage::All, &list),
    )
    .await
    .expect("a listing waited for a search's turn");
    assert!(listed.is_ok());
    let search = args(json!({"mode": "search", "query": "TODO"}));
    let search = super::call(&tools, &Coverage::All, &search);
    tokio::pin!(search);
    assert!(
        tokio::time::timeout(Duration::from_millis(200), &mut search)
            .await
            .is_err(),
        "a search read its whole scope without a turn"
    );
    drop(taken);
    let reply = tokio::time::timeout(Duration::from_secs(5), search)
        .await
        .expect("the search never got its turn")
        .expect("search");
    assert!(
        reply
            .text
            .starts_with("mode:search|query:TODO|scope:mcp|results:2\n")
    );
    // Its items are freed after the reply, on another thread, and its turn comes back with them.
    tokio::time::timeout(Duration::from_secs(5), async {
        while tools.whole_reads.available_permits() < crate::mcp::WHOLE_READS {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("a search kept its turn after its reply");
}
