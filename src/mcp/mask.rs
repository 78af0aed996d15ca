//! What a client is shown of a text that holds a secret, and the rules that keep every answer
//! computed from that view: an edit is made on the masked text and put back around the secrets,
//! never answered from the raw one; a version is a keyed hash that tells nothing of the raw text.

use std::ops::Range;

use sha2::{Digest, Sha256};

use crate::backend::Item;
use crate::privacy::{Mask, Redactor};

/// A text as shown: the masked text, and where each mask sits in the raw text and in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub shown: String,
    masks: Vec<Mask>,
}

/// Why an edit of a masked text was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// An occurrence of the match overlaps a mask.
    Touches,
    /// The edit would leave part of a secret unmasked (its context changed).
    Unmasks,
}

impl View {
    /// `raw` as `redactor` shows it (unchanged without one).
    pub fn of(redactor: Option<&Redactor>, raw: &str) -> Self {
        // What the reads show of it, and where its masks sit, as the redactor wrote them.
        match redactor.and_then(|r| r.masked_remembered(raw)) {
            Some(m) => Self {
                shown: m.text.to_string(),
                masks: m.masks.to_vec(),
            },
            None => Self {
                shown: raw.to_owned(),
                masks: Vec::new(),
            },
        }
    }

    pub fn is_masked(&self) -> bool {
        !self.masks.is_empty()
    }

    /// Whether `value` repeats one of this text's masks: written back, it would put the mask
    /// where the secret was.
    pub fn repeated_in(&self, value: &str) -> bool {
        self.masks
            .iter()
            .any(|m| value.contains(&self.shown[m.shown.clone()]))
    }

    /// `substitute` of `find` by `with`, made where the shown text holds `find` and put back in
    /// the raw text around the secrets: `None` when the shown text does not hold it.
    pub fn substitute(&self, raw: &str, find: &str, with: &str) -> Result<Option<Edit>, Refused> {
        let hits: Vec<Range<usize>> = self
            .shown
            .match_indices(find)
            .map(|(i, m)| i..i + m.len())
            .collect();
        if hits.is_empty() {
            return Ok(None);
        }
        if hits.iter().any(|h| {
            self.masks
                .iter()
                .any(|m| h.start < m.shown.end && m.shown.start < h.end)
        }) {
            return Err(Refused::Touches);
        }
        let mut edit = Edit::default();
        let mut at = 0;
        for h in hits {
            let (start, end) = (self.to_raw(h.start), self.to_raw(h.end));
            edit.keep(raw, at..start, &self.masks);
            edit.text.push_str(with);
            at = end;
        }
        edit.keep(raw, at..raw.len(), &self.masks);
        Ok(Some(edit))
    }

    /// `with` put after (`after`) or before the raw text.
    pub fn join(&self, raw: &str, with: &str, after: bool) -> Edit {
        let mut edit = Edit::default();
        if !after {
            edit.text.push_str(with);
        }
        edit.keep(raw, 0..raw.len(), &self.masks);
        if after {
            edit.text.push_str(with);
        }
        edit
    }

    /// A position of the shown text outside every mask, in the raw text.
    fn to_raw(&self, shown: usize) -> usize {
        let mut shift = 0isize;
        for m in self.masks.iter().take_while(|m| m.shown.end <= shown) {
            shift += m.raw.len() as isize - m.shown.len() as isize;
        }
        (shown as isize + shift) as usize
    }
}

/// A raw text made by an edit, with where the secrets it kept now are.
#[derive(Debug, Default)]
pub struct Edit {
    pub text: String,
    secrets: Vec<Range<usize>>,
}

impl Edit {
    /// Copy `raw[range]`, noting where the secrets in it land.
    fn keep(&mut self, raw: &str, range: Range<usize>, masks: &[Mask]) {
        let base = self.text.len() as isize - range.start as isize;
        for m in masks
            .iter()
            .filter(|m| range.start <= m.raw.start && m.raw.end <= range.end)
        {
            let start = (m.raw.start as isize + base) as usize;
            self.secrets.push(start..start + m.raw.len());
        }
        self.text.push_str(&raw[range]);
    }

    /// The new raw text, if every secret it kept is still masked whole in it: an edit of the text
    /// around a secret may change what the rules see (`password=` taken away), and must not
    /// unmask it.
    pub fn checked(self, redactor: &Redactor) -> Result<String, Refused> {
        if self.secrets.is_empty() {
            return Ok(self.text);
        }
        let spans = redactor.spans(&self.text);
        let covered = |s: &Range<usize>| {
            let mut at = s.start;
            for span in &spans {
                if span.start <= at && at < span.end {
                    at = span.end;
                }
            }
            at >= s.end
        };
        if self.secrets.iter().all(covered) {
            Ok(self.text)
        } else {
            Err(Refused::Unmasks)
        }
    }
}

/// An item's version as the caller sees it. One whose view is the raw item (nothing masked) keeps
/// the plain version (eight hex digits of SHA-256, which the caller could compute itself); one
/// that holds a mask gets eight hex digits of HMAC-SHA256 under the gateway's `key`, over the tab
/// and the raw item: it changes when the secret under an unchanged mask changes, and without the
/// key it cannot be checked against a guess of the secret.
pub fn version(key: &[u8; 32], tab: &str, raw: &Item, masked: bool) -> String {
    if !masked {
        return crate::clipboard::version(raw);
    }
    let mut fields = Vec::new();
    for part in [tab, &raw.text, &raw.tags.join(","), &raw.note] {
        fields.extend_from_slice(&(part.len() as u64).to_be_bytes());
        fields.extend_from_slice(part.as_bytes());
    }
    fields.push(u8::from(raw.secret));
    hmac(key, &fields)
        .iter()
        .take(4)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// HMAC-SHA256 (RFC 2104) with a 32-byte key.
fn hmac(key: &[u8; 32], message: &[u8]) -> [u8; 32] {
    let pad = |byte: u8| {
        let mut block = [byte; 64];
        for (b, k) in block.iter_mut().zip(key) {
            *b ^= k;
        }
        block
    };
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "AKIAZ3MHQ7XWPLBV4KTN";

    fn redactor() -> Redactor {
        Redactor::new(&[]).expect("rules")
    }

    #[test]
    fn hmac_matches_rfc_4231_shape() {
        // RFC 4231 test case 2 uses a 4-byte key; with a 32-byte key, check against the
        // definition instead: H((K^opad) || H((K^ipad) || m)).
        let key = [7u8; 32];
        let mut ipad = [0x36u8; 64];
        let mut opad = [0x5cu8; 64];
        for i in 0..32 {
            ipad[i] ^= 7;
            opad[i] ^= 7;
        }
        let inner = Sha256::digest([&ipad[..], b"m"].concat());
        let outer: [u8; 32] = Sha256::digest([&opad[..], &inner[..]].concat()).into();
        assert_eq!(hmac(&key, b"m"), outer);
    }

    #[test]
    fn an_edit_is_made_on_the_view_and_put_back_around_the_secret() {
        let r = redactor();
        let raw = format!("aws {KEY} host db1 and db1");
        let v = View::of(Some(&r), &raw);
        assert_eq!(v.shown, "aws [redacted:aws-access-token] host db1 and db1");
        let e = v
            .substitute(&raw, "db1", "db2")
            .expect("ok")
            .expect("found");
        assert_eq!(
            e.checked(&r).expect("still masked"),
            format!("aws {KEY} host db2 and db2")
        );
        // A guess at the secret is not in the view: not found, whatever the raw text holds.
        assert!(v.substitute(&raw, "AKIAZ3", "x").expect("ok").is_none());
        assert_eq!(
            v.substitute(&raw, "redacted:aws", "x").err(),
            Some(Refused::Touches)
        );
        assert_eq!(
            v.substitute(&raw, "aws [", "x").err(),
            Some(Refused::Touches)
        );
        let joined = v.join(&raw, "!", true).checked(&r).expect("masked");
        assert_eq!(joined, format!("{raw}!"));
        assert!(v.repeated_in("keep [redacted:aws-access-token]"));
        assert!(!v.repeated_in("[redacted:card]"));
    }

    #[test]
    fn an_edit_that_would_unmask_a_secret_is_refused() {
        let r = redactor();
        // Appended right after the key, the text no longer reads as a key.
        let raw = format!("aws {KEY}");
        let v = View::of(Some(&r), &raw);
        assert!(v.is_masked());
        assert_eq!(
            v.join(&raw, "QQQQ", true).checked(&r).err(),
            Some(Refused::Unmasks)
        );
    }

    #[test]
    fn versions_of_masked_items_are_keyed() {
        let it = Item::new(&format!("aws {KEY}"), &[], "");
        assert_eq!(
            version(&[1; 32], "t", &it, false),
            crate::clipboard::version(&it)
        );
        let keyed = version(&[1; 32], "t", &it, true);
        assert_ne!(keyed, crate::clipboard::version(&it));
        assert_ne!(keyed, version(&[2; 32], "t", &it, true));
        assert_ne!(keyed, version(&[1; 32], "u", &it, true));
        let other = Item::new("aws AKIAZ3MHQ7XWPLBV4KTM", &[], "");
        assert_ne!(keyed, version(&[1; 32], "t", &other, true));
    }
}
