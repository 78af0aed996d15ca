//! Every format of the items an audit entry replaced, for items holding more than text, tags and
//! note (a deleted screenshot): kept in a table of their own, so that listing the log never reads
//! image bytes, written in the entry's transaction, counted against `audit.max_bytes` with it, and
//! removed with it by a trigger on every path that removes entries (the cap, `audit.keep`, a
//! withdrawn write). In the database rather than in files beside it: an entry and its formats
//! cannot then part (a crash between a file and its row), and no other path needs to prune them.

use rusqlite::{Connection, params};

use super::{Result, Store};
use crate::backend::Whole;

/// `(position of the item among the entry's previous items, counted across tabs in order; every
/// format of it)`.
pub type Kept = [(usize, Whole)];

pub(super) fn insert(conn: &Connection, entry: i64, kept: &Kept) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO audit_whole (entry, item, mime, data) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (item, whole) in kept {
        let item = i64::try_from(*item).unwrap_or(i64::MAX);
        for (mime, data) in whole {
            stmt.execute(params![entry, item, mime, data])?;
        }
    }
    Ok(())
}

impl Store {
    /// What entry `id` keeps of its items' formats, in item order; empty when none.
    pub fn audit_kept(&self, id: i64) -> Result<Vec<(usize, Whole)>> {
        let conn = self.conn();
        let rows = conn
            .prepare(
                "SELECT item, mime, data FROM audit_whole WHERE entry = ?1 ORDER BY item, rowid",
            )
            .and_then(|mut stmt| {
                stmt.query_map(params![id], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, Vec<u8>>(2)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(|e| self.err(e))?;
        let mut kept: Vec<(usize, Whole)> = Vec::new();
        for (item, mime, data) in rows {
            let item = usize::try_from(item).unwrap_or(usize::MAX);
            match kept.last_mut() {
                Some((at, whole)) if *at == item => whole.push((mime, data)),
                _ => kept.push((item, vec![(mime, data)])),
            }
        }
        Ok(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{AuditEntry, DONE};
    use super::*;
    use crate::backend::Item;

    fn entry() -> AuditEntry {
        AuditEntry {
            id: 0,
            at: 0,
            subject: "agent".into(),
            role: "write".into(),
            mode: "delete".into(),
            tab: "mcp/shots".into(),
            to_tab: None,
            index: Some(0),
            detail: String::new(),
            previous: vec![("mcp/shots".into(), vec![Item::new("", &[], "")])],
            outcome: DONE.into(),
            note: String::new(),
        }
    }

    fn shot(n: usize) -> Whole {
        vec![
            ("text/plain".into(), Vec::new()),
            (
                "image/png".into(),
                vec![u8::try_from(n % 256).unwrap(); 40_000],
            ),
        ]
    }

    fn rows(s: &Store) -> i64 {
        s.conn()
            .query_row("SELECT COUNT(*) FROM audit_whole", [], |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn formats_are_kept_with_their_entry_and_go_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let id = s.record_audit_kept(&entry(), &[(0, shot(1))]).unwrap();
        assert_eq!(s.audit_kept(id).unwrap(), vec![(0, shot(1))]);
        let plain = s.record_audit(&entry()).unwrap();
        assert!(s.audit_kept(plain).unwrap().is_empty());
        // A withdrawn write takes its formats with it.
        s.drop_audit(id).unwrap();
        assert_eq!(rows(&s), 0);
    }

    /// Kept formats weigh against `audit.max_bytes`: deleting screenshot after screenshot cannot
    /// grow the database past the cap, and the formats of capped entries go too.
    #[test]
    fn kept_formats_count_against_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.set_audit_max_bytes(100_000);
        let ids: Vec<i64> = (0..10)
            .map(|n| s.record_audit_kept(&entry(), &[(0, shot(n))]).unwrap())
            .collect();
        let left = s.audit_since(0, 100).unwrap();
        assert_eq!(
            left.len(),
            2,
            "two 40 kB screenshots fit in 100 kB, not three"
        );
        assert_eq!(rows(&s), 4, "the capped entries' formats are gone");
        assert_eq!(s.audit_kept(ids[9]).unwrap(), vec![(0, shot(9))]);
    }
}
