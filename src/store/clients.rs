//! OAuth clients: registered ones (RFC 7591) and those a client-ID metadata document describes,
//! with the clean-up of registrations never approved. Removing a client revokes its grants.

use rusqlite::{OptionalExtension, params};

use super::{Result, Store, hash, now, random_token};

#[derive(Debug, Clone)]
pub struct NewClient {
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// `none`, `client_secret_post` or `client_secret_basic`.
    pub auth_method: String,
    pub secret: Option<String>,
}

#[derive(Debug, Clone)]
pub struct ClientInfo {
    pub client_id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    pub auth_method: String,
    pub secret_hash: Option<String>,
    pub created: i64,
}

fn client_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClientInfo> {
    let uris: String = r.get(2)?;
    Ok(ClientInfo {
        client_id: r.get(0)?,
        name: r.get(1)?,
        redirect_uris: serde_json::from_str(&uris).unwrap_or_default(),
        auth_method: r.get(3)?,
        secret_hash: r.get(4)?,
        created: r.get(5)?,
    })
}

impl Store {
    pub fn register_client(&self, c: &NewClient) -> Result<String> {
        let id = random_token();
        let uris = serde_json::to_string(&c.redirect_uris)
            .map_err(|e| super::StoreError::Invalid(e.to_string()))?;
        self.conn()
            .execute(
                "INSERT INTO clients (client_id, secret_hash, auth_method, name, redirect_uris, created) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![id, c.secret.as_deref().map(hash), c.auth_method, c.name, uris, now()],
            )
            .map_err(|e| self.err(e))?;
        Ok(id)
    }

    /// Record the client a client-ID metadata document describes, under its URL (public, no
    /// secret), or refresh its name and redirect URIs from a newer copy of the document.
    pub fn save_document_client(
        &self,
        client_id: &str,
        name: &str,
        redirect_uris: &[String],
    ) -> Result<()> {
        let uris = serde_json::to_string(redirect_uris)
            .map_err(|e| super::StoreError::Invalid(e.to_string()))?;
        self.conn()
            .execute(
                "INSERT INTO clients (client_id, secret_hash, auth_method, name, redirect_uris, created) VALUES (?1, NULL, 'none', ?2, ?3, ?4) \
                 ON CONFLICT(client_id) DO UPDATE SET name = excluded.name, redirect_uris = excluded.redirect_uris",
                params![client_id, name, uris, now()],
            )
            .map_err(|e| self.err(e))?;
        Ok(())
    }

    /// Remove clients registered before `before` that were never approved (hold no grant): the
    /// leftovers of abandoned connects, or of someone filling the registry.
    pub fn expire_unapproved_clients(&self, before: i64) -> Result<usize> {
        self.conn()
            .execute(
                "DELETE FROM clients WHERE created < ?1 AND client_id NOT IN (SELECT client_id FROM grants)",
                params![before],
            )
            .map_err(|e| self.err(e))
    }

    /// Registered clients never approved, newest first.
    pub fn unapproved_clients(&self) -> Result<Vec<ClientInfo>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT client_id, name, redirect_uris, auth_method, secret_hash, created FROM clients \
                 WHERE client_id NOT IN (SELECT client_id FROM grants) ORDER BY created DESC",
            )
            .map_err(|e| self.err(e))?;
        stmt.query_map([], client_row)
            .and_then(Iterator::collect)
            .map_err(|e| self.err(e))
    }

    pub fn client_count(&self) -> Result<usize> {
        self.conn()
            .query_row("SELECT COUNT(*) FROM clients", [], |r| r.get::<_, i64>(0))
            .map(|n| usize::try_from(n).unwrap_or(0))
            .map_err(|e| self.err(e))
    }

    pub fn client(&self, client_id: &str) -> Result<Option<ClientInfo>> {
        self.conn()
            .query_row(
                "SELECT client_id, name, redirect_uris, auth_method, secret_hash, created FROM clients WHERE client_id = ?1",
                params![client_id],
                client_row,
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Clients never approved that registered under `name` with `auth_method`: the candidates
    /// a re-registration from this machine may take over (`oauth/register.rs`).
    pub fn unapproved_named(&self, name: &str, auth_method: &str) -> Result<Vec<ClientInfo>> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT client_id, name, redirect_uris, auth_method, secret_hash, created FROM clients \
                 WHERE name = ?1 AND auth_method = ?2 AND client_id NOT IN (SELECT client_id FROM grants) \
                 ORDER BY created DESC",
            )
            .map_err(|e| self.err(e))?;
        stmt.query_map(params![name, auth_method], client_row)
            .and_then(Iterator::collect)
            .map_err(|e| self.err(e))
    }

    /// Give a client never approved new redirect URIs and a new secret (or none), and count its
    /// hour until it is forgotten from now. Nothing changes for a client that holds a grant.
    pub fn renew_unapproved_client(
        &self,
        client_id: &str,
        redirect_uris: &[String],
        secret: Option<&str>,
    ) -> Result<bool> {
        let uris = serde_json::to_string(redirect_uris)
            .map_err(|e| super::StoreError::Invalid(e.to_string()))?;
        self.conn()
            .execute(
                "UPDATE clients SET redirect_uris = ?2, secret_hash = ?3, created = ?4 \
                 WHERE client_id = ?1 AND client_id NOT IN (SELECT client_id FROM grants)",
                params![client_id, uris, secret.map(hash), now()],
            )
            .map(|n| n > 0)
            .map_err(|e| self.err(e))
    }

    /// Remove a client and revoke everything it was granted.
    pub fn delete_client(&self, client_id: &str) -> Result<bool> {
        let conn = self.conn();
        let run = || -> rusqlite::Result<bool> {
            conn.execute(
                "UPDATE grants SET revoked = 1 WHERE client_id = ?1",
                params![client_id],
            )?;
            conn.execute(
                "DELETE FROM refresh_tokens WHERE grant_id IN (SELECT grant_id FROM grants WHERE client_id = ?1)",
                params![client_id],
            )?;
            Ok(conn.execute(
                "DELETE FROM clients WHERE client_id = ?1",
                params![client_id],
            )? > 0)
        };
        run().map_err(|e| self.err(e))
    }
}
