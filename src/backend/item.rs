//! An item as CopyQ stores what the tools use of it, and CopyQ's tag encoding.

use serde::{Deserialize, Serialize};

use super::content::Content;

/// One CopyQ item reduced to its text, tags and note, and a description of what else it holds.
///
/// Two items are equal when their text, tags, note and secret mark are: those are what a write
/// changes and checks for conflicts, and `content` describes formats a write never touches (a
/// write's own read and its check may describe them differently, e.g. one read sees a `DataFile`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Item {
    pub text: String,
    pub tags: Vec<String>,
    pub note: String,
    /// Read only: CopyQ holds it with `x-kde-passwordManagerHint: secret` (a password manager's
    /// copy). Writes never set it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
    /// Read only: the owner pinned it in CopyQ (see [`super::protocol::MIME_PINNED`]), which
    /// then refuses to remove it. Not part of what a write checks or the audit log keeps.
    #[serde(skip)]
    pub pinned: bool,
    /// Read only: CopyQ holds the row as text, tags and note alone ([`ITEM_MIMES`]; no other
    /// format, not even a password manager's hint), so the item is the whole row: a delete's
    /// audit entry has nothing more to keep. Known from the socket backend's reads, which see
    /// every format of a row; `false` where not known.
    #[serde(skip)]
    pub bare: bool,
    /// Read only: the formats beside text, tags and note (images, HTML, files), described on reads.
    /// Never serialized: writes and the audit log carry what the tools write.
    #[serde(skip)]
    pub content: Content,
}

impl PartialEq for Item {
    fn eq(&self, other: &Self) -> bool {
        (&self.text, &self.tags, &self.note, self.secret)
            == (&other.text, &other.tags, &other.note, other.secret)
    }
}

impl Eq for Item {}

impl Item {
    pub fn new(text: &str, tags: &[&str], note: &str) -> Self {
        Self {
            text: text.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            note: note.into(),
            secret: false,
            pinned: false,
            bare: false,
            content: Content::default(),
        }
    }

    pub fn has_note(&self) -> bool {
        !self.note.is_empty()
    }
}

/// Every format of a row as CopyQ holds it, `(MIME type, bytes)`: what a delete's audit entry keeps
/// of an item holding more than text, tags and note (a screenshot), so a restore puts back the
/// item CopyQ had, not only its text.
pub type Whole = Vec<(String, Vec<u8>)>;

/// The formats an [`Item`] carries: a [`Whole`] holding others carries more than the item.
pub const ITEM_MIMES: [&str; 3] = [
    super::protocol::MIME_TEXT,
    super::protocol::MIME_TAGS,
    super::protocol::MIME_NOTE,
];

/// Whether `whole` holds a format an [`Item`] does not carry.
pub fn holds_more(whole: &Whole) -> bool {
    !item_formats_only(whole.iter().map(|(mime, _)| mime.as_str()))
}

/// Whether every one of a row's formats `mimes` is one an [`Item`] carries.
pub fn item_formats_only<'a>(mut mimes: impl Iterator<Item = &'a str>) -> bool {
    mimes.all(|mime| ITEM_MIMES.contains(&mime))
}

/// CopyQ stores tags as one comma-joined string; it drops empty parts and does not trim.
pub fn split_tags(raw: &str) -> Vec<String> {
    // Most rows have no tags: no iterator to set up for them (a search splits every row's).
    if raw.is_empty() {
        return Vec::new();
    }
    raw.split(',')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_like_copyq() {
        assert_eq!(split_tags("a,b,,c "), vec!["a", "b", "c "]);
        assert!(split_tags("").is_empty());
        assert_eq!(split_tags("x,y"), ["x", "y"]);
    }
}
