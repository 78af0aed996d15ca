//! Planning a write: read the state it depends on (one read: one `copyq` process on the CLI, a few
//! pipelined batches on the socket), check it (tab, index, room in the tab, the substitute's match)
//! and compute the result. Preview, validate and execute all start from the same plan, so they agree
//! on what a call would do.

use super::super::ToolState;
use super::super::error::ToolError;
use super::edit::{EditMode, Field};
use super::params::WriteOp;
use super::seen::edited_seen;
use crate::backend::{Item, Prepared, ReadRequest, Snapshot, TabPage, TabSelector};
use crate::clipboard::{Coverage, TabRef};

/// An add as planned: the tab, the item, and the tab's room (CopyQ's `maxitems`).
#[derive(Debug, Clone)]
pub struct Add {
    pub tab: TabRef,
    pub item: Item,
    pub limit: usize,
}

#[derive(Debug, Clone)]
pub enum Plan {
    Add(Add),
    Update {
        tab: TabRef,
        index: usize,
        field: Field,
        edit: EditMode,
        before: Item,
        after: Item,
    },
    Delete {
        tab: TabRef,
        index: usize,
        item: Item,
    },
    /// `limit`: CopyQ's maxitems, checked again by the write itself.
    Move {
        from: TabRef,
        index: usize,
        to: TabRef,
        item: Item,
        limit: usize,
    },
    TabCreate {
        path: TabRef,
        exists: bool,
    },
    /// The tab and its sub-tabs with all their items (for the audit log), parent first.
    TabDelete {
        path: TabRef,
        tabs: Vec<TabPage>,
    },
}

/// The message for a delete or move of an item the owner pinned in CopyQ, which refuses to remove
/// one: refused by the plan (so `mcp_validate` and a preview say it too), and by the write if it
/// was pinned after the plan.
pub fn pinned(tab: &TabRef, index: usize) -> ToolError {
    ToolError::CopyQ(format!(
        "Item {index} of '{}' is pinned in CopyQ, which does not let a pinned item be removed or moved; nothing was changed. The owner can unpin it in CopyQ",
        tab.shown
    ))
}

/// The message for a tab CopyQ would overflow (it silently drops the oldest items past `maxitems`).
pub fn tab_full(tab: &TabRef, limit: usize) -> ToolError {
    ToolError::CopyQ(format!(
        "Tab '{}' is full: CopyQ keeps at most {limit} items per tab (option maxitems) and would silently \
         drop the oldest one; nothing was changed. Delete or move items, or raise the limit (copyq config maxitems {})",
        tab.shown,
        (limit * 2).max(1000)
    ))
}

/// What a plan reads: the tabs, and for a write that adds an item, CopyQ's `maxitems`; with
/// the write's first steps when they were made with the read ([`plan_write`]).
struct State {
    snap: Snapshot,
    max_items: Option<usize>,
    prepared: Prepared,
}

/// How a plan reads: for `maxitems` too (a write that adds an item), or with the write's first
/// steps (an update's or delete's unload, [`crate::backend::Backend::read_prepared`]), or alone.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    Alone,
    Limits,
    Prepared,
}

async fn snapshot(
    tools: &ToolState,
    names: Vec<String>,
    (skip, limit): (usize, usize),
    reading: Reading,
) -> Result<State, ToolError> {
    let unload: Vec<&str> = match reading {
        Reading::Prepared => names.iter().map(String::as_str).collect(),
        _ => Vec::new(),
    };
    let request = ReadRequest {
        tabs: TabSelector::Names {
            names: names.clone(),
        },
        skip,
        limit: Some(limit),
        preview: None,
    };
    Ok(match reading {
        Reading::Limits => {
            let (snap, max) = tools.backend.read_with_max_items(&request).await?;
            State {
                snap,
                max_items: Some(max),
                prepared: Prepared::none(),
            }
        }
        Reading::Prepared => {
            let (snap, prepared) = tools.backend.read_prepared(&request, &unload).await?;
            State {
                snap,
                max_items: None,
                prepared,
            }
        }
        Reading::Alone => State {
            snap: tools.backend.read(&request).await?,
            max_items: None,
            prepared: Prepared::none(),
        },
    })
}

/// The item at `index` of `tab`, and the state it came from (for the other tab read with it).
async fn item_at(
    tools: &ToolState,
    tab: &TabRef,
    index: i64,
    also: Option<&TabRef>,
    expected: Option<&str>,
    prepare: bool,
) -> Result<(usize, Item, State), ToolError> {
    let mut names = vec![tab.full.clone()];
    names.extend(also.map(|t| t.full.clone()));
    let skip = usize::try_from(index).unwrap_or(0);
    let window = (skip, if index < 0 { 0 } else { 1 });
    let reading = match (also, prepare) {
        (Some(_), _) => Reading::Limits,
        (None, true) => Reading::Prepared,
        (None, false) => Reading::Alone,
    };
    let state = snapshot(tools, names, window, reading).await?;
    let page = state
        .snap
        .pages
        .iter()
        .find(|p| p.name == tab.full)
        .ok_or_else(|| ToolError::TabNotFound(tab.shown.clone()))?;
    match (usize::try_from(index), page.items.first()) {
        (Ok(i), Some(item)) => {
            // The version as the caller was shown it: keyed when the item holds a mask, so that
            // neither this check nor its message tells anything of the raw item.
            let masked =
                crate::mcp::read::show(tools.privacy.redactor_for(false), &mut item.clone());
            let found = crate::mcp::mask::version(&tools.version_key, &tab.full, item, masked);
            if let Some(expected) = expected
                && expected != found
            {
                return Err(ToolError::VersionMismatch {
                    tab: tab.shown.clone(),
                    index,
                    expected: super::super::format::one_line(expected),
                    found,
                });
            }
            let item = item.clone();
            Ok((i, item, state))
        }
        _ => Err(ToolError::IndexOutOfBounds {
            index,
            count: page.total,
        }),
    }
}

/// Refuse a write to `tab` when it does not exist and CopyQ would take another existing tab for it
/// (one whose name differs only by `&`, see [`crate::backend::names`]): the write would leave it.
/// A tab the caller does not cover is not named.
fn no_clash(snap: &Snapshot, tab: &TabRef, tabs: &Coverage) -> Result<(), ToolError> {
    match crate::backend::names::clash(&tab.full, &snap.all_tabs) {
        None => Ok(()),
        Some(other) => Err(clash(tab, other, tabs)),
    }
}

/// The refusal of a write to `tab`, which CopyQ would make in its existing tab `other`; named
/// only if the caller covers it.
pub fn clash(tab: &TabRef, other: &str, tabs: &Coverage) -> ToolError {
    match tabs.covers(other) {
        false => ToolError::PermissionDenied(format!(
            "Tab '{}' does not exist, and CopyQ would write to another existing tab instead \
             (CopyQ ignores '&' in tab names); nothing was changed. Use another name",
            tab.shown
        )),
        true => ToolError::PermissionDenied(format!(
            "Tab '{}' does not exist, and CopyQ would write to its existing tab '{other}' instead \
             (CopyQ ignores '&' in tab names); nothing was changed. Rename that tab or use another name",
            tab.shown
        )),
    }
}

/// CopyQ's item limit, if `tab` has room for one more item under it.
fn room(state: &State, tab: &TabRef) -> Result<usize, ToolError> {
    let limit = state
        .max_items
        .ok_or_else(|| ToolError::CopyQ("CopyQ did not report its maxitems option".into()))?;
    match state.snap.pages.iter().find(|p| p.name == tab.full) {
        Some(page) if page.total >= limit => Err(tab_full(tab, limit)),
        _ => Ok(limit),
    }
}

/// An add: the tab's name checked against CopyQ's, its room now (a preview or a validation).
pub async fn plan_add(
    tools: &ToolState,
    tabs: &Coverage,
    tab: &TabRef,
    item: &Item,
) -> Result<Add, ToolError> {
    let state = snapshot(tools, vec![tab.full.clone()], (0, 0), Reading::Limits).await?;
    no_clash(&state.snap, tab, tabs)?;
    Ok(Add {
        tab: tab.clone(),
        item: item.clone(),
        limit: room(&state, tab)?,
    })
}

/// An add about to be made: CopyQ's item limit, and nothing asked of CopyQ when the limit is
/// known. The group that makes it checks, under the write lock, with CopyQ's tab list and rows
/// then, both the tab's name (`Clash`: CopyQ would take a look-alike tab for it) and its room (the
/// same `TAB_FULL`), its audit entry withdrawn on either. Counting the tab's rows here made CopyQ
/// load the tab from its file, which the group's own unload had just dropped: twice per add
/// (bench/results.md, "Issue 22 item 3, stop 43"); the tab list here was a round trip of four,
/// already older than the group's own (stop 53).
pub async fn plan_add_unchecked(
    tools: &ToolState,
    tab: &TabRef,
    item: &Item,
) -> Result<Add, ToolError> {
    Ok(Add {
        tab: tab.clone(),
        item: item.clone(),
        limit: tools.backend.item_limit().await?,
    })
}

/// `expected`: the version the agent read for the item an update, delete or move addresses.
/// `tabs`: what the caller covers (the op's tabs are covered already; other tabs are not named).
pub async fn plan(
    tools: &ToolState,
    tabs: &Coverage,
    op: &WriteOp,
    expected: Option<&str>,
) -> Result<Plan, ToolError> {
    Ok(planned(tools, tabs, op, expected, false).await?.0)
}

/// A write's plan and its first steps, made with the write lock held before the write: an
/// update's or delete's unload in its plan's read ([`crate::backend::Backend::read_prepared`]), a
/// move's before its plan ([`crate::backend::Backend::prepare_write`]); nothing for the other
/// writes.
pub async fn plan_write(
    tools: &ToolState,
    tabs: &Coverage,
    op: &WriteOp,
    expected: Option<&str>,
) -> Result<(Plan, Prepared), ToolError> {
    planned(tools, tabs, op, expected, true).await
}

/// The plan of `op`, and with `prepare` the first steps [`plan_write`] makes (else none).
async fn planned(
    tools: &ToolState,
    tabs: &Coverage,
    op: &WriteOp,
    expected: Option<&str>,
    prepare: bool,
) -> Result<(Plan, Prepared), ToolError> {
    let mut made = Prepared::none();
    let plan = match op {
        WriteOp::Add { tab, item } => Plan::Add(plan_add(tools, tabs, tab, item).await?),
        WriteOp::Update {
            tab,
            index,
            field,
            edit,
            value,
            matched,
        } => {
            let (index, before, state) =
                item_at(tools, tab, *index, None, expected, prepare).await?;
            made = state.prepared;
            let after = edited_seen(
                tools,
                (tab, index),
                &before,
                (*field, *edit),
                value,
                matched.as_deref(),
            )?;
            Plan::Update {
                tab: tab.clone(),
                index,
                field: *field,
                edit: *edit,
                before,
                after,
            }
        }
        WriteOp::Delete { tab, index } => {
            let (index, item, state) = item_at(tools, tab, *index, None, expected, prepare).await?;
            made = state.prepared;
            if item.pinned {
                return Err(pinned(tab, index));
            }
            Plan::Delete {
                tab: tab.clone(),
                index,
                item,
            }
        }
        WriteOp::Move { tab, index, to } => {
            if prepare {
                made = tools.backend.prepare_write(&[&to.full, &tab.full]).await?;
            }
            let (index, item, state) =
                item_at(tools, tab, *index, Some(to), expected, false).await?;
            if item.pinned {
                return Err(pinned(tab, index));
            }
            no_clash(&state.snap, to, tabs)?;
            Plan::Move {
                from: tab.clone(),
                index,
                to: to.clone(),
                item,
                limit: room(&state, to)?,
            }
        }
        WriteOp::TabCreate { path } => {
            let snap = snapshot(tools, vec![path.full.clone()], (0, 0), Reading::Alone)
                .await?
                .snap;
            no_clash(&snap, path, tabs)?;
            Plan::TabCreate {
                path: path.clone(),
                exists: !snap.pages.is_empty(),
            }
        }
        WriteOp::TabDelete { path } => Plan::TabDelete {
            path: path.clone(),
            tabs: with_sub_tabs(tools, path).await?,
        },
    };
    Ok((plan, made))
}

/// The tab `path` and its sub-tabs with all their items (for the audit log), parent first.
async fn with_sub_tabs(tools: &ToolState, path: &TabRef) -> Result<Vec<TabPage>, ToolError> {
    let request = ReadRequest {
        tabs: TabSelector::Prefix {
            prefix: path.full.clone(),
            invert: false,
        },
        skip: 0,
        limit: None,
        preview: None,
    };
    let nested = format!("{}/", path.full);
    let mut tabs: Vec<TabPage> = tools
        .backend
        .read(&request)
        .await?
        .pages
        .into_iter()
        .filter(|p| p.name == path.full || p.name.starts_with(&nested))
        .collect();
    if tabs.is_empty() {
        return Err(ToolError::TabNotFound(path.shown.clone()));
    }
    tabs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tabs)
}
