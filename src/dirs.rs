//! Where a user's files go, per platform: the XDG base directories on Unix; on Windows the
//! per-user application data folders, `%LOCALAPPDATA%` for data (not roamed: the database and
//! keys belong to this machine) and `%APPDATA%` for the config file (roamed with the profile).

use std::ffi::OsString;
use std::path::PathBuf;

/// The base the data dir `copyq-mcp` goes under: `$XDG_DATA_HOME`, else `~/.local/share`
/// (Windows: `%LOCALAPPDATA%`), else the current directory.
pub(crate) fn data_base(lookup: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    let set = |name| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    #[cfg(unix)]
    let base = set("XDG_DATA_HOME").or_else(|| {
        // Not `set`: an empty HOME has always given `/.local/share` here.
        lookup("HOME").map(|h| PathBuf::from(h).join(".local/share"))
    });
    #[cfg(windows)]
    let base = set("LOCALAPPDATA");
    base.unwrap_or_else(|| PathBuf::from("."))
}

/// The base the config dir `copyq-mcp` goes under: `$XDG_CONFIG_HOME`, else `~/.config`
/// (Windows: `%APPDATA%`); `None` when those are unset.
pub(crate) fn config_base(lookup: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |name| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    #[cfg(unix)]
    return set("XDG_CONFIG_HOME").or_else(|| set("HOME").map(|home| home.join(".config")));
    #[cfg(windows)]
    set("APPDATA")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[cfg(windows)]
    #[test]
    fn windows_data_is_local_and_config_roams() {
        let e = env(&[
            ("LOCALAPPDATA", r"C:\Users\ann\AppData\Local"),
            ("APPDATA", r"C:\Users\ann\AppData\Roaming"),
            ("XDG_DATA_HOME", "/x"),
        ]);
        assert_eq!(data_base(&e), PathBuf::from(r"C:\Users\ann\AppData\Local"));
        assert_eq!(
            config_base(&e),
            Some(PathBuf::from(r"C:\Users\ann\AppData\Roaming"))
        );
        assert_eq!(data_base(env(&[])), PathBuf::from("."));
        assert_eq!(config_base(env(&[("HOME", "/h")])), None);
    }

    #[cfg(unix)]
    #[test]
    fn unix_follows_xdg_then_home() {
        let all = env(&[
            ("XDG_DATA_HOME", "/d"),
            ("XDG_CONFIG_HOME", "/c"),
            ("HOME", "/h"),
        ]);
        assert_eq!(data_base(&all), PathBuf::from("/d"));
        assert_eq!(config_base(&all), Some(PathBuf::from("/c")));
        let home = env(&[("XDG_DATA_HOME", ""), ("HOME", "/h")]);
        assert_eq!(data_base(&home), PathBuf::from("/h/.local/share"));
        assert_eq!(config_base(&home), Some(PathBuf::from("/h/.config")));
        assert_eq!(
            data_base(env(&[("LOCALAPPDATA", "/l")])),
            PathBuf::from(".")
        );
    }
}
