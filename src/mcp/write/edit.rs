//! The edit matrix of `mcp_write`'s update: which edit modes each field takes (replace, append,
//! prepend, substitute on text and note; replace, append, remove on tags), and what an edit makes
//! of the item the plan read.

use super::super::error::ToolError;
use crate::backend::Item;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Text,
    Tags,
    Note,
}

impl Field {
    /// Every field: the schema's `field` values and what the parser accepts are made from it.
    pub const ALL: [Self; 3] = [Self::Text, Self::Tags, Self::Note];

    pub fn names() -> [&'static str; 3] {
        Self::ALL.map(Self::name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Tags => "tags",
            Self::Note => "note",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditMode {
    Replace,
    Append,
    Prepend,
    Substitute,
    Remove,
}

impl EditMode {
    /// Every edit mode: the schema's `edit_mode` values and what the parser accepts are made from it.
    pub const ALL: [Self; 5] = [
        Self::Replace,
        Self::Append,
        Self::Prepend,
        Self::Substitute,
        Self::Remove,
    ];

    pub fn names() -> [&'static str; 5] {
        Self::ALL.map(Self::name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Replace => "replace",
            Self::Append => "append",
            Self::Prepend => "prepend",
            Self::Substitute => "substitute",
            Self::Remove => "remove",
        }
    }

    /// The reference's matrix of which edit modes each field takes.
    pub(super) fn allowed(field: Field) -> &'static [EditMode] {
        use EditMode::*;
        match field {
            Field::Text | Field::Note => &[Replace, Append, Prepend, Substitute],
            Field::Tags => &[Replace, Append, Remove],
        }
    }
}

/// The new value an update brings: a string for text and note, a list for tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewValue {
    Str(String),
    Tags(Vec<String>),
}

/// The item after an update, per the edit matrix.
pub(super) fn edited(
    before: &Item,
    field: Field,
    edit: EditMode,
    value: &NewValue,
    matched: Option<&str>,
) -> Result<Item, ToolError> {
    let mut after = before.clone();
    match (field, value) {
        (Field::Tags, NewValue::Tags(tags)) => {
            after.tags = match edit {
                EditMode::Replace => tags.clone(),
                EditMode::Append => {
                    let mut all = before.tags.clone();
                    all.extend(tags.iter().filter(|t| !before.tags.contains(t)).cloned());
                    all
                }
                _ => before
                    .tags
                    .iter()
                    .filter(|t| !tags.contains(t))
                    .cloned()
                    .collect(),
            };
        }
        (Field::Text | Field::Note, NewValue::Str(value)) => {
            let old = if field == Field::Text {
                &before.text
            } else {
                &before.note
            };
            let new = match (edit, matched) {
                (EditMode::Append, _) => format!("{old}{value}"),
                (EditMode::Prepend, _) => format!("{value}{old}"),
                (EditMode::Substitute, Some(m)) if old.contains(m) => old.replace(m, value),
                (EditMode::Substitute, Some(m)) => {
                    return Err(ToolError::MatchNotFound(super::super::format::one_line(m)));
                }
                _ => value.clone(),
            };
            if field == Field::Text {
                if new.is_empty() {
                    return Err(ToolError::InvalidParam(
                        "Item text must not become empty".into(),
                    ));
                }
                after.text = new;
            } else {
                after.note = new;
            }
        }
        _ => {
            return Err(ToolError::InvalidParam(format!(
                "Wrong value for field '{}'",
                field.name()
            )));
        }
    }
    Ok(after)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(text: &str, tags: &[&str], note: &str) -> Item {
        Item::new(text, tags, note)
    }

    fn s(v: &str) -> NewValue {
        NewValue::Str(v.into())
    }

    #[test]
    fn text_and_note_edits() {
        let b = item("TODO: a TODO", &[], "n");
        assert_eq!(
            edited(&b, Field::Text, EditMode::Append, &s("!"), None)
                .unwrap()
                .text,
            "TODO: a TODO!"
        );
        assert_eq!(
            edited(&b, Field::Text, EditMode::Prepend, &s(">"), None)
                .unwrap()
                .text,
            ">TODO: a TODO"
        );
        assert_eq!(
            edited(
                &b,
                Field::Text,
                EditMode::Substitute,
                &s("DONE"),
                Some("TODO")
            )
            .unwrap()
            .text,
            "DONE: a DONE"
        );
        assert_eq!(
            edited(
                &b,
                Field::Text,
                EditMode::Substitute,
                &s("x"),
                Some("old text")
            )
            .unwrap_err()
            .line(),
            "error|MATCH_NOT_FOUND|Match string not found: 'old text'"
        );
        assert_eq!(
            edited(&b, Field::Text, EditMode::Replace, &s(""), None)
                .unwrap_err()
                .line(),
            "error|INVALID_PARAM|Item text must not become empty"
        );
        assert_eq!(
            edited(&b, Field::Note, EditMode::Replace, &s(""), None)
                .unwrap()
                .note,
            ""
        );
        assert_eq!(
            edited(&b, Field::Note, EditMode::Append, &s("\n---"), None)
                .unwrap()
                .note,
            "n\n---"
        );
    }

    #[test]
    fn tag_edits() {
        let b = item("x", &["a", "b"], "");
        let tags = |v: &[&str]| NewValue::Tags(v.iter().map(|t| t.to_string()).collect());
        assert_eq!(
            edited(&b, Field::Tags, EditMode::Append, &tags(&["b", "c"]), None)
                .unwrap()
                .tags,
            ["a", "b", "c"]
        );
        assert_eq!(
            edited(&b, Field::Tags, EditMode::Remove, &tags(&["a", "z"]), None)
                .unwrap()
                .tags,
            ["b"]
        );
        assert_eq!(
            edited(&b, Field::Tags, EditMode::Replace, &tags(&[]), None)
                .unwrap()
                .tags,
            Vec::<String>::new()
        );
    }
}
