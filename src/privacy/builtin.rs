//! The rules a clipboard needs beside gitleaks' (which scans files for keys in code): each names
//! the gitleaks rule it widens, where there is one. All go through one `RegexSet` pass first, so
//! only the rules with a candidate in a text run on it. They are byte regexes with ASCII classes
//! (as gitleaks' RE2 ones are): a Unicode `\b` would make the DFA give up on any non-ASCII text,
//! 20 times slower on a Cyrillic clipboard. The owner's patterns keep Unicode, in a set of their
//! own that exists only when there are any.

use base64::Engine;
use regex::bytes::{Captures, Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use super::entropy::is_random_token;
use super::{PatternError, Span};

/// Rule order: the index of each in the set, the kind it reports, its merge rank.
const RULES: &[(&str, &str, u8)] = &[
    // gitleaks `private-key` needs the END line: a preview may have cut it off.
    (
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
        "private-key",
        2,
    ),
    // gitleaks `jwt` wants a third part: a preview may have cut the signature off.
    (
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?",
        "jwt",
        2,
    ),
    // gitleaks `curl-auth-header` is for curl command lines; a header anywhere.
    (
        r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate)\s+)?([^\s"',;]{8,})"#,
        "authorization",
        2,
    ),
    (
        r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
        "authorization",
        2,
    ),
    (
        r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})",
        "authorization",
        2,
    ),
    // gitleaks has no rule for `scheme://user:password@host`.
    (
        r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://([^\s:/?#@\[\]]+:[^\s/?#@]+)@",
        "url-credentials",
        2,
    ),
    // Payment card numbers: 13 to 19 digits, spaces or dashes between, checked below.
    (r"\b(?:\d[ -]?){12,18}\d\b", "card", 2),
    // Long runs of token characters, judged by `entropy::is_random_token`.
    (r"[A-Za-z0-9+/_-]{24,}={0,2}", "high-entropy", 4),
];

const CUSTOM: &str = "custom";

pub struct Builtin {
    set: RegexSet,
    regexes: Vec<Regex>,
    custom: Option<(regex::RegexSet, Vec<regex::Regex>)>,
}

/// The first of the owner's patterns that does not compile, with the regex error.
pub fn check(patterns: &[String]) -> Result<(), PatternError> {
    for (index, p) in patterns.iter().enumerate() {
        if let Err(e) = regex::Regex::new(p) {
            return Err(PatternError::Custom {
                index,
                reason: e.to_string(),
            });
        }
    }
    Ok(())
}

impl Builtin {
    pub fn new(patterns: &[String]) -> Result<Self, PatternError> {
        check(patterns)?;
        let bad = |e: regex::Error| PatternError::Rules(e.to_string());
        let ours = RULES.iter().map(|r| r.0);
        let set = RegexSetBuilder::new(ours.clone())
            .unicode(false)
            .build()
            .map_err(bad)?;
        let regexes = ours
            .map(|p| RegexBuilder::new(p).unicode(false).build())
            .collect::<Result<_, _>>()
            .map_err(bad)?;
        let custom = if patterns.is_empty() {
            None
        } else {
            let set = regex::RegexSet::new(patterns).map_err(bad)?;
            let each = patterns.iter().map(|p| regex::Regex::new(p));
            Some((set, each.collect::<Result<_, _>>().map_err(bad)?))
        };
        Ok(Self {
            set,
            regexes,
            custom,
        })
    }

    pub fn find<'r>(&'r self, text: &str, out: &mut Vec<Span<'r>>) {
        let bytes = text.as_bytes();
        // Most texts have no candidate: `is_match` says so without building the set of matches.
        let hits = if self.set.is_match(bytes) {
            self.set.matches(bytes).into_iter().collect()
        } else {
            Vec::new()
        };
        for i in hits {
            let (_, kind, rank) = RULES[i];
            for caps in self.regexes[i].captures_iter(bytes) {
                if let Some((start, end)) = judge(i, &caps, text) {
                    out.push(Span::new(start, end, kind, rank));
                }
            }
        }
        if let Some((set, each)) = &self.custom {
            for i in set.matches(text).iter() {
                for m in each[i].find_iter(text) {
                    out.push(Span::new(m.start(), m.end(), CUSTOM, 0));
                }
            }
        }
    }
}

/// The span rule `i` reports for a match, if it is a secret. The rules that read the match as
/// text match ASCII only (digits, base64), so those matches are whole characters.
fn judge(i: usize, caps: &Captures, text: &str) -> Option<(usize, usize)> {
    let whole = caps.get(0)?;
    let group = caps.get(1).unwrap_or(whole);
    let g = group.as_bytes();
    let ascii = || std::str::from_utf8(g).unwrap_or_default();
    let ok = match i {
        0 => return Some((whole.start(), private_key_end(text, whole.end()))),
        1 => true,
        2 => g.iter().any(|b| !b.is_ascii_alphabetic()),
        3 => g.iter().any(u8::is_ascii_digit),
        4 => basic_credentials(ascii()),
        5 => true,
        6 => is_card(ascii()),
        _ => is_random_token(ascii(), text.get(..whole.start()).unwrap_or_default()),
    };
    ok.then_some((group.start(), group.end()))
}

/// The end of the `-----END ...-----` line after `from`, or of the text when it was cut off.
fn private_key_end(text: &str, from: usize) -> usize {
    let Some(rest) = text.get(from..) else {
        return text.len();
    };
    let Some(at) = rest.find("-----END") else {
        return text.len();
    };
    let after = &rest[at + 8..];
    match after.find("-----") {
        Some(close) => from + at + 8 + close + 5,
        None => text.len(),
    }
}

/// `Basic` followed by base64 of `user:password`.
fn basic_credentials(b64: &str) -> bool {
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .ok()
        .and_then(|raw| String::from_utf8(raw).ok())
        .is_some_and(|s| s.contains(':') && !s.chars().any(char::is_control))
}

/// Digits with one kind of separator, of a card network's prefix and length, Luhn-valid.
fn is_card(s: &str) -> bool {
    let seps: Vec<char> = s.chars().filter(|c| !c.is_ascii_digit()).collect();
    if seps.windows(2).any(|w| w[0] != w[1]) {
        return false;
    }
    let d: Vec<u32> = s.chars().filter_map(|c| c.to_digit(10)).collect();
    let n = d.len();
    if !(13..=19).contains(&n) {
        return false;
    }
    let p2 = d[0] * 10 + d[1];
    let p4 = p2 * 100 + d[2] * 10 + d[3];
    let network = match d[0] {
        4 => matches!(n, 13 | 16 | 19),
        5 => (51..=55).contains(&p2) && n == 16,
        2 => (2221..=2720).contains(&p4) && n == 16,
        3 => match p2 {
            34 | 37 => n == 15,
            35 => n >= 16,
            30 | 36 | 38 | 39 => n >= 14,
            _ => false,
        },
        6 => n >= 16,
        _ => false,
    };
    network && luhn(&d)
}

fn luhn(digits: &[u32]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 1 {
                let x = d * 2;
                if x > 9 { x - 9 } else { x }
            } else {
                d
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_need_luhn_a_network_and_one_separator() {
        assert!(is_card("4111111111111111"));
        assert!(is_card("4111 1111 1111 1111"));
        assert!(is_card("3782-822463-10005"));
        assert!(is_card("5555555555554444"));
        assert!(!is_card("4111111111111112"));
        assert!(!is_card("4111 1111-1111 1111"));
        // An epoch in milliseconds, Luhn-valid or not, is no card's prefix.
        assert!(!is_card("1700000000006"));
    }

    #[test]
    fn basic_needs_user_and_password() {
        assert!(basic_credentials("dXNlcjpwYXNz"));
        assert!(!basic_credentials("understanding"));
    }

    #[test]
    fn private_key_ends_at_its_end_line_or_the_text() {
        let t = "a -----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY----- b";
        assert_eq!(&t[private_key_end(t, 33)..], " b");
        let cut = "-----BEGIN PRIVATE KEY-----\nMIIEv";
        assert_eq!(private_key_end(cut, 27), cut.len());
    }
}
