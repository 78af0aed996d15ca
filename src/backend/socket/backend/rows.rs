//! A row's reply taken apart into an [`Item`]: by value, so that its text, tags and note move out
//! of the decoded reply instead of being copied (a search reads every row of every tab).

use super::super::value::{Map, Value};
use super::{MIME_NOTE, MIME_PASSWORD_HINT, MIME_TAGS, MIME_TEXT, content};
use crate::backend::{Item, split_tags};

/// A row's data from its reply, taken by value (anything but a map is an empty row).
pub(super) fn into_map(reply: Option<Value>) -> Map {
    match reply {
        Some(Value::Map(m)) => m,
        _ => Map::new(),
    }
}

/// Whether a row's data (every format of it, as a read gets them) is text, tags and note alone:
/// the row is its [`Item`] whole (see [`Item::bare`]).
pub(super) fn is_bare(map: &Map) -> bool {
    crate::backend::item_formats_only(map.iter().map(|(mime, _)| mime.as_str()))
}

/// A row as a read shows it: text, tags and note, and what else it holds. Taken by value: its
/// text, tags and note move out of the reply (no copy of valid UTF-8); a whole-tab read of 10,000
/// rows used to copy each twice (the map, then its texts).
pub(super) fn item_from(mut map: Map, preview: Option<usize>) -> Item {
    let content = content::content_of(&map, preview);
    let mut item = Item {
        bare: is_bare(&map),
        content,
        ..Item::default()
    };
    let mut tags = String::new();
    let mut hint = String::new();
    // Reversed, so that the first of a repeated key wins, as `item_of`'s `map_get` takes it.
    for (mime, value) in map.iter_mut().rev() {
        let slot = match mime.as_str() {
            MIME_TEXT => &mut item.text,
            MIME_NOTE => &mut item.note,
            MIME_TAGS => &mut tags,
            MIME_PASSWORD_HINT => &mut hint,
            crate::backend::protocol::MIME_PINNED => {
                item.pinned = true;
                continue;
            }
            _ => continue,
        };
        *slot = std::mem::replace(value, Value::Invalid)
            .into_text()
            .unwrap_or_default();
    }
    item.tags = split_tags(&tags);
    item.secret = hint == "secret";
    item
}

#[cfg(test)]
mod tests {
    use super::super::item_of;
    use super::*;

    /// Taking a row apart by value gives the item that reading it by reference gave.
    #[test]
    fn a_row_taken_by_value_is_the_row_read_by_reference() {
        let rows: Vec<Map> = vec![
            vec![
                (MIME_TEXT.into(), Value::bytes("plain text")),
                (MIME_TAGS.into(), Value::bytes("a,,b ")),
                (MIME_NOTE.into(), Value::str("a note")),
            ],
            vec![(MIME_TEXT.into(), Value::Bytes(Some(vec![b'x', 0xff, b'y'])))],
            vec![
                (MIME_TEXT.into(), Value::str("first")),
                (MIME_TEXT.into(), Value::str("second")),
            ],
            vec![
                ("text/html".into(), Value::bytes("<b>bold</b>")),
                (MIME_PASSWORD_HINT.into(), Value::bytes("secret")),
                (MIME_NOTE.into(), Value::Int(3)),
            ],
            vec![(MIME_TEXT.into(), Value::Bytes(None))],
            vec![
                (MIME_TEXT.into(), Value::str("a caption")),
                ("text/uri-list".into(), Value::bytes("file:///tmp/a.png")),
                (MIME_TAGS.into(), Value::bytes("shot")),
            ],
            vec![
                (MIME_TEXT.into(), Value::str("kept on top")),
                (
                    crate::backend::protocol::MIME_PINNED.into(),
                    Value::bytes(""),
                ),
            ],
            Map::new(),
        ];
        for map in rows {
            for preview in [None, Some(3)] {
                let by_ref = item_of(&map);
                let by_value = item_from(map.clone(), preview);
                assert_eq!(by_value, by_ref, "{map:?}");
                assert_eq!(by_value.pinned, by_ref.pinned, "{map:?}");
                assert_eq!(by_value.content, content::content_of(&map, preview));
            }
        }
    }
}
