//! Secret redaction: the spans of a text that look like secrets, masked as `[redacted:KIND]`.
//! Pure (no I/O); one [`Redactor`] is built from `[privacy]` when the gateway starts.
//!
//! - [`gitleaks`]: the vendored gitleaks v8.30.1 rule set (provider keys, JWTs, private keys,
//!   generic `key = value` assignments), behind its keyword prefilter;
//! - [`builtin`]: what a clipboard needs beyond it: private keys cut off by a preview,
//!   credentials in `Authorization` headers and URLs, cards and IBANs ([`numbers`] checks their
//!   checksums), long high-entropy tokens ([`entropy`] tells them from hashes, ids, public keys
//!   and encoded text), and the owner's own patterns (kind `custom`);
//! - [`passwords`]: passwords told by where they stand (config keys, command flags, `.netrc`,
//!   `password:` in chat), and [`context`]: one-time codes, session cookies, signed URLs,
//!   WireGuard keys. Their rules join `builtin`'s in one `RegexSet` pass.
//!
//! A text with no candidate costs one Aho-Corasick pass over both rule sets' words and a look at
//! its shapes ([`shapes`]), and comes back borrowed, unchanged.

mod automata;
mod builtin;
mod context;
#[cfg(test)]
mod corpus;
mod entropy;
mod gitleaks;
mod lead;
mod numbers;
mod passwords;
mod rule;
mod seen;
mod shapes;
#[cfg(test)]
mod tests;
mod words;

use std::borrow::Cow;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use serde::Deserialize;

use seen::{Cursor, Seen};
pub use seen::{Mask, Masked};

/// Shown in place of an item CopyQ marks as coming from a password manager.
pub const PASSWORD_MANAGER: &str = "[redacted:password-manager]";

/// The mask of a secret of `kind`, appended to `out`: `[redacted:KIND]`. Every mask is written
/// here (a search relies on knowing every text a mask can be: [`Redactor::mask_texts`]).
pub fn push_mask(out: &mut String, kind: &str) {
    out.push_str("[redacted:");
    out.push_str(kind);
    out.push(']');
}

/// The mask of a secret of `kind` alone.
fn mask_text(kind: &str) -> String {
    let mut mask = String::new();
    push_mask(&mut mask, kind);
    mask
}

/// Which tabs' items are redacted (`[privacy] redact`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Redact {
    /// Nothing is redacted (items from a password manager are still hidden).
    Off,
    /// Tabs outside `mcp/`: what the owner did not write through the gateway.
    #[default]
    External,
    /// Every tab, the managed ones too.
    All,
}

impl Redact {
    /// Whether a tab is redacted in this mode.
    pub fn covers(self, external: bool) -> bool {
        match self {
            Self::Off => false,
            Self::External => external,
            Self::All => true,
        }
    }
}

/// Why a [`Redactor`] could not be built: the message names the pattern and the regex error.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    #[error("privacy.patterns[{index}]: {reason}")]
    Custom { index: usize, reason: String },
    #[error("the vendored gitleaks rules do not load: {0}")]
    Rules(String),
}

/// One secret found: byte offsets into the text, its kind, and a rank (lower wins a merge).
#[derive(Debug, Clone, PartialEq)]
pub struct Span<'r> {
    pub start: usize,
    pub end: usize,
    pub kind: &'r str,
    rank: u8,
}

impl<'r> Span<'r> {
    fn new(start: usize, end: usize, kind: &'r str, rank: u8) -> Self {
        Self {
            start,
            end,
            kind,
            rank,
        }
    }
}

/// The rules, compiled once, and what they made of texts seen lately.
pub struct Redactor {
    gitleaks: &'static gitleaks::Gitleaks,
    builtin: builtin::Builtin,
    seen: Mutex<Seen>,
    /// The automata the rules have built so far, one set per call running at once: a call takes
    /// one and puts it back, so what an earlier call built serves the next, on any thread.
    scratch: Mutex<Vec<Scratch>>,
    /// Both rule sets' words in one automaton: most texts hold none, and one plain search says
    /// so where each set's overlapping search would read the text again.
    any_word: Arc<automata::AnyWord>,
    /// Every text a mask may put in place of a secret, sorted: see [`Redactor::mask_texts`].
    mask_texts: Vec<String>,
    /// The gates of the sets of mask texts asked for last (by which of `mask_texts` each asked):
    /// see [`Redactor::mask_gates`].
    gates_kept: Mutex<Vec<GatesKept>>,
}

/// Which of the mask texts a search's pattern matched, and their gates.
type GatesKept = (Vec<bool>, Option<Arc<MaskGates>>);

/// How many sets of mask gates a redactor keeps.
const GATES_KEPT: usize = 2;

#[derive(Default)]
struct Scratch {
    gitleaks: automata::Caches,
    builtin: automata::Caches,
}

/// The vendored rules are the same for every redactor: loaded once per process, each rule's
/// regex compiled the first time a text needs it.
fn vendored() -> Result<&'static gitleaks::Gitleaks, PatternError> {
    static SET: OnceLock<Result<gitleaks::Gitleaks, String>> = OnceLock::new();
    SET.get_or_init(gitleaks::Gitleaks::load)
        .as_ref()
        .map_err(|e| PatternError::Rules(e.clone()))
}

/// Whether the owner's `patterns` compile: what config validation asks, without building rules.
pub fn check_patterns(patterns: &[String]) -> Result<(), PatternError> {
    builtin::check(patterns)
}

/// `[privacy]` as the read path uses it: the mode, and unless it is off, the redactor.
#[derive(Debug, Clone)]
pub struct Privacy {
    pub mode: Redact,
    redactor: Option<Arc<Redactor>>,
}

impl Privacy {
    /// Nothing redacted (items from a password manager are still hidden): unit tests' default.
    pub fn off() -> Self {
        Self {
            mode: Redact::Off,
            redactor: None,
        }
    }

    pub fn new(mode: Redact, patterns: &[String]) -> Result<Self, PatternError> {
        let redactor = match mode {
            Redact::Off => None,
            _ => Some(Arc::new(Redactor::new(patterns)?)),
        };
        Ok(Self { mode, redactor })
    }

    /// Every text a mask of this mode may show (see [`Redactor::mask_texts`]); `None` when it
    /// redacts nothing.
    pub fn mask_texts(&self) -> Option<&[String]> {
        self.redactor.as_deref().map(Redactor::mask_texts)
    }

    /// See [`Redactor::mask_gates`]; `None` when this mode redacts nothing.
    pub fn mask_gates(&self, shows: impl Fn(&str) -> bool) -> Option<Arc<MaskGates>> {
        self.redactor.as_deref()?.mask_gates(shows)
    }

    /// The redactor for a tab, if this mode redacts it.
    pub fn redactor_for(&self, external: bool) -> Option<&Redactor> {
        self.redactor
            .as_deref()
            .filter(|_| self.mode.covers(external))
    }
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} gitleaks rules)", self.gitleaks.len())
    }
}

/// A run of lookups in a redactor's cache, under its lock: see [`Redactor::recall`].
pub struct Recall<'r> {
    seen: MutexGuard<'r, Seen>,
    at: Cursor,
    missed: usize,
    bytes: usize,
}

impl Recall<'_> {
    /// What `text` became if it was seen lately: `Some(None)` when it holds nothing to mask (an
    /// empty text is always known), `None` for a text the rules must read.
    pub fn get(&mut self, text: &str) -> Option<Option<Arc<Masked>>> {
        if text.is_empty() {
            return Some(None);
        }
        let known = self.seen.get_next(text, &mut self.at);
        if known.is_none() {
            self.missed += 1;
            self.bytes += text.len();
        }
        known
    }
}

impl Drop for Recall<'_> {
    fn drop(&mut self) {
        self.seen.reserve(self.missed, self.bytes);
    }
}

impl Redactor {
    /// The vendored rules and the owner's `patterns` (Rust `regex` syntax, kind `custom`).
    pub fn new(patterns: &[String]) -> Result<Self, PatternError> {
        let gitleaks = vendored()?;
        let builtin = builtin::Builtin::new(patterns)?;
        let words = gitleaks.words().iter().map(String::as_str);
        let any_word = automata::AnyWord::new(words.chain(builtin.words().iter().copied()))
            .map_err(PatternError::Rules)?;
        let any_word = Arc::new(any_word);
        let mut mask_texts: Vec<String> = gitleaks
            .kinds()
            .chain(builtin.kinds())
            .map(mask_text)
            .chain([PASSWORD_MANAGER.to_owned()])
            .collect();
        mask_texts.sort_unstable();
        mask_texts.dedup();
        Ok(Self {
            gitleaks,
            builtin,
            seen: Mutex::default(),
            scratch: Mutex::default(),
            any_word,
            mask_texts,
            gates_kept: Mutex::default(),
        })
    }

    /// Every text that may stand in a masked text where the raw one held a secret: one
    /// `[redacted:KIND]` for each kind a rule of either set (or an owner's pattern) reports, and
    /// what a password manager's item shows. A masked text is the raw text's own pieces with
    /// these between them, and nothing else.
    pub fn mask_texts(&self) -> &[String] {
        &self.mask_texts
    }

    /// What a text must hold to gain a mask whose text `shows` holds of: the gate of every rule
    /// reporting such a kind, a word or a shape (a mask of a kind is written only where a rule of
    /// that kind found a span, and a rule runs only on a text its gate opens). A search whose
    /// pattern matches some kinds' masks need mask only the texts that open one of these gates,
    /// beside those it matches as read. `None` when the owner's patterns report such a kind
    /// (they run on every text). The password manager's mask is not asked about: an item it
    /// hides is hidden by its flag, whatever its text. The last two sets asked for are kept
    /// (their automaton takes up to a millisecond to build; asking `shows` of each mask text,
    /// 30 µs).
    pub fn mask_gates(&self, shows: impl Fn(&str) -> bool) -> Option<Arc<MaskGates>> {
        let picked: Vec<bool> = self.mask_texts.iter().map(|m| shows(m)).collect();
        let cache = || {
            self.gates_kept
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
        };
        {
            let mut kept = cache();
            if let Some(at) = kept.iter().position(|(k, _)| *k == picked) {
                let entry = kept.remove(at);
                let gates = entry.1.clone();
                kept.insert(0, entry);
                return gates;
            }
        }
        let pick = |kind: &str| {
            self.mask_texts
                .binary_search(&mask_text(kind))
                .is_ok_and(|i| picked[i])
        };
        let gates = self.gates_of(pick).map(Arc::new);
        let mut kept = cache();
        kept.insert(0, (picked, gates.clone()));
        kept.truncate(GATES_KEPT);
        gates
    }

    /// [`Redactor::mask_gates`] of the kinds `pick` picks, built.
    fn gates_of(&self, pick: impl Fn(&str) -> bool + Copy) -> Option<MaskGates> {
        let (mut words, shaped) = self.builtin.gates_of(pick)?;
        words.extend(self.gitleaks.words_of(pick));
        // Every kind (a pattern matching `redacted`, or a letter of it): all the words, whose
        // automaton the redactor has (790 KB); else one of the words picked (up to 370 KB, 1 ms).
        let every = self.builtin.kinds().filter(|&k| k != builtin::CUSTOM);
        let every = every.chain(self.gitleaks.kinds()).all(pick);
        // As both rule sets' own word searches: ASCII in any case, other bytes as they are. A
        // search asks it of every field it does not match as read: the redactor's own one-pass
        // automaton, without a prefilter (`-p`, `pass`: one would stop at every other letter).
        let words = if every {
            Some(Arc::clone(&self.any_word))
        } else if words.is_empty() {
            None
        } else {
            Some(Arc::new(automata::AnyWord::new(words).ok()?))
        };
        // Runs shorter than every picked shape gate asks for are not measured.
        Some(MaskGates {
            words,
            shapes: shaped.iter().map(|r| r.gate).collect(),
            floors: shapes::Floors::of(shaped, false),
        })
    }

    /// The secrets in `text`: sorted, overlaps merged, each on whole characters.
    pub fn spans(&self, text: &str) -> Vec<Span<'_>> {
        let any = self.any_word.is_match(text.as_bytes());
        let open = self.builtin.open(text.as_bytes(), any);
        if !any && open == 0 && !self.builtin.has_custom() {
            return Vec::new();
        }
        let pool = || self.scratch.lock().unwrap_or_else(PoisonError::into_inner);
        let mut scratch = pool().pop().unwrap_or_default();
        let mut found = Vec::new();
        self.gitleaks
            .find(text, any, &mut scratch.gitleaks, &mut found);
        self.builtin
            .find(text, open, &mut scratch.builtin, &mut found);
        pool().push(scratch);
        merge(text, found)
    }

    /// [`Redactor::redact`], answered from the texts seen lately when `text` is one of them.
    pub fn redact_remembered<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.remembered(text) {
            Some(m) => Cow::Owned(m.text.to_string()),
            None => Cow::Borrowed(text),
        }
    }

    /// [`Redactor::redact_remembered`] and where it puts each mask, in one answer; `None` when
    /// there is nothing to mask.
    pub fn masked_remembered(&self, text: &str) -> Option<Arc<Masked>> {
        self.remembered(text)
    }

    /// Where [`Redactor::redact_remembered`] puts each mask, in `text` and in what it returns
    /// (empty when it masks nothing); remembered alike.
    pub fn masks_remembered(&self, text: &str) -> Vec<Mask> {
        self.remembered(text)
            .map(|m| m.masks.to_vec())
            .unwrap_or_default()
    }

    /// Has the rules read `text` unless it was seen lately, and remembers what they found.
    pub fn remember(&self, text: &str) {
        let _ = self.remembered(text);
    }

    /// Lookups of the texts seen lately, all under one lock until the [`Recall`] is dropped: a
    /// warm search looks up each of its 10,000 texts, and a lock apiece cost as much as the
    /// lookups. Texts looked up in the order first seen cost a compare each. Dropped, it makes
    /// room in the cache for those it missed, which the rules are about to read.
    pub fn recall(&self) -> Recall<'_> {
        Recall {
            seen: self.seen.lock().unwrap_or_else(PoisonError::into_inner),
            at: Cursor::default(),
            missed: 0,
            bytes: 0,
        }
    }

    /// `text` masked, from the texts seen lately or by the rules (then remembered); `None` when
    /// there is nothing to mask.
    fn remembered(&self, text: &str) -> Option<Arc<Masked>> {
        if text.is_empty() {
            return None;
        }
        let seen = || self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let hash = {
            let seen = seen();
            let hash = seen.hash(text);
            if let Some(known) = seen.get_hashed(text, hash) {
                return known;
            }
            hash
        };
        let masked = self.masked(text).map(Arc::new);
        seen().insert_hashed(text, hash, masked.clone());
        masked
    }

    /// `text` with each secret replaced by `[redacted:KIND]`; borrowed when there is none.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        match self.masked(text) {
            Some(m) => Cow::Owned(m.text.into_string()),
            None => Cow::Borrowed(text),
        }
    }

    /// `text` masked and where its masks sit, or `None` when it holds no secret.
    fn masked(&self, text: &str) -> Option<Masked> {
        if text.is_empty() {
            return None;
        }
        let spans = self.spans(text);
        if spans.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut masks = Vec::with_capacity(spans.len());
        let mut at = 0;
        for s in &spans {
            out.push_str(&text[at..s.start]);
            let start = out.len();
            push_mask(&mut out, s.kind);
            masks.push(Mask {
                raw: s.start..s.end,
                shown: start..out.len(),
            });
            at = s.end;
        }
        out.push_str(&text[at..]);
        Some(Masked {
            text: out.into(),
            masks: masks.into(),
        })
    }
}

/// What a text must hold to gain a mask of some kinds (a gate word or a shape of a rule of one
/// of them): [`Redactor::mask_gates`].
pub struct MaskGates {
    words: Option<Arc<automata::AnyWord>>,
    shapes: Vec<rule::Gate>,
    floors: shapes::Floors,
}

impl MaskGates {
    /// Whether `text` may gain such a mask: it holds one of the words, or one of the shapes.
    pub fn may_gain(&self, text: &str) -> bool {
        let bytes = text.as_bytes();
        if self.words.as_ref().is_some_and(|w| w.is_match(bytes)) {
            return true;
        }
        if self.shapes.is_empty() {
            return false;
        }
        let shapes = shapes::Shapes::of(bytes, self.floors);
        self.shapes.iter().any(|&gate| shapes.open(gate))
    }

    /// Whether no text can gain such a mask (no kind's mask was asked for, or their rules have
    /// neither words nor shapes and so never run).
    pub fn none(&self) -> bool {
        self.words.is_none() && self.shapes.is_empty()
    }
}

/// Sorted, widened to character boundaries, overlapping spans joined under the best-ranked kind.
fn merge<'r>(text: &str, mut spans: Vec<Span<'r>>) -> Vec<Span<'r>> {
    for s in &mut spans {
        while !text.is_char_boundary(s.start) {
            s.start -= 1;
        }
        while !text.is_char_boundary(s.end) {
            s.end += 1;
        }
    }
    spans.retain(|s| s.end > s.start);
    spans.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let mut out: Vec<Span<'r>> = Vec::with_capacity(spans.len());
    for s in spans {
        match out.last_mut() {
            Some(last) if s.start < last.end => {
                last.end = last.end.max(s.end);
                if s.rank < last.rank {
                    last.kind = s.kind;
                    last.rank = s.rank;
                }
            }
            _ => out.push(s),
        }
    }
    out
}
