//! `search`: every item of the scope matched in the gateway (linear-time regex over text, note
//! and tags), then the page of hits asked for, with the fields that matched.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use regex::Regex;
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{Class, Hir, HirKind, Look};

use super::query::SearchIn;
use super::redact::{Masked, Wanted, remember_left};
use super::tabs::scan_whole;
use crate::backend::Item;
use crate::clipboard::{Coverage, Scope};
use crate::mcp::ToolState;
use crate::mcp::error::ToolError;
use crate::mcp::format::{Show, one_line, push_content_field, push_quoted, push_tag_list, showing};
use crate::privacy::{MaskGates, Privacy};

/// Which of the searched fields of `it` match, in `text,note,tags` order.
fn matched_fields(it: &Item, pattern: &Regex, within: SearchIn) -> Vec<&'static str> {
    let mut out = Vec::new();
    if within.text && pattern.is_match(&it.text) {
        out.push("text");
    }
    if within.note && pattern.is_match(&it.note) {
        out.push("note");
    }
    if within.tags && it.tags.iter().any(|t| pattern.is_match(t)) {
        out.push("tags");
    }
    out
}

pub(super) async fn search(
    tools: &ToolState,
    tabs: &Coverage,
    (query, pattern): (&str, &Regex),
    scope: Scope,
    within: SearchIn,
    (skip, max_items): (usize, usize),
    show: Show,
) -> Result<String, ToolError> {
    let gates = tools
        .search_gates
        .get_or(query, || mask_gates(query, pattern, &tools.privacy));
    let shows = |it: &Item| {
        gates
            .as_ref()
            .is_some_and(|g| wanted(it, pattern, within, g))
    };
    // A search with gates to look for asks the cache first: the items it leaves are remembered
    // after its reply (below), and a warm search then compares each text once.
    let fill = gates.as_ref().is_some_and(|g| !g.none());
    let wanted = gates.as_ref().map(|_| Wanted {
        shows: &shows,
        after_cache: fill,
    });
    // The turn is held until the scope's items are freed: the next search masks and matches
    // only then.
    let (pages, turn) = scan_whole(tools, tabs, scope, wanted).await?;
    let reply = reply(
        &pages,
        (query, pattern),
        scope,
        within,
        (skip, max_items),
        show,
    );
    // Freeing 10,000 items and more takes longer than matching them: done on a blocking thread,
    // with the turn, so that the reply does not wait for it. The items a search with gates left
    // unmasked are masked there first, into the redactor's cache: the first such search after
    // start replies without the rules reading a whole history, the next finds it remembered.
    let privacy = tools.privacy.clone();
    tokio::task::spawn_blocking(move || {
        if fill {
            remember_left(&privacy, &pages);
        }
        drop((pages, turn));
    });
    Ok(reply)
}

/// What an item must hold, unless the search finds it may match as read, for a search to mask it
/// ([`wanted`]); `None` when every item must be masked before the pattern is asked. A masked text
/// is the raw text's pieces, unchanged, with a mask text between them (`[redacted:KIND]`, `[` to
/// `]`). A match that is not empty and holds no `[` or `]` lies either inside one piece, or inside
/// a mask short of its brackets. Inside a piece it is a match in the raw text when the pattern
/// asks nothing of a match's surroundings but the start or end of the text or of a line (`\n`
/// only): those hold inside a piece as they hold in the raw text, and at a piece's edge the
/// mask's bracket beside it is neither (a word boundary is refused: there a bracket and a
/// secret's last letter differ). Inside a mask of kind K it is a match in that mask alone, which
/// a text gains only where a rule of kind K found a span, so only if it opens that rule's gate:
/// a word, or a shape (a long run of digits or token characters, an IBAN's start;
/// [`crate::privacy::Redactor::mask_gates`]). So a search masks only the items its pattern
/// matches as read and those opening a gate of the kinds whose masks it matches (none for most
/// patterns: `needle \d+`), when:
/// - the pattern never matches an empty text, nor a text holding `[` or `]` (no literal or class
///   of it holds either);
/// - it asks nothing of its surroundings but text and `\n`-line edges;
/// - no kind whose mask it matches is the owner's patterns' (`custom`: they run on every text).
///
/// A pattern that may match a bracket or a word's edge (`key=\S+`, `\btoken`, `.*password.*`) is
/// asked through literals instead, when every match holds one of a few, none empty nor holding a
/// bracket ([`held`]): such a literal in a masked text lies inside one piece (so
/// the raw text holds it) or inside a mask (whose text then holds it), never across a mask's
/// edge, which is a bracket. So the search masks only the items holding one of them as read and
/// those opening a gate of the kinds whose mask texts hold one.
///
/// A password manager's items are masked whatever they hold (see [`mask_pages_where`]).
/// `query` is parsed as `compile` in `query.rs` parses it (case-insensitive); a query that does
/// not parse here is searched the whole way.
///
/// [`mask_pages_where`]: super::redact::mask_pages_where
fn mask_gates(query: &str, pattern: &Regex, privacy: &Privacy) -> Option<Gates> {
    let hir = regex_syntax::ParserBuilder::new()
        .case_insensitive(true)
        .build()
        .parse(query)
        .ok()?;
    let never_empty = hir.properties().minimum_len().is_some_and(|n| n > 0);
    if never_empty && plain(&hir) {
        let mask = privacy.mask_gates(|mask| pattern.is_match(mask))?;
        return Some(Gates {
            mask,
            literals: None,
        });
    }
    let literals = Literals::of(&hir)?;
    let mask = privacy.mask_gates(|mask| literals.0.is_match(mask.as_bytes()))?;
    Some(Gates {
        mask,
        literals: Some(literals),
    })
}

/// The gates of the last queries searched ([`mask_gates`]), so that a query asked again (a warm
/// search, an agent paging through hits) does not look for its literals again: their regex costs
/// up to 0.6 ms to build (`.*password.*`: 144 case variants). The mode's rules are the process's.
#[derive(Clone, Default)]
pub(crate) struct GatesKept(Arc<Mutex<Vec<Kept>>>);

/// A query, and its gates (`None`: every item masked first).
type Kept = (String, Option<Arc<Gates>>);

/// The count alone: queries are the agents' text.
impl std::fmt::Debug for GatesKept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner).len();
        write!(f, "GatesKept({kept} queries)")
    }
}

/// How many queries' gates are kept.
const GATES_KEPT: usize = 16;

impl GatesKept {
    /// The gates kept for `query`, else those `make` makes, kept.
    fn get_or(&self, query: &str, make: impl FnOnce() -> Option<Gates>) -> Option<Arc<Gates>> {
        let kept = || self.0.lock().unwrap_or_else(PoisonError::into_inner);
        {
            let mut kept = kept();
            if let Some(at) = kept.iter().position(|(q, _)| q == query) {
                let entry = kept.remove(at);
                let gates = entry.1.clone();
                kept.insert(0, entry);
                return gates;
            }
        }
        let gates = make().map(Arc::new);
        let mut kept = kept();
        kept.insert(0, (query.to_owned(), gates.clone()));
        kept.truncate(GATES_KEPT);
        gates
    }
}

/// What a search asks of an item as read to know whether it must mask it ([`mask_gates`]).
pub(crate) struct Gates {
    /// The gates of the kinds whose masks a match may lie in (or begin or end in).
    mask: Arc<MaskGates>,
    /// Asked of a field as read instead of the pattern, when the pattern may match a bracket.
    literals: Option<Literals>,
}

impl Gates {
    /// Whether no text can gain a mask a match may lie in.
    fn none(&self) -> bool {
        self.mask.none()
    }
}

/// Literals one of which every match of a pattern holds, none empty or holding a bracket, looked
/// for in a text as bytes by one regex of their alternation (the `regex` crate's literal search:
/// about 1 ms less over 10,000 items' fields than `aho-corasick`'s `is_match`, a call each).
struct Literals(regex::bytes::Regex);

/// The most literals a search looks for (`regex-syntax`'s own bound on a set it extracts; case
/// variants count each).
const MOST_LITERALS: usize = 250;

/// The most places in a sequence where [`held`] looks for literals a match of the rest starts
/// with (a query is up to 1,000 characters, each a place).
const MOST_PLACES: usize = 16;

/// The most sets of literals [`held`] asks `regex-syntax` for, a query, and how deep into groups
/// it looks: each ask is a walk of (part of) the pattern, and a pattern nested 120 deep cost
/// 190 ms unbounded, 17-25 ms with 48 asks at any depth, 8.6 ms with these (release build,
/// beside a CI run; `.*password.*` 0.6 ms, a 1,200-character alternation 1.9 ms).
const MOST_ASKED: usize = 48;
const MOST_DEPTH: usize = 4;

impl Literals {
    fn of(hir: &Hir) -> Option<Literals> {
        let mut asks = MOST_ASKED;
        let literals = held(hir, &mut asks, MOST_DEPTH)?;
        let mut alternation = String::from("(?-u)");
        for (i, l) in literals.iter().enumerate() {
            if i > 0 {
                alternation.push('|');
            }
            for b in l {
                let _ = write!(alternation, "\\x{b:02X}");
            }
        }
        regex::bytes::Regex::new(&alternation).ok().map(Literals)
    }
}

/// A set of literals one of which every match of `hir` holds, none empty or holding a bracket:
/// the best found (its shortest literal the longest, then the fewest) in `asks` asks at most,
/// `depth` groups deep.
/// Every match starts with one of its prefixes and ends with one of its suffixes (when either set
/// is finite); a match of a sequence holds a match of each of its parts, and of the rest of it
/// from any part on (which starts with one of that rest's prefixes: `.*password.*` holds
/// `password`); a repetition at least once holds its part; a match of an alternation holds one of
/// a branch's.
fn held(hir: &Hir, asks: &mut usize, depth: usize) -> Option<Vec<Vec<u8>>> {
    let mut found: Vec<Vec<Vec<u8>>> = [ExtractKind::Prefix, ExtractKind::Suffix]
        .into_iter()
        .filter_map(|kind| usable(hir, kind, asks))
        .collect();
    let Some(deeper) = depth.checked_sub(1) else {
        return found.into_iter().max_by_key(|set| rank(set));
    };
    match hir.kind() {
        HirKind::Capture(c) => found.extend(held(&c.sub, asks, deeper)),
        HirKind::Repetition(r) if r.min >= 1 => found.extend(held(&r.sub, asks, deeper)),
        HirKind::Concat(subs) => {
            for i in 1..subs.len().min(MOST_PLACES) {
                found.extend(usable(
                    &Hir::concat(subs[i..].to_vec()),
                    ExtractKind::Prefix,
                    asks,
                ));
            }
            // A literal or class part is at the start of the rest from it on, asked above.
            for sub in subs.iter().filter(|sub| {
                !matches!(
                    sub.kind(),
                    HirKind::Literal(_) | HirKind::Class(_) | HirKind::Look(_)
                )
            }) {
                found.extend(held(sub, asks, deeper));
            }
        }
        HirKind::Alternation(subs) => {
            let mut union = Vec::new();
            for sub in subs {
                union.extend(held(sub, asks, deeper)?);
            }
            if union.len() <= MOST_LITERALS {
                found.push(union);
            }
        }
        _ => {}
    }
    found.into_iter().max_by_key(|set| rank(set))
}

/// How well a set of literals picks texts out: its shortest literal's length, then how few.
fn rank(set: &[Vec<u8>]) -> (usize, std::cmp::Reverse<usize>) {
    let shortest = set.iter().map(Vec::len).min().unwrap_or(0);
    (shortest, std::cmp::Reverse(set.len()))
}

/// The literals `regex-syntax` finds every match of `hir` starts (or ends) with, if there are
/// some (a finite set), none empty or holding a bracket; `None` too once `asks` are spent.
fn usable(hir: &Hir, kind: ExtractKind, asks: &mut usize) -> Option<Vec<Vec<u8>>> {
    *asks = asks.checked_sub(1)?;
    let seq = Extractor::new().kind(kind).extract(hir);
    let literals = seq.literals()?;
    let usable = !literals.is_empty()
        && literals.len() <= MOST_LITERALS
        && literals.iter().all(|l| {
            let bytes = l.as_bytes();
            !bytes.is_empty() && !bytes.iter().any(|b| matches!(b, b'[' | b']'))
        });
    usable.then(|| literals.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// Whether a search (`pattern` in the fields `within`, `gates` from [`mask_gates`]) must mask `it`
/// to know whether it is a hit: it may be one as read, or one of those fields may gain a mask the
/// pattern matches.
fn wanted(it: &Item, pattern: &Regex, within: SearchIn, gates: &Gates) -> bool {
    let as_read = match &gates.literals {
        Some(Literals(holds)) => any_field(it, within, |f| holds.is_match(f.as_bytes())),
        None => !matched_fields(it, pattern, within).is_empty(),
    };
    if as_read {
        return true;
    }
    !gates.none() && any_field(it, within, |f| gates.mask.may_gain(f))
}

/// Whether one of the fields `within` of `it` passes `test`.
fn any_field(it: &Item, within: SearchIn, test: impl Fn(&str) -> bool) -> bool {
    (within.text && test(&it.text))
        || (within.note && test(&it.note))
        || (within.tags && it.tags.iter().any(|t| test(t)))
}

/// Whether `hir` matches no `[` or `]` and asks nothing of its surroundings but the start or end
/// of the text or of a `\n` line.
fn plain(hir: &Hir) -> bool {
    const BRACKETS: [u8; 2] = [b'[', b']'];
    match hir.kind() {
        HirKind::Empty => true,
        // A literal is UTF-8, where no byte of a longer character is ASCII.
        HirKind::Literal(lit) => !lit.0.iter().any(|b| BRACKETS.contains(b)),
        HirKind::Class(Class::Unicode(c)) => !c.ranges().iter().any(|r| {
            BRACKETS
                .iter()
                .any(|&b| (r.start()..=r.end()).contains(&char::from(b)))
        }),
        HirKind::Class(Class::Bytes(c)) => !c
            .ranges()
            .iter()
            .any(|r| BRACKETS.iter().any(|b| (r.start()..=r.end()).contains(b))),
        HirKind::Look(look) => {
            matches!(look, Look::Start | Look::End | Look::StartLF | Look::EndLF)
        }
        HirKind::Repetition(r) => plain(&r.sub),
        HirKind::Capture(c) => plain(&c.sub),
        HirKind::Concat(subs) | HirKind::Alternation(subs) => subs.iter().all(plain),
    }
}

/// The reply to a search of `pages`: the header, then the page of hits asked for.
fn reply(
    pages: &[Masked],
    (query, pattern): (&str, &Regex),
    scope: Scope,
    within: SearchIn,
    (skip, max_items): (usize, usize),
    show: Show,
) -> String {
    let mut hits = Vec::new();
    for Masked {
        tab, page, left, ..
    } in pages
    {
        for (i, it) in page.items.iter().enumerate() {
            if left.get(i) == Some(&true) {
                // Not a hit masked either (see `mask_gates`).
                continue;
            }
            let fields = matched_fields(it, pattern, within);
            if !fields.is_empty() {
                hits.push((tab, i, it, fields));
            }
        }
    }
    let total = hits.len();
    let mut header = format!(
        "mode:search|query:{}|scope:{}|results:{total}",
        one_line(query),
        scope.as_str()
    );
    let page: Vec<_> = hits.into_iter().skip(skip).take(max_items).collect();
    if page.len() < total {
        header = format!("{header}|{}", showing(skip, page.len()));
    }
    let mut out = header;
    for (tab, i, it, fields) in page {
        let _ = write!(out, "\n{}[{i}]", tab.shown);
        push_content_field(&mut out, it);
        if show.text {
            out.push('|');
            push_quoted(&mut out, &it.text);
        }
        if show.tags {
            out.push('|');
            push_tag_list(&mut out, &it.tags);
        }
        if show.note && it.has_note() {
            out.push_str("|note:");
            crate::clipboard::push_preview(&mut out, &it.note);
        }
        out.push_str("|match:");
        out.push_str(&fields.join(","));
        if tab.external {
            out.push_str("|external");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use regex::RegexBuilder;
    use serde_json::Value;

    use super::*;
    use crate::backend::content::Rich;
    use crate::backend::{Backend, MemoryBackend, TabPage};
    use crate::clipboard::Roots;
    use crate::mcp::read::redact::{mask_pages, mask_pages_where};
    use crate::privacy::{Privacy, Redact};

    fn compile(query: &str) -> Regex {
        RegexBuilder::new(query)
            .case_insensitive(true)
            .build()
            .expect("compiles")
    }

    fn tools(mode: Redact, tabs: Vec<(String, Vec<Item>)>) -> ToolState {
        ToolState::new(
            Backend::Memory(MemoryBackend::with_tabs(tabs)),
            Roots::default(),
        )
        .with_privacy(Privacy::new(mode, &[]).expect("builds"))
    }

    /// The mask texts of a mode that redacts.
    fn masks_of(privacy: &Privacy) -> &[String] {
        privacy.mask_texts().expect("a mode that redacts")
    }

    /// How a search of `query` masks, "all": `None` every item, `Some(false)` only those it
    /// matches as read, `Some(true)` those and the ones opening a gate (a word, a shape) of the
    /// kinds whose masks it matches.
    fn masking(query: &str) -> Option<bool> {
        let privacy = Privacy::new(Redact::All, &[]).expect("builds");
        mask_gates(query, &compile(query), &privacy).map(|w| !w.none())
    }

    /// Whether a search of `query` asks its literals of an item as read, not its pattern.
    fn by_literals(query: &str) -> bool {
        let privacy = Privacy::new(Redact::All, &[]).expect("builds");
        mask_gates(query, &compile(query), &privacy).is_some_and(|g| g.literals.is_some())
    }

    /// Searched as read, then masked: patterns that match no bracket, no mask text, nothing empty
    /// and no word boundary. With the gates of the kinds a mask shows too: `password`, `aws`,
    /// `key`, which match `[redacted:password]` and the like, and `card`, `redacted`, `d:`, which
    /// match masks of kinds found by a shape (every mask matches `d:`). The rest the whole way:
    /// patterns matching brackets, nothing or a word's edge, or the owner's patterns' masks.
    #[test]
    fn which_patterns_are_searched_as_read_first() {
        for q in [
            "needle \\d+",
            "TODO",
            "важно",
            "пароль",
            // Only a password manager's mask: its items are masked whatever they hold.
            "manager",
            "error|warning",
            "^todo$",
            "(?m)^x\\d$",
            "foo\\d{3}",
            "[a-z]+@example\\.com",
            "hunter2",
            "AKIA[0-9A-Z]{16}",
        ] {
            assert_eq!(masking(q), Some(false), "{q}");
        }
        for q in [
            "password",
            "PASSWORD",
            "aws",
            "key",
            "todo|token",
            "admin",
            "otp",
            "cookie",
            "redacted",
            "d:",
            "high",
            "card",
            "iban",
        ] {
            assert_eq!(masking(q), Some(true), "{q}");
        }
        assert!(!by_literals("needle \\d+") && !by_literals("password"));
        // Patterns that may match a bracket or ask a word's edge, asked through the literals
        // every match starts or ends with: as read alone, or with the gates of the kinds whose
        // mask texts hold one (every mask holds `a`; `[redacted:password]` holds `word`).
        for (q, gated) in [
            ("key=\\S+", false),
            ("\\S+@", false),
            ("(?s)BEGIN.*KEY", false),
            ("\\bAKIA\\w+", false),
            ("(?m)^x.y$", true),
            ("a.b", true),
            ("(?s)a.b", true),
            ("\\bword", true),
            ("word\\B", true),
            ("(?Rm)^x", true),
            ("password\\S*", true),
            ("redacted:\\S+", true),
            // Literals inside: after a part that may hold a bracket, or in a repetition.
            ("[a-z]+=\\S+", false),
            ("(?s).*BEGIN.*", false),
            ("\\S+(api_key)+\\S*", false),
            (".*password.*", true),
            ("\\S+:\\s*\\S+", true),
            (".*token.*|.*secret.*", true),
        ] {
            assert_eq!(masking(q), Some(gated), "{q}");
            assert!(by_literals(q), "{q}");
        }
        // The whole way: a literal holding a bracket, none at all, or an empty one.
        for q in [
            "\\[",
            // Every match holds `x`, but a part alone is asked only when it is not a literal or
            // a class (those are asked as the start of the rest: here `x]`, a bracket).
            "x\\]",
            "\\W",
            "[^a]+",
            "x*",
            "(a|)",
            "[[:punct:]]",
            ".+",
            "\\S+",
            "(?s).*",
            ".*token.*|\\S+",
            "(?:key=)?\\S+",
            "(?:key=)*\\S+",
        ] {
            assert_eq!(masking(q), None, "{q}");
        }
        // The owner's patterns run on every text: a pattern matching their mask, the whole way.
        let own = Privacy::new(Redact::All, &["sk-own-[0-9]+".to_owned()]).expect("builds");
        assert!(mask_gates("custom", &compile("custom"), &own).is_none());
        assert!(mask_gates("custom\\S*", &compile("custom\\S*"), &own).is_none());
        assert!(mask_gates("key=\\S+", &compile("key=\\S+"), &own).is_some());
        assert!(mask_gates("password", &compile("password"), &own).is_some());
    }

    /// A query searched again finds its gates kept (its literals' regex built once); the last
    /// 16 queries are kept, the oldest dropped first; a query whose items are all masked first
    /// is kept as such.
    #[test]
    fn the_last_queries_gates_are_kept() {
        let privacy = Privacy::new(Redact::All, &[]).expect("builds");
        let kept = GatesKept::default();
        let made = std::sync::atomic::AtomicUsize::new(0);
        let gates = |q: &str| {
            kept.get_or(q, || {
                made.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                mask_gates(q, &compile(q), &privacy)
            })
        };
        let first = gates(".*password.*").expect("literals");
        let again = gates(".*password.*").expect("literals");
        assert!(Arc::ptr_eq(&first, &again));
        assert!(gates("\\S+").is_none() && gates("\\S+").is_none());
        assert_eq!(made.load(std::sync::atomic::Ordering::Relaxed), 2);
        for i in 0..GATES_KEPT - 2 {
            gates(&format!("key{i}=\\S+"));
        }
        // `.*password.*` is now the oldest of 16 kept, and asked, the newest; `\S+` the oldest,
        // dropped by one more.
        assert!(Arc::ptr_eq(&first, &gates(".*password.*").expect("kept")));
        gates("one more");
        let made_before = made.load(std::sync::atomic::Ordering::Relaxed);
        gates("\\S+");
        assert_eq!(
            made.load(std::sync::atomic::Ordering::Relaxed),
            made_before + 1
        );
        assert_eq!(format!("{kept:?}"), "GatesKept(16 queries)");
    }

    /// Every mask a redactor writes is one of its mask texts, in a text opening a gate of its
    /// kind's rules unless they are the owner's: what `mask_gates` relies on. Each text of
    /// both corpora masked, and each mask read back.
    #[test]
    fn every_mask_written_is_a_mask_text() {
        let privacy = Privacy::new(Redact::All, &[r"sk-own-[0-9]+".to_owned()]).expect("builds");
        let r = privacy.redactor_for(true).expect("a redactor");
        let corpus = [
            include_str!("../../../tests/fixtures/secrets/clipboard.jsonl"),
            include_str!("../../../tests/fixtures/secrets/clipboard_heldout.jsonl"),
        ];
        // Masks of kinds their rules find by shape, not by word.
        const SHAPED: [&str; 3] = [
            "[redacted:card]",
            "[redacted:iban]",
            "[redacted:high-entropy]",
        ];
        let (mut masks, mut gated, mut shaped, mut custom) = (0, 0, 0, 0);
        for line in corpus.iter().flat_map(|c| c.lines()) {
            let Some(text) = serde_json::from_str::<Value>(line)
                .ok()
                .and_then(|v| v["text"].as_str().map(str::to_owned))
            else {
                continue;
            };
            let text = format!("{text} sk-own-1234");
            let shown = r.redact_remembered(&text);
            for m in r.masks_remembered(&text) {
                let piece = &shown[m.shown];
                assert!(
                    masks_of(&privacy).iter().any(|t| t == piece),
                    "{piece} is no mask text"
                );
                // And the text opens a gate of its kind's rules (a word or a shape), unless they
                // are the owner's: a search that does not mask it can miss no such mask.
                match privacy.mask_gates(|mask| mask == piece) {
                    Some(gates) => {
                        assert!(gates.may_gain(&text), "{piece} without its gate in {text}");
                        gated += 1;
                        shaped += usize::from(SHAPED.contains(&piece));
                    }
                    None => {
                        assert_eq!(piece, "[redacted:custom]");
                        custom += 1;
                    }
                }
                masks += 1;
            }
        }
        assert!(masks > 4_000, "{masks}");
        assert!(
            gated > 2_000 && shaped > 100 && custom > 1_000,
            "{gated} {shaped} {custom}"
        );
        assert!(
            masks_of(&privacy)
                .iter()
                .any(|t| t == crate::privacy::PASSWORD_MANAGER)
        );
    }

    /// Items shaped like a clipboard: the corpus's texts (secrets in most), as text, as HTML only,
    /// as a note and as a tag, some a password manager's.
    fn clipboard() -> Vec<Item> {
        let texts = crate::mcp::read::corpus_texts();
        (0..1_000)
            .map(|i| {
                let text = &texts[i % texts.len()];
                let note = &texts[(i * 7 + 3) % texts.len()];
                let tag = texts[(i * 13 + 5) % texts.len()]
                    .lines()
                    .next()
                    .unwrap_or("");
                let mut it = match i % 5 {
                    0 => {
                        let mut it = Item::new("", &[tag], "");
                        it.content.rich = Some(Rich {
                            mime: "text/html".into(),
                            source: format!("<p>{}</p>", text.replace('<', "&lt;")),
                        });
                        it
                    }
                    1 => Item::new(&format!("needle {i} {text}"), &[], note),
                    _ => Item::new(text, &[tag], note),
                };
                it.secret = i % 97 == 0;
                it
            })
            .collect()
    }

    /// A search masking only the items its pattern matches as read (and those holding a word of
    /// the kinds whose masks it matches) replies byte for byte as one masking every item, for
    /// patterns aimed at the secrets' raw text (which must find nothing masked), at what stays,
    /// and at the masks' words: in both modes that mask, the managed tab masked or not, in every
    /// field and in some. Without the words, the searches for masks' words would reply otherwise.
    #[test]
    fn a_search_masking_its_hits_only_replies_as_one_masking_all() {
        let items = clipboard();
        let page = |name: &str| TabPage {
            name: name.into(),
            total: items.len(),
            items: items.clone(),
        };
        let as_read = [
            "needle \\d+",
            "AKIA",
            "hunter2",
            "BEGIN",
            "eyJ",
            "ghp_",
            "\\d{4}",
            "[A-Za-z0-9]{20,}",
            "^[a-z]",
            "(?m)^\\s+-",
            "localhost",
            "postgres|mysql",
            "sk_live",
            "@",
            "=\\s*\\w",
            "://",
            "xoxb",
            "код",
            "^stripe",
            "manager",
        ];
        let masks_words = [
            "password",
            "key",
            "token",
            "aws",
            "secret",
            "pass",
            "api",
            "github|slack",
            "session|cookie",
            "otp",
            "private",
            "jwt",
            "url",
            "authorization",
            "credentials",
            "wireguard",
            "stripe",
            // Kinds found by a shape (a run of digits or token characters, an IBAN's start).
            "card",
            "iban",
            "entropy",
            "redacted",
            "d:",
        ];
        // Asked through their literals (each with whether a mask text holds one of them).
        let by_literals = [
            ("key=\\S+", false),
            ("@\\S+\\.\\w+", false),
            ("(?s)BEGIN.*KEY", false),
            ("\\bAKIA\\w+", false),
            ("sk_live_\\S+", false),
            ("://\\S+", false),
            ("\\bghp_\\w+", false),
            ("password\\S*", true),
            ("token.\\w+", true),
            ("redacted:\\S+", true),
            ("\\bpass\\W", true),
            ("d:\\S", true),
            ("\\w+=\\S+", false),
            ("(?s).*BEGIN.*", false),
            (".*password.*", true),
            ("\\S+:\\s*\\S+", true),
            (".*token.*|.*secret.*", true),
        ];
        let everywhere = SearchIn {
            text: true,
            note: true,
            tags: true,
        };
        let beside = SearchIn {
            text: false,
            ..everywhere
        };
        let show = Show {
            text: true,
            tags: true,
            note: true,
            version: false,
        };
        for mode in [Redact::All, Redact::External] {
            let t = tools(mode, Vec::new());
            // Hits in the external tab and items matched as read, of the searches as read;
            // items masked for their words alone, and searches those changed.
            let (mut hits, mut matched, mut for_words, mut differ) = (0, 0, 0, 0);
            // Items a search through its literals masked, and those it asked about.
            let (mut literals_shown, mut literals_asked) = (0, 0);
            let searches = as_read.iter().map(|q| (*q, everywhere, false));
            let searches = searches.chain(masks_words.iter().map(|q| (*q, everywhere, true)));
            let searches = searches.chain(masks_words[..4].iter().map(|q| (*q, beside, true)));
            let searches = searches.chain(by_literals.iter().map(|(q, w)| (*q, everywhere, *w)));
            let searches = searches.chain(by_literals[..3].iter().map(|(q, w)| (*q, beside, *w)));
            for (q, within, words_wanted) in searches {
                let pattern = compile(q);
                let words = mask_gates(q, &pattern, &t.privacy)
                    .unwrap_or_else(|| panic!("{q}: not the whole way"));
                assert_eq!(!words.none(), words_wanted, "{q}");
                let reply_of = |pages: &[Masked]| {
                    reply(
                        pages,
                        (q, &pattern),
                        Scope::All,
                        within,
                        (0, usize::MAX),
                        show,
                    )
                };
                let pages = || vec![page("a"), page("mcp/b")];
                let whole = reply_of(&mask_pages(&t, pages(), None, false));
                let count = |n: &std::sync::atomic::AtomicUsize, yes: bool| {
                    n.fetch_add(usize::from(yes), std::sync::atomic::Ordering::Relaxed);
                    yes
                };
                let (hit, shown, asked) = Default::default();
                let wants = |it: &Item| {
                    count(&asked, true);
                    count(&hit, !matched_fields(it, &pattern, within).is_empty());
                    count(&shown, wanted(it, &pattern, within, &words))
                };
                // A redactor that has read nothing (the first search after start), then the
                // same again, the wanted items remembered.
                let fresh = tools(mode, Vec::new());
                let wanted = Wanted {
                    shows: &wants,
                    after_cache: words_wanted,
                };
                let first = mask_pages_where(&fresh, pages(), None, false, Some(wanted));
                same(&reply_of(&first), &whole, &format!("{q} in {mode:?}"));
                // Counted on the first search only.
                let hit = hit.swap(0, std::sync::atomic::Ordering::Relaxed);
                let shown = shown.swap(0, std::sync::atomic::Ordering::Relaxed);
                let asked = asked.swap(0, std::sync::atomic::Ordering::Relaxed);
                if words.literals.is_some() {
                    // Every item a match as read would have masked is masked, and more.
                    assert!(shown >= hit, "{q}: {shown} {hit}");
                    (literals_shown, literals_asked) =
                        (literals_shown + shown, literals_asked + asked);
                    continue;
                }
                let again = mask_pages_where(&fresh, pages(), None, false, Some(wanted));
                same(
                    &reply_of(&again),
                    &whole,
                    &format!("{q} in {mode:?}, again"),
                );
                if words_wanted {
                    let hit_only = |it: &Item| !matched_fields(it, &pattern, within).is_empty();
                    let wanted = Wanted {
                        shows: &hit_only,
                        after_cache: false,
                    };
                    let first = mask_pages_where(&t, pages(), None, false, Some(wanted));
                    differ += usize::from(reply_of(&first) != whole);
                    for_words += shown - hit;
                } else {
                    assert_eq!(shown, hit, "{q}");
                    // The external tab: the one masked in both modes.
                    hits += whole.lines().filter(|l| l.starts_with("a[")).count();
                    matched += hit;
                }
            }
            // Many hits; many items the pattern matched as read that it does not masked (a
            // secret's own text): those the second match, on the masked text, dropped ("all"
            // asks of both tabs' items, "external" of the external tab's). Many items masked
            // for their words alone, and most searches for a mask's word miss hits without them.
            let asked = if mode == Redact::All { 2 * hits } else { hits };
            assert!(hits > 500, "{hits}");
            assert!(matched > asked + 300, "{matched} {hits}");
            assert!(for_words > 1_000, "{for_words}");
            assert!(differ > 15, "{differ}");
            // The searches through literals left most items unmasked.
            assert!(
                literals_asked > 10_000 && literals_shown * 2 < literals_asked,
                "{literals_shown} of {literals_asked}"
            );
        }
    }

    /// `got` is `want`, or the first line where they differ is shown (the replies are long).
    fn same(got: &str, want: &str, what: &str) {
        let differ = got.lines().zip(want.lines()).find(|(a, b)| a != b);
        assert!(
            got == want,
            "{what}: {differ:?} ({} and {} lines)",
            got.lines().count(),
            want.lines().count()
        );
    }

    /// The rules read only what a search for a mask's word needs before it replies: its hits as
    /// read and the items holding a word of a rule that reports a kind whose mask it matches.
    /// `password` finds a MySQL password given on a command line (its raw text never says
    /// "password") and leaves unread the texts holding an AWS key but no such word, until the
    /// search has replied: then they are read and remembered, and the next search finds them so.
    #[tokio::test]
    async fn a_search_for_a_masks_word_reads_only_what_may_gain_it() {
        let secret = "aws AKIAZ3MHQ7XWPLBV4KTN";
        let mut items: Vec<Item> = (0..50)
            .map(|i| Item::new(&format!("{secret} {i}"), &[], ""))
            .collect();
        items.push(Item::new("mysql -u root -pS3cr3tPw1 app", &[], ""));
        items.push(Item::new("the password is in the vault", &[], ""));
        let want = "mode:search|query:password|scope:all|results:2\n\
             clipboard[50]|\"mysql -u root -p[redacted:password] app\"|[]|match:text|external\n\
             clipboard[51]|\"the password is in the vault\"|[]|match:text|external";
        let unread = |t: &ToolState| {
            let r = t.privacy.redactor_for(true).expect("a redactor");
            let mut recall = r.recall();
            assert!(recall.get("mysql -u root -pS3cr3tPw1 app").is_some());
            (0..50)
                .filter(|i| recall.get(&format!("{secret} {i}")).is_none())
                .count()
        };
        // What `search` does before its reply.
        let t = tools(Redact::All, Vec::new());
        let within = SearchIn {
            text: true,
            note: true,
            tags: true,
        };
        let (q, pattern) = ("password", compile("password"));
        let words = mask_gates(q, &pattern, &t.privacy).expect("words");
        let shows = |it: &Item| wanted(it, &pattern, within, &words);
        let wanted = Wanted {
            shows: &shows,
            after_cache: true,
        };
        let page = TabPage {
            name: "clipboard".into(),
            total: items.len(),
            items: items.clone(),
        };
        let pages = mask_pages_where(&t, vec![page], None, false, Some(wanted));
        let show = Show {
            text: true,
            tags: true,
            note: false,
            version: false,
        };
        let replied = reply(&pages, (q, &pattern), Scope::All, within, (0, 20), show);
        assert_eq!(replied, want);
        assert_eq!(unread(&t), 50);
        // And after it.
        remember_left(&t.privacy, &pages);
        assert_eq!(unread(&t), 0);
        // The whole way, a search's cache filled after its reply.
        let t = tools(Redact::All, vec![("clipboard".into(), items)]);
        let args = serde_json::json!({"mode": "search", "query": "password", "scope": "all"});
        let map = args.as_object().cloned().unwrap_or_default();
        let reply = crate::mcp::read::call(&t, &crate::clipboard::Coverage::All, &map)
            .await
            .map(|r| r.text)
            .unwrap_or_else(|e| e.line());
        assert_eq!(reply, want);
        for _ in 0..500 {
            if unread(&t) == 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("{} texts left unread 5 s after the search", unread(&t));
    }

    /// The rules read only what a search's pattern matches as read: a search for what no secret
    /// holds leaves the secrets' texts unread by the redactor (which remembers what it read), and
    /// its hits masked.
    #[tokio::test]
    async fn a_search_reads_only_its_hits_with_the_rules() {
        let key = "AKIAZ3MHQ7XWPLBV4KTN";
        let secret = format!("aws {key}");
        let mut items: Vec<Item> = (0..50)
            .map(|i| Item::new(&format!("{secret} {i}"), &[], ""))
            .collect();
        items.push(Item::new(&format!("needle 7 {secret}"), &[], ""));
        let t = tools(Redact::All, vec![("clipboard".into(), items)]);
        let args = serde_json::json!({"mode": "search", "query": "needle \\d", "scope": "all"});
        let map = args.as_object().cloned().unwrap_or_default();
        let reply = crate::mcp::read::call(&t, &crate::clipboard::Coverage::All, &map)
            .await
            .map(|r| r.text)
            .unwrap_or_else(|e| e.line());
        assert_eq!(
            reply,
            "mode:search|query:needle \\d|scope:all|results:1\n\
             clipboard[50]|\"needle 7 aws [redacted:aws-access-token]\"|[]|match:text|external"
        );
        let r = t.privacy.redactor_for(true).expect("a redactor");
        let mut recall = r.recall();
        assert!(recall.get(&format!("needle 7 {secret}")).is_some());
        for i in 0..50 {
            assert!(recall.get(&format!("{secret} {i}")).is_none(), "{i}");
        }
    }
}
