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
/// largest part of a warm search's added time). Hashed with foldhash, not the standard SipHash
/// (half the time for the same lookups); its seed is random per cache, so texts a stranger copies
/// cannot be chosen to collide, and a collision would cost time only.
#[derive(Default)]
pub struct Seen<S = foldhash::fast::RandomState> {
    table: HashTable<Entry>,
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

const SEEN_TEXTS: usize = 100_000;
const SEEN_BYTES: usize = 64 << 20;

impl<S: BuildHasher + Default> Seen<S> {
    /// What `text` became, if it was seen: `Some(None)` when it held nothing to mask.
    pub fn get(&self, text: &str) -> Option<Option<Arc<Masked>>> {
        let hash = self.hasher.hash_one(text);
        self.table
            .find(hash, |e| self.texts.get(e.at.clone()) == Some(text))
            .map(|e| e.masked.clone())
    }

    pub fn insert(&mut self, text: &str, masked: Option<Arc<Masked>>) {
        let size = text.len()
            + masked.as_ref().map_or(0, |m| {
                m.text.len() + m.masks.len() * std::mem::size_of::<Mask>()
            });
        if self.table.len() >= SEEN_TEXTS || self.bytes + size > SEEN_BYTES {
            *self = Self::default();
        }
        let hash = self.hasher.hash_one(text);
        let texts = &self.texts;
        if let Some(e) = self
            .table
            .find_mut(hash, |e| texts.get(e.at.clone()) == Some(text))
        {
            // Masked twice at once (two reads of the same text): the same answer.
            e.masked = masked;
            return;
        }
        self.bytes += size;
        let at = self.texts.len()..self.texts.len() + text.len();
        self.texts.push_str(text);
        self.table
            .insert_unique(hash, Entry { hash, at, masked }, |e| e.hash);
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
}
