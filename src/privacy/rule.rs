//! One builtin rule: a byte regex (ASCII classes, as gitleaks' RE2 ones), the kind it reports,
//! its merge rank (lower wins), and the judge that turns a match into a span, or refuses it.

use regex::bytes::Captures;

/// `(captures, text) -> the secret's byte span`, or `None` when the match is not a secret.
pub type Judge = fn(&Captures, &str) -> Option<(usize, usize)>;

pub struct Rule {
    pub pattern: &'static str,
    pub kind: &'static str,
    pub rank: u8,
    pub judge: Judge,
}

impl Rule {
    pub const fn new(pattern: &'static str, kind: &'static str, rank: u8, judge: Judge) -> Self {
        Self {
            pattern,
            kind,
            rank,
            judge,
        }
    }
}
