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

impl Shapes {
    pub fn of(text: &[u8]) -> Self {
        let mut s = Shapes::default();
        let (mut token, mut digits, mut sep) = (0usize, 0usize, false);
        for (i, &b) in text.iter().enumerate() {
            let is_token = b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-');
            token = if is_token { token + 1 } else { 0 };
            s.token_run = s.token_run.max(token);
            if b.is_ascii_digit() {
                digits += 1;
                sep = false;
            } else if (b == b' ' || b == b'-') && !sep && digits > 0 {
                sep = true;
            } else {
                digits = 0;
                sep = false;
            }
            s.digit_run = s.digit_run.max(digits);
            if b.is_ascii_digit() && i >= 3 {
                let w = &text[i - 3..=i];
                s.iban_start |=
                    w[0].is_ascii_uppercase() && w[1].is_ascii_uppercase() && w[2].is_ascii_digit();
            }
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
