//! Group commit: concurrent inserts made as one durable write. The durable-write protocol of
//! [`crate::backend::protocol`] runs once for the whole group (one unload before, one save-delay
//! cycle, one unload after per tab touched), and each insert keeps its own room check and its own
//! verify, so each gets its own answer: one that fails does not fail the others. Every insert
//! over the socket is made so, a single one as a group of one.

use super::super::slots;
use super::super::value::{Map, Value};
use super::{SocketBackend, failed, map_of};
use crate::backend::{BackendError, Insert, Item, Made, Persisted};

/// One insert of a group: the tab, the formats to insert (CopyQ's data map), the item they hold
/// (text, tags and note, checked after), and the tab's room.
pub(super) struct Write<'a> {
    pub tab: &'a str,
    pub data: Map,
    pub item: &'a Item,
    pub limit: usize,
}

/// What a tab of the group holds as the inserts run.
struct Tab<'a> {
    name: &'a str,
    /// Rows now, when known: unknown after an insert into it failed (it may have been made).
    rows: Option<usize>,
    /// It was not a tab before the group.
    created: bool,
    /// An insert into it was made: it is saved after.
    touched: bool,
}

impl SocketBackend {
    /// Insert each of `writes` at row 0 of its tab, in order. `Err` when a step before any insert
    /// failed (nothing changed); otherwise one answer per write, as [`Self::insert`] gives it.
    pub async fn insert_many(
        &self,
        writes: &[Insert<'_>],
    ) -> Result<Vec<Result<Persisted, BackendError>>, BackendError> {
        let writes = writes
            .iter()
            .map(|&(tab, item, limit)| Write {
                tab,
                data: map_of(item),
                item,
                limit,
            })
            .collect();
        self.group(writes).await
    }

    /// [`Self::insert_many`] of inserts that carry their formats.
    pub(super) async fn group(
        &self,
        writes: Vec<Write<'_>>,
    ) -> Result<Vec<Result<Persisted, BackendError>>, BackendError> {
        let started = std::time::Instant::now();
        self.settle_owed().await?;
        let all = self.tabs().await?;
        let mut tabs: Vec<Tab> = Vec::new();
        for Write { tab: name, .. } in &writes {
            if !tabs.iter().any(|t| t.name == *name) {
                let created = !all.iter().any(|a| a == name);
                tabs.push(Tab {
                    name,
                    rows: created.then_some(0),
                    created,
                    touched: false,
                });
            }
        }
        let pinned = self.lengths_and_unload(&mut tabs).await?;
        // write protocol: zero-delays
        let old = match pinned {
            true => Some(self.zero_delays().await?),
            false => None,
        };
        let before = started.elapsed();
        let mut results = Vec::with_capacity(writes.len());
        let count = writes.len();
        for write in writes {
            let Some(tab) = tabs.iter_mut().find(|t| t.name == write.tab) else {
                results.push(Err(BackendError::Failed("insert: tab not planned".into())));
                continue;
            };
            let result = self.insert_one(tab, write).await;
            tab.touched |= result.is_ok();
            results.push(result);
        }
        let inserted = started.elapsed();
        let made: Vec<&str> = tabs.iter().filter(|t| t.touched).map(|t| t.name).collect();
        let shared = self
            .after_group(
                old.as_deref(),
                &made,
                tabs.iter().any(|t| t.touched && t.created),
            )
            .await;
        // Where the group's time in CopyQ goes (`copyq_mcp=debug`).
        tracing::debug!(
            inserts = count,
            before_ms = before.as_secs_f64() * 1e3,
            inserts_ms = (inserted - before).as_secs_f64() * 1e3,
            after_ms = (started.elapsed() - inserted).as_secs_f64() * 1e3,
            "insert group in CopyQ"
        );
        let persisted = match pinned {
            true => Persisted::SaveDelay,
            false => Persisted::Unload,
        };
        Ok(results
            .into_iter()
            .map(|r| match (r, &shared) {
                (Ok(()), Ok(())) => Ok(persisted),
                (Ok(()), Err(e)) => Err(BackendError::after(Made::Change, e.again())),
                (Err(e), _) => Err(e),
            })
            .collect())
    }

    /// The rows of every tab that exists, and their unload, in one batch; whether one stays
    /// loaded (pinned). Unloading only saves.
    async fn lengths_and_unload(&self, tabs: &mut [Tab<'_>]) -> Result<bool, BackendError> {
        let existing: Vec<&str> = tabs.iter().filter(|t| !t.created).map(|t| t.name).collect();
        if existing.is_empty() {
            return Ok(false);
        }
        // write protocol: check
        let mut calls: Vec<_> = existing.iter().map(|t| slots::browser_length(t)).collect();
        // write protocol: unload
        calls.push(slots::unload_tabs(&existing));
        let mut replies = self.call_many(calls).await?;
        let unloaded = replies
            .pop()
            .ok_or_else(|| BackendError::Failed("unload: a reply is missing".into()))?;
        let unloaded =
            slots::expect_string_list(&slots::unload_tabs(&existing), unloaded).map_err(failed)?;
        for (tab, length) in tabs.iter_mut().filter(|t| !t.created).zip(replies) {
            let count =
                slots::expect_int(&slots::browser_length(tab.name), length).map_err(failed)?;
            tab.rows = Some(usize::try_from(count).unwrap_or(0));
        }
        Ok(existing.iter().any(|t| !unloaded.iter().any(|u| u == t)))
    }

    /// One insert of the group: its room check, the insert and its verify.
    async fn insert_one(&self, tab: &mut Tab<'_>, write: Write<'_>) -> Result<(), BackendError> {
        let Write {
            data, item, limit, ..
        } = write;
        let rows = match tab.rows {
            Some(n) => n,
            // An insert into this tab failed: its rows as they are now (none if it is not a tab).
            None => match self.tabs().await?.iter().any(|t| t == tab.name) {
                true => self.length(tab.name).await?,
                false => 0,
            },
        };
        if rows >= limit {
            tab.rows = Some(rows);
            return Err(BackendError::TabFull { limit });
        }
        tab.rows = None;
        // write protocol: body, then write protocol: verify (both in insert_verified)
        match self.insert_verified(tab.name, data, item, rows).await {
            Ok(()) => {
                tab.rows = Some(rows + 1);
                Ok(())
            }
            // CopyQ stopped answering with the insert sent: it may still make it.
            Err(e @ BackendError::Timeout(_)) => Err(BackendError::after(Made::Unknown, e)),
            Err(e) => Err(e),
        }
    }

    /// The group's steps after the inserts: the save delays back, the tabs written saved.
    async fn after_group(
        &self,
        old: Option<&[String]>,
        made: &[&str],
        created: bool,
    ) -> Result<(), BackendError> {
        if let Some(old) = old {
            // write protocol: restore-delays
            if made.is_empty() {
                self.restore_delays_or_log(old).await;
            } else if let Err(e) = self.put_delays(old).await {
                self.owe(old, &e);
                return Err(e);
            }
        }
        if made.is_empty() {
            return Ok(());
        }
        // write protocol: unload-after
        let mut calls = vec![slots::unload_tabs(made)];
        if created {
            // write protocol: flush-tab-list
            calls.push(slots::config("tabs"));
        }
        self.call_many(calls).await.map(|_: Vec<Value>| ())
    }
}
