//! Rows of tabs read whole, by row number, in one `copyq` process (the script's `rows` op).

use serde::Deserialize;
use serde_json::json;

use super::{CliBackend, RawItem};
use crate::backend::{BackendError, Item, RowsPage, TabRows};

#[derive(Deserialize)]
struct RowsReply {
    tabs: Vec<RawRows>,
}

#[derive(Deserialize)]
struct RawRows {
    name: String,
    total: usize,
    items: Vec<Option<RawItem>>,
}

impl CliBackend {
    pub async fn read_rows(&self, wanted: &[TabRows]) -> Result<Vec<RowsPage>, BackendError> {
        let reply: RowsReply = self.eval(&json!({"op": "rows", "tabs": wanted})).await?;
        Ok(reply
            .tabs
            .into_iter()
            .map(|p| RowsPage {
                name: p.name,
                total: p.total,
                items: p.items.into_iter().map(|i| i.map(Item::from)).collect(),
            })
            .collect())
    }
}
