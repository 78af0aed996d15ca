//! The replies of `mcp_write`: `ok|...` after a write, `preview|...` blocks before one.

use super::edit::{EditMode, Field};
use super::plan::{Add, Plan};
use crate::backend::Item;
use crate::clipboard::{TabRef, preview};
use crate::mcp::format::{quoted, tab_fields, tag_list};

/// What executing a plan reported back, where the reply depends on it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Done {
    /// `tab_create`: whether the tab was new.
    pub created: bool,
    /// `tab_delete`: items that went with the tabs.
    pub items_removed: usize,
    /// `add`, `move`: the row the item landed at (0 unless the tab's first rows are pinned).
    pub row: usize,
}

impl Done {
    /// What a plan would report if executed now: for validation's size estimate.
    pub fn expected(plan: &Plan) -> Self {
        match plan {
            Plan::TabCreate { exists, .. } => Self {
                created: !exists,
                ..Self::default()
            },
            Plan::TabDelete { tabs, .. } => Self {
                items_removed: tabs.iter().map(|p| p.total).sum(),
                ..Self::default()
            },
            _ => Self::default(),
        }
    }
}

fn python_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

fn tags_and_note(item: &Item) -> String {
    let marker = if item.has_note() { " +note" } else { "" };
    format!("tags:{}{marker}", tag_list(&item.tags))
}

/// The reply to an add made; `row`: where it landed (see [`Done::row`]).
pub fn ok_add(Add { tab, item, .. }: &Add, row: usize) -> String {
    format!(
        "ok|mode:add|{}|index:{row}|text_len:{}|tags:{}|note:{}",
        tab_fields(tab),
        item.text.chars().count(),
        item.tags.len(),
        python_bool(item.has_note())
    )
}

pub fn ok(plan: &Plan, done: Done) -> String {
    match plan {
        Plan::Add(add) => ok_add(add, done.row),
        Plan::Update {
            tab, index, field, ..
        } => {
            format!(
                "ok|mode:update|{}|index:{index}|field:{}",
                tab_fields(tab),
                field.name()
            )
        }
        Plan::Delete { tab, index, .. } => {
            format!("ok|mode:delete|{}|index:{index}", tab_fields(tab))
        }
        Plan::Move { from, to, .. } => {
            format!(
                "ok|mode:move|from:{}|to:{}|new_index:{}",
                from.full, to.full, done.row
            )
        }
        Plan::TabCreate { path, .. } => {
            let status = if done.created {
                "created"
            } else {
                "already_exists"
            };
            format!(
                "ok|mode:tab_create|path:{}|full_path:{}|status:{status}",
                path.shown, path.full
            )
        }
        Plan::TabDelete { path, tabs } => {
            let mut line = format!(
                "ok|mode:tab_delete|path:{}|full_path:{}|items_removed:{}",
                path.shown, path.full, done.items_removed
            );
            if tabs.len() > 1 {
                line.push_str(&format!("|tabs_removed:{}", tabs.len()));
            }
            line
        }
    }
}

fn field_value(item: &Item, field: Field) -> String {
    match field {
        Field::Text => quoted(&item.text),
        Field::Tags => tag_list(&item.tags),
        Field::Note => format!("\"{}\"", preview(&item.note)),
    }
}

/// A preview shows what CopyQ holds (the item a write replaces, deletes or moves) as a read
/// would: masked as `[privacy]` says, a password manager's item hidden. The agent's own new text
/// is shown as it gave it.
pub fn preview_masked(plan: &Plan, privacy: &crate::privacy::Privacy) -> String {
    let mut shown = plan.clone();
    let existing: Vec<&mut Item> = match &mut shown {
        Plan::Update { before, after, .. } => vec![before, after],
        Plan::Delete { item, .. } | Plan::Move { item, .. } => vec![item],
        Plan::Add(_) | Plan::TabCreate { .. } | Plan::TabDelete { .. } => Vec::new(),
    };
    crate::mcp::read::mask_items(privacy, false, existing);
    preview_of(&shown)
}

fn preview_of(plan: &Plan) -> String {
    let lines: Vec<String> = match plan {
        Plan::Add(Add { tab, item, .. }) => add_preview(tab, item),
        Plan::Update {
            tab,
            index,
            field,
            edit,
            before,
            after,
        } => update_preview(tab, *index, *field, *edit, (before, after)),
        Plan::Delete { tab, index, item } => vec![
            "preview|mode:delete".into(),
            format!("tab:{}|index:{index}", tab.shown),
            "will_delete:".into(),
            format!("text:{}", quoted(&item.text)),
            tags_and_note(item),
        ],
        Plan::Move {
            from,
            index,
            to,
            item,
            ..
        } => vec![
            "preview|mode:move".into(),
            format!(
                "from:{}|index:{index}|to:{}|new_index:0",
                from.full, to.full
            ),
            "will_move:".into(),
            format!("text:{}", quoted(&item.text)),
            tags_and_note(item),
        ],
        Plan::TabCreate { path, exists } => {
            let what = if *exists {
                "already_exists"
            } else {
                "will_create"
            };
            vec![
                "preview|mode:tab_create".into(),
                format!("{what}:{}", path.full),
            ]
        }
        Plan::TabDelete { tabs, .. } => std::iter::once("preview|mode:tab_delete".to_owned())
            .chain(tabs.iter().flat_map(|page| {
                [
                    format!("will_delete:{}", page.name),
                    format!("items_count:{}", page.total),
                ]
            }))
            .collect(),
    };
    lines.join("\n")
}

fn add_preview(tab: &TabRef, item: &Item) -> Vec<String> {
    let mut l = vec![
        "preview|mode:add".into(),
        format!("tab:{}", tab.shown),
        "will_add:".into(),
        format!("text:{}", quoted(&item.text)),
        format!("tags:{}", tag_list(&item.tags)),
    ];
    if item.has_note() {
        l.push(format!("note:\"{}\"", preview(&item.note)));
    }
    l
}

fn update_preview(
    tab: &TabRef,
    index: usize,
    field: Field,
    edit: EditMode,
    (before, after): (&Item, &Item),
) -> Vec<String> {
    vec![
        "preview|mode:update".into(),
        format!(
            "tab:{}|index:{index}|field:{}|edit_mode:{}",
            tab.shown,
            field.name(),
            edit.name()
        ),
        format!("before:{}", field_value(before, field)),
        format!("after:{}", field_value(after, field)),
    ]
}
