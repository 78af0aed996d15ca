//! The tool definitions clients see in `tools/list`. Names, descriptions and schemas are static text:
//! no clipboard content is ever mixed in.

use std::sync::{Arc, LazyLock};

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};

use crate::auth::Role;
use crate::clipboard::Scope;
use crate::mcp::{read, validate, write};

pub const READ_TOOL: &str = "mcp_read";
pub const WRITE_TOOL: &str = "mcp_write";
pub const VALIDATE_TOOL: &str = "mcp_validate";

const READ_DESCRIPTION: &str = "Read CopyQ clipboard tabs and items. Modes: tree (tabs with item previews), \
list (items of one tab, paginated), item (one item in full), search (case-insensitive regex over text, \
note and tags). scope: mcp (managed tabs under mcp/, addressed relative to it: info, заметки, workspace/...), \
external (other tabs, by exact name), all. Replies are pipe-separated lines; failures are error|CODE|message. \
An item holding more than plain text (image, HTML, files) has a content: field right after its index (a \
line before text: in item mode), e.g. content:image image/png 1920x1080 245760B; '; text from text/html' \
there means the text shown was derived from that format. item also returns the item's image as image \
content (scaled to a long edge of 1568 px by default); its image: line says what was sent, or why not.";
const WRITE_DESCRIPTION: &str = "Change managed tabs (mcp/info, mcp/заметки, mcp/workspace/...). Modes: add, \
update, delete, move, tab_create, tab_delete; intent=preview shows the effect without changing anything. \
New items go to index 0 and indices shift. External tabs are read-only. An item shown with \
[redacted:KIND] masks is edited as shown: a substitute whose match touches a mask, a new value that repeats \
one, or an edit that would unmask a secret is refused with PERMISSION_DENIED, and a password manager's item \
can be deleted or moved, not edited.";
const VALIDATE_DESCRIPTION: &str = "Check an mcp_read or mcp_write call without running it: parameters, tab \
existence, index bounds, and the estimated size of the reply.";

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn read_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": read::MODES},
            "scope": {"type": "string", "enum": Scope::names(), "default": "mcp"},
            "tab": {"type": "string", "description": "Tab path: relative for managed tabs (info, workspace/p1), the exact name for external ones. Required for list and item. An external tab whose name is shown masked ([redacted:KIND]) cannot be named: read it through tree or search."},
            "index": {"type": "integer", "description": "Item index, 0 is the newest. Required for item."},
            "query": {"type": "string", "description": "Case-insensitive regular expression. Required for search."},
            "search_in": {"type": "string", "enum": read::search_in_names(), "default": "all"},
            "max_depth": {"type": "integer", "minimum": 1, "maximum": 10, "default": 2},
            "max_items": {"type": "integer", "minimum": 0, "maximum": 100, "default": 20, "description": "1-100; 0 is allowed in tree for structure only."},
            "skip": {"type": "integer", "minimum": 0, "default": 0},
            "include_text": {"type": "boolean", "default": true},
            "include_tags": {"type": "boolean", "default": true},
            "include_note": {"type": "boolean", "default": false},
            "with_version": {"type": "boolean", "default": false, "description": "list and item: show each item's version (v:...), for expected_version in mcp_write."}
        },
        "required": ["mode"]
    })
}

fn write_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": write::MODES},
            "intent": {"type": "string", "enum": write::intent_names(), "default": "execute"},
            "scope": {"type": "string", "enum": Scope::names(), "default": "mcp", "description": "Accepted as in mcp_read; writes only ever go to managed tabs under mcp/."},
            "tab": {"type": "string", "description": "Managed tab path (info, заметки, workspace/...). Required for add, update, delete, move."},
            "index": {"type": "integer", "description": "Item index. Required for update, delete, move."},
            "text": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"type": "string"},
            "field": {"type": "string", "enum": write::Field::names()},
            "edit_mode": {"type": "string", "enum": write::EditMode::names(), "default": "replace"},
            "match": {"type": "string", "description": "Text to replace. Required for edit_mode=substitute. Matched in the text as mcp_read shows it; a match touching a [redacted:KIND] mask is refused (PERMISSION_DENIED)."},
            "to_tab": {"type": "string", "description": "Target tab. Required for move."},
            "path": {"type": "string", "description": "Sub-tab under workspace/. Required for tab_create and tab_delete."},
            "expected_version": {"type": "string", "description": "update, delete, move: the version mcp_read with_version showed; refused if the item at index is no longer that one."}
        },
        "required": ["mode"]
    })
}

fn validate_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string", "enum": validate::TOOLS},
            "params": {"type": "object", "description": "The arguments of the call to check."}
        },
        "required": ["tool", "params"]
    })
}

static READ: LazyLock<Tool> = LazyLock::new(|| {
    Tool::new(READ_TOOL, READ_DESCRIPTION, schema(read_schema()))
        .with_title("Read CopyQ")
        .with_annotations(
            ToolAnnotations::with_title("Read CopyQ")
                .read_only(true)
                .destructive(false)
                .open_world(false),
        )
});

static WRITE: LazyLock<Tool> = LazyLock::new(|| {
    Tool::new(WRITE_TOOL, WRITE_DESCRIPTION, schema(write_schema()))
        .with_title("Write CopyQ (mcp/ tabs)")
        .with_annotations(
            ToolAnnotations::with_title("Write CopyQ (mcp/ tabs)")
                .read_only(false)
                .destructive(true)
                .open_world(false),
        )
});

static VALIDATE: LazyLock<Tool> = LazyLock::new(|| {
    Tool::new(
        VALIDATE_TOOL,
        VALIDATE_DESCRIPTION,
        schema(validate_schema()),
    )
    .with_title("Validate a CopyQ call")
    .with_annotations(
        ToolAnnotations::with_title("Validate a CopyQ call")
            .read_only(true)
            .destructive(false)
            .open_world(false),
    )
});

/// The tools a role may see and call, in a stable order.
pub fn tools_for(role: Role) -> Vec<Tool> {
    let mut tools = vec![READ.clone()];
    if role.can_write() {
        tools.push(WRITE.clone());
    }
    tools.push(VALIDATE.clone());
    tools
}

/// Whether `role` may call the tool `name`; unknown names are never allowed.
pub fn allowed(role: Role, name: &str) -> bool {
    match name {
        READ_TOOL | VALIDATE_TOOL => true,
        WRITE_TOOL => role.can_write(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::error::ToolError;

    fn properties(schema: &Value) -> Vec<String> {
        let mut keys: Vec<String> = schema["properties"]
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        keys.sort();
        keys
    }

    fn sorted(known: &[&str]) -> Vec<String> {
        let mut k: Vec<String> = known.iter().map(|s| s.to_string()).collect();
        k.sort();
        k
    }

    /// What a tool advertises is exactly what it accepts: a parameter added to one list and not
    /// the other fails here.
    #[test]
    fn schemas_name_exactly_the_accepted_parameters() {
        assert_eq!(properties(&read_schema()), sorted(crate::mcp::read::KNOWN));
        assert_eq!(
            properties(&write_schema()),
            sorted(crate::mcp::write::KNOWN)
        );
        assert_eq!(
            properties(&validate_schema()),
            sorted(crate::mcp::validate::KNOWN)
        );
    }

    /// (parameter, its `enum` values), sorted by parameter.
    type Enums = Vec<(String, Vec<String>)>;

    /// Each `enum` a schema lists.
    fn enums(schema: &Value) -> Enums {
        let props = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let mut found: Enums = props
            .into_iter()
            .filter_map(|(name, p)| {
                let values = p["enum"].as_array()?.iter();
                Some((
                    name,
                    values
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect(),
                ))
            })
            .collect();
        found.sort();
        found
    }

    /// The parsers' lists, as [`enums`] gives a schema's.
    fn lists(pairs: &[(&str, &[&str])]) -> Enums {
        let mut found: Enums = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect();
        found.sort();
        found
    }

    /// Every `enum` in a schema is one of the parser's lists: a list written into a schema by
    /// hand, or a parameter given values the parser does not check, fails here.
    #[test]
    fn every_enum_is_the_parser_s_list() {
        let scopes = Scope::names();
        assert_eq!(
            enums(&read_schema()),
            lists(&[
                ("mode", read::MODES),
                ("scope", &scopes),
                ("search_in", &read::search_in_names()),
            ])
        );
        assert_eq!(
            enums(&write_schema()),
            lists(&[
                ("edit_mode", &write::EditMode::names()),
                ("field", &write::Field::names()),
                ("intent", &write::intent_names()),
                ("mode", write::MODES),
                ("scope", &scopes),
            ])
        );
        assert_eq!(
            enums(&validate_schema()),
            lists(&[("tool", validate::TOOLS)])
        );
    }

    /// Why the tool refused `param`'s value, if it did (other refusals, a parameter the base
    /// call lacks for that mode, are not about the value).
    fn refused_value(result: Result<(), ToolError>, param: &str) -> Option<String> {
        let e = result.err()?;
        let line = e.line();
        let about_it = e.code() == "INVALID_MODE"
            || line.contains(&format!("Parameter '{param}' must be one of"));
        about_it.then_some(line)
    }

    /// Every value a schema lists is taken by its parser: a value added to a list with no
    /// meaning behind it (a mode with no arm) fails here. A value the parser alone knew could not
    /// pass its check against the same list.
    #[test]
    fn every_listed_value_is_accepted() {
        let read_base = json!({"mode": "search", "query": "x", "tab": "info", "index": 0});
        for (param, values) in enums(&read_schema()) {
            for value in values {
                let mut args = read_base.clone();
                args[&param] = json!(value);
                let parsed = read::ReadQuery::parse(args.as_object().unwrap()).map(|_| ());
                assert_eq!(refused_value(parsed, &param), None, "read {param}={value}");
            }
        }
        let write_base = json!({"mode": "update", "tab": "info", "index": 0, "field": "tags",
            "edit_mode": "replace", "text": "x", "note": "x", "tags": ["x"], "match": "m", "path": "workspace/x",
            "to_tab": "workspace/y"});
        let roots = crate::clipboard::Roots::default();
        for (param, values) in enums(&write_schema()) {
            for value in values {
                let mut args = write_base.clone();
                args[&param] = json!(value);
                let parsed = write::WriteCall::parse(
                    args.as_object().unwrap(),
                    &roots,
                    &crate::clipboard::Coverage::All,
                )
                .map(|_| ());
                assert_eq!(refused_value(parsed, &param), None, "write {param}={value}");
            }
        }
    }

    fn names(role: Role) -> Vec<String> {
        tools_for(role)
            .into_iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    #[test]
    fn read_role_never_sees_write() {
        assert_eq!(names(Role::Read), [READ_TOOL, VALIDATE_TOOL]);
        assert_eq!(names(Role::Write), [READ_TOOL, WRITE_TOOL, VALIDATE_TOOL]);
        assert!(!allowed(Role::Read, WRITE_TOOL));
        assert!(allowed(Role::Write, WRITE_TOOL));
        assert!(!allowed(Role::Write, "nope"));
    }

    #[test]
    fn annotations() {
        let t = tools_for(Role::Write);
        let a = |i: usize| t[i].annotations.clone().unwrap_or_default();
        assert_eq!(a(0).read_only_hint, Some(true));
        assert_eq!(a(1).destructive_hint, Some(true));
        assert_eq!(a(2).read_only_hint, Some(true));
        assert!(
            t.iter()
                .all(|t| t.annotations.as_ref().and_then(|a| a.open_world_hint) == Some(false))
        );
        assert!(t.iter().all(|t| t.title.is_some()));
    }
}
