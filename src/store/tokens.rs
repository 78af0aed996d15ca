//! Issued access tokens by id (`jti`): CLI-issued ones for `token list|revoke`, OAuth-issued ones so
//! that revoking one stops it on the next request.

use rusqlite::{Connection, OptionalExtension, params};

use super::{Result, Store, is_busy, now};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenInfo {
    pub jti: String,
    pub subject: String,
    pub role: String,
    pub grant_id: Option<String>,
    pub created: i64,
    pub expires: Option<i64>,
    pub revoked: bool,
    /// The tabs it covers, as [`crate::clipboard::Coverage::to_stored`] keeps them.
    pub tabs: Option<String>,
}

impl Store {
    pub fn record_token(&self, t: &TokenInfo) -> Result<()> {
        let conn = self.conn();
        // Keep the table small: expired tokens can never be used again.
        conn.execute(
            "DELETE FROM tokens WHERE expires IS NOT NULL AND expires < ?1",
            params![now() - 86_400],
        )
        .map_err(|e| self.err(e))?;
        conn.execute(
            "INSERT INTO tokens (jti, subject, role, grant_id, created, expires, revoked, tabs) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![t.jti, t.subject, t.role, t.grant_id, t.created, t.expires, t.revoked, t.tabs],
        )
        .map(|_| ())
        .map_err(|e| self.err(e))
    }

    /// Tokens issued with `copyq-mcp token issue`, newest first.
    pub fn cli_tokens(&self) -> Result<Vec<TokenInfo>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT jti, subject, role, grant_id, created, expires, revoked, tabs FROM tokens WHERE grant_id IS NULL ORDER BY created DESC",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(TokenInfo {
                    jti: r.get(0)?,
                    subject: r.get(1)?,
                    role: r.get(2)?,
                    grant_id: r.get(3)?,
                    created: r.get(4)?,
                    expires: r.get(5)?,
                    revoked: r.get::<_, i64>(6)? != 0,
                    tabs: r.get(7)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>());
        rows.map_err(|e| self.err(e))
    }

    /// Revoke tokens by id, or CLI tokens by the name they were issued to; how many were revoked.
    pub fn revoke_token(&self, id_or_name: &str) -> Result<usize> {
        self.conn()
            .execute(
                "UPDATE tokens SET revoked = 1 WHERE revoked = 0 AND (jti = ?1 OR (grant_id IS NULL AND subject = ?1))",
                params![id_or_name],
            )
            .map_err(|e| self.err(e))
    }

    /// Whether a token whose signature checked out may still be used: not revoked itself, and its
    /// grant, if it has one, still live.
    pub fn token_allowed(&self, jti: &str, grant_id: Option<&str>) -> Result<bool> {
        allowed(&self.conn(), jti, grant_id).map_err(|e| self.err(e))
    }

    /// [`Store::token_allowed`] through the reader connection, which waits behind no write and
    /// for a lock at most a few ms: quick enough for an async worker. `Ok(None)` when the
    /// database was busy: ask [`Store::token_allowed`] then, off the async workers.
    pub fn token_allowed_now(&self, jti: &str, grant_id: Option<&str>) -> Result<Option<bool>> {
        match allowed(&self.reader(), jti, grant_id) {
            Ok(allowed) => Ok(Some(allowed)),
            Err(e) if is_busy(&e) => Ok(None),
            Err(e) => Err(self.err(e)),
        }
    }
}

/// Whether token `jti` (of grant `grant_id`) is neither revoked nor of a revoked grant, asked
/// of `conn`.
fn allowed(conn: &Connection, jti: &str, grant_id: Option<&str>) -> rusqlite::Result<bool> {
    // Prepared once per connection: asked on every request.
    let revoked: Option<i64> = conn
        .prepare_cached("SELECT revoked FROM tokens WHERE jti = ?1")
        .and_then(|mut s| s.query_row(params![jti], |r| r.get(0)).optional())?;
    if revoked.unwrap_or(0) != 0 {
        return Ok(false);
    }
    let Some(grant) = grant_id else {
        return Ok(true);
    };
    let live: Option<i64> = conn
        .prepare_cached("SELECT 1 FROM grants WHERE grant_id = ?1 AND revoked = 0")
        .and_then(|mut s| s.query_row(params![grant], |r| r.get(0)).optional())?;
    Ok(live.is_some())
}

#[cfg(test)]
mod tests {
    use super::super::NewClient;
    use super::*;

    /// A read token `jti` of `subject` (and of `grant`, if any), issued now.
    fn t(jti: &str, subject: &str, grant: Option<&str>) -> TokenInfo {
        TokenInfo {
            jti: jti.into(),
            subject: subject.into(),
            role: "read".into(),
            grant_id: grant.map(String::from),
            created: now(),
            expires: None,
            revoked: false,
            tabs: None,
        }
    }

    /// An OAuth client registered in `s`: its id.
    fn client(s: &Store) -> String {
        s.register_client(&NewClient {
            name: "c".into(),
            redirect_uris: vec![],
            auth_method: "none".into(),
            secret: None,
        })
        .unwrap()
    }

    #[test]
    fn revocation_by_id_name_and_grant() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.record_token(&t("j1", "laptop", None)).unwrap();
        s.record_token(&t("j2", "script", None)).unwrap();
        assert!(s.token_allowed("j1", None).unwrap());
        assert!(
            s.token_allowed("unrecorded", None).unwrap(),
            "tokens from before the store existed still work"
        );
        assert_eq!(s.revoke_token("laptop").unwrap(), 1);
        assert!(!s.token_allowed("j1", None).unwrap());
        assert_eq!(s.revoke_token("j2").unwrap(), 1);
        assert!(!s.token_allowed("j2", None).unwrap());
        assert_eq!(s.cli_tokens().unwrap().len(), 2);

        let c = client(&s);
        let g = s.create_grant(&c, "write").unwrap();
        s.record_token(&t("j3", &c, Some(&g))).unwrap();
        assert!(s.token_allowed("j3", Some(&g)).unwrap());
        s.revoke_grant(&g).unwrap();
        assert!(!s.token_allowed("j3", Some(&g)).unwrap());
        assert!(!s.token_allowed("j4", Some("no-such-grant")).unwrap());
    }

    /// The bearer check's reader connection sees each revocation on the next check: one made by
    /// another process (`copyq-mcp token revoke`, here a second store on the same file) and one
    /// made through the gateway's own first connection (an OAuth grant revoked), with reads of
    /// it in between (a read left open would keep the older snapshot).
    #[test]
    fn the_bearer_checks_reader_sees_every_revocation_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let gateway = Store::open(dir.path()).unwrap();
        let cli = Store::open(dir.path()).unwrap();
        cli.record_token(&t("laptop", "laptop", None)).unwrap();
        let c = client(&gateway);
        let grant = gateway.create_grant(&c, "write").unwrap();
        gateway.record_token(&t("oauth", &c, Some(&grant))).unwrap();
        for _ in 0..3 {
            assert_eq!(
                gateway.token_allowed_now("laptop", None).unwrap(),
                Some(true)
            );
            assert_eq!(
                gateway.token_allowed_now("oauth", Some(&grant)).unwrap(),
                Some(true)
            );
        }
        assert_eq!(cli.revoke_token("laptop").unwrap(), 1);
        assert_eq!(
            gateway.token_allowed_now("laptop", None).unwrap(),
            Some(false)
        );
        gateway.revoke_grant(&grant).unwrap();
        assert_eq!(
            gateway.token_allowed_now("oauth", Some(&grant)).unwrap(),
            Some(false)
        );
    }

    /// A database file replaced under the gateway fails the reader's checks too (as the first
    /// connection's): a revocation written to the new file must not be missed by reading the old.
    #[cfg(unix)]
    #[test]
    fn the_readers_checks_fail_once_the_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let gateway = Store::open(dir.path()).unwrap();
        assert_eq!(gateway.token_allowed_now("any", None).unwrap(), Some(true));
        let path = dir.path().join(super::super::FILE);
        std::fs::rename(&path, dir.path().join("moved.db")).unwrap();
        drop(Store::open(dir.path()).unwrap());
        assert!(matches!(
            gateway.token_allowed_now("any", None),
            Err(crate::store::StoreError::Replaced(_))
        ));
        assert!(matches!(
            gateway.token_allowed("any", None),
            Err(crate::store::StoreError::Replaced(_))
        ));
    }
}
