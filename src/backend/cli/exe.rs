//! Which program the CLI backend runs. On Unix, `copyq.command` as it is (the shell's `PATH`
//! lookup finds `copyq`). On Windows CopyQ's installer does not put `copyq.exe` on `PATH`, so the
//! default command `copyq` is looked for where CopyQ is installed: `PATH`, then beside this
//! gateway's own `.exe` (the portable build is a folder to unzip anywhere: put copyq-mcp.exe in
//! it), then the installer's folders (`%ProgramFiles%\CopyQ`, `%ProgramFiles(x86)%\CopyQ`, and
//! the per-user `%LOCALAPPDATA%\Programs\CopyQ`). On macOS CopyQ comes as an app bundle whose
//! program is not on `PATH` either: a default `copyq` that is not on `PATH` is looked for in
//! `/Applications/CopyQ.app/Contents/MacOS/CopyQ`, then in `~/Applications/` (the same bundle
//! path); that program is CopyQ's command line as well as its GUI. Any other `copyq.command` is
//! taken as given.

use std::ffi::OsString;
use std::path::PathBuf;

/// The program to run for `command` (`copyq.command`).
#[cfg(not(any(windows, target_os = "macos")))]
pub(crate) fn resolve(command: &str) -> PathBuf {
    PathBuf::from(command)
}

/// The program to run for `command` (`copyq.command`): see the module's doc.
#[cfg(target_os = "macos")]
pub(crate) fn resolve(command: &str) -> PathBuf {
    macos_bundle(command, |name| std::env::var_os(name), |p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(command))
}

/// The program in CopyQ's app bundle, relative to an `Applications` folder.
#[cfg(any(target_os = "macos", test))]
const BUNDLE_PROGRAM: &str = "CopyQ.app/Contents/MacOS/CopyQ";

/// macOS: the bundle's program to run for the default `copyq` when `PATH` has none (`None`: run
/// `command` as given, found on `PATH` as on Linux).
#[cfg(any(target_os = "macos", test))]
fn macos_bundle(
    command: &str,
    env: impl Fn(&str) -> Option<OsString>,
    exists: impl Fn(&std::path::Path) -> bool,
) -> Option<PathBuf> {
    if command != "copyq" {
        return None;
    }
    let path = env("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|d| exists(&d.join("copyq"))) {
        return None;
    }
    let home = env("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    std::iter::once(PathBuf::from("/Applications"))
        .chain(home.map(|h| h.join("Applications")))
        .map(|apps| apps.join(BUNDLE_PROGRAM))
        .find(|p| exists(p))
}

/// The program to run for `command` (`copyq.command`): see the module's doc.
#[cfg(windows)]
pub(crate) fn resolve(command: &str) -> PathBuf {
    let own_dir = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(PathBuf::from));
    find(
        command,
        |name| std::env::var_os(name),
        own_dir,
        |p| p.is_file(),
    )
    .unwrap_or_else(|| PathBuf::from(command))
}

/// The places looked at for the default `copyq`, in order; the first that `exists` wins.
#[cfg_attr(not(windows), allow(dead_code))]
fn find(
    command: &str,
    env: impl Fn(&str) -> Option<OsString>,
    own_dir: Option<PathBuf>,
    exists: impl Fn(&std::path::Path) -> bool,
) -> Option<PathBuf> {
    if !command.eq_ignore_ascii_case("copyq") && !command.eq_ignore_ascii_case("copyq.exe") {
        return None;
    }
    let var = |name: &str| env(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    let path = env("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.extend(own_dir);
    for (base, sub) in [
        ("ProgramFiles", "CopyQ"),
        ("ProgramFiles(x86)", "CopyQ"),
        ("LOCALAPPDATA", r"Programs\CopyQ"),
    ] {
        dirs.extend(var(base).map(|b| b.join(sub)));
    }
    dirs.into_iter()
        .map(|d| d.join("copyq.exe"))
        .find(|p| exists(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn env(name: &str) -> Option<OsString> {
        match name {
            "PATH" => Some(std::env::join_paths(["/bin", "/usr/bin"]).unwrap()),
            "ProgramFiles" => Some("/pf".into()),
            "LOCALAPPDATA" => Some("/la".into()),
            _ => None,
        }
    }

    #[test]
    fn path_then_own_dir_then_the_installers_folders() {
        let found = |have: &'static [&str]| {
            let have: Vec<PathBuf> = have
                .iter()
                .map(|p| Path::new(p).join("copyq.exe"))
                .collect();
            find("copyq", env, Some("/own".into()), |p| {
                have.iter().any(|h| h == p)
            })
        };
        let exe = |d: &str| Some(Path::new(d).join("copyq.exe"));
        assert_eq!(found(&["/usr/bin", "/own", "/pf/CopyQ"]), exe("/usr/bin"));
        assert_eq!(found(&["/own", "/pf/CopyQ"]), exe("/own"));
        assert_eq!(found(&["/pf/CopyQ"]), exe("/pf/CopyQ"));
        let user = Path::new("/la").join(r"Programs\CopyQ");
        assert_eq!(
            find("copyq", env, None, |p| p == user.join("copyq.exe")),
            Some(user.join("copyq.exe"))
        );
        assert_eq!(found(&[]), None);
        assert_eq!(
            find(r"D:\CopyQ\copyq.exe", env, None, |_| true),
            None,
            "a configured path is taken as given"
        );
    }

    #[test]
    fn macos_path_then_the_system_then_the_users_applications() {
        let env = |name: &str| match name {
            "PATH" => Some(std::env::join_paths(["/opt/homebrew/bin", "/usr/bin"]).unwrap()),
            "HOME" => Some(OsString::from("/Users/ann")),
            _ => None,
        };
        let found = |have: &[&str]| {
            let have: Vec<PathBuf> = have.iter().map(PathBuf::from).collect();
            macos_bundle("copyq", env, |p| have.iter().any(|h| h == p))
        };
        let system = "/Applications/CopyQ.app/Contents/MacOS/CopyQ";
        let user = "/Users/ann/Applications/CopyQ.app/Contents/MacOS/CopyQ";
        assert_eq!(found(&["/opt/homebrew/bin/copyq", system, user]), None);
        assert_eq!(found(&[system, user]), Some(PathBuf::from(system)));
        assert_eq!(found(&[user]), Some(PathBuf::from(user)));
        assert_eq!(found(&[]), None);
        assert_eq!(
            macos_bundle("/usr/local/bin/copyq", env, |_| true),
            None,
            "a configured path is taken as given"
        );
    }
}
