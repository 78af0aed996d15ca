//! The code pages RTF names (`\ansicpg`, `\cpg`, a font's `\fcharset`) as `encoding_rs` knows
//! them. The DOS pages 437 and 850, which it has not, read as Windows-1252: right for ASCII, wrong
//! above it, but no producer of today writes them.

use encoding_rs::Encoding;

/// A Windows code page (`\ansicpg`, `\cpg`) as `encoding_rs` knows it.
pub(super) fn codepage(n: i64) -> Option<&'static Encoding> {
    let label = match n {
        437 | 850 | 1252 => "windows-1252",
        866 => "ibm866",
        874 => "windows-874",
        932 => "shift_jis",
        936 => "gbk",
        949 => "euc-kr",
        950 => "big5",
        1250..=1258 => return Encoding::for_label(format!("windows-{n}").as_bytes()),
        10000 => "macintosh",
        10007 => "x-mac-cyrillic",
        20866 => "koi8-r",
        21866 => "koi8-u",
        28592..=28605 => return Encoding::for_label(format!("iso-8859-{}", n - 28590).as_bytes()),
        65001 => "utf-8",
        _ => return None,
    };
    Encoding::for_label(label.as_bytes())
}

/// A font's `\fcharset` as the code page its bytes are in; `None` for the document's own.
pub(super) fn charset(n: i64) -> Option<&'static Encoding> {
    codepage(match n {
        0 => 1252,
        77 => 10000,
        128 => 932,
        129 => 949,
        134 => 936,
        136 => 950,
        161 => 1253,
        162 => 1254,
        163 => 1258,
        177 => 1255,
        178 => 1256,
        186 => 1257,
        204 => 1251,
        222 => 874,
        238 => 1250,
        _ => return None,
    })
}
