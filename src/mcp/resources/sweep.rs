//! What one poll of a followed tab reads, and what it makes of it: the tab's head (its row count
//! and newest [`HEAD`] rows) every poll, and beside it one deeper chunk of [`DEEP`] rows, the next
//! one each poll, wrapping. Each part is hashed whole (every text, tag and note uncut, and the
//! formats an item holds with their sizes); a chunk whose hash differs from its last one is a
//! change. A new head (the count or a newest row changed) shifts rows under the chunks, so their
//! hashes are dropped and learnt again.
//!
//! A tab of N rows has `ceil((N - HEAD) / DEEP)` chunks, one read per poll: an edit deeper than the
//! head is seen within that many polls (200 rows: 2; 1,000: 11; 10,000: 111). A chunk whose rows
//! weigh more than [`BUDGET`] (a tab of screenshots: CopyQ's socket sends a row's formats only with
//! their bytes) makes the sweep rest a poll for each further [`BUDGET`] it weighed, so that
//! following a tab of images costs CopyQ about one [`BUDGET`] a poll beside the head, not tens of MB.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;

use crate::backend::Item;

/// The newest rows read every poll.
pub const HEAD: usize = 20;
/// The deeper rows read beside the head, a chunk per poll: with [`HEAD`], a tab of 200 rows is
/// two chunks, swept in two polls.
pub const DEEP: usize = 90;
/// The bytes a deep chunk may weigh per poll, on average: a heavier one is followed by rests.
pub const BUDGET: u64 = 2 << 20;

/// One tab's sweep: where it is, and what it has seen.
#[derive(Debug, Default, Clone)]
pub struct Sweep {
    /// The hash of the last head read (`None` before the first read).
    head: Option<u64>,
    /// The tab's row count at the last read.
    total: usize,
    /// Each chunk's hash when it was last read since the head last changed.
    chunks: Vec<Option<u64>>,
    /// The chunk the next poll reads.
    next: usize,
    /// Changes seen so far (a new head, a chunk's new hash): what the fingerprint follows.
    changes: u64,
    /// Polls left to read no chunk, after a chunk heavier than [`BUDGET`].
    rest: u64,
}

impl Sweep {
    fn chunk_count(&self) -> usize {
        self.total.saturating_sub(HEAD).div_ceil(DEEP)
    }

    /// The chunk the next read covers, and its rows (empty when the tab has none past its head).
    /// Before the first read the count is unknown: the first chunk is read whole (rows past the
    /// tab's end come back empty), so that a sweep starts knowing it.
    pub fn plan(&self) -> (usize, Range<usize>) {
        let (total, chunk) = match self.head {
            None => (HEAD + DEEP, 0),
            Some(_) if self.rest > 0 => return (self.next, HEAD..HEAD),
            Some(_) if self.next < self.chunk_count() => (self.total, self.next),
            Some(_) => (self.total, 0),
        };
        let start = HEAD + chunk * DEEP;
        (chunk, start..total.min(start + DEEP).max(start))
    }

    /// Takes in a read: the tab's count and head (`None`: the tab is missing), and `chunk`'s rows
    /// as planned (`None` past the tab's end). Returns the tab's fingerprint, which changes
    /// whenever a change was seen.
    pub fn record(
        &mut self,
        total: Option<usize>,
        head: &[Option<Item>],
        (chunk, rows): (usize, &[Option<Item>]),
    ) -> u64 {
        let head = hash_of(&(total, hash_items(head)));
        if self.head != Some(head) {
            if self.head.is_some() {
                self.changes += 1;
            }
            self.head = Some(head);
            self.total = total.unwrap_or(0);
            self.chunks = vec![None; self.chunk_count()];
            self.next = 0;
        }
        // The chunk's rows in the tab as it is now (its count may have changed since the plan):
        // kept when the read covered them all, as it did in the same batch as the head.
        if rows.is_empty() && self.rest > 0 {
            self.rest -= 1;
            return hash_of(&(head, self.changes));
        }
        let start = HEAD + chunk * DEEP;
        let wanted = self.total.min(start + DEEP).saturating_sub(start);
        if let Some(seen) = self.chunks.get_mut(chunk)
            && let Some(rows) = rows.get(..wanted)
        {
            let now = hash_items(rows);
            if seen.is_some_and(|seen| seen != now) {
                self.changes += 1;
            }
            *seen = Some(now);
            self.next = (chunk + 1) % self.chunks.len();
        }
        self.rest = weight(rows) / BUDGET;
        hash_of(&(head, self.changes))
    }
}

/// What `rows` weighed as read: their texts, tags and notes and their other formats' bytes.
fn weight(rows: &[Option<Item>]) -> u64 {
    rows.iter()
        .flatten()
        .map(|item| {
            let texts = item.text.len()
                + item.note.len()
                + item.tags.iter().map(String::len).sum::<usize>();
            let formats: u64 = item.content.formats.iter().map(|f| f.bytes).sum();
            texts as u64 + formats
        })
        .sum()
}

fn hash_of(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// Rows hashed as a read shows them, whole: text, tags, note, the secret hint, and the other
/// formats with their sizes (a format's bytes are not read, only its size and an image's pixels).
fn hash_items(rows: &[Option<Item>]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for row in rows {
        match row {
            None => 0u8.hash(&mut hasher),
            Some(item) => {
                1u8.hash(&mut hasher);
                (&item.text, &item.tags, &item.note, item.secret).hash(&mut hasher);
                serde_json::to_vec(&item.content)
                    .unwrap_or_default()
                    .hash(&mut hasher);
            }
        }
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::content::Format;

    /// An item of `text` that also holds one format of `bytes` (and `pixels`).
    fn with_format(text: &str, mime: &str, bytes: u64, pixels: Option<(u32, u32)>) -> Item {
        Item {
            content: crate::backend::content::Content {
                formats: vec![Format {
                    mime: mime.into(),
                    bytes,
                    pixels,
                }],
                ..Default::default()
            },
            ..Item::new(text, &[], "")
        }
    }

    /// A tab of `total` rows, all "x", read as `sweep` plans: the fingerprint.
    fn poll(sweep: &mut Sweep, total: usize, edit: Option<(usize, Item)>) -> u64 {
        let row = |r: usize| match &edit {
            Some((at, item)) if *at == r => Some(item.clone()),
            _ => (r < total).then(|| Item::new("x", &[], "")),
        };
        let head: Vec<_> = (0..HEAD).map(row).collect();
        let (chunk, range) = sweep.plan();
        let deep: Vec<_> = range.map(row).collect();
        sweep.record(Some(total), &head, (chunk, &deep))
    }

    #[test]
    fn a_tab_of_200_rows_is_swept_in_two_polls_and_larger_ones_in_more() {
        for (total, polls) in [(10, 0), (20, 0), (21, 1), (110, 1), (200, 2), (1_000, 11)] {
            let mut sweep = Sweep::default();
            poll(&mut sweep, total, None);
            assert_eq!(sweep.chunk_count(), polls, "{total}");
            // Any `polls` polls in a row read every row past the head once.
            let mut seen = Vec::new();
            for _ in 0..polls.max(1) * 2 {
                seen.push(sweep.plan().1);
                poll(&mut sweep, total, None);
            }
            for window in seen.windows(polls.max(1)) {
                let mut rows: Vec<usize> = window.iter().flat_map(Clone::clone).collect();
                rows.sort_unstable();
                let past_head: Vec<usize> = (HEAD..total.max(HEAD)).collect();
                assert_eq!(rows, past_head, "{total}");
            }
        }
    }

    #[test]
    fn an_edit_anywhere_changes_the_fingerprint_within_one_sweep() {
        let html = with_format("x", "text/html", 8, None);
        let edits = [
            (30, Item::new("edited", &[], "")),
            (199, Item::new("x", &["tag"], "")),
            (150, html),
            (5, Item::new("x", &[], "a note")),
        ];
        for (at, item) in edits {
            let mut sweep = Sweep::default();
            let start = poll(&mut sweep, 200, None);
            // A full sweep of the unchanged tab keeps the fingerprint.
            for _ in 0..2 {
                assert_eq!(poll(&mut sweep, 200, None), start, "{at}");
            }
            let seen = (0..2)
                .map(|_| poll(&mut sweep, 200, Some((at, item.clone()))))
                .any(|fp| fp != start);
            assert!(seen, "an edit of row {at} is seen within two polls");
        }
    }

    #[test]
    fn the_first_read_learns_the_first_chunk() {
        let mut sweep = Sweep::default();
        assert_eq!(sweep.plan(), (0, HEAD..HEAD + DEEP));
        let first = poll(&mut sweep, 60, None);
        assert!(sweep.chunks[0].is_some());
        let edit = Some((30, Item::new("edited", &[], "")));
        assert_ne!(poll(&mut sweep, 60, edit), first, "seen at the next poll");
        // A tab shorter than its head has no chunk to learn.
        let mut short = Sweep::default();
        poll(&mut short, 5, None);
        assert!(short.chunks.is_empty());
        assert_eq!(short.plan(), (0, HEAD..HEAD));
    }

    #[test]
    fn a_new_count_is_a_change_and_the_chunks_are_learnt_again() {
        let mut sweep = Sweep::default();
        let first = poll(&mut sweep, 60, None);
        let grown = poll(&mut sweep, 61, None);
        assert_ne!(first, grown);
        assert_eq!(
            sweep.chunks,
            vec![None],
            "shifted rows, read short: no chunk hash kept"
        );
        // The next poll learns the chunk again: no change told for it.
        assert_eq!(poll(&mut sweep, 61, None), grown);
        assert_eq!(sweep.chunks.len(), 1);
        assert!(sweep.chunks[0].is_some());
        let missing = sweep.record(None, &[], (0, &[]));
        assert_ne!(missing, grown, "a tab gone is a change");
        assert_eq!(sweep.plan(), (0, HEAD..HEAD));
    }

    #[test]
    fn a_heavy_chunk_is_followed_by_rests_that_keep_its_budget() {
        // Rows of 4K screenshots: 357 KB each, a chunk of 90 about 31 MiB.
        let shot = with_format("", "image/png", 357_000, Some((3840, 2160)));
        let head: Vec<_> = (0..HEAD).map(|_| Some(shot.clone())).collect();
        let read = |sweep: &mut Sweep| {
            let (chunk, range) = sweep.plan();
            let deep: Vec<_> = range.map(|_| Some(shot.clone())).collect();
            let rows = deep.len();
            sweep.record(Some(200), &head, (chunk, &deep));
            rows
        };
        let mut sweep = Sweep::default();
        let polls = 40;
        let rows: usize = (0..polls).map(|_| read(&mut sweep)).sum();
        let bytes = rows as u64 * 357_000;
        assert!(rows >= DEEP, "the sweep goes on: {rows} rows");
        assert!(
            bytes <= BUDGET * polls + DEEP as u64 * 357_000,
            "{bytes} bytes in {polls} polls"
        );
        // Light rows are read every poll.
        let mut light = Sweep::default();
        for _ in 0..4 {
            assert!(!light.plan().1.is_empty());
            poll(&mut light, 200, None);
        }
    }
}
