//! The formats of a row as a read describes them ([`crate::backend::content`]): sizes and pixel
//! sizes from the bytes CopyQ sent, or, for a format CopyQ keeps in a file (8.0+), from that file's
//! size and first bytes, so a listing never fetches an image through CopyQ.

use std::io::Read;

use super::super::value::{Map, Value};
use super::{MIME_NOTE, MIME_PASSWORD_HINT, MIME_TAGS, MIME_TEXT, cut};
use crate::backend::content::{CONTENT_MIMES, Content, Format, HEAD_BYTES, RICH_MIMES, Rich};
use crate::backend::content::{pixels_of, rich_units};

/// The formats a read takes as text, tags, note and the password-manager hint: none describes
/// content, none is a rich source (the unit test below holds it).
const PLAIN_MIMES: [&str; 4] = [MIME_TEXT, MIME_NOTE, MIME_TAGS, MIME_PASSWORD_HINT];

/// What `map` holds beside text, tags and note; `preview` cuts a rich source as the CLI does.
pub fn content_of(map: &Map, preview: Option<usize>) -> Content {
    // A row of text, tags, note and hint alone (most rows) has nothing else to describe: no pass
    // over its formats for it (a search describes every row of every tab).
    if map
        .iter()
        .all(|(mime, _)| PLAIN_MIMES.contains(&mime.as_str()))
    {
        return Content::default();
    }
    let mut content = Content::default();
    for (mime, value) in map {
        if !CONTENT_MIMES.contains(&mime.as_str()) {
            continue;
        }
        if let Some(format) = describe(mime, value) {
            content.formats.push(format);
        }
    }
    content.sort();
    // Whether the text is not empty, without copying it (lossy UTF-8 of bytes is empty only
    // when they are).
    let has_text = map.iter().any(|(m, v)| {
        m == MIME_TEXT
            && match v {
                Value::String(s) => s.as_deref().is_some_and(|s| !s.is_empty()),
                Value::Bytes(b) => b.as_deref().is_some_and(|b| !b.is_empty()),
                _ => false,
            }
    });
    if !has_text {
        content.rich = RICH_MIMES.iter().find_map(|mime| {
            let source = map
                .iter()
                .find(|(m, _)| m == mime)
                .and_then(|(_, v)| v.to_text())?;
            let units = preview.and_then(|p| rich_units(mime, p));
            Some(Rich {
                mime: (*mime).to_owned(),
                source: cut(source, units),
            })
        });
    }
    content
}

fn describe(mime: &str, value: &Value) -> Option<Format> {
    let (bytes, pixels) = match value {
        Value::Bytes(b) => {
            let b = b.as_deref().unwrap_or_default();
            (b.len() as u64, pixels_of(mime, b))
        }
        Value::String(s) => (s.as_deref().unwrap_or_default().len() as u64, None),
        Value::DataFile(path) => {
            let file = std::fs::File::open(path).ok()?;
            let bytes = file.metadata().ok()?.len();
            let mut head = Vec::with_capacity(HEAD_BYTES);
            file.take(HEAD_BYTES as u64).read_to_end(&mut head).ok()?;
            (bytes, pixels_of(mime, &head))
        }
        _ => return None,
    };
    Some(Format {
        mime: mime.to_owned(),
        bytes,
        pixels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the shortcut for plain rows rests on: none of their formats is a content or a rich
    /// one, so the whole pass would find nothing in such a row either.
    #[test]
    fn plain_rows_describe_no_content() {
        for mime in PLAIN_MIMES {
            assert!(!CONTENT_MIMES.contains(&mime), "{mime}");
            assert!(!RICH_MIMES.contains(&mime), "{mime}");
        }
        let plain: Map = vec![
            (MIME_TEXT.into(), Value::bytes("")),
            (MIME_TAGS.into(), Value::bytes("a")),
            (MIME_NOTE.into(), Value::str("n")),
            (MIME_PASSWORD_HINT.into(), Value::bytes("secret")),
        ];
        assert_eq!(content_of(&plain, Some(3)), Content::default());
    }
}
