//! Every format of a row through the CLI: read for a delete's audit entry, written back by a
//! restore. Bytes travel as base64 in the script's JSON (`copyq.js`: `whole`, `insert`).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde::Deserialize;
use serde_json::json;

use super::CliBackend;
use crate::backend::{BackendError, Item, Landed, Whole};

#[derive(Deserialize)]
struct WholeReply {
    whole: Vec<(String, String)>,
}

impl CliBackend {
    pub async fn every_format(
        &self,
        tab: &str,
        row: usize,
        expect: &Item,
    ) -> Result<Whole, BackendError> {
        let reply: WholeReply = self
            .eval(&json!({"op": "whole", "tab": tab, "row": row, "expect": expect}))
            .await?;
        reply
            .whole
            .into_iter()
            .map(|(mime, data)| {
                let bytes = B64
                    .decode(data)
                    .map_err(|e| BackendError::Failed(format!("format {mime} not base64: {e}")))?;
                Ok((mime, bytes))
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
        let whole: Vec<(&str, String)> = whole
            .iter()
            .map(|(mime, bytes)| (mime.as_str(), B64.encode(bytes)))
            .collect();
        self.landed(
            json!({"op": "insert", "tab": tab, "item": item, "whole": whole, "limit": limit}),
        )
        .await
    }
}
