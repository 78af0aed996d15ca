//! An update of an item that holds a mask, made on what the caller was shown: a `substitute`
//! matches the masked text only and is refused when it touches a mask (rather than answering
//! whether a guess of the secret matched), a new value that repeats a mask is refused (it would
//! write the mask over the secret), an edit that would leave a secret unrecognised is refused, and
//! an item from a password manager is not edited at all. Without a mask, [`edited`] as before.

use super::super::ToolState;
use super::super::error::ToolError;
use super::super::format::one_line;
use super::super::mask::{Refused, View};
use super::edit::{EditMode, Field, NewValue, edited};
use crate::backend::Item;
use crate::clipboard::TabRef;
use crate::privacy::Redactor;

/// The item after an update, as [`edited`] says, for the item `before` at `index` of `tab`.
pub(super) fn edited_seen(
    tools: &ToolState,
    (tab, index): (&TabRef, usize),
    before: &Item,
    (field, edit): (Field, EditMode),
    value: &NewValue,
    matched: Option<&str>,
) -> Result<Item, ToolError> {
    let denied = |why: String| {
        ToolError::PermissionDenied(format!(
            "Item {index} of '{}' {why}; nothing was changed",
            tab.shown
        ))
    };
    if before.secret {
        return Err(denied(
            "came from a password manager and is hidden whole: it can be deleted or moved, not edited".into(),
        ));
    }
    let Some(r) = tools.privacy.redactor_for(false) else {
        return edited(before, field, edit, value, matched);
    };
    let refused = |e: Refused| {
        denied(match e {
            Refused::Touches => format!(
                "holds redacted text, and the match '{}' touches it: a substitute may match only text shown \
                 outside [redacted:...]",
                one_line(matched.unwrap_or_default())
            ),
            Refused::Unmasks => {
                "holds redacted text, and this edit would change the text around a secret so \
                                  that it is no longer recognised, and shown"
                    .into()
            }
        })
    };
    let repeats = || {
        denied(format!(
            "holds redacted text, and the new {} {} a [redacted:...] mask of it: written back, the mask would \
             replace the secret. Edit the text around it with edit_mode=substitute, or give a value without the mask",
            field.name(),
            if field == Field::Tags {
                "repeat"
            } else {
                "repeats"
            }
        ))
    };
    match (field, value) {
        (Field::Text | Field::Note, NewValue::Str(v)) => {
            let raw = if field == Field::Text {
                &before.text
            } else {
                &before.note
            };
            let view = View::of(Some(r), raw);
            if !view.is_masked() {
                return edited(before, field, edit, value, matched);
            }
            if view.repeated_in(v) {
                return Err(repeats());
            }
            let new = text_edit(r, &view, raw, edit, v, matched).map_err(refused)?;
            let Some(new) = new else {
                return Err(ToolError::MatchNotFound(one_line(
                    matched.unwrap_or_default(),
                )));
            };
            // What is left of the edit matrix (text must not become empty) is `edited`'s.
            edited(before, field, EditMode::Replace, &NewValue::Str(new), None)
        }
        (Field::Tags, NewValue::Tags(list)) => {
            let views: Vec<View> = before.tags.iter().map(|t| View::of(Some(r), t)).collect();
            if !views.iter().any(View::is_masked) {
                return edited(before, field, edit, value, matched);
            }
            if list.iter().any(|t| views.iter().any(|v| v.repeated_in(t))) {
                return Err(repeats());
            }
            let mut after = before.clone();
            after.tags = tag_edit(&before.tags, &views, edit, list);
            Ok(after)
        }
        _ => edited(before, field, edit, value, matched),
    }
}

/// The new raw text, or `None` when a substitute's match is not in the shown text.
fn text_edit(
    r: &Redactor,
    view: &View,
    raw: &str,
    edit: EditMode,
    value: &str,
    matched: Option<&str>,
) -> Result<Option<String>, Refused> {
    let made = match (edit, matched) {
        (EditMode::Append, _) => view.join(raw, value, true),
        (EditMode::Prepend, _) => view.join(raw, value, false),
        (EditMode::Substitute, Some(m)) => match view.substitute(raw, m, value)? {
            Some(made) => made,
            None => return Ok(None),
        },
        _ => return Ok(Some(value.to_owned())),
    };
    made.checked(r).map(Some)
}

/// Tags edited as shown: `append` skips a tag already shown, `remove` takes the tags shown so.
fn tag_edit(raw: &[String], views: &[View], edit: EditMode, list: &[String]) -> Vec<String> {
    let shown = |i: usize| views[i].shown.as_str();
    match edit {
        EditMode::Replace => list.to_vec(),
        EditMode::Append => {
            let mut all = raw.to_vec();
            all.extend(
                list.iter()
                    .filter(|t| !(0..raw.len()).any(|i| shown(i) == t.as_str()))
                    .cloned(),
            );
            all
        }
        _ => (0..raw.len())
            .filter(|&i| !list.iter().any(|t| t == shown(i)))
            .map(|i| raw[i].clone())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use crate::auth::{Principal, Role};
    use crate::backend::{Backend, Item, MemoryBackend, ReadRequest, TabSelector};
    use crate::clipboard::{Coverage, Roots};
    use crate::mcp::ToolState;
    use crate::privacy::{Privacy, Redact};

    const KEY: &str = "AKIAQYLPMN5HTIQR7WDE";

    fn tools() -> (Arc<ToolState>, MemoryBackend) {
        let mut vault = Item::new("hunter2", &["pw"], "");
        vault.secret = true;
        let mem = MemoryBackend::with_tabs(vec![(
            "mcp/info".into(),
            vec![Item::new("x", &["plain", &format!("k {KEY}")], ""), vault],
        )]);
        let state = ToolState::new(Backend::Memory(mem.clone()), Roots::default())
            .with_privacy(Privacy::new(Redact::All, &[]).expect("rules"));
        (Arc::new(state), mem)
    }

    async fn write(tools: &Arc<ToolState>, args: serde_json::Value) -> String {
        let who = Principal {
            subject: "w".into(),
            role: Role::Write,
            token_id: "j".into(),
            grant: None,
            tabs: Coverage::All,
            expires: None,
        };
        super::super::call(tools, &who, args.as_object().expect("object"))
            .await
            .unwrap_or_else(|e| e.line())
    }

    fn tags(mem: &MemoryBackend) -> Vec<String> {
        let req = ReadRequest {
            tabs: TabSelector::Names {
                names: vec!["mcp/info".into()],
            },
            skip: 0,
            limit: Some(1),
            preview: None,
        };
        mem.read(&req).expect("read").pages[0].items[0].tags.clone()
    }

    #[tokio::test]
    async fn tags_are_edited_as_shown() {
        let (t, mem) = tools();
        let edit = |mode: &str, list: &[&str]| json!({"mode": "update", "tab": "info", "index": 0, "field": "tags", "edit_mode": mode, "tags": list});
        // Removing a guess of the masked tag changes nothing: only tags as shown are taken.
        write(&t, edit("remove", &[&format!("k {KEY}")])).await;
        write(&t, edit("append", &["new", "plain"])).await;
        assert_eq!(tags(&mem), ["plain", &format!("k {KEY}"), "new"]);
        write(&t, edit("remove", &["plain"])).await;
        assert_eq!(tags(&mem), [&format!("k {KEY}"), "new"]);
        assert_eq!(
            write(&t, edit("replace", &["k [redacted:aws-access-token]"])).await,
            "error|PERMISSION_DENIED|Item 0 of 'info' holds redacted text, and the new tags repeat a [redacted:...] \
             mask of it: written back, the mask would replace the secret. Edit the text around it with \
             edit_mode=substitute, or give a value without the mask; nothing was changed"
        );
    }

    #[tokio::test]
    async fn a_password_managers_item_is_not_edited() {
        let (t, _) = tools();
        let got = write(&t, json!({"mode": "update", "tab": "info", "index": 1, "field": "text", "edit_mode": "substitute", "match": "hunter", "text": "x"})).await;
        assert_eq!(
            got,
            "error|PERMISSION_DENIED|Item 1 of 'info' came from a password manager and is hidden whole: it can be \
             deleted or moved, not edited; nothing was changed"
        );
    }
}
