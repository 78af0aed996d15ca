//! The definitions of `search` and `fetch`, in the shapes OpenAI documents for ChatGPT
//! connectors: one required string argument each, read-only.

use std::sync::LazyLock;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::json;

pub const SEARCH_TOOL: &str = "search";
pub const FETCH_TOOL: &str = "fetch";

const SEARCH_DESCRIPTION: &str = "Search the CopyQ clipboard history the token may read: items whose \
text, note or tags contain any of the query's words (case-insensitive). Returns {\"results\": [{\"id\", \
\"title\", \"url\"}]}; pass an id to fetch for the whole item.";
const FETCH_DESCRIPTION: &str = "Fetch one CopyQ clipboard item by an id from search: {\"id\", \"title\", \
\"text\", \"url\", \"metadata\"} with its whole text (secrets masked as mcp_read masks them).";

fn tool(name: &'static str, title: &str, description: &'static str, arg: &str, doc: &str) -> Tool {
    let schema = json!({
        "type": "object",
        "properties": {arg: {"type": "string", "description": doc}},
        "required": [arg]
    });
    let schema = schema.as_object().cloned().unwrap_or_default();
    Tool::new(name, description, std::sync::Arc::new(schema))
        .with_title(title)
        .with_annotations(
            ToolAnnotations::with_title(title)
                .read_only(true)
                .destructive(false)
                .open_world(false),
        )
}

static SEARCH: LazyLock<Tool> = LazyLock::new(|| {
    tool(
        SEARCH_TOOL,
        "Search CopyQ",
        SEARCH_DESCRIPTION,
        "query",
        "Words to look for.",
    )
});

static FETCH: LazyLock<Tool> = LazyLock::new(|| {
    tool(
        FETCH_TOOL,
        "Fetch a CopyQ item",
        FETCH_DESCRIPTION,
        "id",
        "An id search returned.",
    )
});

/// `search` and `fetch`, for every role.
pub fn tools() -> [Tool; 2] {
    [SEARCH.clone(), FETCH.clone()]
}

pub fn is_tool(name: &str) -> bool {
    matches!(name, SEARCH_TOOL | FETCH_TOOL)
}
