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
/// its buffer's room and what the masked texts became all counted (a text that alone would not
/// fit is not remembered).
///
/// The texts are kept one after another in one buffer, in the order first seen: a search reads
/// the history in the same order each time, so the compares of a search read that buffer in
/// sequence, where a copy of each text on the heap of its own cost a cache miss a lookup (the
/// largest part of a warm search's added time). Hashed with foldhash, not the standard SipHash
/// (half the time for the same lookups); its seed is random per cache, so texts a stranger copies
/// cannot be chosen to collide, and a collision would cost time only.
#[derive(Default)]
pub struct Seen<S = foldhash::fast::RandomState> {
    table: HashTable<Entry>,
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

/// The most texts remembered.
const SEEN_TEXTS: usize = 50_000;
/// The most memory a cache holds, all counted: the gateway's memory budget (README, "Memory")
/// gives it 8 MiB: 2 MiB of table, 1 MiB of masked texts, 4.9 MiB of texts (10,000 of 500 bytes).
pub const SEEN_BYTES: usize = 8 << 20;
/// Of [`SEEN_BYTES`], what the masked texts may hold.
const MASKED_BYTES: usize = 1 << 20;
/// The most the table may take: it grows as texts come (a table made for [`SEEN_TEXTS`] at once
/// spread a search's lookups over 2 MiB and slowed a warm search), to this many buckets at most
/// (hashbrown's: a power of two, at most 7/8 full), each an [`Entry`] and a control byte, and 16
/// control bytes more.
const TABLE_BYTES: usize =
    (SEEN_TEXTS * 8 / 7).next_power_of_two() * (std::mem::size_of::<Entry>() + 1) + 16;
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
    /// What `text` became, if it was seen: `Some(None)` when it held nothing to mask.
    pub fn get(&self, text: &str) -> Option<Option<Arc<Masked>>> {
        let hash = self.hasher.hash_one(text);
        self.table
            .find(hash, |e| self.texts.get(e.at.clone()) == Some(text))
            .map(|e| e.masked.clone())
    }

    pub fn insert(&mut self, text: &str, masked: Option<Arc<Masked>>) {
        let hash = self.hasher.hash_one(text);
        let texts = &self.texts;
        if let Some(e) = self
            .table
            .find_mut(hash, |e| texts.get(e.at.clone()) == Some(text))
        {
            // Masked twice at once (two reads of the same text): the same answer.
            self.masked = self.masked - e.masked.as_deref().map_or(0, masked_size)
                + masked.as_deref().map_or(0, masked_size);
            e.masked = masked;
            return;
        }
        let extra = masked.as_deref().map_or(0, masked_size);
        if self.table.len() >= SEEN_TEXTS || !self.fits(text.len(), extra) {
            // Forgotten whole (the hasher's seed kept: `hash` is under it).
            self.table = HashTable::new();
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
        self.masked += extra;
        let at = self.texts.len()..need;
        self.texts.push_str(text);
        self.table
            .insert_unique(hash, Entry { hash, at, masked }, |e| e.hash);
    }

    /// Whether a text of `len` bytes fits, with `extra` bytes of what it became.
    fn fits(&self, len: usize, extra: usize) -> bool {
        self.texts.len() + len <= TEXT_BYTES && self.masked + extra <= MASKED_BYTES
    }

    /// The memory this cache holds: the table, the buffer's room, the masked texts.
    #[cfg(test)]
    fn footprint(&self) -> usize {
        self.table.allocation_size() + self.texts.capacity() + self.masked
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
    /// bound's worth, then one text larger than the bound (not remembered); what was inserted
    /// last is still answered.
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
}
