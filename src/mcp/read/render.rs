//! The replies of `tree`, `list` and `item`, in the reference's pipe-separated format.

use super::image::{Outcome, Sent, prepare};
use super::redact::Masked;
use super::tabs::{resolve, scan};
use crate::backend::content::Format;
use crate::clipboard::{Coverage, Scope, TabRef, tab_depth};
use crate::mcp::ToolState;
use crate::mcp::error::ToolError;
use crate::mcp::format::{PREVIEW_UNITS, Show, push_item_fields, showing, tab_fields, tag_list};
use std::fmt::Write as _;

pub(super) async fn tree(
    tools: &ToolState,
    tabs: &Coverage,
    scope: Scope,
    max_depth: usize,
    max_items: usize,
    show: Show,
) -> Result<String, ToolError> {
    let pages = scan(tools, tabs, scope, Some(max_items), Some(PREVIEW_UNITS)).await?;
    let shown = pages.iter().filter(|p| tab_depth(&p.tab.full) <= max_depth);
    // Lines written into one string, each after a line break but the first (never empty).
    let mut out = String::with_capacity(4096);
    for Masked { tab, page, .. } in shown {
        let marker = if tab.external { " [external]" } else { "" };
        let nl = if out.is_empty() { "" } else { "\n" };
        let _ = write!(out, "{nl}{} [{}]{marker}", tab.shown, page.total);
        for (i, it) in page.items.iter().enumerate() {
            let _ = write!(out, "\n{i}:");
            push_item_fields(&mut out, it, show, None);
        }
    }
    Ok(out)
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
    // A version is of the whole item: read whole texts when one is asked for.
    let preview = (!show.version).then_some(PREVIEW_UNITS);
    let Masked {
        tab,
        page,
        versions,
        ..
    } = resolve(
        tools,
        tabs,
        input,
        scope,
        (skip, max_items),
        (preview, show.version),
    )
    .await?;
    let mut out = format!(
        "mode:list|{}|total:{}|{}",
        tab_fields(&tab),
        page.total,
        showing(skip, page.items.len())
    );
    out.reserve(page.items.len() * 128);
    for (i, it) in page.items.iter().enumerate() {
        let version = versions.get(i).map(String::as_str);
        let _ = write!(out, "\n{}", skip + i);
        push_item_fields(&mut out, it, show, version);
    }
    Ok(out)
}

/// `item`'s reply, and with `images`, the image sent beside it (its `image:` line in the reply).
pub(super) async fn item(
    tools: &ToolState,
    tabs: &Coverage,
    (input, scope): (&str, Scope),
    index: i64,
    show: Show,
    images: bool,
) -> Result<(String, Option<Sent>), ToolError> {
    // A negative index still needs the count for its message: read an empty window.
    let (skip, limit) = usize::try_from(index).map_or((0, 0), |i| (i, 1));
    let Masked {
        tab,
        page,
        versions,
        ..
    } = resolve(
        tools,
        tabs,
        input,
        scope,
        (skip, limit),
        (None, show.version),
    )
    .await?;
    let Some(it) = page.items.first() else {
        return Err(ToolError::IndexOutOfBounds {
            index,
            count: page.total,
        });
    };
    let version = versions
        .first()
        .map(|v| format!("|version:{v}"))
        .unwrap_or_default();
    let mut lines = vec![format!(
        "mode:item|{}|index:{index}{version}",
        tab_fields(&tab)
    )];
    if let Some(content) = crate::clipboard::descriptor(&it.content) {
        lines.push(format!("content:{content}"));
    }
    let mut sent = None;
    if let Some(format) = it.content.image().filter(|_| images) {
        let row = usize::try_from(index).unwrap_or_default();
        let outcome = image_of(tools, &tab, row, format).await?;
        lines.push(format!("image:{}", outcome.line()));
        if let Outcome::Sent(s) = outcome {
            sent = Some(s);
        }
    }
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
    Ok((lines.join("\n"), sent))
}

/// The image of row `row` of `tab`, as the policy lets it go. Fetched only here: no other mode
/// reads an image's bytes.
async fn image_of(
    tools: &ToolState,
    tab: &TabRef,
    row: usize,
    format: &Format,
) -> Result<Outcome, ToolError> {
    let policy = tools.images;
    if tab.external && !policy.external {
        return Ok(Outcome::NotSent(
            "images of tabs outside mcp/ stay on this machine (privacy.external_images)".into(),
        ));
    }
    let Some(bytes) = tools.backend.format(&tab.full, row, &format.mime).await? else {
        return Ok(Outcome::NotSent("the image is no longer in CopyQ".into()));
    };
    let mime = format.mime.clone();
    let limits = policy.limits;
    // Decoding and scaling a 4K screenshot takes tens of milliseconds: off the async workers.
    Ok(
        tokio::task::spawn_blocking(move || prepare(&mime, bytes, limits))
            .await
            .unwrap_or_else(|_| Outcome::NotSent("the image could not be decoded".into())),
    )
}
