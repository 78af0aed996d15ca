//! Item formats CopyQ keeps in files (CopyQ 8.0+, over `item_data_threshold` bytes): the socket sends
//! their path as a `DataFile` value, not their content. The content is fetched with
//! `browserItemData(QString,int,QString)`, all of a tab's in one pipelined batch.

use super::super::slots;
use super::super::value::{Map, Value};
use super::{MIME_NOTE, MIME_TAGS, MIME_TEXT, SocketBackend, row_arg};
use crate::backend::BackendError;
use crate::backend::content::RICH_MIMES;

/// Which formats a caller needs as content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Formats {
    /// Text, tags and note: what an [`crate::backend::Item`] holds (reads, checks).
    Item,
    /// Every format: the item is copied elsewhere (a move), where a path to the source's file
    /// would dangle once the source row is removed.
    All,
}

impl Formats {
    /// Whether to fetch `mime` of an item that has (or lacks) plain text: an item without it
    /// shows a text derived from its HTML or file list, so those are fetched too.
    fn wants(self, mime: &str, has_text: bool) -> bool {
        self == Self::All
            || [MIME_TEXT, MIME_TAGS, MIME_NOTE].contains(&mime)
            || (!has_text && RICH_MIMES.contains(&mime))
    }
}

impl SocketBackend {
    /// The data of row `r` of `tab` from `reply` (a row's map; anything else is no data), its
    /// `DataFile` values replaced by their content as [`Self::fill_data_files`] does.
    pub(super) async fn filled_row(
        &self,
        tab: &str,
        r: usize,
        reply: Value,
        formats: Formats,
    ) -> Result<Map, BackendError> {
        let mut rows = [(r, reply.as_map().cloned().unwrap_or_default())];
        self.fill_data_files(tab, &mut rows, formats).await?;
        let [(_, map)] = rows;
        Ok(map)
    }

    /// Replace the `DataFile` values of `rows` (row number, its data) in `tab` by their content.
    /// Costs nothing when there are none; otherwise one batch of calls. [`BackendError::Conflict`]
    /// when a row changed since it was read.
    pub(super) async fn fill_data_files(
        &self,
        tab: &str,
        rows: &mut [(usize, Map)],
        formats: Formats,
    ) -> Result<(), BackendError> {
        let mut at = Vec::new();
        let mut calls = Vec::new();
        for (i, (row, map)) in rows.iter().enumerate() {
            let has_text = map.iter().any(|(m, _)| m == MIME_TEXT);
            for (k, (mime, value)) in map.iter().enumerate() {
                if matches!(value, Value::DataFile(_)) && formats.wants(mime, has_text) {
                    at.push((i, k));
                    calls.push(slots::browser_item_format(tab, row_arg(*row), mime));
                }
            }
        }
        if calls.is_empty() {
            return Ok(());
        }
        // The formats are asked by row, after the rows were read: each row is read again after
        // its formats, in the same batch (no call of the gateway's runs inside a batch), and must
        // still name the same files. Else a write made between (reads go beside writes) moved
        // the rows, and the content fetched is another item's: the caller reads again.
        let mut again: Vec<usize> = at.iter().map(|(i, _)| *i).collect();
        again.dedup();
        let formats_asked = calls.len();
        calls.extend(
            again
                .iter()
                .map(|i| slots::browser_item_data(tab, row_arg(rows[*i].0))),
        );
        let mut replies = self.call_many(calls).await?;
        let now = replies.split_off(formats_asked.min(replies.len()));
        let files = |map: &Map| -> Vec<(String, Value)> {
            map.iter()
                .filter(|(_, v)| matches!(v, Value::DataFile(_)))
                .cloned()
                .collect()
        };
        for (i, reply) in again.iter().zip(now) {
            if files(&rows[*i].1) != reply.as_map().map(files).unwrap_or_default() {
                return Err(BackendError::Conflict);
            }
        }
        for ((i, k), reply) in at.into_iter().zip(replies) {
            let content = match reply {
                v @ (Value::Bytes(_) | Value::String(_)) => v,
                other => {
                    return Err(BackendError::Failed(format!(
                        "CopyQ sent {} for the content of an item format kept in a file",
                        other.kind()
                    )));
                }
            };
            if let Some(entry) = rows.get_mut(i).and_then(|(_, m)| m.get_mut(k)) {
                entry.1 = content;
            }
        }
        Ok(())
    }
}
