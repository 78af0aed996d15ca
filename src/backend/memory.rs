//! An in-memory CopyQ for fast unit tests of tool logic. Never a stand-in for the real CopyQ in the
//! tests that prove a feature.

use std::sync::{Arc, Mutex, MutexGuard};

use super::{Item, ReadRequest, TabPage, TabSelector};

/// Tabs in CopyQ order, each a list of items with row 0 first.
type Tabs = Vec<(String, Vec<Item>)>;

#[derive(Debug, Clone, Default)]
pub struct MemoryBackend {
    tabs: Arc<Mutex<Tabs>>,
}

impl MemoryBackend {
    pub fn with_tabs(tabs: Tabs) -> Self {
        Self {
            tabs: Arc::new(Mutex::new(tabs)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Tabs> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.tabs.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn read(&self, req: &ReadRequest) -> Vec<TabPage> {
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
}

/// Mirrors the CLI script: text and note cut to `n` UTF-16 units without splitting a pair.
fn cut_item(item: &Item, n: Option<usize>) -> Item {
    Item {
        text: cut_utf16(&item.text, n),
        tags: item.tags.clone(),
        note: cut_utf16(&item.note, n),
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
