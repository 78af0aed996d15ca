//! `search`: every item of the scope matched in the gateway (linear-time regex over text, note
//! and tags), then the page of hits asked for, with the fields that matched.

use std::fmt::Write as _;
use std::sync::Arc;

use regex::Regex;
use regex_syntax::hir::{Class, Hir, HirKind, Look};

use super::query::SearchIn;
use super::redact::Masked;
use super::tabs::scan_where;
use crate::backend::Item;
use crate::clipboard::{Coverage, Scope};
use crate::mcp::ToolState;
use crate::mcp::error::ToolError;
use crate::mcp::format::{Show, one_line, push_content_field, push_quoted, push_tag_list, showing};

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
    // Held until the scope's items are freed: the next search reads only then. The semaphore is
    // never closed; were it, the search would go on without a turn.
    let turn = Arc::clone(&tools.whole_reads).acquire_owned().await.ok();
    let hit_as_read = |it: &Item| !matched_fields(it, pattern, within).is_empty();
    let wanted = tools
        .privacy
        .mask_texts()
        .is_some_and(|masks| raw_first(query, pattern, masks))
        .then_some(&hit_as_read as &(dyn Fn(&Item) -> bool + Sync));
    let pages = scan_where(tools, tabs, scope, (None, None), wanted).await?;
    let reply = reply(
        &pages,
        (query, pattern),
        scope,
        within,
        (skip, max_items),
        show,
    );
    // Freeing 10,000 items and more takes longer than matching them: done on a blocking thread,
    // with the turn, so that the reply does not wait for it.
    tokio::task::spawn_blocking(move || drop((pages, turn)));
    Ok(reply)
}

/// Whether every match of `pattern` in a masked text is a match in the text as read, so that a
/// search need mask only the items its pattern matches as read (then match them again, masked):
/// the first search after start no longer runs the rules over a whole history, only over its
/// hits. A masked text is the raw text's pieces, unchanged, with a mask text between them
/// ([`crate::privacy::Redactor::mask_texts`], each `[` to `]`). A match that is not empty and
/// holds no `[` or `]` lies either inside one piece, or inside a mask text short of its brackets.
/// So it is a match in the raw text when:
/// - the pattern never matches an empty text, nor a text holding `[` or `]` (no literal or class
///   of it holds either);
/// - it matches in no mask text (then none lies inside one);
/// - it asks nothing of a match's surroundings but the start or end of the text or of a line
///   (`\n` only): those hold inside a piece as they hold in the raw text, and at a piece's edge
///   the mask's bracket beside it is neither. A word boundary is refused: there a bracket and
///   a secret's last letter differ.
///
/// `query` is parsed as `compile` in `query.rs` parses it (case-insensitive); a query that does
/// not parse here is searched the whole way.
fn raw_first(query: &str, pattern: &Regex, mask_texts: &[String]) -> bool {
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .case_insensitive(true)
        .build()
        .parse(query)
    else {
        return false;
    };
    hir.properties().minimum_len().is_some_and(|n| n > 0)
        && plain(&hir)
        && !mask_texts.iter().any(|m| pattern.is_match(m))
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
                // Not a hit as read, so not one masked either (see `raw_first`).
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

    fn raw_first_in(query: &str) -> bool {
        let privacy = Privacy::new(Redact::All, &[]).expect("builds");
        raw_first(query, &compile(query), masks_of(&privacy))
    }

    /// Searched as read, then masked: patterns that match no bracket, no mask text, nothing empty
    /// and no word boundary. The rest the whole way: among them the words of the kinds a mask
    /// shows (`password`, `aws`, `key`), which match `[redacted:password]` and the like.
    #[test]
    fn which_patterns_are_searched_as_read_first() {
        for q in [
            "needle \\d+",
            "TODO",
            "важно",
            "error|warning",
            "^todo$",
            "(?m)^x\\d$",
            "foo\\d{3}",
            "[a-z]+@example\\.com",
            "hunter2",
            "AKIA[0-9A-Z]{16}",
        ] {
            assert!(raw_first_in(q), "{q}");
        }
        for q in [
            "password",
            "PASSWORD",
            "aws",
            "key",
            "redacted",
            "manager",
            "todo|token",
            "admin",
            "(?m)^x.y$",
            "\\[",
            "x\\]",
            "a.b",
            "(?s)a.b",
            "\\W",
            "[^a]+",
            "\\S+@",
            "\\bword",
            "word\\B",
            "(?Rm)^x",
            "x*",
            "(a|)",
            "d:",
            "[[:punct:]]",
        ] {
            assert!(!raw_first_in(q), "{q}");
        }
    }

    /// Every mask a redactor writes is one of its mask texts: the list `raw_first` checks a
    /// pattern against is whole. Each text of the corpus masked, and each mask read back.
    #[test]
    fn every_mask_written_is_a_mask_text() {
        let privacy = Privacy::new(Redact::All, &[r"sk-own-[0-9]+".to_owned()]).expect("builds");
        let r = privacy.redactor_for(true).expect("a redactor");
        let corpus = [
            include_str!("../../../tests/fixtures/secrets/clipboard.jsonl"),
            include_str!("../../../tests/fixtures/secrets/clipboard_heldout.jsonl"),
        ];
        let mut masks = 0;
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
                masks += 1;
            }
        }
        assert!(masks > 4_000, "{masks}");
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

    /// A search masking only the items its pattern matches as read replies byte for byte as one
    /// masking every item, for patterns aimed at the secrets' raw text (which must find nothing
    /// masked) and at what stays: in both modes that mask, the managed tab masked or not.
    #[test]
    fn a_search_masking_its_hits_only_replies_as_one_masking_all() {
        let items = clipboard();
        let page = |name: &str| TabPage {
            name: name.into(),
            total: items.len(),
            items: items.clone(),
        };
        let queries = [
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
        ];
        let within = SearchIn {
            text: true,
            note: true,
            tags: true,
        };
        let show = Show {
            text: true,
            tags: true,
            note: true,
            version: false,
        };
        for mode in [Redact::All, Redact::External] {
            let t = tools(mode, Vec::new());
            let (mut hits, mut as_read) = (0, 0);
            for q in queries {
                let pattern = compile(q);
                assert!(raw_first(q, &pattern, masks_of(&t.privacy)), "{q}");
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
                let whole = reply_of(&mask_pages(&t, vec![page("a"), page("mcp/b")], None, false));
                let read = std::sync::atomic::AtomicUsize::new(0);
                let wanted = |it: &Item| {
                    let hit = !matched_fields(it, &pattern, within).is_empty();
                    read.fetch_add(usize::from(hit), std::sync::atomic::Ordering::Relaxed);
                    hit
                };
                let first = mask_pages_where(
                    &t,
                    vec![page("a"), page("mcp/b")],
                    None,
                    false,
                    Some(&wanted),
                );
                assert_eq!(reply_of(&first), whole, "{q} in {mode:?}");
                // Hits in the external tab: the one masked in both modes.
                hits += whole.lines().filter(|l| l.starts_with("a[")).count();
                as_read += read.into_inner();
            }
            // Many hits, and many items the pattern matched as read that it does not masked (a
            // secret's own text): those the second match, on the masked text, dropped. ("all"
            // asks of both tabs' items, "external" of the external tab's.)
            let asked = if mode == Redact::All { 2 * hits } else { hits };
            assert!(hits > 500, "{hits}");
            assert!(as_read > asked + 300, "{as_read} {hits}");
        }
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
