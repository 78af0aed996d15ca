//! What `token issue` and `tls generate` check before they act: a request that can never work is
//! refused, a name that looks like a typo is warned about, and a certificate is not replaced by
//! accident.

use std::io::Write;
use std::path::Path;

use crate::backend::{ReadRequest, TabSelector};
use crate::clipboard::Coverage;
use crate::config::Settings;

/// Refuse a `--tabs mcp/ROOT/...` entry under a root that is not one of `clipboard.roots`: no
/// tab can ever be written there, so such a token could only ever see nothing.
pub(super) fn known_roots(tabs: &Coverage, settings: &Settings) -> Result<(), String> {
    let Coverage::Only(only) = tabs else {
        return Ok(());
    };
    let roots = &settings.clipboard.roots;
    for rel in only.mcp.iter().filter(|rel| !rel.is_empty()) {
        let root = rel.split('/').next().unwrap_or_default();
        if !roots.iter().any(|r| r == root) {
            return Err(format!(
                "--tabs mcp/{rel}: '{root}' is not a managed root (clipboard.roots: {}), so no \
                 tab there can exist",
                roots.join(", ")
            ));
        }
    }
    Ok(())
}

/// Warn about each external tab name (an entry without `mcp/`) that no CopyQ tab has now: most
/// likely a typo, or a managed tab written without its `mcp/`. Said only when CopyQ answers.
pub(super) async fn warn_missing_tabs(tabs: &Coverage, settings: &Settings) {
    let Coverage::Only(only) = tabs else {
        return;
    };
    if only.ext.is_empty() {
        return;
    }
    let backend = crate::app::backend(settings).await;
    let request = ReadRequest {
        tabs: TabSelector::Names { names: vec![] },
        skip: 0,
        limit: Some(0),
        preview: None,
    };
    match backend.read(&request).await {
        Ok(snapshot) => {
            for name in only.ext.iter().filter(|n| !snapshot.all_tabs.contains(n)) {
                eprintln!(
                    "warning: CopyQ has no tab named '{name}' now; the token covers a tab of \
                     exactly that name if one is made (a managed tab is written mcp/PATH)"
                );
            }
        }
        Err(e) => eprintln!("note: the tab names were not checked: CopyQ did not answer ({e})"),
    }
}

/// Print the new token alone. If it cannot be printed, say so: it is recorded and valid.
pub(super) fn print_token(token: &str, name: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{token}")
        .and_then(|()| out.flush())
        .map_err(|e| {
            format!(
                "the token was issued but could not be printed ({e}); revoke it with \
             `copyq-mcp token revoke {name}` and issue another"
            )
        })
}

/// Refuse to overwrite a certificate or key in `dir` without `--force`: the gateway may be
/// serving it, and clients that pinned it would stop trusting a new one.
pub(super) fn may_replace(dir: &Path, force: bool, settings: &Settings) -> Result<(), String> {
    let existing: Vec<String> = ["cert.pem", "key.pem"]
        .iter()
        .map(|f| dir.join(f))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if force || existing.is_empty() {
        return Ok(());
    }
    let serving = settings
        .tls_files()
        .is_some_and(|f| f.cert.parent() == Some(dir) || f.key.parent() == Some(dir));
    let why = if serving {
        "the gateway is configured to serve it (tls.cert / tls.key)"
    } else {
        "a gateway may be serving it"
    };
    Err(format!(
        "{} already exists and {why}; clients that pinned its fingerprint would stop trusting \
         a new one. Add --force to replace it, or --out DIR to write elsewhere",
        existing.join(" and ")
    ))
}
