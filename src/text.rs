//! Text a person reads that a stranger wrote (app names, tab paths): characters that hide or
//! reorder what is shown are refused rather than displayed, so that a name cannot pass for
//! another one (`U+202E` turns `abc` around; `U+200B` hides a difference).

/// The first character of `s` that hides or reorders what is shown: see [`is_deceptive`], plus a
/// combining mark on its own (at the start, or after a space or another such character: it
/// overlays whatever is shown before it), and a variation selector after anything but an emoji
/// (`Claude\u{FE0F}` shows as "Claude"; `❤\u{FE0F}` is the emoji's own form).
pub fn deceptive_char(s: &str) -> Option<char> {
    let mut before: Option<char> = None;
    for c in s.chars() {
        let base = before.filter(|b| !b.is_whitespace());
        let alone = is_mark(c) && base.is_none();
        let selector = is_variation_selector(c) && !base.is_some_and(is_emoji);
        if alone || (is_deceptive(c) && !is_variation_selector(c)) || selector {
            return Some(c);
        }
        before = Some(c);
    }
    None
}

/// A character that hides or reorders text wherever it stands, by Unicode property rather than
/// a list: controls (Cc), format characters (Cf: bidi controls, zero-width ones, U+1BCA1...),
/// line and paragraph separators, default-ignorable code points (fillers, variation selectors,
/// tags), and the blanks that are none of these (U+2800 braille blank).
pub fn is_deceptive(c: char) -> bool {
    use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
    use icu_properties::{CodePointMapData, CodePointSetData};
    let category = CodePointMapData::<GeneralCategory>::new().get(c);
    matches!(
        category,
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || c == '\u{2800}'
}

fn is_mark(c: char) -> bool {
    use icu_properties::CodePointMapData;
    use icu_properties::props::GeneralCategory;
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
    )
}

fn is_variation_selector(c: char) -> bool {
    icu_properties::CodePointSetData::new::<icu_properties::props::VariationSelector>().contains(c)
}

fn is_emoji(c: char) -> bool {
    icu_properties::CodePointSetData::new::<icu_properties::props::Emoji>().contains(c)
}

/// `U+XXXX`, for messages that name a character without showing it.
pub fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hiding_and_reordering_characters_are_found() {
        for bad in [
            "abc\u{202E}def",
            "a\u{200B}b",
            "a\u{2066}b",
            "x\u{FEFF}",
            "tab\nname",
            "a\u{7}",
            "\u{E0041}",
            "a\u{00AD}b",
            "Claude\u{FE0F}",
            "Claude\u{FE00}",
            "Claude\u{E0100}",
            "\u{20D2}Claude",
            "Claude \u{0336}",
            "a\u{1BCA1}b",
            "a\u{2800}b",
            "a\u{3164}b",
            "a\u{115F}b",
            "a\u{180E}b",
            "a\u{2061}b",
            "a\u{FFF9}b",
            "a\u{13430}b",
            "a\u{1D173}b",
        ] {
            assert!(deceptive_char(bad).is_some(), "{bad:?}");
        }
        for good in [
            "Claude",
            "заметки",
            "Проект Alpha",
            "日本語",
            "emoji 🎉",
            "a-b_c.d",
            "❤\u{FE0F} notes",
            "café",
            "Cafe\u{0301}",
            "हिन्दी",
            "ที่นี่",
        ] {
            assert_eq!(deceptive_char(good), None, "{good}");
        }
        assert_eq!(code_point('\u{202E}'), "U+202E");
    }
}
