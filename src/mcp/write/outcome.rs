//! How a write that did not go as planned is left in the audit log: withdrawn when it changed
//! nothing, kept and marked when it did (`partial`, `misdirected`), with what `audit restore` can
//! put right.

use super::ToolError;
use super::plan::Plan;
use crate::backend::Made;
use crate::store::Store;

/// Keep, mark or withdraw the audit entry `id` of a write that ended with `result` (the reply,
/// and the row its item landed at: an add's or move's below the rows pinned at the top of its
/// tab is noted in the entry).
pub(super) fn settle(
    store: &Store,
    id: i64,
    plan: &Plan,
    result: Result<(String, usize), ToolError>,
) -> Result<String, ToolError> {
    let failed = match result {
        Ok((reply, row)) => {
            placed(store, id, plan, row);
            return Ok(reply);
        }
        Err(e) => e,
    };
    let kept = match &failed {
        ToolError::Misdirected { tab, landed } => store.settle_audit(
            id,
            "misdirected",
            &format!("made in {} instead", landed.as_deref().unwrap_or(tab)),
            None,
        ),
        ToolError::Partial { made, cause, .. } => {
            // What `audit restore` puts right: a move's copy in its target, else what it replaced.
            let copy = match (made, plan) {
                (Made::Copy, Plan::Move { to, item, .. }) => {
                    Some(vec![(to.full.clone(), vec![item.clone()])])
                }
                _ => None,
            };
            // The cause as the client was told it: CopyQ's own words (which may echo clipboard
            // contents) stay in the gateway's log, and the audit log keeps sizes, never contents.
            let note = format!("{}: {cause}", made_note(*made));
            store.settle_audit(
                id,
                "partial",
                &crate::clipboard::flatten(&note),
                copy.as_deref(),
            )
        }
        _ => {
            if let Err(e) = store.drop_audit(id) {
                tracing::error!(error = %e, "cannot withdraw the audit entry of a failed write");
            }
            return Err(failed);
        }
    };
    if let Err(e) = kept {
        tracing::error!(error = %e, "cannot mark the audit entry of a partly made write");
    }
    match failed {
        ToolError::Partial {
            made,
            from,
            to,
            cause,
            ..
        } => Err(ToolError::Partial {
            made,
            from,
            to,
            cause,
            entry: Some(id),
        }),
        other => Err(other),
    }
}

/// Note in entry `id` where the item of an add or move landed, when it is not row 0.
fn placed(store: &Store, id: i64, plan: &Plan, row: usize) {
    let at = i64::try_from(row).unwrap_or(i64::MAX);
    let noted = match plan {
        _ if row == 0 => return,
        Plan::Add(_) => store.place_audit(
            id,
            Some(at),
            &format!("made at row {row}, below the rows pinned at the top of the tab"),
        ),
        Plan::Move { .. } => store.place_audit(
            id,
            None,
            &format!("moved to row {row} of the target, below the rows pinned at its top"),
        ),
        _ => return,
    };
    if let Err(e) = noted {
        tracing::error!(error = %e, "cannot note where a write's item landed in its audit entry");
    }
}

fn made_note(made: Made) -> &'static str {
    match made {
        Made::Copy => "copied to the target, not removed from the source",
        Made::Change => "made, then a step saving it failed",
        Made::Unknown => "CopyQ stopped answering; may be made",
    }
}
