//! CopyQ tabs as MCP resources: every tab the caller's token covers is `copyq://tab/<name>`
//! ([`uri`]), one item `copyq://tab/<name>?index=N` (a template). Reading one runs `mcp_read`
//! itself (`list` or `item`, through [`read::call`]): the same coverage, redaction, limits and
//! text, for read and write tokens alike. CopyQ gives items no id that survives a change of
//! their row, so an item is addressed by index, as in the tools.

mod registry;
mod sweep;
mod uri;
pub mod watch;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CacheScope, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};

use super::error::ToolError;
use super::{ToolState, read};
use crate::auth::Principal;
use crate::clipboard::TabRef;
pub use registry::Registry;
pub use uri::{parse, tab_uri};

/// Resources per `resources/list` page.
pub const PAGE: usize = 50;
/// Items a tab's resource shows: `mcp_read`'s largest `list` page.
const TAB_ITEMS: usize = 100;
const MIME: &str = "text/plain";

fn resource(tab: &TabRef) -> Resource {
    let title = if tab.external {
        format!("{} [external]", tab.shown)
    } else {
        tab.shown.clone()
    };
    Resource::new(tab_uri(&tab.full), tab.full.clone())
        .with_title(title)
        .with_description("CopyQ tab: its newest items, as mcp_read mode=list shows them")
        .with_mime_type(MIME)
}

/// One page of the tabs `principal` covers; the cursor is the offset of the page in that list.
pub async fn list(
    tools: &ToolState,
    principal: &Principal,
    cursor: Option<&str>,
) -> Result<ListResourcesResult, McpError> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .map_err(|_| McpError::invalid_params("Invalid cursor", None))?,
    };
    let tabs = {
        let _shared = tools.writes.read().await;
        read::visible(tools, &principal.tabs)
            .await
            .map_err(to_mcp)?
    };
    let page = tabs.iter().skip(start).take(PAGE).map(resource).collect();
    let mut result =
        ListResourcesResult::with_all_items(page).with_cache_scope(CacheScope::Private);
    result.next_cursor =
        (start.saturating_add(PAGE) < tabs.len()).then(|| (start + PAGE).to_string());
    Ok(result)
}

/// The one template: an item of a tab by index.
pub fn templates() -> ListResourceTemplatesResult {
    let item = ResourceTemplate::new(uri::ITEM_TEMPLATE, "copyq-item")
        .with_title("CopyQ item")
        .with_description(
            "One item of a CopyQ tab, as mcp_read mode=item shows it: tab is the full tab name \
             (segments percent-encoded), index 0 the newest (indices shift when items are added)",
        )
        .with_mime_type(MIME);
    ListResourceTemplatesResult::with_all_items(vec![item]).with_cache_scope(CacheScope::Private)
}

/// `uri` read as `mcp_read` reads it for `principal`.
pub async fn read(
    tools: &ToolState,
    principal: &Principal,
    uri: &str,
) -> Result<ReadResourceResult, McpError> {
    let Some(target) = parse(uri) else {
        return Err(McpError::invalid_params(
            "Not a copyq://tab/ resource URI",
            None,
        ));
    };
    let reply = read::call(tools, &principal.tabs, &target.read_args(TAB_ITEMS))
        .await
        .map_err(to_mcp)?;
    // The text as mcp_read gives it, then each image mcp_read item would send, as a blob.
    let mut contents = vec![ResourceContents::text(&reply.text, uri).with_mime_type(MIME)];
    for (mime, blob) in reply.images_base64() {
        contents.push(ResourceContents::blob(blob, uri).with_mime_type(mime));
    }
    Ok(ReadResourceResult::new(contents).with_cache_scope(CacheScope::Private))
}

/// A tool error as the JSON-RPC error of a resource request: a tab or item that is not there (or
/// not covered: the same answer) is "resource not found", with the words `mcp_read` would say.
fn to_mcp(e: ToolError) -> McpError {
    match e.code() {
        "TAB_NOT_FOUND" | "INDEX_OUT_OF_BOUNDS" => McpError::resource_not_found(e.line(), None),
        "INVALID_PARAM" | "MISSING_PARAM" => McpError::invalid_params(e.line(), None),
        _ => McpError::internal_error(e.line(), None),
    }
}
