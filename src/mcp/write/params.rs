//! `mcp_write` arguments parsed into typed operations. Every write targets a managed tab under a
//! configured root, whatever `scope` says; the edit matrix ([`super::edit`]) and tag rules are enforced
//! here.

use serde_json::{Map, Value};

use super::super::args::Args;
use super::super::error::ToolError;
use super::edit::{EditMode, Field, NewValue};
use crate::backend::Item;
use crate::clipboard::{Coverage, Roots, TabRef};

/// `mode`'s values: the schema lists these, and nothing else gets past [`WriteCall::parse`].
pub const MODES: &[&str] = &[
    "add",
    "update",
    "delete",
    "move",
    "tab_create",
    "tab_delete",
];
/// `intent`'s values and whether each previews: the schema lists these names, and the parser takes
/// these and no other, each with its meaning.
const INTENTS: [(&str, bool); 2] = [("execute", false), ("preview", true)];

/// The names of `intent`'s values, in the schema's order.
pub fn intent_names() -> [&'static str; 2] {
    INTENTS.map(|(name, _)| name)
}
pub(crate) const KNOWN: &[&str] = &[
    "mode",
    "intent",
    "scope",
    "tab",
    "index",
    "text",
    "tags",
    "note",
    "field",
    "edit_mode",
    "match",
    "to_tab",
    "path",
    "expected_version",
];

#[derive(Debug, Clone)]
pub enum WriteOp {
    Add {
        tab: TabRef,
        item: Item,
    },
    Update {
        tab: TabRef,
        index: i64,
        field: Field,
        edit: EditMode,
        value: NewValue,
        matched: Option<String>,
    },
    Delete {
        tab: TabRef,
        index: i64,
    },
    Move {
        tab: TabRef,
        index: i64,
        to: TabRef,
    },
    TabCreate {
        path: TabRef,
    },
    TabDelete {
        path: TabRef,
    },
}

#[derive(Debug, Clone)]
pub struct WriteCall {
    pub op: WriteOp,
    pub preview: bool,
    /// For update, delete and move: the version `mcp_read` showed for the item (`with_version`).
    pub expected_version: Option<String>,
}

/// Tags as CopyQ can store them: no commas (it joins tags with commas), none empty, no duplicates.
pub fn clean_tags(tags: Vec<String>) -> Result<Vec<String>, ToolError> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        if tag.is_empty() {
            return Err(ToolError::InvalidParam("Tags must not be empty".into()));
        }
        if tag.contains(',') {
            return Err(ToolError::InvalidParam(format!(
                "Tag '{}' contains a comma: CopyQ stores tags comma-separated, so it would become several tags",
                tag.escape_debug()
            )));
        }
        if tag.chars().any(char::is_control) {
            return Err(ToolError::InvalidParam(
                "Tags must not contain control characters".into(),
            ));
        }
        if !out.contains(&tag) {
            out.push(tag);
        }
    }
    Ok(out)
}

/// `add`: a non-empty text, clean tags, a note.
fn add_op(a: &Args<'_>, tab: TabRef) -> Result<WriteOp, ToolError> {
    let text = a.required_str("text")?;
    if text.is_empty() {
        return Err(ToolError::InvalidParam(
            "Parameter 'text' must not be empty for mode 'add'".into(),
        ));
    }
    let tags = clean_tags(a.string_list("tags")?.unwrap_or_default())?;
    let note = a.str("note")?.unwrap_or_default().to_owned();
    Ok(WriteOp::Add {
        tab,
        item: Item {
            text: text.to_owned(),
            tags,
            note,
            secret: false,
            pinned: false,
            bare: false,
            content: Default::default(),
        },
    })
}

/// `update`: the field, an edit mode that field allows, its new value, and for `substitute` the
/// text to replace.
fn update_op(a: &Args<'_>, tab: TabRef, mode: &str) -> Result<WriteOp, ToolError> {
    let index = a.required_int("index")?;
    let field = a.choice("field", &Field::names(), "")?;
    let Some(field) = Field::ALL.into_iter().find(|f| f.name() == field) else {
        return Err(ToolError::MissingParam {
            param: "field",
            mode: mode.into(),
        });
    };
    let edit = a.choice("edit_mode", &EditMode::names(), "replace")?;
    let edit = EditMode::ALL
        .into_iter()
        .find(|m| m.name() == edit)
        .unwrap_or(EditMode::Replace);
    let allowed = EditMode::allowed(field);
    if !allowed.contains(&edit) {
        let names: Vec<&str> = allowed.iter().map(|m| m.name()).collect();
        return Err(ToolError::InvalidParam(format!(
            "edit_mode '{}' is not allowed for field '{}' (allowed: {})",
            edit.name(),
            field.name(),
            names.join(", ")
        )));
    }
    let value = match field {
        Field::Text => NewValue::Str(a.required_str("text")?.to_owned()),
        Field::Note => NewValue::Str(a.required_str("note")?.to_owned()),
        Field::Tags => match a.string_list("tags")? {
            Some(tags) => NewValue::Tags(clean_tags(tags)?),
            None => {
                return Err(ToolError::MissingParam {
                    param: "tags",
                    mode: mode.into(),
                });
            }
        },
    };
    let matched = match edit {
        EditMode::Substitute => {
            let m = a.required_str("match")?;
            if m.is_empty() {
                return Err(ToolError::InvalidParam(
                    "Parameter 'match' must not be empty".into(),
                ));
            }
            Some(m.to_owned())
        }
        _ => None,
    };
    Ok(WriteOp::Update {
        tab,
        index,
        field,
        edit,
        value,
        matched,
    })
}

impl WriteCall {
    /// `tabs`: what the caller covers. A tab outside it is refused like one outside the roots,
    /// with the same words, whether or not it exists.
    pub fn parse(
        map: &Map<String, Value>,
        roots: &Roots,
        tabs: &Coverage,
    ) -> Result<Self, ToolError> {
        let mut a = Args::new(map);
        let mode = a.required_str("mode")?;
        a.set_mode(mode);
        a.reject_unknown(KNOWN)?;
        let intent = a.choice("intent", &intent_names(), "execute")?;
        let preview = INTENTS
            .iter()
            .any(|(name, preview)| *name == intent && *preview);
        let covered = |input: &str, tab: TabRef, operation: &str| {
            if tabs.covers(&tab.full) {
                Ok(tab)
            } else {
                Err(ToolError::PermissionDenied(format!(
                    "Operation '{operation}' not allowed on '{input}'"
                )))
            }
        };
        let managed = |key: &'static str, operation: &str| -> Result<TabRef, ToolError> {
            let input = a.required_str(key)?;
            covered(input, roots.writable(input, operation)?, operation)
        };
        let sub_tab = |operation: &str| -> Result<TabRef, ToolError> {
            let input = a.required_str("path")?;
            covered(input, roots.sub_tab(input, operation)?, operation)
        };
        let invalid = || ToolError::InvalidMode {
            mode: super::super::format::one_line(mode),
            expected: MODES,
        };
        if !MODES.contains(&mode) {
            return Err(invalid());
        }
        let op = match mode {
            "add" => add_op(&a, managed("tab", mode)?)?,
            "update" => update_op(&a, managed("tab", mode)?, mode)?,
            "delete" => WriteOp::Delete {
                tab: managed("tab", mode)?,
                index: a.required_int("index")?,
            },
            "move" => {
                let tab = managed("tab", mode)?;
                let index = a.required_int("index")?;
                let to = managed("to_tab", mode)?;
                if to.full == tab.full {
                    return Err(ToolError::InvalidParam(
                        "Parameters 'tab' and 'to_tab' name the same tab".into(),
                    ));
                }
                WriteOp::Move { tab, index, to }
            }
            "tab_create" => WriteOp::TabCreate {
                path: sub_tab(mode)?,
            },
            "tab_delete" => WriteOp::TabDelete {
                path: sub_tab(mode)?,
            },
            _ => return Err(invalid()),
        };
        let expected_version = a.str("expected_version")?.map(str::to_owned);
        if expected_version.is_some() && !matches!(mode, "update" | "delete" | "move") {
            return Err(ToolError::InvalidParam(
                "Parameter 'expected_version' applies to modes update, delete and move".into(),
            ));
        }
        Ok(Self {
            op,
            preview,
            expected_version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<WriteCall, String> {
        WriteCall::parse(v.as_object().unwrap(), &Roots::default(), &Coverage::All)
            .map_err(|e| e.line())
    }

    #[test]
    fn matrix_is_enforced() {
        for (field, mode, ok) in [
            ("text", "remove", false),
            ("tags", "prepend", false),
            ("tags", "substitute", false),
            ("note", "remove", false),
            ("tags", "remove", true),
            ("note", "prepend", true),
        ] {
            let args = json!({"mode": "update", "tab": "info", "index": 0, "field": field, "edit_mode": mode,
                                  "text": "x", "note": "x", "tags": ["x"], "match": "m"});
            assert_eq!(parse(args).is_ok(), ok, "{field} {mode}");
        }
        assert_eq!(
            parse(json!({"mode": "update", "tab": "info", "index": 0, "field": "tags", "edit_mode": "prepend", "tags": ["a"]})).unwrap_err(),
            "error|INVALID_PARAM|edit_mode 'prepend' is not allowed for field 'tags' (allowed: replace, append, remove)"
        );
    }

    #[test]
    fn tags_are_checked() {
        assert!(
            clean_tags(vec!["a,b".into()])
                .unwrap_err()
                .line()
                .starts_with("error|INVALID_PARAM|Tag 'a,b' contains a comma")
        );
        assert_eq!(
            clean_tags(vec![String::new()]).unwrap_err().line(),
            "error|INVALID_PARAM|Tags must not be empty"
        );
        assert_eq!(
            clean_tags(vec!["a".into(), "b".into(), "a".into()]).unwrap(),
            ["a", "b"]
        );
    }

    #[test]
    fn writes_stay_under_roots() {
        assert_eq!(
            parse(json!({"mode": "add", "tab": "архив", "text": "x", "scope": "external"}))
                .unwrap_err(),
            "error|PERMISSION_DENIED|Operation 'add' not allowed on 'архив'"
        );
        assert_eq!(
            parse(json!({"mode": "tab_create", "path": "info/sub"})).unwrap_err(),
            "error|PERMISSION_DENIED|Operation 'tab_create' not allowed on 'info/sub'"
        );
        assert_eq!(
            parse(json!({"mode": "add", "tab": "info", "text": ""})).unwrap_err(),
            "error|INVALID_PARAM|Parameter 'text' must not be empty for mode 'add'"
        );
        assert_eq!(
            parse(json!({"mode": "update", "tab": "info", "index": 0, "field": "text", "edit_mode": "substitute", "text": "x"})).unwrap_err(),
            "error|MISSING_PARAM|Parameter 'match' required for mode 'update'"
        );
        assert!(
            parse(json!({"mode": "move", "tab": "info", "index": 0, "to_tab": "mcp/info"}))
                .is_err()
        );
        assert_eq!(
            parse(json!({"mode": "rename"})).unwrap_err(),
            "error|INVALID_MODE|Invalid mode 'rename' (expected one of: add, update, delete, move, tab_create, tab_delete)"
        );
    }
}
