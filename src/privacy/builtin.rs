//! The rules a clipboard needs beside gitleaks' (which scans files for keys in code): each names
//! the gitleaks rule it widens, where there is one. Each has a gate ([`Gate`]): one Aho-Corasick
//! pass over all the rules' words and one byte loop over the text's shapes open the gates, and
//! only the rules whose gate opened run their regex on it. They are byte regexes with ASCII classes
//! (as gitleaks' RE2 ones are): a Unicode `\b` would make the DFA give up on any non-ASCII text,
//! 20 times slower on a Cyrillic clipboard. The owner's patterns keep Unicode, in a set of their
//! own that exists only when there are any.

use super::automata::{Caches, Captures, Match, Regex};
use aho_corasick::{AhoCorasick, AhoCorasickKind};
use base64::Engine;

use super::entropy::{MIN_TOKEN, is_random_token};
use super::rule::{Gate, Rule};
use super::shapes::{Floors, Shapes};
use super::{PatternError, Span, context, numbers, passwords};

/// The rules of this file; [`super::passwords`] and [`super::context`] add theirs to the set.
const OWN: &[Rule] = &[
    // gitleaks `private-key` needs the END line: a preview may have cut it off.
    Rule::new(
        r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----",
        "private-key",
        2,
        |caps, text| {
            let whole = caps.get(0)?;
            Some((whole.start(), private_key_end(text, whole.end())))
        },
        Gate::Words(&["-----BEGIN"]),
    ),
    // gitleaks `jwt` wants a third part: a preview may have cut the signature off.
    Rule::new(
        r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]*)?",
        "jwt",
        2,
        |caps, _| group(caps).map(|g| (g.start(), g.end())),
        Gate::Words(&["eyJ"]),
    ),
    // gitleaks `curl-auth-header` is for curl command lines; a header anywhere.
    Rule::new(
        r#"(?i)\b(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest|negotiate)\s+)?([^\s"',;]{8,})"#,
        "authorization",
        2,
        |caps, _| judged(caps, |g| g.iter().any(|b| !b.is_ascii_alphabetic())),
        Gate::Words(&["authorization"]),
    ),
    Rule::new(
        r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
        "authorization",
        2,
        |caps, _| judged(caps, |g| g.iter().any(u8::is_ascii_digit)),
        Gate::Words(&["bearer"]),
    ),
    Rule::new(
        r"(?i)\bbasic\s+([A-Za-z0-9+/]{8,}={0,2})",
        "authorization",
        2,
        |caps, _| judged(caps, basic_credentials),
        Gate::Words(&["basic"]),
    ),
    // gitleaks has no rule for `scheme://user:password@host`; the user may be empty
    // (`redis://:pw@host`).
    Rule::new(
        r"\b[A-Za-z][A-Za-z0-9+.-]{1,20}://([^\s:/?#@\[\]]*:[^\s/?#@]+)@",
        "url-credentials",
        2,
        |caps, _| group(caps).map(|g| (g.start(), g.end())),
        Gate::Words(&["://"]),
    ),
    // Payment card numbers: 13 to 19 digits, spaces or dashes between, checked in `numbers`.
    Rule::new(
        r"\b(?:\d[ -]?){12,18}\d\b",
        "card",
        2,
        |caps, text| {
            let g = caps.get(0)?;
            let before = text.get(..g.start()).unwrap_or_default();
            numbers::is_card(ascii(g.as_bytes()), before).then_some((g.start(), g.end()))
        },
        Gate::DigitRun(13),
    ),
    // IBANs: a country, two check digits, the account; checked in `numbers`.
    Rule::new(
        r"\b[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]){10,32}",
        "iban",
        2,
        |caps, _| {
            let g = caps.get(0)?;
            numbers::iban_len(ascii(g.as_bytes())).map(|n| (g.start(), g.start() + n))
        },
        Gate::IbanStart,
    ),
    // Long runs of token characters, judged by `entropy::is_random_token`.
    Rule::new(
        r"[A-Za-z0-9+/_-]{24,}={0,2}",
        "high-entropy",
        4,
        |caps, text| {
            let g = caps.get(0)?;
            let before = text.get(..g.start()).unwrap_or_default();
            is_random_token(ascii(g.as_bytes()), before).then_some((g.start(), g.end()))
        },
        Gate::TokenRun(MIN_TOKEN),
    ),
];

pub const CUSTOM: &str = "custom";

pub struct Builtin {
    rules: Vec<&'static Rule>,
    regexes: Vec<Regex>,
    /// Every rule's gate words, and for each word the rules it opens.
    words: AhoCorasick,
    word_list: Vec<&'static str>,
    word_rules: Vec<Vec<usize>>,
    /// The shortest runs a gate or a rule's digits ask for, in a text with a gate word and in
    /// one without: shorter ones are not measured.
    floors: [Floors; 2],
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
        // regex::bytes::RegexBuilder's default size limit.
        let limit = 10 << 20;
        let rules: Vec<&'static Rule> = OWN
            .iter()
            .chain(passwords::RULES)
            .chain(context::RULES)
            .collect();
        if rules.len() > 64 {
            return Err(PatternError::Rules("more than 64 builtin rules".into()));
        }
        let regexes = rules
            .iter()
            .map(|r| Regex::new(r.pattern, limit))
            .collect::<Result<_, _>>()
            .map_err(PatternError::Rules)?;
        let mut word_list: Vec<&'static str> = Vec::new();
        let mut word_rules: Vec<Vec<usize>> = Vec::new();
        for (i, r) in rules.iter().enumerate() {
            let Gate::Words(ws) = r.gate else { continue };
            for w in ws {
                match word_list.iter().position(|x| x.eq_ignore_ascii_case(w)) {
                    Some(at) => word_rules[at].push(i),
                    None => {
                        word_list.push(w);
                        word_rules.push(vec![i]);
                    }
                }
            }
        }
        // Built now (the first request pays nothing more than the thousandth); searched only in
        // texts the redactor's one-pass word check found a word in, so a compact NFA.
        let words = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&word_list)
            .map_err(|e| PatternError::Rules(e.to_string()))?;
        let custom = if patterns.is_empty() {
            None
        } else {
            let set = regex::RegexSet::new(patterns).map_err(bad)?;
            let each = patterns.iter().map(|p| regex::Regex::new(p));
            Some((set, each.collect::<Result<_, _>>().map_err(bad)?))
        };
        let floors = [
            Floors::of(rules.iter().copied(), false),
            Floors::of(rules.iter().copied(), true),
        ];
        Ok(Self {
            rules,
            regexes,
            words,
            word_list,
            word_rules,
            floors,
            custom,
        })
    }

    /// Every kind these rules may report, the owner's patterns' among them.
    pub fn kinds(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.rules.iter().map(|r| r.kind).chain([CUSTOM])
    }

    /// The rules' gate words (ASCII in any case).
    pub fn words(&self) -> &[&'static str] {
        &self.word_list
    }

    /// The rules whose gate `text` opens, as bits (rule `i` is bit `i`; there are at most 64,
    /// see [`Builtin::new`]): no allocation for the many texts that open none.
    /// `any`: whether `text` may hold a gate word (see [`super::Redactor::spans`]).
    pub fn open(&self, bytes: &[u8], any: bool) -> u64 {
        let shapes = Shapes::of(bytes, self.floors[usize::from(any)]);
        if !any && shapes.none() {
            return 0;
        }
        let mut on = 0u64;
        for (i, r) in self.rules.iter().enumerate() {
            if shapes.open(r.gate) {
                on |= 1 << i;
            }
        }
        if any {
            for m in self.words.find_overlapping_iter(bytes) {
                for &r in &self.word_rules[m.pattern().as_usize()] {
                    on |= 1 << r;
                }
            }
        }
        for (i, r) in self.rules.iter().enumerate() {
            if !shapes.digits_for(r) {
                on &= !(1 << i);
            }
        }
        on
    }

    /// The gates of the rules whose kind `pick` picks (such a rule runs only on a text its gate
    /// opens: [`Builtin::open`]): their words, and apart the rules gated by a shape. `None` when
    /// the owner's patterns are picked (they run on every text).
    pub fn gates_of(
        &self,
        pick: impl Fn(&str) -> bool,
    ) -> Option<(Vec<&'static str>, Vec<&'static Rule>)> {
        let (mut words, mut shaped) = (Vec::new(), Vec::new());
        for &r in self.rules.iter().filter(|r| pick(r.kind)) {
            match r.gate {
                Gate::Words(ws) => words.extend_from_slice(ws),
                Gate::TokenRun(_) | Gate::DigitRun(_) | Gate::IbanStart => shaped.push(r),
            }
        }
        if self.has_custom() && pick(CUSTOM) {
            return None;
        }
        Some((words, shaped))
    }

    /// Whether the owner gave patterns of their own (they run on every text).
    pub fn has_custom(&self) -> bool {
        self.custom.is_some()
    }

    /// `open`: the rules whose gate `text` opened ([`Builtin::open`]).
    pub fn find<'r>(&'r self, text: &str, open: u64, caches: &mut Caches, out: &mut Vec<Span<'r>>) {
        let bytes = text.as_bytes();
        for (i, &rule) in self.rules.iter().enumerate() {
            if open & (1 << i) == 0 {
                continue;
            }
            let cache = caches.of(i, &self.regexes[i]);
            for caps in self.regexes[i].captures_iter(cache, bytes) {
                if let Some((start, end)) = (rule.judge)(&caps, text) {
                    out.push(Span::new(start, end, rule.kind, rule.rank));
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

/// The rule's first group, or its whole match.
fn group<'t>(caps: &Captures<'t>) -> Option<Match<'t>> {
    caps.get(1).or_else(|| caps.get(0))
}

/// The first group's span, if `ok` says its bytes are a secret.
fn judged(caps: &Captures, ok: impl Fn(&[u8]) -> bool) -> Option<(usize, usize)> {
    let g = group(caps)?;
    ok(g.as_bytes()).then_some((g.start(), g.end()))
}

/// The rules that read a match as text match ASCII only (digits, base64), so these are whole
/// characters.
fn ascii(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or_default()
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
fn basic_credentials(b64: &[u8]) -> bool {
    base64::engine::general_purpose::STANDARD
        .decode(b64)
        .ok()
        .and_then(|raw| String::from_utf8(raw).ok())
        .is_some_and(|s| s.contains(':') && !s.chars().any(char::is_control))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_needs_user_and_password() {
        assert!(basic_credentials(b"dXNlcjpwYXNz"));
        assert!(!basic_credentials(b"understanding"));
    }

    #[test]
    fn private_key_ends_at_its_end_line_or_the_text() {
        let t = "a -----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY----- b";
        assert_eq!(&t[private_key_end(t, 33)..], " b");
        let cut = "-----BEGIN PRIVATE KEY-----\nMIIEv";
        assert_eq!(private_key_end(cut, 27), cut.len());
    }
}
