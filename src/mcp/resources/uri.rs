//! `copyq://tab/...` URIs: a CopyQ tab's full name, each `/`-separated segment percent-encoded
//! (RFC 3986: everything but the unreserved characters, as UTF-8 bytes), and `?index=N` for one
//! item. The index goes in the query, not in a last path segment: a tab may be named `notes/2024`,
//! and `copyq://tab/notes/2024` must mean that tab, never item 2024 of `notes`.

use crate::clipboard::read_address;
use serde_json::{Map, Value, json};

const PREFIX: &str = "copyq://tab/";
/// The template of one item (RFC 6570): `{+tab}` keeps the `/` between segments.
pub const ITEM_TEMPLATE: &str = "copyq://tab/{+tab}{?index}";

/// What a resource URI names: a tab, or one item of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The CopyQ tab's full name (`mcp/workspace/x`, `Notes`).
    pub tab: String,
    pub index: Option<i64>,
}

/// The URI of the CopyQ tab `full`.
pub fn tab_uri(full: &str) -> String {
    let segments: Vec<String> = full.split('/').map(encode).collect();
    format!("{PREFIX}{}", segments.join("/"))
}

fn encode(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for b in segment.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A segment decoded: `%XX` as a byte, other characters as they are (a client expanding the
/// template by RFC 6570's reserved expansion leaves `&` or `:` unencoded); `None` when a `%` is
/// not followed by two hex digits or the bytes are not UTF-8.
fn decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = segment.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The tab (and item) `uri` names; `None` for anything that is not a well-formed `copyq://tab/`
/// URI (another scheme, an empty name, a bad escape, a query other than `index=N`).
pub fn parse(uri: &str) -> Option<Target> {
    let rest = uri.strip_prefix(PREFIX)?;
    if rest.contains('#') {
        return None;
    }
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    let index = match query {
        None => None,
        Some(q) => Some(q.strip_prefix("index=")?.parse::<i64>().ok()?),
    };
    let segments = path.split('/').map(decode).collect::<Option<Vec<_>>>()?;
    let tab = segments.join("/");
    (!tab.is_empty()).then_some(Target { tab, index })
}

impl Target {
    /// The `mcp_read` arguments that read this tab or item: a managed tab by its path under
    /// `mcp/` (scope `mcp`), any other by its exact name (scope `external`), as a client would.
    pub fn read_args(&self, max_items: usize) -> Map<String, Value> {
        let (tab, scope) = read_address(&self.tab);
        let scope = scope.as_str();
        let args = match self.index {
            Some(index) => json!({"mode": "item", "tab": tab, "scope": scope, "index": index}),
            None => json!({"mode": "list", "tab": tab, "scope": scope, "max_items": max_items}),
        };
        match args {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_percent_encoded_and_slashes_kept() {
        assert_eq!(
            tab_uri("mcp/заметки/a&b c"),
            "copyq://tab/mcp/%D0%B7%D0%B0%D0%BC%D0%B5%D1%82%D0%BA%D0%B8/a%26b%20c"
        );
        assert_eq!(tab_uri("Notes"), "copyq://tab/Notes");
        assert_eq!(tab_uri("a?b#c%"), "copyq://tab/a%3Fb%23c%25");
    }

    #[test]
    fn every_uri_made_parses_back_to_its_tab() {
        for name in [
            "mcp/заметки/a&b c",
            "Notes",
            "a?b#c%",
            "mcp/notes/2024",
            "x/~y.z_-",
        ] {
            let target = parse(&tab_uri(name)).expect(name);
            assert_eq!(
                target,
                Target {
                    tab: name.into(),
                    index: None
                }
            );
        }
    }

    #[test]
    fn the_index_is_a_query_and_a_numeric_segment_stays_a_tab() {
        assert_eq!(
            parse("copyq://tab/mcp/notes/2024?index=3"),
            Some(Target {
                tab: "mcp/notes/2024".into(),
                index: Some(3)
            })
        );
        assert_eq!(
            parse("copyq://tab/mcp/a&b").map(|t| t.tab),
            Some("mcp/a&b".into())
        );
    }

    #[test]
    fn malformed_uris_name_nothing() {
        for uri in [
            "copyq://tab/",
            "copyq://item/x",
            "file:///etc/passwd",
            "copyq://tab/a%2",
            "copyq://tab/a%zz",
            "copyq://tab/%FF",
            "copyq://tab/a?index=x",
            "copyq://tab/a?i=1",
            "copyq://tab/a#frag",
        ] {
            assert_eq!(parse(uri), None, "{uri}");
        }
    }

    #[test]
    fn read_args_address_managed_tabs_under_mcp_and_others_as_external() {
        let managed = parse("copyq://tab/mcp/w/x").expect("uri").read_args(100);
        assert_eq!(
            Value::Object(managed),
            json!({"mode": "list", "tab": "w/x", "scope": "mcp", "max_items": 100})
        );
        let item = parse("copyq://tab/Notes?index=2")
            .expect("uri")
            .read_args(100);
        assert_eq!(
            Value::Object(item),
            json!({"mode": "item", "tab": "Notes", "scope": "external", "index": 2})
        );
    }
}
