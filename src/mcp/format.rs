//! The reply format shared by the tools: pipe-separated `key:value` fields, quoted one-line previews,
//! `[tag,tag]` lists and the `+note` marker.

use crate::backend::Item;
use crate::clipboard::{PREVIEW_CHARS, TabRef, push_preview};

/// UTF-16 units to fetch for a preview: enough that a cut is still detectable after line breaks
/// collapse (`\r\n` is two units and one character; so is a surrogate pair).
pub const PREVIEW_UNITS: usize = PREVIEW_CHARS * 4;

/// Which parts of an item a listing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Show {
    pub text: bool,
    pub tags: bool,
    pub note: bool,
    /// `|v:<version>` after each item (opt-in `with_version`).
    pub version: bool,
}

pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(PREVIEW_CHARS * 4) + 2);
    push_quoted(&mut out, text);
    out
}

/// [`quoted`], appended to `out`.
pub fn push_quoted(out: &mut String, text: &str) {
    out.push('"');
    push_preview(out, text);
    out.push('"');
}

pub fn tag_list(tags: &[String]) -> String {
    let mut out = String::new();
    push_tag_list(&mut out, tags);
    out
}

/// [`tag_list`], appended to `out`.
pub fn push_tag_list(out: &mut String, tags: &[String]) {
    out.push('[');
    for (i, tag) in tags.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(tag);
    }
    out.push(']');
}

/// `|content:...` for an item holding more than plain text (see [`crate::clipboard::descriptor`]),
/// appended to `out`; nothing for one of plain text alone. It comes first, before the quoted preview, so no text can
/// pass for it: after the index a field starting `content:` is always the gateway's.
pub fn push_content_field(out: &mut String, item: &Item) {
    if let Some(d) = crate::clipboard::descriptor(&item.content) {
        out.push_str("|content:");
        out.push_str(&d);
    }
}

/// The `|`-joined fields of an item in a listing: what it holds beyond plain text, preview, tags,
/// then the note or its marker, and `version` when the listing shows versions.
#[cfg(test)]
pub fn item_fields(item: &Item, show: Show, version: Option<&str>) -> String {
    let mut out = String::new();
    push_item_fields(&mut out, item, show, version);
    out
}

/// [`item_fields`], appended to `out`: a tree or a listing writes all its lines into one string.
pub fn push_item_fields(out: &mut String, item: &Item, show: Show, version: Option<&str>) {
    push_content_field(out, item);
    if show.text {
        out.push('|');
        push_quoted(out, &item.text);
    }
    if show.tags {
        out.push('|');
        push_tag_list(out, &item.tags);
    }
    if item.has_note() {
        if show.note {
            out.push_str("|note:");
            push_preview(out, &item.note);
        } else {
            out.push_str("|+note");
        }
    }
    if let Some(v) = version.filter(|_| show.version) {
        out.push_str("|v:");
        out.push_str(v);
    }
}

/// `tab:<shown>|full_path:<full>` for a managed tab, `tab:<name>|scope:external` for an external one.
pub fn tab_fields(tab: &TabRef) -> String {
    if tab.external {
        format!("tab:{}|scope:external", tab.shown)
    } else {
        format!("tab:{}|full_path:{}", tab.shown, tab.full)
    }
}

/// `showing:a-b` for a window of `shown` rows starting at `skip`, or `showing:none` when empty.
pub fn showing(skip: usize, shown: usize) -> String {
    if shown == 0 {
        "showing:none".into()
    } else {
        format!("showing:{}-{}", skip, skip + shown - 1)
    }
}

/// A field value kept on one line, so a header cannot be split by what a client sent.
/// Echoed values are also cut, so a client cannot make a reply carry back megabytes it sent.
pub fn one_line(s: &str) -> String {
    const MAX_ECHO: usize = 200;
    let flat = crate::clipboard::flatten(s);
    if flat.chars().count() <= MAX_ECHO {
        return flat;
    }
    let mut cut: String = flat.chars().take(MAX_ECHO).collect();
    cut.push_str("...");
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rich_source_is_cut_for_the_units_of_a_preview() {
        assert_eq!(crate::backend::content::RICH_PREVIEW_MOST, PREVIEW_UNITS);
    }

    fn item(text: &str, tags: &[&str], note: &str) -> Item {
        Item::new(text, tags, note)
    }

    const ALL: Show = Show {
        text: true,
        tags: true,
        note: false,
        version: false,
    };

    #[test]
    fn fields_follow_the_reference() {
        let it = item("Текст\nэлемента", &["tag1", "tag2"], "n");
        assert_eq!(
            item_fields(&it, ALL, None),
            "|\"Текст элемента\"|[tag1,tag2]|+note"
        );
        assert_eq!(item_fields(&item("x", &[], ""), ALL, None), "|\"x\"|[]");
        let with_note = Show { note: true, ..ALL };
        assert_eq!(
            item_fields(&it, with_note, None),
            "|\"Текст элемента\"|[tag1,tag2]|note:n"
        );
        let bare = Show {
            text: false,
            tags: false,
            note: false,
            version: false,
        };
        assert_eq!(item_fields(&it, bare, None), "|+note");
    }

    #[test]
    fn headers() {
        let m = TabRef::from_full("mcp/info");
        assert_eq!(tab_fields(&m), "tab:info|full_path:mcp/info");
        let e = TabRef::from_full("&буфер обмена");
        assert_eq!(tab_fields(&e), "tab:&буфер обмена|scope:external");
        assert_eq!(showing(0, 20), "showing:0-19");
        assert_eq!(showing(20, 0), "showing:none");
    }
}
