//! How item text is previewed in listings.

/// Longest preview, in characters, including the `...` that marks a cut.
pub const PREVIEW_CHARS: usize = 80;
const ELLIPSIS: &str = "...";

/// Every line break (`\r\n`, `\n`, `\r`, and the Unicode ones a reader may also break on:
/// vertical tab, form feed, NEL, line and paragraph separators) becomes one space.
pub fn flatten(text: &str) -> String {
    text.replace("\r\n", " ").replace(
        [
            '\n', '\r', '\u{b}', '\u{c}', '\u{85}', '\u{2028}', '\u{2029}',
        ],
        " ",
    )
}

/// At most [`PREVIEW_CHARS`] characters on one line: line breaks become spaces, a cut ends in `...`.
pub fn preview(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(PREVIEW_CHARS * 4));
    push_preview(&mut out, text);
    out
}

/// [`preview`] of `text`, appended to `out` in one pass: a listing of 10,000 items made three
/// strings an item this way (line breaks, each break, the cut), a fifth of a tree's work.
pub fn push_preview(out: &mut String, text: &str) {
    // Most texts start with a line of ASCII: then a character is a byte, and the preview a slice.
    let head = &text.as_bytes()[..text.len().min(PREVIEW_CHARS + 1)];
    if head
        .iter()
        .all(|&b| b.is_ascii() && !matches!(b, b'\n' | b'\r' | 0x0b | 0x0c))
    {
        match text.get(..PREVIEW_CHARS - ELLIPSIS.len()) {
            Some(kept) if text.len() > PREVIEW_CHARS => {
                out.push_str(kept);
                out.push_str(ELLIPSIS);
            }
            _ => out.push_str(text),
        }
        return;
    }
    let start = out.len();
    // Where the text is cut when it proves longer than a preview: after this many characters.
    let keep = PREVIEW_CHARS - ELLIPSIS.len();
    let mut cut = start;
    let mut shown = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if shown == PREVIEW_CHARS {
            out.truncate(cut);
            out.push_str(ELLIPSIS);
            return;
        }
        if shown == keep {
            cut = out.len();
        }
        let c = match c {
            '\r' => {
                chars.next_if_eq(&'\n');
                ' '
            }
            '\n' | '\u{b}' | '\u{c}' | '\u{85}' | '\u{2028}' | '\u{2029}' => ' ',
            c => c,
        };
        out.push(c);
        shown += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What [`preview`] was before it became one pass: flatten, count, cut.
    fn two_passes(text: &str) -> String {
        let flat = flatten(text);
        if flat.chars().count() <= PREVIEW_CHARS {
            return flat;
        }
        let mut out: String = flat.chars().take(PREVIEW_CHARS - ELLIPSIS.len()).collect();
        out.push_str(ELLIPSIS);
        out
    }

    proptest::proptest! {
        #[test]
        fn one_pass_previews_as_two_did(
            text in "[a\\r\\n\\u{b}\\u{85}\\u{2028}я😀 .]{0,200}",
            before in "[x\\r]{0,3}",
        ) {
            proptest::prop_assert_eq!(preview(&text), two_passes(&text));
            let mut out = before.clone();
            push_preview(&mut out, &text);
            proptest::prop_assert_eq!(out, before + &two_passes(&text));
        }

        /// Texts around the length of a preview, mostly ASCII (the one-slice way).
        #[test]
        fn one_pass_previews_a_line_of_ascii_as_two_did(
            text in "[a .]{70,90}[\\r\\nя\\u{b}]?[a\\n]{0,5}",
        ) {
            proptest::prop_assert_eq!(preview(&text), two_passes(&text));
        }
    }

    #[test]
    fn a_preview_cuts_at_the_first_character_past_80() {
        for (text, want) in [
            ("a".repeat(80), "a".repeat(80)),
            ("a".repeat(81), format!("{}...", "a".repeat(77))),
            (
                format!("{}\r\n", "a".repeat(79)),
                format!("{} ", "a".repeat(79)),
            ),
            (
                format!("{}\r\n\r", "a".repeat(79)),
                format!("{}...", "a".repeat(77)),
            ),
        ] {
            assert_eq!(preview(&text), want);
            assert_eq!(preview(&text), two_passes(&text));
        }
    }

    #[test]
    fn preview_flattens_lines() {
        assert_eq!(preview("a\nb\r\nc\rd"), "a b c d");
        assert_eq!(preview("a\u{2028}b\u{2029}c\u{85}d"), "a b c d");
    }

    #[test]
    fn preview_keeps_exactly_80() {
        let s = "я".repeat(80);
        assert_eq!(preview(&s), s);
    }

    #[test]
    fn preview_cuts_at_80_with_ellipsis() {
        let s = "😀".repeat(81);
        let p = preview(&s);
        assert_eq!(p.chars().count(), 80);
        assert!(p.ends_with("😀..."));
    }
}
