use proptest::prelude::*;

use super::text;

/// RTF written by real producers from `tests/fixtures/rtf/source.md` and `source.txt`.
fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/rtf/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn pandoc_rtf_reads_as_its_text() {
    // `pandoc -s -t rtf source.md` (pandoc 2.17, Debian 12): `\uN?` for every non-ASCII letter.
    assert_eq!(
        text(&fixture("pandoc.rtf")),
        "Release notes\n\
         Fixed two bugs & one leak.\n\
         Привет, мир! Ёлки-палки — «цитата».\n\
         •\tfirst item\n\
         •\tвторой пункт"
    );
}

#[test]
fn libreoffice_rtf_reads_as_its_text() {
    // `soffice --headless --convert-to rtf source.txt` (LibreOffice 7.4, Debian 12): a 2.5 KB
    // header of fonts, colours and styles, then `\uN\'hh` with a one-byte fallback.
    assert_eq!(
        text(&fixture("libreoffice-from-txt.rtf")),
        "Release notes\n\
         Fixed two bugs & one leak.\n\
         Привет, мир! Ёлки-палки — «цитата».\n\
         Tab\there; euro € done."
    );
}

#[test]
fn libreoffice_rtf_of_a_word_document_reads_as_its_text() {
    // `pandoc source.md -o doc.docx`, then `soffice --headless --convert-to rtf doc.docx`: 11 KB
    // of header, bookmarks, a list table and `\listtext` bullets (`\plain  \u8226`: the space
    // after the delimiter is the bullet's own).
    assert_eq!(
        text(&fixture("libreoffice-from-docx.rtf")),
        "Release notes\n\
         Fixed two bugs & one leak.\n\
         Привет, мир! Ёлки-палки — «цитата».\n \
         •\tfirst item\n \
         •\tвторой пункт"
    );
}

#[test]
fn code_page_bytes_decode_through_the_fonts_charset() {
    // As WordPad writes Cyrillic (Windows, Russian locale): `\ansicpg1251`, a font of charset
    // 204, and the letters as `\'hh` bytes of code page 1251, no `\uN`. A second font of
    // charset 0 (Windows-1252) holds a euro sign and an e acute.
    let rtf = "{\\rtf1\\ansi\\ansicpg1251\\deff0\\nouicompat\\deflang1049{\\fonttbl{\\f0\\fnil\\fcharset204 Calibri;}\
               {\\f1\\fnil\\fcharset0 Calibri;}}\r\n{\\*\\generator Riched20 10.0.19041}\\viewkind4\\uc1 \r\n\
               \\pard\\sa200\\sl276\\slmult1\\f0\\fs22\\lang9 \\'cf\\'f0\\'e8\\'e2\\'e5\\'f2, \\'ec\\'e8\\'f0!\\par\r\n\
               \\f1\\'80 caf\\'e9\\f0  \\'b8\\'eb\\'ea\\'e0\\par\r\n}\r\n";
    assert_eq!(text(rtf), "Привет, мир!\n€ café ёлка");
}

#[test]
fn the_document_code_page_serves_fonts_without_a_charset() {
    // `\fcharset1` (DEFAULT_CHARSET) and no `\fcharset` at all: the document's `\ansicpg`.
    let rtf = "{\\rtf1\\ansi\\ansicpg1251{\\fonttbl{\\f0\\fcharset1 A;}{\\f1 B;}}\\f0\\'e4\\'e0 \\f1\\'ed\\'e5\\par}";
    assert_eq!(text(rtf), "да не");
    // Shift_JIS, two bytes a character: 日本.
    let rtf = "{\\rtf1\\ansi\\ansicpg932{\\fonttbl{\\f0\\fcharset128 MS Mincho;}}\\f0\\'93\\'fa\\'96\\'7b}";
    assert_eq!(text(rtf), "日本");
}

#[test]
fn unicode_escapes_skip_their_fallbacks() {
    // `\uc2`: two fallback characters; `\uc0`: none (the space after `\u1099` ends the word);
    // negative N; a surrogate pair (U+1F600).
    let rtf = "{\\rtf1 {\\uc2\\u1076\\'e4\\'e0 x}{\\uc0\\u1099 y}\\u-4064?\\u55357?\\u56832?!}";
    assert_eq!(text(rtf), "д xыy\u{f020}😀!");
}

#[test]
fn destinations_and_hidden_text_are_not_shown() {
    let rtf = "{\\rtf1{\\fonttbl{\\f0 Arial;}}{\\colortbl;\\red0\\green0\\blue0;}{\\stylesheet{\\s0 Normal;}}\
               {\\info{\\title Secret title}{\\author Anna}}{\\header Page header\\par}\
               {\\*\\unknowndest hidden}{\\pict\\pngblip 89504e47}{\\v hidden}shown \
               {\\field{\\*\\fldinst HYPERLINK \"https://example.org\"}{\\fldrslt link}} \
               {\\bin3 {}}\\'41\\~B\\emdash C\\{\\}\\\\\\line D\\tab E}";
    assert_eq!(text(rtf), "shown link A\u{a0}B—C{}\\\nD\tE");
}

#[test]
fn a_table_reads_as_tab_separated_rows() {
    let rtf =
        "{\\rtf1\\trowd\\cellx1000\\cellx2000 a\\cell b\\cell\\row\\trowd c\\cell d\\cell\\row}";
    assert_eq!(text(rtf), "a\tb\nc\td");
}

#[test]
fn a_cut_document_reads_as_far_as_it_goes() {
    // A listing reads only the start of a long source.
    let full = fixture("libreoffice-from-txt.rtf");
    let cut = &full[..full.find("Fixed").unwrap_or(0) + 5];
    assert_eq!(text(cut), "Release notes\nFixed");
    assert_eq!(text(""), "");
    assert_eq!(text("plain words"), "plain words");
}

#[test]
fn deep_nesting_neither_recurses_nor_loses_the_text() {
    let deep = format!("{{\\rtf1 {}x{}}}", "{".repeat(100_000), "}".repeat(100_000));
    assert_eq!(text(&deep), "x");
    // Unbalanced closes are ignored.
    assert_eq!(text("}}}{\\rtf1 y}}}"), "y");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn random_rtf_never_panics_and_stays_bounded(
        s in proptest::string::string_regex(
            r"(\{|\}|\\|\\'[0-9a-fA-Fg]{0,2}|\\u-?[0-9]{0,6}|\\uc[0-9]|\\bin[0-9]{0,3}|\\\*|\\[a-z]{1,8}-?[0-9]{0,3} ?|[a-zа-я€ ?\r\n\t])*"
        ).expect("regex")
    ) {
        let out = text(&s);
        prop_assert!(out.len() <= 3 * s.len());
    }

    #[test]
    fn any_cut_of_a_real_document_reads(cut in 0usize..12258) {
        let full = fixture("libreoffice-from-docx.rtf");
        let mut at = cut.min(full.len());
        while !full.is_char_boundary(at) {
            at -= 1;
        }
        let out = text(&full[..at]);
        prop_assert!(out.len() <= 3 * at);
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let s = String::from_utf8_lossy(&bytes);
        let out = text(&s);
        prop_assert!(out.len() <= 3 * s.len());
    }
}

#[test]
fn both_producers_read_the_same_text_of_one_document() {
    // `secret.md` through pandoc, and through pandoc to .docx then LibreOffice (8.8 KB of header
    // before the first word): the key is a made-up one in the AWS format, for redaction tests.
    let expected = "Deploy notes\n\
                    The deploy key AKIAZ3MHQ7XWPLBV4KTN was rotated today.\n\
                    Ёлки-палки, ключ — «новый».";
    assert_eq!(text(&fixture("pandoc-secret.rtf")), expected);
    assert_eq!(text(&fixture("libreoffice-secret.rtf")), expected);
    // `picture-first.md` the same way: the Debian logo first, as PNG and as WMF, 53 KB in all.
    assert_eq!(text(&fixture("libreoffice-picture-first.rtf")), expected);
}
