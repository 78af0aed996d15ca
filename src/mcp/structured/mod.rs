//! Structured results (`[mcp] structured`): each tool's `outputSchema` in `tools/list` and a
//! `structuredContent` beside the text reply, for clients on a protocol version that defines them
//! (2025-06-18 and later). The JSON is the text reply's own fields, split back out of the text
//! ([`read`], [`write`]): one source, so the two cannot disagree and the JSON shows nothing the
//! read path did not already mask. The text content stays exactly as without this option.
//! `search` and `fetch` (`[mcp] chatgpt_tools`) already reply in JSON: theirs is that JSON.

mod fields;
mod read;
mod schema;
mod write;

#[cfg(test)]
mod tests;

use rmcp::model::{CallToolResult, ProtocolVersion, Tool};
use serde_json::{Map, Value, json};

use super::catalog::{READ_TOOL, VALIDATE_TOOL, WRITE_TOOL};
use super::error::ToolError;
use super::read::ReadQuery;

/// Whether a client speaking `version` knows `outputSchema` and `structuredContent` (2025-06-18).
pub fn supported_at(version: &ProtocolVersion) -> bool {
    *version >= ProtocolVersion::V_2025_06_18
}

/// Gives each tool of `tools` its output schema.
pub fn add_schemas(tools: &mut [Tool]) {
    for tool in tools {
        tool.output_schema = schema::of(&tool.name);
    }
}

/// The JSON of a reply of the tool `name` called with `args`: the text's fields (for `search`
/// and `fetch`, whose text is JSON, that JSON itself), or the error's code and message.
/// `None` for a tool without an output schema.
pub fn content(
    name: &str,
    args: &Map<String, Value>,
    reply: Result<&str, &ToolError>,
) -> Option<Value> {
    schema::of(name)?;
    let text = match reply {
        Ok(text) => text,
        Err(e) => {
            let line = e.line();
            let message = line.splitn(3, '|').nth(2).unwrap_or("");
            return Some(json!({"error": {"code": e.code(), "message": message}}));
        }
    };
    Some(match name {
        READ_TOOL => read_reply(args, text),
        WRITE_TOOL => write::reply(text),
        VALIDATE_TOOL => write::validation(text),
        // Always JSON (`chatgpt::call` writes it); it serializes back to the same bytes.
        _ => serde_json::from_str(text).ok()?,
    })
}

/// The JSON of an `mcp_read` reply `text` to a call with `args`.
pub fn read_reply(args: &Map<String, Value>, text: &str) -> Value {
    match ReadQuery::parse(args) {
        Ok(query) => read::reply(&query, text),
        // The call ran, so its arguments parsed; keep a reply regardless.
        Err(_) => json!({}),
    }
}

/// `result` with `value` as its structured content.
pub fn attach(mut result: CallToolResult, value: Value) -> CallToolResult {
    result.structured_content = Some(value);
    result
}
