//! `mcp_read` against a real CopyQ through a real MCP client: every mode and scope, replies
//! asserted byte for byte where the reference fixes them. Nothing in this suite writes (and it has a CopyQ of its own), so the
//! seeded data below is exactly what every test sees.

use std::sync::Once;
use std::time::{Duration, Instant};

use crate::support::*;
use serde_json::json;

/// This suite's own private CopyQ, started on first use.
fn copyq() -> &'static PrivateCopyq {
    static COPYQ: std::sync::OnceLock<PrivateCopyq> = std::sync::OnceLock::new();
    private_copyq(&COPYQ)
}

const LONG: &str = "Long: xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx";
const SPECIAL: &str = "pipe | and \"quotes\" \\ backslash 😀";

fn seeded() -> &'static PrivateCopyq {
    static SEED: Once = Once::new();
    let c = copyq();
    SEED.call_once(|| {
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
        let tabs: Vec<(&str, Vec<Item>)> = vec![
            ("mcp/info", info),
            (
                "mcp/заметки",
                vec![Item::new(
                    "Заметка о встрече TODO",
                    &[],
                    "встреча в пятницу",
                )],
            ),
            (
                "mcp/workspace",
                vec![Item::new("Проект Alpha", &["project", "active"], "")],
            ),
            (
                "mcp/workspace/project1",
                vec![
                    Item::new("TODO: исправить баг", &["bug", "todo"], ""),
                    Item::new("Описание проекта", &["doc"], ""),
                ],
            ),
            ("mcp/workspace/project1/deep", items(&["deep item"])),
            (
                "архив",
                vec![
                    Item::new("Старые данные", &["2023"], ""),
                    Item::new("Важный документ TODO", &[], "n"),
                ],
            ),
            (
                "личное/проекты/web",
                vec![Item::new("web TODO", &["web"], "")],
            ),
            (
                "regex-stress",
                vec![Item::new(&format!("{}!", "a".repeat(30_000)), &[], "")],
            ),
        ];
        for (tab, items) in tabs {
            c.seed(tab, &items).expect("seed");
        }
    });
    c
}

fn clipboard_tab() -> String {
    seeded()
        .eval("print(config('clipboard_tab'))", b"")
        .expect("clipboard tab name")
}

async fn setup() -> (Gateway, Client) {
    let gw = gateway(seeded()).await;
    let c = client(&gw.url, &gw.read).await;
    (gw, c)
}

/// `list` of the whole `info` tab, written out from the seed (not from a reply).
fn whole_info_list() -> String {
    let mut lines = vec![
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:0-24".to_owned(),
        "0|\"Первый элемент текст вторая строка\"|[important,task]|+note".into(),
        format!("1|\"{}...\"|[]", &LONG[..77]),
        format!("2|\"{SPECIAL}\"|[]"),
    ];
    lines.extend(item_lines(3..25, ""));
    lines.join("\n")
}

fn item_lines(range: std::ops::Range<usize>, sep: &str) -> Vec<String> {
    range.map(|i| format!("{i}{sep}|\"item {i}\"|[]")).collect()
}

#[tokio::test]
async fn tree_of_managed_tabs() {
    let (_gw, c) = setup().await;
    let got = ok(&c, "mcp_read", json!({"mode": "tree", "max_items": 3})).await;
    let expected = [
        "info [25]",
        "0:|\"Первый элемент текст вторая строка\"|[important,task]|+note",
        &format!("1:|\"{}...\"|[]", &LONG[..77]),
        &format!("2:|\"{SPECIAL}\"|[]"),
        "workspace [1]",
        "0:|\"Проект Alpha\"|[project,active]",
        "workspace/project1 [2]",
        "0:|\"TODO: исправить баг\"|[bug,todo]",
        "1:|\"Описание проекта\"|[doc]",
        "заметки [1]",
        "0:|\"Заметка о встрече TODO\"|[]|+note",
    ]
    .join("\n");
    assert_eq!(got, expected);
}

#[tokio::test]
async fn tree_defaults_show_twenty_items_per_tab() {
    let (_gw, c) = setup().await;
    let got = ok(&c, "mcp_read", json!({"mode": "tree"})).await;
    let lines: Vec<&str> = got.lines().collect();
    assert_eq!(lines[0], "info [25]");
    assert_eq!(lines[20], "19:|\"item 19\"|[]");
    assert_eq!(lines[21], "workspace [1]");
    assert!(!got.contains("deep"), "max_depth 2 hides depth 3: {got}");
}

#[tokio::test]
async fn tree_of_all_tabs_marks_external_ones() {
    let (_gw, c) = setup().await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "tree", "scope": "all", "max_depth": 5, "max_items": 1}),
    )
    .await;
    let expected = [
        "info [25]".to_owned(),
        "0:|\"Первый элемент текст вторая строка\"|[important,task]|+note".into(),
        "workspace [1]".into(),
        "0:|\"Проект Alpha\"|[project,active]".into(),
        "workspace/project1 [2]".into(),
        "0:|\"TODO: исправить баг\"|[bug,todo]".into(),
        "workspace/project1/deep [1]".into(),
        "0:|\"deep item\"|[]".into(),
        "заметки [1]".into(),
        "0:|\"Заметка о встрече TODO\"|[]|+note".into(),
        format!("{} [0] [external]", clipboard_tab()),
        "regex-stress [1] [external]".into(),
        format!("0:|\"{}...\"|[]", "a".repeat(77)),
        "архив [2] [external]".into(),
        "0:|\"Старые данные\"|[2023]".into(),
        "личное/проекты/web [1] [external]".into(),
        "0:|\"web TODO\"|[web]".into(),
    ]
    .join("\n");
    assert_eq!(got, expected);
}

#[tokio::test]
async fn tree_structure_only() {
    let (_gw, c) = setup().await;
    let args = json!({"mode": "tree", "scope": "external", "include_text": false, "max_items": 0, "max_depth": 10});
    let got = ok(&c, "mcp_read", args).await;
    let expected = format!(
        "{} [0] [external]\nregex-stress [1] [external]\nархив [2] [external]\nличное/проекты/web [1] [external]",
        clipboard_tab()
    );
    assert_eq!(got, expected);
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "tree", "max_items": 0, "max_depth": 1}),
    )
    .await;
    assert_eq!(got, "info [25]\nworkspace [1]\nзаметки [1]");
}

#[tokio::test]
async fn list_first_page() {
    let (_gw, c) = setup().await;
    let got = ok(&c, "mcp_read", json!({"mode": "list", "tab": "info"})).await;
    let mut expected = vec![
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:0-19".to_owned(),
        "0|\"Первый элемент текст вторая строка\"|[important,task]|+note".into(),
        format!("1|\"{}...\"|[]", &LONG[..77]),
        format!("2|\"{SPECIAL}\"|[]"),
    ];
    expected.extend(item_lines(3..20, ""));
    assert_eq!(got, expected.join("\n"));
}

#[tokio::test]
async fn list_pages_and_bounds() {
    let (_gw, c) = setup().await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "info", "skip": 20, "max_items": 10}),
    )
    .await;
    let mut expected =
        vec!["mode:list|tab:info|full_path:mcp/info|total:25|showing:20-24".to_owned()];
    expected.extend(item_lines(20..25, ""));
    assert_eq!(got, expected.join("\n"));
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "info", "skip": 30}),
    )
    .await;
    assert_eq!(
        got,
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:none"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "info", "skip": "3", "max_items": "1"}),
    )
    .await;
    assert_eq!(
        got,
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:3-3\n3|\"item 3\"|[]"
    );
}

#[tokio::test]
async fn list_with_notes_and_without_parts() {
    let (_gw, c) = setup().await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "info", "max_items": 1, "include_note": true}),
    )
    .await;
    assert_eq!(
        got,
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:0-0\n0|\"Первый элемент текст вторая строка\"|[important,task]|note:Заметка к элементу. Вторая строка."
    );
    let args = json!({"mode": "list", "tab": "info", "max_items": 1, "include_text": false, "include_tags": false});
    let got = ok(&c, "mcp_read", args).await;
    assert_eq!(
        got,
        "mode:list|tab:info|full_path:mcp/info|total:25|showing:0-0\n0|+note"
    );
}

#[tokio::test]
async fn list_external_tabs() {
    let (_gw, c) = setup().await;
    let expected = "mode:list|tab:архив|scope:external|total:2|showing:0-1\n0|\"Старые данные\"|[2023]\n1|\"Важный документ TODO\"|[]|+note";
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "архив", "scope": "external"}),
    )
    .await;
    assert_eq!(got, expected);
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "архив", "scope": "all"}),
    )
    .await;
    assert_eq!(got, expected);
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "личное/проекты/web", "scope": "external", "max_items": 5}),
    )
    .await;
    assert_eq!(
        got,
        "mode:list|tab:личное/проекты/web|scope:external|total:1|showing:0-0\n0|\"web TODO\"|[web]"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/project1", "scope": "all"}),
    )
    .await;
    assert!(got.starts_with("mode:list|tab:workspace/project1|full_path:mcp/workspace/project1|total:2|showing:0-1\n"), "{got}");
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "mcp/workspace", "max_items": 1}),
    )
    .await;
    assert!(
        got.starts_with("mode:list|tab:workspace|full_path:mcp/workspace|total:1|"),
        "{got}"
    );
}

#[tokio::test]
async fn item_in_full() {
    let (_gw, c) = setup().await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "info", "index": 0, "include_note": true}),
    )
    .await;
    assert_eq!(
        got,
        "mode:item|tab:info|full_path:mcp/info|index:0\ntext:Первый элемент текст\nвторая строка\ntags:[important,task]\nnote:Заметка к элементу.\nВторая строка."
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "info", "index": 0}),
    )
    .await;
    assert_eq!(
        got,
        "mode:item|tab:info|full_path:mcp/info|index:0\ntext:Первый элемент текст\nвторая строка\ntags:[important,task]\n+note"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "info", "index": 2}),
    )
    .await;
    assert_eq!(
        got,
        format!("mode:item|tab:info|full_path:mcp/info|index:2\ntext:{SPECIAL}\ntags:[]")
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "info", "index": 1}),
    )
    .await;
    assert!(
        got.contains(&format!("\ntext:{LONG}\n")),
        "item text is never cut: {got}"
    );
}

#[tokio::test]
async fn item_of_external_tab() {
    let (_gw, c) = setup().await;
    let got = ok(&c, "mcp_read", json!({"mode": "item", "tab": "архив", "index": 1, "scope": "external", "include_note": true})).await;
    assert_eq!(
        got,
        "mode:item|tab:архив|scope:external|index:1\ntext:Важный документ TODO\ntags:[]\nnote:n"
    );
    let got = ok(&c, "mcp_read", json!({"mode": "item", "tab": "архив", "index": 0, "scope": "external", "include_note": true})).await;
    assert_eq!(
        got,
        "mode:item|tab:архив|scope:external|index:0\ntext:Старые данные\ntags:[2023]\nnote:"
    );
}

#[tokio::test]
async fn item_bounds() {
    let (_gw, c) = setup().await;
    let got = err(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "info", "index": 100}),
    )
    .await;
    assert_eq!(
        got,
        "error|INDEX_OUT_OF_BOUNDS|Index 100 out of bounds (count: 25)"
    );
    let got = err(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "info", "index": 25}),
    )
    .await;
    assert_eq!(
        got,
        "error|INDEX_OUT_OF_BOUNDS|Index 25 out of bounds (count: 25)"
    );
    let got = err(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "info", "index": -1}),
    )
    .await;
    assert_eq!(
        got,
        "error|INDEX_OUT_OF_BOUNDS|Index -1 out of bounds (count: 25)"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "info", "index": 24}),
    )
    .await;
    assert_eq!(
        got,
        "mode:item|tab:info|full_path:mcp/info|index:24\ntext:item 24\ntags:[]"
    );
}

#[tokio::test]
async fn search_managed_and_all() {
    let (_gw, c) = setup().await;
    let got = ok(&c, "mcp_read", json!({"mode": "search", "query": "TODO"})).await;
    assert_eq!(
        got,
        "mode:search|query:TODO|scope:mcp|results:2\nworkspace/project1[0]|\"TODO: исправить баг\"|[bug,todo]|match:text,tags\nзаметки[0]|\"Заметка о встрече TODO\"|[]|match:text"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "todo", "scope": "all"}),
    )
    .await;
    assert_eq!(
        got,
        [
            "mode:search|query:todo|scope:all|results:4",
            "workspace/project1[0]|\"TODO: исправить баг\"|[bug,todo]|match:text,tags",
            "заметки[0]|\"Заметка о встрече TODO\"|[]|match:text",
            "архив[1]|\"Важный документ TODO\"|[]|match:text|external",
            "личное/проекты/web[0]|\"web TODO\"|[web]|match:text|external",
        ]
        .join("\n")
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "todo", "scope": "external", "max_items": 1, "skip": 1}),
    )
    .await;
    assert_eq!(
        got,
        "mode:search|query:todo|scope:external|results:2|showing:1-1\nличное/проекты/web[0]|\"web TODO\"|[web]|match:text|external"
    );
}

/// A token that covers a managed subtree and one external tab sees those alone, in every mode,
/// through both backends: the rest of CopyQ (the clipboard tab included) does not exist for it.
#[tokio::test]
async fn a_scoped_token_sees_only_its_tabs() {
    let gw = gateway(seeded()).await;
    let token = token_covering(&gw, Role::Read, &["mcp/workspace/project1", "архив"]);
    let c = client(&gw.url, &token).await;
    let read = |args| ok(&c, "mcp_read", args);
    assert_eq!(
        read(json!({"mode": "tree", "scope": "all", "max_depth": 9, "max_items": 1})).await,
        "workspace/project1 [2]\n0:|\"TODO: исправить баг\"|[bug,todo]\nworkspace/project1/deep [1]\n0:|\"deep item\"|[]\n\
         архив [2] [external]\n0:|\"Старые данные\"|[2023]"
    );
    assert_eq!(
        read(json!({"mode": "search", "query": "todo", "scope": "all"})).await,
        "mode:search|query:todo|scope:all|results:2\n\
         workspace/project1[0]|\"TODO: исправить баг\"|[bug,todo]|match:text,tags\n\
         архив[1]|\"Важный документ TODO\"|[]|match:text|external"
    );
    assert_eq!(
        read(json!({"mode": "item", "tab": "архив", "scope": "external", "index": 1, "include_note": true})).await,
        "mode:item|tab:архив|scope:external|index:1\ntext:Важный документ TODO\ntags:[]\nnote:n"
    );
    for (tab, scope) in [
        ("info", "mcp"),
        ("workspace", "all"),
        ("личное/проекты/web", "external"),
        ("regex-stress", "all"),
        (clipboard_tab().as_str(), "external"),
        ("no-such-tab", "external"),
    ] {
        let not_found = format!("error|TAB_NOT_FOUND|Tab not found: {tab}");
        for mode in ["list", "item"] {
            let args = json!({"mode": mode, "tab": tab, "scope": scope, "index": 0});
            assert_eq!(err(&c, "mcp_read", args.clone()).await, not_found, "{args}");
            assert_eq!(
                ok(&c, "mcp_validate", json!({"tool": "read", "params": args})).await,
                format!("valid:false|errors:1\n{not_found}")
            );
        }
    }
    let managed = client(&gw.url, &token_covering(&gw, Role::Read, &["managed"])).await;
    assert_eq!(
        ok(
            &managed,
            "mcp_read",
            json!({"mode": "tree", "scope": "external"})
        )
        .await,
        ""
    );
    assert_eq!(
        ok(
            &managed,
            "mcp_read",
            json!({"mode": "search", "query": ".", "scope": "external"})
        )
        .await,
        "mode:search|query:.|scope:external|results:0"
    );
}

#[tokio::test]
async fn search_in_one_field() {
    let (_gw, c) = setup().await;
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "^todo$", "search_in": "tags"}),
    )
    .await;
    assert_eq!(
        got,
        "mode:search|query:^todo$|scope:mcp|results:1\nworkspace/project1[0]|\"TODO: исправить баг\"|[bug,todo]|match:tags"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "ВСТРЕЧА В", "search_in": "note"}),
    )
    .await;
    assert_eq!(
        got,
        "mode:search|query:ВСТРЕЧА В|scope:mcp|results:1\nзаметки[0]|\"Заметка о встрече TODO\"|[]|match:note"
    );
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "error|warning", "scope": "all"}),
    )
    .await;
    assert_eq!(got, "mode:search|query:error|warning|scope:all|results:0");
}

#[tokio::test]
async fn search_patterns_are_bounded() {
    let (_gw, c) = setup().await;
    let got = err(&c, "mcp_read", json!({"mode": "search", "query": "("})).await;
    assert!(
        got.starts_with("error|INVALID_PARAM|Invalid regex '(': "),
        "{got}"
    );
    let got = err(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "a{1000}{1000}"}),
    )
    .await;
    assert_eq!(
        got,
        "error|INVALID_PARAM|Invalid regex 'a{1000}{1000}': pattern too large"
    );
    let got = err(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "x".repeat(1001)}),
    )
    .await;
    assert_eq!(
        got,
        "error|INVALID_PARAM|Parameter 'query' longer than 1000 characters"
    );
    // Catastrophic for a backtracking engine on the 30,000-character item; linear here.
    let started = Instant::now();
    let got = ok(
        &c,
        "mcp_read",
        json!({"mode": "search", "query": "(a+)+$", "scope": "external"}),
    )
    .await;
    assert_eq!(got, "mode:search|query:(a+)+$|scope:external|results:0");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "pathological pattern stalled"
    );
}

#[tokio::test]
async fn reading_never_creates_a_tab() {
    let (_gw, c) = setup().await;
    let before = copyq_tabs(seeded());
    let got = err(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "workspace/ghost"}),
    )
    .await;
    assert_eq!(got, "error|TAB_NOT_FOUND|Tab not found: workspace/ghost");
    let got = err(
        &c,
        "mcp_read",
        json!({"mode": "item", "tab": "призрак", "index": 0, "scope": "all"}),
    )
    .await;
    assert_eq!(got, "error|TAB_NOT_FOUND|Tab not found: призрак");
    let got = err(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "nonexistent", "scope": "external"}),
    )
    .await;
    assert_eq!(got, "error|TAB_NOT_FOUND|Tab not found: nonexistent");
    assert_eq!(copyq_tabs(seeded()), before);
}

#[tokio::test]
async fn parameter_errors() {
    let (_gw, c) = setup().await;
    let cases = [
        (json!({}), "error|MISSING_PARAM|Parameter 'mode' required"),
        (
            json!({"mode": "bogus"}),
            "error|INVALID_MODE|Invalid mode 'bogus' (expected one of: tree, list, item, search)",
        ),
        (
            json!({"mode": "list"}),
            "error|MISSING_PARAM|Parameter 'tab' required for mode 'list'",
        ),
        (
            json!({"mode": "item", "tab": "info"}),
            "error|MISSING_PARAM|Parameter 'index' required for mode 'item'",
        ),
        (
            json!({"mode": "search"}),
            "error|MISSING_PARAM|Parameter 'query' required for mode 'search'",
        ),
        (
            json!({"mode": "list", "tab": "info", "max_items": 0}),
            "error|INVALID_PARAM|Parameter 'max_items' must be between 1 and 100 (got 0)",
        ),
        (
            json!({"mode": "tree", "max_items": 101}),
            "error|INVALID_PARAM|Parameter 'max_items' must be between 0 and 100 (got 101)",
        ),
        (
            json!({"mode": "tree", "max_depth": 11}),
            "error|INVALID_PARAM|Parameter 'max_depth' must be between 1 and 10 (got 11)",
        ),
        (
            json!({"mode": "tree", "max_depth": 0}),
            "error|INVALID_PARAM|Parameter 'max_depth' must be between 1 and 10 (got 0)",
        ),
        (
            json!({"mode": "list", "tab": "info", "skip": -1}),
            "error|INVALID_PARAM|Parameter 'skip' must be >= 0 (got -1)",
        ),
        (
            json!({"mode": "tree", "scope": "everything"}),
            "error|INVALID_PARAM|Parameter 'scope' must be one of: mcp, all, external (got 'everything')",
        ),
        (
            json!({"mode": "search", "query": "x", "search_in": "body"}),
            "error|INVALID_PARAM|Parameter 'search_in' must be one of: text, note, tags, all (got 'body')",
        ),
        (
            json!({"mode": "list", "tab": 5}),
            "error|INVALID_PARAM|Parameter 'tab' must be a string",
        ),
        (
            json!({"mode": "tree", "include_text": "maybe"}),
            "error|INVALID_PARAM|Parameter 'include_text' must be true or false",
        ),
        (
            json!({"mode": "list", "tab": "info//x"}),
            "error|INVALID_PARAM|Invalid tab path 'info//x': segments must be non-empty, without '.', '..' or surrounding spaces",
        ),
        (
            json!({"mode": "list", "tab": "mcp/info", "scope": "external"}),
            "error|INVALID_PARAM|Tab 'mcp/info' is a managed tab, not an external one: use scope 'mcp' or 'all'",
        ),
    ];
    for (args, expected) in cases {
        assert_eq!(err(&c, "mcp_read", args.clone()).await, expected, "{args}");
    }
    let got = err(&c, "mcp_read", json!({"mode": "tree", "max_item": 5})).await;
    assert!(
        got.starts_with("error|INVALID_PARAM|Unknown parameter 'max_item'"),
        "{got}"
    );
}

#[tokio::test]
async fn validate_reads() {
    let (_gw, c) = setup().await;
    let reply = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "info", "max_items": 50}),
    )
    .await;
    assert_eq!(reply, whole_info_list());
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "read", "params": {"mode": "list", "tab": "info", "max_items": 50}}),
    )
    .await;
    assert_eq!(
        got,
        format!(
            "valid:true|warnings:0|estimated_tokens:{}",
            whole_info_list().len().div_ceil(4)
        )
    );
    let reply = ok(
        &c,
        "mcp_read",
        json!({"mode": "list", "tab": "info", "max_items": 100}),
    )
    .await;
    assert_eq!(reply, whole_info_list());
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "read", "params": {"mode": "list", "tab": "info", "max_items": 100}}),
    )
    .await;
    assert_eq!(
        got,
        format!(
            "valid:true|warnings:1\nwarning|LARGE_RESPONSE|max_items=100 may return large response\nestimated_tokens:{}",
            whole_info_list().len().div_ceil(4)
        )
    );
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "read", "params": {"mode": "list", "tab": "nonexistent"}}),
    )
    .await;
    assert_eq!(
        got,
        "valid:false|errors:1\nerror|TAB_NOT_FOUND|Tab not found: nonexistent"
    );
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "read", "params": {"mode": "item", "tab": "info", "index": 100}}),
    )
    .await;
    assert_eq!(
        got,
        "valid:false|errors:1\nerror|INDEX_OUT_OF_BOUNDS|Index 100 out of bounds (count: 25)"
    );
    let got = ok(
        &c,
        "mcp_validate",
        json!({"tool": "write", "params": {"mode": "add", "tab": "info", "text": "x"}}),
    )
    .await;
    assert_eq!(
        got,
        "valid:false|errors:1\nerror|PERMISSION_DENIED|This token has the read role; mcp_write needs a write token"
    );
    let got = err(&c, "mcp_validate", json!({"params": {}})).await;
    assert_eq!(got, "error|MISSING_PARAM|Parameter 'tool' required");
}

/// The socket and CLI backends answer every read identically, byte for byte.
#[tokio::test]
async fn both_backends_give_identical_replies() {
    let cli = gateway_with(seeded(), |s| {
        s.copyq.backend = copyq_mcp::config::BackendKind::Cli
    })
    .await;
    let socket = gateway_with(seeded(), |s| {
        s.copyq.backend = copyq_mcp::config::BackendKind::Socket
    })
    .await;
    let (c1, c2) = (
        client(&cli.url, &cli.read).await,
        client(&socket.url, &socket.read).await,
    );
    let calls = [
        json!({"mode": "tree", "scope": "all", "max_depth": 10}),
        json!({"mode": "tree", "max_items": 0}),
        json!({"mode": "list", "tab": "info", "skip": 1, "max_items": 30, "include_note": true}),
        json!({"mode": "list", "tab": "архив", "scope": "external"}),
        json!({"mode": "item", "tab": "info", "index": 0, "include_note": true}),
        json!({"mode": "item", "tab": "info", "index": 2}),
        json!({"mode": "item", "tab": "info", "index": 99}),
        json!({"mode": "search", "query": "todo|задача", "scope": "all"}),
        json!({"mode": "search", "query": "(a+)+$", "scope": "all", "search_in": "text"}),
        json!({"mode": "list", "tab": "workspace/ghost"}),
    ];
    for args in calls {
        assert_eq!(
            call(&c1, "mcp_read", args.clone()).await,
            call(&c2, "mcp_read", args.clone()).await,
            "{args}"
        );
    }
}
