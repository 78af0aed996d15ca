//! The doctor's look at CopyQ: which one the gateway would reach (socket path, session, settings
//! path, `copyq` command), whether it answers, and with which protocol and version. When it does
//! not answer, the CopyQ servers that do listen under the same settings dir are named, since a
//! CopyQ running under another session is the usual cause.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::Check;
use crate::backend::socket::path::SocketEnv;
use crate::config::{BackendKind, Settings};

/// Longest the doctor waits for CopyQ to answer (a hung CopyQ is a finding, not a hang).
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// `copyq.session` if set, else the inherited `COPYQ_SESSION_NAME`, else the default session.
fn session(settings: &Settings) -> String {
    let env = SocketEnv::from_process_env();
    let configured = (!settings.copyq.session.is_empty()).then(|| settings.copyq.session.clone());
    configured
        .or(env.session)
        .unwrap_or_else(|| "default".to_owned())
}

/// The settings dir CopyQ's sockets are under, as the gateway computes it.
fn settings_root(settings: &Settings) -> Option<PathBuf> {
    let mut env = SocketEnv::from_process_env();
    if !settings.copyq.settings_path.is_empty() {
        env.settings_path = Some(PathBuf::from(&settings.copyq.settings_path));
    }
    env.settings_root().ok()
}

/// The `copyq` command as `PATH` finds it (a path with a `/` is taken as it is).
fn find_command(command: &str) -> Option<PathBuf> {
    if command.contains('/') {
        return Path::new(command).is_file().then(|| PathBuf::from(command));
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(command))
            .find(|p| p.is_file())
    })
}

/// Sessions whose CopyQ server listens under `root` (a socket that accepts a connection). None on
/// Windows, where the servers are pipes that are not under the settings dir.
#[cfg(windows)]
fn live_sessions(_root: &Path) -> Vec<(String, PathBuf)> {
    Vec::new()
}

/// Sessions whose CopyQ server listens under `root` (a socket that accepts a connection).
#[cfg(unix)]
fn live_sessions(root: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let session = match name.as_str() {
                "copyq" => String::new(),
                other => other.strip_prefix("copyq-")?.to_owned(),
            };
            // CopyQ 14 and later spell the session as given, earlier ones lower-case it.
            let socket = e.path().join(format!(".{name}_s"));
            let twin = crate::backend::socket::path::case_twin(&socket);
            std::iter::once(socket)
                .chain(twin)
                .find(|s| std::os::unix::net::UnixStream::connect(s).is_ok())
                .map(|s| (session, s))
        })
        .collect();
    out.sort();
    out
}

/// Where the gateway would look, and whether the `copyq` command is there.
fn target(settings: &Settings) -> Vec<Check> {
    let kind = settings.copyq.backend;
    let socket = settings.copyq_socket();
    let root = settings_root(settings)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "(none)".into());
    let mut out = vec![match &socket {
        Ok(path) => Check::ok(
            "copyq-target",
            format!(
                "backend {}, socket {}, session {}, settings path {root}",
                kind_name(kind),
                path.display(),
                session(settings)
            ),
        ),
        Err(why) => Check::problem(
            "copyq-target",
            format!("no socket path: {why}"),
            "set copyq.socket, or copyq.session / copyq.settings_path",
        ),
    }];
    let command = &settings.copyq.command;
    out.push(match find_command(command) {
        Some(path) => Check::ok("copyq-cli", format!("{command} is {}", path.display())),
        None if kind == BackendKind::Cli => Check::problem(
            "copyq-cli",
            format!("{command} not found (copyq.backend = \"cli\" needs it)"),
            "install CopyQ, or set copyq.command to its path",
        ),
        None => Check::warn(
            "copyq-cli",
            format!(
                "{command} not found (needed only for a CopyQ whose socket protocol is unknown)"
            ),
            "install CopyQ's command line, or set copyq.command to its path",
        ),
    });
    out
}

fn kind_name(kind: BackendKind) -> &'static str {
    match kind {
        BackendKind::Auto => "auto",
        BackendKind::Socket => "socket",
        BackendKind::Cli => "cli",
    }
}

/// Every CopyQ check.
pub(super) async fn checks(settings: &Settings) -> Vec<Check> {
    let mut out = target(settings);
    let backend = crate::app::backend(settings).await;
    let health = tokio::time::timeout(ANSWER_WITHIN, backend.health())
        .await
        .ok()
        .filter(|h| h.up);
    let Some(health) = health else {
        out.push(not_answering(settings, &backend.target()));
        return out;
    };
    let mut detail = format!("answers through the {}", health.backend);
    if let Some(protocol) = &health.protocol {
        detail.push_str(&format!(", protocol {protocol}"));
    }
    let version = match health.copyq_version {
        Some(v) => Some(v),
        None if find_command(&settings.copyq.command).is_some() => cli_version(settings).await,
        None => None,
    };
    if let Some(v) = version {
        detail.push_str(&format!(", CopyQ {v}"));
    }
    out.push(Check::ok("copyq", detail));
    out
}

/// CopyQ's version through its command line (one `copyq` process).
async fn cli_version(settings: &Settings) -> Option<String> {
    let mut cli = settings.clone();
    cli.copyq.backend = BackendKind::Cli;
    let backend = crate::app::backend(&cli).await;
    tokio::time::timeout(ANSWER_WITHIN, backend.health())
        .await
        .ok()
        .and_then(|h| h.copyq_version)
}

fn not_answering(settings: &Settings, tried: &str) -> Check {
    let others = settings_root(settings)
        .map(|root| live_sessions(&root))
        .unwrap_or_default();
    let fix = if others.is_empty() {
        "start CopyQ in your desktop session (`copyq &`), with the same COPYQ_SESSION_NAME / \
         COPYQ_SETTINGS_PATH as copyq.session / copyq.settings_path"
            .to_owned()
    } else {
        let found: Vec<String> = others
            .iter()
            .map(|(s, path)| {
                let name = if s.is_empty() { "default" } else { s };
                format!("session {name} at {}", path.display())
            })
            .collect();
        let set: Vec<String> = others
            .iter()
            .map(|(s, _)| format!("copyq.session = \"{s}\""))
            .collect();
        format!(
            "CopyQ answers under another session here ({}): set {} in the config file",
            found.join(", "),
            set.join(" or ")
        )
    };
    Check::problem("copyq", format!("CopyQ does not answer at {tried}"), fix)
}
