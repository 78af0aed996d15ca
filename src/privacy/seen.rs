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
/// a lookup is a hash and a compare where the rules are two passes. Bounded: forgotten whole past
/// [`SEEN_TEXTS`] texts or [`SEEN_BYTES`] bytes.
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
    bytes: usize,
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

const SEEN_TEXTS: usize = 100_000;
const SEEN_BYTES: usize = 64 << 20;

impl<S: BuildHasher + Default> Seen<S> {
    /// What `text` became, if it was seen: `Some(None)` when it held nothing to mask.
    pub fn get(&self, text: &str) -> Option<Option<Arc<Masked>>> {
        self.find(text).map(|i| self.entries[i].masked.clone())
    }

    /// As [`Seen::get`], trying first the entry `at` points at (the one first seen after the
    /// text found last), then the table. A hit compares the whole text either way. A text found
    /// in the table before that entry (a tag or a note many items share, seen once) leaves the
    /// place it missed to be tried next too, so the items after it are found without the table.
    pub fn get_next(&self, text: &str, at: &mut Cursor) -> Option<Option<Arc<Masked>>> {
        let is = |i: usize| self.text(i) == Some(text);
        let i = if is(at.next) {
            at.resume = None;
            at.next
        } else if let Some(r) = at.resume.filter(|&r| is(r)) {
            at.resume = None;
            r
        } else {
            let i = self.find(text)?;
            if i < at.next && at.resume.is_none() {
                at.resume = Some(at.next);
            }
            i
        };
        at.next = i + 1;
        Some(self.entries[i].masked.clone())
    }

    /// `text`'s place in [`Seen::entries`].
    fn find(&self, text: &str) -> Option<usize> {
        let hash = self.hasher.hash_one(text);
        self.table
            .find(hash, |&i| self.text(i) == Some(text))
            .copied()
    }

    fn text(&self, i: usize) -> Option<&str> {
        self.entries
            .get(i)
            .and_then(|e| self.texts.get(e.at.clone()))
    }

    pub fn insert(&mut self, text: &str, masked: Option<Arc<Masked>>) {
        let size = text.len()
            + masked.as_ref().map_or(0, |m| {
                m.text.len() + m.masks.len() * std::mem::size_of::<Mask>()
            });
        if self.table.len() >= SEEN_TEXTS || self.bytes + size > SEEN_BYTES {
            *self = Self::default();
        }
        if let Some(i) = self.find(text) {
            // Masked twice at once (two reads of the same text): the same answer.
            self.entries[i].masked = masked;
            return;
        }
        self.bytes += size;
        let hash = self.hasher.hash_one(text);
        let at = self.texts.len()..self.texts.len() + text.len();
        self.texts.push_str(text);
        let i = self.entries.len();
        self.entries.push(Entry { hash, at, masked });
        let entries = &self.entries;
        self.table.insert_unique(hash, i, |&i| entries[i].hash);
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
