//! What the audit log keeps of a write: sizes, never the new content, and what it replaced.

use super::ToolError;
use super::plan::{Add, Plan};
use crate::auth::Principal;
use crate::backend::{Backend, Item, TabPage, Whole, holds_more};
use crate::clipboard::TabRef;
use crate::store::AuditEntry;

/// What the audit log keeps of a write: sizes, never the new content, and what it replaced.
pub(super) fn audit_entry(plan: &Plan, principal: &Principal) -> AuditEntry {
    entry(recorded(plan), principal)
}

/// [`audit_entry`] of an add.
pub(super) fn add_entry(add: &Add, principal: &Principal) -> AuditEntry {
    entry(recorded_add(add), principal)
}

fn entry(
    (mode, tab, to_tab, idx, detail, previous): Recorded<'_>,
    principal: &Principal,
) -> AuditEntry {
    AuditEntry {
        id: 0,
        at: 0,
        subject: principal.subject.clone(),
        role: principal.role.as_str().into(),
        mode: mode.into(),
        tab: tab.clone(),
        to_tab,
        index: idx,
        detail,
        previous,
        outcome: crate::store::DONE.into(),
        note: String::new(),
    }
}

/// Every format of the items a delete or a tab deletion removes, for those holding more than
/// text, tags and note (a screenshot, an HTML copy, a file list): the audit entry keeps them, so
/// that a restore puts each item back as CopyQ held it. Read with the write's own check of each
/// row, so a row changed since the plan is refused before anything is recorded. Costs one more
/// call to CopyQ per such item; none for a delete's row its plan read as text, tags and note
/// alone ([`Item::bare`](crate::backend::Item::bare)). A tab deletion keeps them while their bytes fit in `max_bytes`
/// (`audit.max_bytes`, 0: no cap), in tab and row order; past it, an item keeps text, tags and
/// note only, as an entry over the cap would push every other out of the log.
pub(super) async fn kept(
    backend: &Backend,
    plan: &Plan,
    max_bytes: u64,
) -> Result<Vec<(usize, Whole)>, ToolError> {
    match plan {
        // A row the plan read as text, tags and note alone is its item whole: nothing more to
        // keep, and no read of it (the delete's own check refuses the row if it gained a format
        // since: `Item::bare`).
        Plan::Delete { item, .. } if item.bare => Ok(Vec::new()),
        Plan::Delete { tab, index, item } => {
            let whole = backend
                .every_format(&tab.full, *index, item)
                .await
                .map_err(|e| super::refused(e, tab, tab, *index))?;
            Ok(match holds_more(&whole) {
                true => vec![(0, whole)],
                false => Vec::new(),
            })
        }
        Plan::TabDelete { tabs, .. } => kept_of_tabs(backend, tabs, max_bytes).await,
        _ => Ok(Vec::new()),
    }
}

async fn kept_of_tabs(
    backend: &Backend,
    tabs: &[TabPage],
    max_bytes: u64,
) -> Result<Vec<(usize, Whole)>, ToolError> {
    let mut kept = Vec::new();
    let mut bytes = 0u64;
    let mut position = 0;
    for page in tabs {
        let tab = TabRef::from_full(&page.name);
        for (row, item) in page.items.iter().enumerate() {
            let at = position + row;
            // Items a read describes no format of hold text, tags and note alone; but a
            // password manager's item also holds its mark, which keeps it from every client:
            // kept whole, so that a restore puts the mark back.
            if item.content.formats.is_empty() && !item.secret {
                continue;
            }
            let whole = backend
                .every_format(&page.name, row, item)
                .await
                .map_err(|e| super::refused(e, &tab, &tab, row))?;
            let size: u64 = whole.iter().map(|(_, d)| d.len() as u64).sum();
            if !holds_more(&whole) || (max_bytes > 0 && bytes.saturating_add(size) > max_bytes) {
                continue;
            }
            bytes += size;
            kept.push((at, whole));
        }
        position += page.items.len();
    }
    Ok(kept)
}

/// An item's sizes, the only trace of new content the log keeps.
fn sizes(it: &Item) -> String {
    format!(
        "text_len:{}|tags:{}|note_len:{}",
        it.text.chars().count(),
        it.tags.len(),
        it.note.chars().count()
    )
}

fn index(i: usize) -> Option<i64> {
    Some(i64::try_from(i).unwrap_or(i64::MAX))
}

/// Mode, tab, target tab, index, detail, and the items a write replaced (to restore them).
type Recorded<'p> = (
    &'static str,
    &'p String,
    Option<String>,
    Option<i64>,
    String,
    Vec<(String, Vec<Item>)>,
);

fn recorded_add(Add { tab, item, .. }: &Add) -> Recorded<'_> {
    ("add", &tab.full, None, index(0), sizes(item), vec![])
}

fn recorded(plan: &Plan) -> Recorded<'_> {
    match plan {
        Plan::Add(add) => recorded_add(add),
        Plan::Update {
            tab,
            index: i,
            field,
            edit,
            before,
            after,
        } => (
            "update",
            &tab.full,
            None,
            index(*i),
            format!(
                "field:{}|edit_mode:{}|{}",
                field.name(),
                edit.name(),
                sizes(after)
            ),
            vec![(tab.full.clone(), vec![before.clone()])],
        ),
        Plan::Delete {
            tab,
            index: i,
            item,
        } => (
            "delete",
            &tab.full,
            None,
            index(*i),
            sizes(item),
            vec![(tab.full.clone(), vec![item.clone()])],
        ),
        Plan::Move {
            from,
            index: i,
            to,
            item,
            ..
        } => (
            "move",
            &from.full,
            Some(to.full.clone()),
            index(*i),
            sizes(item),
            vec![],
        ),
        Plan::TabCreate { path, .. } => {
            ("tab_create", &path.full, None, None, String::new(), vec![])
        }
        Plan::TabDelete { path, tabs } => (
            "tab_delete",
            &path.full,
            None,
            None,
            format!(
                "tabs:{}|items:{}",
                tabs.len(),
                tabs.iter().map(|p| p.total).sum::<usize>()
            ),
            tabs.iter()
                .map(|p| (p.name.clone(), p.items.clone()))
                .collect(),
        ),
    }
}
