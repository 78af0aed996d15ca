//! `mcp_write`: changes confined to managed tabs. Every call is parsed, then planned against the
//! current state, then previewed or executed; executions of one tab are serialised so that
//! index-addressed, multi-step writes from concurrent clients never interleave (over the socket,
//! updates and deletes of different tabs go beside each other: [`ToolState::beside`]; moves and
//! tab changes go alone), and each carries the item it was planned against so a shifted index is
//! refused instead of hitting the wrong item.
//!
//! Adds are made in groups (group commit): an add is planned, then queued; the add that finds the
//! queue empty starts a leader, which takes the write lock and makes every add queued by then in
//! one durable write
//! ([`crate::backend::Backend::insert_many`]: one save of each tab touched, one save-delay cycle).
//! Each add keeps its own audit entry, its own room and landing checks and its own reply, sent only
//! once the group is saved.

#[cfg(test)]
mod beside_tests;
mod params;
#[cfg(test)]
pub(crate) use params::KNOWN;
#[cfg(test)]
mod coverage_tests;
mod edit;
#[cfg(test)]
mod group_tests;
pub(crate) use edit::{EditMode, Field};
pub(crate) use params::{MODES, WriteCall, intent_names};
mod outcome;
mod plan;
mod record;
mod render;
mod seen;

use std::sync::Arc;

use serde_json::{Map, Value};

use super::ToolState;
use super::error::ToolError;
use crate::auth::Principal;
use crate::backend::{BackendError, Insert, Item, Prepared, ReadRequest, Ready};
use crate::clipboard::{Coverage, TabRef};
use plan::{Add, Plan, clash, plan, plan_add_unchecked, plan_write, tab_full};
use record::{add_entry, audit_entry, kept};
use render::{Done, ok, ok_add, preview_masked};

/// The `mcp_write` tool. Every execution is in the audit log: recorded before the write (no
/// record, no write), withdrawn if the write then fails having changed nothing, and kept, saying
/// what happened, if it failed after changing CopyQ.
pub async fn call(
    tools: &Arc<ToolState>,
    principal: &Principal,
    args: &Map<String, Value>,
) -> Result<String, ToolError> {
    let tabs = &principal.tabs;
    let call = WriteCall::parse(args, &tools.roots, tabs)?;
    if call.preview {
        let _shared = tools.writes.read().await;
        let plan = plan(tools, tabs, &call.op, call.expected_version.as_deref()).await?;
        return Ok(preview_masked(&plan, &tools.privacy));
    }
    if let params::WriteOp::Add { tab, item } = &call.op {
        return grouped(tools, principal, tab, item).await;
    }
    let held = match &call.op {
        // Over the socket, updates and deletes of different tabs go beside each other.
        params::WriteOp::Update { tab, .. } | params::WriteOp::Delete { tab, .. }
            if tools.writes_beside() =>
        {
            Held::Beside {
                _locks: tools.beside(&tab.full).await,
            }
        }
        _ => {
            let alone = tools.writes.clone().write_owned().await;
            // A tab removed or created: no read names it meanwhile (see `ToolState::read_lock`).
            let tabs_alone = match &call.op {
                params::WriteOp::TabCreate { .. } | params::WriteOp::TabDelete { .. } => {
                    Some(tools.tab_list.clone().write_owned().await)
                }
                _ => None,
            };
            Held::Alone {
                _writes: alone,
                _tab_list: tabs_alone,
            }
        }
    };
    let (plan, prepared) =
        plan_write(tools, tabs, &call.op, call.expected_version.as_deref()).await?;
    // Once it starts, a write runs to its end in a task of its own: the request may be cancelled
    // (client gone, request deadline), but a write stopped between its steps would leave CopyQ's
    // save delays at 0, a move in both tabs, or an audit entry that says nothing. (rmcp runs each
    // handler in a task today and does not abort it, but promises nothing; a guard restoring on
    // drop could do neither the CLI's part, which runs in the copyq process, nor the audit's.)
    // Its locks go with it: the next write, and a stopping gateway, wait for this one.
    let (tools, principal) = (tools.clone(), principal.clone());
    tokio::spawn(async move {
        let _held = held;
        execute_audited(&tools, &plan, &principal, prepared).await
    })
    .await
    .unwrap_or_else(|e| {
        tracing::error!(error = %e, "a write's task failed");
        Err(failed_inside())
    })
}

/// The locks a write other than an add holds to its end.
enum Held {
    /// The write lock alone, and the tab-list lock alone for a tab created or removed.
    Alone {
        _writes: tokio::sync::OwnedRwLockWriteGuard<()>,
        _tab_list: Option<tokio::sync::OwnedRwLockWriteGuard<()>>,
    },
    /// An update or delete beside others ([`ToolState::beside`]).
    Beside { _locks: super::BesideGuard },
}

fn failed_inside() -> ToolError {
    ToolError::CopyQ("The write failed inside the gateway".into())
}

/// Adds waiting for the next group.
#[derive(Default)]
pub struct Queue(std::sync::Mutex<Vec<Queued>>);

/// Where a write's answer goes.
type Reply = tokio::sync::oneshot::Sender<Result<String, ToolError>>;

/// An add planned and queued, and where its reply goes.
struct Queued {
    add: Add,
    principal: Principal,
    reply: Reply,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .len();
        write!(f, "Queue({n} adds)")
    }
}

impl Queue {
    /// Queue `queued`; true when the queue was empty, so that no leader is on its way for it.
    /// (A queue that holds adds has a leader waiting for the write lock: the one the first of them
    /// started. One leader per group keeps writers' plans from queueing behind idle leaders.)
    fn push(&self, queued: Queued) -> bool {
        let mut queue = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        queue.push(queued);
        queue.len() == 1
    }

    fn take(&self) -> Vec<Queued> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

/// An add: planned, queued, made by the group's leader. The plan takes no lock and asks CopyQ
/// nothing once `maxitems` is known; the group checks, under the write lock, the tab's name (a
/// look-alike CopyQ would take for it, by the group's tab list), its room (with the rows CopyQ
/// holds then) and, after the insert, where it landed (the tab list again). Waiting for the write
/// lock to plan would queue each writer behind the next group's leader, which takes the lock as
/// soon as the first add of the group is planned: groups of one or two.
async fn grouped(
    tools: &Arc<ToolState>,
    principal: &Principal,
    tab: &TabRef,
    item: &Item,
) -> Result<String, ToolError> {
    let planning = std::time::Instant::now();
    let add = plan_add_unchecked(tools, tab, item).await?;
    tracing::debug!(
        plan_ms = planning.elapsed().as_secs_f64() * 1e3,
        "add planned"
    );
    let (reply, answer) = tokio::sync::oneshot::channel();
    let first = tools.adds.push(Queued {
        add,
        principal: principal.clone(),
        reply,
    });
    // The group runs in a task of its own, to its end, as any write does (see `call`).
    if first {
        tokio::spawn(lead(tools.clone()));
    }
    answer.await.unwrap_or_else(|_| {
        tracing::error!("a group of writes' task failed");
        Err(failed_inside())
    })
}

/// With the write lock, make every add queued now as one group, and answer each.
async fn lead(tools: Arc<ToolState>) {
    let _alone = tools.writes.write().await;
    let queued = tools.adds.take();
    if queued.is_empty() {
        return;
    }
    let started = std::time::Instant::now();
    let writes: Vec<Insert> = queued
        .iter()
        .map(|q| (q.add.tab.full.as_str(), &q.add.item, q.add.limit))
        .collect();
    // The audit entries are recorded while the backend makes the steps that change nothing (the
    // tab list, the unload that saves, the room check); no insert is made before they are on
    // disk, and none at all if they cannot be recorded (`ready` says no).
    let (recorded_tx, recorded_rx) = tokio::sync::oneshot::channel();
    let record = async {
        let ids = record_group(&tools, &queued).await;
        let _sent = recorded_tx.send(ids.is_ok());
        (ids, started.elapsed())
    };
    let ready: Ready = Box::pin(async move { recorded_rx.await.unwrap_or(false) });
    let ((ids, recorded), results) =
        tokio::join!(record, tools.backend.insert_many(&writes, ready));
    let ids = match ids {
        Ok(ids) => ids,
        // No record, no write: the group is refused (the backend changed nothing).
        Err(e) => {
            for q in queued {
                drop(q.reply.send(Err(e.clone())));
            }
            return;
        }
    };
    let results = match results {
        Ok(results) => results,
        Err(e) => writes.iter().map(|_| Err(e.again())).collect(),
    };
    let made = started.elapsed().saturating_sub(recorded);
    let mut answers = Vec::with_capacity(queued.len());
    for (q, result) in queued.into_iter().zip(results) {
        let result = match result {
            Ok(landed) => {
                tracing::info!(persisted = ?landed.persisted, "write acknowledged");
                Ok((ok_add(&q.add, landed.row), landed.row))
            }
            Err(BackendError::Clash { other, .. }) => {
                Err(clash(&q.add.tab, &other, &q.principal.tabs))
            }
            Err(e) => {
                let e = refused(e, &q.add.tab, &q.add.tab, 0);
                Err(misdirected(&tools, &q.principal.tabs, e).await)
            }
        };
        answers.push((q, result));
    }
    let adds = answers.len();
    for (reply, result) in settle_group(&tools, answers, ids).await {
        drop(reply.send(result));
    }
    // Where a group's time goes (`copyq_mcp=debug`): its size, the audit entries, the inserts.
    tracing::debug!(
        adds,
        audit_ms = recorded.as_secs_f64() * 1e3,
        inserts_ms = made.as_secs_f64() * 1e3,
        total_ms = started.elapsed().as_secs_f64() * 1e3,
        "write group made"
    );
}

/// The group's audit entries, recorded before any insert, in one transaction (one sync to
/// disk, where one each cost a 64-add group 64 before its first insert), off the async
/// threads; `None` each without an audit log. All are recorded or the group is refused.
async fn record_group(tools: &ToolState, queued: &[Queued]) -> Result<Vec<Option<i64>>, ToolError> {
    let Some(store) = tools.audit.clone() else {
        return Ok(vec![None; queued.len()]);
    };
    let entries: Vec<_> = queued
        .iter()
        .map(|q| add_entry(&q.add, &q.principal))
        .collect();
    let recorded = tokio::task::spawn_blocking(move || {
        let entries: Vec<_> = entries.iter().map(|e| (e, &[][..])).collect();
        store.record_audits(&entries)
    })
    .await;
    match recorded {
        Ok(Ok(ids)) => Ok(ids.into_iter().map(Some).collect()),
        Ok(Err(e)) => Err(audit_unavailable(&e)),
        Err(e) => Err(audit_unavailable(&e)),
    }
}

/// A write's reply and the row its item landed at (see [`Done::row`]), or why it failed.
type Answer = Result<(String, usize), ToolError>;

/// The answers of a group, with the audit entries of the adds that failed withdrawn or marked,
/// and of those made below pinned rows noted (see [`outcome::settle`]), off the async threads;
/// each with where it goes.
async fn settle_group(
    tools: &ToolState,
    answers: Vec<(Queued, Answer)>,
    ids: Vec<Option<i64>>,
) -> Vec<(Reply, Result<String, ToolError>)> {
    let planned = |result: &Answer| matches!(result, Ok((_, 0)));
    let store = match &tools.audit {
        Some(store) if !answers.iter().all(|(_, result)| planned(result)) => store.clone(),
        // A write that went as planned keeps its entry as recorded.
        _ => {
            return answers
                .into_iter()
                .map(|(q, result)| (q.reply, result.map(|(reply, _)| reply)))
                .collect();
        }
    };
    let settled = tokio::task::spawn_blocking(move || {
        answers
            .into_iter()
            .zip(ids)
            .map(|((q, result), id)| {
                let result = match id {
                    Some(id) => outcome::settle(&store, id, &Plan::Add(q.add), result),
                    None => result.map(|(reply, _)| reply),
                };
                (q.reply, result)
            })
            .collect()
    })
    .await;
    // The replies went with the task: each writer hears that its write failed inside.
    settled.unwrap_or_else(|e| {
        tracing::error!(error = %e, "settling a group's audit entries failed");
        Vec::new()
    })
}

fn audit_unavailable(e: &dyn std::fmt::Display) -> ToolError {
    tracing::error!(error = %e, "audit log unavailable; write refused");
    ToolError::CopyQ(
        "The gateway's audit log is unavailable, so no write is allowed; nothing was changed"
            .into(),
    )
}

/// The write's audit entry, recorded before it is made (`None` without an audit log).
async fn record(
    tools: &ToolState,
    plan: &Plan,
    principal: &Principal,
) -> Result<Option<i64>, ToolError> {
    let Some(store) = tools.audit.clone() else {
        return Ok(None);
    };
    let kept = kept(&tools.backend, plan, store.audit_max_bytes()).await?;
    let entry = audit_entry(plan, principal);
    // Off the async threads, so that the sync to disk overlaps the write's check.
    let recorded =
        tokio::task::spawn_blocking(move || store.record_audit_kept(&entry, &kept)).await;
    match recorded {
        Ok(Ok(id)) => Ok(Some(id)),
        Ok(Err(e)) => Err(audit_unavailable(&e)),
        Err(e) => Err(audit_unavailable(&e)),
    }
}

/// The write, with its audit entry recorded before anything changes: the backend makes the
/// steps that change nothing (an update's or delete's check of its row) while the entry is
/// synced to disk, and waits for it (`ready`) before the change; if it cannot be recorded,
/// nothing is changed and that is the answer.
async fn execute_audited(
    tools: &ToolState,
    plan: &Plan,
    principal: &Principal,
    prepared: Prepared,
) -> Result<String, ToolError> {
    let (recorded_tx, recorded_rx) = tokio::sync::oneshot::channel();
    let recording = async {
        let id = record(tools, plan, principal).await;
        let _sent = recorded_tx.send(id.is_ok());
        id
    };
    let ready: Ready = Box::pin(async move { recorded_rx.await.unwrap_or(false) });
    let (audit_id, result) = tokio::join!(
        recording,
        execute(tools, &principal.tabs, plan, (prepared, ready))
    );
    let audit_id = audit_id?;
    match (&tools.audit, audit_id) {
        (Some(store), Some(id)) => outcome::settle(store, id, plan, result),
        _ => result.map(|(reply, _)| reply),
    }
}

/// `mcp_validate` of a write: every check of the real call, no side effect; the reply it would give.
pub async fn check(
    tools: &ToolState,
    tabs: &Coverage,
    params: &Map<String, Value>,
) -> Result<(String, usize), ToolError> {
    let call = WriteCall::parse(params, &tools.roots, tabs)?;
    let _shared = tools.writes.read().await;
    let plan = plan(tools, tabs, &call.op, call.expected_version.as_deref()).await?;
    let reply = if call.preview {
        preview_masked(&plan, &tools.privacy)
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
        BackendError::Kept => ToolError::CopyQ(format!(
            "CopyQ kept item {index} of '{}': a script of CopyQ's (onItemsRemoved) refused to remove it; nothing was changed",
            tab.shown
        )),
        BackendError::Pinned => plan::pinned(tab, index),
        BackendError::Misdirected { tab } => ToolError::Misdirected { tab, landed: None },
        // A look-alike the caller may not cover: not named (the add tool's groups name it when
        // the caller covers it, see `lead`).
        BackendError::Clash { other, .. } => {
            clash(tab, &other, &Coverage::Only(Default::default()))
        }
        BackendError::Partial { made, cause } => {
            ToolError::partial(made, &tab.shown, &target.shown, &cause)
        }
        other => other.into(),
    }
}

/// A write that CopyQ made in another tab than the one planned: say which, when the tab list shows
/// it (and the caller covers it), and never that it was not made.
async fn misdirected(tools: &ToolState, tabs: &Coverage, e: ToolError) -> ToolError {
    let ToolError::Misdirected { tab, landed: None } = e else {
        return e;
    };
    // The names only: no tab is read, so none the caller does not cover.
    let landed = match tools.backend.read(&ReadRequest::tab_list()).await {
        Ok(snap) => crate::backend::names::clash(&tab, &snap.all_tabs)
            .filter(|landed| tabs.covers(landed))
            .map(str::to_owned),
        Err(_) => None,
    };
    ToolError::Misdirected { tab, landed }
}

/// The write's reply, and the row its item landed at (see [`Done::row`]).
async fn execute(
    tools: &ToolState,
    tabs: &Coverage,
    plan: &Plan,
    prepared: (Prepared, Ready),
) -> Result<(String, usize), ToolError> {
    match execute_plan(tools, plan, prepared).await {
        Err(e) => Err(misdirected(tools, tabs, e).await),
        ok => ok,
    }
}

async fn execute_plan(
    tools: &ToolState,
    plan: &Plan,
    (prepared, ready): (Prepared, Ready),
) -> Result<(String, usize), ToolError> {
    let b = &tools.backend;
    let mut done = Done::default();
    // An update or delete waits for `ready` after its check; the others before their first step.
    let ready = match plan {
        Plan::Update { .. } | Plan::Delete { .. } => ready,
        _ => {
            crate::backend::wait_ready(ready).await?;
            crate::backend::ready_now()
        }
    };
    let persisted = match plan {
        Plan::Add(Add { tab, item, limit }) => {
            let landed = b
                .insert(&tab.full, item, *limit)
                .await
                .map_err(|e| refused(e, tab, tab, 0))?;
            done.row = landed.row;
            landed.persisted
        }
        Plan::Update {
            tab,
            index,
            before,
            after,
            ..
        } => b
            .change(&tab.full, *index, before, after, (prepared, ready))
            .await
            .map_err(|e| refused(e, tab, tab, *index))?,
        Plan::Delete { tab, index, item } => b
            .remove(&tab.full, *index, item, (prepared, ready))
            .await
            .map_err(|e| refused(e, tab, tab, *index))?,
        Plan::Move {
            from,
            index,
            to,
            item,
            limit,
        } => {
            let landed = b
                .move_item(&from.full, *index, item, &to.full, *limit, prepared)
                .await
                .map_err(|e| refused(e, from, to, *index))?;
            done.row = landed.row;
            landed.persisted
        }
        Plan::TabCreate { path, .. } => {
            done.created = b
                .create_tab(&path.full)
                .await
                .map_err(|e| refused(e, path, path, 0))?;
            return Ok((ok(plan, done), 0));
        }
        Plan::TabDelete { path, tabs } => {
            let names: Vec<String> = tabs.iter().map(|p| p.name.clone()).collect();
            done.items_removed = b
                .remove_tabs(&names)
                .await
                .map_err(|e| refused(e, path, path, 0))?;
            return Ok((ok(plan, done), 0));
        }
    };
    tracing::info!(?persisted, "write acknowledged");
    Ok((ok(plan, done), done.row))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{Backend, Item, MemoryBackend};
    use crate::clipboard::Roots;
    use serde_json::json;

    fn tools(max_items: usize) -> (Arc<ToolState>, MemoryBackend) {
        let mem = MemoryBackend::with_tabs(vec![
            (
                "mcp/info".into(),
                vec![Item::new("a", &[], ""), Item::new("b", &["t"], "n")],
            ),
            ("mcp/заметки".into(), vec![Item::new("z", &[], "")]),
        ])
        .with_max_items(max_items);
        (
            Arc::new(ToolState::new(
                Backend::Memory(mem.clone()),
                Roots::default(),
            )),
            mem,
        )
    }

    fn owner() -> Principal {
        Principal {
            subject: "test".into(),
            role: crate::auth::Role::Write,
            token_id: "j".into(),
            grant: None,
            tabs: Default::default(),
            expires: None,
        }
    }

    fn args(v: serde_json::Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn texts(mem: &MemoryBackend, tab: &str) -> Vec<String> {
        let req = crate::backend::ReadRequest {
            tabs: crate::backend::TabSelector::Names {
                names: vec![tab.into()],
            },
            skip: 0,
            limit: None,
            preview: None,
        };
        mem.read(&req)
            .unwrap()
            .pages
            .into_iter()
            .flat_map(|p| p.items)
            .map(|i| i.text)
            .collect()
    }

    #[tokio::test]
    async fn a_shifted_index_is_refused_not_misapplied() {
        let (tools, mem) = tools(200);
        let call = WriteCall::parse(
            &args(json!({"mode": "delete", "tab": "info", "index": 1})),
            &tools.roots,
            &Coverage::All,
        )
        .unwrap();
        let planned = plan(&tools, &Coverage::All, &call.op, None).await.unwrap();
        // Another writer adds an item between planning and executing: "b" is now at index 2.
        mem.insert("mcp/info", &Item::new("new", &[], ""), 200)
            .unwrap();
        let got = refused_now(&tools, &planned).await;
        assert_eq!(
            got,
            "error|COPYQ_ERROR|Item 1 of 'info' changed in CopyQ while this write was being made; nothing was changed. Read it again and retry"
        );
        assert_eq!(texts(&mem, "mcp/info"), ["new", "a", "b"]);
    }

    /// The error line of `planned` executed now, with nothing made before it.
    async fn refused_now(tools: &ToolState, planned: &Plan) -> String {
        let nothing = (Prepared::none(), crate::backend::ready_now());
        execute(tools, &Coverage::All, planned, nothing)
            .await
            .unwrap_err()
            .line()
    }

    #[tokio::test]
    async fn a_write_misdirected_by_a_tab_appearing_meanwhile_says_where_it_went() {
        let (tools, mem) = tools(200);
        let call = WriteCall::parse(
            &args(json!({"mode": "add", "tab": "workspace/kh", "text": "x"})),
            &tools.roots,
            &Coverage::All,
        )
        .unwrap();
        let planned = plan(&tools, &Coverage::All, &call.op, None).await.unwrap();
        // The owner makes "&mcp/workspace/kh" between planning and executing.
        mem.create_tab("&mcp/workspace/kh").unwrap();
        let got = refused_now(&tools, &planned).await;
        assert_eq!(
            got,
            "error|PERMISSION_DENIED|CopyQ made this write in its tab '&mcp/workspace/kh' instead of \
             'mcp/workspace/kh' (CopyQ ignores '&' in tab names, and that tab appeared after the write was \
             planned): the change was made there, not in 'mcp/workspace/kh'"
        );
        assert_eq!(texts(&mem, "&mcp/workspace/kh"), ["x"]);
        // Planned now, the same write is refused before anything is written.
        let got = call_tool(
            &tools,
            json!({"mode": "add", "tab": "workspace/kh", "text": "y"}),
        )
        .await;
        assert_eq!(
            got,
            "error|PERMISSION_DENIED|Tab 'workspace/kh' does not exist, and CopyQ would write to its existing tab \
             '&mcp/workspace/kh' instead (CopyQ ignores '&' in tab names); nothing was changed. Rename that tab or \
             use another name"
        );
        assert_eq!(texts(&mem, "&mcp/workspace/kh"), ["x"]);
    }

    async fn call_tool(tools: &Arc<ToolState>, a: serde_json::Value) -> String {
        match call(tools, &owner(), &args(a)).await {
            Ok(text) => text,
            Err(e) => e.line(),
        }
    }

    /// Adds sent together are made as one group, and the one that finds its tab full is refused
    /// alone: the others in its group land.
    #[tokio::test]
    async fn concurrent_adds_are_made_as_one_group_each_with_its_own_answer() {
        let (tools, mem) = tools(3);
        let add = |tab: &str, text: &str| {
            call_tool(&tools, json!({"mode": "add", "tab": tab, "text": text}))
        };
        // Room for one more in "info", two in "заметки".
        let got = tokio::join!(
            add("info", "i1"),
            add("info", "i2"),
            add("заметки", "z1"),
            add("заметки", "z2"),
        );
        assert_eq!(mem.groups(), [4]);
        assert_eq!(
            got.0,
            "ok|mode:add|tab:info|full_path:mcp/info|index:0|text_len:2|tags:0|note:False"
        );
        assert_eq!(
            got.1,
            "error|COPYQ_ERROR|Tab 'info' is full: CopyQ keeps at most 3 items per tab (option maxitems) and would \
             silently drop the oldest one; nothing was changed. Delete or move items, or raise the limit (copyq config \
             maxitems 1000)"
        );
        for got in [got.2, got.3] {
            assert_eq!(
                got,
                "ok|mode:add|tab:заметки|full_path:mcp/заметки|index:0|text_len:2|tags:0|note:False"
            );
        }
        assert_eq!(texts(&mem, "mcp/info"), ["i1", "a", "b"]);
        assert_eq!(texts(&mem, "mcp/заметки"), ["z2", "z1", "z"]);
    }

    /// A group's audit entries are one transaction, so one sync to disk: the audit log's
    /// write-ahead file grows as much for a group of eight adds as for a group of one.
    #[tokio::test]
    async fn a_groups_audit_entries_are_recorded_in_one_transaction() {
        let (tools, mem) = tools(200);
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(crate::store::Store::open(dir.path()).unwrap());
        let tools = Arc::new(Arc::into_inner(tools).unwrap().with_audit(store.clone()));
        let wal = dir.path().join(format!("{}-wal", crate::store::FILE));
        let size = || std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        let add = |n: usize| {
            call_tool(
                &tools,
                json!({"mode": "add", "tab": "info", "text": format!("x{n}")}),
            )
        };
        let start = size();
        add(0).await;
        let one = size() - start;
        let start = size();
        let got = tokio::join!(
            add(1),
            add(2),
            add(3),
            add(4),
            add(5),
            add(6),
            add(7),
            add(8)
        );
        let eight = size() - start;
        assert_eq!(mem.groups(), [1, 8]);
        assert_eq!(
            got.7,
            "ok|mode:add|tab:info|full_path:mcp/info|index:0|text_len:2|tags:0|note:False"
        );
        assert_eq!(store.audit_since(0, 100).unwrap().len(), 9);
        assert!(one > 0, "the audit log is written ahead");
        assert_eq!(
            eight, one,
            "bytes written ahead: a group of 8 vs a group of 1"
        );
    }

    #[tokio::test]
    async fn a_move_into_a_full_tab_keeps_the_item() {
        let (tools, mem) = tools(2);
        let got = call(
            &tools,
            &owner(),
            &args(json!({"mode": "move", "tab": "заметки", "index": 0, "to_tab": "info"})),
        )
        .await;
        assert!(got.unwrap_err().line().contains("Tab 'info' is full"));
        assert_eq!(texts(&mem, "mcp/заметки"), ["z"]);
        assert_eq!(texts(&mem, "mcp/info"), ["a", "b"]);
        let got = call(
            &tools,
            &owner(),
            &args(json!({"mode": "move", "tab": "info", "index": 1, "to_tab": "заметки"})),
        )
        .await;
        assert_eq!(
            got.unwrap(),
            "ok|mode:move|from:mcp/info|to:mcp/заметки|new_index:0"
        );
        assert_eq!(texts(&mem, "mcp/заметки"), ["b", "z"]);
    }

    #[tokio::test]
    async fn preview_and_validate_do_not_write() {
        let (tools, mem) = tools(200);
        for mode in [
            json!({"mode": "add", "tab": "info", "text": "x", "intent": "preview"}),
            json!({"mode": "delete", "tab": "info", "index": 0, "intent": "preview"}),
            json!({"mode": "tab_create", "path": "workspace/new", "intent": "preview"}),
        ] {
            let reply = call(&tools, &owner(), &args(mode.clone())).await;
            assert!(
                reply
                    .as_deref()
                    .is_ok_and(|r| r.starts_with("preview|mode:")),
                "{mode}: {reply:?}"
            );
        }
        let (reply, _) = check(
            &tools,
            &Coverage::All,
            &args(json!({"mode": "delete", "tab": "info", "index": 0})),
        )
        .await
        .unwrap();
        assert_eq!(reply, "ok|mode:delete|tab:info|full_path:mcp/info|index:0");
        assert_eq!(texts(&mem, "mcp/info"), ["a", "b"]);
    }
}
