//! An item as CopyQ stores what the tools use of it, and CopyQ's tag encoding.

use serde::{Deserialize, Serialize};

/// One CopyQ item reduced to its text, tags and note.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    pub text: String,
    pub tags: Vec<String>,
    pub note: String,
    /// Read only: CopyQ holds it with `x-kde-passwordManagerHint: secret` (a password manager's
    /// copy). Writes never set it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
}

impl Item {
    pub fn new(text: &str, tags: &[&str], note: &str) -> Self {
        Self {
            text: text.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            note: note.into(),
            secret: false,
        }
    }

    pub fn has_note(&self) -> bool {
        !self.note.is_empty()
    }
}

/// CopyQ stores tags as one comma-joined string; it drops empty parts and does not trim.
pub fn split_tags(raw: &str) -> Vec<String> {
    raw.split(',')
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_like_copyq() {
        assert_eq!(split_tags("a,b,,c "), vec!["a", "b", "c "]);
        assert!(split_tags("").is_empty());
        assert_eq!(split_tags("x,y"), ["x", "y"]);
    }
}
