//! The sections of the settings, one struct per `[section]` of `config/default.toml`, with the
//! parsers of their typed values (durations, the backend) and the checks that concern one
//! section alone.

use std::net::SocketAddr;
use std::time::Duration;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer};

use super::{ConfigError, bad};

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivacySettings {
    pub redact: crate::privacy::Redact,
    pub patterns: Vec<String>,
    /// Whether `mcp_read item` sends images of external tabs (images cannot be redacted).
    pub external_images: bool,
}

/// `[images]`: the images `mcp_read item` sends to the model.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageSettings {
    /// Longest edge sent, in pixels; larger images are scaled down to it.
    pub max_edge: u32,
    /// Most bytes of one image sent (before base64); a larger one is not sent, and the reply says so.
    pub max_bytes: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSettings {
    /// How long audit entries are kept; `None` ("forever", or empty): for ever.
    #[serde(deserialize_with = "keep")]
    pub keep: Option<Duration>,
    /// The audit log's size at most, in bytes (0: no cap); past it the oldest entries go.
    pub max_bytes: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSettings {
    pub bind: SocketAddr,
    pub allowed_hosts: Vec<String>,
    pub sessions: bool,
    pub max_body_bytes: usize,
    pub public_url: String,
    pub allowed_origins: Vec<String>,
    pub allow_plain_http: bool,
    pub trusted_proxies: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsSettings {
    pub cert: String,
    pub key: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitSettings {
    pub requests_per_minute: u32,
    pub burst: u32,
    pub request_timeout_ms: u64,
    pub max_concurrent_copyq_calls: usize,
    pub max_form_bytes: usize,
    pub header_read_timeout_ms: u64,
    pub max_connections: usize,
    pub max_connections_per_address: usize,
    /// Requests one HTTP/2 connection may have open at once.
    pub max_streams_per_connection: u32,
    /// How many leading bits of an IPv6 address name one client for the per-address limits.
    pub ipv6_prefix: u8,
    /// Request bytes one caller may send to /mcp an hour.
    pub mcp_bytes_per_hour: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthSettings {
    pub enabled: bool,
    #[serde(deserialize_with = "ttl")]
    pub access_token_ttl: Duration,
    #[serde(deserialize_with = "ttl")]
    pub refresh_token_ttl: Duration,
    pub redirect_origins: Vec<String>,
    pub max_clients: usize,
    pub registrations_per_hour: u32,
    pub authorize_per_minute: u32,
    pub metadata_document_allow_private: bool,
    pub metadata_document_ca_file: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthSettings {
    pub issuer: String,
    pub audience: String,
    pub signing_key_file: String,
    pub signing_key: crate::auth::Secret,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CopyqSettings {
    pub backend: BackendKind,
    pub socket: String,
    pub command: String,
    pub session: String,
    pub settings_path: String,
    pub timeout_ms: u64,
}

/// `copyq.backend`: how the gateway reaches CopyQ (see [`crate::app::backend`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendKind {
    /// The socket whenever it can serve, else the CLI, decided per connection.
    Auto,
    /// CopyQ's local socket only.
    Socket,
    /// The `copyq` command line only.
    Cli,
}

impl BackendKind {
    /// `auto`, `socket` or `cli`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "socket" => Some(Self::Socket),
            "cli" => Some(Self::Cli),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for BackendKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).ok_or_else(|| D::Error::custom("must be auto, socket or cli"))
    }
}

/// A lifetime such as `15m`, `1h` or `30d`, parsed once, at load.
fn ttl<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let s = String::deserialize(d)?;
    crate::auth::parse_ttl(&s)
        .map_err(|_| D::Error::custom("not a duration such as 15m, 1h or 30d"))
}

/// `audit.keep`: a duration, or "forever" (or empty) for `None`.
fn keep<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let s = String::deserialize(d)?;
    match s.as_str() {
        "" | "forever" => Ok(None),
        _ => crate::auth::parse_ttl(&s)
            .map(Some)
            .map_err(|_| D::Error::custom("not a duration such as 90d, or \"forever\"")),
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipboardSettings {
    pub roots: Vec<String>,
    pub nested_roots: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogSettings {
    pub level: String,
    pub format: LogFormat,
}

/// `log.format`: lines for a person, or one JSON object per line for a log collector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// `[metrics]`: Prometheus metrics at `GET /metrics`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsSettings {
    /// Off by default; when on, answered to loopback clients, or to others with a valid token.
    pub enabled: bool,
}

/// `[mcp]`: the optional MCP surfaces beyond the three tools' text replies.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpSettings {
    /// `outputSchema` and `structuredContent` for clients on 2025-06-18 and later.
    pub structured: bool,
    /// `search` and `fetch` in ChatGPT's shapes, for read and write tokens.
    pub chatgpt_tools: bool,
}

impl LimitSettings {
    /// Every limit is above 0.
    pub(super) fn check(&self) -> Result<(), ConfigError> {
        if self.requests_per_minute == 0
            || self.burst == 0
            || self.request_timeout_ms == 0
            || self.max_concurrent_copyq_calls == 0
            || self.header_read_timeout_ms == 0
            || self.max_connections == 0
            || self.max_connections_per_address == 0
            || self.max_streams_per_connection == 0
            || self.mcp_bytes_per_hour == 0
        {
            return bad(
                "limits",
                "requests_per_minute, burst, request_timeout_ms, max_concurrent_copyq_calls, header_read_timeout_ms, max_connections, max_connections_per_address, max_streams_per_connection and mcp_bytes_per_hour must be > 0",
            );
        }
        if !(16..=128).contains(&self.ipv6_prefix) {
            return bad("limits.ipv6_prefix", "must be between 16 and 128");
        }
        Ok(())
    }
}

impl ServerSettings {
    /// `public_url`, when set, is an http(s) URL without query or fragment.
    pub(super) fn check_public_url(&self) -> Result<(), ConfigError> {
        if self.public_url.is_empty() {
            return Ok(());
        }
        match url::Url::parse(&self.public_url) {
            Ok(u)
                if matches!(u.scheme(), "http" | "https")
                    && u.query().is_none()
                    && u.fragment().is_none() =>
            {
                Ok(())
            }
            _ => bad(
                "server.public_url",
                "must be an http(s) URL without query or fragment",
            ),
        }
    }
}

impl ClipboardSettings {
    /// Roots are non-empty names without `/`, and every nested root is one of them.
    pub(super) fn check(&self) -> Result<(), ConfigError> {
        if self.roots.is_empty() || self.roots.iter().any(|r| r.is_empty() || r.contains('/')) {
            return bad("clipboard.roots", "must be non-empty names without '/'");
        }
        if let Some(n) = self.nested_roots.iter().find(|n| !self.roots.contains(n)) {
            return bad(
                "clipboard.nested_roots",
                &format!("'{n}' is not one of clipboard.roots"),
            );
        }
        Ok(())
    }
}
