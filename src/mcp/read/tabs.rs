//! Which tabs a read covers: a scope as a backend selector, every tab of a scope in the order the
//! reference shows them, and the tab a name means (reads never create one).

use std::cmp::Ordering;

use tokio::sync::OwnedSemaphorePermit;

use super::redact::{Masked, Wanted, mask_pages_where, name_masked};
use crate::backend::{ReadRequest, TabPage, TabSelector};
use crate::clipboard::{Coverage, MCP_PREFIX, Scope, TabRef};
use crate::mcp::ToolState;
use crate::mcp::error::ToolError;
use crate::mcp::format::one_line;

/// How many UTF-16 units of each text and note a window of a tab the mode masks reads, where a
/// preview alone needs 320: a mask that shortens a text (a private key block, 500 to 3,400 units)
/// or ends past what an unmasked preview reads makes its preview unsure, and such rows are read a
/// second time, whole (`again.rs`: two more round trips on the socket, a `copyq` process on the
/// CLI). Cut this long, the keys people copy come whole and the second read is rare. The socket
/// brings every row whole whatever the cut, so it costs no transfer there; the preview shown is
/// the same, as it is cut from the masked text after (`cut.rs`). A tree cuts at it too when the
/// mode masks any tab of its scope (one read has one cut, so its unmasked tabs' texts come as
/// long).
const MASKED_UNITS: usize = 4_096;

/// The cut of a read of `preview` units, longer for a read that the mode masks (see
/// [`MASKED_UNITS`]).
fn masked_cut(preview: Option<usize>, masked: bool) -> Option<usize> {
    preview.map(|units| {
        if masked {
            units.max(MASKED_UNITS)
        } else {
            units
        }
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

/// What to ask CopyQ for: the scope's tabs, and for a caller who does not cover every tab, only
/// those it covers, by name. A scoped caller costs one more round trip (the tab names, no tab
/// read), so that CopyQ never reads a tab for a caller who cannot see it.
async fn covered(
    tools: &ToolState,
    tabs: &Coverage,
    scope: Scope,
) -> Result<TabSelector, ToolError> {
    if tabs.is_all() {
        return Ok(selector(scope));
    }
    let names_only = ReadRequest {
        tabs: TabSelector::Names { names: Vec::new() },
        skip: 0,
        limit: Some(0),
        preview: None,
    };
    let names = tools
        .backend
        .read(&names_only)
        .await?
        .all_tabs
        .into_iter()
        .filter(|name| in_scope(scope, name) && tabs.covers(name))
        .collect();
    Ok(TabSelector::Names { names })
}

fn in_scope(scope: Scope, full: &str) -> bool {
    match scope {
        Scope::All => true,
        Scope::Mcp => full.starts_with(MCP_PREFIX),
        Scope::External => !full.starts_with(MCP_PREFIX),
    }
}

/// Managed tabs first, then external ones, each by the name shown: the order the reference shows.
fn by_tab_order(a: &Masked, b: &Masked) -> Ordering {
    (a.tab.external, &a.tab.shown).cmp(&(b.tab.external, &b.tab.shown))
}

/// `request` read and masked, with the names of every tab CopyQ has; the rows where a mask changed
/// an item the read had cut short are read again whole (then masked, then cut by the preview):
/// masking first, so that no cut splits a secret the rules would then miss (see [`super::again`]).
/// `wanted`: which items of the tabs the mode masks the caller will show (see
/// [`mask_pages_where`]).
async fn read_masked(
    tools: &ToolState,
    request: &ReadRequest,
    versions: bool,
    wanted: Option<Wanted<'_>>,
) -> Result<(Vec<Masked>, Vec<String>), ToolError> {
    let snapshot = tools.backend.read(request).await?;
    let out = masked(tools, snapshot.pages, request, versions, wanted).await?;
    Ok((out, snapshot.all_tabs))
}

/// `pages`, read with `request`, masked, with the rows a mask made unsure read again whole.
async fn masked(
    tools: &ToolState,
    pages: Vec<TabPage>,
    request: &ReadRequest,
    versions: bool,
    wanted: Option<Wanted<'_>>,
) -> Result<Vec<Masked>, ToolError> {
    let mut out = mask_pages_where(tools, pages, request.preview, versions, wanted);
    super::again::settle(tools, &mut out, request, versions).await?;
    Ok(out)
}

/// Every tab of `scope` that `tabs` covers, in the reference's order: the others do not exist for
/// the caller (no line, no count).
pub(super) async fn scan(
    tools: &ToolState,
    tabs: &Coverage,
    scope: Scope,
    limit: Option<usize>,
    preview: Option<usize>,
) -> Result<Vec<Masked>, ToolError> {
    let request = scan_request(tools, tabs, scope, (limit, preview)).await?;
    let (pages, _) = read_masked(tools, &request, false, None).await?;
    Ok(in_order(pages, tabs))
}

/// Every item of `scope` ([`scan`]'s tabs), read once for every search waiting together
/// ([`super::together`]); only the items `wanted` wants of the tabs the mode masks are shown (see
/// [`mask_pages_where`]): the others are left as read and must never be shown. With the turn
/// ([`crate::mcp::WHOLE_READS`]) under which the pages are held: drop it once they are freed. The
/// read waits for writes ([`ToolState::read_lock`], [`ToolState::whole_read`]), and only the read:
/// masking and matching go beside the writes that follow it.
pub(super) async fn scan_whole(
    tools: &ToolState,
    tabs: &Coverage,
    scope: Scope,
    wanted: Option<Wanted<'_>>,
) -> Result<(Vec<Masked>, Option<OwnedSemaphorePermit>), ToolError> {
    let shared = tools.read_lock(true).await;
    let request = scan_request(tools, tabs, scope, (None, None)).await?;
    let snapshot = tools
        .together
        .read(&request, || tools.whole_read(tools.backend.read(&request)))
        .await?;
    drop(shared);
    let (snapshot, turn) = super::together::with_turn(snapshot, &tools.whole_reads).await;
    let pages = masked(tools, snapshot.pages, &request, false, wanted).await?;
    Ok((in_order(pages, tabs), turn))
}

/// The read of `scope`'s tabs `tabs` covers, with the window and cut asked.
async fn scan_request(
    tools: &ToolState,
    tabs: &Coverage,
    scope: Scope,
    (limit, preview): (Option<usize>, Option<usize>),
) -> Result<ReadRequest, ToolError> {
    let mode = tools.privacy.mode;
    let masked = match scope {
        Scope::Mcp => mode.covers(false),
        Scope::External => mode.covers(true),
        Scope::All => mode.covers(false) || mode.covers(true),
    };
    Ok(ReadRequest {
        tabs: covered(tools, tabs, scope).await?,
        skip: 0,
        limit,
        preview: masked_cut(preview, masked),
    })
}

/// The pages `tabs` covers, in the reference's order.
fn in_order(mut pages: Vec<Masked>, tabs: &Coverage) -> Vec<Masked> {
    pages.retain(|p| tabs.covers(&p.page.name));
    pages.sort_by(by_tab_order);
    pages
}

/// Every tab `tabs` covers whose name the caller may be shown, in the reference's order, from
/// CopyQ's tab list alone (no tab is read): what the resources list offers.
pub(crate) async fn visible(tools: &ToolState, tabs: &Coverage) -> Result<Vec<TabRef>, ToolError> {
    let names_only = ReadRequest {
        tabs: TabSelector::Names { names: Vec::new() },
        skip: 0,
        limit: Some(0),
        preview: None,
    };
    let mut out: Vec<TabRef> = tools
        .backend
        .read(&names_only)
        .await?
        .all_tabs
        .iter()
        .filter(|name| tabs.covers(name) && !name_masked(&tools.privacy, name))
        .map(|name| TabRef::from_full(name))
        .collect();
    out.sort_by(|a, b| (a.external, &a.shown).cmp(&(b.external, &b.shown)));
    Ok(out)
}

/// The first of the tabs `input` may mean that exists and `tabs` covers, read with `request`'s
/// window. A tab outside the coverage is never asked for: it is `TAB_NOT_FOUND` like a missing one.
/// So is an external tab whose name is masked: the caller was never shown that name, and an
/// answer would tell whether a guess of it is right.
pub(super) async fn resolve(
    tools: &ToolState,
    tabs: &Coverage,
    input: &str,
    scope: Scope,
    (skip, limit): (usize, usize),
    (preview, versions): (Option<usize>, bool),
) -> Result<Masked, ToolError> {
    let mut candidates = tools.roots.read_candidates(input, scope)?;
    candidates.retain(|c| tabs.covers(&c.full) && !name_masked(&tools.privacy, &c.full));
    if candidates.is_empty() {
        return Err(not_found(tools, tabs, input, scope, None).await);
    }
    let masked = candidates
        .iter()
        .any(|c| tools.privacy.mode.covers(c.external));
    let preview = masked_cut(preview, masked);
    let names = candidates.iter().map(|c| c.full.clone()).collect();
    let request = ReadRequest {
        tabs: TabSelector::Names { names },
        skip,
        limit: Some(limit),
        preview,
    };
    let (mut pages, all_tabs) = read_masked(tools, &request, versions, None).await?;
    for candidate in candidates {
        if let Some(pos) = pages.iter().position(|p| p.page.name == candidate.full) {
            let mut found = pages.swap_remove(pos);
            found.tab = candidate;
            return Ok(found);
        }
    }
    Err(not_found(tools, tabs, input, scope, Some(&all_tabs)).await)
}

/// `TAB_NOT_FOUND` for `input`, saying so when the usual mistake is behind it: an external tab
/// asked for without `scope` (which means the managed tabs). Said only of a tab the caller may
/// see anyway, by a name it was shown (never of a tab whose name is masked); `all_tabs` is CopyQ's tab list when a read already brought it (else one is made,
/// on this error path only).
async fn not_found(
    tools: &ToolState,
    tabs: &Coverage,
    input: &str,
    scope: Scope,
    all_tabs: Option<&[String]>,
) -> ToolError {
    let plain = ToolError::TabNotFound(one_line(input));
    if scope != Scope::Mcp
        || crate::clipboard::is_mcp_tab(input)
        || !tabs.covers(input)
        || name_masked(&tools.privacy, input)
    {
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
