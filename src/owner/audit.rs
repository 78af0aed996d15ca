//! The owner's commands on the audit log: list it, and put back what an audited write removed or
//! overwrote, or remove the copy a move left in both tabs made in its target.

use std::time::UNIX_EPOCH;

use super::{open, when};
use crate::config::Settings;
use crate::out::outln;
use crate::store::{Store, now};

/// The audit log since `since` (a duration back from now, e.g. `1h`, or an RFC 3339 time).
pub fn show_audit(settings: &Settings, since: Option<&str>, limit: usize) -> Result<(), String> {
    let from = match since {
        None => 0,
        Some(s) => match humantime::parse_duration(s) {
            Ok(d) => now() - crate::store::secs(d),
            Err(_) => humantime::parse_rfc3339_weak(s)
                .map_err(|_| {
                    format!(
                        "--since '{s}': not a duration (1h, 2d) nor a time (2026-11-30T10:00:00)"
                    )
                })?
                .duration_since(UNIX_EPOCH)
                .map_or(0, crate::store::secs),
        },
    };
    let entries = open(settings)?
        .audit_since(from, limit)
        .map_err(|e| e.to_string())?;
    for e in entries {
        let index = e.index.map(|i| format!("[{i}]")).unwrap_or_default();
        let target = e.to_tab.map(|t| format!(" -> {t}")).unwrap_or_default();
        let kept: usize = e.previous.iter().map(|(_, items)| items.len()).sum();
        let restorable = if kept > 0 {
            format!("  restorable: {kept} item(s)")
        } else {
            String::new()
        };
        let outcome = if e.outcome == crate::store::DONE {
            String::new()
        } else {
            format!("  {}: {}", e.outcome.to_uppercase(), e.note)
        };
        outln!(
            "#{:<5} {}  {} ({})  {:<10} {}{index}{target}  {}{outcome}{restorable}",
            e.id,
            when(Some(e.at)),
            e.subject,
            e.role,
            e.mode,
            e.tab,
            e.detail
        );
    }
    Ok(())
}

/// Put back what an audited write removed or overwrote: each item is added again at the top of
/// its tab (a deleted tab is recreated), in the original order. The restore is audited too.
pub async fn restore(settings: &Settings, id: i64) -> Result<(), String> {
    let store = open(settings)?;
    let entry = store
        .audit_entry(id)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no audit entry #{id}"))?;
    if let Some(done) = already_restored(&store, id)? {
        return Err(format!(
            "audit entry #{id} was already restored (audit entry #{done}); restoring it again \
             would put the same items back twice"
        ));
    }
    if entry.previous.iter().all(|(_, items)| items.is_empty()) {
        return Err(format!(
            "audit entry #{id} ({}) replaced nothing; there is nothing to restore",
            entry.mode
        ));
    }
    let backend = crate::app::backend(settings).await;
    let request = crate::backend::ReadRequest {
        tabs: crate::backend::TabSelector::Names { names: vec![] },
        skip: 0,
        limit: Some(0),
        preview: None,
    };
    let (_, limit) = backend
        .read_with_max_items(&request)
        .await
        .map_err(|e| e.to_string())?;
    if entry.mode == "move" {
        // Only a move left in both tabs has something kept: its copy in the target.
        let restored = remove_copies(&backend, &entry.tab, &entry.previous).await?;
        audit_restore(&store, &entry, restored)?;
        eprintln!(
            "removed {restored} copy (copies) that audit entry #{id} (a move left in both tabs) made in its target"
        );
        return Ok(());
    }
    let kept = store.audit_kept(id).map_err(|e| e.to_string())?;
    let mut restored = 0;
    let mut position = 0;
    for (tab, items) in &entry.previous {
        if items.is_empty() {
            backend.create_tab(tab).await.map_err(|e| e.to_string())?;
        }
        let first = position;
        position += items.len();
        for (at, item) in items.iter().enumerate().rev() {
            // An item the entry keeps whole (a screenshot) goes back with every format it had.
            let whole = kept.iter().find(|(i, _)| *i == first + at).map(|(_, w)| w);
            let put = match whole {
                Some(whole) => backend.insert_whole(tab, item, whole, limit).await,
                None => backend.insert(tab, item, limit).await,
            };
            put.map_err(|e| format!("restoring into {tab}: {e}"))?;
            restored += 1;
        }
    }
    audit_restore(&store, &entry, restored)?;
    eprintln!(
        "restored {restored} item(s) from audit entry #{id} ({}) at the top of their tabs",
        entry.mode
    );
    Ok(())
}

/// Every row of `tab` (none if it is missing).
async fn rows(
    backend: &crate::backend::Backend,
    tab: &str,
) -> Result<Vec<crate::backend::Item>, String> {
    let request = crate::backend::ReadRequest {
        tabs: crate::backend::TabSelector::Names {
            names: vec![tab.to_owned()],
        },
        skip: 0,
        limit: None,
        preview: None,
    };
    let snap = backend.read(&request).await.map_err(|e| e.to_string())?;
    Ok(snap
        .pages
        .into_iter()
        .next()
        .map(|p| p.items)
        .unwrap_or_default())
}

/// Remove from each tab the first row holding each item: the copies a move left in its target,
/// while the item is still in the move's `source` (else the move may have been completed after
/// all, and the copy is the only one).
async fn remove_copies(
    backend: &crate::backend::Backend,
    source: &str,
    copies: &[(String, Vec<crate::backend::Item>)],
) -> Result<usize, String> {
    let mut removed = 0;
    for (tab, items) in copies {
        for item in items {
            if !rows(backend, source).await?.contains(item) {
                return Err(format!(
                    "the item is no longer in {source}, so the copy in {tab} may be its only one; nothing removed"
                ));
            }
            let row = rows(backend, tab)
                .await?
                .iter()
                .position(|it| it == item)
                .ok_or_else(|| format!("the copy is no longer in {tab}; nothing to remove"))?;
            backend
                .remove(
                    tab,
                    row,
                    item,
                    (
                        crate::backend::Prepared::none(),
                        crate::backend::ready_now(),
                    ),
                )
                .await
                .map_err(|e| format!("removing the copy from {tab}: {e}"))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// The restore entry that already put back entry `id`, if any (restores are audited with
/// `from:#ID|...`).
fn already_restored(store: &Store, id: i64) -> Result<Option<i64>, String> {
    let mark = format!("from:#{id}|");
    Ok(store
        .audit_since(0, usize::MAX)
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|e| e.mode == "restore" && e.detail.starts_with(&mark))
        .map(|e| e.id))
}

/// A restore is audited too.
fn audit_restore(
    store: &Store,
    entry: &crate::store::AuditEntry,
    restored: usize,
) -> Result<(), String> {
    store
        .record_audit(&crate::store::AuditEntry {
            id: 0,
            at: 0,
            subject: "owner".into(),
            role: "write".into(),
            mode: "restore".into(),
            tab: entry.tab.clone(),
            to_tab: None,
            index: Some(0),
            detail: format!("from:#{}|items:{restored}", entry.id),
            previous: vec![],
            outcome: crate::store::DONE.into(),
            note: String::new(),
        })
        .map(|_| ())
        .map_err(|e| e.to_string())
}
