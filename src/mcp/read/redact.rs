//! Secrets masked in each page as it comes from CopyQ, before `tree`, `list`, `item` or `search`
//! sees it: previews are cut from masked text, and a search matches masked text, so a pattern
//! cannot probe inside a secret and `match:` cannot point at one. `mcp_validate` runs the same
//! read, so its size estimate is that of the masked reply. External tabs' names are masked like
//! text. Versions of items holding a mask are keyed hashes (see [`crate::mcp::mask`]).

use std::borrow::Cow;
use std::sync::Arc;

use super::cut::read_whole;
use super::parallel;
use crate::backend::{Item, TabPage};
use crate::clipboard::TabRef;
use crate::mcp::ToolState;
use crate::privacy::{Masked as MaskedText, PASSWORD_MANAGER, Privacy, Redactor};

/// A page as the caller may see it.
pub(super) struct Masked {
    /// The tab, its shown name masked like text when it is external and its mode masks it.
    pub tab: TabRef,
    pub page: TabPage,
    /// Each item's version as the caller sees it (only when asked: see [`crate::mcp::mask::version`]).
    pub versions: Vec<String>,
    /// The items (index in `page.items`, and the raw item as read) a mask changed where the read
    /// cut their text or note short, so that their previews may hold text from past the cut,
    /// unmasked (a secret the cut split is not recognised): see [`read_whole`]. Such rows are read
    /// again whole, masked, then cut.
    pub unsure: Vec<(usize, Item)>,
    /// By index, the items left as read, unmasked, because the read did not want them shown (see
    /// [`mask_pages_where`]): never to be shown. Empty when none was.
    pub left: Vec<bool>,
}

/// What [`mask_one`] found of row `index`, put in its page's [`Masked::unsure`] and
/// [`Masked::versions`] (the fields, not the page: its items may still be borrowed).
fn put(
    unsure: &mut Vec<(usize, Item)>,
    versions: &mut [String],
    index: usize,
    (raw, version): Found,
) {
    unsure.extend(raw.map(|raw| (index, raw)));
    if let (Some(v), Some(slot)) = (version, versions.get_mut(index)) {
        *slot = v;
    }
}

/// Whether CopyQ may have cut `text` to `budget` UTF-16 units.
fn maybe_cut(text: &str, budget: Option<usize>) -> bool {
    budget.is_some_and(|b| text.encode_utf16().count() + 1 >= b)
}

/// The most items a read shows under one lock of the redactor's cache: a warm search of 10,000
/// items holds it about 2 ms in all, and a listing read meanwhile waits at most for this many.
const HELD_ITEMS: usize = 1_000;

/// One item of a read the rules must mask (the cache did not remember all its texts), and what
/// masking it found.
struct Job<'a> {
    page: usize,
    /// The item's index in its page.
    index: usize,
    /// The tab's full name (an item's version is keyed to it).
    name: &'a str,
    redactor: &'a Redactor,
    it: &'a mut Item,
    /// What [`mask_one`] found, when it found anything (the item as read when its preview is
    /// unsure, see [`Masked::unsure`]; its version): boxed, as most items of a search find
    /// nothing, and a first search makes a job of each of 10,000 items and more (at 272 bytes a
    /// job, growing the vector and touching its pages made the loop making the jobs 4.3-6.3 ms;
    /// at 56, 1.5-2.0 ms).
    found: Option<Box<Found>>,
}

/// What [`mask_one`] found of an item: see [`put`].
type Found = (Option<Item>, Option<String>);

/// What the cache said of a text: `Some(None)` nothing to mask, `None` not seen lately.
type Answer = Option<Option<Arc<MaskedText>>>;

/// Each page of a read as the caller may see it: password-manager items hidden whole, in every
/// mode; the rest masked if the mode covers the tab. `budget`: the cut the pages were read with;
/// `versions`: whether to compute them.
///
/// Each item is shown here and now, in one pass under the lock of the redactor's cache (let go
/// every [`HELD_ITEMS`] items), when nothing is left for the rules to read: a tab the mode does
/// not mask, a password manager's item, an item whose every text the cache remembers (a warm
/// search of a whole history, where a job apiece cost more than the lookups). The rest, the items
/// the rules must read (the first search after start masks a whole history), are independent, so
/// are shared among threads when there are many ([`parallel::for_each`]); each comes out as it
/// would alone.
pub(super) fn mask_pages(
    tools: &ToolState,
    pages: Vec<TabPage>,
    budget: Option<usize>,
    versions: bool,
) -> Vec<Masked> {
    mask_pages_where(tools, pages, budget, versions, None)
}

/// Which items of the tabs the mode masks a read needs shown (masked): see [`mask_pages_where`].
#[derive(Clone, Copy)]
pub(super) struct Wanted<'w> {
    /// Asked of an item as read (its text derived from its source, if it has one).
    pub shows: &'w (dyn Fn(&Item) -> bool + Sync),
    /// Whether it is asked only of the items the redactor's cache cannot mask at once (a warm
    /// read's lookups cost a compare each): for a question that costs more than the lookups, as
    /// a search for a mask's word, which looks for the rules' words in every field too. Else
    /// it is asked first, and the cache only of the items wanted.
    pub after_cache: bool,
}

/// [`mask_pages`], where `wanted`, when given, says which items of the tabs the mode masks the
/// caller will show: the others are left as read (with their text derived) and must never be
/// shown. A search asks this of the items its pattern matches as read, when a match in a masked
/// text is sure to be one in the raw text too (see `search.rs`): the rest are not hits either way,
/// and the rules need not read them.
pub(super) fn mask_pages_where(
    tools: &ToolState,
    pages: Vec<TabPage>,
    budget: Option<usize>,
    versions: bool,
    wanted: Option<Wanted<'_>>,
) -> Vec<Masked> {
    let mut out: Vec<Masked> = pages
        .into_iter()
        .map(|page| {
            let mut tab = TabRef::from_full(&page.name);
            if let Some(r) = tools.privacy.redactor_for(tab.external) {
                mask(r, &mut tab.shown);
            }
            let versions = if versions {
                vec![String::new(); page.items.len()]
            } else {
                Vec::new()
            };
            Masked {
                tab,
                page,
                versions,
                unsure: Vec::new(),
                left: Vec::new(),
            }
        })
        .collect();
    let key = &tools.version_key;
    let mut jobs = Vec::new();
    let mut recall = None;
    // Items looked up under the lock held now.
    let mut held = 0;
    // The answers for the item at hand, in [`item_texts`]' order.
    let mut answers: Vec<Answer> = Vec::new();
    for (page, m) in out.iter_mut().enumerate() {
        let redactor = tools.privacy.redactor_for(m.tab.external);
        if redactor.is_none() {
            // Not held over a tab that needs no lookups.
            recall = None;
        }
        let name = m.page.name.as_str();
        let count = m.page.items.len();
        for (index, it) in m.page.items.iter_mut().enumerate() {
            let mut leave = || {
                if m.left.is_empty() {
                    m.left = vec![false; count];
                }
                m.left[index] = true;
            };
            let ask = wanted.filter(|_| redactor.is_some() && !it.secret);
            if ask.is_some_and(|w| !w.after_cache && !wants(w, it)) {
                leave();
                continue;
            }
            let rules = match redactor {
                Some(r) if !it.secret => {
                    // A text derived from a source (HTML, a file list) is not read yet.
                    let derived = it.text.is_empty() && it.content.rich.is_some();
                    if held == HELD_ITEMS {
                        // Let another read's lookups in.
                        (recall, held) = (None, 0);
                    }
                    held += 1;
                    let recall = recall.get_or_insert_with(|| r.recall());
                    answers.clear();
                    if !derived {
                        answers.extend(item_texts(it).map(|t| recall.get(t)));
                    }
                    if derived || answers.iter().any(Option::is_none) {
                        if ask.is_some_and(|w| w.after_cache && !wants(w, it)) {
                            leave();
                            continue;
                        }
                        jobs.push(Job {
                            page,
                            index,
                            name,
                            redactor: r,
                            it,
                            found: None,
                        });
                        continue;
                    }
                    Some((r, Some(answers.as_slice())))
                }
                Some(r) => Some((r, None)),
                None => None,
            };
            let shown = mask_one(key, name, rules, budget, versions, it);
            put(&mut m.unsure, &mut m.versions, index, shown);
        }
    }
    // The rules' own lookups (and the threads') take the lock one text at a time.
    drop(recall);
    if jobs.is_empty() {
        return out;
    }
    parallel::for_each(&mut jobs, |j| {
        let found = mask_one(
            key,
            j.name,
            Some((j.redactor, None)),
            budget,
            versions,
            j.it,
        );
        if found.0.is_some() || found.1.is_some() {
            j.found = Some(Box::new(found));
        }
    });
    let found: Vec<_> = jobs
        .into_iter()
        .filter_map(|j| Some((j.page, j.index, j.found?)))
        .collect();
    for (page, index, shown) in found {
        let m = &mut out[page];
        put(&mut m.unsure, &mut m.versions, index, *shown);
    }
    // In row order, as a read again asks for them.
    for m in &mut out {
        m.unsure.sort_by_key(|(index, _)| *index);
    }
    out
}

/// Whether `wanted` wants `it` (then it is masked and shown as usual); its text derived from its
/// source first, as it would be shown.
fn wants(wanted: Wanted<'_>, it: &mut Item) -> bool {
    crate::clipboard::derive_text(it);
    (wanted.shows)(it)
}

/// Has the rules read (and the redactor remember) every text of the items of `pages` that a read
/// left unmasked ([`Masked::left`]): after a search's reply, so that the next finds them known.
pub(super) fn remember_left(privacy: &Privacy, pages: &[Masked]) {
    for m in pages {
        let Some(r) = privacy.redactor_for(m.tab.external) else {
            continue;
        };
        for (it, _) in m.page.items.iter().zip(&m.left).filter(|(_, l)| **l) {
            item_texts(it).for_each(|t| r.remember(t));
        }
    }
}

/// The texts of `it` that [`mask_item`] masks, in its order.
fn item_texts(it: &Item) -> impl Iterator<Item = &str> {
    [it.text.as_str(), it.note.as_str()]
        .into_iter()
        .chain(it.tags.iter().map(String::as_str))
}

/// One item of tab `name` as shown: the item as read if its preview is unsure (see
/// [`Masked::unsure`]), and its version as the caller sees it if `versions`. `redactor`: the
/// rules, and what the cache said of each of the item's texts if it remembered them all.
fn mask_one(
    key: &[u8; 32],
    name: &str,
    redactor: Option<(&Redactor, Option<&[Answer]>)>,
    budget: Option<usize>,
    versions: bool,
    it: &mut Item,
) -> Found {
    let raw = versions.then(|| it.clone());
    // A text derived from a source the read cut may have lost a secret's tail the same way.
    let derives = it.text.is_empty() && it.content.rich.is_some() && budget.is_some();
    // Whether the item's text (0) or note (1), cut by the read, must be read whole: asked of
    // the cache's answer when it gave one (its lock is then held, so not asked again).
    let needs_whole = |i: usize, s: &str| {
        maybe_cut(s, budget)
            && !it.secret
            && match redactor {
                Some((_, Some(known))) => match known.get(i) {
                    Some(Some(Some(m))) => read_whole(&m.masks, s),
                    _ => false,
                },
                Some((r, None)) => read_whole(&r.masks_remembered(s), s),
                None => false,
            }
    };
    let cut = needs_whole(0, &it.text) || needs_whole(1, &it.note);
    let before = (cut || derives).then(|| it.clone());
    let changed = match redactor {
        Some((_, Some(known))) => {
            let mut answers = known.iter();
            show_with(
                it,
                Some(|s: &mut String| match answers.next() {
                    Some(Some(Some(m))) => {
                        *s = m.text.to_string();
                        true
                    }
                    _ => false,
                }),
            )
        }
        Some((r, None)) => show(Some(r), it),
        None => show(None, it),
    };
    let unsure = before.filter(|_| cut || changed);
    let version = raw.map(|raw| crate::mcp::mask::version(key, name, &raw, changed));
    (unsure, version)
}

/// Whether the external tab `full`'s name is masked in this mode: then no client can name it.
pub(super) fn name_masked(privacy: &Privacy, full: &str) -> bool {
    let tab = TabRef::from_full(full);
    privacy
        .redactor_for(tab.external)
        .is_some_and(|r| matches!(r.redact_remembered(&tab.shown), Cow::Owned(_)))
}

/// `items`, as a reply may show them from a managed (or, `external`, an external) tab: what
/// [`mask_pages`] does to a page, for the items a write's preview shows.
pub(crate) fn mask_items<'a>(
    privacy: &Privacy,
    external: bool,
    items: impl IntoIterator<Item = &'a mut Item>,
) {
    let redactor = privacy.redactor_for(external);
    for it in items {
        show(redactor, it);
    }
}

/// `it` as a reply shows it; whether that differs from the raw item.
pub(crate) fn show(redactor: Option<&Redactor>, it: &mut Item) -> bool {
    show_with(it, redactor.map(|r| |s: &mut String| mask(r, s)))
}

/// [`show`], each text masked by `mask` (whether it changed it), in [`item_texts`]' order.
fn show_with(it: &mut Item, mask: Option<impl FnMut(&mut String) -> bool>) -> bool {
    if it.secret {
        *it = hidden();
        return true;
    }
    // A text derived from HTML or a file list is shown, so masked, like any text.
    crate::clipboard::derive_text(it);
    mask.is_some_and(|m| mask_item(it, m))
}

/// What is shown of an item CopyQ marks as a password manager's: no text, tags or note.
fn hidden() -> Item {
    Item {
        text: PASSWORD_MANAGER.into(),
        secret: true,
        ..Item::default()
    }
}

fn mask_item(it: &mut Item, mut mask: impl FnMut(&mut String) -> bool) -> bool {
    let mut changed = mask(&mut it.text);
    changed |= mask(&mut it.note);
    for tag in &mut it.tags {
        changed |= mask(tag);
    }
    changed
}

fn mask(r: &Redactor, s: &mut String) -> bool {
    if let Cow::Owned(masked) = r.redact_remembered(s) {
        *s = masked;
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::backend::{Backend, Item, MemoryBackend};
    use crate::clipboard::Roots;
    use crate::mcp::ToolState;
    use crate::privacy::{Privacy, Redact};

    const KEY: &str = "AKIAZ3MHQ7XWPLBV4KTN";

    fn tools(mode: Redact) -> ToolState {
        let mut vault = Item::new("hunter2", &["pw"], "bank");
        vault.secret = true;
        let tabs = vec![
            (
                "mcp/info".into(),
                vec![Item::new(&format!("managed {KEY}"), &[], "")],
            ),
            (
                "clipboard".into(),
                vec![
                    Item::new(&format!("aws {KEY} end"), &["t"], &format!("note {KEY}")),
                    vault,
                ],
            ),
        ];
        ToolState::new(
            Backend::Memory(MemoryBackend::with_tabs(tabs)),
            Roots::default(),
        )
        .with_privacy(Privacy::new(mode, &[]).expect("builds"))
    }

    async fn read(tools: &ToolState, args: Value) -> String {
        let map = args.as_object().cloned().unwrap_or_default();
        match crate::mcp::read::call(tools, &crate::clipboard::Coverage::All, &map).await {
            Ok(reply) => reply.text,
            Err(e) => e.line(),
        }
    }

    const MASKED: &str = "aws [redacted:aws-access-token] end";

    /// A write's preview shows the item it would delete as a read would show it.
    async fn delete_preview(mode: Redact, vault_in_managed: bool) -> String {
        let tools = std::sync::Arc::new(tools(mode));
        if vault_in_managed {
            let Backend::Memory(mem) = &tools.backend else {
                unreachable!("memory backend")
            };
            let mut vault = Item::new("hunter2", &[], "");
            vault.secret = true;
            mem.insert("mcp/info", &vault, 200).expect("insert");
        }
        let who = crate::auth::Principal {
            subject: "w".into(),
            role: crate::auth::Role::Write,
            token_id: "j".into(),
            grant: None,
            tabs: crate::clipboard::Coverage::All,
            expires: None,
        };
        let args = json!({"mode": "delete", "tab": "info", "index": 0, "intent": "preview"});
        crate::mcp::write::call(&tools, &who, args.as_object().expect("object"))
            .await
            .unwrap_or_else(|e| e.line())
    }

    #[tokio::test]
    async fn write_previews_mask_what_copyq_holds_like_reads() {
        let preview = |text: &str| {
            format!("preview|mode:delete\ntab:info|index:0\nwill_delete:\ntext:\"{text}\"\ntags:[]")
        };
        assert_eq!(
            delete_preview(Redact::All, false).await,
            preview("managed [redacted:aws-access-token]")
        );
        assert_eq!(
            delete_preview(Redact::External, false).await,
            preview(&format!("managed {KEY}"))
        );
        assert_eq!(
            delete_preview(Redact::Off, true).await,
            preview("[redacted:password-manager]")
        );
    }

    /// A read large enough to be masked on several threads comes out item for item as each item
    /// masked alone, in order: texts, notes, tags, versions, and the rows whose previews are unsure.
    #[test]
    fn a_large_read_masked_on_threads_is_each_item_masked_alone() {
        let texts = crate::mcp::read::corpus_texts();
        let items: Vec<Item> = (0..2 * super::parallel::SHARED_FROM)
            .map(|i| {
                let text = &texts[i % texts.len()];
                let note = &texts[(i * 7 + 3) % texts.len()];
                let mut it = Item::new(text, &[note.lines().next().unwrap_or("")], note);
                it.secret = i % 97 == 0;
                it
            })
            .collect();
        // "all" masks both pages (on threads); "external" masks "a" and shows "mcp/b" as it is,
        // item by item on this thread: each way, every item as `mask_one` makes it alone.
        for mode in [Redact::All, Redact::External] {
            a_large_read_in(mode, &items);
        }
    }

    fn a_large_read_in(mode: Redact, items: &[Item]) {
        let t = tools(mode);
        let budget = Some(crate::mcp::format::PREVIEW_UNITS);
        let page = |name: &str| crate::backend::TabPage {
            name: name.into(),
            total: items.len(),
            items: items.to_vec(),
        };
        // A third of the texts seen before: the cache answers for some items (shown at once) and
        // not others (given to the rules, on threads); then all of them, read again.
        let some: Vec<Item> = items.iter().step_by(3).cloned().collect();
        let seen = crate::backend::TabPage {
            name: "a".into(),
            total: some.len(),
            items: some,
        };
        super::mask_pages(&t, vec![seen], budget, true);
        for _ in 0..2 {
            let got = super::mask_pages(&t, vec![page("a"), page("mcp/b")], budget, true);
            each_as_alone(&t, mode, items, budget, got);
        }
    }

    fn each_as_alone(
        t: &ToolState,
        mode: Redact,
        items: &[Item],
        budget: Option<usize>,
        got: Vec<super::Masked>,
    ) {
        assert_eq!(got.len(), 2);
        for m in got {
            let r = t.privacy.redactor_for(m.tab.external);
            let mut unsure = Vec::new();
            let mut versions = Vec::new();
            let mut want = items.to_vec();
            for (i, (raw, it)) in items.iter().zip(&mut want).enumerate() {
                let (u, v) = super::mask_one(
                    &t.version_key,
                    &m.page.name,
                    r.map(|r| (r, None)),
                    budget,
                    true,
                    it,
                );
                unsure.extend(u.map(|u| (i, u)));
                versions.extend(v);
                assert_eq!(
                    versions.last(),
                    Some(&crate::mcp::mask::version(
                        &t.version_key,
                        &m.page.name,
                        raw,
                        it != raw
                    ))
                );
            }
            assert_eq!(m.page.items, want, "{}", m.page.name);
            assert_eq!(m.versions, versions);
            assert_eq!(m.unsure, unsure);
            let masked = m
                .page
                .items
                .iter()
                .filter(|it| it.text.contains("[redacted:"))
                .count();
            assert_eq!(
                masked > 500,
                r.is_some(),
                "{mode:?} {}: {masked}",
                m.page.name
            );
            // Password managers' items are hidden whatever the mode.
            assert!(
                m.page
                    .items
                    .iter()
                    .any(|it| it.text == crate::privacy::PASSWORD_MANAGER)
            );
        }
    }

    #[tokio::test]
    async fn external_tabs_are_masked_in_every_mode_of_read() {
        let t = tools(Redact::External);
        let list = read(
            &t,
            json!({"mode": "list", "tab": "clipboard", "scope": "external", "include_note": true}),
        )
        .await;
        assert_eq!(
            list,
            format!(
                "mode:list|tab:clipboard|scope:external|total:2|showing:0-1\n0|\"{MASKED}\"|[t]|note:note [redacted:aws-access-token]\n1|\"[redacted:password-manager]\"|[]"
            )
        );
        let item = read(
            &t,
            json!({"mode": "item", "tab": "clipboard", "index": 0, "scope": "external"}),
        )
        .await;
        assert!(item.contains(&format!("text:{MASKED}")), "{item}");
        let tree = read(&t, json!({"mode": "tree", "scope": "all"})).await;
        assert!(
            tree.contains(MASKED) && tree.contains(&format!("managed {KEY}")),
            "{tree}"
        );
    }

    #[tokio::test]
    async fn search_cannot_see_inside_a_mask() {
        let t = tools(Redact::External);
        let probe = read(
            &t,
            json!({"mode": "search", "query": "AKIAZ3", "scope": "external"}),
        )
        .await;
        assert_eq!(probe, "mode:search|query:AKIAZ3|scope:external|results:0");
        let pw = read(
            &t,
            json!({"mode": "search", "query": "hunter|bank|pw", "scope": "all"}),
        )
        .await;
        assert_eq!(pw, "mode:search|query:hunter|bank|pw|scope:all|results:0");
        let kind = read(&t, json!({"mode": "search", "query": "redacted", "scope": "external", "search_in": "text"})).await;
        assert_eq!(
            kind,
            format!(
                "mode:search|query:redacted|scope:external|results:2\nclipboard[0]|\"{MASKED}\"|[t]|match:text|external\nclipboard[1]|\"[redacted:password-manager]\"|[]|match:text|external"
            )
        );
        // The managed tab is not masked in this mode: its key is found there only.
        let managed = read(
            &t,
            json!({"mode": "search", "query": "AKIAZ3", "scope": "all"}),
        )
        .await;
        assert!(managed.contains("results:1\ninfo[0]"), "{managed}");
    }

    #[tokio::test]
    async fn all_masks_managed_tabs_and_off_masks_nothing_but_passwords() {
        let all = tools(Redact::All);
        let item = read(&all, json!({"mode": "item", "tab": "info", "index": 0})).await;
        assert!(
            item.contains("text:managed [redacted:aws-access-token]"),
            "{item}"
        );
        let off = tools(Redact::Off);
        let list = read(
            &off,
            json!({"mode": "list", "tab": "clipboard", "scope": "external"}),
        )
        .await;
        assert!(list.contains(&format!("aws {KEY} end")), "{list}");
        assert!(
            list.contains("1|\"[redacted:password-manager]\"|[]"),
            "{list}"
        );
    }

    #[tokio::test]
    async fn validate_measures_the_masked_reply() {
        let t = tools(Redact::External);
        let params = json!({"mode": "item", "tab": "clipboard", "index": 0, "scope": "external"});
        let reply = read(&t, params.clone()).await;
        let map = json!({"tool": "read", "params": params});
        let reader = crate::auth::Principal {
            subject: "r".into(),
            role: crate::auth::Role::Read,
            token_id: "j".into(),
            grant: None,
            tabs: crate::clipboard::Coverage::All,
            expires: None,
        };
        let got = crate::mcp::validate::call(&t, &reader, map.as_object().unwrap())
            .await
            .unwrap_or_else(|e| e.line());
        let tokens = crate::mcp::validate::estimate_tokens(&reply);
        assert_eq!(
            got,
            format!("valid:true|warnings:0|estimated_tokens:{tokens}")
        );
    }
}
