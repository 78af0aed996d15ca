//! The output schemas: what `structuredContent` holds for each tool. Loose where the reply's
//! fields depend on the mode (a field absent from the text is absent from the JSON), exact on
//! the types of the fields every reply of a mode shares. `search` and `fetch` are exact: OpenAI's
//! documented shapes, every field required, nothing else, or else the `error` object.

use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::{Value, json};

use crate::mcp::catalog::{READ_TOOL, VALIDATE_TOOL, WRITE_TOOL};
use crate::mcp::chatgpt::{FETCH_TOOL, SEARCH_TOOL};

fn item() -> Value {
    json!({
        "type": "object",
        "properties": {
            "index": {"type": ["integer", "null"]},
            "tab": {"type": "string"},
            "content": {"type": "string"},
            "text": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "has_note": {"type": "boolean"},
            "note": {"type": "string"},
            "version": {"type": "string"},
            "match": {"type": "array", "items": {"type": "string"}},
            "external": {"type": "boolean"}
        }
    })
}

fn error() -> Value {
    json!({
        "type": "object",
        "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
        "required": ["code", "message"]
    })
}

fn read() -> Value {
    json!({
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": crate::mcp::read::MODES},
            "tab": {"type": "string"},
            "full_path": {"type": "string"},
            "scope": {"type": "string"},
            "total": {"type": "integer"},
            "showing": {"type": "string"},
            "index": {"type": "integer"},
            "version": {"type": "string"},
            "query": {"type": "string"},
            "results": {"type": "integer"},
            "content": {"type": "string"},
            "image": {"type": "string"},
            "text": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "has_note": {"type": "boolean"},
            "note": {"type": "string"},
            "items": {"type": "array", "items": item()},
            "tabs": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "tab": {"type": "string"},
                    "external": {"type": "boolean"},
                    "total": {"type": "integer"},
                    "items": {"type": "array", "items": item()}
                },
                "required": ["tab", "external", "total", "items"]
            }},
            "error": error()
        }
    })
}

fn write() -> Value {
    json!({
        "type": "object",
        "properties": {
            "result": {"type": "string", "enum": ["ok", "preview"]},
            "status": {"type": "string", "enum": ["created", "already_exists"]},
            "mode": {"type": "string"},
            "index": {"type": "integer"},
            "new_index": {"type": "integer"},
            "items_removed": {"type": "integer"},
            "lines": {"type": "array", "items": {"type": "object"}},
            "error": error()
        }
    })
}

fn validate() -> Value {
    json!({
        "type": "object",
        "properties": {
            "valid": {"type": "boolean"},
            "warnings": {"type": "integer"},
            "errors": {"type": "integer"},
            "estimated_tokens": {"type": "integer"},
            "problems": {"type": "array", "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": ["warning", "error"]},
                    "code": {"type": "string"},
                    "message": {"type": "string"}
                },
                "required": ["kind", "code", "message"]
            }},
            "error": error()
        }
    })
}

/// `fields` (all required, no others) or, for a failed call, `error` alone.
fn exact(fields: Value, error_too: Value) -> Value {
    let names: Vec<Value> = fields
        .as_object()
        .map(|f| f.keys().cloned().map(Value::String).collect())
        .unwrap_or_default();
    let mut properties = fields;
    properties["error"] = error_too;
    json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
        "oneOf": [{"required": names}, {"required": ["error"]}]
    })
}

/// `{"results": [{"id", "title", "url"}]}`.
fn search() -> Value {
    let string = json!({"type": "string"});
    let result = json!({
        "type": "object",
        "properties": {"id": string, "title": string, "url": string},
        "required": ["id", "title", "url"],
        "additionalProperties": false
    });
    exact(
        json!({"results": {"type": "array", "items": result}}),
        error(),
    )
}

/// `{"id", "title", "text", "url", "metadata"}`; the metadata is OpenAI's free key/value
/// object, here the item's tab, index, tags and (when it has one) note.
fn fetch() -> Value {
    let string = json!({"type": "string"});
    let metadata = json!({
        "type": "object",
        "properties": {
            "tab": string,
            "index": {"type": "integer"},
            "tags": {"type": "array", "items": string},
            "note": string
        },
        "required": ["tab", "index", "tags"]
    });
    exact(
        json!({"id": string, "title": string, "text": string, "url": string,
            "metadata": metadata}),
        error(),
    )
}

/// The output schema of the tool `name`; `None` for a tool without one.
pub fn of(name: &str) -> Option<Arc<JsonObject>> {
    let value = match name {
        READ_TOOL => read(),
        WRITE_TOOL => write(),
        VALIDATE_TOOL => validate(),
        SEARCH_TOOL => search(),
        FETCH_TOOL => fetch(),
        _ => return None,
    };
    match value {
        Value::Object(map) => Some(Arc::new(map)),
        _ => None,
    }
}
