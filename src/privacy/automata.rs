//! The rules' regexes with caches the redactor holds itself. The `regex` crate keeps each regex's
//! lazy DFA in a pool whose fast slot belongs to the first thread that used it and whose other
//! slots are chosen by thread id: the states one runtime thread built for a request were built
//! again by the next thread a request landed on (and a warm-up on a thread of its own would
//! help nobody). Here a call takes whichever set of caches is free, so what any call built
//! serves the next. Same syntax and limits as `regex::bytes::RegexBuilder` with
//! `unicode(false)`: ASCII classes, any bytes.

use aho_corasick::automaton::Automaton;
use aho_corasick::{Anchored, dfa};
use regex_automata::meta::{self, Cache};
use regex_automata::util::captures::Captures as Raw;
use regex_automata::util::iter::Searcher;
use regex_automata::util::syntax;
use regex_automata::{Input, MatchKind};
use std::sync::OnceLock;

/// A compiled rule regex; its caches are passed in ([`Caches`]).
pub struct Regex(meta::Regex);

/// A group of a match: its span in the text.
#[derive(Clone, Copy)]
pub struct Match<'t> {
    hay: &'t [u8],
    start: usize,
    end: usize,
}

impl<'t> Match<'t> {
    pub fn start(&self) -> usize {
        self.start
    }

    pub fn end(&self) -> usize {
        self.end
    }

    pub fn as_bytes(&self) -> &'t [u8] {
        &self.hay[self.start..self.end]
    }

    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// This match, starting at `start` instead (before its start, in the same text).
    pub fn widened(self, start: usize) -> Self {
        Self {
            start: start.min(self.start),
            ..self
        }
    }
}

/// One match's groups, by index or name.
pub struct Captures<'t> {
    hay: &'t [u8],
    raw: Raw,
}

impl<'t> Captures<'t> {
    fn at(&self, span: Option<regex_automata::Span>) -> Option<Match<'t>> {
        span.map(|s| Match {
            hay: self.hay,
            start: s.start,
            end: s.end,
        })
    }

    pub fn get(&self, i: usize) -> Option<Match<'t>> {
        self.at(self.raw.get_group(i))
    }

    pub fn name(&self, name: &str) -> Option<Match<'t>> {
        self.at(self.raw.get_group_by_name(name))
    }

    /// Every group in order, the whole match first; `None` for a group that did not take part.
    pub fn iter(&self) -> impl Iterator<Item = Option<Match<'t>>> + '_ {
        (0..self.raw.group_len()).map(|i| self.get(i))
    }
}

/// `pattern` with the `regex` crate's byte-regex syntax (`unicode(false)`), `nfa_limit` as its size
/// limit, leftmost-first; `lazy_dfa` says what the lazy DFA may do.
fn build(
    pattern: &str,
    nfa_limit: usize,
    lazy_dfa: impl FnOnce(meta::Config) -> meta::Config,
) -> Result<meta::Regex, String> {
    // No one-pass DFA: it only speeds up finding a match's groups, which runs on a secret's few
    // bytes once the lazy DFA has found it, and the rules' one-pass DFAs took 2.3 MiB, a fifth of
    // the gateway's memory at start (the bounded backtracker finds the groups instead).
    let config = meta::Config::new()
        .onepass(false)
        .nfa_size_limit(Some(nfa_limit))
        .match_kind(MatchKind::LeftmostFirst)
        .utf8_empty(false);
    meta::Builder::new()
        .configure(lazy_dfa(config))
        .syntax(syntax::Config::new().unicode(false).utf8(false))
        .build(pattern)
        .map_err(|e| e.to_string())
}

impl Regex {
    /// `pattern` as `regex::bytes::RegexBuilder::new(pattern).unicode(false)` builds it, with
    /// `nfa_limit` as its `size_limit`.
    pub fn new(pattern: &str, nfa_limit: usize) -> Result<Self, String> {
        build(pattern, nfa_limit, |c| c.hybrid_cache_capacity(2 << 20)).map(Self)
    }

    /// Every match in `hay`, leftmost first, not overlapping, with its groups.
    pub fn captures_iter<'c, 't: 'c>(
        &'c self,
        cache: &'c mut Cache,
        hay: &'t [u8],
    ) -> impl Iterator<Item = Captures<'t>> + 'c {
        let mut searcher = Searcher::new(Input::new(hay));
        let mut raw = self.0.create_captures();
        std::iter::from_fn(move || {
            searcher.advance(|input| {
                self.0.search_captures_with(cache, input, &mut raw);
                Ok(raw.get_match())
            })?;
            Some(Captures {
                hay,
                raw: raw.clone(),
            })
        })
    }
}

/// A regex matched only against short texts (an allowlist's: a secret, its match, its line) and
/// only after a rule found something: no lazy DFA, whose states the first searches after start
/// would pay to build, but the bounded backtracker or the PikeVM, which build nothing per input.
/// Same syntax as [`Regex`].
pub struct Small(meta::Regex);

impl Small {
    pub fn new(pattern: &str, nfa_limit: usize) -> Result<Self, String> {
        build(pattern, nfa_limit, |c| c.hybrid(false)).map(Self)
    }

    pub fn is_match(&self, hay: &[u8]) -> bool {
        self.0.is_match(hay)
    }
}

/// Whether a text holds any of a set of words (ASCII case-insensitive), the first question asked
/// of every text: a full Aho-Corasick DFA walked by a loop of its own. `AhoCorasick::is_match`
/// walks the same DFA behind a trait object, a call a byte (16 instructions a byte, here 11).
pub struct AnyWord(dfa::DFA);

impl AnyWord {
    pub fn new<W: AsRef<[u8]>>(words: impl IntoIterator<Item = W>) -> Result<Self, String> {
        // No prefilter: then the start state is not special, and a special state is a match
        // (or the dead state, which an unanchored search of standard semantics never enters).
        dfa::Builder::new()
            .ascii_case_insensitive(true)
            .prefilter(false)
            .build(words)
            .map(Self)
            .map_err(|e| e.to_string())
    }

    pub fn is_match(&self, text: &[u8]) -> bool {
        let d = &self.0;
        let Ok(mut sid) = d.start_state(Anchored::No) else {
            // Never (the DFA is built unanchored); had it been, every text would be read.
            return true;
        };
        if d.is_match(sid) {
            return true;
        }
        for &b in text {
            sid = d.next_state(Anchored::No, sid, b);
            if d.is_special(sid) {
                return d.is_match(sid);
            }
        }
        false
    }
}

/// A rule's regex compiled the first time a text needs it. Of the 221 vendored rules, whose
/// compiled forms take about 3.7 MiB, a text reaches only those whose keywords it holds: the
/// first 3,000 items of the realistic clipboard corpus, full of secrets, reach 44 rules (1 MiB),
/// a clipboard without secrets only those whose keywords are common words (see
/// `Gitleaks::load`), so a gateway holds what its owner's clipboard has needed. Compiling one
/// takes 20-200 us, paid once, by the first text that needs it; one that does not compile is
/// never run (every vendored rule compiles, as tested).
pub struct Lazy {
    pattern: Box<str>,
    nfa_limit: usize,
    regex: OnceLock<Option<Regex>>,
}

impl Lazy {
    pub fn new(pattern: String, nfa_limit: usize) -> Self {
        Self {
            pattern: pattern.into_boxed_str(),
            nfa_limit,
            regex: OnceLock::new(),
        }
    }

    /// The regex, compiled now if no text needed it before; `None` if it does not compile.
    pub fn get(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| Regex::new(&self.pattern, self.nfa_limit).ok())
            .as_ref()
    }

    /// Whether it has been compiled (by [`Lazy::get`]).
    #[cfg(test)]
    pub fn compiled(&self) -> bool {
        self.regex.get().is_some()
    }
}

/// One cache per regex of a rule set, made the first time its regex runs.
#[derive(Default)]
pub struct Caches(Vec<Option<Cache>>);

impl Caches {
    /// The cache of the set's `i`th regex, `regex`.
    pub fn of(&mut self, i: usize, regex: &Regex) -> &mut Cache {
        if self.0.len() <= i {
            self.0.resize_with(i + 1, || None);
        }
        self.0[i].get_or_insert_with(|| regex.0.create_cache())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_as_the_regex_crate_does() {
        let p = r"(?i)\b(?P<k>pass\w*)\s*=\s*(\S+)";
        let ours = Regex::new(p, 1 << 24).expect("compiles");
        let theirs = regex::bytes::RegexBuilder::new(p)
            .unicode(false)
            .build()
            .expect("compiles");
        let hay = "PASSWORD = hunter2\nпароль passwd=x1 \u{ff} pass = ok".as_bytes();
        let mut cache = Caches::default();
        let got: Vec<Vec<Option<(usize, usize)>>> = ours
            .captures_iter(cache.of(0, &ours), hay)
            .map(|c| c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect())
            .collect();
        let want: Vec<Vec<Option<(usize, usize)>>> = theirs
            .captures_iter(hay)
            .map(|c| c.iter().map(|m| m.map(|m| (m.start(), m.end()))).collect())
            .collect();
        assert_eq!(got, want);
        assert_eq!(got.len(), 3);
    }

    /// The word check answers as `AhoCorasick::is_match` does, on the realistic corpus, on its
    /// lines cut at every byte of the first 200 (a word at a text's very end), and on odd texts.
    #[test]
    fn any_word_answers_as_aho_corasick_does() {
        let words = ["pass", "PWD", "-----BEGIN", "://", "код", "key", "x"];
        let ours = AnyWord::new(words).expect("builds");
        let theirs = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(words)
            .expect("builds");
        let corpus = include_str!("../../tests/fixtures/secrets/clipboard.jsonl");
        let cut = corpus.lines().take(200).flat_map(|l| {
            let b = l.as_bytes();
            (0..=b.len().min(80)).map(move |i| &b[..i])
        });
        let odd = [
            "",
            "PaSs",
            "КОД",
            "код",
            "ko",
            "x",
            "keY",
            ":/",
            "-----begin",
        ];
        let texts = corpus.lines().map(str::as_bytes).chain(cut);
        let mut hits = 0;
        for t in texts.chain(odd.iter().map(|s| s.as_bytes())) {
            assert_eq!(ours.is_match(t), theirs.is_match(t), "{t:?}");
            hits += usize::from(ours.is_match(t));
        }
        assert!(hits > 100, "{hits}");
        let none = AnyWord::new(["zzzz"]).expect("builds");
        assert!(!none.is_match(b"lorem ipsum") && none.is_match(b"a ZZZZ"));
    }

    /// Every allowlist regex of the vendored rules, on the lines and words of 500 items of
    /// the realistic corpus, answers as the regex crate's `is_match` (which ran them before) does.
    #[test]
    fn small_regexes_match_as_the_regex_crate_does() {
        let file: toml::Value =
            toml::from_str(include_str!("rules/gitleaks.toml")).expect("the rules parse");
        let lists = file["rules"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.get("allowlists")?.as_array())
            .flatten()
            .chain([&file["allowlist"]]);
        let patterns: Vec<&str> = lists
            .filter_map(|a| a.get("regexes")?.as_array())
            .flatten()
            .filter_map(toml::Value::as_str)
            .collect();
        assert!(patterns.len() > 40, "{}", patterns.len());
        let corpus = include_str!("../../tests/fixtures/secrets/clipboard.jsonl");
        let hays: Vec<&str> = corpus
            .lines()
            .take(500)
            .flat_map(|l| std::iter::once(l).chain(l.split([' ', '"', '=', ':'])))
            .chain([
                "true",
                "aaaa",
                "${FOO}",
                "{{ .Values.x }}",
                "%s",
                "EXAMPLEKEY",
            ])
            .collect();
        for p in patterns {
            // gitleaks' Go regexes take a `{` that opens no repetition as a literal; neither the
            // regex crate nor regex-automata does, and such a pattern was never in force here.
            let Ok(theirs) = regex::bytes::RegexBuilder::new(p)
                .unicode(false)
                .size_limit(1 << 24)
                .build()
            else {
                assert!(Small::new(p, 1 << 24).is_err(), "{p}");
                continue;
            };
            let ours = Small::new(p, 1 << 24).unwrap_or_else(|e| panic!("{p}: {e}"));
            for h in &hays {
                assert_eq!(
                    ours.is_match(h.as_bytes()),
                    theirs.is_match(h.as_bytes()),
                    "{p} on {h}"
                );
            }
        }
    }
}
