//! Reads over the socket: the tab list, then lengths and rows in one batch (whole tabs through
//! selections, which return every row in one reply), formats kept in files fetched afterwards.
//! A window of tabs CopyQ listed last time asks the tab list in that batch too: one round trip.

use super::super::slots;
use super::super::value::{Call, Map, Value};
use super::durable::Prepared;
use super::rows::{into_map, item_from};
use super::{SocketBackend, cut, data_file, failed, row_arg};
use crate::backend::{
    BackendError, Item, ReadRequest, RowsPage, Snapshot, TabPage, TabRows, TabSelector,
};

/// The most row calls asked together with the lengths (past it, the lengths are asked first, so
/// that only rows that exist are asked: a long window of short tabs would be mostly misses).
const WINDOW_CALLS: usize = 512;

/// Tries of a read whose rows a write moved while it was read ([`SocketBackend::read`]).
const READS_AGAIN: usize = 4;
/// Tries of [`SocketBackend::rows_between_lengths`] before it takes what it read.
const REREADS: usize = 4;
/// Rows asked past a tab's last known length when it is read again (items added meanwhile).
const REREAD_SLACK: usize = 8;

/// `read` made again (up to [`READS_AGAIN`] times in all) while it fails with
/// [`BackendError::Conflict`]: a write moved the rows of a tab between two of its round trips.
async fn again_on_conflict<T, F, Fut>(read: F) -> Result<T, BackendError>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = Result<T, BackendError>>,
{
    let mut tries = 1;
    loop {
        match read().await {
            Err(BackendError::Conflict) if tries < READS_AGAIN => tries += 1,
            other => return other,
        }
    }
}

/// What [`SocketBackend::read_guessed`] did.
enum Guessed {
    /// Nothing: the read's tabs were not all in the last tab list, or it is not a window.
    Not,
    /// The read, in one round trip: the tab list, the tabs read and the replies to [`batch`];
    /// with a write's unload, the tabs CopyQ answered it unloaded.
    Read {
        all_tabs: Vec<String>,
        names: Vec<String>,
        replies: Vec<Value>,
        unloaded: Option<Vec<String>>,
    },
    /// Only the tab list (the guess was wrong): the read is asked again for it.
    Listed(Vec<String>),
}

/// The tabs of `all_tabs` that `selector` picks, in tab order (names in the order named).
fn chosen(selector: &TabSelector, all_tabs: &[String]) -> Vec<String> {
    match selector {
        TabSelector::Names { names } => names
            .iter()
            .filter(|n| all_tabs.contains(n))
            .cloned()
            .collect(),
        TabSelector::Prefix { prefix, invert } => all_tabs
            .iter()
            .filter(|n| n.starts_with(prefix.as_str()) != *invert)
            .cloned()
            .collect(),
        TabSelector::All {} => all_tabs.to_vec(),
    }
}

/// The window asked with the lengths of `tabs` tabs, if small enough: a tree or a list is then
/// one batch, as a native client's would be (rows past a tab's end come back empty and are
/// dropped).
fn together(req: &ReadRequest, tabs: usize) -> Option<usize> {
    req.limit
        .filter(|limit| tabs.saturating_mul(*limit) <= WINDOW_CALLS)
}

/// A read's batch after its tab list: each tab's length; the window of each, if [`together`];
/// for whole tabs, each tab's selection (made in the batch of the lengths: one round trip fewer
/// than asking for them after).
fn batch(names: &[String], req: &ReadRequest) -> Vec<Call> {
    let mut calls: Vec<_> = names.iter().map(|n| slots::browser_length(n)).collect();
    if let Some(limit) = together(req, names.len()) {
        for name in names {
            let window = req.skip..req.skip.saturating_add(limit);
            calls.extend(window.map(|r| slots::browser_item_data(name, row_arg(r))));
        }
    }
    if req.limit.is_none() {
        calls.extend(names.iter().map(|n| slots::create_selection(n)));
    }
    calls
}

impl SocketBackend {
    /// Rows `skip..skip+limit` (or to the end) of each tab: the tab list, then lengths and rows
    /// in one batch (whole tabs through selections, which return every row in one reply); one
    /// batch in all for a window of tabs the last tab list had ([`Self::read_guessed`]).
    /// Made again when a write moved the rows of a tab between two of its round trips (reads go
    /// beside writes): see [`Self::fill_data_files`].
    pub async fn read(&self, req: &ReadRequest) -> Result<Snapshot, BackendError> {
        again_on_conflict(|| async { Ok(self.read_once(req, &[]).await?.0) }).await
    }

    /// [`Self::prepare_write`] of `names` and [`Self::read`] of `req` (a write's plan) in one
    /// round trip fewer: the unload of `names` goes first in the read's batch after its tab list,
    /// so the read loads each tab once, for the write's check and body too, as the read after
    /// the prepare did (one round trip of an update's or delete's six, issue 22, stop 54). A
    /// window of tabs listed last time asks its tab list in that batch too (one round trip in
    /// all, [`Self::read_guessed`]).
    pub async fn read_prepared(
        &self,
        req: &ReadRequest,
        names: &[&str],
    ) -> Result<(Snapshot, Prepared), BackendError> {
        // The connection before the read: one re-made during it is to a CopyQ whose tabs the
        // write asks again (`prepared` compares it).
        let (client, _) = self.client().await?;
        let (snap, unloaded) = again_on_conflict(|| self.read_once(req, names)).await?;
        let unloaded = unloaded.unwrap_or_default();
        let prepared = Prepared::made(&client, names, &snap.all_tabs, &unloaded);
        Ok((snap, prepared))
    }

    /// One read of `req`; with `unload` (the tabs a write will touch), their unload first in the
    /// batch after the tab list, and the tabs CopyQ answered it unloaded.
    async fn read_once(
        &self,
        req: &ReadRequest,
        unload: &[&str],
    ) -> Result<(Snapshot, Option<Vec<String>>), BackendError> {
        self.settle_owed().await?;
        let listed = match self.read_guessed(req, unload).await? {
            Guessed::Read {
                all_tabs,
                names,
                replies,
                unloaded,
            } => {
                let snap = self.pages(req, all_tabs, names, replies).await?;
                return Ok((snap, unloaded));
            }
            Guessed::Listed(all_tabs) => Some(all_tabs),
            Guessed::Not => None,
        };
        let all_tabs = match listed {
            Some(all_tabs) => all_tabs,
            None => self.tabs().await?,
        };
        let names = chosen(&req.tabs, &all_tabs);
        // write protocol: unload (unloading a tab that does not exist creates nothing)
        let unload = (!unload.is_empty()).then(|| slots::unload_tabs(unload));
        let mut calls: Vec<_> = unload.iter().cloned().collect();
        calls.extend(batch(&names, req));
        let mut replies = self.call_many(calls).await?.into_iter();
        let unloaded = match &unload {
            Some(call) => Some(
                slots::expect_string_list(call, replies.next().unwrap_or(Value::Invalid))
                    .map_err(failed)?,
            ),
            None => None,
        };
        let snap = self.pages(req, all_tabs, names, replies.collect()).await?;
        Ok((snap, unloaded))
    }

    /// A read's tab list asked in the batch of its lengths and rows, one round trip where there
    /// were two, when what it reads is a window of tabs all listed in the last tab list CopyQ
    /// gave (`seen`): the batch is made for those tabs, and used when the tab list it brings
    /// picks the same ones. Otherwise the tab list it brought is the read's: its lengths and
    /// rows are asked again, for the tabs listed now. A tab the owner removed since the last
    /// tab list was touched by the batch, which in CopyQ before 17.0 makes it again, empty:
    /// [`Self::unmake`] removes it. A write's plan (`unload`: the tabs it will touch) sends
    /// their unload after the tab list, first of what the read touches, as
    /// [`Self::read_once`] does; a wrong guess sends it again with the read (it then saves the
    /// tabs the guess loaded, if any, at the cost of one more load).
    async fn read_guessed(
        &self,
        req: &ReadRequest,
        unload: &[&str],
    ) -> Result<Guessed, BackendError> {
        let guess = chosen(&req.tabs, &self.seen_tabs());
        if guess.is_empty() || together(req, guess.len()).is_none() {
            return Ok(Guessed::Not);
        }
        let unload = (!unload.is_empty()).then(|| slots::unload_tabs(unload));
        let mut calls = vec![slots::tabs()];
        calls.extend(unload.iter().cloned());
        calls.extend(batch(&guess, req));
        let mut replies = self.call_many(calls).await?.into_iter();
        let named: Vec<&str> = guess.iter().map(String::as_str).collect();
        let (all_tabs, all_listed) = self.listed_before(replies.next(), &named).await?;
        if !all_listed {
            return Ok(Guessed::Listed(all_tabs));
        }
        let unloaded = match &unload {
            Some(call) => Some(
                slots::expect_string_list(call, replies.next().unwrap_or(Value::Invalid))
                    .map_err(failed)?,
            ),
            None => None,
        };
        let names = chosen(&req.tabs, &all_tabs);
        if names == guess {
            return Ok(Guessed::Read {
                all_tabs,
                names,
                replies: replies.collect(),
                unloaded,
            });
        }
        Ok(Guessed::Listed(all_tabs))
    }

    /// The tab list a batch asked first, before it named `named` (tabs the last tab list had,
    /// see `seen`): noted as the newest, and whether it still lists every one of them. One it
    /// does not list, the owner removed meanwhile, and the batch made again in CopyQ before
    /// 17.0: [`Self::unmake`] removes it, and the tab list after that is the one returned.
    /// Reads, a write's check and a group of inserts guess so.
    pub(in crate::backend::socket) async fn listed_before(
        &self,
        reply: Option<Value>,
        named: &[&str],
    ) -> Result<(Vec<String>, bool), BackendError> {
        let all = slots::expect_string_list(&slots::tabs(), reply.unwrap_or(Value::Invalid))
            .map_err(failed)?;
        self.saw_tabs(&all);
        let touched: Vec<&str> = named
            .iter()
            .copied()
            .filter(|n| !all.iter().any(|a| a == n))
            .collect();
        match touched.is_empty() {
            true => Ok((all, true)),
            false => Ok((self.unmake(&touched).await?, false)),
        }
    }

    /// Remove each of `touched`, tabs a read's batch named that the tab list in that batch did
    /// not list, which CopyQ before 17.0 made (empty) when the batch named them, if it is
    /// listed now, still empty, and the only tab whose name matches it ignoring `&` (CopyQ's
    /// own match: a touch of `a` reads `&a` and makes nothing). No batch of the gateway's goes
    /// between the check and the removal (`sends` held alone): a write that added to such a
    /// tab meanwhile (it saw the tab listed) was answered before the check, which then finds
    /// the tab not empty and keeps it. The tab list after.
    pub(in crate::backend::socket) async fn unmake(
        &self,
        touched: &[&str],
    ) -> Result<Vec<String>, BackendError> {
        // One removal at a time (see `removals`), taken first: a removal holds it while it
        // sends its batches, so the other order could leave each waiting for the other.
        let _removal = self.removals.lock().await;
        let _alone = self.sends.write().await;
        let (client, _) = self.client().await?;
        let list = slots::tabs();
        self.trip();
        let reply = client.call(&list).await.map_err(failed)?;
        let mut all_tabs = slots::expect_string_list(&list, reply).map_err(failed)?;
        let bare = |t: &str| t.replace('&', "");
        let made: Vec<&str> = touched
            .iter()
            .copied()
            .filter(|t| {
                all_tabs.iter().any(|a| a == t)
                    && all_tabs.iter().filter(|a| bare(a) == bare(t)).count() == 1
            })
            .collect();
        if !made.is_empty() {
            let lengths: Vec<_> = made.iter().map(|t| slots::browser_length(t)).collect();
            self.trip();
            let replies = client.call_many(&lengths).await.map_err(failed)?;
            let empty: Vec<&str> = made
                .iter()
                .zip(replies)
                .filter(|(_, n)| n.as_int() == Some(0))
                .map(|(t, _)| *t)
                .collect();
            let mut removed = 0;
            for tab in &empty {
                let call = slots::remove_tab(tab);
                self.trip();
                let reply = client.call(&call).await.map_err(failed)?;
                match slots::expect_error_text(&call, reply).map_err(failed)? {
                    None => {
                        all_tabs.retain(|t| t != tab);
                        removed += 1;
                    }
                    Some(e) => tracing::warn!(error = %e, "CopyQ kept a tab a read made"),
                }
            }
            tracing::info!(
                made = made.len(),
                removed,
                "a read named tabs removed since the last tab list, which CopyQ made again; \
                 those still empty were removed"
            );
        }
        self.saw_tabs(&all_tabs);
        Ok(all_tabs)
    }

    /// The read's pages from `replies` to [`batch`] of `names`.
    async fn pages(
        &self,
        req: &ReadRequest,
        all_tabs: Vec<String>,
        names: Vec<String>,
        mut replies: Vec<Value>,
    ) -> Result<Snapshot, BackendError> {
        let together = together(req, names.len());
        let rest = replies.split_off(names.len().min(replies.len()));
        let mut totals = Vec::with_capacity(names.len());
        for (call_tab, reply) in names.iter().zip(replies) {
            totals.push(
                usize::try_from(
                    slots::expect_int(&slots::browser_length(call_tab), reply).map_err(failed)?,
                )
                .unwrap_or(0),
            );
        }
        let rows: Vec<Vec<Item>> = match (together, req.limit) {
            (Some(limit), _) => {
                self.windows_from(&names, &totals, (req.skip, limit), rest, req.preview)
                    .await?
            }
            (None, Some(limit)) => {
                self.windows(&names, &totals, (req.skip, limit), req.preview)
                    .await?
            }
            (None, None) => self
                .whole_checked(&names, &mut totals, rest, req.preview)
                .await?
                .into_iter()
                .map(|items| items.into_iter().skip(req.skip).collect())
                .collect(),
        };
        let pages = names
            .into_iter()
            .zip(totals)
            .zip(rows)
            .map(|((name, total), items)| TabPage {
                name,
                total,
                items: items
                    .into_iter()
                    .map(|it| Item {
                        text: cut(it.text, req.preview),
                        note: cut(it.note, req.preview),
                        ..it
                    })
                    .collect(),
            })
            .collect();
        Ok(Snapshot { pages, all_tabs })
    }

    /// Rows of tabs, whole: the tab list, then every length and row in one batch.
    pub async fn read_rows(&self, wanted: &[TabRows]) -> Result<Vec<RowsPage>, BackendError> {
        again_on_conflict(|| self.read_rows_once(wanted)).await
    }

    async fn read_rows_once(&self, wanted: &[TabRows]) -> Result<Vec<RowsPage>, BackendError> {
        self.settle_owed().await?;
        let all_tabs = self.tabs().await?;
        let wanted: Vec<&TabRows> = wanted
            .iter()
            .filter(|w| all_tabs.contains(&w.name))
            .collect();
        let mut calls = Vec::new();
        for w in &wanted {
            calls.push(slots::browser_length(&w.name));
            calls.extend(
                w.rows
                    .iter()
                    .map(|r| slots::browser_item_data(&w.name, row_arg(*r))),
            );
        }
        let mut replies = self.call_many(calls).await?.into_iter();
        let mut pages = Vec::with_capacity(wanted.len());
        for w in wanted {
            let length = slots::browser_length(&w.name);
            let reply = replies.next().unwrap_or(Value::Invalid);
            let total =
                usize::try_from(slots::expect_int(&length, reply).map_err(failed)?).unwrap_or(0);
            let asked: Vec<(usize, Option<Value>)> =
                w.rows.iter().map(|r| (*r, replies.next())).collect();
            let maps = asked
                .into_iter()
                .filter(|(r, _)| *r < total)
                .map(|(r, reply)| (r, into_map(reply)))
                .collect();
            let mut items = self.items_of(&w.name, maps, None).await?.into_iter();
            let items = w
                .rows
                .iter()
                .map(|r| if *r < total { items.next() } else { None })
                .collect();
            pages.push(RowsPage {
                name: w.name.clone(),
                total,
                items,
            });
        }
        Ok(pages)
    }

    /// One format's bytes (a `DataFile`'s content too: CopyQ reads the file for this slot).
    pub async fn format(
        &self,
        tab: &str,
        row: usize,
        mime: &str,
    ) -> Result<Option<Vec<u8>>, BackendError> {
        self.settle_owed().await?;
        if !self.tabs().await?.iter().any(|t| t == tab) {
            return Ok(None);
        }
        let reply = self
            .call(slots::browser_item_format(tab, row_arg(row), mime))
            .await?;
        Ok(match reply {
            Value::Bytes(Some(b)) if !b.is_empty() => Some(b),
            Value::String(Some(s)) if !s.is_empty() => Some(s.into_bytes()),
            _ => None,
        })
    }

    /// `maxitems`: the backend's cache, else CopyQ asked.
    pub async fn item_limit(&self) -> Result<usize, BackendError> {
        let ask = |ask: bool| async move {
            match ask {
                true => Ok(((), Some(self.max_items().await?))),
                false => Ok(((), None)),
            }
        };
        Ok(self.limit.through(ask).await?.1)
    }

    /// A read, then `maxitems` when the backend's cache cannot answer.
    pub async fn read_with_max_items(
        &self,
        req: &ReadRequest,
    ) -> Result<(Snapshot, usize), BackendError> {
        let read = |ask: bool| async move {
            let snap = self.read(req).await?;
            let limit = if ask {
                Some(self.max_items().await?)
            } else {
                None
            };
            Ok((snap, limit))
        };
        self.limit.through(read).await
    }

    async fn windows(
        &self,
        names: &[String],
        totals: &[usize],
        (skip, limit): (usize, usize),
        preview: Option<usize>,
    ) -> Result<Vec<Vec<Item>>, BackendError> {
        let mut calls = Vec::new();
        let mut rows = Vec::new();
        for (name, total) in names.iter().zip(totals) {
            let window = skip..*total.min(&skip.saturating_add(limit));
            rows.push(window.clone());
            calls.extend(window.map(|r| slots::browser_item_data(name, row_arg(r))));
        }
        let mut replies = self.call_many(calls).await?.into_iter();
        let mut tabs = Vec::with_capacity(names.len());
        for (name, window) in names.iter().zip(rows) {
            let maps = window.map(|r| (r, into_map(replies.next()))).collect();
            tabs.push(self.items_of(name, maps, preview).await?);
        }
        Ok(tabs)
    }

    /// The items of a tab's rows as read (`(row, map)`), their `DataFile` formats filled in.
    async fn items_of(
        &self,
        name: &str,
        mut maps: Vec<(usize, Map)>,
        preview: Option<usize>,
    ) -> Result<Vec<Item>, BackendError> {
        self.fill_data_files(name, &mut maps, data_file::Formats::Item)
            .await?;
        Ok(maps
            .into_iter()
            .map(|(_, m)| item_from(m, preview))
            .collect())
    }

    /// The windows from `replies`: `limit` rows from `skip` asked of every tab, in tab order,
    /// each cut to the tab's length.
    async fn windows_from(
        &self,
        names: &[String],
        totals: &[usize],
        (skip, limit): (usize, usize),
        replies: Vec<Value>,
        preview: Option<usize>,
    ) -> Result<Vec<Vec<Item>>, BackendError> {
        let mut replies = replies.into_iter();
        let mut tabs = Vec::with_capacity(names.len());
        for (name, total) in names.iter().zip(totals) {
            let end = *total.min(&skip.saturating_add(limit));
            let mut maps = Vec::new();
            for r in skip..skip.saturating_add(limit) {
                let reply = replies.next();
                if r < end {
                    maps.push((r, into_map(reply)));
                }
            }
            tabs.push(self.items_of(name, maps, preview).await?);
        }
        Ok(tabs)
    }

    /// Whole tabs. A selection holds CopyQ's in-memory tab: if a write makes CopyQ unload that
    /// tab meanwhile (every write does, to save at once: the gateway's wait, the owner's may
    /// not), the selection's data comes back empty. Such a tab is read again row by row, which
    /// cannot be emptied that way ([`Self::rows_between_lengths`]).
    async fn whole_checked(
        &self,
        names: &[String],
        totals: &mut [usize],
        selections: Vec<Value>,
        preview: Option<usize>,
    ) -> Result<Vec<Vec<Item>>, BackendError> {
        let mut tabs = self.whole(names, selections, preview).await?;
        for i in 0..names.len() {
            if tabs[i].len() != totals[i] {
                tracing::debug!(
                    got = tabs[i].len(),
                    expected = totals[i],
                    "selection disagreed with the tab's length; reading rows"
                );
                (totals[i], tabs[i]) = self
                    .rows_between_lengths(&names[i], totals[i].max(tabs[i].len()), preview)
                    .await?;
            }
        }
        Ok(tabs)
    }

    /// Every row of `name`, read in one batch between two asks of its length, the total with
    /// them. No call of the gateway's runs inside a batch (one connection, a batch sent whole),
    /// so when both lengths agree the rows are the tab as it was: an insert made between the
    /// length and the rows, in two batches, pushed the oldest row out of the read (with searches
    /// beside writes, tests/load.rs saw 125 of 597 searches miss an item nobody touched).
    /// `guess`: the rows it likely has; a few more are asked (rows past the end come back empty),
    /// and when the tab changed meanwhile, its new length. After [`REREADS`] tries (the owner
    /// changing it as fast), the last read, to the length it gave.
    async fn rows_between_lengths(
        &self,
        name: &str,
        guess: usize,
        preview: Option<usize>,
    ) -> Result<(usize, Vec<Item>), BackendError> {
        let length = |reply: Option<Value>| -> Result<usize, BackendError> {
            let n = slots::expect_int(
                &slots::browser_length(name),
                reply.unwrap_or(Value::Invalid),
            )
            .map_err(failed)?;
            Ok(usize::try_from(n).unwrap_or(0))
        };
        let (mut ask, mut attempt) = (guess.saturating_add(REREAD_SLACK), 1);
        loop {
            let mut calls = vec![slots::browser_length(name)];
            calls.extend((0..ask).map(|r| slots::browser_item_data(name, row_arg(r))));
            calls.push(slots::browser_length(name));
            let mut replies = self.call_many(calls).await?;
            let after = length(replies.pop())?;
            let mut replies = replies.into_iter();
            let before = length(replies.next())?;
            if (before == after && before <= ask) || attempt == REREADS {
                let maps = (0..before.min(ask))
                    .map(|r| (r, into_map(replies.next())))
                    .collect();
                return Ok((before, self.items_of(name, maps, preview).await?));
            }
            tracing::debug!(
                before,
                after,
                "the tab changed while read; reading it again"
            );
            ask = before.max(after).saturating_add(REREAD_SLACK);
            attempt += 1;
        }
    }

    /// Every row of `names`, through the selections `ids` (one per tab, made by the caller).
    /// The replies are taken apart by value: each row's text, tags and note move into its item.
    async fn whole(
        &self,
        names: &[String],
        ids: Vec<Value>,
        preview: Option<usize>,
    ) -> Result<Vec<Vec<Item>>, BackendError> {
        let ids: Vec<i32> = ids
            .into_iter()
            .map(|v| match v {
                Value::Int(id) => id,
                _ => -1,
            })
            .collect();
        let mut calls = Vec::new();
        for id in &ids {
            calls.push(slots::selection_select_all(*id));
            calls.push(slots::selection_get_items_data(*id));
            calls.push(slots::destroy_selection(*id));
        }
        let mut replies = self.call_many(calls).await?.into_iter();
        let mut tabs = Vec::with_capacity(names.len());
        for name in names {
            // A whole-tab selection lists rows 0, 1, ... in order.
            let (_select, data, _destroy) = (replies.next(), replies.next(), replies.next());
            let mut maps: Vec<(usize, Map)> = match data {
                Some(Value::List(items)) => items
                    .into_iter()
                    .map(|v| into_map(Some(v)))
                    .enumerate()
                    .collect(),
                Some(Value::MapList(_, maps)) => maps.into_iter().enumerate().collect(),
                _ => Vec::new(),
            };
            self.fill_data_files(name, &mut maps, data_file::Formats::Item)
                .await?;
            tabs.push(
                maps.into_iter()
                    .map(|(_, m)| item_from(m, preview))
                    .collect(),
            );
        }
        Ok(tabs)
    }
}
