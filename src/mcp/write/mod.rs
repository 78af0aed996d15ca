//! `mcp_write`: changes confined to managed tabs. Every call is parsed, then planned against the
//! current state, then previewed or executed; executions are serialised so that index-addressed,
//! multi-step writes from concurrent clients never interleave, and each carries the item it was
//! planned against so a shifted index is refused instead of hitting the wrong item.

mod params;
mod plan;
mod render;

use serde_json::{Map, Value};

use super::Tools;
use super::error::ToolError;
use crate::backend::BackendError;
use crate::clipboard::TabRef;
use params::WriteCall;
use plan::{Plan, plan, tab_full};
use render::{Done, ok, preview_of};

/// The `mcp_write` tool.
pub async fn call(tools: &Tools, args: &Map<String, Value>) -> Result<String, ToolError> {
    let call = WriteCall::parse(args, &tools.roots)?;
    if call.preview {
        return Ok(preview_of(&plan(tools, &call.op).await?));
    }
    let _serial = tools.writes.lock().await;
    let plan = plan(tools, &call.op).await?;
    execute(tools, &plan).await
}

/// `mcp_validate` of a write: every check of the real call, no side effect; the reply it would give.
pub async fn check(
    tools: &Tools,
    params: &Map<String, Value>,
) -> Result<(String, usize), ToolError> {
    let call = WriteCall::parse(params, &tools.roots)?;
    let plan = plan(tools, &call.op).await?;
    let reply = if call.preview {
        preview_of(&plan)
    } else {
        ok(&plan, Done::expected(&plan))
    };
    Ok((reply, 1))
}

/// A backend refusal in the words of the tab and index the client named.
fn refused(e: BackendError, tab: &TabRef, target: &TabRef, index: usize) -> ToolError {
    match e {
        BackendError::NoSuchTab => ToolError::TabNotFound(tab.shown.clone()),
        BackendError::NoSuchRow { count } => ToolError::IndexOutOfBounds {
            index: i64::try_from(index).unwrap_or(i64::MAX),
            count,
        },
        BackendError::Conflict => ToolError::CopyQ(format!(
            "Item {index} of '{}' changed in CopyQ while this write was being made; nothing was changed. Read it again and retry",
            tab.shown
        )),
        BackendError::TabFull { limit } => tab_full(target, limit),
        other => other.into(),
    }
}

async fn execute(tools: &Tools, plan: &Plan) -> Result<String, ToolError> {
    let b = &tools.backend;
    let mut done = Done::default();
    let persisted = match plan {
        Plan::Add { tab, item, limit } => b
            .insert(&tab.full, item, *limit)
            .await
            .map_err(|e| refused(e, tab, tab, 0))?,
        Plan::Update {
            tab,
            index,
            before,
            after,
            ..
        } => b
            .change(&tab.full, *index, before, after)
            .await
            .map_err(|e| refused(e, tab, tab, *index))?,
        Plan::Delete { tab, index, item } => b
            .remove(&tab.full, *index, item)
            .await
            .map_err(|e| refused(e, tab, tab, *index))?,
        Plan::Move {
            from,
            index,
            to,
            item,
            limit,
        } => b
            .move_item(&from.full, *index, item, &to.full, *limit)
            .await
            .map_err(|e| refused(e, from, to, *index))?,
        Plan::TabCreate { path, .. } => {
            done.created = b
                .create_tab(&path.full)
                .await
                .map_err(|e| refused(e, path, path, 0))?;
            return Ok(ok(plan, done));
        }
        Plan::TabDelete { path, tabs } => {
            let names: Vec<String> = tabs.iter().map(|(n, _)| n.clone()).collect();
            done.items_removed = b
                .remove_tabs(&names)
                .await
                .map_err(|e| refused(e, path, path, 0))?;
            return Ok(ok(plan, done));
        }
    };
    tracing::info!(?persisted, "write acknowledged");
    Ok(ok(plan, done))
}
