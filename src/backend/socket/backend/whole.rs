//! Every format of a row over the socket: read for a delete's audit entry (the formats CopyQ keeps
//! in files read from them), written back whole by a restore.

use super::super::value::Value;
use super::SocketBackend;
use crate::backend::{BackendError, Item, Landed, Whole};

impl SocketBackend {
    /// Every format of row `r`, if it still holds `expect`. A format CopyQ sends as neither bytes
    /// nor text is an error: an audit entry that could not keep it must not let the item go.
    pub async fn every_format(
        &self,
        tab: &str,
        r: usize,
        expect: &Item,
    ) -> Result<Whole, BackendError> {
        self.settle_owed().await?;
        let (data, _) = self.check_row(tab, r, expect).await?;
        data.into_iter()
            .map(|(mime, value)| match value {
                Value::Bytes(b) => Ok((mime, b.unwrap_or_default())),
                Value::String(s) => Ok((mime, s.unwrap_or_default().into_bytes())),
                other => Err(BackendError::Failed(format!(
                    "CopyQ sent {} for the item's format {mime}",
                    other.kind()
                ))),
            })
            .collect()
    }

    pub async fn insert_whole(
        &self,
        tab: &str,
        item: &Item,
        whole: &Whole,
        limit: usize,
    ) -> Result<Landed, BackendError> {
        let data = whole
            .iter()
            .map(|(mime, bytes)| (mime.clone(), Value::bytes(bytes.clone())))
            .collect();
        self.insert_data(tab, data, item, limit).await
    }
}
