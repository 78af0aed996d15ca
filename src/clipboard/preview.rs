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
    let flat = flatten(text);
    if flat.chars().count() <= PREVIEW_CHARS {
        return flat;
    }
    let mut out: String = flat.chars().take(PREVIEW_CHARS - ELLIPSIS.len()).collect();
    out.push_str(ELLIPSIS);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
