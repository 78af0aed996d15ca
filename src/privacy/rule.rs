//! One builtin rule: a byte regex (ASCII classes, as gitleaks' RE2 ones), the kind it reports,
//! its merge rank (lower wins), the judge that turns a match into a span (or refuses it), and
//! the gate that must open before the regex runs at all: words that every match contains, or a
//! shape (a long run of token characters, of digits, an IBAN's start) that every match has.
//! The gates cost one Aho-Corasick pass and one byte loop per text, with nothing built lazily,
//! so a text with no candidate costs the same on the first request as on the thousandth.

use super::automata::Captures;

/// `(captures, text) -> the secret's byte span`, or `None` when the match is not a secret.
pub type Judge = fn(&Captures, &str) -> Option<(usize, usize)>;

/// What a text must hold for a rule to run on it.
#[derive(Clone, Copy)]
pub enum Gate {
    /// One of these words, ASCII case-insensitive (non-ASCII ones byte for byte).
    Words(&'static [&'static str]),
    /// A run of at least this many characters of `[A-Za-z0-9+/_-]`.
    TokenRun(usize),
    /// At least this many digits with single spaces or dashes between.
    DigitRun(usize),
    /// Two capital letters and two digits, as an IBAN starts.
    IbanStart,
}

pub struct Rule {
    pub pattern: &'static str,
    pub kind: &'static str,
    pub rank: u8,
    pub judge: Judge,
    pub gate: Gate,
    /// Digits every match holds in a row (a one-time code's): words like `code` or `use` are
    /// common, a run of digits beside them is not.
    pub digits: usize,
}

impl Rule {
    pub const fn new(
        pattern: &'static str,
        kind: &'static str,
        rank: u8,
        judge: Judge,
        gate: Gate,
    ) -> Self {
        Self {
            pattern,
            kind,
            rank,
            judge,
            gate,
            digits: 0,
        }
    }

    /// This rule, run only on texts with a run of at least `n` digits too.
    pub const fn with_digits(self, n: usize) -> Self {
        Self { digits: n, ..self }
    }
}

/// The shapes a text has, from one pass over its bytes.
#[derive(Default, Clone, Copy)]
pub struct Shapes {
    token_run: usize,
    digit_run: usize,
    iban_start: bool,
}

/// Byte classes for [`Shapes::of`]: one table lookup a byte instead of several range tests.
const TOKEN: u8 = 1;
const DIGIT: u8 = 2;
const UPPER: u8 = 4;
const SEP: u8 = 8;
/// In [`Shapes::of`]'s last three classes: a capital, a capital, a digit.
const IBAN: u32 = (UPPER as u32) << 16 | (UPPER as u32) << 8 | DIGIT as u32;

const CLASSES: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_digit() {
            TOKEN | DIGIT
        } else if c.is_ascii_uppercase() {
            TOKEN | UPPER
        } else if c.is_ascii_lowercase() || c == b'+' || c == b'/' || c == b'_' {
            TOKEN
        } else if c == b'-' {
            TOKEN | SEP
        } else if c == b' ' {
            SEP
        } else {
            0
        };
        b += 1;
    }
    t
};

impl Shapes {
    pub fn of(text: &[u8]) -> Self {
        let mut s = Shapes::default();
        let (mut token, mut digits, mut sep) = (0usize, 0usize, false);
        // The classes of the three bytes before this one, the nearest in the low bits.
        let mut before = 0u32;
        for &b in text {
            let c = CLASSES[usize::from(b)];
            token = if c & TOKEN != 0 { token + 1 } else { 0 };
            s.token_run = s.token_run.max(token);
            if c & DIGIT != 0 {
                digits += 1;
                sep = false;
                // Two capitals, then a digit, then this digit: an IBAN's start.
                s.iban_start |= before & IBAN == IBAN;
            } else if c & SEP != 0 && !sep && digits > 0 {
                sep = true;
            } else {
                digits = 0;
                sep = false;
            }
            s.digit_run = s.digit_run.max(digits);
            before = (before << 8 | u32::from(c)) & 0x00ff_ffff;
        }
        s
    }

    /// Whether the text has the digits `rule` needs beside its gate.
    pub fn digits_for(&self, rule: &Rule) -> bool {
        self.digit_run >= rule.digits
    }

    pub fn open(&self, gate: Gate) -> bool {
        match gate {
            Gate::Words(_) => false,
            Gate::TokenRun(n) => self.token_run >= n,
            Gate::DigitRun(n) => self.digit_run >= n,
            Gate::IbanStart => self.iban_start,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes as the byte loop before the class table found them.
    fn reference(text: &[u8]) -> (usize, usize, bool) {
        let (mut run, mut digit_run, mut iban) = (0, 0, false);
        let (mut token, mut digits, mut sep) = (0usize, 0usize, false);
        for (i, &b) in text.iter().enumerate() {
            let is_token = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-');
            token = if is_token { token + 1 } else { 0 };
            run = run.max(token);
            if b.is_ascii_digit() {
                digits += 1;
                sep = false;
            } else if (b == b' ' || b == b'-') && !sep && digits > 0 {
                sep = true;
            } else {
                digits = 0;
                sep = false;
            }
            digit_run = digit_run.max(digits);
            if b.is_ascii_digit() && i >= 3 {
                let w = &text[i - 3..=i];
                iban |=
                    w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase() && w[2].is_ascii_digit();
            }
        }
        (run, digit_run, iban)
    }

    #[test]
    fn the_class_table_finds_what_the_byte_tests_found() {
        let corpus = include_str!("../../tests/fixtures/secrets/clipboard.jsonl");
        let odd = [
            "DE89 3704",
            "AB1",
            "XY12",
            "1 2 3--4 -5",
            "a-b+c/d_e",
            "Z\u{ff}9",
            "QQ9 9",
        ];
        for text in corpus.lines().chain(odd) {
            let got = Shapes::of(text.as_bytes());
            let want = reference(text.as_bytes());
            assert_eq!(
                (got.token_run, got.digit_run, got.iban_start),
                want,
                "{text}"
            );
        }
        let bytes: Vec<u8> = (0..=255u8).cycle().take(4096).collect();
        let got = Shapes::of(&bytes);
        assert_eq!(
            (got.token_run, got.digit_run, got.iban_start),
            reference(&bytes)
        );
    }

    #[test]
    fn shapes_of_texts() {
        let s = Shapes::of(b"card 4111 1111-1111 1111 and DE89 3704");
        assert!(s.open(Gate::DigitRun(16)) && !s.open(Gate::DigitRun(17)));
        assert!(s.open(Gate::IbanStart));
        assert!(s.open(Gate::TokenRun(9)) && !s.open(Gate::TokenRun(10)));
        let s = Shapes::of(b"lorem ipsum 12  34 q8ZfV2kL0pXw7RtY4mNb9sDc3HjE");
        assert!(s.open(Gate::TokenRun(24)) && !s.open(Gate::DigitRun(3)));
        assert!(!s.open(Gate::IbanStart));
    }
}
