//! The config file every subcommand reads without being told: `$XDG_CONFIG_HOME/copyq-mcp/config.toml`
//! (`~/.config/copyq-mcp/config.toml` when that is unset; `~/Library/Application
//! Support/copyq-mcp/config.toml` on macOS; `%APPDATA%\copyq-mcp\config.toml` on Windows, see
//! [`crate::dirs`]), so that `token issue`, `serve` and the
//! systemd unit all see the same data dir. A missing file is fine; one that cannot be read or
//! parsed stops the command, naming it, rather than being skipped in silence.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use config::{File, FileFormat, FileSourceString};

use super::ConfigError;

/// Where the default file is, from this process's environment (`None`: no `XDG_CONFIG_HOME` and
/// no `HOME`).
pub fn path() -> Option<PathBuf> {
    path_from(|name| std::env::var_os(name))
}

/// As [`path`], reading variables through `lookup`.
fn path_from(lookup: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    crate::dirs::config_base(lookup).map(|base| base.join("copyq-mcp").join("config.toml"))
}

/// `path` if a file is there; `None` if nothing is; an error naming it if it cannot be looked at.
pub(super) fn present(path: Option<PathBuf>) -> Result<Option<PathBuf>, ConfigError> {
    let Some(path) = path else {
        return Ok(None);
    };
    match std::fs::metadata(&path) {
        Ok(_) => Ok(Some(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(ConfigError(format!(
            "config file {}: cannot read it: {e}",
            path.display()
        ))),
    }
}

/// One file's layer, read and parsed here so that a failure names the file.
pub(super) fn layer(path: &Path) -> Result<File<FileSourceString, FileFormat>, ConfigError> {
    let named = |why: String| ConfigError(format!("config file {}: {why}", path.display()));
    let text = std::fs::read_to_string(path).map_err(|e| named(format!("cannot read it: {e}")))?;
    text.parse::<toml::Table>()
        .map_err(|e| named(e.message().to_owned()))?;
    Ok(File::from_str(&text, FileFormat::Toml))
}

/// A bad key or value, with the files it may have come from.
pub(super) fn naming(e: ConfigError, files: &[PathBuf]) -> ConfigError {
    if files.is_empty() {
        return e;
    }
    let list: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    ConfigError(format!("{} (config files read: {})", e.0, list.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Overrides, Settings};

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn the_default_file_follows_xdg() {
        let env = |pairs: &'static [(&str, &str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        assert_eq!(
            path_from(env(&[("XDG_CONFIG_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/copyq-mcp/config.toml"))
        );
        assert_eq!(
            path_from(env(&[("XDG_CONFIG_HOME", ""), ("HOME", "/h")])),
            Some(PathBuf::from("/h/.config/copyq-mcp/config.toml"))
        );
        assert_eq!(path_from(env(&[])), None);
    }

    #[test]
    fn missing_is_fine_and_bad_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        assert!(present(Some(file.clone())).unwrap().is_none());
        std::fs::write(&file, "data_dir = \"/from/default\"\n").unwrap();
        let s = Settings::load_with_env(Some(&file), None, &Overrides::default(), Some([].into()))
            .unwrap();
        assert_eq!(s.data_dir, "/from/default");
        assert_eq!(s.files, std::slice::from_ref(&file));
        // --config and the environment win over it.
        let other = dir.path().join("other.toml");
        std::fs::write(&other, "[server]\nbind = \"127.0.0.1:9\"\n").unwrap();
        let env = [("COPYQ_MCP__DATA_DIR".to_owned(), "/from/env".to_owned())].into();
        let s =
            Settings::load_with_env(Some(&file), Some(&other), &Overrides::default(), Some(env))
                .unwrap();
        assert_eq!(s.data_dir, "/from/env");
        assert_eq!(s.server.bind.port(), 9);
        assert_eq!(s.files, [file.clone(), other]);

        std::fs::write(&file, "data_dir = \n").unwrap();
        let e = Settings::load_with_env(Some(&file), None, &Overrides::default(), Some([].into()))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("configuration: config file {}: ", file.display())),
            "{e}"
        );
        std::fs::write(&file, "colour = 1\n").unwrap();
        let e = Settings::load_with_env(Some(&file), None, &Overrides::default(), Some([].into()))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("colour") && e.contains(&file.display().to_string()),
            "{e}"
        );
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        let e = Settings::load_with_env(Some(&file), None, &Overrides::default(), Some([].into()))
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot read it"), "{e}");
    }
}
