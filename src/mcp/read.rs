//! `mcp_read`: modes `tree`, `list`, `item` and `search` over managed and external tabs. Reading
//! never creates a tab, and search runs in the gateway with the linear-time `regex` crate.

use std::cmp::Ordering;

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

use super::Tools;
use super::args::Args;
use super::error::ToolError;
use super::format::{
    PREVIEW_UNITS, Show, item_fields, one_line, quoted, showing, tab_fields, tag_list,
};
use crate::backend::{Item, ReadRequest, TabPage, TabSelector};
use crate::clipboard::{MCP_PREFIX, Scope, TabRef, tab_depth};

pub const MODES: &str = "tree, list, item, search";
const KNOWN: &[&str] = &[
    "mode",
    "scope",
    "tab",
    "index",
    "query",
    "search_in",
    "max_depth",
    "max_items",
    "skip",
    "include_text",
    "include_tags",
    "include_note",
    "with_version",
];
/// Longest search pattern, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// Memory the compiled pattern may use; larger patterns are refused, never slow.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Where `search` looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchIn {
    text: bool,
    note: bool,
    tags: bool,
}

#[derive(Debug, Clone)]
pub enum ReadQuery {
    Tree {
        scope: Scope,
        max_depth: usize,
        max_items: usize,
        show: Show,
    },
    List {
        tab: String,
        scope: Scope,
        skip: usize,
        max_items: usize,
        show: Show,
    },
    Item {
        tab: String,
        scope: Scope,
        index: i64,
        show: Show,
    },
    Search {
        query: String,
        pattern: Regex,
        scope: Scope,
        search_in: SearchIn,
        skip: usize,
        max_items: usize,
        show: Show,
    },
}

impl ReadQuery {
    pub fn parse(map: &Map<String, Value>) -> Result<Self, ToolError> {
        let mut a = Args::new(map);
        let mode = a.required_str("mode")?;
        a.set_mode(mode);
        a.reject_unknown(KNOWN)?;
        let scope = match a.str("scope")? {
            None => Scope::Mcp,
            Some(s) => Scope::parse(s).ok_or_else(|| {
                ToolError::InvalidParam(format!(
                    "Parameter 'scope' must be one of: mcp, all, external (got '{}')",
                    s.escape_debug()
                ))
            })?,
        };
        let versions = a.bool("with_version", false)?;
        let show = Show {
            text: a.bool("include_text", true)?,
            tags: a.bool("include_tags", true)?,
            note: a.bool("include_note", false)?,
            // Versions are for addressing items in writes: shown by list and item only.
            version: versions && matches!(mode, "list" | "item"),
        };
        let skip = a.bounded("skip", 0, 0, i64::MAX)?;
        Ok(match mode {
            "tree" => Self::Tree {
                scope,
                max_depth: a.bounded("max_depth", 2, 1, 10)?,
                max_items: a.bounded("max_items", 20, 0, 100)?,
                show,
            },
            "list" => Self::List {
                tab: a.required_str("tab")?.to_owned(),
                scope,
                skip,
                max_items: a.bounded("max_items", 20, 1, 100)?,
                show,
            },
            "item" => Self::Item {
                tab: a.required_str("tab")?.to_owned(),
                scope,
                index: a.required_int("index")?,
                show,
            },
            "search" => {
                let query = a.required_str("query")?.to_owned();
                let search_in =
                    match a.choice("search_in", &["text", "note", "tags", "all"], "all")? {
                        "text" => SearchIn {
                            text: true,
                            note: false,
                            tags: false,
                        },
                        "note" => SearchIn {
                            text: false,
                            note: true,
                            tags: false,
                        },
                        "tags" => SearchIn {
                            text: false,
                            note: false,
                            tags: true,
                        },
                        _ => SearchIn {
                            text: true,
                            note: true,
                            tags: true,
                        },
                    };
                Self::Search {
                    pattern: compile(&query)?,
                    query,
                    scope,
                    search_in,
                    skip,
                    max_items: a.bounded("max_items", 20, 1, 100)?,
                    show,
                }
            }
            other => {
                return Err(ToolError::InvalidMode {
                    mode: one_line(other),
                    expected: MODES,
                });
            }
        })
    }

    pub fn max_items(&self) -> usize {
        match self {
            Self::Tree { max_items, .. }
            | Self::List { max_items, .. }
            | Self::Search { max_items, .. } => *max_items,
            Self::Item { .. } => 1,
        }
    }

    pub async fn run(&self, tools: &Tools) -> Result<String, ToolError> {
        match self {
            Self::Tree {
                scope,
                max_depth,
                max_items,
                show,
            } => tree(tools, *scope, *max_depth, *max_items, *show).await,
            Self::List {
                tab,
                scope,
                skip,
                max_items,
                show,
            } => list(tools, tab, *scope, *skip, *max_items, *show).await,
            Self::Item {
                tab,
                scope,
                index,
                show,
            } => item(tools, tab, *scope, *index, *show).await,
            Self::Search {
                query,
                pattern,
                scope,
                search_in,
                skip,
                max_items,
                show,
            } => {
                search(
                    tools,
                    query,
                    pattern,
                    *scope,
                    *search_in,
                    (*skip, *max_items),
                    *show,
                )
                .await
            }
        }
    }
}

fn compile(query: &str) -> Result<Regex, ToolError> {
    if query.is_empty() {
        return Err(ToolError::InvalidParam(
            "Parameter 'query' must not be empty".into(),
        ));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(ToolError::InvalidParam(format!(
            "Parameter 'query' longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    RegexBuilder::new(query)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|e| {
            let reason = match e {
                regex::Error::CompiledTooBig(_) => "pattern too large".to_owned(),
                other => other
                    .to_string()
                    .lines()
                    .last()
                    .unwrap_or("syntax error")
                    .trim()
                    .to_owned(),
            };
            ToolError::InvalidParam(format!("Invalid regex '{}': {reason}", one_line(query)))
        })
}

fn selector(scope: Scope) -> TabSelector {
    match scope {
        Scope::Mcp => TabSelector::Prefix {
            prefix: MCP_PREFIX.into(),
            invert: false,
        },
        Scope::External => TabSelector::Prefix {
            prefix: MCP_PREFIX.into(),
            invert: true,
        },
        Scope::All => TabSelector::All {},
    }
}

/// Managed tabs first, then external ones, each by name: the order the reference shows.
fn by_tab_order(a: &(TabRef, TabPage), b: &(TabRef, TabPage)) -> Ordering {
    (a.0.external, &a.0.shown).cmp(&(b.0.external, &b.0.shown))
}

async fn scan(
    tools: &Tools,
    scope: Scope,
    limit: Option<usize>,
    preview: Option<usize>,
) -> Result<Vec<(TabRef, TabPage)>, ToolError> {
    let request = ReadRequest {
        tabs: selector(scope),
        skip: 0,
        limit,
        preview,
        limits: false,
    };
    let mut pages: Vec<(TabRef, TabPage)> = tools
        .backend
        .read(&request)
        .await?
        .pages
        .into_iter()
        .map(|p| (TabRef::from_full(&p.name), p))
        .collect();
    pages.sort_by(by_tab_order);
    Ok(pages)
}

async fn tree(
    tools: &Tools,
    scope: Scope,
    max_depth: usize,
    max_items: usize,
    show: Show,
) -> Result<String, ToolError> {
    let pages = scan(tools, scope, Some(max_items), Some(PREVIEW_UNITS)).await?;
    let mut lines = Vec::new();
    for (tab, page) in pages
        .iter()
        .filter(|(t, _)| tab_depth(&t.full) <= max_depth)
    {
        let marker = if tab.external { " [external]" } else { "" };
        lines.push(format!("{} [{}]{marker}", tab.shown, page.total));
        for (i, it) in page.items.iter().enumerate() {
            lines.push(format!("{i}:{}", item_fields(it, show)));
        }
    }
    Ok(lines.join("\n"))
}

/// The first of the tabs `input` may mean that exists, read with `request`'s window.
async fn resolve(
    tools: &Tools,
    input: &str,
    scope: Scope,
    skip: usize,
    limit: usize,
    preview: Option<usize>,
) -> Result<(TabRef, TabPage), ToolError> {
    let candidates = tools.roots.read_candidates(input, scope)?;
    let names = candidates.iter().map(|c| c.full.clone()).collect();
    let request = ReadRequest {
        tabs: TabSelector::Names { names },
        skip,
        limit: Some(limit),
        preview,
        limits: false,
    };
    let mut pages = tools.backend.read(&request).await?.pages;
    for candidate in candidates {
        if let Some(pos) = pages.iter().position(|p| p.name == candidate.full) {
            return Ok((candidate, pages.swap_remove(pos)));
        }
    }
    Err(ToolError::TabNotFound(one_line(input)))
}

async fn list(
    tools: &Tools,
    input: &str,
    scope: Scope,
    skip: usize,
    max_items: usize,
    show: Show,
) -> Result<String, ToolError> {
    let (tab, page) = resolve(tools, input, scope, skip, max_items, Some(PREVIEW_UNITS)).await?;
    let mut lines = vec![format!(
        "mode:list|{}|total:{}|{}",
        tab_fields(&tab),
        page.total,
        showing(skip, page.items.len())
    )];
    for (i, it) in page.items.iter().enumerate() {
        lines.push(format!("{}{}", skip + i, item_fields(it, show)));
    }
    Ok(lines.join("\n"))
}

async fn item(
    tools: &Tools,
    input: &str,
    scope: Scope,
    index: i64,
    show: Show,
) -> Result<String, ToolError> {
    // A negative index still needs the count for its message: read an empty window.
    let (skip, limit) = usize::try_from(index).map_or((0, 0), |i| (i, 1));
    let (tab, page) = resolve(tools, input, scope, skip, limit, None).await?;
    let Some(it) = page.items.first() else {
        return Err(ToolError::IndexOutOfBounds {
            index,
            count: page.total,
        });
    };
    let version = if show.version {
        format!("|version:{}", crate::clipboard::version(it))
    } else {
        String::new()
    };
    let mut lines = vec![format!(
        "mode:item|{}|index:{index}{version}",
        tab_fields(&tab)
    )];
    if show.text {
        lines.push(format!("text:{}", it.text));
    }
    if show.tags {
        lines.push(format!("tags:{}", tag_list(&it.tags)));
    }
    if show.note {
        lines.push(format!("note:{}", it.note));
    } else if it.has_note() {
        lines.push("+note".into());
    }
    Ok(lines.join("\n"))
}

/// Which of the searched fields of `it` match, in `text,note,tags` order.
fn matched_fields(it: &Item, pattern: &Regex, within: SearchIn) -> Vec<&'static str> {
    let mut out = Vec::new();
    if within.text && pattern.is_match(&it.text) {
        out.push("text");
    }
    if within.note && pattern.is_match(&it.note) {
        out.push("note");
    }
    if within.tags && it.tags.iter().any(|t| pattern.is_match(t)) {
        out.push("tags");
    }
    out
}

async fn search(
    tools: &Tools,
    query: &str,
    pattern: &Regex,
    scope: Scope,
    within: SearchIn,
    (skip, max_items): (usize, usize),
    show: Show,
) -> Result<String, ToolError> {
    let pages = scan(tools, scope, None, None).await?;
    let mut hits = Vec::new();
    for (tab, page) in &pages {
        for (i, it) in page.items.iter().enumerate() {
            let fields = matched_fields(it, pattern, within);
            if !fields.is_empty() {
                hits.push((tab, i, it, fields));
            }
        }
    }
    let total = hits.len();
    let mut header = format!(
        "mode:search|query:{}|scope:{}|results:{total}",
        one_line(query),
        scope.as_str()
    );
    let page: Vec<_> = hits.into_iter().skip(skip).take(max_items).collect();
    if page.len() < total {
        header = format!("{header}|{}", showing(skip, page.len()));
    }
    let mut lines = vec![header];
    for (tab, i, it, fields) in page {
        let mut line = format!("{}[{i}]", tab.shown);
        if show.text {
            line = format!("{line}|{}", quoted(&it.text));
        }
        if show.tags {
            line = format!("{line}|{}", tag_list(&it.tags));
        }
        if show.note && it.has_note() {
            line = format!("{line}|note:{}", crate::clipboard::preview(&it.note));
        }
        line = format!("{line}|match:{}", fields.join(","));
        if tab.external {
            line.push_str("|external");
        }
        lines.push(line);
    }
    Ok(lines.join("\n"))
}

/// The `mcp_read` tool.
pub async fn call(tools: &Tools, args: &Map<String, Value>) -> Result<String, ToolError> {
    let query = ReadQuery::parse(args)?;
    let _shared = tools.writes.read().await;
    query.run(tools).await
}
