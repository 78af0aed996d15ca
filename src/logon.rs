//! Starting the gateway at logon, beside CopyQ: `install-logon` and `uninstall-logon`.
//!
//! On Windows they run `schtasks` to create (or delete) a scheduled task `copyq-mcp` that runs
//! this `.exe` with `serve` when the user logs on, with limited rights: the command the README
//! documents, as an argument vector (no shell, no command string with paths pasted in). On Linux
//! and macOS they change nothing and say what does it there: the systemd user unit
//! (`deploy/copyq-mcp.service`), or a launchd agent. The argument vectors are built on every
//! platform for the unit tests.

#[cfg(any(windows, test))]
use std::ffi::OsString;
#[cfg(any(windows, test))]
use std::path::Path;
use std::path::PathBuf;

/// The scheduled task's name.
#[cfg(any(windows, test))]
pub(crate) const TASK: &str = "copyq-mcp";

/// The task's command line: the `.exe` and `serve`, then `--config` and `--data-dir` when given,
/// each path quoted the way Windows programs split a command line (`CommandLineToArgvW`). A path
/// cannot hold `"` on Windows; one that does is refused rather than quoted into something else.
#[cfg(any(windows, test))]
pub(crate) fn task_command(
    exe: &Path,
    config: Option<&Path>,
    data_dir: Option<&Path>,
) -> Result<String, String> {
    let mut line = quote(exe)?;
    line.push_str(" serve");
    for (flag, path) in [("--config", config), ("--data-dir", data_dir)] {
        if let Some(path) = path {
            line.push_str(&format!(" {flag} {}", quote(path)?));
        }
    }
    Ok(line)
}

/// `"PATH"`, with the backslashes that end it doubled: before a closing quote, `\\` reads as one
/// backslash and `\"` as a quote, so `"C:\data\"` would swallow the quote.
#[cfg(any(windows, test))]
fn quote(path: &Path) -> Result<String, String> {
    let text = path.to_string_lossy();
    if text.contains('"') {
        return Err(format!(
            "cannot start {text:?} at logon: a path with '\"' in it"
        ));
    }
    let trailing = text.len() - text.trim_end_matches('\\').len();
    Ok(format!("\"{text}{}\"", "\\".repeat(trailing)))
}

/// `schtasks`' arguments that create the task running `command` at logon (replacing one of
/// that name: `/F`).
#[cfg(any(windows, test))]
pub(crate) fn create_args(command: &str) -> Vec<OsString> {
    let args = [
        "/Create", "/TN", TASK, "/SC", "ONLOGON", "/RL", "LIMITED", "/F", "/TR",
    ];
    let mut args: Vec<OsString> = args.iter().map(OsString::from).collect();
    args.push(command.into());
    args
}

/// `schtasks`' arguments that delete the task.
#[cfg(any(windows, test))]
pub(crate) fn delete_args() -> Vec<OsString> {
    ["/Delete", "/TN", TASK, "/F"]
        .iter()
        .map(OsString::from)
        .collect()
}

/// What to do on this platform instead, for the commands that do nothing here.
#[cfg(not(windows))]
fn elsewhere(install: bool) -> String {
    let (verb, command) = match install {
        true => ("start", "enable --now"),
        false => ("stop starting", "disable --now"),
    };
    if cfg!(target_os = "macos") {
        return format!(
            "install-logon and uninstall-logon run schtasks on Windows only; on macOS, to {verb} \
             the gateway at login, add (or remove) a launchd agent in ~/Library/LaunchAgents that \
             runs `copyq-mcp serve`"
        );
    }
    format!(
        "install-logon and uninstall-logon run schtasks on Windows only; on Linux, to {verb} the \
         gateway with your desktop session, use the systemd user unit (deploy/copyq-mcp.service, \
         installed by the .deb): systemctl --user {command} copyq-mcp"
    )
}

/// `install-logon`: the task, made (or replaced) to run this `.exe` with these paths.
#[cfg(windows)]
pub(crate) fn install(config: Option<PathBuf>, data_dir: Option<PathBuf>) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    // Relative paths would be read from the task's own working directory (System32).
    let absolute = |p: Option<PathBuf>| p.map(std::path::absolute).transpose();
    let config = absolute(config).map_err(|e| format!("--config: {e}"))?;
    let data_dir = absolute(data_dir).map_err(|e| format!("--data-dir: {e}"))?;
    let command = task_command(&exe, config.as_deref(), data_dir.as_deref())?;
    schtasks(&create_args(&command))?;
    crate::out::outln!(
        "scheduled task {TASK}: runs {command} at logon (from the next logon; \
         `copyq-mcp uninstall-logon` removes it)"
    );
    Ok(())
}

#[cfg(not(windows))]
pub(crate) fn install(_config: Option<PathBuf>, _data_dir: Option<PathBuf>) -> Result<(), String> {
    Err(elsewhere(true))
}

/// `uninstall-logon`: the task, deleted.
#[cfg(windows)]
pub(crate) fn uninstall() -> Result<(), String> {
    schtasks(&delete_args())?;
    crate::out::outln!("scheduled task {TASK}: removed");
    Ok(())
}

#[cfg(not(windows))]
pub(crate) fn uninstall() -> Result<(), String> {
    Err(elsewhere(false))
}

/// Run `schtasks` with `args`; its own messages go to the console as it prints them.
#[cfg(windows)]
fn schtasks(args: &[OsString]) -> Result<(), String> {
    let status = std::process::Command::new("schtasks")
        .args(args)
        .status()
        .map_err(|e| format!("cannot run schtasks: {e}"))?;
    match status.success() {
        true => Ok(()),
        false => Err(format!("schtasks failed ({status})")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[OsString]) -> Vec<&str> {
        args.iter().map(|a| a.to_str().unwrap_or("?")).collect()
    }

    #[test]
    fn the_task_runs_serve_with_each_path_quoted() {
        let exe = Path::new(r"C:\Users\Ann Lee\AppData\Local\Programs\copyq-mcp\copyq-mcp.exe");
        let command = task_command(exe, None, None).expect("a command");
        assert_eq!(
            command,
            r#""C:\Users\Ann Lee\AppData\Local\Programs\copyq-mcp\copyq-mcp.exe" serve"#
        );
        assert_eq!(
            strings(&create_args(&command)),
            [
                "/Create",
                "/TN",
                "copyq-mcp",
                "/SC",
                "ONLOGON",
                "/RL",
                "LIMITED",
                "/F",
                "/TR",
                &command
            ]
        );
        let with_paths = task_command(
            Path::new(r"D:\copyq-mcp.exe"),
            Some(Path::new(r"D:\my config\c.toml")),
            Some(Path::new(r"D:\data\")),
        );
        assert_eq!(
            with_paths.as_deref(),
            Ok(r#""D:\copyq-mcp.exe" serve --config "D:\my config\c.toml" --data-dir "D:\data\\""#)
        );
        assert_eq!(
            strings(&delete_args()),
            ["/Delete", "/TN", "copyq-mcp", "/F"]
        );
    }

    #[test]
    fn a_path_with_a_quote_is_refused() {
        let err = task_command(Path::new(r#"C:\a"b\copyq-mcp.exe"#), None, None);
        assert_eq!(
            err,
            Err(r#"cannot start "C:\\a\"b\\copyq-mcp.exe" at logon: a path with '"' in it"#.into())
        );
    }

    #[cfg(not(windows))]
    #[test]
    fn elsewhere_it_says_what_to_use_and_changes_nothing() {
        let err = install(None, None).expect_err("nothing to install here");
        if cfg!(target_os = "linux") {
            assert_eq!(
                err,
                "install-logon and uninstall-logon run schtasks on Windows only; on Linux, to \
                 start the gateway with your desktop session, use the systemd user unit \
                 (deploy/copyq-mcp.service, installed by the .deb): systemctl --user enable --now \
                 copyq-mcp"
            );
            assert!(
                uninstall()
                    .expect_err("nothing to remove")
                    .ends_with("systemctl --user disable --now copyq-mcp")
            );
        }
    }
}
