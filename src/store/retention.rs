//! What the database forgets, so that it does not grow for ever: audit entries older than
//! `audit.keep`, codes long expired, refresh tokens past their expiry (reuse detection needs a
//! used one only while it could still be presented), grants revoked or idle past the refresh
//! lifetime (none of their refresh tokens can still be valid), and token records past their expiry.
//! A revoked token without expiry is never forgotten: the deny list needs it for ever.

use std::time::Duration;

use rusqlite::params;

use super::{Result, Store, now, secs};

/// How long an expired code stays (its reuse is detected while it is kept).
const CODE_GRACE_SECS: i64 = 86_400;

/// How many rows of each kind one pruning removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Pruned {
    pub audit: usize,
    pub codes: usize,
    pub refresh_tokens: usize,
    pub grants: usize,
    pub tokens: usize,
}

impl Store {
    /// Forget what is past keeping. `audit_keep`: `None` keeps the audit log for ever.
    pub fn prune(&self, audit_keep: Option<Duration>, refresh_ttl: Duration) -> Result<Pruned> {
        let t = now();
        let conn = self.conn();
        let run = || -> rusqlite::Result<Pruned> {
            let audit = match audit_keep {
                Some(keep) => {
                    conn.execute("DELETE FROM audit WHERE at < ?1", params![t - secs(keep)])?
                }
                None => 0,
            };
            let codes = conn.execute(
                "DELETE FROM codes WHERE expires < ?1",
                params![t - CODE_GRACE_SECS],
            )?;
            let refresh_tokens =
                conn.execute("DELETE FROM refresh_tokens WHERE expires < ?1", params![t])?;
            let grants = conn.execute(
                "DELETE FROM grants WHERE (revoked = 1 AND COALESCE(last_used, created) < ?1) \
                 OR COALESCE(last_used, created) < ?2",
                params![t - CODE_GRACE_SECS, t - secs(refresh_ttl)],
            )?;
            let tokens = conn.execute(
                "DELETE FROM tokens WHERE expires IS NOT NULL AND expires < ?1",
                params![t],
            )?;
            Ok(Pruned {
                audit,
                codes,
                refresh_tokens,
                grants,
                tokens,
            })
        };
        run().map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{CodeRecord, NewClient, TokenInfo};

    #[test]
    fn old_rows_go_and_live_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        let client = s
            .register_client(&NewClient {
                name: "app".into(),
                redirect_uris: vec!["https://a/cb".into()],
                auth_method: "none".into(),
                secret: None,
            })
            .unwrap();
        let live = s.create_grant(&client, "read").unwrap();
        let idle = s.create_grant(&client, "read").unwrap();
        let revoked = s.create_grant(&client, "read").unwrap();
        let record = |g: &str| CodeRecord {
            grant_id: g.into(),
            client_id: client.clone(),
            redirect_uri: "https://a/cb".into(),
            challenge: "c".into(),
        };
        s.save_code("old-code", &record(&live), now() - 2 * 86_400)
            .unwrap();
        s.save_code("new-code", &record(&live), now() + 60).unwrap();
        s.save_refresh("old-refresh", &live, now() - 1).unwrap();
        s.save_refresh("new-refresh", &live, now() + 3600).unwrap();
        let token = |jti: &str, expires: Option<i64>, revoked: bool| TokenInfo {
            jti: jti.into(),
            subject: "x".into(),
            role: "read".into(),
            grant_id: None,
            created: now(),
            expires,
            revoked,
            tabs: None,
        };
        s.record_token(&token("expired", Some(now() - 1), false))
            .unwrap();
        s.record_token(&token("revoked-forever", None, true))
            .unwrap();
        s.record_token(&token("current", Some(now() + 60), false))
            .unwrap();
        let conn = rusqlite::Connection::open(dir.path().join(super::super::FILE)).unwrap();
        let old = now() - 40 * 86_400;
        conn.execute(
            "UPDATE grants SET created = ?1 WHERE grant_id IN (?2, ?3)",
            params![old, idle, revoked],
        )
        .unwrap();
        conn.execute(
            "UPDATE grants SET revoked = 1 WHERE grant_id = ?1",
            params![revoked],
        )
        .unwrap();
        for (at, detail) in [(old, "old"), (now(), "new")] {
            conn.execute(
                "INSERT INTO audit (at, subject, role, mode, tab, detail, previous) VALUES (?1, 's', 'write', 'add', 'mcp/info', ?2, '')",
                params![at, detail],
            )
            .unwrap();
        }
        let pruned = s
            .prune(
                Some(Duration::from_secs(30 * 86_400)),
                Duration::from_secs(30 * 86_400),
            )
            .unwrap();
        assert_eq!(
            pruned,
            Pruned {
                audit: 1,
                codes: 1,
                refresh_tokens: 1,
                grants: 2,
                tokens: 1
            }
        );
        let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0)).unwrap();
        assert_eq!(count("SELECT COUNT(*) FROM audit WHERE detail = 'new'"), 1);
        assert_eq!(
            count("SELECT COUNT(*) FROM tokens WHERE jti = 'revoked-forever'"),
            1
        );
        assert_eq!(count("SELECT COUNT(*) FROM grants"), 1);
        assert_eq!(s.live_grant_role(&live).unwrap().as_deref(), Some("read"));
        // Nothing kept for ever is touched when the audit log is kept for ever.
        assert_eq!(
            s.prune(None, Duration::from_secs(30 * 86_400)).unwrap(),
            Pruned::default()
        );
    }
}
