//! The replies of `tree`, `list` and `item`, in the reference's pipe-separated format.

use super::tabs::{resolve, scan};
use crate::clipboard::{Coverage, Scope, tab_depth};
use crate::mcp::ToolState;
use crate::mcp::error::ToolError;
use crate::mcp::format::{PREVIEW_UNITS, Show, item_fields, showing, tab_fields, tag_list};

pub(super) async fn tree(
    tools: &ToolState,
    tabs: &Coverage,
    scope: Scope,
    max_depth: usize,
    max_items: usize,
    show: Show,
) -> Result<String, ToolError> {
    let pages = scan(tools, tabs, scope, Some(max_items), Some(PREVIEW_UNITS)).await?;
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

pub(super) async fn list(
    tools: &ToolState,
    tabs: &Coverage,
    input: &str,
    scope: Scope,
    skip: usize,
    max_items: usize,
    show: Show,
) -> Result<String, ToolError> {
    let (tab, page) = resolve(
        tools,
        tabs,
        input,
        scope,
        skip,
        max_items,
        Some(PREVIEW_UNITS),
    )
    .await?;
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

pub(super) async fn item(
    tools: &ToolState,
    tabs: &Coverage,
    input: &str,
    scope: Scope,
    index: i64,
    show: Show,
) -> Result<String, ToolError> {
    // A negative index still needs the count for its message: read an empty window.
    let (skip, limit) = usize::try_from(index).map_or((0, 0), |i| (i, 1));
    let (tab, page) = resolve(tools, tabs, input, scope, skip, limit, None).await?;
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
