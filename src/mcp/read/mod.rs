//! `mcp_read`: modes `tree`, `list`, `item` and `search` over managed and external tabs. Reading
//! never leaves a tab behind, and search runs in the gateway with the linear-time `regex` crate.
//!
//! - [`query`]: the arguments as a typed [`ReadQuery`] (parse, don't validate);
//! - [`tabs`]: which tabs a scope or a name means;
//! - [`render`]: `tree`, `list`, `item` replies; [`search`]: matching and its reply;
//! - [`redact`]: secrets masked in every page read, before any mode sees it.
//!
//! Unit tests of every mode and scope over the in-memory backend are in `tests.rs`; replies
//! against a real CopyQ, seeded with a copy of that data (plus a tab), in tests/copyq/read.rs.

mod again;
#[cfg(test)]
mod coverage_tests;
mod cut;
pub mod image;
#[cfg(test)]
mod lock_tests;
mod parallel;
mod query;
mod redact;
mod render;
mod search;
pub(crate) use search::GatesKept;
mod tabs;
#[cfg(test)]
mod tests;
mod together;
pub(crate) use together::Together;

#[cfg(test)]
pub(crate) use query::KNOWN;
pub use query::ReadQuery;
pub(crate) use query::{MODES, search_in_names};
pub(crate) use redact::{mask_items, show};
pub(crate) use tabs::visible;

use serde_json::{Map, Value};

use super::error::ToolError;
use super::{Reply, ToolState};
use crate::clipboard::Coverage;
use render::{item, list, tree};
use search::search;

impl ReadQuery {
    /// The reply, over the tabs `tabs` covers only.
    pub async fn run(&self, tools: &ToolState, tabs: &Coverage) -> Result<String, ToolError> {
        match self {
            Self::Tree {
                scope,
                max_depth,
                max_items,
                show,
            } => tree(tools, tabs, *scope, *max_depth, *max_items, *show).await,
            Self::List {
                tab,
                scope,
                skip,
                max_items,
                show,
            } => list(tools, tabs, tab, *scope, *skip, *max_items, *show).await,
            Self::Item {
                tab,
                scope,
                index,
                show,
            } => Ok(item(tools, tabs, (tab, *scope), *index, *show, false)
                .await?
                .0),
            Self::Search {
                query,
                pattern,
                scope,
                search_in,
                skip,
                max_items,
                show,
            } => {
                search(
                    tools,
                    tabs,
                    (query, pattern),
                    *scope,
                    *search_in,
                    (*skip, *max_items),
                    *show,
                )
                .await
            }
        }
    }
}

/// The `mcp_read` tool, for a caller who may see the tabs `tabs` covers.
pub async fn call(
    tools: &ToolState,
    tabs: &Coverage,
    args: &Map<String, Value>,
) -> Result<Reply, ToolError> {
    let query = ReadQuery::parse(args)?;
    // A search waits for writes for its read alone (`tabs::scan_whole`).
    let _shared = match query {
        ReadQuery::Search { .. } => None,
        _ => Some(tools.read_lock(false).await),
    };
    if let ReadQuery::Item {
        tab,
        scope,
        index,
        show,
    } = &query
    {
        let (text, image) = item(tools, tabs, (tab, *scope), *index, *show, true).await?;
        return Ok(Reply {
            text,
            images: image
                .map(|s| (s.mime.to_owned(), s.data))
                .into_iter()
                .collect(),
        });
    }
    query.run(tools, tabs).await.map(Reply::from)
}

/// The texts of the realistic clipboard corpus (`tests/fixtures/secrets/clipboard.jsonl`, most
/// holding a secret), for the read tests that mask many items.
#[cfg(test)]
fn corpus_texts() -> Vec<String> {
    include_str!("../../../tests/fixtures/secrets/clipboard.jsonl")
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|it| it["text"].as_str().map(str::to_owned))
        .collect()
}
