//! One builtin rule: a byte regex (ASCII classes, as gitleaks' RE2 ones), the kind it reports,
//! its merge rank (lower wins), the judge that turns a match into a span (or refuses it), and
//! the gate that must open before the regex runs at all: words that every match contains, or a
//! shape (a long run of token characters, of digits, an IBAN's start) that every match has.
//! The gates cost one Aho-Corasick pass and a look at the text's shapes ([`super::shapes`]),
//! with nothing built lazily, so a text with no candidate costs the same on the first request as
//! on the thousandth.

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
