//! Where a user's files go, per platform: the XDG base directories on Linux and the other Unixes;
//! on macOS `~/Library/Application Support` for data and config alike (Apple's place for an
//! app's own files, and the `dirs` crate's `data_dir` and `config_dir` there; the XDG variables
//! are not read); on Windows the per-user application data folders, `%LOCALAPPDATA%` for data
//! (not roamed: the database and keys belong to this machine) and `%APPDATA%` for the config file
//! (roamed with the profile).

use std::ffi::OsString;
use std::path::PathBuf;

/// The base the data dir `copyq-mcp` goes under: `$XDG_DATA_HOME`, else `~/.local/share`
/// (macOS: `~/Library/Application Support`; Windows: `%LOCALAPPDATA%`), else the current
/// directory.
pub(crate) fn data_base(lookup: impl Fn(&str) -> Option<OsString>) -> PathBuf {
    #[cfg(all(unix, not(target_os = "macos")))]
    let base = set(&lookup, "XDG_DATA_HOME").or_else(|| {
        // Not `set`: an empty HOME has always given `/.local/share` here.
        lookup("HOME").map(|h| PathBuf::from(h).join(".local/share"))
    });
    #[cfg(target_os = "macos")]
    let base = macos_base(&lookup);
    #[cfg(windows)]
    let base = set(&lookup, "LOCALAPPDATA");
    base.unwrap_or_else(|| PathBuf::from("."))
}

/// The base the config dir `copyq-mcp` goes under: `$XDG_CONFIG_HOME`, else `~/.config`
/// (macOS: `~/Library/Application Support`; Windows: `%APPDATA%`); `None` when those are unset.
pub(crate) fn config_base(lookup: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    #[cfg(all(unix, not(target_os = "macos")))]
    let base = set(&lookup, "XDG_CONFIG_HOME")
        .or_else(|| set(&lookup, "HOME").map(|home| home.join(".config")));
    #[cfg(target_os = "macos")]
    let base = macos_base(&lookup);
    #[cfg(windows)]
    let base = set(&lookup, "APPDATA");
    base
}

/// The variable `name` as a path, `None` when unset or empty.
fn set(lookup: &impl Fn(&str) -> Option<OsString>, name: &str) -> Option<PathBuf> {
    lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// macOS's base for both: `$HOME/Library/Application Support`, `None` when `HOME` is unset or
/// empty. Compiled on every platform for its test.
#[cfg(any(target_os = "macos", test))]
fn macos_base(lookup: &impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    set(lookup, "HOME").map(|home| home.join("Library/Application Support"))
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

    #[test]
    fn macos_puts_both_under_application_support() {
        let e = env(&[
            ("HOME", "/Users/ann"),
            ("XDG_DATA_HOME", "/d"),
            ("XDG_CONFIG_HOME", "/c"),
        ]);
        assert_eq!(
            macos_base(&e),
            Some(PathBuf::from("/Users/ann/Library/Application Support"))
        );
        assert_eq!(macos_base(&env(&[("HOME", "")])), None);
        assert_eq!(macos_base(&env(&[])), None);
    }

    #[cfg(target_os = "macos")]
    #[test]
    fn on_macos_data_and_config_share_the_base() {
        let e = env(&[("HOME", "/Users/ann"), ("XDG_DATA_HOME", "/d")]);
        let base = PathBuf::from("/Users/ann/Library/Application Support");
        assert_eq!(data_base(&e), base);
        assert_eq!(config_base(&e), Some(base));
        assert_eq!(data_base(env(&[])), PathBuf::from("."));
    }

    #[cfg(all(unix, not(target_os = "macos")))]
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
