//! The steps of the durable-write protocol ([`crate::backend::protocol`]) around a write's body,
//! over the socket: save the touched tabs before and after, and zero the save delays for the
//! duration when a tab cannot be unloaded. A write whose body was made and a later step then failed
//! is [`BackendError::Partial`]; when the body failed, its error wins and a failure to put the save
//! delays back goes to the log. Save delays that could not be put back (CopyQ gone) are owed: put
//! back before the next read or write.

use std::future::Future;
use std::sync::{Arc, PoisonError};

use super::super::client::Client;
use super::super::slots;
use super::super::value::{Call, Map, Value, map_get};
use super::{SocketBackend, failed, row_arg};
use crate::backend::protocol::SAVE_DELAYS;
use crate::backend::{BackendError, Item, Made, Persisted};

fn set_config(name: &str, value: &str) -> Call {
    Call::new(
        "config(QVariantList)",
        vec![Value::List(vec![Value::str(name), Value::str(value)])],
    )
}

/// A write's unload made before its plan ([`SocketBackend::prepare_write`]): on which connection,
/// for which tabs, and what it found.
#[derive(Debug)]
pub struct Prepared {
    connection: usize,
    names: Vec<String>,
    before: Before,
}

impl Prepared {
    /// The unload of `names` on `client`'s connection, with the tab list `all` asked before it:
    /// CopyQ answered that it unloaded `unloaded`.
    pub(super) fn made(
        client: &Arc<Client>,
        names: &[&str],
        all: &[String],
        unloaded: &[String],
    ) -> Prepared {
        let existing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| all.iter().any(|a| a == n))
            .collect();
        Prepared {
            connection: Arc::as_ptr(client) as usize,
            names: names.iter().map(|n| n.to_string()).collect(),
            before: Before::found(&existing, unloaded),
        }
    }
}

/// What the steps before a write's body found of the tabs it touches.
#[derive(Debug)]
pub(crate) struct Before {
    /// A touched tab stayed loaded when unloaded: the save delays are zeroed around the body.
    pub pinned: bool,
}

impl Before {
    /// What the unload found of the tabs a write touches: those `existing` were tabs, CopyQ
    /// unloaded `unloaded` of them.
    fn found<S: AsRef<str>>(existing: &[S], unloaded: &[String]) -> Before {
        Before {
            pinned: pinned(existing, unloaded),
        }
    }
}

/// Whether CopyQ kept one of the `existing` tabs loaded when asked to unload them (it answered
/// with those it unloaded).
pub(super) fn pinned<S: AsRef<str>>(existing: &[S], unloaded: &[String]) -> bool {
    existing
        .iter()
        .any(|n| !unloaded.iter().any(|u| u == n.as_ref()))
}

/// The value of option `name` in the reply to `config(name)`.
fn config_text(name: &str, reply: Value) -> Result<String, BackendError> {
    let map = slots::expect_map(&slots::config(name), reply).map_err(failed)?;
    Ok(match map_get(&map, name) {
        Some(Value::Int(n)) => n.to_string(),
        Some(v) => v.to_text().unwrap_or_default(),
        None => String::new(),
    })
}

/// What a body did with the calls of the unload after: `Some(their replies)` when it sent them,
/// `None` when it did not (see [`SocketBackend::durably_from`]).
pub(super) type Saved = Option<Result<Vec<Value>, BackendError>>;

/// Whether the unload after a write saved every one of `names` (each a tab now), from the replies
/// to [`save_after_calls`]: CopyQ answers the unload with the tabs it unloaded, and keeps one
/// loaded that the owner opened in its window since the write's first unload.
pub(super) fn all_unloaded(names: &[&str], replies: &[Value]) -> bool {
    let call = slots::unload_tabs(names);
    match replies
        .first()
        .cloned()
        .map(|r| slots::expect_string_list(&call, r))
    {
        Some(Ok(unloaded)) => !pinned(names, &unloaded),
        _ => false,
    }
}

/// The calls that save what a write touched now that it is made: the unload of `names` (each a
/// tab now: the body made or found each, its verify checked, so none is created by naming it).
/// A tab the write created is not flushed to CopyQ's tab list: its data file, written by this
/// unload, brings it back after a crash ([`crate::backend::protocol`], step 9).
pub(super) fn save_after_calls(names: &[&str]) -> Vec<Call> {
    // write protocol: unload-after
    vec![slots::unload_tabs(names)]
}

impl SocketBackend {
    /// Tabs CopyQ saved and dropped from memory (it keeps those open in its window).
    pub(super) async fn unload(&self, tabs: &[String]) -> Result<Vec<String>, BackendError> {
        if tabs.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<&str> = tabs.iter().map(String::as_str).collect();
        let call = slots::unload_tabs(&names);
        let reply = self.call(call.clone()).await?;
        slots::expect_string_list(&call, reply).map_err(failed)
    }

    /// The save delays as they are, then all set to 0. If setting them fails, some may be 0
    /// already: they are put back before the error is returned.
    pub(super) async fn zero_delays(&self) -> Result<Vec<String>, BackendError> {
        let reads = SAVE_DELAYS.iter().map(|k| slots::config(k)).collect();
        let replies = self.call_many(reads).await?;
        let mut old = Vec::new();
        for (k, reply) in SAVE_DELAYS.iter().zip(replies) {
            old.push(config_text(k, reply)?);
        }
        let zeros = SAVE_DELAYS.iter().map(|k| set_config(k, "0")).collect();
        if let Err(e) = self.set_options(zeros).await {
            self.restore_delays_or_log(&old).await;
            return Err(e);
        }
        Ok(old)
    }

    /// Make CopyQ save now what it holds of every tab still loaded: a tab open in its window,
    /// which the unload after a write could not save. When an option changes CopyQ reloads its
    /// settings and every tab browser with them, saving what each holds (its sources, 6.4 to
    /// 17: `reloadBrowsers`, newer ones also `saveTabs`): the save delays set to 0 and put back
    /// are two such changes. (If every delay was 0 already, each change was saved at once. A tab
    /// with an item's editor open is reloaded, so saved, only when the editor closes.)
    /// One cycle of the save delays at a time (see `SocketBackend::delays`).
    pub(super) async fn save_loaded(&self) -> Result<(), BackendError> {
        let _cycle = self.delays.lock().await;
        let old = self.zero_delays().await?;
        if let Err(e) = self.put_delays(&old).await {
            self.owe(&old, &e);
            return Err(e);
        }
        Ok(())
    }

    pub(super) async fn put_delays(&self, old: &[String]) -> Result<(), BackendError> {
        let calls = SAVE_DELAYS
            .iter()
            .zip(old)
            .map(|(k, v)| set_config(k, v))
            .collect();
        self.set_options(calls).await
    }

    /// Options set (`config(name, value)` calls), never while a removal is under way (see
    /// `SocketBackend::removals`).
    async fn set_options(&self, calls: Vec<Call>) -> Result<(), BackendError> {
        let _alone = self.removals.lock().await;
        self.call_many(calls).await.map(|_| ())
    }

    /// Put the save delays back; a failure is logged, and they are owed: put back before the
    /// next call that reaches CopyQ.
    pub(super) async fn restore_delays_or_log(&self, old: &[String]) {
        if let Err(e) = self.put_delays(old).await {
            self.owe(old, &e);
        }
    }

    pub(super) fn owe(&self, old: &[String], e: &BackendError) {
        tracing::error!(error = %e, "cannot put CopyQ's save delays back yet; the next call will");
        *self.owed.lock().unwrap_or_else(PoisonError::into_inner) = Some(old.to_vec());
    }

    /// Put back save delays an earlier write could not (an error if CopyQ still does not answer).
    pub(super) async fn settle_owed(&self) -> Result<(), BackendError> {
        let owed = self
            .owed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(old) = owed {
            self.put_delays(&old).await?;
            tracing::info!("CopyQ's save delays are put back");
            *self.owed.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
        Ok(())
    }

    pub(super) async fn durably<T, F, Fut>(
        &self,
        names: &[&str],
        body: F,
    ) -> Result<(T, Persisted), BackendError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<T, BackendError>>,
    {
        self.settle_owed().await?;
        let existing = self.existing(names).await?;
        // write protocol: unload
        let unloaded = self.unload(&existing).await?;
        let before = Before::found(&existing, &unloaded);
        let body = |_| async { Ok((body().await?, None)) };
        self.durably_from(names, before, body).await
    }

    /// The protocol's unload, made before the write is planned (with the write lock held): the
    /// tab list and the unload of every one of `names` (the tabs the write will touch) in one
    /// batch. Unloading a tab that does not exist does nothing (and creates nothing). The plan's
    /// read then loads each tab once, for the check and the body too; unloaded inside the write,
    /// after the plan's read, a tab was loaded, dropped and loaded again (bench/results.md,
    /// "Issue 22 item 5, stop 45").
    pub async fn prepare_write(&self, names: &[&str]) -> Result<Prepared, BackendError> {
        self.settle_owed().await?;
        let (client, _) = self.client().await?;
        let unload = slots::unload_tabs(names);
        // write protocol: unload
        let [all, unloaded]: [Value; 2] = self
            .call_many(vec![slots::tabs(), unload.clone()])
            .await?
            .try_into()
            .map_err(|_| BackendError::Failed("unload: a reply is missing".into()))?;
        let all = slots::expect_string_list(&slots::tabs(), all).map_err(failed)?;
        let unloaded = slots::expect_string_list(&unload, unloaded).map_err(failed)?;
        Ok(Prepared::made(&client, names, &all, &unloaded))
    }

    /// What [`Self::prepare_write`] found, if it was made for `names` on the connection in use
    /// now (another connection may be to a CopyQ started since: its tabs are asked again).
    async fn prepared(
        &self,
        prepared: Option<Prepared>,
        names: &[&str],
    ) -> Result<Option<Before>, BackendError> {
        let Some(p) = prepared else {
            return Ok(None);
        };
        let (client, _) = self.client().await?;
        Ok((p.connection == Arc::as_ptr(&client) as usize && p.names == names).then_some(p.before))
    }

    /// A write's unload and check: taken from [`Self::prepare_write`] when it was made for these
    /// tabs (the check then asks the tab list again: the owner may have removed the tab since,
    /// and naming a missing tab creates it), else [`Self::unload_and_check`].
    pub(super) async fn unloaded_and_checked(
        &self,
        prepared: Option<Prepared>,
        names: &[&str],
        row: (&str, usize, &Item),
    ) -> Result<((Map, usize), Before), BackendError> {
        match self.prepared(prepared, names).await? {
            Some(before) => {
                self.settle_owed().await?;
                let checked = self.check_row(row.0, row.1, row.2).await?;
                Ok((checked, before))
            }
            None => self.unload_and_check(names, row).await,
        }
    }

    /// The protocol's first two steps for a write to row `r` of `tab` (one of `names`, the tabs
    /// it touches): owed delays settled, then the unload of every one of `names` that exists and
    /// the row's check in one batch, the unload first. The check's data: every format's content, and
    /// the tab's length.
    /// The unload comes first for the reason [`Self::unload_and_lengths`] gives: a tab the last
    /// write unloaded is read once, by the check, for the body too; checked first, it was loaded,
    /// dropped by the unload and loaded again by the body (bench/results.md, "Issue 22 item 5,
    /// stop 45"). Unloading only saves: a refused check has changed nothing.
    pub(super) async fn unload_and_check(
        &self,
        names: &[&str],
        (tab, r, expect): (&str, usize, &Item),
    ) -> Result<((Map, usize), Before), BackendError> {
        self.settle_owed().await?;
        let existing = self.existing(names).await?;
        if !existing.iter().any(|n| n == tab) {
            return Err(BackendError::NoSuchTab);
        }
        let names_now: Vec<&str> = existing.iter().map(String::as_str).collect();
        // write protocol: unload
        let unload = slots::unload_tabs(&names_now);
        let calls = vec![
            unload.clone(),
            slots::browser_length(tab),
            slots::browser_item_data(tab, row_arg(r)),
        ];
        let [unloaded, length, data]: [Value; 3] = self
            .call_many(calls)
            .await?
            .try_into()
            .map_err(|_| BackendError::Failed("check: a reply is missing".into()))?;
        let unloaded = slots::expect_string_list(&unload, unloaded).map_err(failed)?;
        let before = Before::found(&existing, &unloaded);
        let checked = self.checked_row(tab, r, expect, length, data).await?;
        Ok((checked, before))
    }

    /// The protocol from its third step on, once what existed of `names` is unloaded (owed
    /// delays settled first). (An insert follows the protocol in a group: group.rs.) `body` gets
    /// the calls of the unload after (and of the tab list's save) when no tab is pinned (else
    /// none: the save delays are put back first), to send in its last round trip after its
    /// verify, answered on their own ([`SocketBackend::call_parts`]): with the outcome of those,
    /// or `None` if it did not send them (they are sent after it).
    pub(super) async fn durably_from<T, F, Fut>(
        &self,
        names: &[&str],
        before: Before,
        body: F,
    ) -> Result<(T, Persisted), BackendError>
    where
        F: FnOnce(Vec<Call>) -> Fut,
        Fut: Future<Output = Result<(T, Saved), BackendError>>,
    {
        // One cycle of the save delays at a time (see `SocketBackend::delays`).
        let cycle = match before.pinned {
            true => Some(self.delays.lock().await),
            false => None,
        };
        // write protocol: zero-delays
        let old = match before.pinned {
            true => Some(self.zero_delays().await?),
            false => None,
        };
        let then = match before.pinned {
            true => Vec::new(),
            false => save_after_calls(names),
        };
        // write protocol: body (verify is each body's last part)
        let result = match body(then).await {
            // CopyQ stopped answering with the write sent: it may still make it.
            Err(e @ BackendError::Timeout(_)) => Err(BackendError::after(Made::Unknown, e)),
            other => other,
        };
        if let Some(old) = &old {
            // write protocol: restore-delays
            match &result {
                Ok(_) => {
                    if let Err(e) = self.put_delays(old).await {
                        self.owe(old, &e);
                        return Err(BackendError::after(Made::Change, e));
                    }
                }
                // The body's error is what the client hears; this one is logged.
                Err(_) => self.restore_delays_or_log(old).await,
            }
        }
        drop(cycle);
        let (value, saved) = result?;
        let replies = match saved {
            Some(saved) => saved,
            None => self.save_after(names).await,
        }
        .map_err(|e| BackendError::after(Made::Change, e))?;
        // A tab the owner opened in CopyQ's window since the first unload stayed loaded: its
        // change is only in CopyQ's memory until its save delay (5 minutes for a change).
        let opened = !before.pinned && !all_unloaded(names, &replies);
        if opened {
            // write protocol: save-opened
            tracing::debug!("a tab the write touched was opened in CopyQ meanwhile: saving it");
            self.save_loaded()
                .await
                .map_err(|e| BackendError::after(Made::Change, e))?;
        }
        Ok((
            value,
            if before.pinned || opened {
                Persisted::SaveDelay
            } else {
                Persisted::Unload
            },
        ))
    }

    /// Save what the write touched now that it is made, in one batch. Every one of `names` is a
    /// tab now: the body made or found each (its verify checked), so none is created by naming it.
    pub(super) async fn save_after(&self, names: &[&str]) -> Result<Vec<Value>, BackendError> {
        self.call_many(save_after_calls(names)).await
    }

    /// Those of `names` that are tabs now.
    pub(super) async fn existing(&self, names: &[&str]) -> Result<Vec<String>, BackendError> {
        let all = self.tabs().await?;
        Ok(names
            .iter()
            .filter(|n| all.iter().any(|a| a == *n))
            .map(|n| n.to_string())
            .collect())
    }

    /// CopyQ saves its tab list a second after a change; any config() call saves it at once.
    pub(super) async fn flush_tab_list(&self) -> Result<(), BackendError> {
        // write protocol: flush-tab-list
        self.call(slots::config("tabs")).await.map(|_| ())
    }
}
