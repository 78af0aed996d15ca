//! `mcp_read`'s arguments as a typed query: every mode's parameters, checked and bounded, and
//! the search pattern compiled (linear time, bounded size) before anything reaches CopyQ.

use regex::{Regex, RegexBuilder};
use serde_json::{Map, Value};

use crate::clipboard::Scope;
use crate::mcp::args::Args;
use crate::mcp::error::ToolError;
use crate::mcp::format::{Show, one_line};

/// `mode`'s values: the schema lists these, and nothing else gets past [`ReadQuery::parse`].
pub const MODES: &[&str] = &["tree", "list", "item", "search"];
/// `search_in`'s values and where each looks: the schema lists these names, and the parser takes
/// these and no other, each with its meaning.
const SEARCH_IN: [(&str, SearchIn); 4] = [
    ("text", SearchIn::only(true, false, false)),
    ("note", SearchIn::only(false, true, false)),
    ("tags", SearchIn::only(false, false, true)),
    ("all", SearchIn::only(true, true, true)),
];

/// The names of `search_in`'s values, in the schema's order.
pub fn search_in_names() -> [&'static str; 4] {
    SEARCH_IN.map(|(name, _)| name)
}
pub(crate) const KNOWN: &[&str] = &[
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
    pub text: bool,
    pub note: bool,
    pub tags: bool,
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
        let scope = scope_of(&a)?;
        let show = show_of(&a, mode)?;
        let skip = a.bounded("skip", 0, 0, i64::MAX)?;
        let invalid = || ToolError::InvalidMode {
            mode: one_line(mode),
            expected: MODES,
        };
        if !MODES.contains(&mode) {
            return Err(invalid());
        }
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
                let search_in = SearchIn::of(a.choice("search_in", &search_in_names(), "all")?);
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
            _ => return Err(invalid()),
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
}

impl SearchIn {
    const fn only(text: bool, note: bool, tags: bool) -> Self {
        Self { text, note, tags }
    }

    /// The fields `choice` (one of [`SEARCH_IN`]'s names) looks in; all three for another.
    fn of(choice: &str) -> Self {
        SEARCH_IN
            .iter()
            .find(|(name, _)| *name == choice)
            .map_or(Self::only(true, true, true), |(_, fields)| *fields)
    }
}

fn scope_of(a: &Args<'_>) -> Result<Scope, ToolError> {
    match a.str("scope")? {
        None => Ok(Scope::Mcp),
        Some(s) => Scope::parse(s).ok_or_else(|| {
            ToolError::InvalidParam(format!(
                "Parameter 'scope' must be one of: {} (got '{}')",
                Scope::names().join(", "),
                s.escape_debug()
            ))
        }),
    }
}

/// Which fields a reply shows. Versions are for addressing items in writes: shown by `list` and
/// `item` only.
fn show_of(a: &Args<'_>, mode: &str) -> Result<Show, ToolError> {
    let versions = a.bool("with_version", false)?;
    Ok(Show {
        text: a.bool("include_text", true)?,
        tags: a.bool("include_tags", true)?,
        note: a.bool("include_note", false)?,
        version: versions && matches!(mode, "list" | "item"),
    })
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
