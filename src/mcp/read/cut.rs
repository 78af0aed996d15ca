//! Whether a text CopyQ cut short can be masked and previewed as it is, or must be read again
//! whole first: masking first and cutting after is the rule, and a second read is what it costs.

use crate::clipboard::PREVIEW_CHARS;
use crate::privacy::Mask;

/// Whether `text`, which CopyQ may have cut and in which a redactor put `masks`, must be read
/// again whole before its preview is cut from it: when the preview of the masked text draws on
/// anything past the part of the raw text an unmasked preview reads (its first
/// [`PREVIEW_CHARS`] + 1 characters, line breaks collapsed). A mask that shortens the text (a
/// long key) pulls later text into the preview, possibly a secret the cut split; a mask that
/// reaches past that part may end elsewhere in the whole text. Masks within it that leave the
/// preview as long or longer (a password, a short token) change nothing the cut could: the
/// preview is then as sure as an unmasked one, and the page is not read a second time.
pub(super) fn read_whole(masks: &[Mask], text: &str) -> bool {
    if masks.is_empty() {
        return false;
    }
    let need = PREVIEW_CHARS + 1;
    let Some(end) = flat_end(text, need) else {
        return true;
    };
    let (mut shown, mut at) = (0, 0);
    for m in masks.iter().take_while(|m| m.raw.start < end) {
        shown += flat_len(&text[at..m.raw.start]);
        if shown >= need {
            return false;
        }
        if m.raw.end > end {
            return true;
        }
        // `[redacted:KIND]`: one character a byte (kinds are ASCII), no line break.
        shown += m.shown.len();
        at = m.raw.end;
    }
    shown + flat_len(&text[at..end]) < need
}

/// Characters of `s` as [`crate::clipboard::flatten`] leaves them (`\r\n` is one).
fn flat_len(s: &str) -> usize {
    s.chars().count() - s.matches("\r\n").count()
}

/// The byte where `s`'s first `n` characters end, as flattened; `None` if it has fewer.
fn flat_end(s: &str, n: usize) -> Option<usize> {
    let mut count = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let mut end = i + c.len_utf8();
        if c == '\r' && chars.next_if(|&(_, n)| n == '\n').is_some() {
            end += 1;
        }
        count += 1;
        if count == n {
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clipboard::preview;
    use crate::privacy::Redactor;

    /// [`read_whole`] with the masks `r` puts in `text`.
    fn whole(r: &Redactor, text: &str) -> bool {
        read_whole(&r.masks_remembered(text), text)
    }

    fn r() -> Redactor {
        Redactor::new(&[]).expect("rules")
    }

    /// `text` cut to 320 UTF-16 units, as a listing reads it.
    fn cut(text: &str) -> String {
        text.chars().take(320).collect()
    }

    #[test]
    fn flattened_lengths_count_crlf_once() {
        assert_eq!(flat_len("a\r\nb\rc\n"), 6);
        assert_eq!(flat_end("ab\r\ncd", 3), Some(4));
        assert_eq!(flat_end("ab", 3), None);
        assert_eq!(flat_end("яя", 2), Some(4));
    }

    #[test]
    fn a_mask_within_the_preview_that_does_not_shorten_it_needs_no_second_read() {
        let r = r();
        let prose = "and then some words about the deploy that follows it. ".repeat(8);
        let text = format!("PGPASSWORD=Barsik1987 psql -h db -U app\n{prose}");
        let c = cut(&text);
        assert!(!whole(&r, &c));
        // The preview is what masking the whole text and cutting it after gives.
        assert_eq!(preview(&r.redact(&c)), preview(&r.redact(&text)));
        assert!(preview(&r.redact(&c)).starts_with("PGPASSWORD=[redacted:"));
        // Nothing masked: nothing to read again.
        assert!(!whole(&r, &cut(&prose)));
    }

    #[test]
    fn a_mask_that_pulls_later_text_into_the_preview_needs_the_whole_text() {
        let r = r();
        // A private key block shortens the text to its mask: the rest of the preview comes from
        // the end of the cut, where a key sits split in two.
        let body: String = "MIIEpAIBAAKCAQEAx4Gd".chars().cycle().take(243).collect();
        let block =
            format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----");
        let text = format!("{block} key AKIAQYLPMN5HTIQR7WDG and more");
        let c = cut(&text);
        assert!(!c.contains("AKIAQYLPMN5HTIQR7WDG") && c.contains("AKIAQ"));
        assert!(whole(&r, &c));
        // A mask that starts within the part an unmasked preview reads and ends past it.
        let header = format!(
            "{}Authorization: Bearer {}",
            "w ".repeat(20),
            "a1".repeat(200)
        );
        assert!(whole(&r, &cut(&header)));
        // One that starts past it changes nothing in the preview.
        let later = format!(
            "{}Authorization: Bearer {}",
            "w ".repeat(50),
            "a1".repeat(200)
        );
        assert!(!whole(&r, &cut(&later)));
        assert_eq!(preview(&r.redact(&cut(&later))), preview(&later));
    }

    /// A listing's page is read once when its cut items' masks leave their previews as sure as
    /// unmasked ones, and again whole when one does not.
    #[test]
    fn a_page_is_read_again_only_for_a_preview_a_mask_made_unsure() {
        use crate::backend::{Backend, Item, MemoryBackend, TabPage};
        use crate::privacy::{Privacy, Redact};
        let tools = crate::mcp::ToolState::new(
            Backend::Memory(MemoryBackend::with_tabs(Vec::new())),
            crate::clipboard::Roots::default(),
        )
        .with_privacy(Privacy::new(Redact::All, &[]).expect("rules"));
        let prose = "and then some words about the deploy that follows it. ".repeat(8);
        let page = |texts: &[String]| TabPage {
            name: "mcp/t".into(),
            total: texts.len(),
            items: texts.iter().map(|t| Item::new(&cut(t), &[], "")).collect(),
        };
        let budget = Some(crate::mcp::format::PREVIEW_UNITS);
        let password = format!("PGPASSWORD=Barsik1987 psql -h db -U app\n{prose}");
        let settled = page(&[password.clone(), prose.clone()]);
        let masked = super::super::redact::mask_pages(&tools, vec![settled], budget, false);
        assert!(masked[0].unsure.is_empty());
        let key = format!(
            "{}Authorization: Bearer {}",
            "w ".repeat(20),
            "a1".repeat(200)
        );
        let unsure = page(&[password, key]);
        let unsure =
            &super::super::redact::mask_pages(&tools, vec![unsure], budget, false)[0].unsure;
        assert_eq!(unsure.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1]);
    }
}
