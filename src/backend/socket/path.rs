//! Where a CopyQ server's socket is, computed as CopyQ does (`clipboardServerName()`):
//! `<settings dir>/copyq[-SESSION]/.copyq[-SESSION]_s`, the settings dir being
//! `$COPYQ_SETTINGS_PATH`, else `$XDG_CONFIG_HOME`, else `~/.config` (empty values count as unset);
//! CopyQ before 14 lower-cased the session in the socket's name ([`case_twin`]).
//! On Windows it is a named pipe instead, `\\.\pipe\copyq[-SESSION]_USERNAME_s` ([`pipe_name`]).
//!
//! macOS takes the Unix computation unchanged, not a name under `$TMPDIR`: CopyQ's
//! `clipboardServerName()` (hluk/CopyQ, src/common/client_server.cpp) takes its `Q_OS_UNIX`
//! branch there (Qt defines `Q_OS_UNIX` for Darwin) and hands Qt an absolute path in its settings
//! dir, and Qt's `QLocalServer::listen()` puts only a name without a leading `/` under
//! `QDir::tempPath()` (qtbase, src/network/socket/qlocalserver_unix.cpp). That settings dir is
//! QSettings' `IniFormat` user path, which on macOS is the hand-written `$XDG_CONFIG_HOME`, else
//! `~/.config` (qtbase, src/corelib/io/qsettings.cpp: `QSETTINGS_USE_QSTANDARDPATHS` is defined
//! for XDG platforms only), so CopyQ's settings and socket are in `~/.config/copyq` on a Mac too.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why CopyQ's socket cannot be located: a session name CopyQ would refuse, or nowhere to look.
/// (Not [`crate::clipboard::PathError`], which refuses a tab path a client gave.)
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SocketPathError {
    /// CopyQ accepts at most 16 characters of `[A-Za-z0-9_-]`.
    #[error("invalid CopyQ session name {0:?}: at most 16 characters of letters, digits, '-', '_'")]
    BadSession(String),
    /// None of `COPYQ_SETTINGS_PATH`, `XDG_CONFIG_HOME`, `HOME` is set.
    #[error(
        "cannot locate CopyQ's settings: none of COPYQ_SETTINGS_PATH, XDG_CONFIG_HOME, HOME is set"
    )]
    NoSettingsDir,
}

/// The inputs of the computation, normally the process environment; tests fill them in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SocketEnv {
    /// `COPYQ_SETTINGS_PATH`
    pub settings_path: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`
    pub xdg_config_home: Option<PathBuf>,
    /// `HOME`
    pub home: Option<PathBuf>,
    /// `COPYQ_SESSION_NAME`; empty or `None` is the default session.
    pub session: Option<String>,
    /// `USERNAME`: part of the pipe's name on Windows (unused elsewhere).
    pub user: Option<String>,
}

fn non_empty(value: Option<OsString>) -> Option<OsString> {
    value.filter(|v| !v.is_empty())
}

impl SocketEnv {
    /// Read the four variables from this process's environment.
    pub fn from_process_env() -> Self {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// Read the four variables through `lookup` (an environment stand-in).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Self {
        let path = |name| non_empty(lookup(name)).map(PathBuf::from);
        Self {
            settings_path: path("COPYQ_SETTINGS_PATH"),
            xdg_config_home: path("XDG_CONFIG_HOME"),
            home: path("HOME"),
            session: non_empty(lookup("COPYQ_SESSION_NAME"))
                .map(|s| s.to_string_lossy().into_owned()),
            user: non_empty(lookup("USERNAME")).map(|s| s.to_string_lossy().into_owned()),
        }
    }

    /// The settings root CopyQ uses: the first of `COPYQ_SETTINGS_PATH`, `XDG_CONFIG_HOME`,
    /// `HOME/.config`.
    pub fn settings_root(&self) -> Result<PathBuf, SocketPathError> {
        let non_empty = |p: &Option<PathBuf>| p.clone().filter(|p| !p.as_os_str().is_empty());
        non_empty(&self.settings_path)
            .or_else(|| non_empty(&self.xdg_config_home))
            .or_else(|| non_empty(&self.home).map(|h| h.join(".config")))
            .ok_or(SocketPathError::NoSettingsDir)
    }

    /// The server's socket path.
    #[cfg(not(windows))]
    pub fn socket_path(&self) -> Result<PathBuf, SocketPathError> {
        let session = self.session.as_deref().unwrap_or_default();
        socket_path(self.settings_root()?, session)
    }

    /// The server's pipe (Windows): it does not depend on the settings directory.
    #[cfg(windows)]
    pub fn socket_path(&self) -> Result<PathBuf, SocketPathError> {
        let session = self.session.as_deref().unwrap_or_default();
        pipe_name(session, self.user.as_deref().unwrap_or_default())
    }
}

/// `copyq` or `copyq-SESSION`, or the error for a session name CopyQ would refuse.
fn app_name(session: &str) -> Result<String, SocketPathError> {
    let valid = session.chars().count() <= 16
        && session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid {
        return Err(SocketPathError::BadSession(session.to_owned()));
    }
    Ok(if session.is_empty() {
        "copyq".to_owned()
    } else {
        format!("copyq-{session}")
    })
}

/// The Windows server's pipe: CopyQ names it `copyq[-SESSION]_%USERNAME%_s` when not on Unix
/// (hluk/CopyQ, src/common/client_server.cpp, `clipboardServerName()`), and Qt's `QLocalSocket`
/// and `QLocalServer` on Windows open a name that is not already a pipe path as
/// `\\.\pipe\NAME` (qtbase, src/network/socket/qlocalsocket_win.cpp, `connectToServer()`;
/// qlocalserver_win.cpp, `listen()`).
pub fn pipe_name(session: &str, user: &str) -> Result<PathBuf, SocketPathError> {
    let app = app_name(session)?;
    Ok(PathBuf::from(format!(r"\\.\pipe\{app}_{user}_s")))
}

/// `root/copyq[-session]/.copyq[-session]_s`; an empty `session` is the default one. The
/// session is spelled as given, as CopyQ 14 and later name the socket; CopyQ before 14
/// lower-cased it in the socket's name (not the directory's; hluk/CopyQ 78f6b859): that spelling
/// is the path's [`case_twin`], which a connection tries when this one is absent.
pub fn socket_path(root: impl Into<PathBuf>, session: &str) -> Result<PathBuf, SocketPathError> {
    let app = app_name(session)?;
    let socket = format!(".{app}_s");
    Ok(root.into().join(app).join(socket))
}

/// The other spelling of a CopyQ server's socket whose session name has capitals: CopyQ 6.4 to
/// 13 listen on `.copyq-work_s` where 14 and later listen on `.copyq-Work_s`. `None` when the
/// name is not a CopyQ socket's or lower-casing leaves it as it is.
pub fn case_twin(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?.to_str()?;
    if !(name.starts_with(".copyq") && name.ends_with("_s")) {
        return None;
    }
    let lower = name.to_lowercase();
    (lower != name).then(|| path.with_file_name(lower))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> SocketEnv {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SocketEnv::from_lookup(move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn the_windows_pipe_names_session_and_user() {
        assert_eq!(pipe_name("", "ann"), Ok(r"\\.\pipe\copyq_ann_s".into()));
        assert_eq!(
            pipe_name("work_1", "ann"),
            Ok(r"\\.\pipe\copyq-work_1_ann_s".into())
        );
        assert_eq!(
            pipe_name("a/b", "ann"),
            Err(SocketPathError::BadSession("a/b".into()))
        );
    }

    #[cfg(windows)]
    #[test]
    fn on_windows_the_socket_is_the_pipe() {
        let e = env(&[("USERNAME", "ann"), ("COPYQ_SESSION_NAME", "w")]);
        assert_eq!(e.socket_path(), Ok(r"\\.\pipe\copyq-w_ann_s".into()));
    }

    #[cfg(unix)]
    #[test]
    fn settings_path_wins_then_xdg_then_home() {
        let all = [
            ("COPYQ_SETTINGS_PATH", "/s"),
            ("XDG_CONFIG_HOME", "/x"),
            ("HOME", "/h"),
        ];
        assert_eq!(env(&all).socket_path(), Ok("/s/copyq/.copyq_s".into()));
        assert_eq!(env(&all[1..]).socket_path(), Ok("/x/copyq/.copyq_s".into()));
        assert_eq!(
            env(&all[2..]).socket_path(),
            Ok("/h/.config/copyq/.copyq_s".into())
        );
        assert_eq!(env(&[]).socket_path(), Err(SocketPathError::NoSettingsDir));
    }

    #[cfg(unix)]
    #[test]
    fn empty_variables_count_as_unset() {
        let e = env(&[
            ("COPYQ_SETTINGS_PATH", ""),
            ("XDG_CONFIG_HOME", "/x"),
            ("COPYQ_SESSION_NAME", ""),
        ]);
        assert_eq!(e.socket_path(), Ok("/x/copyq/.copyq_s".into()));
    }

    #[cfg(unix)]
    #[test]
    fn sessions_name_the_directory_and_the_socket() {
        let e = env(&[("XDG_CONFIG_HOME", "/x"), ("COPYQ_SESSION_NAME", "work_1")]);
        assert_eq!(
            e.socket_path(),
            Ok("/x/copyq-work_1/.copyq-work_1_s".into())
        );
        assert_eq!(
            socket_path("/x", "Work"),
            Ok("/x/copyq-Work/.copyq-Work_s".into())
        );
        for bad in ["a/b", "../x", "seventeen_chars_x", "é"] {
            assert_eq!(
                socket_path("/x", bad),
                Err(SocketPathError::BadSession(bad.into()))
            );
        }
    }

    #[test]
    fn a_session_with_capitals_has_a_lower_case_twin() {
        let path = socket_path("/x", "Work").expect("a valid session");
        assert_eq!(case_twin(&path), Some("/x/copyq-Work/.copyq-work_s".into()));
        let plain = socket_path("/x", "work_1").expect("a valid session");
        assert_eq!(case_twin(&plain), None);
        assert_eq!(case_twin(Path::new("/run/Other_s")), None);
    }
}
