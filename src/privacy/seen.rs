//! The texts a redactor has masked lately, with what they became and where each mask sits, so
//! that a search, a listing or an edit of a text read again costs a lookup instead of the rules.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

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
/// Hashed with foldhash, not the standard SipHash: a warm search hashes every text it reads
/// (10,000 and more), and SipHash took twice as long for the same lookups (0.49 vs 0.21 ms for
/// 10,000 texts of 110 bytes). Its seed is random per map, so texts a stranger copies cannot be
/// chosen to collide; a collision would cost time only, since every hit compares the whole text.
#[derive(Default)]
pub struct Seen {
    texts: HashMap<Box<str>, Option<Arc<Masked>>, foldhash::fast::RandomState>,
    bytes: usize,
}

const SEEN_TEXTS: usize = 100_000;
const SEEN_BYTES: usize = 64 << 20;

impl Seen {
    /// What `text` became, if it was seen: `Some(None)` when it held nothing to mask.
    pub fn get(&self, text: &str) -> Option<Option<Arc<Masked>>> {
        self.texts.get(text).cloned()
    }

    pub fn insert(&mut self, text: &str, masked: Option<Arc<Masked>>) {
        let size = text.len()
            + masked.as_ref().map_or(0, |m| {
                m.text.len() + m.masks.len() * std::mem::size_of::<Mask>()
            });
        if self.texts.len() >= SEEN_TEXTS || self.bytes + size > SEEN_BYTES {
            *self = Seen::default();
        }
        self.bytes += size;
        self.texts.insert(text.into(), masked);
    }
}
