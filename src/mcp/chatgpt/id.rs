//! The ids `search` gives and `fetch` takes: `copyq://tab/<tab, each segment percent-encoded>/
//! <index>#<fingerprint of the preview>`. The part before `#` is also the result's `url`.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::clipboard::MCP_PREFIX;
use crate::mcp::error::ToolError;

const SCHEME: &str = "copyq://tab/";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemId {
    /// The CopyQ tab's full name.
    pub tab: String,
    pub index: usize,
    fingerprint: String,
}

/// 16 hex digits of the SHA-256 of a preview as `mcp_read` shows it (already masked).
fn fingerprint(preview: &str) -> String {
    Sha256::digest(preview.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl ItemId {
    /// The id of a row of an `mcp_read` search (`tab`, `external`, `index`, `text`).
    pub fn of_row(row: &Value) -> Option<Self> {
        let shown = row["tab"].as_str()?;
        let tab = if row["external"].as_bool()? {
            shown.to_owned()
        } else {
            format!("{MCP_PREFIX}{shown}")
        };
        Some(Self {
            tab,
            index: usize::try_from(row["index"].as_u64()?).ok()?,
            fingerprint: fingerprint(row["text"].as_str().unwrap_or_default()),
        })
    }

    /// Whether a row (of any tab listing) shows the item this id was made for.
    pub fn matches(&self, row: &Value) -> bool {
        row["text"].as_str().map(fingerprint).as_deref() == Some(self.fingerprint.as_str())
    }

    /// The name `mcp_read` takes for the tab, with [`Self::scope`].
    pub fn shown(&self) -> &str {
        self.tab.strip_prefix(MCP_PREFIX).unwrap_or(&self.tab)
    }

    pub fn scope(&self) -> &'static str {
        if self.tab.starts_with(MCP_PREFIX) {
            "mcp"
        } else {
            "external"
        }
    }

    /// The same item at another index.
    pub fn at(&self, index: usize) -> Self {
        Self {
            index,
            ..self.clone()
        }
    }

    /// `copyq://tab/<segments>/<index>`.
    pub fn url(&self) -> String {
        let path: Vec<String> = self.tab.split('/').map(encode).collect();
        format!("{SCHEME}{}/{}", path.join("/"), self.index)
    }
}

impl fmt::Display for ItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{}", self.url(), self.fingerprint)
    }
}

impl FromStr for ItemId {
    type Err = ToolError;

    fn from_str(s: &str) -> Result<Self, ToolError> {
        let bad = || ToolError::InvalidParam("Parameter 'id' is not an id that search gave".into());
        let rest = s.strip_prefix(SCHEME).ok_or_else(bad)?;
        let (path, fingerprint) = rest.rsplit_once('#').ok_or_else(bad)?;
        let (tab, index) = path.rsplit_once('/').ok_or_else(bad)?;
        let segments: Option<Vec<String>> = tab.split('/').map(decode).collect();
        let valid_fp =
            fingerprint.len() == 16 && fingerprint.bytes().all(|b| b.is_ascii_hexdigit());
        match (segments, index.parse::<usize>()) {
            (Some(seg), Ok(index)) if valid_fp && !tab.is_empty() => Ok(Self {
                tab: seg.join("/"),
                index,
                fingerprint: fingerprint.to_owned(),
            }),
            _ => Err(bad()),
        }
    }
}

/// RFC 3986: every byte but the unreserved ones as `%XX`.
fn encode(segment: &str) -> String {
    segment
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_round_trip_with_cyrillic_and_reserved_characters() {
        let row = json!({"tab": "&буфер/a b#1", "external": true, "index": 3, "text": "x"});
        let id = ItemId::of_row(&row).expect("an id");
        assert_eq!(
            id.url(),
            "copyq://tab/%26%D0%B1%D1%83%D1%84%D0%B5%D1%80/a%20b%231/3"
        );
        let back: ItemId = id.to_string().parse().expect("parses");
        assert_eq!(back, id);
        assert_eq!((back.shown(), back.scope()), ("&буфер/a b#1", "external"));
        let managed = json!({"tab": "workspace/p", "external": false, "index": 0, "text": "x"});
        let m = ItemId::of_row(&managed).expect("an id");
        assert_eq!(
            (m.tab.as_str(), m.shown(), m.scope()),
            ("mcp/workspace/p", "workspace/p", "mcp")
        );
        assert!(m.matches(&json!({"text": "x"})) && !m.matches(&json!({"text": "y"})));
    }

    #[test]
    fn malformed_ids_are_refused() {
        for bad in [
            "",
            "copyq://tab/x/1",
            "copyq://tab/x/one#0011223344556677",
            "copyq://tab/%zz/1#0011223344556677",
            "http://x/1#0011223344556677",
        ] {
            assert!(bad.parse::<ItemId>().is_err(), "{bad}");
        }
    }
}
