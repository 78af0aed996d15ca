//! Writes over the socket, following the durable-write protocol of [`crate::backend::protocol`]
//! step for step (a comment marks each step), as the CLI script does.

use super::super::slots;
use super::super::value::{Call, Map, Value, map_get};
use super::data_file::Formats;
use super::durable::{Prepared, Saved};
use super::group::Write;
use super::rows::is_bare;
use super::{SocketBackend, failed, holds_pin, item_of, map_of};
use crate::backend::{BackendError, Item, Landed, Made, Persisted, Ready, wait_ready};

fn row(r: usize) -> i32 {
    i32::try_from(r).unwrap_or(i32::MAX)
}

/// A slot's `QString` answer: null means success, anything else is CopyQ's error text.
fn ok_or_text(reply: &Value, what: &str) -> Result<(), BackendError> {
    match reply {
        v if v.is_null() => Ok(()),
        Value::String(Some(text)) if text.is_empty() => Ok(()),
        Value::String(Some(text)) => Err(BackendError::Failed(format!("{what}: {text}"))),
        other => Err(BackendError::Failed(format!(
            "{what}: unexpected {}",
            other.kind()
        ))),
    }
}

/// The rows of `tab`, from the reply to its `browserLength`.
fn rows_of(tab: &str, reply: Value) -> Result<usize, BackendError> {
    let n = slots::expect_int(&slots::browser_length(tab), reply).map_err(failed)?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Whether a row's reply holds the mark of an item the owner pinned in CopyQ.
fn is_pinned(data: &Value) -> bool {
    data.as_map().is_some_and(holds_pin)
}

/// A row about to be removed (a delete, a move's source), refused if it is pinned: CopyQ would
/// refuse the removal (a move would have copied it by then). Nothing has changed.
fn unpinned(data: &Map) -> Result<(), BackendError> {
    match holds_pin(data) {
        true => Err(BackendError::Pinned),
        false => Ok(()),
    }
}

/// Whether a removal from a tab of `count` rows went, by the rows it holds `now`: one fewer, or
/// all of them kept (an `onItemsRemoved()` script of CopyQ's refused it), as the CLI's script
/// tells them apart.
fn removed(now: usize, count: usize, what: &str) -> Result<(), BackendError> {
    match now {
        n if n == count => Err(BackendError::Kept),
        n if n + 1 == count => Ok(()),
        _ => Err(BackendError::Failed(format!("{what} was not applied"))),
    }
}

impl SocketBackend {
    /// A body's `calls` and then `then` (the unload after, or nothing) in one round trip, each
    /// answered on its own: the body's replies, and the outcome of `then` if it was sent.
    async fn body_then(
        &self,
        calls: &[Call],
        then: &[Call],
        what: &str,
    ) -> Result<(Vec<Value>, Saved), BackendError> {
        let mut parts = self.call_parts(&[calls, then]).await?.into_iter();
        let replies = parts
            .next()
            .unwrap_or_else(|| Err(BackendError::Failed(format!("{what}: a reply is missing"))))?;
        let saved = parts.next().filter(|_| !then.is_empty());
        Ok((replies, saved))
    }

    async fn exists(&self, tab: &str) -> Result<bool, BackendError> {
        Ok(self.tabs().await?.iter().any(|t| t == tab))
    }

    pub(super) async fn length(&self, tab: &str) -> Result<usize, BackendError> {
        let reply = self.call(slots::browser_length(tab)).await?;
        rows_of(tab, reply)
    }

    /// The full data of `r` in `tab` (every format's content), if it still holds `expect`, and
    /// how many rows `tab` holds. (write protocol: check)
    /// The tab must be listed before it is named (CopyQ before 17.0 makes a tab any call names):
    /// when the last tab list had it (the write's plan just read it), the tab list goes in the
    /// batch of the check, one round trip, as a read's does ([`Self::read_guessed`]); a tab the
    /// owner removed since was made again by that batch and [`Self::unmake`] removes it.
    pub(super) async fn check_row(
        &self,
        tab: &str,
        r: usize,
        expect: &Item,
    ) -> Result<(Map, usize), BackendError> {
        let guessed = self.seen_tabs().iter().any(|t| t == tab);
        if !guessed && !self.exists(tab).await? {
            return Err(BackendError::NoSuchTab);
        }
        let mut calls = Vec::with_capacity(3);
        calls.extend(guessed.then(slots::tabs));
        calls.push(slots::browser_length(tab));
        calls.push(slots::browser_item_data(tab, row(r)));
        let mut replies = self.call_many(calls).await?.into_iter();
        if guessed && !self.listed_before(replies.next(), &[tab]).await?.1 {
            return Err(BackendError::NoSuchTab);
        }
        let [length, data]: [Value; 2] = replies
            .collect::<Vec<_>>()
            .try_into()
            .map_err(|_| BackendError::Failed("check: a reply is missing".into()))?;
        self.checked_row(tab, r, expect, length, data).await
    }

    /// Row `r` of `tab` from the replies to its length and its data (asked in one batch; a row
    /// past the end comes back empty), every format's content filled in, if it holds `expect`;
    /// with the length.
    pub(super) async fn checked_row(
        &self,
        tab: &str,
        r: usize,
        expect: &Item,
        length: Value,
        data: Value,
    ) -> Result<(Map, usize), BackendError> {
        let count = rows_of(tab, length)?;
        if r >= count {
            return Err(BackendError::NoSuchRow { count });
        }
        let data = self.filled_row(tab, r, data, Formats::All).await?;
        if item_of(&data) != *expect {
            return Err(BackendError::Conflict);
        }
        Ok((data, count))
    }

    /// A write to `tab` that left no tab of that name went to another tab CopyQ matched to it.
    async fn check_landed(&self, tab: &str) -> Result<(), BackendError> {
        match self.exists(tab).await? {
            true => Ok(()),
            false => Err(BackendError::Misdirected {
                tab: tab.to_owned(),
            }),
        }
    }

    /// The rows of `tab` now: none if it is not a tab (naming a missing tab to CopyQ would
    /// create it, so its length is asked only once the tab list holds it).
    pub(super) async fn rows_now(&self, tab: &str) -> Result<usize, BackendError> {
        match self.exists(tab).await? {
            true => self.length(tab).await,
            false => Ok(0),
        }
    }

    async fn check_room(&self, tab: &str, limit: usize) -> Result<(), BackendError> {
        if self.exists(tab).await? && self.length(tab).await? >= limit {
            return Err(BackendError::TabFull { limit });
        }
        Ok(())
    }

    /// Insert `data` at row 0 of `tab` (which had `before` rows), for a move's target: the
    /// length asked first. The row it landed at (see [`Self::checked_insert`]).
    async fn insert_map(&self, tab: &str, data: Map, expect: &Item) -> Result<usize, BackendError> {
        let before = self.rows_now(tab).await?;
        self.insert_verified(tab, data, expect, before).await
    }

    /// The insert and its check in one batch: the insert, the tab list (it landed in a tab of
    /// that exact name), the length (one more row) and row 0 (the item). Naming `tab` after the
    /// insert creates nothing: the insert made it, or went to the tab CopyQ matched the name to,
    /// which the length and row then name too.
    pub(super) async fn insert_verified(
        &self,
        tab: &str,
        data: Map,
        expect: &Item,
        before: usize,
    ) -> Result<usize, BackendError> {
        self.insert_verified_then(tab, data, expect, before, &[])
            .await
            .0
    }

    /// [`Self::insert_verified`], with `then` sent in the same round trip right after the check
    /// (a group's unload after its last insert) and answered on its own: `None` when nothing was
    /// sent, or `then` is empty.
    pub(super) async fn insert_verified_then(
        &self,
        tab: &str,
        data: Map,
        expect: &Item,
        before: usize,
        then: &[Call],
    ) -> (
        Result<usize, BackendError>,
        Option<Result<Vec<Value>, BackendError>>,
    ) {
        let layout = match self.layout().await {
            Ok(layout) => layout,
            Err(e) => return (Err(e), None),
        };
        let calls = [
            slots::browser_insert(layout.map_list, tab, 0, vec![data]),
            // write protocol: verify
            slots::tabs(),
            slots::browser_length(tab),
            slots::browser_item_data(tab, 0),
        ];
        let mut parts = match self.call_parts(&[&calls, then]).await {
            Ok(parts) => parts.into_iter(),
            Err(e) => return (Err(e), None),
        };
        let body = match parts.next() {
            Some(Ok(replies)) => self.checked_insert(tab, replies, expect, (before, 0)).await,
            Some(Err(e)) => Err(e),
            None => Err(BackendError::Failed("insert: a reply is missing".into())),
        };
        (body, parts.next().filter(|_| !then.is_empty()))
    }

    /// The insert's replies, checked: it landed in `tab`, which holds one row more than
    /// `before`, the first being `expect`. `now`: the row that first row is at now (0 unless
    /// inserts into the tab followed it in the same round trip), where a format CopyQ keeps in a
    /// file is fetched from. The row the item landed at: 0, or, when the tab's first rows are
    /// pinned (CopyQ moves them back above it), the first row below them.
    pub(super) async fn checked_insert(
        &self,
        tab: &str,
        replies: Vec<Value>,
        expect: &Item,
        (before, now): (usize, usize),
    ) -> Result<usize, BackendError> {
        let [inserted, tabs, length, first]: [Value; 4] = replies
            .try_into()
            .map_err(|_| BackendError::Failed("insert: a reply is missing".into()))?;
        ok_or_text(&inserted, "insert")?;
        let tabs = slots::expect_string_list(&slots::tabs(), tabs).map_err(failed)?;
        if !tabs.iter().any(|t| t == tab) {
            return Err(BackendError::Misdirected {
                tab: tab.to_owned(),
            });
        }
        let count = rows_of(tab, length)?;
        if count != before + 1 {
            return Err(BackendError::Failed("insert was not applied".into()));
        }
        if is_pinned(&first) {
            return self.below_pinned(tab, expect, (count, now)).await;
        }
        let first = self.filled_row(tab, now, first, Formats::Item).await?;
        if item_of(&first) != *expect {
            return Err(BackendError::Failed("insert was not applied".into()));
        }
        Ok(0)
    }

    /// Where an insert at row 0 of `tab` went when row 0 is pinned: CopyQ's pinned-items plugin
    /// moved the pinned rows back above it, so it is the first row below those (`now` rows
    /// further down, for the inserts into the tab that followed it). A row at a time: only a
    /// tab with pinned rows pays for it. The row, as it was when the item was inserted.
    async fn below_pinned(
        &self,
        tab: &str,
        expect: &Item,
        (count, now): (usize, usize),
    ) -> Result<usize, BackendError> {
        let mut r = 0;
        // The first row not pinned, as read: the item itself unless inserts followed it.
        let mut first = Value::Invalid;
        while r < count {
            first = self.call(slots::browser_item_data(tab, row(r))).await?;
            if !is_pinned(&first) {
                break;
            }
            r += 1;
        }
        let at = r + now;
        let data = match now == 0 && r < count {
            true => first,
            false => self.call(slots::browser_item_data(tab, row(at))).await?,
        };
        let data = self.filled_row(tab, at, data, Formats::Item).await?;
        match item_of(&data) == *expect {
            true => Ok(r),
            false => Err(BackendError::Failed("insert was not applied".into())),
        }
    }

    /// A group of one ([`Self::insert_many`]): three round trips when nothing is pinned (the tab
    /// list; the unload and the room check in one batch; the insert, its check and the unload
    /// after, with the tab list's save when the tab is new, in one).
    pub async fn insert(
        &self,
        tab: &str,
        item: &Item,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        self.insert_data(tab, map_of(item), item, limit).await
    }

    /// [`Self::insert`] of `data`, the formats of the item whose text, tags and note are `item`.
    pub(super) async fn insert_data(
        &self,
        tab: &str,
        data: Map,
        item: &Item,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        let write = Write {
            tab,
            data,
            item,
            limit,
        };
        self.group(
            vec![write],
            crate::backend::ready_now(),
            super::group::Clashes::Verified,
        )
        .await?
        .pop()
        .unwrap_or_else(|| Err(BackendError::Failed("insert: no answer".into())))
    }

    pub async fn change(
        &self,
        tab: &str,
        r: usize,
        expect: &Item,
        item: &Item,
        (prepared, ready): (Option<Prepared>, Ready),
    ) -> Result<Persisted, BackendError> {
        let (_, before) = self
            .unloaded_and_checked(prepared, &[tab], (tab, r, expect))
            .await?;
        // Nothing has changed so far (an unload only saves); nothing changes before `ready`.
        wait_ready(ready).await?;
        let body = |then: Vec<Call>| async move {
            // browserChange merges keys; an invalid value removes one.
            let mut data = map_of(item);
            for mime in [super::MIME_TAGS, super::MIME_NOTE] {
                if map_get(&data, mime).is_none() {
                    data.push((mime.to_owned(), Value::Invalid));
                }
            }
            let layout = self.layout().await?;
            // The change, its verify and the unload after in one round trip.
            let calls = [
                slots::browser_change(layout.map_list, tab, row(r), vec![data]),
                // write protocol: verify
                slots::browser_item_data(tab, row(r)),
            ];
            let (replies, saved) = self.body_then(&calls, &then, "change").await?;
            let [reply, now]: [Value; 2] = replies
                .try_into()
                .map_err(|_| BackendError::Failed("change: a reply is missing".into()))?;
            ok_or_text(&reply, "change")?;
            let now = self.filled_row(tab, r, now, Formats::Item).await?;
            if item_of(&now) != *item {
                return Err(BackendError::Failed("change was not applied".into()));
            }
            Ok(((), saved))
        };
        Ok(self.durably_from(&[tab], before, body).await?.1)
    }

    pub async fn remove(
        &self,
        tab: &str,
        r: usize,
        expect: &Item,
        (prepared, ready): (Option<Prepared>, Ready),
    ) -> Result<Persisted, BackendError> {
        let ((data, count), before) = self
            .unloaded_and_checked(prepared, &[tab], (tab, r, expect))
            .await?;
        unpinned(&data)?;
        // The plan read the row as text, tags and note alone, so its audit entry kept the item
        // only (`mcp::write::record::kept`): a row that gained a format since is refused.
        if expect.bare && !is_bare(&data) {
            return Err(BackendError::Conflict);
        }
        wait_ready(ready).await?;
        let body = |then: Vec<Call>| async move {
            self.remove_alone(tab, r, "remove").await?;
            // write protocol: verify (the tab holds one row fewer), then the unload after.
            let calls = [slots::browser_length(tab)];
            let (replies, saved) = self.body_then(&calls, &then, "remove").await?;
            let length = replies.into_iter().next().unwrap_or(Value::Invalid);
            removed(rows_of(tab, length)?, count, "remove")?;
            Ok(((), saved))
        };
        Ok(self.durably_from(&[tab], before, body).await?.1)
    }

    /// Target first, checked and saved, then the source: the item is never in neither tab.
    pub async fn move_item(
        &self,
        from: &str,
        r: usize,
        expect: &Item,
        to: &str,
        limit: usize,
        prepared: Option<Prepared>,
    ) -> Result<Landed, BackendError> {
        let ((data, _), before) = self
            .unloaded_and_checked(prepared, &[to, from], (from, r, expect))
            .await?;
        unpinned(&data)?;
        self.check_room(to, limit).await?;
        let body = |_| async {
            let at = self.insert_map(to, data, expect).await?;
            // From here on the item is in the target: a failure leaves it in both tabs.
            let source = async {
                self.unload(&[to.to_owned()]).await?;
                let (_, count) = self.check_row(from, r, expect).await?;
                self.remove_alone(from, r, "remove from source").await?;
                // write protocol: verify (the source holds one row fewer)
                removed(self.length(from).await?, count, "remove from source")
            };
            source
                .await
                .map_err(|e| BackendError::after(Made::Copy, e))?;
            Ok((at, None))
        };
        let (row, persisted) = self.durably_from(&[to, from], before, body).await?;
        Ok(Landed { persisted, row })
    }

    /// Remove row `r` of `tab`, in a round trip of its own, one removal at a time: CopyQ may
    /// first run an `onItemsRemoved()` script (the owner's, or any while it collects which
    /// scripts there are, as after an option changes: the save delays' cycle) and wait for it in
    /// a nested event loop, which serves the calls sent after the removal before the row is gone.
    /// The unload after a delete, sent with it, saved the tab without the removal (CopyQ 17.0,
    /// bench/results.md "Issue 22, stop 56"); and the script may refuse the removal, answered
    /// with no error: the caller checks the tab's length after (see `SocketBackend::removals`).
    async fn remove_alone(&self, tab: &str, r: usize, what: &str) -> Result<(), BackendError> {
        let qt = self.layout().await?.qt;
        let alone = self.removals.lock().await;
        let reply = self
            .call(slots::browser_remove_rows(qt, tab, vec![row(r)]))
            .await?;
        drop(alone);
        ok_or_text(&reply, what)
    }

    pub async fn create_tab(&self, tab: &str) -> Result<bool, BackendError> {
        if self.exists(tab).await? {
            return Ok(false);
        }
        self.durably(&[tab], || self.touch_or_add(tab)).await?;
        self.check_landed(tab).await?;
        // The tab is the whole write: CopyQ's tab list names it on disk before the reply.
        self.flush_tab_list()
            .await
            .map_err(|e| BackendError::after(Made::Change, e))?;
        Ok(true)
    }

    /// Touching a tab creates it up to CopyQ 16; 17.0 creates one only for an added item (and
    /// drops touched tabs from its configuration): then add an empty item and remove it.
    async fn touch_or_add(&self, tab: &str) -> Result<(), BackendError> {
        self.length(tab).await?;
        if self.exists(tab).await? {
            return Ok(());
        }
        let layout = self.layout().await?;
        let placeholder = vec![(super::MIME_TEXT.to_owned(), Value::bytes(""))];
        let calls = vec![
            slots::browser_insert(layout.map_list, tab, 0, vec![placeholder]),
            slots::browser_remove_rows(layout.qt, tab, vec![0]),
        ];
        let replies = self.call_many(calls).await?;
        for (reply, what) in replies.iter().zip(["insert", "remove"]) {
            ok_or_text(reply, what)?;
        }
        Ok(())
    }

    pub async fn remove_tabs(&self, tabs: &[String]) -> Result<usize, BackendError> {
        let all = self.tabs().await?;
        let (mut removed, mut made) = (0, false);
        for tab in tabs.iter().filter(|t| all.contains(t)) {
            let step = async {
                let n = self.length(tab).await?;
                let reply = self.call(slots::remove_tab(tab)).await?;
                ok_or_text(&reply, "removeTab").map(|()| n)
            };
            removed += match step.await {
                Err(e) if made => return Err(BackendError::after(Made::Change, e)),
                other => other?,
            };
            made = true;
        }
        self.forget_tabs(tabs);
        match self.flush_tab_list().await {
            Err(e) if made => Err(BackendError::after(Made::Change, e)),
            other => other.map(|()| removed),
        }
    }
}
