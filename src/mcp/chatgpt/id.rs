//! The ids `search` gives and `fetch` takes: the item's resource URI
//! (`copyq://tab/<tab, each segment percent-encoded>?index=<index>`, which `resources/read` takes
//! too) and `#<fingerprint of the preview>`. The part before `#` is also the result's `url`.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::super::resources::{parse, tab_uri};
use crate::clipboard::{MCP_PREFIX, read_address};
use crate::mcp::error::ToolError;

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

    /// The name `mcp_read` takes for the tab, and its scope.
    pub fn address(&self) -> (&str, &'static str) {
        let (shown, scope) = read_address(&self.tab);
        (shown, scope.as_str())
    }

    /// The same item at another index.
    pub fn at(&self, index: usize) -> Self {
        Self {
            index,
            ..self.clone()
        }
    }

    /// The item's resource URI: `copyq://tab/<segments>?index=<index>`.
    pub fn url(&self) -> String {
        format!("{}?index={}", tab_uri(&self.tab), self.index)
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
        let (uri, fingerprint) = s.rsplit_once('#').ok_or_else(bad)?;
        let valid_fp =
            fingerprint.len() == 16 && fingerprint.bytes().all(|b| b.is_ascii_hexdigit());
        match parse(uri) {
            Some(target) if valid_fp => Ok(Self {
                index: target
                    .index
                    .and_then(|i| usize::try_from(i).ok())
                    .ok_or_else(bad)?,
                tab: target.tab,
                fingerprint: fingerprint.to_owned(),
            }),
            _ => Err(bad()),
        }
    }
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
            "copyq://tab/%26%D0%B1%D1%83%D1%84%D0%B5%D1%80/a%20b%231?index=3"
        );
        // The url is the item's resource URI: resources/read names the same tab and row.
        let resource = parse(&id.url()).expect("a resource URI");
        assert_eq!(
            (resource.tab.as_str(), resource.index),
            ("&буфер/a b#1", Some(3))
        );
        let back: ItemId = id.to_string().parse().expect("parses");
        assert_eq!(back, id);
        assert_eq!(back.address(), ("&буфер/a b#1", "external"));
        let managed = json!({"tab": "workspace/p", "external": false, "index": 0, "text": "x"});
        let m = ItemId::of_row(&managed).expect("an id");
        assert_eq!(
            (m.tab.as_str(), m.address().0, m.address().1),
            ("mcp/workspace/p", "workspace/p", "mcp")
        );
        assert!(m.matches(&json!({"text": "x"})) && !m.matches(&json!({"text": "y"})));
    }

    #[test]
    fn malformed_ids_are_refused() {
        for bad in [
            "",
            "copyq://tab/x?index=1",
            "copyq://tab/x#0011223344556677",
            "copyq://tab/x?index=one#0011223344556677",
            "copyq://tab/%zz?index=1#0011223344556677",
            "http://x?index=1#0011223344556677",
        ] {
            assert!(bad.parse::<ItemId>().is_err(), "{bad}");
        }
    }
}
