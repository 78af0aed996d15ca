//! The gateway's state that must survive restarts, in SQLite in the data dir: registered OAuth
//! clients, grants, authorization codes and refresh tokens (hashes only), issued tokens and their
//! revocation, and the owner's passphrase hash. Shared by the server and the owner's CLI commands,
//! which may run in other processes (WAL mode, busy timeout).

mod audit;
mod audit_whole;
mod clients;
mod grants;
mod retention;
mod tokens;

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use thiserror::Error;

pub use audit::{AuditEntry, DONE, Kept};
pub use clients::{ClientInfo, NewClient};
pub use grants::{CodeRecord, GrantInfo, LiveGrant, Taken};
pub use retention::Pruned;
pub use tokens::TokenInfo;

pub(crate) const FILE: &str = "copyq-mcp.db";
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS clients (
  client_id TEXT PRIMARY KEY, secret_hash TEXT, auth_method TEXT NOT NULL, name TEXT NOT NULL,
  redirect_uris TEXT NOT NULL, created INTEGER NOT NULL, last_used INTEGER);
CREATE TABLE IF NOT EXISTS grants (
  grant_id TEXT PRIMARY KEY, client_id TEXT NOT NULL, role TEXT NOT NULL, created INTEGER NOT NULL,
  last_used INTEGER, revoked INTEGER NOT NULL DEFAULT 0, tabs TEXT);
CREATE TABLE IF NOT EXISTS codes (
  code_hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, client_id TEXT NOT NULL, redirect_uri TEXT NOT NULL,
  challenge TEXT NOT NULL, expires INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS refresh_tokens (
  token_hash TEXT PRIMARY KEY, grant_id TEXT NOT NULL, expires INTEGER NOT NULL, used INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS audit (
  id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, subject TEXT NOT NULL, role TEXT NOT NULL,
  mode TEXT NOT NULL, tab TEXT NOT NULL, to_tab TEXT, idx INTEGER, detail TEXT NOT NULL, previous TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
CREATE TABLE IF NOT EXISTS audit_whole (
  entry INTEGER NOT NULL, item INTEGER NOT NULL, mime TEXT NOT NULL, data BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS audit_whole_entry ON audit_whole (entry);
CREATE TRIGGER IF NOT EXISTS audit_whole_pruned AFTER DELETE ON audit
  BEGIN DELETE FROM audit_whole WHERE entry = old.id; END;
CREATE TABLE IF NOT EXISTS tokens (
  jti TEXT PRIMARY KEY, subject TEXT NOT NULL, role TEXT NOT NULL, grant_id TEXT, created INTEGER NOT NULL,
  expires INTEGER, revoked INTEGER NOT NULL DEFAULT 0, tabs TEXT);
";

/// Columns added after a table was first shipped: a database from before gets them on open (a
/// missing value means what it meant before the column existed).
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    ("grants", "tabs", "TEXT"),
    ("tokens", "tabs", "TEXT"),
    ("audit", "outcome", "TEXT NOT NULL DEFAULT 'done'"),
    ("audit", "note", "TEXT NOT NULL DEFAULT ''"),
];

fn add_missing_columns(conn: &Connection) -> rusqlite::Result<()> {
    for (table, column, kind) in ADDED_COLUMNS {
        let present: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM pragma_table_info('{table}') WHERE name = ?1"),
            params![column],
            |r| r.get(0),
        )?;
        if present == 0 {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {kind}"))?;
        }
    }
    Ok(())
}

#[derive(Debug, Error)]
pub enum StoreError {
    /// The database could not be opened or used: a clear message for the owner, a 503 for clients.
    #[error("state database {path}: {source}")]
    Db {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("{0}")]
    Invalid(String),
    /// The database file was replaced or removed under the running gateway: a 503 for clients.
    #[error(
        "state database {0}: the file was replaced or removed while the gateway ran, so every \
         state read and change is refused (a revocation written to a new file would otherwise go \
         unseen); restart the gateway"
    )]
    Replaced(PathBuf),
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// The identity of the state database that holds the revocations. A token names the epoch it
/// was issued in and is valid only in it: a lost or deleted database comes back with a new epoch,
/// so the tokens it had revoked cannot work again (nor, then, can any other: the owner issues new
/// ones). `legacy` accepts tokens without an epoch, in a database older than epochs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Epoch {
    pub id: String,
    pub legacy: bool,
}

pub struct Store {
    conn: Mutex<Connection>,
    /// A second connection, only read, for the bearer check every request makes
    /// ([`Store::token_allowed_now`]): it never waits behind the first one's writes (an audit
    /// entry's sync to disk), so the check can run on the async worker instead of a hop to the
    /// blocking pool and back (about 40-90 us a request on the 2-core machine). In WAL mode each
    /// of its statements reads the last commit of any connection, this process's or another's.
    reader: Mutex<Connection>,
    path: PathBuf,
    epoch: Epoch,
    /// `audit.max_bytes` (0: no cap), applied as each entry is recorded (audit.rs).
    audit_max_bytes: std::sync::atomic::AtomicU64,
    /// The file opened, as (device, inode): checked on each use, see [`Store::conn`].
    identity: Option<(u64, u64)>,
    replaced: std::sync::atomic::AtomicBool,
}

/// (device, inode) of the file at `path`, if there is one.
#[cfg(unix)]
fn file_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// None on Windows: stable Rust has no file index there (`windows_by_handle` is unstable), so a
/// database replaced under a running gateway is not noticed there.
#[cfg(windows)]
fn file_identity(_path: &Path) -> Option<(u64, u64)> {
    None
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// Whether SQLite answered that the database is busy or locked (another connection holds it).
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if matches!(f.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// `f` again while SQLite says the database is busy or locked, for up to ~5 s.
fn retry_busy<T>(mut f: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        match f() {
            Err(e) if is_busy(&e) && std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

/// How long the reader connection waits for a lock (see [`Store::reader`]).
const READER_BUSY: Duration = Duration::from_millis(20);

pub(crate) fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

pub(crate) fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

/// A new random secret: 32 bytes, base64url, never starting with `-` (client ids are made
/// here, and an id that looks like a flag cannot be given to `clients revoke` as it is).
pub(crate) fn random_token() -> String {
    loop {
        let mut bytes = [0u8; 32];
        // getrandom only fails where the OS has no entropy source at all; then nothing is safe
        // to issue.
        if getrandom::fill(&mut bytes).is_err() {
            panic!("the operating system's random source is unavailable");
        }
        let token = URL_SAFE_NO_PAD.encode(bytes);
        if !token.starts_with('-') {
            return token;
        }
    }
}

/// How secrets (codes, refresh tokens, client secrets) are stored: SHA-256, hex. They are 256-bit
/// random values, so a fast hash is enough.
pub(crate) fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The database's epoch, made on first open: a random id, and whether tokens without one are
/// accepted: only in a database that already held state from before epochs (tokens, grants,
/// clients or a passphrase), so that upgrading disconnects nobody; a new database (e.g. after the
/// old one was lost) accepts none of them. Decided under the write lock, so that processes opening
/// a fresh database at once agree.
fn epoch(conn: &Connection) -> rusqlite::Result<Epoch> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let made = (|| {
        let has = |key: &str| -> rusqlite::Result<bool> {
            conn.query_row(
                "SELECT COUNT(*) FROM meta WHERE key = ?1",
                params![key],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n > 0)
        };
        if !has("epoch")? {
            let old_state: i64 = conn.query_row(
                "SELECT (SELECT COUNT(*) FROM tokens) + (SELECT COUNT(*) FROM grants) \
                 + (SELECT COUNT(*) FROM clients) + (SELECT COUNT(*) FROM meta WHERE key = 'passphrase')",
                [],
                |r| r.get(0),
            )?;
            let legacy = if old_state > 0 { "1" } else { "0" };
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('epoch', ?1), ('legacy_tokens', ?2)",
                params![random_token(), legacy],
            )?;
        }
        let get = |key: &str| {
            conn.query_row("SELECT value FROM meta WHERE key = ?1", params![key], |r| {
                r.get::<_, String>(0)
            })
        };
        Ok(Epoch {
            id: get("epoch")?,
            legacy: get("legacy_tokens")? == "1",
        })
    })();
    match made {
        Ok(epoch) => conn.execute_batch("COMMIT").map(|()| epoch),
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

impl Store {
    /// Open (creating if needed) the database in `data_dir`, mode 0600.
    pub fn open(data_dir: &Path) -> Result<Self> {
        let path = data_dir.join(FILE);
        let db = |source| StoreError::Db {
            path: path.clone(),
            source,
        };
        // The file exists as 0600 before SQLite opens it: SQLite gives its -wal and -shm files
        // the database file's mode.
        crate::private::dir(data_dir)
            .and_then(|()| crate::private::file(&path))
            .map_err(|e| StoreError::Invalid(format!("{}: {e}", data_dir.display())))?;
        let conn = Connection::open(&path).map_err(db)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(db)?;
        // Several processes may open a fresh database at once (the gateway and `token issue`):
        // switching to WAL needs an exclusive lock, and SQLite answers "busy" at once, without the
        // busy timeout, where waiting could deadlock. So: retry the switch, and create the schema
        // under a write lock taken up front (BEGIN IMMEDIATE does wait for it).
        retry_busy(|| conn.pragma_update(None, "journal_mode", "WAL")).map_err(db)?;
        retry_busy(|| conn.pragma_update(None, "synchronous", "FULL")).map_err(db)?;
        retry_busy(|| {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            conn.execute_batch(SCHEMA)
                .and_then(|()| add_missing_columns(&conn))
                .and_then(|()| conn.execute_batch("COMMIT"))
                .inspect_err(|_| {
                    let _ = conn.execute_batch("ROLLBACK");
                })
        })
        .map_err(db)?;
        let epoch = retry_busy(|| epoch(&conn)).map_err(db)?;
        let reader = Connection::open(&path).map_err(db)?;
        // Short: a reader in WAL mode waits only while another opens or recovers the log; the
        // check then takes the blocking path, which waits as long as the first connection does.
        reader.busy_timeout(READER_BUSY).map_err(db)?;
        reader.pragma_update(None, "query_only", true).map_err(db)?;
        Ok(Self {
            conn: Mutex::new(conn),
            reader: Mutex::new(reader),
            identity: file_identity(&path),
            path,
            epoch,
            audit_max_bytes: std::sync::atomic::AtomicU64::new(0),
            replaced: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// This database's epoch: tokens are valid only in the epoch they were issued in.
    pub fn epoch(&self) -> Epoch {
        self.epoch.clone()
    }

    /// The connection, once the file is checked to be the one opened. If it was replaced or
    /// removed (the owner deleted it; a `copyq-mcp` command then wrote revocations to a new one),
    /// the open connection would go on reading the old, unlinked file: so the connection becomes
    /// one to an empty database, every statement fails, and [`Store::err`] says why, until a
    /// restart opens the file that is there.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.checked(&self.conn)
    }

    /// The reader connection ([`Store::reader`]), checked as [`Store::conn`] is.
    fn reader(&self) -> MutexGuard<'_, Connection> {
        self.checked(&self.reader)
    }

    /// `connection` locked, once the file is checked to be the one opened; each of the two
    /// becomes one to an empty database when either use finds the file replaced.
    fn checked<'a>(&self, connection: &'a Mutex<Connection>) -> MutexGuard<'a, Connection> {
        use std::sync::atomic::Ordering;
        let mut conn = connection.lock().unwrap_or_else(|e| e.into_inner());
        if !self.replaced.load(Ordering::Acquire)
            && self.identity.is_some()
            && file_identity(&self.path) != self.identity
        {
            self.replaced.store(true, Ordering::Release);
            tracing::error!("{}", StoreError::Replaced(self.path.clone()));
        }
        if self.replaced.load(Ordering::Acquire)
            && conn.path().is_some_and(|p| !p.is_empty())
            && let Ok(nothing) = Connection::open_in_memory()
        {
            *conn = nothing;
        }
        conn
    }

    fn err(&self, source: rusqlite::Error) -> StoreError {
        if self.replaced.load(std::sync::atomic::Ordering::Acquire) {
            return StoreError::Replaced(self.path.clone());
        }
        StoreError::Db {
            path: self.path.clone(),
            source,
        }
    }

    pub fn passphrase_hash(&self) -> Result<Option<String>> {
        self.conn()
            .query_row("SELECT value FROM meta WHERE key = 'passphrase'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.err(e))
    }

    pub fn set_passphrase_hash(&self, phc: &str) -> Result<()> {
        self.conn()
            .execute("INSERT INTO meta (key, value) VALUES ('passphrase', ?1) ON CONFLICT(key) DO UPDATE SET value = ?1", params![phc])
            .map(|_| ())
            .map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_ids_never_look_like_flags() {
        // See auth::token's twin test: 4,000 draws would meet a leading '-' about 62 times.
        for _ in 0..4000 {
            assert!(!random_token().starts_with('-'));
        }
    }

    #[test]
    #[cfg_attr(
        windows,
        ignore = "Windows refuses to remove an open file (sharing violation), and the check is Unix-only"
    )]
    fn a_replaced_or_removed_file_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        assert!(s.passphrase_hash().is_ok());
        std::fs::remove_file(dir.path().join(FILE)).unwrap();
        let _new = Store::open(dir.path()).unwrap();
        let refused = s.passphrase_hash().map(|_| ()).unwrap_err();
        assert!(matches!(refused, StoreError::Replaced(_)), "{refused}");
        assert!(
            refused.to_string().ends_with("restart the gateway"),
            "{refused}"
        );
        // And it stays refused.
        assert!(matches!(s.client_count(), Err(StoreError::Replaced(_))));
    }

    #[test]
    fn a_database_from_before_coverage_gains_its_columns_and_keeps_its_grants() {
        let dir = tempfile::tempdir().unwrap();
        let old = Connection::open(dir.path().join(FILE)).unwrap();
        old.execute_batch(
            "CREATE TABLE grants (grant_id TEXT PRIMARY KEY, client_id TEXT NOT NULL, role TEXT NOT NULL, \
             created INTEGER NOT NULL, last_used INTEGER, revoked INTEGER NOT NULL DEFAULT 0);
             CREATE TABLE tokens (jti TEXT PRIMARY KEY, subject TEXT NOT NULL, role TEXT NOT NULL, grant_id TEXT, \
             created INTEGER NOT NULL, expires INTEGER, revoked INTEGER NOT NULL DEFAULT 0);
             INSERT INTO grants VALUES ('g-old', 'c', 'read', 1, NULL, 0);",
        )
        .unwrap();
        drop(old);
        let store = Store::open(dir.path()).unwrap();
        let old = store.live_grant("g-old").unwrap().unwrap();
        assert_eq!(
            (old.role.as_str(), old.tabs),
            ("read", None),
            "all tabs, as before"
        );
        let scoped = store
            .create_grant_covering("c", "write", Some(r#"{"mcp":[""]}"#))
            .unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(
            store.live_grant(&scoped).unwrap().unwrap().tabs.as_deref(),
            Some(r#"{"mcp":[""]}"#)
        );
        let listed: Vec<_> = store
            .grants()
            .unwrap()
            .into_iter()
            .map(|g| g.tabs)
            .collect();
        assert_eq!(listed.len(), 2);
        assert!(listed.contains(&None) && listed.contains(&Some(r#"{"mcp":[""]}"#.into())));
    }

    #[test]
    fn opens_private_and_keeps_state() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.passphrase_hash().unwrap(), None);
        store.set_passphrase_hash("$argon2id$x").unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(
            store.passphrase_hash().unwrap().as_deref(),
            Some("$argon2id$x")
        );
        let meta = std::fs::metadata(dir.path().join(FILE)).unwrap();
        assert_eq!(crate::private::loose_mode(&meta), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn a_new_database_accepts_no_epochless_tokens_an_upgraded_one_does() {
        let dir = tempfile::tempdir().unwrap();
        // Opened at once, a fresh database gets one epoch, and it is not a legacy one.
        let epochs: Vec<_> = std::thread::scope(|s| {
            let opens: Vec<_> = (0..8)
                .map(|_| s.spawn(|| Store::open(dir.path()).unwrap().epoch()))
                .collect();
            opens.into_iter().map(|o| o.join().unwrap()).collect()
        });
        assert!(epochs.windows(2).all(|w| w[0] == w[1]), "{epochs:?}");
        assert!(!epochs[0].legacy);
        // A database from before epochs: state, and no epoch yet.
        let old = tempfile::tempdir().unwrap();
        let store = Store::open(old.path()).unwrap();
        store.set_passphrase_hash("$argon2id$x").unwrap();
        drop(store);
        let conn = Connection::open(old.path().join(FILE)).unwrap();
        conn.execute(
            "DELETE FROM meta WHERE key IN ('epoch', 'legacy_tokens')",
            [],
        )
        .unwrap();
        drop(conn);
        assert!(Store::open(old.path()).unwrap().epoch().legacy);
    }

    #[test]
    fn many_processes_may_open_a_fresh_database_at_once() {
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            std::thread::scope(|s| {
                let opens: Vec<_> = (0..8)
                    .map(|_| s.spawn(|| Store::open(dir.path()).map(|_| ())))
                    .collect();
                for o in opens {
                    o.join().unwrap().unwrap();
                }
            });
        }
    }

    #[test]
    fn secrets_are_random_and_hashed() {
        let (a, b) = (random_token(), random_token());
        assert_ne!(a, b);
        assert_eq!(a.len(), 43);
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
