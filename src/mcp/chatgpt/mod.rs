//! `search` and `fetch` (`[mcp] chatgpt_tools`): the two tools ChatGPT's deep research and
//! company knowledge require, with OpenAI's documented shapes, each reply one text content
//! holding the JSON. Both run `mcp_read` itself (its `search` and `list`/`item` modes) over the
//! tabs the caller covers and read its replies back through [`super::structured`]: the same
//! coverage, limits and masking as `mcp_read`, no second read path.
//!
//! CopyQ gives items no ids, only positions that shift when items are added. An id here is the
//! item's `copyq://` URL plus a fingerprint of its preview as `mcp_read` shows it: `fetch` reads
//! the item at the URL's index and, when its preview has another fingerprint, looks for the
//! preview through the tab, so an id survives items added or removed before it; it fails only
//! when the item itself was changed or removed (or equals another item's preview: the first wins).

mod catalog;
mod id;

use serde_json::{Map, Value, json};

use super::error::ToolError;
use super::{ToolState, read, structured};
use crate::clipboard::Coverage;
pub use catalog::{FETCH_TOOL, SEARCH_TOOL, is_tool, tools};
use id::ItemId;

/// Results `search` gives at most.
const MAX_RESULTS: usize = 20;
/// Rows `fetch` reads at a time while it looks for a moved item, and at most in all.
const PAGE: usize = 100;
const MAX_SCAN: usize = 2000;

/// The reply of `search` or `fetch`, as the one text content both return.
pub async fn call(
    tools: &ToolState,
    tabs: &Coverage,
    name: &str,
    args: &Map<String, Value>,
) -> Result<String, ToolError> {
    let reply = match name {
        SEARCH_TOOL => search(tools, tabs, string(args, "query")?).await?,
        _ => fetch(tools, tabs, string(args, "id")?).await?,
    };
    Ok(reply.to_string())
}

fn string<'a>(args: &'a Map<String, Value>, key: &str) -> Result<&'a str, ToolError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::InvalidParam(format!("Parameter '{key}' is required")))
}

/// `mcp_read` with `args`, its reply as JSON.
async fn read_json(tools: &ToolState, tabs: &Coverage, args: Value) -> Result<Value, ToolError> {
    let args = args.as_object().cloned().unwrap_or_default();
    let reply = read::call(tools, tabs, &args).await?;
    Ok(structured::read_reply(&args, &reply.text))
}

/// Items whose text, note or tags hold any of the query's words (case-insensitive, literally).
async fn search(tools: &ToolState, tabs: &Coverage, query: &str) -> Result<Value, ToolError> {
    let words: Vec<String> = query.split_whitespace().map(regex::escape).collect();
    if words.is_empty() {
        return Ok(json!({"results": []}));
    }
    let args = json!({"mode": "search", "query": words.join("|"), "scope": "all",
        "max_items": MAX_RESULTS, "include_tags": false});
    let found = read_json(tools, tabs, args).await?;
    let results: Vec<Value> = rows(&found)
        .iter()
        .filter_map(|hit| {
            let id = ItemId::of_row(hit)?;
            Some(json!({"id": id.to_string(), "title": title(hit), "url": id.url()}))
        })
        .collect();
    Ok(json!({"results": results}))
}

/// The item an id names, whole, with its tab, index, tags and note as metadata.
async fn fetch(tools: &ToolState, tabs: &Coverage, raw: &str) -> Result<Value, ToolError> {
    let id: ItemId = raw.parse()?;
    let index = locate(tools, tabs, &id).await?;
    let (tab, scope) = id.address();
    let args = json!({"mode": "item", "tab": tab, "scope": scope, "index": index,
        "include_note": true});
    let item = read_json(tools, tabs, args).await?;
    let text = item["text"].as_str().unwrap_or_default();
    let mut metadata = json!({"tab": id.tab, "index": index, "tags": item["tags"]});
    if let Some(note) = item["note"].as_str().filter(|n| !n.is_empty()) {
        metadata["note"] = json!(note);
    }
    Ok(json!({
        "id": raw,
        "title": crate::clipboard::preview(text),
        "text": text,
        "url": id.at(index).url(),
        "metadata": metadata,
    }))
}

/// Where the item is now: at the id's index if its preview still matches, else the first row
/// of the tab whose preview does.
async fn locate(tools: &ToolState, tabs: &Coverage, id: &ItemId) -> Result<usize, ToolError> {
    let mut skip = id.index;
    let mut first = true;
    loop {
        let (tab, scope) = id.address();
        let args = json!({"mode": "list", "tab": tab, "scope": scope, "skip": skip,
            "max_items": if first { 1 } else { PAGE }, "include_tags": false});
        let page = read_json(tools, tabs, args).await?;
        let items = rows(&page);
        if let Some(row) = items.iter().find(|r| id.matches(r)) {
            return row["index"]
                .as_u64()
                .and_then(|i| usize::try_from(i).ok())
                .ok_or_else(|| gone(id));
        }
        let total = page["total"].as_u64().unwrap_or(0) as usize;
        skip = if first { 0 } else { skip + PAGE };
        first = false;
        if skip >= total.min(MAX_SCAN) {
            return Err(gone(id));
        }
    }
}

fn gone(id: &ItemId) -> ToolError {
    ToolError::InvalidParam(format!(
        "No item matches id '{id}' any more (changed or removed): search again"
    ))
}

fn rows(reply: &Value) -> Vec<Value> {
    reply["items"].as_array().cloned().unwrap_or_default()
}

/// A row's title: its preview, or its tab and index when it shows no text.
fn title(row: &Value) -> String {
    match row["text"].as_str().filter(|t| !t.is_empty()) {
        Some(t) => t.to_owned(),
        None => format!("{} [{}]", row["tab"].as_str().unwrap_or(""), row["index"]),
    }
}
