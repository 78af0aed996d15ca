//! Group commit: concurrent inserts made as one durable write. The durable-write protocol of
//! [`crate::backend::protocol`] runs once for the whole group (one unload before, one save-delay
//! cycle, one unload after per tab touched), and each insert keeps its own room check and its own
//! verify, so each gets its own answer: one that fails does not fail the others. The inserts and
//! their verifies go in one round trip (one each made a group of N adds N + 2 round trips, CopyQ
//! idle between them). Every insert over the socket is made so, a single one as a group of one.

use super::super::slots;
use super::super::value::{Call, Map, Value};
use super::durable::{all_unloaded, pinned, save_after_calls};
use super::{SocketBackend, failed, map_of};
use crate::backend::{BackendError, Insert, Item, Landed, Made, Persisted, Ready, wait_ready};

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

/// The answers of a group's inserts, in order; the unload after's replies, if it went with them;
/// the tabs it named.
type Answers<'a> = (
    Vec<Result<usize, BackendError>>,
    Option<Result<Vec<Value>, BackendError>>,
    Vec<&'a str>,
);

/// What a group's first batch found when it went with the tab list
/// ([`SocketBackend::listed_for`]): each tab's rows, and the tabs CopyQ answered it unloaded.
struct Early {
    lengths: Vec<(String, usize)>,
    unloaded: Vec<String>,
}

impl Early {
    /// The rows of each of `tabs` (every one was listed, so none is created), and whether one
    /// is pinned, as [`SocketBackend::unload_and_lengths`] gives them.
    fn apply(self, tabs: &mut [Tab<'_>]) -> Result<bool, BackendError> {
        for tab in tabs.iter_mut() {
            let rows = self
                .lengths
                .iter()
                .find(|(name, _)| name == tab.name)
                .map(|(_, n)| *n)
                .ok_or_else(|| BackendError::Failed("check: a length is missing".into()))?;
            tab.rows = Some(rows);
        }
        let names: Vec<&str> = tabs.iter().map(|t| t.name).collect();
        Ok(pinned(&names, &self.unloaded))
    }
}

fn no_answer() -> Result<usize, BackendError> {
    Err(BackendError::Failed("insert: a reply is missing".into()))
}

/// What a tab of the group holds as the inserts run.
struct Tab<'a> {
    name: &'a str,
    /// Rows now, when known: unknown after an insert into it failed (it may have been made).
    rows: Option<usize>,
    /// It was not a tab before the group.
    created: bool,
    /// An insert into it was sent: it is saved after.
    touched: bool,
}

impl SocketBackend {
    /// Insert each of `writes` at row 0 of its tab, in order. `Err` when a step before any insert
    /// failed (nothing changed); otherwise one answer per write, as [`Self::insert`] gives it.
    pub async fn insert_many(
        &self,
        writes: &[Insert<'_>],
        ready: Ready,
    ) -> Result<Vec<Result<Landed, BackendError>>, BackendError> {
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
    ) -> Result<Vec<Result<Landed, BackendError>>, BackendError> {
        let started = std::time::Instant::now();
        self.settle_owed().await?;
        let (all, early) = self.listed_for(&writes).await?;
        let mut refused: Vec<Option<BackendError>> = writes
            .iter()
            .map(|w| match clashes {
                Clashes::Refused => crate::backend::clash(w.tab, &all),
                Clashes::Verified => None,
            })
            .collect();
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
        let pinned = match early {
            Some(early) => early.apply(&mut tabs)?,
            None => self.unload_and_lengths(&mut tabs).await?,
        };
        // Nothing has changed so far (an unload only saves); nothing changes before `ready`.
        wait_ready(ready).await?;
        // write protocol: zero-delays
        let old = match pinned {
            true => Some(self.zero_delays().await?),
            false => None,
        };
        let before = started.elapsed();
        let count = writes.len();
        // Never `?` from here on: the save delays zeroed above are put back below, whatever
        // became of the inserts.
        let (results, sent_after, after_names) = self
            .inserts(writes, &mut refused, &mut tabs, old.is_none())
            .await;
        let inserted = started.elapsed();
        let (saved, after_names) = match sent_after {
            Some(after) => (after, after_names),
            None => {
                let names: Vec<&str> = tabs.iter().filter(|t| t.touched).map(|t| t.name).collect();
                (self.after_group(old.as_deref(), &names).await, names)
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
                (Ok(row), Ok(_)) => Ok(Landed { persisted, row }),
                (Ok(_), Err(e)) => Err(BackendError::after(Made::Change, e.again())),
                (Err(e), _) => Err(e),
            })
            .collect())
    }

    /// The group's inserts, each with its room check (by the rows known: its tab's length before
    /// the group, one more for each insert of the group before it) and its verify, all in one
    /// round trip, with the unload after as its last part when `unload_after` (no save delay to
    /// put back first); each answered on its own, in order. An insert's verify is checked against
    /// the length the verify of the one before it into the same tab found, so one that failed
    /// does not fail the next; a room check it made stricter refuses with the same `TAB_FULL`
    /// and changes nothing. The answers; the unload after's replies, if it was sent; the tabs it
    /// named. A step that fails before the round trip fails the writes it concerns, nothing sent.
    async fn inserts<'a>(
        &self,
        writes: Vec<Write<'a>>,
        refused: &mut [Option<BackendError>],
        tabs: &mut [Tab<'a>],
        unload_after: bool,
    ) -> Answers<'a> {
        let layout = match self.layout().await {
            Ok(layout) => layout,
            Err(e) => {
                let answers = refused
                    .iter_mut()
                    .map(|r| Err(r.take().unwrap_or_else(|| e.again())))
                    .collect();
                return (answers, None, Vec::new());
            }
        };
        let mut answers: Vec<Option<Result<usize, BackendError>>> =
            Vec::with_capacity(writes.len());
        // Each insert sent: its write's place, its tab's, the rows it was checked against.
        let mut sent: Vec<(usize, usize, usize, &Item)> = Vec::new();
        let mut parts: Vec<Vec<Call>> = Vec::new();
        for (i, write) in writes.into_iter().enumerate() {
            if let Some(e) = refused[i].take() {
                answers.push(Some(Err(e)));
                continue;
            }
            let Some(at) = tabs.iter().position(|t| t.name == write.tab) else {
                answers.push(Some(Err(BackendError::Failed(
                    "insert: tab not planned".into(),
                ))));
                continue;
            };
            let tab = &mut tabs[at];
            let rows = match tab.rows {
                Some(n) => n,
                None => match self.rows_now(tab.name).await {
                    Ok(n) => n,
                    Err(e) => {
                        answers.push(Some(Err(e)));
                        continue;
                    }
                },
            };
            if rows >= write.limit {
                answers.push(Some(Err(BackendError::TabFull { limit: write.limit })));
                continue;
            }
            tab.rows = Some(rows + 1);
            // An unload only saves and creates no tab: one whose insert then failed loses
            // nothing by being named after.
            tab.touched = true;
            answers.push(None);
            sent.push((i, at, rows, write.item));
            parts.push(vec![
                // write protocol: body
                slots::browser_insert(layout.map_list, tab.name, 0, vec![write.data]),
                // write protocol: verify
                slots::tabs(),
                slots::browser_length(tab.name),
                slots::browser_item_data(tab.name, 0),
            ]);
        }
        let after_names: Vec<&'a str> = tabs.iter().filter(|t| t.touched).map(|t| t.name).collect();
        let then = match unload_after && !after_names.is_empty() {
            // write protocol: unload-after
            true => save_after_calls(&after_names),
            false => Vec::new(),
        };
        let mut all: Vec<&[Call]> = parts.iter().map(Vec::as_slice).collect();
        all.push(&then);
        let mut replies = match sent.is_empty() {
            true => Vec::new().into_iter(),
            false => match self.call_parts(&all).await {
                Ok(replies) => replies.into_iter(),
                // Nothing was sent: nothing was made (the group's steps after unload the tabs
                // named, which only saves).
                Err(e) => {
                    for (i, ..) in &sent {
                        answers[*i] = Some(Err(e.again()));
                    }
                    let answers = answers
                        .into_iter()
                        .map(|a| a.unwrap_or_else(no_answer))
                        .collect();
                    return (answers, None, after_names);
                }
            },
        };
        // The length each tab had after the last verify read so far.
        let mut lengths: Vec<Option<usize>> = vec![None; tabs.len()];
        for (k, &(i, at, rows, item)) in sent.iter().enumerate() {
            let tab = &tabs[at];
            // Its first row now: after the inserts into the same tab that followed it.
            let now = sent[k + 1..].iter().filter(|(_, a, ..)| *a == at).count();
            let before = lengths[at].unwrap_or(rows);
            let answer = match replies.next() {
                Some(Ok(replies)) => {
                    // The length its verify found, whether or not the insert was made: what the
                    // next insert into the tab is checked against.
                    let length = replies.get(2).and_then(|n| {
                        let n = slots::expect_int(&slots::browser_length(tab.name), n.clone());
                        n.ok().and_then(|n| usize::try_from(n).ok())
                    });
                    lengths[at] = length.or(lengths[at]);
                    // The last verify's tab list is the newest: the next write to these tabs
                    // asks its tab list with its first batch ([`Self::listed_for`]).
                    if k + 1 == sent.len() {
                        let listed = replies.get(1).and_then(|l| {
                            slots::expect_string_list(&slots::tabs(), l.clone()).ok()
                        });
                        if let Some(listed) = listed {
                            self.saw_tabs(&listed);
                        }
                    }
                    self.checked_insert(tab.name, replies, item, (before, now))
                        .await
                }
                // CopyQ stopped answering with the insert sent: it may still make it.
                Some(Err(e @ BackendError::Timeout(_))) => {
                    Err(BackendError::after(Made::Unknown, e))
                }
                Some(Err(e)) => Err(e),
                None => no_answer(),
            };
            answers[i] = Some(answer);
        }
        let saved = replies.next().filter(|_| !then.is_empty());
        let answers = answers
            .into_iter()
            .map(|a| a.unwrap_or_else(no_answer))
            .collect();
        (answers, saved, after_names)
    }

    /// The tab list for a group, and when every tab the group writes to was in the last tab list
    /// CopyQ gave (`seen`), the unload of them all and their lengths, asked in the same batch as
    /// the tab list: one round trip where there were two, as a read's ([`Self::read_guessed`]).
    /// Used when the tab list it brings still lists each; otherwise a tab the owner removed
    /// since was named by that batch, which CopyQ before 17.0 answers by making it again, empty:
    /// [`Self::unmake`] removes it, and the group goes on from the tab list after it (creating
    /// the tab with its insert, as an add into a missing tab does).
    async fn listed_for(
        &self,
        writes: &[Write<'_>],
    ) -> Result<(Vec<String>, Option<Early>), BackendError> {
        let mut names: Vec<&str> = Vec::new();
        for w in writes {
            if !names.contains(&w.tab) {
                names.push(w.tab);
            }
        }
        let seen = self.seen_tabs();
        if names.is_empty() || !names.iter().all(|n| seen.iter().any(|s| s == n)) {
            return Ok((self.tabs().await?, None));
        }
        let unload = slots::unload_tabs(&names);
        // write protocol: unload
        let mut calls = vec![slots::tabs(), unload.clone()];
        // write protocol: check
        calls.extend(names.iter().map(|t| slots::browser_length(t)));
        let mut replies = self.call_many(calls).await?.into_iter();
        let (all, all_listed) = self.listed_before(replies.next(), &names).await?;
        if !all_listed {
            return Ok((all, None));
        }
        let unloaded = slots::expect_string_list(&unload, replies.next().unwrap_or(Value::Invalid))
            .map_err(failed)?;
        let mut lengths = Vec::with_capacity(names.len());
        for (name, reply) in names.iter().zip(replies) {
            let n = slots::expect_int(&slots::browser_length(name), reply).map_err(failed)?;
            lengths.push((name.to_string(), usize::try_from(n).unwrap_or(0)));
        }
        Ok((all, Some(Early { lengths, unloaded })))
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
