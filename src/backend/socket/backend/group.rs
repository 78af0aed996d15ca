//! Group commit: concurrent inserts made as one durable write. The durable-write protocol of
//! [`crate::backend::protocol`] runs once for the whole group (one unload before, one save-delay
//! cycle, one unload after per tab touched), and each insert keeps its own room check and its own
//! verify, so each gets its own answer: one that fails does not fail the others. Every insert
//! over the socket is made so, a single one as a group of one.

use super::super::slots;
use super::super::value::{Call, Map, Value};
use super::durable::{all_unloaded, pinned, save_after_calls};
use super::{SocketBackend, failed, map_of};
use crate::backend::{BackendError, Insert, Item, Made, Persisted, Ready, wait_ready};

/// One insert of a group: the tab, the formats to insert (CopyQ's data map), the item they hold
/// (text, tags and note, checked after), and the tab's room.
pub(super) struct Write<'a> {
    pub tab: &'a str,
    pub data: Map,
    pub item: &'a Item,
    pub limit: usize,
}

/// Whether a group refuses a write CopyQ would make in a look-alike tab before making it (the
/// add tool's groups, whose plans no longer ask the tab list), or verifies where it landed only
/// (an insert on its own, as a move's target or a restore: its plan checked under the write lock).
#[derive(Clone, Copy)]
pub(super) enum Clashes {
    Refused,
    Verified,
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
        ready: Ready,
    ) -> Result<Vec<Result<Persisted, BackendError>>, BackendError> {
        let writes: Vec<Write> = writes
            .iter()
            .map(|&(tab, item, limit)| Write {
                tab,
                data: map_of(item),
                item,
                limit,
            })
            .collect();
        self.group(writes, ready, Clashes::Refused).await
    }

    /// [`Self::insert_many`] of inserts that carry their formats. With [`Clashes::Refused`], a
    /// write to a tab that does not exist, which CopyQ would take another existing tab for (see
    /// [`crate::backend::names`]), is refused by the group's tab list, before anything changes.
    pub(super) async fn group(
        &self,
        writes: Vec<Write<'_>>,
        ready: Ready,
        clashes: Clashes,
    ) -> Result<Vec<Result<Persisted, BackendError>>, BackendError> {
        let started = std::time::Instant::now();
        self.settle_owed().await?;
        let all = self.tabs().await?;
        let mut refused: Vec<Option<BackendError>> = writes
            .iter()
            .map(|w| match clashes {
                Clashes::Refused => crate::backend::clash(w.tab, &all),
                Clashes::Verified => None,
            })
            .collect();
        // The last write made, which carries the unload after in its round trip.
        let last = refused.iter().rposition(Option::is_none);
        let mut tabs: Vec<Tab> = Vec::new();
        for (Write { tab: name, .. }, _) in writes.iter().zip(&refused).filter(|(_, r)| r.is_none())
        {
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
        let pinned = self.unload_and_lengths(&mut tabs).await?;
        // Nothing has changed so far (an unload only saves); nothing changes before `ready`.
        wait_ready(ready).await?;
        // write protocol: zero-delays
        let old = match pinned {
            true => Some(self.zero_delays().await?),
            false => None,
        };
        let before = started.elapsed();
        let mut results = Vec::with_capacity(writes.len());
        let count = writes.len();
        let mut sent_after = None;
        // The tabs the unload after names, once known.
        let mut after_names: Vec<&str> = Vec::new();
        for (i, write) in writes.into_iter().enumerate() {
            if let Some(e) = refused[i].take() {
                results.push(Err(e));
                continue;
            }
            let Some(at) = tabs.iter().position(|t| t.name == write.tab) else {
                results.push(Err(BackendError::Failed("insert: tab not planned".into())));
                continue;
            };
            // With no save delay to put back first, the last insert carries the unload after
            // in its round trip: of the tabs written so far and its own (an unload only saves,
            // and creates no tab, so one whose insert then failed loses nothing by it).
            let then = match Some(i) == last && old.is_none() {
                true => {
                    let after: Vec<&Tab> = tabs
                        .iter()
                        .enumerate()
                        .filter(|(j, t)| t.touched || *j == at)
                        .map(|(_, t)| t)
                        .collect();
                    after_names = after.iter().map(|t| t.name).collect();
                    // write protocol: unload-after
                    save_after_calls(&after_names)
                }
                false => Vec::new(),
            };
            let tab = &mut tabs[at];
            let (result, after) = self.insert_one(tab, write, &then).await;
            sent_after = after;
            tab.touched |= result.is_ok();
            results.push(result);
        }
        let inserted = started.elapsed();
        let saved = match sent_after {
            Some(after) => after,
            None => {
                after_names = tabs.iter().filter(|t| t.touched).map(|t| t.name).collect();
                self.after_group(old.as_deref(), &after_names).await
            }
        };
        // A tab the owner opened in CopyQ's window since the group's unload stayed loaded (its
        // inserts only in CopyQ's memory until its save delay): saved now, as a pinned one is.
        let opened = match saved {
            Ok(replies) if !pinned && !after_names.is_empty() => {
                match all_unloaded(&after_names, &replies) {
                    true => Ok(false),
                    // write protocol: save-opened
                    false => self.save_loaded().await.map(|()| true),
                }
            }
            Ok(_) => Ok(false),
            Err(e) => Err(e),
        };
        // Where the group's time in CopyQ goes (`copyq_mcp=debug`).
        tracing::debug!(
            inserts = count,
            before_ms = before.as_secs_f64() * 1e3,
            inserts_ms = (inserted - before).as_secs_f64() * 1e3,
            after_ms = (started.elapsed() - inserted).as_secs_f64() * 1e3,
            "insert group in CopyQ"
        );
        let persisted = match pinned || opened.as_ref().is_ok_and(|o| *o) {
            true => Persisted::SaveDelay,
            false => Persisted::Unload,
        };
        Ok(results
            .into_iter()
            .map(|r| match (r, &opened) {
                (Ok(()), Ok(_)) => Ok(persisted),
                (Ok(()), Err(e)) => Err(BackendError::after(Made::Change, e.again())),
                (Err(e), _) => Err(e),
            })
            .collect())
    }

    /// The unload of every tab that exists, and their rows, in one batch; whether one stays
    /// loaded (pinned). Unloading only saves. The unload comes first: a tab the last write
    /// unloaded is unloaded already (nothing to do), and counting its rows then loads it once
    /// for the inserts that follow. Counted first, it was loaded, dropped, and loaded again by
    /// the first insert (bench/results.md, "Issue 22 item 3, stop 43").
    async fn unload_and_lengths(&self, tabs: &mut [Tab<'_>]) -> Result<bool, BackendError> {
        let existing: Vec<&str> = tabs.iter().filter(|t| !t.created).map(|t| t.name).collect();
        if existing.is_empty() {
            return Ok(false);
        }
        // write protocol: unload
        let mut calls = vec![slots::unload_tabs(&existing)];
        // write protocol: check
        calls.extend(existing.iter().map(|t| slots::browser_length(t)));
        let mut replies = self.call_many(calls).await?.into_iter();
        let unloaded = replies
            .next()
            .ok_or_else(|| BackendError::Failed("unload: a reply is missing".into()))?;
        let unloaded =
            slots::expect_string_list(&slots::unload_tabs(&existing), unloaded).map_err(failed)?;
        for (tab, length) in tabs.iter_mut().filter(|t| !t.created).zip(replies) {
            let count =
                slots::expect_int(&slots::browser_length(tab.name), length).map_err(failed)?;
            tab.rows = Some(usize::try_from(count).unwrap_or(0));
        }
        Ok(pinned(&existing, &unloaded))
    }

    /// One insert of the group: its room check, the insert and its verify, with `then` in the
    /// same round trip, answered on its own (`None`: not sent, as when the room check refused).
    async fn insert_one(
        &self,
        tab: &mut Tab<'_>,
        write: Write<'_>,
        then: &[Call],
    ) -> (
        Result<(), BackendError>,
        Option<Result<Vec<Value>, BackendError>>,
    ) {
        let Write {
            data, item, limit, ..
        } = write;
        let rows = match tab.rows {
            Some(n) => n,
            // An insert into this tab failed: its rows as they are now (none if it is not a tab).
            None => match self.rows_now(tab.name).await {
                Ok(n) => n,
                Err(e) => return (Err(e), None),
            },
        };
        if rows >= limit {
            tab.rows = Some(rows);
            return (Err(BackendError::TabFull { limit }), None);
        }
        tab.rows = None;
        // write protocol: body, then write protocol: verify (both in insert_verified_then)
        let (result, after) = self
            .insert_verified_then(tab.name, data, item, rows, then)
            .await;
        let result = match result {
            Ok(()) => {
                tab.rows = Some(rows + 1);
                Ok(())
            }
            // CopyQ stopped answering with the insert sent: it may still make it.
            Err(e @ BackendError::Timeout(_)) => Err(BackendError::after(Made::Unknown, e)),
            Err(e) => Err(e),
        };
        (result, after)
    }

    /// The group's steps after the inserts: the save delays back, the tabs written saved.
    async fn after_group(
        &self,
        old: Option<&[String]>,
        made: &[&str],
    ) -> Result<Vec<Value>, BackendError> {
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
            return Ok(Vec::new());
        }
        // write protocol: unload-after. A tab the group created is not flushed to CopyQ's tab
        // list (write protocol: flush-tab-list, step 9 of [`crate::backend::protocol`]: its data
        // file, written by this unload, brings it back after a crash; the flush cost CopyQ's one
        // thread about 20 ms, ten adds' worth).
        self.save_after(made).await
    }
}
