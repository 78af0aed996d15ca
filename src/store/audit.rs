//! The audit log: every executed write, who made it, and (for deletes and overwrites) what it
//! replaced, so any agent change can be found and undone. It lives here, never in the regular log:
//! it holds clipboard contents.

use rusqlite::params;
use serde::{Deserialize, Serialize};

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

impl Store {
    pub fn record_audit(&self, e: &AuditEntry) -> Result<i64> {
        let previous = serde_json::to_string(&e.previous)
            .map_err(|err| StoreError::Invalid(err.to_string()))?;
        let conn = self.conn();
        conn.execute(
            "INSERT INTO audit (at, subject, role, mode, tab, to_tab, idx, detail, previous, outcome, note) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![now(), e.subject, e.role, e.mode, e.tab, e.to_tab, e.index, e.detail, previous, e.outcome, e.note],
        )
        .map_err(|err| self.err(err))?;
        Ok(conn.last_insert_rowid())
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
}
