//! The texts a redactor has masked lately, with what they became and where each mask sits, so
//! that a search, a listing or an edit of a text read again costs a lookup instead of the rules.

use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::Arc;

use hashbrown::HashTable;

/// Where one mask sits: the secret's bytes in the raw text, `[redacted:KIND]`'s in the masked one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    pub raw: Range<usize>,
    pub shown: Range<usize>,
}

/// A text that holds a secret, as shown, and where its masks are.
#[derive(Debug, PartialEq, Eq)]
pub struct Masked {
    pub text: Box<str>,
    pub masks: Box<[Mask]>,
}

/// Texts already redacted, by their whole content (so a hit is exact, never a hash's guess), with
/// what they became (`None`: nothing to mask). A search reads the same history again and again;
/// a lookup is a hash and a compare where the rules are two passes. Bounded: forgotten whole
/// rather than holding more than [`SEEN_TEXTS`] texts or [`SEEN_BYTES`] bytes of memory, its table,
/// its list of entries, its buffer's room and what the masked texts became all counted (a text
/// that alone would not fit is not remembered).
///
/// The texts are kept one after another in one buffer, in the order first seen: a search reads
/// the history in the same order each time, so the compares of a search read that buffer in
/// sequence, where a copy of each text on the heap of its own cost a cache miss a lookup (the
/// largest part of a warm search's added time). [`Seen::get_next`] goes further: the text after
/// the one a search just found is most likely the one first seen after it, so that entry is
/// compared first, and the table is probed only when it is not the text. Hashed with foldhash,
/// not the standard SipHash (half the time for the same lookups); its seed is random per cache,
/// so texts a stranger copies cannot be chosen to collide, and a collision would cost time only.
#[derive(Default)]
pub struct Seen<S = foldhash::fast::RandomState> {
    /// Each text's place in [`Seen::entries`], by its hash.
    table: HashTable<usize>,
    /// In the order first seen.
    entries: Vec<Entry>,
    texts: String,
    hasher: S,
    /// What the masked texts became: their own allocations, beside the table and the buffer.
    masked: usize,
}

struct Entry {
    hash: u64,
    /// Where the text sits in [`Seen::texts`].
    at: Range<usize>,
    masked: Option<Arc<Masked>>,
}

/// Where a run of [`Seen::get_next`] lookups stands.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// The entry after the last one found.
    next: usize,
    /// Where `next` was before a text was found behind it.
    resume: Option<usize>,
}

/// The most texts remembered.
const SEEN_TEXTS: usize = 50_000;
/// The most memory a cache holds, all counted: the gateway's memory budget (README, "Memory")
/// gives it 8 MiB: 2.1 MiB of table and entries, 1 MiB of masked texts, the rest for the texts
/// (10,000 of 490 bytes).
pub const SEEN_BYTES: usize = 8 << 20;
/// Of [`SEEN_BYTES`], what the masked texts may hold.
const MASKED_BYTES: usize = 1 << 20;
/// The most the table and the entries may take. Both grow as texts come (a table made for
/// [`SEEN_TEXTS`] at once spread a search's lookups over 2 MiB and slowed a warm search): the
/// table to this many buckets at most (hashbrown's: a power of two, at most 7/8 full), each an
/// index and a control byte, and 16 control bytes more; the entries to [`SEEN_TEXTS`].
const TABLE_BYTES: usize = (SEEN_TEXTS * 8 / 7).next_power_of_two()
    * (std::mem::size_of::<usize>() + 1)
    + 16
    + SEEN_TEXTS * std::mem::size_of::<Entry>();
/// Of [`SEEN_BYTES`], what the buffer of texts may hold: the rest.
const TEXT_BYTES: usize = SEEN_BYTES - MASKED_BYTES - TABLE_BYTES;

/// What `masked` holds on the heap: the `Arc`'s counts and value, its text and its masks.
fn masked_size(masked: &Masked) -> usize {
    2 * std::mem::size_of::<usize>()
        + std::mem::size_of::<Masked>()
        + masked.text.len()
        + std::mem::size_of_val(&*masked.masks)
}

impl<S: BuildHasher + Default> Seen<S> {
    /// [`Seen::get_hashed`], hashing `text` itself.
    #[cfg(test)]
    pub fn get(&self, text: &str) -> Option<Option<Arc<Masked>>> {
        self.get_hashed(text, self.hash(text))
    }

    /// The hash `text` is filed under: a text missed by [`Seen::get_hashed`] and then inserted
    /// by [`Seen::insert_hashed`] is hashed once (the seed never changes, so a hash taken under
    /// one lock serves under the next).
    pub fn hash(&self, text: &str) -> u64 {
        self.hasher.hash_one(text)
    }

    /// What `text` became, if it was seen (`Some(None)`: it held nothing to mask); `hash`:
    /// [`Seen::hash`] of it.
    pub fn get_hashed(&self, text: &str, hash: u64) -> Option<Option<Arc<Masked>>> {
        self.find(text, hash)
            .map(|i| self.entries[i].masked.clone())
    }

    /// As [`Seen::get_hashed`], trying first the entry `at` points at (the one first seen after the
    /// text found last), then the table. A hit compares the whole text either way. A text found
    /// in the table before that entry (a tag or a note many items share, seen once) leaves the
    /// place it missed to be tried next too, so the items after it are found without the table.
    pub fn get_next(&self, text: &str, at: &mut Cursor) -> Option<Option<Arc<Masked>>> {
        let is = |i: usize| self.text(i) == Some(text.as_bytes());
        let i = if is(at.next) {
            at.resume = None;
            at.next
        } else if let Some(r) = at.resume.filter(|&r| is(r)) {
            at.resume = None;
            r
        } else if self.entries.is_empty() {
            // Nothing seen yet (the first search after start): no text to hash.
            return None;
        } else {
            let i = self.find(text, self.hash(text))?;
            if i < at.next && at.resume.is_none() {
                at.resume = Some(at.next);
            }
            i
        };
        at.next = i + 1;
        Some(self.entries[i].masked.clone())
    }

    /// `text`'s place in [`Seen::entries`]; `hash`: [`Seen::hash`] of it.
    fn find(&self, text: &str, hash: u64) -> Option<usize> {
        self.table
            .find(hash, |&i| self.text(i) == Some(text.as_bytes()))
            .copied()
    }

    /// Entry `i`'s text, as bytes: compared whole, so no need to find its characters' bounds.
    fn text(&self, i: usize) -> Option<&[u8]> {
        self.entries
            .get(i)
            .and_then(|e| self.texts.as_bytes().get(e.at.clone()))
    }

    /// [`Seen::insert_hashed`], hashing `text` itself.
    #[cfg(test)]
    pub fn insert(&mut self, text: &str, masked: Option<Arc<Masked>>) {
        self.insert_hashed(text, self.hash(text), masked);
    }

    /// Remembers what `text` became; `hash`: [`Seen::hash`] of it.
    pub fn insert_hashed(&mut self, text: &str, hash: u64, masked: Option<Arc<Masked>>) {
        if let Some(i) = self.find(text, hash) {
            // Masked twice at once (two reads of the same text): the same answer.
            let e = &mut self.entries[i];
            self.masked = self.masked - e.masked.as_deref().map_or(0, masked_size)
                + masked.as_deref().map_or(0, masked_size);
            e.masked = masked;
            return;
        }
        let extra = masked.as_deref().map_or(0, masked_size);
        if self.entries.len() >= SEEN_TEXTS || !self.fits(text.len(), extra) {
            // Forgotten whole (the hasher's seed kept). A search's cursor into the entries stays
            // safe: an entry is taken only when its text is the one looked up.
            self.table = HashTable::new();
            self.entries = Vec::new();
            self.texts = String::new();
            self.masked = 0;
            if !self.fits(text.len(), extra) {
                return;
            }
        }
        let need = self.texts.len() + text.len();
        if need > self.texts.capacity() {
            // Doubled as a `String` grows, but never past its room.
            let grown = (2 * self.texts.capacity()).max(need).min(TEXT_BYTES);
            self.texts.reserve_exact(grown - self.texts.len());
        }
        if self.entries.len() == self.entries.capacity() {
            let grown = (2 * self.entries.capacity()).clamp(64, SEEN_TEXTS);
            self.entries.reserve_exact(grown - self.entries.len());
        }
        self.masked += extra;
        let at = self.texts.len()..need;
        self.texts.push_str(text);
        let i = self.entries.len();
        self.entries.push(Entry { hash, at, masked });
        let entries = &self.entries;
        self.table.insert_unique(hash, i, |&i| entries[i].hash);
    }

    /// Room for `texts` more texts of `bytes` bytes in all, as far as the bound allows: the first
    /// search inserts 10,000 texts and more at once, and growing the buffer, the entries and the
    /// table as they came copied each about twice.
    pub fn reserve(&mut self, texts: usize, bytes: usize) {
        let texts = texts.min(SEEN_TEXTS.saturating_sub(self.entries.len()));
        let bytes = bytes.min(TEXT_BYTES.saturating_sub(self.texts.len()));
        self.texts.reserve_exact(bytes);
        self.entries.reserve_exact(texts);
        let entries = &self.entries;
        self.table.reserve(texts, |&i| entries[i].hash);
    }

    /// Whether a text of `len` bytes fits, with `extra` bytes of what it became.
    fn fits(&self, len: usize, extra: usize) -> bool {
        self.texts.len() + len <= TEXT_BYTES && self.masked + extra <= MASKED_BYTES
    }

    /// The memory this cache holds: the table, the entries, the buffer's room, the masked texts.
    #[cfg(test)]
    fn footprint(&self) -> usize {
        self.table.allocation_size()
            + self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.texts.capacity()
            + self.masked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hasher under which every text collides, so that each lookup compares every entry.
    #[derive(Default)]
    struct Collide;

    impl std::hash::Hasher for Collide {
        fn finish(&self) -> u64 {
            7
        }
        fn write(&mut self, _: &[u8]) {}
    }

    /// The cache never holds more than [`SEEN_BYTES`], its table, its buffer's room and the masked
    /// texts counted, however much is read through it: texts of every size, some masked, twice the
    /// bound's worth, room asked for ahead now and then, then one text larger than the bound (not
    /// remembered); what was inserted last is still answered.
    #[test]
    fn never_holds_more_than_its_bound() {
        let mut seen: Seen = Seen::default();
        let mut inserted = 0;
        let mut i = 0usize;
        while inserted < 2 * SEEN_BYTES {
            let text = format!("{i:08} {}", "x".repeat(i % 4093));
            let masked = i.is_multiple_of(7).then(|| {
                Arc::new(Masked {
                    text: format!("{i} [redacted:kind] {}", "y".repeat(i % 511)).into(),
                    masks: vec![
                        Mask {
                            raw: 0..1,
                            shown: 0..1
                        };
                        1 + i % 3
                    ]
                    .into(),
                })
            });
            seen.insert(&text, masked.clone());
            if i.is_multiple_of(97) {
                // Room asked for ahead, up to far more than the bound holds.
                seen.reserve(i * 31, i * 4096);
            }
            assert!(
                seen.footprint() <= SEEN_BYTES,
                "{} bytes after {i} texts",
                seen.footprint()
            );
            assert_eq!(seen.get(&text), Some(masked), "{i}");
            inserted += text.len();
            i += 1;
        }
        let huge = "z".repeat(SEEN_BYTES);
        seen.insert(&huge, None);
        assert!(seen.footprint() <= SEEN_BYTES);
        assert_eq!(seen.get(&huge), None);
    }

    /// A hit is the text's own answer, never another's, even when every hash is the same: texts
    /// that share a prefix, that are a prefix of another, or that sit side by side in the buffer
    /// (so that their concatenation is there too) each get their own.
    #[test]
    fn a_hit_is_the_exact_text_only() {
        let mut seen: Seen<std::hash::BuildHasherDefault<Collide>> = Seen::default();
        let masked = |s: &str| {
            Some(Arc::new(Masked {
                text: s.into(),
                masks: Box::new([]),
            }))
        };
        seen.insert("ab", masked("1"));
        seen.insert("c", None);
        seen.insert("abc", masked("2"));
        assert_eq!(seen.get("ab"), Some(masked("1")));
        assert_eq!(seen.get("c"), Some(None));
        assert_eq!(seen.get("abc"), Some(masked("2")));
        for other in ["a", "b", "bc", "abcc", "", "ab "] {
            assert_eq!(seen.get(other), None, "{other:?}");
        }
        seen.insert("ab", masked("3"));
        assert_eq!(seen.get("ab"), Some(masked("3")));
        assert_eq!(seen.table.len(), 3);
    }

    fn cursor(next: usize, resume: Option<usize>) -> Cursor {
        Cursor { next, resume }
    }

    /// The entry after the last one found is taken only if it is the text, whole: a text it
    /// starts with, or one that starts with it, is looked up in the table (and found or not
    /// there), whatever entry the cursor points at.
    #[test]
    fn the_next_entry_is_a_hit_only_if_it_is_the_text() {
        let mut seen: Seen<std::hash::BuildHasherDefault<Collide>> = Seen::default();
        let masked = |s: &str| {
            Some(Arc::new(Masked {
                text: s.into(),
                masks: Box::new([]),
            }))
        };
        for (i, t) in ["ab", "abc", "c", "b"].iter().enumerate() {
            seen.insert(t, masked(&i.to_string()));
        }
        let mut at = Cursor::default();
        assert_eq!(seen.get_next("ab", &mut at), Some(masked("0")));
        assert_eq!(at, cursor(1, None));
        assert_eq!(seen.get_next("abc", &mut at), Some(masked("1")));
        assert_eq!(at, cursor(2, None));
        // Entry 2 is "c": "cb" and "" start or end there but are not it.
        for other in ["cb", "", "abcc"] {
            let mut at = cursor(2, Some(0));
            assert_eq!(seen.get_next(other, &mut at), None, "{other:?}");
            assert_eq!(at, cursor(2, Some(0)));
        }
        // Entry 9 does not exist: "b" is found in the table, and the cursor follows it.
        let mut at = cursor(9, None);
        assert_eq!(seen.get_next("b", &mut at), Some(masked("3")));
        assert_eq!(at, cursor(4, Some(9)));
    }

    /// A text found behind the cursor (a tag every tenth item shares) leaves the place it missed
    /// to be tried after it, whole like any hit: the next item's text is found there.
    #[test]
    fn a_text_found_behind_the_cursor_leaves_its_place_to_resume() {
        let mut seen: Seen<std::hash::BuildHasherDefault<Collide>> = Seen::default();
        for t in ["item 1", "tag", "item 2", "item 3", "item 33"] {
            seen.insert(t, None);
        }
        let mut at = cursor(3, None);
        assert_eq!(seen.get_next("tag", &mut at), Some(None));
        assert_eq!(at, cursor(2, Some(3)));
        // Neither entry 2 ("item 2") nor 3 ("item 3") is "item 33": found in the table.
        let mut other = at;
        assert_eq!(seen.get_next("item 33", &mut other), Some(None));
        assert_eq!(other, cursor(5, Some(3)));
        assert_eq!(seen.get_next("item 3", &mut at), Some(None));
        assert_eq!(at, cursor(4, None));
    }
}
