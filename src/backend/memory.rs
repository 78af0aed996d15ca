//! An in-memory CopyQ for fast unit tests of tool logic. Never a stand-in for the real CopyQ in the
//! tests that prove a feature.

use std::sync::{Arc, Mutex, MutexGuard};

use super::{
    BackendError, Item, Landed, Persisted, ReadRequest, RowsPage, Snapshot, TabPage, TabRows,
    TabSelector, Whole,
};

/// Tabs in CopyQ order, each a list of items with row 0 first.
type Tabs = Vec<(String, Vec<Item>)>;

/// CopyQ's default `maxitems`.
const DEFAULT_MAX_ITEMS: usize = 200;

#[derive(Debug, Clone)]
pub struct MemoryBackend {
    tabs: Arc<Mutex<Tabs>>,
    max_items: usize,
    /// Every read asked, for tests that count them (see [`MemoryBackend::reads`]).
    reads: Arc<Mutex<Vec<String>>>,
    /// Tabs' items as they are to be once the next read is answered: another client's change
    /// between two reads of one call.
    meanwhile: Arc<Mutex<Tabs>>,
    /// The size of every group of inserts made (see [`MemoryBackend::groups`]).
    groups: Arc<Mutex<Vec<usize>>>,
}

impl Default for MemoryBackend {
    fn default() -> Self {
        Self::with_tabs(Vec::new())
    }
}

impl MemoryBackend {
    pub fn with_tabs(tabs: Tabs) -> Self {
        Self {
            tabs: Arc::new(Mutex::new(tabs)),
            max_items: DEFAULT_MAX_ITEMS,
            reads: Arc::default(),
            meanwhile: Arc::default(),
            groups: Arc::default(),
        }
    }

    pub fn with_max_items(mut self, max_items: usize) -> Self {
        self.max_items = max_items;
        self
    }

    fn lock(&self) -> MutexGuard<'_, Tabs> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.tabs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The reads asked so far, each as its request's `Debug` (`read ReadRequest {..}`,
    /// `rows [TabRows {..}]`).
    pub fn reads(&self) -> Vec<String> {
        self.reads.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many inserts each group of inserts held, in order (tests of group commit).
    pub fn groups(&self) -> Vec<usize> {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Make `items` the rows of the existing tab `tab` right after the next read is answered, as
    /// another client changing the tab between two reads would.
    pub fn set_after_next_read(&self, tab: &str, items: Vec<Item>) {
        self.meanwhile
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((tab.to_owned(), items));
    }

    /// `read` noted, and what was to happen after it done.
    fn answered(&self, read: String) {
        self.reads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(read);
        let meanwhile =
            std::mem::take(&mut *self.meanwhile.lock().unwrap_or_else(|e| e.into_inner()));
        let mut tabs = self.lock();
        for (tab, now) in meanwhile {
            if let Some((_, items)) = tabs.iter_mut().find(|(n, _)| *n == tab) {
                *items = now;
            }
        }
    }

    pub fn ping(&self) -> Result<(), BackendError> {
        Ok(())
    }

    /// The in-memory backend holds text, tags and notes only.
    pub fn format(
        &self,
        _tab: &str,
        _row: usize,
        _mime: &str,
    ) -> Result<Option<Vec<u8>>, BackendError> {
        Ok(None)
    }

    pub fn read(&self, req: &ReadRequest) -> Result<Snapshot, BackendError> {
        let snapshot = Snapshot {
            pages: self.pages(req),
            all_tabs: self.lock().iter().map(|(n, _)| n.clone()).collect(),
        };
        self.answered(format!("read {req:?}"));
        Ok(snapshot)
    }

    pub fn read_rows(&self, wanted: &[TabRows]) -> Result<Vec<RowsPage>, BackendError> {
        let tabs = self.lock();
        let pages = wanted
            .iter()
            .filter_map(|w| {
                let (_, items) = tabs.iter().find(|(name, _)| *name == w.name)?;
                Some(RowsPage {
                    name: w.name.clone(),
                    total: items.len(),
                    items: w.rows.iter().map(|r| items.get(*r).cloned()).collect(),
                })
            })
            .collect();
        drop(tabs);
        self.answered(format!("rows {wanted:?}"));
        Ok(pages)
    }

    pub fn item_limit(&self) -> Result<usize, BackendError> {
        Ok(self.max_items)
    }

    pub fn read_with_max_items(
        &self,
        req: &ReadRequest,
    ) -> Result<(Snapshot, usize), BackendError> {
        Ok((self.read(req)?, self.max_items))
    }

    fn pages(&self, req: &ReadRequest) -> Vec<TabPage> {
        let tabs = self.lock();
        let chosen: Vec<&(String, Vec<Item>)> = match &req.tabs {
            TabSelector::Names { names } => names
                .iter()
                .filter_map(|n| tabs.iter().find(|(name, _)| name == n))
                .collect(),
            TabSelector::Prefix { prefix, invert } => tabs
                .iter()
                .filter(|(name, _)| name.starts_with(prefix.as_str()) != *invert)
                .collect(),
            TabSelector::All {} => tabs.iter().collect(),
        };
        chosen
            .into_iter()
            .map(|(name, items)| TabPage {
                name: name.clone(),
                total: items.len(),
                items: items
                    .iter()
                    .skip(req.skip)
                    .take(req.limit.unwrap_or(usize::MAX))
                    .map(|it| cut_item(it, req.preview))
                    .collect(),
            })
            .collect()
    }

    /// Like CopyQ, takes an existing tab differing only by `&` for a missing one (see
    /// [`super::names`]), and then says the write went elsewhere.
    pub fn insert(&self, tab: &str, item: &Item, limit: usize) -> Result<Landed, BackendError> {
        let mut tabs = self.lock();
        let names: Vec<String> = tabs.iter().map(|(n, _)| n.clone()).collect();
        if let Some(other) = super::names::clash(tab, &names)
            && let Some((_, items)) = tabs.iter_mut().find(|(n, _)| n == other)
        {
            items.insert(0, item.clone());
            return Err(BackendError::Misdirected {
                tab: tab.to_owned(),
            });
        }
        let items = match tabs.iter().position(|(n, _)| n == tab) {
            Some(i) => &mut tabs[i].1,
            None => {
                tabs.push((tab.to_owned(), Vec::new()));
                &mut tabs.last_mut().ok_or(BackendError::NoSuchTab)?.1
            }
        };
        if items.len() >= limit {
            return Err(BackendError::TabFull { limit });
        }
        items.insert(0, item.clone());
        Ok(Landed {
            persisted: Persisted::Memory,
            row: 0,
        })
    }

    /// Each of `writes` as [`Self::insert`], in order, its size noted; one CopyQ would make in a
    /// look-alike tab refused (as the socket backend's group does).
    pub fn insert_many(
        &self,
        writes: &[super::Insert<'_>],
    ) -> Result<Vec<Result<Landed, BackendError>>, BackendError> {
        self.groups
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(writes.len());
        let all: Vec<String> = self.lock().iter().map(|(n, _)| n.clone()).collect();
        Ok(writes
            .iter()
            .map(|(tab, item, limit)| match super::clash(tab, &all) {
                Some(e) => Err(e),
                None => self.insert(tab, item, *limit),
            })
            .collect())
    }

    /// The in-memory backend holds text, tags and notes only: `whole` adds nothing to `item`.
    pub fn insert_whole(
        &self,
        tab: &str,
        item: &Item,
        _whole: &Whole,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        self.insert(tab, item, limit)
    }

    /// The formats CopyQ would hold for the row: its text, and its tags and note when it has them.
    pub fn every_format(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
    ) -> Result<Whole, BackendError> {
        let mut tabs = self.lock();
        let item = checked_row(&mut tabs, tab, row, expect)?;
        let mut whole = vec![(
            super::protocol::MIME_TEXT.to_owned(),
            item.text.clone().into_bytes(),
        )];
        if !item.tags.is_empty() {
            whole.push((
                super::protocol::MIME_TAGS.to_owned(),
                item.tags.join(",").into_bytes(),
            ));
        }
        if item.has_note() {
            whole.push((
                super::protocol::MIME_NOTE.to_owned(),
                item.note.clone().into_bytes(),
            ));
        }
        Ok(whole)
    }

    pub fn change(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
        item: &Item,
    ) -> Result<Persisted, BackendError> {
        let mut tabs = self.lock();
        *checked_row(&mut tabs, tab, row, expect)? = item.clone();
        Ok(Persisted::Memory)
    }

    pub fn remove(&self, tab: &str, row: usize, expect: &Item) -> Result<Persisted, BackendError> {
        let mut tabs = self.lock();
        checked_row(&mut tabs, tab, row, expect)?;
        if let Some((_, items)) = tabs.iter_mut().find(|(n, _)| n == tab) {
            items.remove(row);
        }
        Ok(Persisted::Memory)
    }

    pub fn move_item(
        &self,
        from: &str,
        row: usize,
        expect: &Item,
        to: &str,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        {
            let mut tabs = self.lock();
            checked_row(&mut tabs, from, row, expect)?;
        }
        let landed = self.insert(to, expect, limit)?;
        self.remove(from, row, expect)?;
        Ok(landed)
    }

    pub fn create_tab(&self, tab: &str) -> Result<bool, BackendError> {
        let mut tabs = self.lock();
        if tabs.iter().any(|(n, _)| n == tab) {
            return Ok(false);
        }
        tabs.push((tab.to_owned(), Vec::new()));
        Ok(true)
    }

    pub fn remove_tabs(&self, names: &[String]) -> Result<usize, BackendError> {
        let mut tabs = self.lock();
        let removed = tabs
            .iter()
            .filter(|(n, _)| names.contains(n))
            .map(|(_, items)| items.len())
            .sum();
        tabs.retain(|(n, _)| !names.contains(n));
        Ok(removed)
    }
}

/// The row `row` of `tab`, if it still holds `expect`.
fn checked_row<'a>(
    tabs: &'a mut Tabs,
    tab: &str,
    row: usize,
    expect: &Item,
) -> Result<&'a mut Item, BackendError> {
    let (_, items) = tabs
        .iter_mut()
        .find(|(n, _)| n == tab)
        .ok_or(BackendError::NoSuchTab)?;
    let count = items.len();
    let item = items
        .get_mut(row)
        .ok_or(BackendError::NoSuchRow { count })?;
    if item != expect {
        return Err(BackendError::Conflict);
    }
    Ok(item)
}

/// Mirrors the CLI script: text and note cut to `n` UTF-16 units without splitting a pair.
fn cut_item(item: &Item, n: Option<usize>) -> Item {
    Item {
        text: cut_utf16(&item.text, n),
        tags: item.tags.clone(),
        note: cut_utf16(&item.note, n),
        secret: item.secret,
        pinned: item.pinned,
        bare: item.bare,
        content: item.content.clone(),
    }
}

fn cut_utf16(s: &str, n: Option<usize>) -> String {
    let Some(n) = n else { return s.to_owned() };
    let mut units = 0;
    let mut out = String::new();
    for c in s.chars() {
        units += c.len_utf16();
        if units > n {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_without_splitting_pairs() {
        assert_eq!(cut_utf16("a😀b", Some(2)), "a");
        assert_eq!(cut_utf16("a😀b", Some(3)), "a😀");
        assert_eq!(cut_utf16("abc", None), "abc");
    }
}
