//! Settings: the built-in `config/default.toml`, then an optional user file, then
//! `COPYQ_MCP__SECTION__KEY` environment variables, then flags. Loaded and checked once at start-up;
//! unknown keys and bad values fail with a message that names the key. The `[section]` structs
//! are in [`sections`]; this file loads and checks them as a whole.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use config::{Config, Environment, File, FileFormat};
use serde::Deserialize;

mod default_file;
mod sections;
pub use default_file::path as default_config_file;
pub use sections::{
    AuditSettings, AuthSettings, BackendKind, ClipboardSettings, CopyqSettings, LimitSettings,
    LogSettings, OAuthSettings, PrivacySettings, ServerSettings, TlsSettings,
};
pub use sections::{ImageSettings, LogFormat, McpSettings, MetricsSettings};

const DEFAULTS: &str = include_str!("../config/default.toml");
const ENV_PREFIX: &str = "COPYQ_MCP";
const LIST_KEYS: &[&str] = &[
    "server.allowed_hosts",
    "server.allowed_origins",
    "server.trusted_proxies",
    "oauth.redirect_origins",
    "clipboard.roots",
    "clipboard.nested_roots",
    "privacy.patterns",
];

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    pub data_dir: String,
    pub server: ServerSettings,
    pub auth: AuthSettings,
    pub oauth: OAuthSettings,
    pub limits: LimitSettings,
    pub tls: TlsSettings,
    pub copyq: CopyqSettings,
    pub clipboard: ClipboardSettings,
    pub audit: AuditSettings,
    pub privacy: PrivacySettings,
    pub images: ImageSettings,
    pub log: LogSettings,
    pub metrics: MetricsSettings,
    pub mcp: McpSettings,
    /// The config files read, in layering order (the default file, then `--config`): for the
    /// commands that say which setup they used, and `doctor`.
    #[serde(skip)]
    pub files: Vec<PathBuf>,
}

/// Flags that override every other layer.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overrides {
    pub bind: Option<SocketAddr>,
    pub data_dir: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct ConfigError(String);

/// The error for a bad value of `key`.
fn bad(key: &str, why: &str) -> Result<(), ConfigError> {
    Err(ConfigError(format!("{key}: {why}")))
}

impl Settings {
    /// The built-in defaults alone: what tests start from before changing fields.
    pub fn defaults() -> Result<Self, ConfigError> {
        Self::build(Config::builder().add_source(File::from_str(DEFAULTS, FileFormat::Toml)))
    }

    /// Every layer, as the binary loads them: the default file (when present), `--config`, the
    /// environment, the flags.
    pub(crate) fn load(
        user_file: Option<&Path>,
        overrides: &Overrides,
    ) -> Result<Self, ConfigError> {
        let default = default_file::present(default_file::path())?;
        Self::load_with_env(default.as_deref(), user_file, overrides, None)
    }

    /// As [`Settings::load`], with `default` the default file if it is present, and `env` standing
    /// for the process environment when given.
    fn load_with_env(
        default: Option<&Path>,
        user_file: Option<&Path>,
        overrides: &Overrides,
        env_vars: Option<std::collections::HashMap<String, String>>,
    ) -> Result<Self, ConfigError> {
        let mut builder = Config::builder().add_source(File::from_str(DEFAULTS, FileFormat::Toml));
        let mut files = Vec::new();
        if let Some(path) = user_file
            && !path.is_file()
        {
            return Err(ConfigError(format!(
                "config file {} not found",
                path.display()
            )));
        }
        for path in default.into_iter().chain(user_file) {
            builder = builder.add_source(default_file::layer(path)?);
            files.push(path.to_path_buf());
        }
        let mut env = Environment::with_prefix(ENV_PREFIX)
            .prefix_separator("__")
            .separator("__")
            .try_parsing(true)
            .list_separator(",")
            .source(env_vars);
        for key in LIST_KEYS {
            env = env.with_list_parse_key(key);
        }
        builder = builder.add_source(env);
        let set = |b: config::ConfigBuilder<_>, key: &str, v: String| {
            b.set_override(key, v)
                .map_err(|e| ConfigError(e.to_string()))
        };
        if let Some(bind) = overrides.bind {
            builder = set(builder, "server.bind", bind.to_string())?;
        }
        if let Some(dir) = &overrides.data_dir {
            builder = set(builder, "data_dir", dir.display().to_string())?;
        }
        let mut settings = Self::build(builder).map_err(|e| default_file::naming(e, &files))?;
        settings.files = files;
        Ok(settings)
    }

    fn build(
        builder: config::ConfigBuilder<config::builder::DefaultState>,
    ) -> Result<Self, ConfigError> {
        let settings: Self = builder
            .build()
            .and_then(Config::try_deserialize)
            .map_err(|e| ConfigError(e.to_string()))?;
        settings.validate()?;
        Ok(settings)
    }

    /// Values each key allows, checked in one pass; the first bad one is the error.
    fn validate(&self) -> Result<(), ConfigError> {
        if self.copyq.timeout_ms == 0 {
            return bad("copyq.timeout_ms", "must be greater than 0");
        }
        crate::privacy::check_patterns(&self.privacy.patterns)
            .map_err(|e| ConfigError(e.to_string()))?;
        if self.tls.cert.is_empty() != self.tls.key.is_empty() {
            return bad("tls.cert / tls.key", "set both, or neither");
        }
        self.limits.check()?;
        if self.images.max_edge < 16 || self.images.max_bytes < 1024 {
            return bad(
                "images",
                "max_edge must be at least 16 and max_bytes at least 1024",
            );
        }
        if self.copyq.command.is_empty() {
            return bad("copyq.command", "must not be empty");
        }
        if self.server.max_body_bytes < 1024 {
            return bad("server.max_body_bytes", "must be at least 1024");
        }
        if self.auth.issuer.is_empty() || self.auth.audience.is_empty() {
            return bad("auth.issuer / auth.audience", "must not be empty");
        }
        self.clipboard.check()?;
        self.server.check_public_url()?;
        if let Err(why) = crate::limit::parse_nets(&self.server.trusted_proxies) {
            return bad("server.trusted_proxies", &why);
        }
        if tracing_subscriber::EnvFilter::try_new(&self.log.level).is_err() {
            return bad("log.level", "not a valid log filter");
        }
        Ok(())
    }

    /// The data dir: configured, else `$XDG_DATA_HOME/copyq-mcp`, else `~/.local/share/copyq-mcp`
    /// (macOS: `~/Library/Application Support/copyq-mcp`; Windows: `%LOCALAPPDATA%\copyq-mcp`; see
    /// [`crate::dirs`]).
    pub fn data_dir(&self) -> PathBuf {
        if !self.data_dir.is_empty() {
            return PathBuf::from(&self.data_dir);
        }
        crate::dirs::data_base(|name| std::env::var_os(name)).join("copyq-mcp")
    }

    pub fn signing_key_path(&self) -> PathBuf {
        if self.auth.signing_key_file.is_empty() {
            self.data_dir().join("signing.key")
        } else {
            PathBuf::from(&self.auth.signing_key_file)
        }
    }

    /// The built-in TLS files, when configured.
    pub fn tls_files(&self) -> Option<crate::tls::TlsFiles> {
        (!self.tls.cert.is_empty()).then(|| crate::tls::TlsFiles {
            cert: PathBuf::from(&self.tls.cert),
            key: PathBuf::from(&self.tls.key),
        })
    }

    /// Where CopyQ's local socket is: configured, or computed like the `copyq` client does.
    pub fn copyq_socket(&self) -> Result<PathBuf, String> {
        if !self.copyq.socket.is_empty() {
            return Ok(PathBuf::from(&self.copyq.socket));
        }
        let mut env = crate::backend::socket::path::SocketEnv::from_process_env();
        if !self.copyq.settings_path.is_empty() {
            env.settings_path = Some(PathBuf::from(&self.copyq.settings_path));
        }
        if !self.copyq.session.is_empty() {
            env.session = Some(self.copyq.session.clone());
        }
        env.socket_path().map_err(|e| e.to_string())
    }

    pub(crate) fn copyq_timeout(&self) -> Duration {
        Duration::from_millis(self.copyq.timeout_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_toml(extra: &str) -> Result<Settings, ConfigError> {
        Settings::build(
            Config::builder()
                .add_source(File::from_str(DEFAULTS, FileFormat::Toml))
                .add_source(File::from_str(extra, FileFormat::Toml)),
        )
    }

    #[test]
    fn defaults_are_loopback() {
        let s = Settings::defaults().unwrap();
        assert!(s.server.bind.ip().is_loopback());
        assert_eq!(s.clipboard.roots, ["info", "заметки", "workspace"]);
        assert!(!s.server.sessions);
    }

    #[test]
    fn unknown_keys_are_named() {
        let e = from_toml("[server]\nbnd = \"1.2.3.4:1\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bnd"), "{e}");
        let e = from_toml("colour = 1").unwrap_err().to_string();
        assert!(e.contains("colour"), "{e}");
    }

    #[test]
    fn bad_values_are_named() {
        let e = from_toml("[server]\nbind = \"nowhere\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bind"), "{e}");
        let e = from_toml("[copyq]\ntimeout_ms = 0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("copyq.timeout_ms"), "{e}");
        let e = from_toml("[clipboard]\nnested_roots = [\"x\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("clipboard.nested_roots"), "{e}");
        let e = from_toml("[privacy]\npatterns = [\"ok\", \"(unclosed\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("privacy.patterns[1]"), "{e}");
        let e = from_toml("[privacy]\nredact = \"some\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("redact"), "{e}");
    }

    /// Durations and the backend are parsed once, at load: a bad one fails there, naming its key.
    #[test]
    fn durations_and_the_backend_fail_at_load() {
        for (toml, message) in [
            (
                "[oauth]\naccess_token_ttl = \"soon\"",
                "configuration: not a duration such as 15m, 1h or 30d for key `oauth.access_token_ttl`",
            ),
            (
                "[oauth]\nrefresh_token_ttl = \"1 fortnight\"",
                "configuration: not a duration such as 15m, 1h or 30d for key `oauth.refresh_token_ttl`",
            ),
            (
                "[audit]\nkeep = \"always\"",
                "configuration: not a duration such as 90d, or \"forever\" for key `audit.keep`",
            ),
            (
                "[copyq]\nbackend = \"pipe\"",
                "configuration: must be auto, socket or cli for key `copyq.backend`",
            ),
        ] {
            let e = from_toml(toml).unwrap_err().to_string();
            assert_eq!(e, message);
        }
        let s = from_toml(
            "[oauth]\naccess_token_ttl = \"15m\"\nrefresh_token_ttl = \"7d\"\n[audit]\nkeep = \"forever\"\n[copyq]\nbackend = \"cli\"",
        )
        .unwrap();
        assert_eq!(s.oauth.access_token_ttl, Duration::from_secs(900));
        assert_eq!(s.oauth.refresh_token_ttl, Duration::from_secs(7 * 86400));
        assert_eq!(s.audit.keep, None);
        assert_eq!(s.copyq.backend, BackendKind::Cli);
        let d = Settings::defaults().unwrap();
        assert_eq!(d.audit.keep, Some(Duration::from_secs(90 * 86400)));
        assert_eq!(d.copyq.backend, BackendKind::Auto);
    }

    /// Every list in the defaults, found by walking them, can be set from the environment.
    #[test]
    fn every_list_key_is_settable_from_the_environment() {
        let defaults: serde_json::Value = Config::builder()
            .add_source(File::from_str(DEFAULTS, FileFormat::Toml))
            .build()
            .and_then(Config::try_deserialize)
            .unwrap();
        let mut lists = Vec::new();
        for (section, table) in defaults.as_object().unwrap() {
            for (key, value) in table.as_object().into_iter().flatten() {
                if value.is_array() {
                    lists.push(format!("{section}.{key}"));
                }
            }
        }
        lists.sort();
        let mut known: Vec<String> = LIST_KEYS.iter().map(|k| k.to_string()).collect();
        known.sort();
        assert_eq!(lists, known, "LIST_KEYS must name every list key");
        // Values each key accepts (nested roots must be roots; proxies must be addresses).
        let value = |key: &str| match key {
            "clipboard.roots" => ("info,workspace", vec!["info", "workspace"]),
            "clipboard.nested_roots" => ("workspace", vec!["workspace"]),
            "server.trusted_proxies" => ("127.0.0.1,10.0.0.0/8", vec!["127.0.0.1", "10.0.0.0/8"]),
            "privacy.patterns" => (
                "internal-[a-z]{16},corp_[0-9]+",
                vec!["internal-[a-z]{16}", "corp_[0-9]+"],
            ),
            _ => (
                "https://a.example,https://b.example",
                vec!["https://a.example", "https://b.example"],
            ),
        };
        for key in &lists {
            let (raw, want) = value(key);
            let var = format!("COPYQ_MCP__{}", key.replace('.', "__").to_uppercase());
            let mut env = std::collections::HashMap::from([(var.clone(), raw.to_owned())]);
            if key == "clipboard.roots" {
                env.insert(
                    "COPYQ_MCP__CLIPBOARD__NESTED_ROOTS".into(),
                    "workspace".into(),
                );
            }
            let s = Settings::load_with_env(None, None, &Overrides::default(), Some(env))
                .unwrap_or_else(|e| panic!("{var}={raw}: {e}"));
            let got = serde_json::to_value(match key.as_str() {
                "server.allowed_hosts" => &s.server.allowed_hosts,
                "server.allowed_origins" => &s.server.allowed_origins,
                "server.trusted_proxies" => &s.server.trusted_proxies,
                "oauth.redirect_origins" => &s.oauth.redirect_origins,
                "clipboard.roots" => &s.clipboard.roots,
                "clipboard.nested_roots" => &s.clipboard.nested_roots,
                "privacy.patterns" => &s.privacy.patterns,
                other => panic!("no accessor for {other}: add it here"),
            })
            .unwrap();
            assert_eq!(got, serde_json::json!(want), "{var}");
        }
    }

    #[test]
    fn secrets_do_not_print() {
        let s =
            from_toml("[auth]\nsigning_key = \"super-secret-value-super-secret-value\"").unwrap();
        assert!(!format!("{s:?}").contains("super-secret"));
    }
}
