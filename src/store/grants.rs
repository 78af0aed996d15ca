//! The grants the owner approved (to the clients of [`super::clients`]), and the single-use codes
//! and rotating refresh tokens that carry a grant. Codes and refresh tokens are stored only as hashes; reusing either
//! revokes the whole grant.

use rusqlite::{OptionalExtension, params};

use super::{Result, Store, StoreError, hash, now, random_token};

#[derive(Debug, Clone)]
pub struct GrantInfo {
    pub grant_id: String,
    pub client_id: String,
    pub client_name: String,
    pub role: String,
    pub created: i64,
    pub last_used: Option<i64>,
    pub revoked: bool,
    /// The tabs it covers, as [`crate::clipboard::Coverage::to_stored`] keeps them.
    pub tabs: Option<String>,
}

/// A grant that is still live: whose it is, and what it allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveGrant {
    pub client_id: String,
    pub role: String,
    /// As [`crate::clipboard::Coverage::to_stored`] keeps it.
    pub tabs: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRecord {
    pub grant_id: String,
    pub client_id: String,
    pub redirect_uri: String,
    pub challenge: String,
}

/// What presenting a code or refresh token found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken<T> {
    Valid(T),
    /// Used before: the grant it belonged to is now revoked.
    Reused,
    Expired,
    Unknown,
}

impl Store {
    /// Every grant, newest first, with its client's name.
    pub fn grants(&self) -> Result<Vec<GrantInfo>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT g.grant_id, g.client_id, COALESCE(c.name, '(deleted client)'), g.role, g.created, g.last_used, g.revoked, g.tabs \
                 FROM grants g LEFT JOIN clients c ON c.client_id = g.client_id ORDER BY g.created DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(GrantInfo {
                    grant_id: r.get(0)?,
                    client_id: r.get(1)?,
                    client_name: r.get(2)?,
                    role: r.get(3)?,
                    created: r.get(4)?,
                    last_used: r.get(5)?,
                    revoked: r.get::<_, i64>(6)? != 0,
                    tabs: r.get(7)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>());
        rows.map_err(|e| self.err(e))
    }

    /// A grant over every tab.
    pub fn create_grant(&self, client_id: &str, role: &str) -> Result<String> {
        self.create_grant_covering(client_id, role, None)
    }

    /// A grant over the tabs `tabs` names (stored form; `None`: every tab).
    pub fn create_grant_covering(
        &self,
        client_id: &str,
        role: &str,
        tabs: Option<&str>,
    ) -> Result<String> {
        let id = random_token();
        self.conn()
            .execute(
                "INSERT INTO grants (grant_id, client_id, role, created, tabs) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![id, client_id, role, now(), tabs],
            )
            .map_err(|e| self.err(e))?;
        Ok(id)
    }

    /// The role of a grant that is still live.
    pub fn live_grant_role(&self, grant_id: &str) -> Result<Option<String>> {
        Ok(self.live_grant(grant_id)?.map(|g| g.role))
    }

    /// A grant that is still live.
    pub fn live_grant(&self, grant_id: &str) -> Result<Option<LiveGrant>> {
        self.conn()
            .query_row(
                "SELECT client_id, role, tabs FROM grants WHERE grant_id = ?1 AND revoked = 0",
                params![grant_id],
                |r| {
                    Ok(LiveGrant {
                        client_id: r.get(0)?,
                        role: r.get(1)?,
                        tabs: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Revoke a grant: its refresh tokens go, and its access tokens stop working on the next request.
    pub fn revoke_grant(&self, grant_id: &str) -> Result<bool> {
        let conn = self.conn();
        let run = || -> rusqlite::Result<bool> {
            conn.execute(
                "DELETE FROM refresh_tokens WHERE grant_id = ?1",
                params![grant_id],
            )?;
            Ok(conn.execute(
                "UPDATE grants SET revoked = 1 WHERE grant_id = ?1",
                params![grant_id],
            )? > 0)
        };
        run().map_err(|e| self.err(e))
    }

    /// Record when grants were last used, on a connection of its own (see `flush_last_use`).
    pub fn touch_grants_apart(&self, uses: &[(String, i64)]) -> Result<()> {
        // Never open (and so create) a file that replaced the one this store opened.
        drop(self.conn());
        if self.replaced.load(std::sync::atomic::Ordering::Acquire) {
            return Err(StoreError::Replaced(self.path.clone()));
        }
        let run = || -> rusqlite::Result<()> {
            let mut conn = rusqlite::Connection::open(&self.path)?;
            conn.busy_timeout(std::time::Duration::from_secs(30))?;
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            for (grant_id, at) in uses {
                tx.execute(
                    "UPDATE grants SET last_used = ?2 WHERE grant_id = ?1 AND (last_used IS NULL OR last_used < ?2)",
                    params![grant_id, at],
                )?;
            }
            tx.commit()
        };
        run().map_err(|e| self.err(e))
    }

    pub fn save_code(&self, code: &str, record: &CodeRecord, expires: i64) -> Result<()> {
        self.conn()
            .execute(
                "INSERT INTO codes (code_hash, grant_id, client_id, redirect_uri, challenge, expires) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![hash(code), record.grant_id, record.client_id, record.redirect_uri, record.challenge, expires],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// Use a code once. A second use revokes the grant it created.
    pub fn take_code(&self, code: &str) -> Result<Taken<CodeRecord>> {
        let found = self
            .conn()
            .query_row(
                "SELECT grant_id, client_id, redirect_uri, challenge, expires, used FROM codes WHERE code_hash = ?1",
                params![hash(code)],
                |r| {
                    let rec = CodeRecord { grant_id: r.get(0)?, client_id: r.get(1)?, redirect_uri: r.get(2)?, challenge: r.get(3)? };
                    Ok((rec, r.get::<_, i64>(4)?, r.get::<_, i64>(5)? != 0))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((rec, expires, used)) = found else {
            return Ok(Taken::Unknown);
        };
        if used {
            self.revoke_grant(&rec.grant_id)?;
            return Ok(Taken::Reused);
        }
        let marked = self
            .conn()
            .execute(
                "UPDATE codes SET used = 1 WHERE code_hash = ?1 AND used = 0",
                params![hash(code)],
            )
            .map_err(|e| self.err(e))?;
        if marked == 0 {
            // Another request took it between our read and our write.
            self.revoke_grant(&rec.grant_id)?;
            return Ok(Taken::Reused);
        }
        if expires < now() {
            self.revoke_grant(&rec.grant_id)?;
            return Ok(Taken::Expired);
        }
        Ok(Taken::Valid(rec))
    }

    pub fn save_refresh(&self, token: &str, grant_id: &str, expires: i64) -> Result<()> {
        self.conn()
            .execute(
                "INSERT INTO refresh_tokens (token_hash, grant_id, expires) VALUES (?1, ?2, ?3)",
                params![hash(token), grant_id, expires],
            )
            .map(|_| ())
            .map_err(|e| self.err(e))
    }

    /// The grant of an unused refresh token, without using it.
    pub fn refresh_grant(&self, token: &str) -> Result<Option<String>> {
        self.conn()
            .query_row(
                "SELECT grant_id FROM refresh_tokens WHERE token_hash = ?1 AND used = 0",
                params![hash(token)],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Use a refresh token once (rotation). A second use revokes the whole grant.
    pub fn take_refresh(&self, token: &str) -> Result<Taken<String>> {
        let found = self
            .conn()
            .query_row(
                "SELECT grant_id, expires, used FROM refresh_tokens WHERE token_hash = ?1",
                params![hash(token)],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)? != 0,
                    ))
                },
            )
            .optional()
            .map_err(|e| self.err(e))?;
        let Some((grant, expires, used)) = found else {
            return Ok(Taken::Unknown);
        };
        let marked = self
            .conn()
            .execute(
                "UPDATE refresh_tokens SET used = 1 WHERE token_hash = ?1 AND used = 0",
                params![hash(token)],
            )
            .map_err(|e| self.err(e))?;
        if used || marked == 0 {
            self.revoke_grant(&grant)?;
            return Ok(Taken::Reused);
        }
        if expires < now() {
            return Ok(Taken::Expired);
        }
        Ok(Taken::Valid(grant))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NewClient;

    fn store() -> (tempfile::TempDir, Store) {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        (dir, s)
    }

    fn client(s: &Store) -> String {
        s.register_client(&NewClient {
            name: "Claude".into(),
            redirect_uris: vec!["https://claude.ai/api/mcp/auth_callback".into()],
            auth_method: "none".into(),
            secret: None,
        })
        .unwrap()
    }

    #[test]
    fn codes_are_single_use_and_reuse_revokes() {
        let (_d, s) = store();
        let c = client(&s);
        let g = s.create_grant(&c, "write").unwrap();
        let rec = CodeRecord {
            grant_id: g.clone(),
            client_id: c,
            redirect_uri: "r".into(),
            challenge: "x".into(),
        };
        s.save_code("code-1", &rec, now() + 60).unwrap();
        assert_eq!(s.take_code("code-1").unwrap(), Taken::Valid(rec));
        assert_eq!(s.live_grant_role(&g).unwrap().as_deref(), Some("write"));
        assert_eq!(s.take_code("code-1").unwrap(), Taken::Reused);
        assert_eq!(s.live_grant_role(&g).unwrap(), None);
        assert_eq!(s.take_code("nope").unwrap(), Taken::Unknown);
    }

    #[test]
    fn refresh_rotation_and_reuse() {
        let (_d, s) = store();
        let c = client(&s);
        let g = s.create_grant(&c, "read").unwrap();
        s.save_refresh("r1", &g, now() + 100).unwrap();
        assert_eq!(s.take_refresh("r1").unwrap(), Taken::Valid(g.clone()));
        s.save_refresh("r2", &g, now() + 100).unwrap();
        assert_eq!(s.take_refresh("r1").unwrap(), Taken::Reused);
        assert_eq!(
            s.live_grant_role(&g).unwrap(),
            None,
            "reuse revokes the grant"
        );
        assert_eq!(
            s.take_refresh("r2").unwrap(),
            Taken::Unknown,
            "and its other refresh tokens"
        );
    }

    #[test]
    fn deleting_a_client_revokes_its_grants() {
        let (_d, s) = store();
        let c = client(&s);
        let g = s.create_grant(&c, "read").unwrap();
        assert!(s.client(&c).unwrap().is_some());
        assert!(s.delete_client(&c).unwrap());
        assert!(s.client(&c).unwrap().is_none());
        assert_eq!(s.live_grant_role(&g).unwrap(), None);
        assert_eq!(s.grants().unwrap()[0].client_name, "(deleted client)");
    }
}
