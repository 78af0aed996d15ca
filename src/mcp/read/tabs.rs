//! Which tabs a read covers: a scope as a backend selector, every tab of a scope in the order the
//! reference shows them, and the tab a name means (reads never create one).

use std::cmp::Ordering;

use super::redact::mask_page;
use crate::backend::{ReadRequest, TabPage, TabSelector};
use crate::clipboard::{Coverage, MCP_PREFIX, Scope, TabRef};
use crate::mcp::ToolState;
use crate::mcp::error::ToolError;
use crate::mcp::format::one_line;

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

/// Every tab of `scope` that `tabs` covers, in the reference's order: the others do not exist for
/// the caller (no line, no count).
pub(super) async fn scan(
    tools: &ToolState,
    tabs: &Coverage,
    scope: Scope,
    limit: Option<usize>,
    preview: Option<usize>,
) -> Result<Vec<(TabRef, TabPage)>, ToolError> {
    let request = ReadRequest {
        tabs: selector(scope),
        skip: 0,
        limit,
        preview,
    };
    let mut pages: Vec<(TabRef, TabPage)> = tools
        .backend
        .read(&request)
        .await?
        .pages
        .into_iter()
        .filter(|p| tabs.covers(&p.name))
        .map(|p| (TabRef::from_full(&p.name), p))
        .collect();
    pages.sort_by(by_tab_order);
    for (tab, page) in &mut pages {
        mask_page(&tools.privacy, tab, page);
    }
    Ok(pages)
}

/// The first of the tabs `input` may mean that exists and `tabs` covers, read with `request`'s
/// window. A tab outside the coverage is never asked for: it is `TAB_NOT_FOUND` like a missing one.
pub(super) async fn resolve(
    tools: &ToolState,
    tabs: &Coverage,
    input: &str,
    scope: Scope,
    skip: usize,
    limit: usize,
    preview: Option<usize>,
) -> Result<(TabRef, TabPage), ToolError> {
    let mut candidates = tools.roots.read_candidates(input, scope)?;
    candidates.retain(|c| tabs.covers(&c.full));
    if candidates.is_empty() {
        return Err(not_found(tools, tabs, input, scope, None).await);
    }
    let names = candidates.iter().map(|c| c.full.clone()).collect();
    let request = ReadRequest {
        tabs: TabSelector::Names { names },
        skip,
        limit: Some(limit),
        preview,
    };
    let snapshot = tools.backend.read(&request).await?;
    let mut pages = snapshot.pages;
    for candidate in candidates {
        if let Some(pos) = pages.iter().position(|p| p.name == candidate.full) {
            let mut page = pages.swap_remove(pos);
            mask_page(&tools.privacy, &candidate, &mut page);
            return Ok((candidate, page));
        }
    }
    Err(not_found(tools, tabs, input, scope, Some(&snapshot.all_tabs)).await)
}

/// `TAB_NOT_FOUND` for `input`, saying so when the usual mistake is behind it: an external tab
/// asked for without `scope` (which means the managed tabs). Said only of a tab the caller may
/// see anyway; `all_tabs` is CopyQ's tab list when a read already brought it (else one is made,
/// on this error path only).
async fn not_found(
    tools: &ToolState,
    tabs: &Coverage,
    input: &str,
    scope: Scope,
    all_tabs: Option<&[String]>,
) -> ToolError {
    let plain = ToolError::TabNotFound(one_line(input));
    if scope != Scope::Mcp || crate::clipboard::is_mcp_tab(input) || !tabs.covers(input) {
        return plain;
    }
    let exists = match all_tabs {
        Some(all) => all.iter().any(|t| t == input),
        None => {
            let request = ReadRequest {
                tabs: TabSelector::Names {
                    names: vec![input.to_owned()],
                },
                skip: 0,
                limit: Some(0),
                preview: None,
            };
            tools
                .backend
                .read(&request)
                .await
                .is_ok_and(|s| s.all_tabs.iter().any(|t| t == input))
        }
    };
    if exists {
        ToolError::TabNotFoundExternal(one_line(input))
    } else {
        plain
    }
}
