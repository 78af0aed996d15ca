//! The audit log: every executed write, who made it, and (for deletes and overwrites) what it
//! replaced, so any agent change can be found and undone. It lives here, never in the regular log:
//! it holds clipboard contents. It is capped at `audit.max_bytes`, oldest entries first, as each
//! entry is recorded: a write token adding and deleting 1 MiB items again and again grew the
//! database by ~1.2 GB a minute, which `audit.keep` (pruned hourly) did not bound.

use rusqlite::params;
use serde::{Deserialize, Serialize};

pub use super::audit_whole::Kept;
use super::{Result, Store, StoreError, now};
use crate::backend::Item;

/// One executed write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub id: i64,
    pub at: i64,
    /// The token's subject and role.
    pub subject: String,
    pub role: String,
    pub mode: String,
    /// The CopyQ tab written (for `move`, the source), and the target of a move.
    pub tab: String,
    pub to_tab: Option<String>,
    pub index: Option<i64>,
    /// Sizes only: `text_len`, `tags`, `note_len` of what was written.
    pub detail: String,
    /// What the write removed or overwrote, as `(tab, items)` pairs in row order; for a move
    /// left in both tabs (outcome `partial`), the copy in its target.
    pub previous: Vec<(String, Vec<Item>)>,
    /// `done`; `partial` when the write failed after changing CopyQ (`note` says how), or
    /// `misdirected` when CopyQ made it in another tab.
    pub outcome: String,
    pub note: String,
}

/// The outcome of a write that went as planned.
pub const DONE: &str = "done";

/// What an entry weighs against `audit.max_bytes`: the bytes of its columns (octet_length reads
/// only the record header, not the text), and a little for the rest of the row.
/// The formats an entry keeps beside it ([`Kept`]) count too.
const ENTRY_BYTES: &str = "octet_length(previous) + octet_length(detail) + octet_length(note) \
     + octet_length(subject) + octet_length(tab) + COALESCE(octet_length(to_tab), 0) + 64 \
     + (SELECT COALESCE(SUM(octet_length(data)), 0) FROM audit_whole WHERE entry = audit.id)";

impl Store {
    pub fn record_audit(&self, e: &AuditEntry) -> Result<i64> {
        self.record_audit_kept(e, &[])
    }

    /// [`Store::record_audit`] of a write whose entry keeps every format of some of the items it
    /// replaced (see [`Kept`]), recorded with it in one transaction.
    pub fn record_audit_kept(&self, e: &AuditEntry, kept: &Kept) -> Result<i64> {
        let ids = self.record_audits(&[(e, kept)])?;
        ids.first()
            .copied()
            .ok_or_else(|| StoreError::Invalid("no audit entry was recorded".into()))
    }

    /// Several writes' entries (each with what it keeps) in one transaction, so one sync to disk
    /// for all: their ids, in order. All are recorded or none.
    pub fn record_audits(&self, entries: &[(&AuditEntry, &Kept)]) -> Result<Vec<i64>> {
        let previous = entries
            .iter()
            .map(|(e, _)| serde_json::to_string(&e.previous))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|err| StoreError::Invalid(err.to_string()))?;
        let conn = self.conn();
        let tx = conn.unchecked_transaction().map_err(|err| self.err(err))?;
        let mut ids = Vec::with_capacity(entries.len());
        for ((e, kept), previous) in entries.iter().zip(&previous) {
            tx.prepare_cached(
                "INSERT INTO audit (at, subject, role, mode, tab, to_tab, idx, detail, previous, outcome, note) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )
            .and_then(|mut insert| {
                insert.execute(params![now(), e.subject, e.role, e.mode, e.tab, e.to_tab, e.index, e.detail, previous, e.outcome, e.note])
            })
            .map_err(|err| self.err(err))?;
            let id = tx.last_insert_rowid();
            super::audit_whole::insert(&tx, id, kept).map_err(|err| self.err(err))?;
            ids.push(id);
        }
        tx.commit().map_err(|err| self.err(err))?;
        let Some(&first) = ids.first() else {
            return Ok(ids);
        };
        let max = self
            .audit_max_bytes
            .load(std::sync::atomic::Ordering::Relaxed);
        match cap_audit(&conn, max, first) {
            Ok((0, _)) => {}
            Ok((removed, bytes)) => tracing::warn!(
                removed,
                bytes,
                max_bytes = max,
                "the audit log reached audit.max_bytes: its oldest entries were removed"
            ),
            // The writes are recorded; the cap is tried again with the next one.
            Err(e) => tracing::warn!(error = %e, "cannot apply audit.max_bytes"),
        }
        Ok(ids)
    }

    /// The cap [`Store::set_audit_max_bytes`] set (0: none).
    pub fn audit_max_bytes(&self) -> u64 {
        self.audit_max_bytes
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Cap the audit log at `max_bytes` (0: no cap) from the next entry on.
    pub fn set_audit_max_bytes(&self, max_bytes: u64) {
        self.audit_max_bytes
            .store(max_bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// Entries at or after `since` (seconds since the epoch), oldest first, at most `limit`.
    pub fn audit_since(&self, since: i64, limit: usize) -> Result<Vec<AuditEntry>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT id, at, subject, role, mode, tab, to_tab, idx, detail, previous, outcome, note FROM audit \
                 WHERE at >= ?1 ORDER BY id DESC LIMIT ?2",
            )
            .map_err(|e| self.err(e))?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(params![since, limit], |r| {
                let previous: String = r.get(9)?;
                Ok(AuditEntry {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    subject: r.get(2)?,
                    role: r.get(3)?,
                    mode: r.get(4)?,
                    tab: r.get(5)?,
                    to_tab: r.get(6)?,
                    index: r.get(7)?,
                    detail: r.get(8)?,
                    previous: serde_json::from_str(&previous).unwrap_or_default(),
                    outcome: r.get(10)?,
                    note: r.get(11)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>());
        let mut entries = rows.map_err(|e| self.err(e))?;
        entries.reverse();
        Ok(entries)
    }

    /// Say how a write that failed after changing CopyQ ended (`partial`, `misdirected`), and
    /// what there is to put right when it is not what the write replaced (for a move left in
    /// both tabs, the copy in its target).
    pub fn settle_audit(
        &self,
        id: i64,
        outcome: &str,
        note: &str,
        previous: Option<&[(String, Vec<Item>)]>,
    ) -> Result<()> {
        let previous = previous
            .map(serde_json::to_string)
            .transpose()
            .map_err(|err| StoreError::Invalid(err.to_string()))?;
        self.conn()
            .execute(
                "UPDATE audit SET outcome = ?2, note = ?3, previous = COALESCE(?4, previous) WHERE id = ?1",
                params![id, outcome, note, previous],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Note where a write's item landed when it is not the row the entry names: an add made below
    /// the rows the owner pinned at the top of its tab (`index`: the row it is at), a move's
    /// item likewise in its target (`index`: `None`, the entry keeps the source's row).
    pub fn place_audit(&self, id: i64, index: Option<i64>, note: &str) -> Result<()> {
        self.conn()
            .execute(
                "UPDATE audit SET idx = COALESCE(?2, idx), note = ?3 WHERE id = ?1",
                params![id, index, note],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Withdraw an entry whose write then failed (nothing was changed).
    pub fn drop_audit(&self, id: i64) -> Result<()> {
        self.conn()
            .execute("DELETE FROM audit WHERE id = ?1", params![id])
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    pub fn audit_entry(&self, id: i64) -> Result<Option<AuditEntry>> {
        Ok(self
            .audit_since(0, usize::MAX)?
            .into_iter()
            .find(|e| e.id == id))
    }
}

/// Past `max_bytes` (0: no cap), remove the oldest entries before `newest` (the first of those
/// just recorded) until the log fits: how many, and their bytes.
fn cap_audit(
    conn: &rusqlite::Connection,
    max_bytes: u64,
    newest: i64,
) -> rusqlite::Result<(usize, i64)> {
    if max_bytes == 0 {
        return Ok((0, 0));
    }
    let total: i64 = conn.query_row(
        &format!("SELECT COALESCE(SUM({ENTRY_BYTES}), 0) FROM audit"),
        [],
        |r| r.get(0),
    )?;
    let excess = total.saturating_sub(i64::try_from(max_bytes).unwrap_or(i64::MAX));
    if excess <= 0 {
        return Ok((0, 0));
    }
    let (mut removed, mut freed, mut last) = (0, 0i64, None);
    {
        let mut stmt = conn.prepare(&format!(
            "SELECT id, {ENTRY_BYTES} FROM audit WHERE id < ?1 ORDER BY id"
        ))?;
        let mut rows = stmt.query(params![newest])?;
        while freed < excess {
            let Some(row) = rows.next()? else { break };
            last = Some(row.get::<_, i64>(0)?);
            freed += row.get::<_, i64>(1)?;
            removed += 1;
        }
    }
    if let Some(last) = last {
        conn.execute("DELETE FROM audit WHERE id <= ?1", params![last])?;
    }
    Ok((removed, freed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_keep_what_they_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let e = AuditEntry {
            id: 0,
            at: 0,
            subject: "agent".into(),
            role: "write".into(),
            mode: "delete".into(),
            tab: "mcp/info".into(),
            to_tab: None,
            index: Some(3),
            detail: "text_len:0".into(),
            previous: vec![("mcp/info".into(), vec![Item::new("gone", &["t"], "n")])],
            outcome: DONE.into(),
            note: String::new(),
        };
        let id = s.record_audit(&e).unwrap();
        let got = s.audit_entry(id).unwrap().unwrap();
        assert_eq!(
            (got.mode.as_str(), got.index, got.previous.clone()),
            ("delete", Some(3), e.previous)
        );
        assert_eq!(s.audit_since(now() + 10, 10).unwrap().len(), 0);
        assert_eq!(s.audit_since(0, 10).unwrap().len(), 1);
        let stray = vec![("mcp/b".into(), vec![Item::new("copy", &[], "")])];
        s.settle_audit(id, "partial", "copied to mcp/b", Some(&stray))
            .unwrap();
        let got = s.audit_entry(id).unwrap().unwrap();
        assert_eq!(
            (got.outcome.as_str(), got.note.as_str(), got.previous),
            ("partial", "copied to mcp/b", stray)
        );
    }

    /// A database made before outcomes were recorded gains the columns; its entries are `done`.
    #[test]
    fn an_older_audit_table_is_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let old = rusqlite::Connection::open(dir.path().join(super::super::FILE)).unwrap();
        old.execute_batch(
            "CREATE TABLE audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, \
             subject TEXT NOT NULL, role TEXT NOT NULL, mode TEXT NOT NULL, tab TEXT NOT NULL, to_tab TEXT, \
             idx INTEGER, detail TEXT NOT NULL, previous TEXT NOT NULL); \
             INSERT INTO audit (at, subject, role, mode, tab, detail, previous) \
             VALUES (1, 'a', 'write', 'add', 'mcp/x', '', '[]');",
        )
        .unwrap();
        drop(old);
        let s = Store::open(dir.path()).unwrap();
        let got = s.audit_since(0, 10).unwrap();
        assert_eq!((got.len(), got[0].outcome.as_str()), (1, DONE));
        drop(s);
        // Opening again does not add them twice.
        Store::open(dir.path()).unwrap();
    }

    #[test]
    fn the_log_is_capped_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.set_audit_max_bytes(100_000);
        let entry = |n: usize| AuditEntry {
            id: 0,
            at: 0,
            subject: "agent".into(),
            role: "write".into(),
            mode: "delete".into(),
            tab: "mcp/info".into(),
            to_tab: None,
            index: Some(0),
            detail: format!("n:{n}"),
            previous: vec![(
                "mcp/info".into(),
                vec![Item::new(&"x".repeat(10_000), &[], "")],
            )],
            outcome: DONE.into(),
            note: String::new(),
        };
        let ids: Vec<i64> = (0..30)
            .map(|n| s.record_audit(&entry(n)).unwrap())
            .collect();
        let kept = s.audit_since(0, 1000).unwrap();
        assert!((8..=10).contains(&kept.len()), "{} kept", kept.len());
        let newest: Vec<i64> = ids[ids.len() - kept.len()..].to_vec();
        let mut got: Vec<i64> = kept.iter().map(|e| e.id).collect();
        got.sort();
        assert_eq!(got, newest, "the newest are kept");
        // No cap: nothing goes.
        s.set_audit_max_bytes(0);
        for n in 0..5 {
            s.record_audit(&entry(n)).unwrap();
        }
        assert_eq!(s.audit_since(0, 1000).unwrap().len(), kept.len() + 5);
    }
}
