//! The vendored gitleaks rule set (`rules/gitleaks.toml`, see `rules/README.md`): parsed and
//! compiled once, then matched the way gitleaks does: a keyword prefilter (one Aho-Corasick pass,
//! case-insensitive), the regex of each rule whose keyword occurs, the secret taken from the
//! rule's capture group, then its entropy floor and allowlists.

use aho_corasick::{AhoCorasick, AhoCorasickKind};

use super::automata::{self, Caches};
use super::lead::{lead_start, without_lead};
use serde::Deserialize;

use super::Span;
use super::entropy::shannon;

const RULES: &str = include_str!("rules/gitleaks.toml");

#[derive(Deserialize)]
struct File {
    allowlist: RawAllow,
    rules: Vec<RawRule>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawRule {
    id: String,
    regex: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
    entropy: Option<f64>,
    secret_group: Option<usize>,
    #[serde(default)]
    allowlists: Vec<RawAllow>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawAllow {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    regex_target: Option<String>,
    condition: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
}

/// What an allowlist's regexes are matched against.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allow {
    regexes: Vec<automata::Small>,
    /// One automaton over all the stopwords (`generic-api-key` has about 1,500).
    stopwords: Option<AhoCorasick>,
    target: Target,
}

struct Rule {
    id: String,
    /// How many bytes of `[\w.-]` the rule's lazy lead (stripped from its regex) may take.
    lead: usize,
    entropy: Option<f64>,
    group: Option<usize>,
    allow: Vec<Allow>,
}

/// The compiled rule set.
pub struct Gitleaks {
    rules: Vec<Rule>,
    /// `rules[i]`'s regex, compiled when a text first holds one of its keywords.
    regexes: Vec<automata::Lazy>,
    global: Allow,
    keywords: AhoCorasick,
    /// `keywords`' words, and for each the rules it enables.
    words: Vec<String>,
    keyword_rules: Vec<Vec<usize>>,
}

/// RE2's `\w`, `\d`, `\s` and `\b` are ASCII: so are these, which also keeps the automata small.
fn compile(pattern: &str) -> Result<automata::Small, String> {
    automata::Small::new(pattern, SIZE_LIMIT)
}

const SIZE_LIMIT: usize = 1 << 24;

impl Allow {
    fn parse(raw: RawAllow) -> Option<Self> {
        // File-name allowlists mean nothing for clipboard items; with `AND` they can never hold.
        let and = raw.condition.as_deref() == Some("AND");
        if (!raw.paths.is_empty() && and) || (raw.regexes.is_empty() && raw.stopwords.is_empty()) {
            return None;
        }
        let target = match raw.regex_target.as_deref() {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        let stopwords = (!raw.stopwords.is_empty())
            .then(|| {
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(&raw.stopwords)
                    .ok()
            })
            .flatten();
        Some(Self {
            regexes: raw.regexes.iter().filter_map(|r| compile(r).ok()).collect(),
            stopwords,
            target,
        })
    }

    fn allows(&self, secret: &[u8], matched: &[u8], line: &[u8]) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        self.regexes.iter().any(|r| r.is_match(target))
            || self.stopwords.as_ref().is_some_and(|w| w.is_match(secret))
    }
}

/// `start..end` without the quotes around it: some rules' secret groups take them in.
fn unquoted(text: &[u8], start: usize, end: usize) -> (usize, usize) {
    let s = &text[start..end];
    match (s.first(), s.last()) {
        (Some(a @ (b'"' | b'\'' | b'`')), Some(z)) if s.len() >= 2 && a == z => {
            (start + 1, end - 1)
        }
        _ => (start, end),
    }
}

fn public_line(line: &[u8]) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.windows(6).any(|w| w == b"public") || lower.windows(6).any(|w| w == b"pubkey")
}

/// The line of `text` around `start..end`.
fn line_of(text: &[u8], start: usize, end: usize) -> &[u8] {
    let from = text[..start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let to = text[end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| end + i);
    &text[from..to]
}

impl Gitleaks {
    /// The vendored rules, their regexes not compiled yet ([`automata::Lazy`]).
    pub fn load() -> Result<Self, String> {
        let file: File = toml::from_str(RULES).map_err(|e| e.to_string())?;
        // The words gitleaks' generic rule looks for (`key`, `token`, `password`...) and any
        // keyword of three bytes or fewer (`sk` as in "ask", `ey` as in "they", `s.` at a
        // sentence's end) occur in most people's clipboards, secrets or not: the 13 rules with
        // such a keyword are compiled now, so that the first search after start does not pay for
        // them; the rest wait for a text that holds one of their keywords. (Allowlists are
        // compiled now too, 0.2 MiB: every match is checked against the global one. With both
        // lazy, the bench's first search for `password` took 1.5-2.5 ms longer.)
        let common: Vec<String> = file
            .rules
            .iter()
            .filter(|r| r.id == "generic-api-key")
            .flat_map(|r| r.keywords.iter().map(|k| k.to_lowercase()))
            .collect();
        let mut rules = Vec::new();
        let mut regexes = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        for raw in file.rules {
            let Some(pattern) = raw.regex else { continue };
            let (pattern, lead) = without_lead(&pattern);
            let regex = automata::Lazy::new(pattern, SIZE_LIMIT);
            if raw
                .keywords
                .iter()
                .any(|k| k.len() <= 3 || common.contains(&k.to_lowercase()))
            {
                regex.get();
            }
            let index = rules.len();
            for k in &raw.keywords {
                let k = k.to_lowercase();
                match words.iter().position(|w| *w == k) {
                    Some(i) => keyword_rules[i].push(index),
                    None => {
                        words.push(k);
                        keyword_rules.push(vec![index]);
                    }
                }
            }
            regexes.push(regex);
            rules.push(Rule {
                id: raw.id,
                lead,
                entropy: raw.entropy,
                group: raw.secret_group,
                allow: raw
                    .allowlists
                    .into_iter()
                    .filter_map(Allow::parse)
                    .collect(),
            });
        }
        // Searched only in texts the redactor's one-pass word check found a word in: a compact
        // NFA, where a DFA would hold about a megabyte for every gateway's idle life.
        let keywords = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(&words)
            .map_err(|e| e.to_string())?;
        let global = Allow::parse(file.allowlist).unwrap_or(Allow {
            regexes: Vec::new(),
            stopwords: None,
            target: Target::Secret,
        });
        let set = Self {
            rules,
            regexes,
            global,
            keywords,
            words,
            keyword_rules,
        };
        Ok(set)
    }

    /// How many rules' regexes do not compile, each compiled now (tests).
    #[cfg(test)]
    pub fn failed(&self) -> usize {
        self.regexes.iter().filter(|r| r.get().is_none()).count()
    }

    /// How many rules' regexes have been compiled so far.
    #[cfg(test)]
    pub fn compiled(&self) -> usize {
        self.regexes.iter().filter(|r| r.compiled()).count()
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// The kind each rule reports (its id).
    pub fn kinds(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| r.id.as_str())
    }

    /// The rules' keywords (any case).
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// The keywords of the rules whose kind `pick` picks: such a rule runs only on a text holding
    /// one of its keywords ([`Gitleaks::find`]; one with none never runs).
    pub fn words_of(&self, pick: impl Fn(&str) -> bool) -> Vec<&str> {
        let picked: Vec<bool> = self.rules.iter().map(|r| pick(&r.id)).collect();
        self.words
            .iter()
            .zip(&self.keyword_rules)
            .filter(|(_, rules)| rules.iter().any(|&r| picked[r]))
            .map(|(w, _)| w.as_str())
            .collect()
    }

    /// The rules whose keywords occur in `text`; `any`: whether any keyword might.
    fn candidates(&self, text: &[u8], any: bool) -> Vec<usize> {
        if !any {
            return Vec::new();
        }
        let mut on = vec![false; self.rules.len()];
        for m in self.keywords.find_overlapping_iter(text) {
            for &r in &self.keyword_rules[m.pattern().as_usize()] {
                on[r] = true;
            }
        }
        (0..on.len()).filter(|&i| on[i]).collect()
    }

    /// Every secret the rules find in `text`, as byte spans.
    /// `any`: whether `text` may hold a keyword (see [`super::Redactor::spans`]).
    pub fn find<'r>(&'r self, text: &str, any: bool, caches: &mut Caches, out: &mut Vec<Span<'r>>) {
        let bytes = text.as_bytes();
        for r in self.candidates(bytes, any) {
            let rule = &self.rules[r];
            let Some(regex) = self.regexes[r].get() else {
                continue;
            };
            let cache = caches.of(r, regex);
            let mut after = 0;
            for caps in regex.captures_iter(cache, bytes) {
                let Some(whole) = caps.get(0) else { continue };
                let whole = whole.widened(lead_start(bytes, whole.start(), rule.lead, after));
                after = whole.end();
                let secret = match rule.group {
                    Some(g) => caps.get(g),
                    None => caps.iter().skip(1).flatten().find(|m| !m.is_empty()),
                }
                .unwrap_or(whole);
                if self.refused(rule, secret.as_bytes(), whole.as_bytes(), bytes, whole) {
                    continue;
                }
                let rank = if rule.id.starts_with("generic") { 3 } else { 1 };
                let (start, end) = unquoted(bytes, secret.start(), secret.end());
                out.push(Span::new(start, end, &rule.id, rank));
            }
        }
    }

    /// gitleaks' filters after a match: entropy, a digit for generic rules, allowlists.
    fn refused(
        &self,
        rule: &Rule,
        secret: &[u8],
        matched: &[u8],
        text: &[u8],
        whole: automata::Match,
    ) -> bool {
        if let Some(floor) = rule.entropy {
            if shannon(secret) <= floor {
                return true;
            }
            if rule.id.starts_with("generic") && !secret.iter().any(u8::is_ascii_digit) {
                return true;
            }
        }
        let line = line_of(text, whole.start(), whole.end());
        // A generic `key = value` on a line that says the key is public (a WireGuard peer's
        // `PublicKey`, age's `# public key:`) shows what may be shown.
        if rule.id.starts_with("generic") && public_line(line) {
            return true;
        }
        self.global.allows(secret, matched, line)
            || rule.allow.iter().any(|a| a.allows(secret, matched, line))
    }
}
