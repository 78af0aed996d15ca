//! The doctor's look at what this setup reads and keeps: the config files and the data dir, the
//! consent passphrase, tokens and OAuth apps. The state database is opened only if it exists, so
//! that a check never creates one in a data dir nobody meant.

use super::Check;
use crate::config::Settings;
use crate::store::Store;

const DB_FILE: &str = "copyq-mcp.db";

/// Which config files were read (or would be), and the data dir they lead to.
pub(super) fn config(settings: &Settings) -> Vec<Check> {
    let mut out = Vec::new();
    let files = if settings.files.is_empty() {
        let default = crate::config::default_config_file()
            .map(|p| format!(" (no {})", p.display()))
            .unwrap_or_default();
        format!("built-in defaults only{default}")
    } else {
        let list: Vec<String> = settings
            .files
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        list.join(", ")
    };
    out.push(Check::ok("config", format!("files read: {files}")));
    let dir = settings.data_dir();
    out.push(match std::fs::metadata(&dir) {
        Ok(m) if m.is_dir() => Check::ok("data-dir", dir.display().to_string()),
        Ok(_) => Check::problem(
            "data-dir",
            format!("{} is not a directory", dir.display()),
            "set data_dir in the config file to a directory",
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Check::warn(
            "data-dir",
            format!("{} does not exist yet (no tokens, no apps)", dir.display()),
            "`copyq-mcp token issue` or `serve` creates it; if tokens were issued elsewhere, set data_dir",
        ),
        Err(e) => Check::problem(
            "data-dir",
            format!("{}: {e}", dir.display()),
            "make the data dir readable by this user",
        ),
    });
    out
}

/// Counts of what the state database holds: (active, expired, revoked).
fn split<T>(items: &[T], revoked: impl Fn(&T) -> bool, expired: impl Fn(&T) -> bool) -> [usize; 3] {
    let mut n = [0; 3];
    for item in items {
        let i = if revoked(item) {
            2
        } else if expired(item) {
            1
        } else {
            0
        };
        n[i] += 1;
    }
    n
}

/// The passphrase, tokens and OAuth apps, from the state database if there is one.
pub(super) fn stored(settings: &Settings) -> Vec<Check> {
    let dir = settings.data_dir();
    if !dir.join(DB_FILE).is_file() {
        return vec![Check::warn(
            "tokens",
            format!("no state database in {} yet", dir.display()),
            "issue a token: copyq-mcp token issue --role read --name NAME",
        )];
    }
    let store = match Store::open(&dir) {
        Ok(store) => store,
        Err(e) => {
            return vec![Check::problem(
                "tokens",
                format!("cannot open the state database: {e}"),
                "check the data dir's permissions (the gateway's user owns it, mode 0700)",
            )];
        }
    };
    let mut out = vec![passphrase(settings, &store)];
    let now = crate::store::now();
    match store.cli_tokens() {
        Ok(tokens) => {
            let [active, expired, revoked] = split(
                &tokens,
                |t| t.revoked,
                |t| t.expires.is_some_and(|e| e < now),
            );
            let detail = format!("{active} active, {expired} expired, {revoked} revoked");
            out.push(if active == 0 {
                Check::warn(
                    "tokens",
                    detail,
                    "issue one: copyq-mcp token issue --role read --name NAME",
                )
            } else {
                Check::ok("tokens", detail)
            });
        }
        Err(e) => out.push(Check::problem("tokens", e.to_string(), "see the error")),
    }
    let grants = store.grants();
    let clients = store.client_count();
    let unapproved = store.unapproved_clients().map(|c| c.len());
    match (grants, clients, unapproved) {
        (Ok(grants), Ok(clients), Ok(unapproved)) => {
            let [active, _, revoked] = split(&grants, |g| g.revoked, |_| false);
            out.push(Check::ok(
                "oauth-apps",
                format!(
                    "{clients} registered ({unapproved} never approved), {active} connected, {revoked} revoked"
                ),
            ));
        }
        (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
            out.push(Check::problem("oauth-apps", e.to_string(), "see the error"))
        }
    }
    out
}

fn passphrase(settings: &Settings, store: &Store) -> Check {
    match store.passphrase_hash() {
        Ok(Some(_)) => Check::ok("passphrase", "set"),
        Ok(None) if settings.oauth.enabled => Check::warn(
            "passphrase",
            "not set: the consent page cannot approve an app (Claude, ChatGPT)",
            "copyq-mcp passphrase set",
        ),
        Ok(None) => Check::ok("passphrase", "not set (OAuth is off)"),
        Err(e) => Check::problem("passphrase", e.to_string(), "see the error"),
    }
}
