//! The owner's commands on the gateway's state: the consent passphrase, connected apps (OAuth
//! grants) and issued tokens. They work on the same database as a running gateway, which sees every
//! change on its next request.

use std::io::{BufRead, IsTerminal};
use std::time::{Duration, UNIX_EPOCH};

use crate::app::token_service;
use crate::auth::{Role, TokenSpec};
use crate::clipboard::Coverage;
use crate::config::Settings;
use crate::oauth::passphrase;
use crate::out::outln;
use crate::store::{Store, TokenInfo, now};

mod audit;
pub use audit::{restore, show_audit};

fn open(settings: &Settings) -> Result<Store, String> {
    Store::open(&settings.data_dir()).map_err(|e| e.to_string())
}

fn when(t: Option<i64>) -> String {
    match t.and_then(|t| u64::try_from(t).ok()) {
        Some(t) => {
            humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(t)).to_string()
        }
        None => "-".into(),
    }
}

/// Read the passphrase twice from a terminal, or once from piped stdin (for scripts).
fn read_passphrase() -> Result<String, String> {
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("New passphrase: ").map_err(|e| e.to_string())?;
        let second = rpassword::prompt_password("Repeat it: ").map_err(|e| e.to_string())?;
        if first != second {
            return Err("the two passphrases differ".into());
        }
        Ok(first)
    } else {
        let mut line = String::new();
        std::io::stdin()
            .lock()
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        Ok(line.trim_end_matches(['\n', '\r']).to_owned())
    }
}

pub fn set_passphrase(settings: &Settings) -> Result<(), String> {
    let store = open(settings)?;
    let phc = passphrase::hash(&read_passphrase()?)?;
    store.set_passphrase_hash(&phc).map_err(|e| e.to_string())?;
    eprintln!(
        "passphrase set (stored as an Argon2id hash in {})",
        settings.data_dir().display()
    );
    Ok(())
}

/// Issue a token, record it for `token list|revoke`, and return it.
pub fn issue_token(
    settings: &Settings,
    name: &str,
    role: Role,
    ttl: Option<Duration>,
    tabs: &Coverage,
) -> Result<String, String> {
    let store = open(settings)?;
    let spec = TokenSpec {
        subject: name,
        role,
        ttl,
        audience: None,
        grant: None,
        tabs,
    };
    let issued = token_service(settings)
        .map_err(|e| e.to_string())?
        .issue_spec(&spec)
        .map_err(|e| e.to_string())?;
    let role_name = if role.can_write() { "write" } else { "read" };
    store
        .record_token(&TokenInfo {
            jti: issued.jti,
            subject: name.to_owned(),
            role: role_name.into(),
            grant_id: None,
            created: now(),
            expires: issued.exp.and_then(|e| i64::try_from(e).ok()),
            revoked: false,
            tabs: tabs.to_stored(),
        })
        .map_err(|e| e.to_string())?;
    Ok(issued.token)
}

/// A stored coverage as the owner reads it.
fn tabs_of(stored: Option<&str>) -> String {
    Coverage::from_stored(stored).map_or_else(|e| format!("(unreadable: {e})"), |c| c.describe())
}

pub fn list_tokens(settings: &Settings) -> Result<(), String> {
    let tokens = open(settings)?.cli_tokens().map_err(|e| e.to_string())?;
    outln!(
        "{:<24} {:<20} {:<6} {:<21} {:<21} {:<8} TABS",
        "ID",
        "NAME",
        "ROLE",
        "ISSUED",
        "EXPIRES",
        "STATUS"
    );
    for t in tokens {
        let expired = t.expires.is_some_and(|e| e < now());
        let status = if t.revoked {
            "revoked"
        } else if expired {
            "expired"
        } else {
            "active"
        };
        outln!(
            "{:<24} {:<20} {:<6} {:<21} {:<21} {status:<8} {}",
            t.jti,
            t.subject,
            t.role,
            when(Some(t.created)),
            when(t.expires),
            tabs_of(t.tabs.as_deref())
        );
    }
    Ok(())
}

pub fn revoke_token(settings: &Settings, id_or_name: &str) -> Result<(), String> {
    match open(settings)?
        .revoke_token(id_or_name)
        .map_err(|e| e.to_string())?
    {
        0 => Err(format!("no active token with id or name '{id_or_name}'")),
        n => {
            eprintln!("revoked {n} token(s); they stop working on their next request");
            Ok(())
        }
    }
}

pub fn list_clients(settings: &Settings) -> Result<(), String> {
    let store = open(settings)?;
    let grants = store.grants().map_err(|e| e.to_string())?;
    let waiting = store.unapproved_clients().map_err(|e| e.to_string())?;
    outln!(
        "{:<44} {:<24} {:<6} {:<21} {:<21} {:<8} TABS",
        "CLIENT",
        "NAME",
        "ROLE",
        "APPROVED",
        "LAST USED",
        "STATUS"
    );
    for g in grants {
        let status = if g.revoked { "revoked" } else { "active" };
        outln!(
            "{:<44} {:<24} {:<6} {:<21} {:<21} {status:<8} {}",
            g.client_id,
            g.client_name,
            g.role,
            when(Some(g.created)),
            when(g.last_used),
            tabs_of(g.tabs.as_deref())
        );
    }
    for c in waiting {
        outln!(
            "{:<44} {:<24} {:<6} {:<21} {:<21} never approved (registered {}; forgotten after 1 h)",
            c.client_id,
            c.name,
            "-",
            "-",
            "-",
            when(Some(c.created))
        );
    }
    Ok(())
}

/// Forget every registered client that was never approved.
pub fn purge_clients(settings: &Settings) -> Result<(), String> {
    let n = open(settings)?
        .expire_unapproved_clients(i64::MAX)
        .map_err(|e| e.to_string())?;
    eprintln!("removed {n} client(s) that were never approved");
    Ok(())
}

/// Revoke a connected app by client id, or every app registered under a name.
pub fn revoke_client(settings: &Settings, id_or_name: &str) -> Result<(), String> {
    let store = open(settings)?;
    let grants = store.grants().map_err(|e| e.to_string())?;
    let mut ids: Vec<String> = grants
        .iter()
        .filter(|g| g.client_id == id_or_name || g.client_name == id_or_name)
        .map(|g| g.client_id.clone())
        .collect();
    if ids.is_empty()
        && store
            .client(id_or_name)
            .map_err(|e| e.to_string())?
            .is_some()
    {
        ids.push(id_or_name.to_owned());
    }
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        return Err(format!("no connected app with id or name '{id_or_name}'"));
    }
    for id in &ids {
        store.delete_client(id).map_err(|e| e.to_string())?;
    }
    eprintln!(
        "revoked {} app(s); their tokens stop working on the next request",
        ids.len()
    );
    Ok(())
}
