//! The text a person reads in an RTF document (what word processors, WordPad and browsers put on
//! the clipboard as `text/rtf`): paragraphs, line breaks and tabs kept, every formatting word,
//! font and colour table, picture, header and hidden group dropped.
//!
//! Written here rather than taken from a crate because the one there is (`rtf-parser`) reads
//! `\'hh` as Latin-1 whatever the document's code page, which turns a Cyrillic WordPad copy into
//! mojibake. Here `\'hh` (and raw 8-bit bytes) decode through the current font's `\fcharset` or
//! `\cpg`, else the document's `\ansicpg`, with `encoding_rs`; `\uN` is Unicode, followed by `\ucN`
//! fallback characters that are skipped. Hostile input cannot make it panic, recurse or grow:
//! it walks the bytes once, keeps at most [`MAX_DEPTH`] group states, and writes at most three
//! bytes of text per byte read.

use std::collections::HashMap;

use encoding_rs::{Encoding, WINDOWS_1252};

use codepage::{charset, codepage};

mod codepage;

/// Groups nested deeper than this share their parent's state (real documents nest a few dozen).
const MAX_DEPTH: usize = 256;

/// Destinations whose content is not text a person reads.
const SKIPPED: [&str; 31] = [
    "author",
    "bkmkend",
    "bkmkstart",
    "buptim",
    "colortbl",
    "comment",
    "creatim",
    "doccomm",
    "fldinst",
    "footer",
    "footerf",
    "footerl",
    "footerr",
    "footnote",
    "header",
    "headerf",
    "headerl",
    "headerr",
    "info",
    "keywords",
    "listtable",
    "listoverridetable",
    "nonshppict",
    "object",
    "operator",
    "pict",
    "printim",
    "revtim",
    "stylesheet",
    "subject",
    "title",
];

/// The state a group inherits from its parent and `}` restores.
#[derive(Clone, Copy)]
struct Group {
    /// Inside a destination whose text is not shown.
    skip: bool,
    /// Inside the font table: `\fN` defines a font there.
    font_table: bool,
    /// Hidden text (`\v`).
    hidden: bool,
    /// Fallback characters after `\uN`.
    uc: u32,
    font: Option<i32>,
}

struct Parser<'a> {
    src: &'a str,
    at: usize,
    out: String,
    group: Group,
    stack: Vec<Group>,
    /// Groups opened past [`MAX_DEPTH`], closed before the stack is popped again.
    overflow: usize,
    /// The document's code page (`\ansicpg`, `\mac`, `\pc`).
    codepage: &'static Encoding,
    default_font: Option<i32>,
    /// Font number to its encoding, from the font table.
    fonts: HashMap<i32, &'static Encoding>,
    /// The font the table is defining.
    defining: Option<i32>,
    /// `\'hh` bytes not yet decoded (a double-byte code page needs both bytes of a character).
    bytes: Vec<u8>,
    /// Fallback characters still to skip after a `\uN`.
    to_skip: u32,
    /// A `\uN` high surrogate waiting for its low half.
    high: Option<u16>,
    /// `{\*` was read: the group is skipped unless it names a destination that is shown.
    starred: bool,
    /// Right after `{`: the next control word may name a destination.
    opened: bool,
}

/// The readable text of `rtf`; empty for something that is not RTF text at all.
pub fn text(rtf: &str) -> String {
    let mut p = Parser {
        src: rtf,
        at: 0,
        out: String::new(),
        group: Group {
            skip: false,
            font_table: false,
            hidden: false,
            uc: 1,
            font: None,
        },
        stack: Vec::new(),
        overflow: 0,
        codepage: WINDOWS_1252,
        default_font: None,
        fonts: HashMap::new(),
        defining: None,
        bytes: Vec::new(),
        to_skip: 0,
        high: None,
        starred: false,
        opened: false,
    };
    p.run();
    p.flush();
    let lines: Vec<&str> = p.out.lines().map(str::trim_end).collect();
    lines.join("\n").trim_matches('\n').to_owned()
}

impl Parser<'_> {
    fn run(&mut self) {
        let src = self.src.as_bytes();
        while let Some(&b) = src.get(self.at) {
            self.at += 1;
            match b {
                b'{' => self.open(),
                b'}' => self.close(),
                b'\\' => self.control(),
                b'\r' | b'\n' => {}
                _ if self.to_skip > 0 => self.to_skip -= 1,
                b'\t' => self.push('\t'),
                0..=0x1f => {}
                0x20..=0x7f => self.push(char::from(b)),
                _ => self.non_ascii(),
            }
        }
    }

    fn open(&mut self) {
        self.flush();
        self.to_skip = 0;
        if self.stack.len() >= MAX_DEPTH {
            self.overflow += 1;
        } else {
            self.stack.push(self.group);
        }
        self.opened = true;
        self.starred = false;
    }

    fn close(&mut self) {
        self.flush();
        self.to_skip = 0;
        if self.group.font_table {
            self.defining = None;
        }
        if self.overflow > 0 {
            self.overflow -= 1;
        } else if let Some(g) = self.stack.pop() {
            self.group = g;
        }
        self.opened = false;
        self.starred = false;
    }

    /// A character of text stored as UTF-8 in the source (a producer that wrote raw 8-bit text,
    /// read by CopyQ as UTF-8): kept as it is.
    fn non_ascii(&mut self) {
        let start = self.at - 1;
        let c = self.src.get(start..).and_then(|s| s.chars().next());
        if let Some(c) = c {
            self.at = start + c.len_utf8();
            if self.to_skip > 0 {
                self.to_skip -= 1;
            } else {
                self.push(c);
            }
        }
    }

    /// After `\`: a control word (letters, an optional signed number, an optional space) or a
    /// control symbol (one character).
    fn control(&mut self) {
        let src = self.src.as_bytes();
        let start = self.at;
        while src.get(self.at).is_some_and(u8::is_ascii_alphabetic) && self.at - start < 32 {
            self.at += 1;
        }
        if self.at == start {
            return self.symbol();
        }
        let word = &self.src[start..self.at];
        let num_start = self.at;
        if src.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        while src.get(self.at).is_some_and(u8::is_ascii_digit) && self.at - num_start < 11 {
            self.at += 1;
        }
        let param = self.src[num_start..self.at].parse::<i64>().ok();
        if src.get(self.at) == Some(&b' ') {
            self.at += 1;
        }
        self.word(word, param);
    }

    fn symbol(&mut self) {
        let Some(&c) = self.src.as_bytes().get(self.at) else {
            return;
        };
        self.at += 1;
        if c == b'*' {
            self.starred = true;
            return;
        }
        self.opened = false;
        if c == b'\'' {
            let hex = self.src.get(self.at..self.at + 2);
            let hex = hex.filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                self.at += 2;
                if self.to_skip > 0 {
                    self.to_skip -= 1;
                } else if self.shown() {
                    self.bytes.push(b);
                }
            }
            return;
        }
        if self.to_skip > 0 {
            self.to_skip -= 1;
            return;
        }
        match c {
            b'\\' | b'{' | b'}' => self.push(char::from(c)),
            b'~' => self.push('\u{a0}'),
            b'_' => self.push('\u{2011}'),
            b'\r' | b'\n' => self.push('\n'),
            _ => {}
        }
    }

    fn word(&mut self, word: &str, param: Option<i64>) {
        // Bytes read so far are in the font before this word changes it.
        self.flush();
        let destination = std::mem::take(&mut self.opened);
        if destination {
            let starred = std::mem::take(&mut self.starred);
            if word == "fonttbl" {
                self.group.font_table = true;
                return;
            }
            if starred || SKIPPED.contains(&word) {
                self.group.skip = true;
            }
        }
        if word == "bin" {
            // Binary data follows, as many bytes as the parameter says.
            let n = usize::try_from(param.unwrap_or(0)).unwrap_or(0);
            self.at = self.at.saturating_add(n).min(self.src.len());
            while !self.src.is_char_boundary(self.at) {
                self.at += 1;
            }
            return;
        }
        if self.to_skip > 0 {
            self.to_skip -= 1;
            return;
        }
        let n = param.unwrap_or(1);
        match word {
            "u" => self.unicode(param),
            "uc" => self.group.uc = u32::try_from(n).unwrap_or(1).min(8),
            "ansicpg" => self.codepage = codepage(n).unwrap_or(self.codepage),
            "mac" => self.codepage = encoding_rs::MACINTOSH,
            "deff" => self.default_font = param.and_then(|n| i32::try_from(n).ok()),
            "f" => self.font(param),
            "fcharset" | "cpg" => self.font_encoding(word, n),
            "plain" => {
                self.group.font = None;
                self.group.hidden = false;
            }
            "v" => self.group.hidden = n != 0,
            "par" | "line" | "sect" | "page" | "row" | "nestrow" => self.push('\n'),
            "tab" | "cell" | "nestcell" => self.push('\t'),
            _ => self.push_named(word),
        }
    }

    fn push_named(&mut self, word: &str) {
        let c = match word {
            "emdash" => '\u{2014}',
            "endash" => '\u{2013}',
            "bullet" => '\u{2022}',
            "lquote" => '\u{2018}',
            "rquote" => '\u{2019}',
            "ldblquote" => '\u{201c}',
            "rdblquote" => '\u{201d}',
            "emspace" | "enspace" | "qmspace" => ' ',
            _ => return,
        };
        self.push(c);
    }

    fn font(&mut self, param: Option<i64>) {
        let id = param.and_then(|n| i32::try_from(n).ok());
        if self.group.font_table {
            self.defining = id;
        } else {
            self.group.font = id;
        }
    }

    fn font_encoding(&mut self, word: &str, n: i64) {
        let Some(id) = self.defining.filter(|_| self.group.font_table) else {
            return;
        };
        let encoding = if word == "cpg" {
            codepage(n)
        } else {
            charset(n)
        };
        if let Some(e) = encoding {
            self.fonts.insert(id, e);
        } else if word == "fcharset" {
            // The document's own code page (DEFAULT_CHARSET, or one encoding_rs has not).
            self.fonts.remove(&id);
        }
    }

    fn unicode(&mut self, param: Option<i64>) {
        let Some(n) = param else { return };
        // A signed 16-bit number: -4064 is U+F020.
        let unit = u16::try_from(n.rem_euclid(0x1_0000)).unwrap_or(0xfffd);
        match (self.high.take(), unit) {
            (_, 0xd800..=0xdbff) => self.high = Some(unit),
            (Some(high), 0xdc00..=0xdfff) => {
                let c = char::decode_utf16([high, unit]).next().and_then(Result::ok);
                self.push(c.unwrap_or('\u{fffd}'));
            }
            (_, unit) => self.push(char::from_u32(u32::from(unit)).unwrap_or('\u{fffd}')),
        }
        self.to_skip = self.group.uc;
    }

    fn shown(&self) -> bool {
        !self.group.skip && !self.group.font_table && !self.group.hidden
    }

    fn push(&mut self, c: char) {
        self.opened = false;
        if self.shown() {
            self.flush();
            self.out.push(c);
        }
    }

    /// Decode the pending `\'hh` bytes with the current font's encoding.
    fn flush(&mut self) {
        if self.bytes.is_empty() {
            return;
        }
        let font = self.group.font.or(self.default_font);
        let encoding = font
            .and_then(|f| self.fonts.get(&f).copied())
            .unwrap_or(self.codepage);
        let (text, _) = encoding.decode_without_bom_handling(&self.bytes);
        self.out.push_str(&text);
        self.bytes.clear();
    }
}

#[cfg(test)]
#[path = "rtf_tests.rs"]
mod tests;
