//! Text a person reads that a stranger wrote (app names, tab paths): characters that hide or
//! reorder what is shown are refused rather than displayed, so that a name cannot pass for
//! another one (`U+202E` turns `abc` around; `U+200B` hides a difference).

/// The first character of `s` that is a control, invisible or direction-changing character.
pub fn deceptive_char(s: &str) -> Option<char> {
    s.chars().find(|&c| is_deceptive(c))
}

pub fn is_deceptive(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{00AD}'                      // soft hyphen
            | '\u{034F}'                    // combining grapheme joiner
            | '\u{061C}'                    // Arabic letter mark
            | '\u{115F}' | '\u{1160}'       // Hangul fillers
            | '\u{17B4}' | '\u{17B5}'
            | '\u{180B}'..='\u{180F}'       // Mongolian variation selectors, vowel separator
            | '\u{200B}'..='\u{200F}'       // zero-width space/joiners, LRM, RLM
            | '\u{2028}'..='\u{202E}'       // line/paragraph separators, bidi embeddings/overrides
            | '\u{2060}'..='\u{206F}'       // word joiner, invisible operators, bidi isolates
            | '\u{3164}' | '\u{FFA0}'       // Hangul fillers
            | '\u{FEFF}'                    // zero-width no-break space
            | '\u{FFF9}'..='\u{FFFB}'       // interlinear annotations
            | '\u{1D173}'..='\u{1D17A}'     // musical formatting
            | '\u{E0000}'..='\u{E007F}' // tags
        )
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
        ] {
            assert_eq!(deceptive_char(good), None, "{good}");
        }
        assert_eq!(code_point('\u{202E}'), "U+202E");
    }
}
