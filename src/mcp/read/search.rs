//! `search`: every item of the scope matched in the gateway (linear-time regex over text, note
//! and tags), then the page of hits asked for, with the fields that matched.

use std::fmt::Write as _;
use std::sync::Arc;

use regex::Regex;

use super::query::SearchIn;
use super::redact::Masked;
use super::tabs::scan;
use crate::backend::Item;
use crate::clipboard::{Coverage, Scope};
use crate::mcp::ToolState;
use crate::mcp::error::ToolError;
use crate::mcp::format::{Show, content_field, one_line, push_quoted, push_tag_list, showing};

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

pub(super) async fn search(
    tools: &ToolState,
    tabs: &Coverage,
    (query, pattern): (&str, &Regex),
    scope: Scope,
    within: SearchIn,
    (skip, max_items): (usize, usize),
    show: Show,
) -> Result<String, ToolError> {
    // Held until the scope's items are freed: the next search reads only then. The semaphore is
    // never closed; were it, the search would go on without a turn.
    let turn = Arc::clone(&tools.whole_reads).acquire_owned().await.ok();
    let pages = scan(tools, tabs, scope, None, None).await?;
    let reply = reply(
        &pages,
        (query, pattern),
        scope,
        within,
        (skip, max_items),
        show,
    );
    // Freeing 10,000 items and more takes longer than matching them: done on a blocking thread,
    // with the turn, so that the reply does not wait for it.
    tokio::task::spawn_blocking(move || drop((pages, turn)));
    Ok(reply)
}

/// The reply to a search of `pages`: the header, then the page of hits asked for.
fn reply(
    pages: &[Masked],
    (query, pattern): (&str, &Regex),
    scope: Scope,
    within: SearchIn,
    (skip, max_items): (usize, usize),
    show: Show,
) -> String {
    let mut hits = Vec::new();
    for Masked { tab, page, .. } in pages {
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
    let mut out = header;
    for (tab, i, it, fields) in page {
        let _ = write!(out, "\n{}[{i}]{}", tab.shown, content_field(it));
        if show.text {
            out.push('|');
            push_quoted(&mut out, &it.text);
        }
        if show.tags {
            out.push('|');
            push_tag_list(&mut out, &it.tags);
        }
        if show.note && it.has_note() {
            out.push_str("|note:");
            crate::clipboard::push_preview(&mut out, &it.note);
        }
        out.push_str("|match:");
        out.push_str(&fields.join(","));
        if tab.external {
            out.push_str("|external");
        }
    }
    out
}
