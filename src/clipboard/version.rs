//! A short content version of an item, for writes that must hit the item the agent read even when
//! indices have shifted since.

use sha2::{Digest, Sha256};

use crate::backend::Item;

/// Eight hex digits of SHA-256 over the text, tags and note.
pub fn version(item: &Item) -> String {
    let mut h = Sha256::new();
    h.update(item.text.as_bytes());
    h.update([0]);
    h.update(item.tags.join(",").as_bytes());
    h.update([0]);
    h.update(item.note.as_bytes());
    h.finalize()
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_with_any_field() {
        let base = Item::new("t", &["a"], "n");
        let v = version(&base);
        assert_eq!(v.len(), 8);
        assert_eq!(v, version(&base.clone()));
        for other in [
            Item::new("t2", &["a"], "n"),
            Item::new("t", &["b"], "n"),
            Item::new("t", &["a"], "m"),
            Item::new("ta", &[], "n"),
        ] {
            assert_ne!(v, version(&other), "{other:?}");
        }
    }
}
